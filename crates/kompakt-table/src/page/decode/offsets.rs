//! Offsets from stored lengths: running sums of a string or list page's lengths, checked to
//! fit the offset type.

use super::fixed::{decode_fixed_rows_into, Nest};
use super::{corrupt, Cursor};
use crate::page::{load, store, MAX_PAGE_DATA};
use crate::zeroed::try_vec;
use arrow_buffer::Buffer;
use kompakt::Result;

/// List offsets from `n` encoded lengths, and the child's length (their sum).
pub(super) fn decode_offsets<const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, usize)> {
    let (offsets, total) = offsets_from_lengths::<OW, OW>(n, c)?;
    // Lengths can claim many child rows in few bytes (runs, 0-bit packing): a hard bound.
    if total > MAX_PAGE_DATA {
        return Err(corrupt(format!("lists of {total} values in one page")));
    }
    Ok((offsets, total as usize))
}

/// `n` encoded lengths, `SW` bytes each, turned into `n + 1` offsets `OW >= SW` bytes wide
/// (running sums from 0), and their total; an error when the total does not fit the stored
/// offset type.
pub(super) fn offsets_from_lengths<const SW: usize, const OW: usize>(
    n: usize,
    c: &mut Cursor<'_>,
) -> Result<(Buffer, u64)> {
    const { assert!(SW <= OW) };
    let len = n
        .checked_add(1)
        .and_then(|k| k.checked_mul(OW))
        .ok_or_else(|| corrupt("page too large"))?;
    let mut offsets = c.alloc(len)?;
    let (words, _) = offsets.as_slice_mut().as_chunks_mut::<OW>();
    let mut at = 0u64;
    if SW == OW {
        // In place: each length is replaced by the sum up to it.
        decode_fixed_rows_into(SW, n, 0..n, c, words[1..].as_flattened_mut(), Nest::INTEGERS)?;
        for w in &mut words[1..] {
            at = at.saturating_add(load::<OW>(w));
            store::<OW>(at, w);
        }
    } else {
        // n * SW <= (n + 1) * OW bytes, already counted against the budget above.
        let mut lengths = try_vec(n * SW, 0u8, "a page's lengths")?;
        decode_fixed_rows_into(SW, n, 0..n, c, &mut lengths, Nest::INTEGERS)?;
        for (l, w) in lengths.as_chunks::<SW>().0.iter().zip(&mut words[1..]) {
            at = at.saturating_add(load::<SW>(l));
            store::<OW>(at, w);
        }
    }
    // The sums only grow, so the last is the largest (and one too large fails the whole page).
    let limit = if SW == 4 { i32::MAX as u64 } else { i64::MAX as u64 };
    if at > limit {
        return Err(corrupt("lengths overflow the offsets"));
    }
    Ok((offsets.into(), at))
}
