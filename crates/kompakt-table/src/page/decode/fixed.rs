//! Decoding fixed-width values (integers, floats, dates, times, string and list lengths):
//! plain, frame of reference, bit packing, delta, dictionaries, runs, and the scaled and decimal
//! pages that nest another page of values.

use super::{corrupt, no_memory, Cursor};
use crate::page::column_dict::ColumnDict;
use crate::page::{
    decimal_value, encoding, load, store, MAX_DECIMAL_EXP_F32, MAX_DECIMAL_EXP_F64, MAX_FIXED_DICT, MAX_WIDE_DICT,
};
use crate::zeroed::try_vec;
use arrow_buffer::bit_chunk_iterator::UnalignedBitChunk;
use arrow_buffer::MutableBuffer;
use arrow_schema::DataType;
use kompakt::filter::unshuffle;
use kompakt::Result;

/// `n` integers of `w` bytes (string and list lengths).
pub(super) fn decode_fixed(w: usize, n: usize, c: &mut Cursor<'_>) -> Result<MutableBuffer> {
    decode_fixed_rows(w, n, 0..n, c, Nest::INTEGERS)
}

/// Which of the nesting encodings a page of values may use: a scaled page holds a page of
/// neither scaled nor decimal values, a decimal page one that may be scaled, a nested
/// dictionary's values no nested dictionary, so that pages nest at most four deep.
#[derive(Debug, Clone, Copy)]
pub(super) struct Nest {
    scaled: bool,
    decimal: bool,
    /// Codes into the column's shared dictionary (a column's own values, not a part of them).
    column: bool,
    /// A nested dictionary (table layout 9).
    dict: bool,
}

impl Nest {
    pub(super) const INTEGERS: Nest = Nest {
        scaled: true,
        decimal: false,
        column: false,
        dict: true,
    };

    /// The values of a column of type `dt`: decimal pages only for float32 and float64; codes
    /// into the column's dictionary where the cursor has one (top-level columns).
    pub(super) fn top(dt: &DataType) -> Nest {
        Nest {
            scaled: true,
            decimal: matches!(dt, DataType::Float32 | DataType::Float64),
            column: true,
            dict: true,
        }
    }
}

/// Rows `rows` of `n` fixed-width values of `w` bytes (the cursor moves past all `n`).
pub(super) fn decode_fixed_rows(
    w: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    nest: Nest,
) -> Result<MutableBuffer> {
    let mut out = c.alloc(w * rows.len())?;
    decode_fixed_rows_into(w, n, rows, c, out.as_slice_mut(), nest)?;
    Ok(out)
}

/// [`decode_fixed_rows`] into `dst` (`w * rows.len()` bytes).
pub(super) fn decode_fixed_rows_into(
    w: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
    nest: Nest,
) -> Result<()> {
    let len = w.checked_mul(n).ok_or_else(|| corrupt("page too large"))?;
    debug_assert_eq!(dst.len(), w * rows.len());
    let enc = c.u8()?;
    if enc == encoding::PLAIN {
        let src = c.take(len)?;
        unshuffle_rows(w, n, src, rows, dst);
        return Ok(());
    }
    if enc == encoding::UNSHUFFLED && matches!(w, 2 | 4 | 8) {
        let src = c.take(len)?;
        dst.copy_from_slice(&src[w * rows.start..w * rows.end]);
        return Ok(());
    }
    match w {
        1 => decode_words::<1>(enc, n, rows, c, dst, nest)?,
        2 => decode_words::<2>(enc, n, rows, c, dst, nest)?,
        4 => decode_words::<4>(enc, n, rows, c, dst, nest)?,
        8 => decode_words::<8>(enc, n, rows, c, dst, nest)?,
        _ => return Err(corrupt(format!("encoding {enc} is not defined for {w}-byte values"))),
    }
    Ok(())
}

/// Rows `rows` of a node of `n` rows of `w`-byte values whose page holds the values of its
/// valid rows (`bits`, its validity) only (table layout 7), into `dst`: null rows are zero.
pub(super) fn decode_valid_rows_into(
    w: usize,
    n: usize,
    bits: &[u8],
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
    nest: Nest,
) -> Result<()> {
    let ones = |range: std::ops::Range<usize>| UnalignedBitChunk::new(bits, range.start, range.len()).count_ones();
    let k = ones(0..n);
    let first = ones(0..rows.start);
    let valid = ones(rows.clone());
    let mut values = c.scratch(w * valid)?;
    decode_fixed_rows_into(w, k, first..first + valid, c, values.as_slice_mut(), nest)?;
    let values = values.as_slice();
    match w {
        1 => spread::<1>(values, bits, rows, dst),
        2 => spread::<2>(values, bits, rows, dst),
        4 => spread::<4>(values, bits, rows, dst),
        8 => spread::<8>(values, bits, rows, dst),
        16 => spread::<16>(values, bits, rows, dst),
        _ => return Err(corrupt(format!("values of valid rows only, of {w} bytes"))),
    }
    Ok(())
}

/// The valid rows' `values` (as many as `bits` has ones in `rows`) into their rows of `dst`,
/// zeros into the others: a pass over the valid rows only, found a word of the bitmap at a
/// time, with a value's width known at compile time. (A pass over every row, with a branch
/// or a select on its bit, was 8 cycles a row: half of reading AER's STAR.)
fn spread<const W: usize>(values: &[u8], bits: &[u8], rows: std::ops::Range<usize>, dst: &mut [u8]) {
    let (values, _) = values.as_chunks::<W>();
    let (dst, _) = dst.as_chunks_mut::<W>();
    dst.fill([0; W]);
    let valid_rows = arrow_buffer::bit_iterator::BitIndexIterator::new(bits, rows.start, rows.len());
    for (row, value) in valid_rows.zip(values) {
        dst[row] = *value;
    }
}

/// Elements `rows` of `n` byte-shuffled elements of `w` bytes, unshuffled into `dst`.
fn unshuffle_rows(w: usize, n: usize, src: &[u8], rows: std::ops::Range<usize>, dst: &mut [u8]) {
    if rows.start == 0 && rows.end == n {
        if w > 1 {
            unshuffle(w, src, dst);
        } else {
            dst.copy_from_slice(src);
        }
        return;
    }
    for j in 0..w {
        let plane = &src[j * n + rows.start..j * n + rows.end];
        for (t, &b) in plane.iter().enumerate() {
            dst[t * w + j] = b;
        }
    }
}

fn decode_words<const W: usize>(
    enc: u8,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
    nest: Nest,
) -> Result<()> {
    let (lo, hi) = (rows.start, rows.end);
    match enc {
        encoding::SCALED if nest.scaled => {
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let factor = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            if factor < 2 {
                return Err(corrupt(format!("a scaled page with factor {factor} (2 or more)")));
            }
            let quotients = Nest {
                scaled: false,
                decimal: false,
                column: false,
                dict: nest.dict,
            };
            decode_fixed_rows_into(W, n, rows, c, dst, quotients)?;
            for v in dst.as_chunks_mut::<W>().0 {
                store::<W>(base.wrapping_add(factor.wrapping_mul(load::<W>(v))), v);
            }
            return Ok(());
        }
        encoding::DECIMAL if nest.decimal && (W == 4 || W == 8) => {
            let e = c.u8()?;
            let most = if W == 8 {
                MAX_DECIMAL_EXP_F64
            } else {
                MAX_DECIMAL_EXP_F32
            };
            if e > most {
                return Err(corrupt(format!("a decimal page of 10^{e} (at most 10^{most})")));
            }
            let codes = Nest {
                dict: nest.dict,
                ..Nest::INTEGERS
            };
            decode_fixed_rows_into(W, n, rows, c, dst, codes)?;
            for v in dst.as_chunks_mut::<W>().0 {
                store::<W>(decimal_value::<W>(load::<W>(v), e), v);
            }
            let x = c.u32()? as usize;
            if x > n {
                return Err(corrupt(format!("{x} exceptions in a page of {n} rows")));
            }
            let positions = c.take(x * 4)?;
            let values = c.take(x * W)?;
            let mut next = 0usize;
            for (p, v) in positions.as_chunks::<4>().0.iter().zip(values.as_chunks::<W>().0) {
                let p = u32::from_le_bytes(*p) as usize;
                if p < next || p >= n {
                    return Err(corrupt("decimal page exceptions out of order or past the page"));
                }
                next = p + 1;
                if (lo..hi).contains(&p) {
                    dst[(p - lo) * W..(p - lo + 1) * W].copy_from_slice(v);
                }
            }
            return Ok(());
        }
        encoding::NESTED_DICT if nest.dict && W >= 2 => {
            let d = c.u32()? as usize;
            // At most a value a row: what the values take is bounded by the page's rows.
            if d == 0 || d > MAX_WIDE_DICT || d > n {
                return Err(corrupt(format!(
                    "a dictionary of {d} values in a page of {n} rows (1..=65536 allowed)"
                )));
            }
            let mut table = c.scratch(d * W)?;
            let values = Nest {
                column: false,
                dict: false,
                ..nest
            };
            decode_fixed_rows_into(W, d, 0..d, c, table.as_slice_mut(), values)?;
            let (table, _) = table.as_slice().as_chunks::<W>();
            let width = c.u8()?;
            let (dst, _) = dst.as_chunks_mut::<W>();
            return decode_dict_codes::<W>(table, width, 16, n, rows, c, dst);
        }
        encoding::COLUMN_DICT if nest.column && (W == 4 || W == 8) => {
            let values = c
                .dict
                .and_then(ColumnDict::fixed::<W>)
                .ok_or_else(super::strings::no_column_dict)?;
            // The codes: a page of 4-byte values inside (any encoding but decimal).
            let mut codes = c.scratch((hi - lo) * 4)?;
            decode_fixed_rows_into(4, n, rows, c, codes.as_slice_mut(), Nest::INTEGERS)?;
            let (codes, _) = codes.as_slice().as_chunks::<4>();
            let d = values.len();
            if codes.iter().fold(0u32, |m, &x| m.max(u32::from_le_bytes(x))) as usize >= d && !codes.is_empty() {
                return Err(corrupt(format!(
                    "a dictionary code is not below the dictionary size {d}"
                )));
            }
            for (o, &x) in dst.as_chunks_mut::<W>().0.iter_mut().zip(codes) {
                *o = values[u32::from_le_bytes(x) as usize];
            }
            return Ok(());
        }
        _ => {}
    }
    let (dst, _) = dst.as_chunks_mut::<W>();
    match enc {
        encoding::FOR => {
            let k = c.u8()? as usize;
            if k == 0 || k >= W {
                return Err(corrupt(format!(
                    "frame of reference of {k}-byte codes for {W}-byte values"
                )));
            }
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let raw = c.take(n * k)?;
            let unshuffled;
            let codes: &[u8] = if k == 1 {
                &raw[lo..hi]
            } else {
                let mut buf = try_vec((hi - lo) * k, 0u8, "a page's codes")?;
                unshuffle_rows(k, n, raw, rows, &mut buf);
                unshuffled = buf;
                &unshuffled
            };
            match k {
                1 => widen::<W, 1>(codes, base, dst),
                2 => widen::<W, 2>(codes, base, dst),
                3 => widen::<W, 3>(codes, base, dst),
                4 => widen::<W, 4>(codes, base, dst),
                5 => widen::<W, 5>(codes, base, dst),
                6 => widen::<W, 6>(codes, base, dst),
                _ => widen::<W, 7>(codes, base, dst),
            }
            Ok(())
        }
        encoding::BITPACK => {
            let bits = c.u8()? as usize;
            if bits > 8 * W {
                return Err(corrupt(format!("{bits}-bit codes for {W}-byte values")));
            }
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let packed = c.take((n * bits).div_ceil(8))?;
            crate::bits::unpack_offset::<W>(packed, lo..hi, bits, base, dst[..hi - lo].as_flattened_mut());
            Ok(())
        }
        encoding::DELTA => {
            let first = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let bits = c.u8()? as usize;
            if bits > 8 * W {
                return Err(corrupt(format!("{bits}-bit deltas for {W}-byte values")));
            }
            if n == 0 {
                return Err(corrupt("a delta-encoded page without rows"));
            }
            let packed = c.take(((n - 1) * bits).div_ceil(8))?;
            if lo == 0 && hi > 0 {
                store::<W>(first, &mut dst[0]);
            }
            // Each value needs the ones before it: run the sum up to the window's end.
            let mut prev = first;
            crate::bits::unpack(packed, 0..hi.saturating_sub(1), bits, |first, codes| {
                for (i, &code) in (first..).zip(codes) {
                    prev = prev.wrapping_add(base).wrapping_add(code);
                    if i + 1 >= lo {
                        store::<W>(prev, &mut dst[i + 1 - lo]);
                    }
                }
            });
            Ok(())
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_WIDE_DICT {
                return Err(corrupt(format!("dictionary of {d} values (1..=65536 allowed)")));
            }
            let raw = c.take(d * W)?;
            // Up to 256 values on the stack, as most dictionaries are.
            let mut small = [[0u8; W]; MAX_FIXED_DICT];
            let mut large = match d <= MAX_FIXED_DICT {
                true => Vec::new(),
                false => try_vec(d, [0u8; W], "a page's dictionary")?,
            };
            let table = match d <= MAX_FIXED_DICT {
                true => &mut small[..d],
                false => &mut large[..],
            };
            unshuffle_into(raw, table);
            let width = c.u8()?;
            if d > MAX_FIXED_DICT && width != 2 {
                return Err(corrupt(format!("a dictionary of {d} values needs 2-byte codes")));
            }
            decode_dict_codes::<W>(table, width, 8, n, rows, c, dst)
        }
        encoding::RUNS => {
            let runs = c.u32()? as usize;
            if runs == 0 || runs > n {
                return Err(corrupt(format!("{runs} runs in a page of {n} rows")));
            }
            // Take the bytes before allocating: what a page claims is bounded by what it holds.
            let raw = c.take(runs * W)?;
            let bits = c.u8()? as usize;
            if bits > 63 {
                return Err(corrupt(format!("{bits}-bit run lengths")));
            }
            let packed = c.take((runs * bits).div_ceil(8))?;
            let mut values = try_vec(runs, [0u8; W], "a page's runs")?;
            unshuffle_into(raw, &mut values);
            let mut ends: Vec<u64> = try_vec(0, 0, "a page's runs")?;
            ends.try_reserve_exact(runs)
                .map_err(|_| no_memory(runs * 8, "a page's runs"))?;
            let mut end = 0u64;
            crate::bits::unpack(packed, 0..runs, bits, |_, codes| {
                for &code in codes {
                    end = end.saturating_add(code).saturating_add(1);
                    ends.push(end);
                }
            });
            if end != n as u64 {
                return Err(corrupt(format!("run lengths add up to {end}, not the page's {n} rows")));
            }
            // Every length is at least 1 and they add up to n: the ends rise strictly to n.
            // The first run that reaches into the window, then fill run by run.
            let mut k = ends.partition_point(|&e| e <= lo as u64);
            let mut at = lo;
            while at < hi {
                let end = (ends[k] as usize).min(hi);
                dst[at - lo..end - lo].fill(values[k]);
                at = end;
                k += 1;
            }
            Ok(())
        }
        other => Err(corrupt(format!("unknown encoding {other} of fixed-width values"))),
    }
}

/// Rows `rows` of a page of `n` codes into `table` (a dictionary's values), whose code width
/// byte was `width`: one byte a code, two (byte-shuffled), or 0: a bit width of at most
/// `max_bits`, then the codes bit-packed.
fn decode_dict_codes<const W: usize>(
    table: &[[u8; W]],
    width: u8,
    max_bits: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [[u8; W]],
) -> Result<()> {
    let d = table.len();
    let (lo, hi) = (rows.start, rows.end);
    if d > MAX_FIXED_DICT && width == 1 {
        return Err(corrupt(format!(
            "a dictionary of {d} values needs codes of more than a byte"
        )));
    }
    let too_big = || corrupt(format!("a dictionary code is not below the dictionary size {d}"));
    match width {
        1 => {
            // A full table of 256: a code indexes it without a bound check (d <= 256 here).
            let mut full = [[0u8; W]; MAX_FIXED_DICT];
            full[..d].copy_from_slice(table);
            let codes = &c.take(n)?[lo..hi];
            if codes.iter().fold(0u8, |m, &x| m.max(x)) as usize >= d && !codes.is_empty() {
                return Err(too_big());
            }
            for (o, &x) in dst.iter_mut().zip(codes) {
                *o = full[x as usize];
            }
        }
        2 => {
            // Take the bytes before allocating: what a page claims is bounded by what it holds.
            let len = n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?;
            let src = c.take(len)?;
            let mut codes = try_vec((hi - lo) * 2, 0u8, "a page's codes")?;
            unshuffle_rows(2, n, src, rows, &mut codes);
            let (codes, _) = codes.as_chunks::<2>();
            if codes.iter().fold(0u16, |m, &x| m.max(u16::from_le_bytes(x))) as usize >= d {
                return Err(too_big());
            }
            for (o, &x) in dst.iter_mut().zip(codes) {
                *o = table[u16::from_le_bytes(x) as usize];
            }
        }
        encoding::DICT_PACKED_CODES => {
            let bits = c.u8()? as usize;
            if bits > max_bits {
                return Err(corrupt(format!("{bits}-bit dictionary codes (at most {max_bits})")));
            }
            let len = n.checked_mul(bits).ok_or_else(|| corrupt("page too large"))?;
            let packed = c.take(len.div_ceil(8))?;
            let mut out = dst.iter_mut();
            let mut past_end = false;
            crate::bits::unpack(packed, lo..hi, bits, |_, codes| {
                // Codes first: a zip that ran out of codes takes no slot from `out`.
                for (&x, o) in codes.iter().zip(out.by_ref()) {
                    let x = x as usize;
                    past_end |= x >= d;
                    // A code past the table is an error after the loop; the last value
                    // stands in for it until then.
                    *o = table[x.min(d - 1)];
                }
            });
            if past_end {
                return Err(too_big());
            }
        }
        other => {
            return Err(corrupt(format!(
                "dictionary codes of fixed-width values of {other} bytes (1 or 2, or 0: packed)"
            )))
        }
    }
    Ok(())
}

/// Byte-shuffled values (`W`-byte elements) into `table`, which holds as many.
fn unshuffle_into<const W: usize>(raw: &[u8], table: &mut [[u8; W]]) {
    if W > 1 {
        unshuffle(W, raw, table.as_flattened_mut());
    } else {
        table.as_flattened_mut().copy_from_slice(raw);
    }
}

fn widen<const W: usize, const K: usize>(codes: &[u8], base: u64, dst: &mut [[u8; W]]) {
    for (o, code) in dst.iter_mut().zip(codes.as_chunks::<K>().0) {
        store::<W>(base.wrapping_add(load::<K>(code)), o);
    }
}
