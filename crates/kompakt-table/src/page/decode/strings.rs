//! Decoding string and binary pages as offsets and data (plain, symbols, a page dictionary or
//! codes into the column's), and building them as Arrow arrays; what views share with them.

use super::fixed::decode_fixed;
use super::offsets::offsets_from_lengths;
use super::{corrupt, no_memory, Cursor};
use crate::page::column_dict::{ColumnDict, SLACK};
use crate::page::symbols::Symbols;
use crate::page::{encoding, load, store, MAX_PAGE_DATA, MAX_STRING_DICT};
use crate::zeroed::{try_vec, ZeroedBuffer};
use arrow_buffer::{Buffer, MutableBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::filter::unshuffle;
use kompakt::{Error, Result};

/// Offsets and data buffers of `n` strings with `OW`-byte offsets.
/// The offsets and data of a string or binary page of `n` rows whose lengths are stored `SW`
/// bytes wide (4 for `Utf8`/`Binary`, 8 for the large types), with offsets `OW >= SW` wide.
pub(super) fn decode_strings<const SW: usize, const OW: usize>(
    n: usize,
    c: &mut Cursor<'_>,
) -> Result<(Buffer, Buffer)> {
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN => {
            let (offsets, total) = offsets_from_lengths::<SW, OW>(n, c)?;
            let data_len = c.u64()?;
            if total != data_len {
                return Err(corrupt("string lengths do not add up to the data"));
            }
            // Counted against the read's budget only: a copy of bytes the page holds expands
            // nothing.
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            Ok((offsets, c.copy(data)?))
        }
        encoding::SYMBOLS => {
            let (offsets, total) = offsets_from_lengths::<SW, OW>(n, c)?;
            if total != c.u64()? {
                return Err(corrupt("string lengths do not add up to the data"));
            }
            let data = symbol_data(total, c)?;
            Ok((offsets, Buffer::from_vec(data)))
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_STRING_DICT {
                return Err(corrupt(format!("string dictionary of {d} values")));
            }
            let lengths = decode_fixed(SW, d, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            let mut starts = try_vec(0, 0usize, "a page's dictionary")?;
            starts
                .try_reserve_exact(d + 1)
                .map_err(|_| no_memory(d * 8, "a page's dictionary"))?;
            let mut pos = 0u64;
            starts.push(0usize);
            for l in lengths.as_slice().as_chunks::<SW>().0 {
                pos = pos.saturating_add(load::<SW>(l));
                starts.push(pos.min(u64::MAX >> 1) as usize);
            }
            if pos != data.len() as u64 {
                return Err(corrupt("dictionary lengths do not add up to its data"));
            }
            c.charge(n.saturating_mul(4))?;
            let mut codes: Vec<u32> = try_vec(0, 0, "a page's codes")?;
            match c.u8()? {
                1 => {
                    let src = c.take(n)?;
                    codes
                        .try_reserve_exact(n)
                        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
                    codes.extend(src.iter().map(|&x| u32::from(x)));
                }
                2 => {
                    let src = c.take(n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?)?;
                    let mut b = try_vec(src.len(), 0u8, "a page's codes")?;
                    unshuffle(2, src, &mut b);
                    codes
                        .try_reserve_exact(n)
                        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
                    codes.extend(b.as_chunks::<2>().0.iter().map(|x| u32::from(u16::from_le_bytes(*x))));
                }
                k => return Err(corrupt(format!("{k}-byte dictionary codes"))),
            }
            let total = coded_total::<SW>(&codes, &starts)?;
            c.charge(total.saturating_add((n + 1) * OW))?;
            c.charge_copy(data.len() + SLACK)?;
            let mut padded = try_vec(0, 0u8, "a page's dictionary")?;
            padded
                .try_reserve_exact(data.len() + SLACK)
                .map_err(|_| no_memory(data.len() + SLACK, "a page's dictionary"))?;
            padded.extend_from_slice(data);
            padded.resize(data.len() + SLACK, 0);
            let (offsets, data) = rebuild_strings::<OW>(&codes, &starts, &padded, total)?;
            Ok((offsets.into(), data.into()))
        }
        encoding::COLUMN_DICT => {
            let dict = c.dict.filter(|d| d.holds_strings()).ok_or_else(no_column_dict)?;
            let codes = column_codes(n, c)?;
            let total = coded_total::<SW>(&codes, &dict.starts)?;
            c.charge(total.saturating_add((n + 1) * OW))?;
            let (offsets, data) = rebuild_strings::<OW>(&codes, &dict.starts, &dict.bytes, total)?;
            Ok((offsets.into(), data.into()))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
}

/// A string or binary array of `n` rows, checked as `GenericByteArray::try_new` checks it:
/// UTF-8 over the whole data at once, then each offset on a character boundary (`ArrayData`
/// validation goes string by string, several times slower).
pub(in crate::page) fn byte_array<T: arrow_array::types::ByteArrayType>(
    n: usize,
    offsets: Buffer,
    data: Buffer,
    validity: Option<Buffer>,
) -> Result<ArrayData> {
    use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
    // `decode_strings` makes n + 1 offsets as running sums from 0 whose total is checked
    // against the offset type's maximum, so none is negative and none is smaller than the one
    // before: what `OffsetBuffer::new` asserts, one offset at a time (two thirds of this
    // function's time). The buffer is freshly allocated, so aligned.
    let offsets = ScalarBuffer::<T::Offset>::new(offsets, 0, n + 1);
    #[allow(unsafe_code)]
    // SAFETY: `new_unchecked` needs a non-empty buffer of non-negative, non-decreasing
    // offsets. There are n + 1 >= 1 of them. Both makers of string offsets
    // (`offsets_from_lengths`, `rebuild_strings`) start at 0 and add unsigned lengths, and fail
    // the page unless the final sum, the largest, fits the offset type as a non-negative value.
    // `string_offsets_never_decrease` checks what they make on any lengths, hostile ones too.
    let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
    let nulls = validity.map(|b| NullBuffer::new(BooleanBuffer::new(b, 0, n)));
    let within = offsets
        .last()
        .is_some_and(|&end| arrow_buffer::ArrowNativeType::as_usize(end) <= data.len());
    let utf8 = matches!(T::DATA_TYPE, DataType::Utf8 | DataType::LargeUtf8);
    if utf8 && within && data.as_slice().is_ascii() {
        // Most string data is ASCII, which is UTF-8 with a character boundary at every byte:
        // `try_new` would check each of the n + 1 offsets for one (about 6 % of reading a
        // string table) and find nothing.
        #[allow(unsafe_code)]
        // SAFETY: `new_unchecked` is sound when `try_new` would succeed. `try_new` checks
        // (a) that the data is UTF-8: ASCII is; (b) that every offset is at most the data's
        // length and on a character boundary: the offsets never decrease (see the SAFETY
        // note above), so none exceeds the last, which `within` bounds, and in
        // ASCII every position up to the length is a boundary; (c) that the validity bitmap
        // has n bits: it was made with n. `byte_array_checks_like_try_new` tests both paths.
        let array = unsafe { arrow_array::GenericByteArray::<T>::new_unchecked(offsets, data, nulls) };
        return Ok(array.into());
    }
    arrow_array::GenericByteArray::<T>::try_new(offsets, data, nulls)
        .map(ArrayData::from)
        .map_err(|e| corrupt(format!("invalid array: {e}")))
}

/// The `total` bytes of string data that a symbol table and its codes stand for (a
/// [`SYMBOLS`](encoding::SYMBOLS) page, after its lengths and data length).
pub(super) fn symbol_data(total: u64, c: &mut Cursor<'_>) -> Result<Vec<u8>> {
    let count = usize::from(c.u8()?);
    let lens = c.take(count)?;
    let symbols = c.take(lens.iter().map(|&l| usize::from(l)).sum())?;
    let table = Symbols::new(lens, symbols).map_err(|e| corrupt(format!("symbol table: {e}")))?;
    let codes_len = c.u64()?;
    let codes = c.take(usize::try_from(codes_len).map_err(|_| corrupt("symbol codes too large"))?)?;
    let total = usize::try_from(total).map_err(|_| corrupt("string data too large"))?;
    // `expand` bounds `total` by the codes (8 bytes each at most) before it allocates.
    c.charge(total)?;
    match table.expand(codes, total) {
        Ok(data) => Ok(data),
        Err(crate::page::symbols::ExpandError::NoMemory(len)) => Err(no_memory(len, "a page's strings")),
        Err(crate::page::symbols::ExpandError::Corrupt(e)) => Err(corrupt(format!("symbol codes: {e}"))),
    }
}

pub(super) fn no_column_dict() -> Error {
    corrupt("a page coded against a column dictionary, in a column without one")
}

/// The `n` codes of a page coded against its column's dictionary (a nested page of 4-byte
/// values), each checked to be below the dictionary's size.
pub(super) fn column_codes(n: usize, c: &mut Cursor<'_>) -> Result<Vec<u32>> {
    let d = c.dict.map_or(0, ColumnDict::len);
    let raw = decode_fixed(4, n, c)?;
    let mut codes: Vec<u32> = try_vec(0, 0, "a page's codes")?;
    codes
        .try_reserve_exact(n)
        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
    codes.extend(raw.as_slice().as_chunks::<4>().0.iter().map(|x| u32::from_le_bytes(*x)));
    if codes.iter().any(|&x| x as usize >= d) {
        return Err(corrupt(format!(
            "a dictionary code is not below the dictionary size {d}"
        )));
    }
    Ok(codes)
}

/// The bytes the strings of `codes` take (checked against the dictionary's size before
/// anything is allocated), within the stored type's offsets (`SW` bytes) and the page bound.
fn coded_total<const SW: usize>(codes: &[u32], starts: &[usize]) -> Result<usize> {
    let d = starts.len() - 1;
    let mut total = 0u64;
    for &x in codes {
        let x = x as usize;
        if x >= d {
            return Err(corrupt(format!(
                "a dictionary code is not below the dictionary size {d}"
            )));
        }
        total = total.saturating_add((starts[x + 1] - starts[x]) as u64);
    }
    // Bounded by the stored type, whatever width the offsets are read into.
    if total > MAX_PAGE_DATA || (SW == 4 && total > i32::MAX as u64) {
        return Err(corrupt(format!("page expands to {total} bytes of strings")));
    }
    usize::try_from(total).map_err(|_| corrupt(format!("page expands to {total} bytes of strings")))
}

/// The strings of a dictionary page, one per code: offsets (`OW` bytes each, from 0) and data.
/// `starts` are the dictionary's `d + 1` offsets into `padded` (its values, then [`SLACK`]
/// bytes), every code is below `d`, and `total` is the sum of the coded strings' lengths (all
/// checked by the caller).
fn rebuild_strings<const OW: usize>(
    codes: &[u32],
    starts: &[usize],
    padded: &[u8],
    total: usize,
) -> Result<(MutableBuffer, MutableBuffer)> {
    // Strings are copied in whole 16-byte chunks, which compile to plain moves: a memcpy call
    // per string (these are short, often a few bytes) cost more than the copying. Both the
    // dictionary and the output carry 16 bytes of slack, so a last chunk stays in bounds, and
    // the next string overwrites what a chunk wrote past its string's end. Positions are kept
    // in locals, not in a growing vector's length, so the loop keeps them in registers.
    const CHUNK: usize = SLACK;
    debug_assert!(padded.len() >= starts[starts.len() - 1] + CHUNK);
    let mut out = ZeroedBuffer::new(total + CHUNK, "a page's strings")?.into_mutable();
    let mut offsets = ZeroedBuffer::new((codes.len() + 1) * OW, "a page's string offsets")?.into_mutable();
    let data = out.as_slice_mut();
    let mut at = 0usize;
    for (&x, offset) in codes.iter().zip(offsets.as_slice_mut()[OW..].as_chunks_mut::<OW>().0) {
        let (start, end) = (starts[x as usize], starts[x as usize + 1]);
        let mut k = start;
        let mut to = at;
        loop {
            data[to..to + CHUNK].copy_from_slice(&padded[k..k + CHUNK]);
            k += CHUNK;
            to += CHUNK;
            if k >= end {
                break;
            }
        }
        at += end - start;
        store::<OW>(at as u64, offset);
    }
    out.truncate(total);
    Ok((offsets, out))
}
