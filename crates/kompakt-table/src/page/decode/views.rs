//! Decoding `Utf8` and `Binary` pages as string views (`Utf8View`, `BinaryView`): short values
//! inline, long ones pointing into the page's data or its column's dictionary.

use super::fixed::decode_fixed;
use super::strings::{column_codes, no_column_dict, symbol_data};
use super::{corrupt, no_memory, Cursor};
use crate::page::{encoding, MAX_STRING_DICT};
use crate::zeroed::try_vec;
use arrow_buffer::Buffer;
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::filter::unshuffle;
use kompakt::Result;

/// The views (16 bytes a row) and data of a `Utf8` (`utf8`) or `Binary` page of `n` rows: short
/// values inline, long ones pointing into the data, which for a dictionary page is its
/// dictionary. Every value is checked to be UTF-8 for `utf8` pages, as `byte_array` checks.
pub(super) fn decode_string_views(n: usize, c: &mut Cursor<'_>, utf8: bool) -> Result<(Buffer, Buffer)> {
    use arrow_array::builder::make_view;
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN | encoding::SYMBOLS => {
            let lengths = decode_fixed(4, n, c)?;
            let data_len = c.u64()?;
            let buffer = if enc == encoding::SYMBOLS {
                Buffer::from_vec(symbol_data(data_len, c)?)
            } else {
                let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
                c.copy(data)?
            };
            let data = buffer.as_slice();
            if data.len() > i32::MAX as usize {
                return Err(corrupt("lengths overflow the offsets"));
            }
            // Not UTF-8 as a whole: no value is. ASCII: every position is a boundary.
            let text = match utf8 && !data.is_ascii() {
                true => Some(std::str::from_utf8(data).map_err(|e| corrupt(format!("invalid array: {e}")))?),
                false => None,
            };
            let mut views = view_buffer(n, c)?;
            cut_values(
                lengths.as_slice(),
                data,
                "string lengths do not add up to the data",
                |pos, value| {
                    let end = pos + value.len();
                    if text.is_some_and(|t| !t.is_char_boundary(end)) {
                        return Err(corrupt(format!(
                            "invalid array: a string ends inside a character at {end}"
                        )));
                    }
                    views.push(make_view(value, 0, pos as u32));
                    Ok(())
                },
            )?;
            Ok((Buffer::from_vec(views), buffer))
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_STRING_DICT {
                return Err(corrupt(format!("string dictionary of {d} values")));
            }
            let lengths = decode_fixed(4, d, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            if data.len() > i32::MAX as usize {
                return Err(corrupt("lengths overflow the offsets"));
            }
            c.charge(d * 16)?;
            let mut values = try_vec(0, 0u128, "a page's dictionary")?;
            values
                .try_reserve_exact(d)
                .map_err(|_| no_memory(d * 16, "a page's dictionary"))?;
            cut_values(
                lengths.as_slice(),
                data,
                "dictionary lengths do not add up to its data",
                |pos, value| {
                    if utf8 && std::str::from_utf8(value).is_err() {
                        return Err(corrupt("invalid array: a dictionary value is not UTF-8"));
                    }
                    values.push(make_view(value, 0, pos as u32));
                    Ok(())
                },
            )?;
            let mut views = view_buffer(n, c)?;
            let out_of_range = || corrupt(format!("a dictionary code is not below the dictionary size {d}"));
            match c.u8()? {
                1 => {
                    for &x in c.take(n)? {
                        views.push(*values.get(usize::from(x)).ok_or_else(out_of_range)?);
                    }
                }
                2 => {
                    let src = c.take(n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?)?;
                    let mut codes = try_vec(src.len(), 0u8, "a page's codes")?;
                    unshuffle(2, src, &mut codes);
                    for x in codes.as_chunks::<2>().0 {
                        views.push(
                            *values
                                .get(usize::from(u16::from_le_bytes(*x)))
                                .ok_or_else(out_of_range)?,
                        );
                    }
                }
                k => return Err(corrupt(format!("{k}-byte dictionary codes"))),
            }
            check_view_total(&views)?;
            Ok((Buffer::from_vec(views), c.copy(data)?))
        }
        encoding::COLUMN_DICT => {
            let dict = c.dict.filter(|d| d.holds_strings()).ok_or_else(no_column_dict)?;
            let values = dict
                .views
                .as_deref()
                .ok_or_else(|| corrupt("a column dictionary too large for string views"))?;
            let codes = column_codes(n, c)?;
            let mut views = view_buffer(n, c)?;
            // Codes were checked against the dictionary's size.
            views.extend(codes.iter().map(|&x| values[x as usize]));
            check_view_total(&views)?;
            // The rows point into the dictionary, shared by every page: nothing is copied.
            Ok((Buffer::from_vec(views), dict.bytes.clone()))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
}

/// The page as a file holds it must still fit 32-bit offsets once expanded (what a read as
/// stored checks), though views never expand it: the same pages are corrupt whichever way
/// they are read. A view's low 32 bits are its length.
fn check_view_total(views: &[u128]) -> Result<()> {
    let total: u64 = views.iter().map(|&v| u64::from(v as u32)).sum();
    if total > i32::MAX as u64 {
        return Err(corrupt(format!("page expands to {total} bytes of strings")));
    }
    Ok(())
}

/// Cuts `data` into consecutive values of the 4-byte `lengths`, handing each to `each` with its
/// position (at most `data.len()`, which callers keep within i32::MAX); an error (`mismatch`)
/// unless the lengths cover the data exactly.
fn cut_values<'d>(
    lengths: &[u8],
    data: &'d [u8],
    mismatch: &str,
    mut each: impl FnMut(usize, &'d [u8]) -> Result<()>,
) -> Result<()> {
    let mut pos = 0usize;
    for l in lengths.as_chunks::<4>().0 {
        let end = pos
            .checked_add(u32::from_le_bytes(*l) as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt(mismatch))?;
        each(pos, &data[pos..end])?;
        pos = end;
    }
    if pos != data.len() {
        return Err(corrupt(mismatch));
    }
    Ok(())
}

/// Room for `n` views, counted against the page's budget; not zeroed, since every view is
/// pushed (the views are most of what a string page decodes to, 16 bytes a row).
fn view_buffer(n: usize, c: &mut Cursor<'_>) -> Result<Vec<u128>> {
    c.charge(n.checked_mul(16).ok_or_else(|| corrupt("page too large"))?)?;
    let mut views = Vec::new();
    views
        .try_reserve_exact(n)
        .map_err(|_| no_memory(n * 16, "a page's string views"))?;
    Ok(views)
}

/// A `Utf8View` (`utf8`) or `BinaryView` array of `n` rows from what [`decode_string_views`]
/// made.
pub(super) fn view_array(
    utf8: bool,
    n: usize,
    views: Buffer,
    data: Buffer,
    validity: Option<Buffer>,
) -> Result<ArrayData> {
    let dt = if utf8 { DataType::Utf8View } else { DataType::BinaryView };
    let builder = ArrayDataBuilder::new(dt)
        .len(n)
        .null_bit_buffer(validity)
        .add_buffer(views)
        .add_buffer(data);
    #[allow(unsafe_code)]
    // SAFETY: `build_unchecked` is sound when `build` plus full validation would succeed, which
    // for views checks (a) n views in the first buffer: `decode_string_views` pushed one per
    // row into a `Vec<u128>`, so aligned; (b) each view: made by arrow's own `make_view` from a slice
    // of the one data buffer (index 0) at that slice's offset, so inline padding, buffer
    // index, bounds and prefix are right by construction; (c) for `Utf8View`, each value is
    // UTF-8: checked above (ASCII data, or UTF-8 data cut on character boundaries, or each
    // dictionary value on its own); (d) a validity bitmap of n bits: it was read with n.
    // `string_views_pass_full_validation` checks all of it on hostile pages.
    Ok(unsafe { builder.build_unchecked() })
}
