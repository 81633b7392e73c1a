//! Encoding a node's validity: a bitmap, or the null rows' numbers when nulls are sparse; and
//! the null slots' values filled so that they cost nothing.

use super::choose::encode_words;
use super::{Ctx, Kind};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::bit_util;
use arrow_data::ArrayData;

/// The validity bitmap of the rows, or `None` when every row is valid.
pub(super) fn gather_validity(pieces: &[ArrayData], n: usize) -> Option<Vec<u8>> {
    if pieces.iter().all(|p| p.null_count() == 0) {
        return None;
    }
    let mut bits = vec![0u8; bit_util::ceil(n, 8)];
    let mut pos = 0;
    for p in pieces {
        match p.nulls() {
            Some(nulls) => {
                let b = nulls.inner();
                set_bits(&mut bits, b.values(), pos, b.offset(), p.len());
            }
            None => (pos..pos + p.len()).for_each(|i| bit_util::set_bit(&mut bits, i)),
        }
        pos += p.len();
    }
    Some(bits)
}

/// Pages of at least this many rows with at most one null in [`SPARSE_NULLS`] store the null
/// rows' numbers instead of a bitmap.
const MIN_NULL_ROWS_PAGE: usize = 1024;
const SPARSE_NULLS: usize = 32;

/// Writes the validity of a node with nulls (`bits`, its bitmap): the bitmap, or, when nulls
/// are sparse, the null rows' numbers as a nested page (deltas of a few bits each: a bitmap
/// costs a bit a row, which stays in the file when the page is stored raw, as bit-packed
/// codes are; aircraft tail numbers, 1 % null, lost 7 % of their page to it).
pub(super) fn push_validity(pieces: &[ArrayData], bits: &[u8], out: &mut Vec<u8>, cx: &mut Ctx) {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    let nulls: usize = pieces.iter().map(ArrayData::null_count).sum();
    if !cx.null_rows || n < MIN_NULL_ROWS_PAGE || nulls * SPARSE_NULLS > n || n > u32::MAX as usize {
        out.push(crate::page::validity::BITMAP);
        out.extend_from_slice(bits);
        return;
    }
    let mut rows = Vec::with_capacity(nulls * 4);
    for i in (0..n).filter(|&i| !bit_util::get_bit(bits, i)) {
        rows.extend_from_slice(&(i as u32).to_le_bytes());
    }
    out.push(crate::page::validity::NULL_ROWS);
    out.extend_from_slice(&(nulls as u32).to_le_bytes());
    encode_words::<4>(&rows, Kind::Int { signed: false }, out, cx);
    cx.layout = cx.layout.max(4);
}

/// Null slots hold whatever the producer left there: give each the valid value before it
/// (leading ones the first valid value), so that they neither widen a frame of reference, add
/// a dictionary entry, break a run nor make a jump in a delta.
pub(super) fn fill_null_slots(vals: &mut [u8], w: usize, bits: &[u8]) {
    let n = vals.len() / w.max(1);
    let Some(first) = (0..n).find(|&i| bit_util::get_bit(bits, i)) else {
        vals.fill(0);
        return;
    };
    for i in 0..first {
        vals.copy_within(first * w..(first + 1) * w, i * w);
    }
    for i in first + 1..n {
        if !bit_util::get_bit(bits, i) {
            vals.copy_within((i - 1) * w..i * w, i * w);
        }
    }
}

/// Pages of fixed-width values with at least one null in this many rows store the values of
/// their valid rows only (table layout 7), after a bitmap: a null slot filled with the value
/// before it is a repeat the bitmap already tells, yet it takes a value's bits again in
/// frames of reference and dictionaries' codes (AER's STAR: 47 columns 41-45 % NA).
pub(super) const VALID_ONLY_NULLS: usize = 8;

/// Keeps the values of the valid rows of `vals` (`w` bytes each), in order: `bits` is their
/// validity.
pub(super) fn keep_valid(vals: &mut Vec<u8>, w: usize, bits: &[u8]) {
    let n = vals.len() / w.max(1);
    let mut kept = 0;
    for i in 0..n {
        if bit_util::get_bit(bits, i) {
            vals.copy_within(i * w..(i + 1) * w, kept * w);
            kept += 1;
        }
    }
    vals.truncate(kept * w);
}
