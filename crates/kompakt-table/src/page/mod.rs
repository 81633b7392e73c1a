//! Pages: the rows of one column in one row group, encoded before the codec
//! (docs/FORMAT.md, "Pages").
//!
//! A page is a validity byte (and bitmap) then a body whose layout the column type decides.
//! Fixed-width values choose per page between runs (long runs of equal values), plain
//! (byte-shuffled), frame of reference (narrow integer ranges as byte-wide or bit-packed
//! offsets from the minimum), delta (sorted or slowly changing integers) and a dictionary of up
//! to 256 values with one-byte codes: the codec then entropy-codes bytes, which is where
//! low-cardinality columns get small.

use crate::string_layout::StringLayout;
use crate::zeroed::ZeroedBuffer;
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::{bit_util, Buffer, MutableBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::filter::{shuffle, unshuffle};
use kompakt::{Error, Result};

/// Body encodings of fixed-width values and strings.
pub mod encoding {
    /// Values as they are (fixed-width types byte-shuffled).
    pub const PLAIN: u8 = 0;
    /// Frame of reference: a base value, then each value minus the base in 1, 2 or 4 bytes.
    pub const FOR: u8 = 1;
    /// A dictionary of distinct values, then a 1- or 2-byte code per value.
    pub const DICT: u8 = 2;
    /// Frame of reference with codes packed in `b` bits each (ranges that waste bits in bytes).
    pub const BITPACK: u8 = 3;
    /// The first value, then each value minus the one before, as a frame of reference (sorted
    /// or slowly changing integers and timestamps).
    pub const DELTA: u8 = 4;
    /// Runs of equal values: each run's value, then where each run ends (table layout 2).
    pub const RUNS: u8 = 5;
}

/// A page as the writer encoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// The page summary of the table index: body encoding, plus [`SUMMARY_NULLS`].
    pub summary: u8,
    /// The oldest table layout whose readers decode every part of the page (nested parts and
    /// string lengths included, which the summary does not show).
    pub layout: u16,
}

/// Bit of a page summary (in the table index) set when the page has a validity bitmap.
pub const SUMMARY_NULLS: u8 = 0x80;

/// Largest dictionary of fixed-width values (one-byte codes).
const MAX_FIXED_DICT: usize = 256;
/// Largest dictionary of fixed-width values with two-byte codes.
const MAX_WIDE_DICT: usize = 1 << 16;
/// A page is stored as runs when its runs are this many rows long on average, or longer.
/// Integers need longer runs: frame of reference, delta and the codec already shrink short
/// runs of them about as well (sorted timestamps with runs of 20 are 2x smaller as deltas).
const MIN_MEAN_RUN: usize = 16;
const MIN_MEAN_RUN_INT: usize = 64;
/// Largest dictionary of strings (two-byte codes).
const MAX_STRING_DICT: usize = 1 << 16;
/// Most bytes a page may expand to beyond the bytes it holds, all its parts together: values
/// and offsets decoded from encodings that can stand for many values in few bytes (runs,
/// 0-bit codes, list lengths), and strings rebuilt from a dictionary. A bound on what a hostile
/// page can make us allocate; string data copied as it is does not count.
const MAX_PAGE_DATA: u64 = 1 << 34;

fn kind_of(dt: &DataType) -> Kind {
    match dt {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Kind::Int { signed: true },
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => Kind::Int { signed: false },
        DataType::Date32
        | DataType::Date64
        | DataType::Time32(_)
        | DataType::Time64(_)
        | DataType::Timestamp(_, _)
        | DataType::Duration(_) => Kind::Int { signed: true },
        _ => Kind::Other,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Int { signed: bool },
    Other,
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// What the encoders of one page may use, and the table layout what they used needs.
struct Ctx {
    runs: bool,
    layout: u16,
}

/// Encodes `pieces` (arrays of type `dt`, `n` rows in all) as one page appended to `out`.
pub fn encode_page(dt: &DataType, pieces: &[ArrayData], out: &mut Vec<u8>) -> Result<Encoded> {
    // A dictionary column's pages hold its keys (its values are stored once, on their own).
    let dt = match dt {
        DataType::Dictionary(key, _) => key.as_ref(),
        other => other,
    };
    let mut cx = Ctx { runs: true, layout: 1 };
    let summary = encode_node(dt, pieces, out, &mut cx)?;
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Encodes the values of a dictionary column as one page, without runs: a reader bounds the
/// count a dictionary claims by its bytes (every value at least a bit), which runs would break.
pub fn encode_dictionary_values(values: &ArrayData, out: &mut Vec<u8>) -> Result<Encoded> {
    let mut cx = Ctx { runs: false, layout: 1 };
    let summary = encode_node(values.data_type(), std::slice::from_ref(values), out, &mut cx)?;
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Encodes one node of a page; raises `layout` to what its encodings need.
fn encode_node(dt: &DataType, pieces: &[ArrayData], out: &mut Vec<u8>, cx: &mut Ctx) -> Result<u8> {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    if *dt == DataType::Null {
        return Ok(encoding::PLAIN);
    }
    let validity = gather_validity(pieces, n);
    let mut summary = 0;
    match &validity {
        None => out.push(0),
        Some(bits) => {
            out.push(1);
            out.extend_from_slice(bits);
            summary |= SUMMARY_NULLS;
        }
    }
    let body = match dt {
        DataType::Boolean => {
            let mut bits = vec![0u8; bit_util::ceil(n, 8)];
            let mut pos = 0;
            for p in pieces {
                set_bits(&mut bits, p.buffers()[0].as_slice(), pos, p.offset(), p.len());
                pos += p.len();
            }
            out.extend_from_slice(&bits);
            encoding::PLAIN
        }
        DataType::Struct(fields) => {
            // Arrow's StructArray knows how a struct's offset applies to its children.
            let structs: Vec<arrow_array::StructArray> = pieces
                .iter()
                .map(|p| arrow_array::StructArray::from(p.clone()))
                .collect();
            for (j, f) in fields.iter().enumerate() {
                let children: Vec<ArrayData> = structs.iter().map(|s| s.column(j).to_data()).collect();
                encode_node(f.data_type(), &children, out, cx)?;
            }
            encoding::PLAIN
        }
        DataType::List(item) => encode_list::<4>(item.data_type(), pieces, n, out, cx)?,
        DataType::LargeList(item) => encode_list::<8>(item.data_type(), pieces, n, out, cx)?,
        DataType::Utf8 | DataType::Binary => encode_strings::<4>(pieces, n, out, cx),
        DataType::LargeUtf8 | DataType::LargeBinary => encode_strings::<8>(pieces, n, out, cx),
        DataType::FixedSizeBinary(w) => {
            let w = *w as usize;
            for p in pieces {
                out.extend_from_slice(&p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + p.len()) * w]);
            }
            encoding::PLAIN
        }
        _ => {
            let w = crate::schema::fixed_width(dt)
                .ok_or_else(|| Error::Usage(format!("internal: no page encoding for {dt}")))?;
            fn values(p: &ArrayData, w: usize) -> &[u8] {
                &p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + p.len()) * w]
            }
            match (pieces, &validity) {
                // The common case reads the column's memory in place.
                ([p], None) => encode_fixed(w, values(p, w), kind_of(dt), out, cx),
                _ => {
                    let mut vals = Vec::with_capacity(n * w);
                    for p in pieces {
                        vals.extend_from_slice(values(p, w));
                    }
                    if let Some(bits) = &validity {
                        fill_null_slots(&mut vals, w, bits);
                    }
                    encode_fixed(w, &vals, kind_of(dt), out, cx)
                }
            }
        }
    };
    Ok(summary | body)
}

/// Lists (offsets of `OW` bytes): the lengths, then the child values the rows cover.
fn encode_list<const OW: usize>(
    item: &DataType,
    pieces: &[ArrayData],
    n: usize,
    out: &mut Vec<u8>,
    cx: &mut Ctx,
) -> Result<u8> {
    let mut lengths = Vec::with_capacity(n * OW);
    let mut children = Vec::with_capacity(pieces.len());
    for p in pieces {
        let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
        let (offsets, _) = offsets.as_chunks::<OW>();
        let first = load::<OW>(&offsets[0]) as usize;
        let last = load::<OW>(&offsets[p.len()]) as usize;
        children.push(slice_data(&p.child_data()[0], first, last - first));
        for pair in offsets.windows(2) {
            let len = load::<OW>(&pair[1]) - load::<OW>(&pair[0]);
            lengths.extend_from_slice(&len.to_le_bytes()[..OW]);
        }
    }
    encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
    encode_node(item, &children, out, cx)?;
    Ok(encoding::PLAIN)
}

/// Rows `offset..offset + len` of `data`. Through Arrow's arrays, not `ArrayData::slice`:
/// that one slices a struct's children *and* moves the struct's offset, which
/// `StructArray::from` then applies a second time.
pub(crate) fn slice_data(data: &ArrayData, offset: usize, len: usize) -> ArrayData {
    arrow_array::make_array(data.clone()).slice(offset, len).to_data()
}

/// The validity bitmap of the rows, or `None` when every row is valid.
fn gather_validity(pieces: &[ArrayData], n: usize) -> Option<Vec<u8>> {
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

/// Null slots hold whatever the producer left there: give each the valid value before it
/// (leading ones the first valid value), so that they neither widen a frame of reference, add
/// a dictionary entry, break a run nor make a jump in a delta.
fn fill_null_slots(vals: &mut [u8], w: usize, bits: &[u8]) {
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

fn encode_fixed(w: usize, vals: &[u8], kind: Kind, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    match w {
        1 => encode_words::<1>(vals, kind, out, cx),
        2 => encode_words::<2>(vals, kind, out, cx),
        4 => encode_words::<4>(vals, kind, out, cx),
        8 => encode_words::<8>(vals, kind, out, cx),
        _ => {
            out.push(encoding::PLAIN);
            push_shuffled(w, vals, out);
            encoding::PLAIN
        }
    }
}

fn push_shuffled(w: usize, bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + bytes.len(), 0);
    if w > 1 {
        shuffle(w, bytes, &mut out[start..]);
    } else {
        out[start..].copy_from_slice(bytes);
    }
}

#[inline]
fn load<const W: usize>(b: &[u8; W]) -> u64 {
    let mut a = [0u8; 8];
    a[..W].copy_from_slice(b);
    u64::from_le_bytes(a)
}

#[inline]
fn store<const W: usize>(v: u64, dst: &mut [u8; W]) {
    dst.copy_from_slice(&v.to_le_bytes()[..W]);
}

/// Encodes fixed-width values as the data suggests (docs/DESIGN.md, "What kompakt's table
/// writer chooses"); returns the encoding and raises `layout` to what it needs.
fn encode_words<const W: usize>(vals: &[u8], kind: Kind, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    let (enc, needs) = choose_words::<W>(vals, kind, cx.runs, out);
    cx.layout = cx.layout.max(needs);
    enc
}

/// Encodes as [`encode_words`] does; returns the encoding and the table layout it needs (2 for
/// runs and for dictionaries with 2-byte codes, which came with layout 2).
fn choose_words<const W: usize>(vals: &[u8], kind: Kind, runs: bool, out: &mut Vec<u8>) -> (u8, u16) {
    let (words, _) = vals.as_chunks::<W>();
    if words.is_empty() {
        out.push(encoding::PLAIN);
        return (encoding::PLAIN, 1);
    }
    // Long runs first: filling a run decodes faster than any per-value encoding, and the
    // page shrinks to a few bytes per run before the codec sees it.
    let mean_run = if matches!(kind, Kind::Int { .. }) {
        MIN_MEAN_RUN_INT
    } else {
        MIN_MEAN_RUN
    };
    let limit = if runs && words.len() <= u32::MAX as usize {
        words.len() / mean_run
    } else {
        0
    };
    if let Some(runs) = count_runs::<W>(words, limit) {
        encode_runs::<W>(words, runs, out);
        return (encoding::RUNS, 2);
    }
    let mut narrow_codes = None;
    if let Kind::Int { signed } = kind {
        // Flipping the sign bit maps signed order onto unsigned order; differences are the same.
        let flip = if signed { 1u64 << (8 * W - 1) } else { 0 };
        let (lo, hi) = value_range::<W>(words, flip);
        let bits = 64 - (hi - lo).leading_zeros() as usize;
        let base = lo ^ flip;
        if bits <= 8 && W > 1 {
            let start = out.len();
            encode_for::<W>(words, 1, base, out);
            if bits < 8 && pack_instead(&out[start + 2 + W..], bits) {
                out.truncate(start);
                encode_bitpack::<W>(words, bits, base, out);
                return (encoding::BITPACK, 1);
            }
            return (encoding::FOR, 1);
        }
        // The differences of a prefix range no wider than all of them: when the prefix's are
        // already too wide, so are all (random data never pays for the second pass).
        const PREFIX: usize = 256;
        let delta_wins = |w: &[[u8; W]]| W > 1 && delta_width::<W>(w) + 4 <= bits;
        if delta_wins(&words[..words.len().min(PREFIX)]) && (words.len() <= PREFIX || delta_wins(words)) {
            encode_delta::<W>(words, out);
            return (encoding::DELTA, 1);
        }
        narrow_codes = Some((bits, base));
    }
    if W >= 2 && encode_dict::<W>(words, out) {
        return (encoding::DICT, 1);
    }
    if let Some((bits, base)) = narrow_codes {
        let k = bits.div_ceil(8).max(1);
        if 8 * k - bits >= 3 || (W == 1 && bits < 8 && pack_instead(vals, bits)) {
            // At least 3 of 8k bits would be zero in every code, or the codec could not save
            // much more than the zero bits: pack them.
            encode_bitpack::<W>(words, bits, base, out);
            return (encoding::BITPACK, 1);
        }
        if k < W {
            encode_for::<W>(words, k, base, out);
            return (encoding::FOR, 1);
        }
    }
    // Floats with a few hundred to thousands of distinct values (prices, rounded readings):
    // 2-byte codes the codec entropy-codes, instead of bytes of mantissa it cannot.
    if kind == Kind::Other && W >= 4 && encode_wide_dict::<W>(words, out) {
        return (encoding::DICT, 2);
    }
    out.push(encoding::PLAIN);
    push_shuffled(W, vals, out);
    (encoding::PLAIN, 1)
}

/// Whether one-byte `codes` of `bits` significant bits are better bit-packed (and stored
/// raw) than left whole to the codec: when its entropy stage could save under
/// [`MIN_ENTROPY_SAVING`] over packing, and LZ4 finds no repeats, the codec would spend its
/// time (and the reader's: decoding entropy-coded bytes is several times slower than
/// unpacking bits) for next to nothing. Uniform codes of 1..100 in 7 bits: 5 % at most.
///
/// [`MIN_ENTROPY_SAVING`]: kompakt::codec::MIN_ENTROPY_SAVING
fn pack_instead(codes: &[u8], bits: usize) -> bool {
    use kompakt::codec::{entropy_saving_bound, probe, Compressor, MIN_ENTROPY_SAVING, MIN_SAVING, SAMPLES};
    let entropy_bits = 8.0 * (1.0 - entropy_saving_bound(codes, SAMPLES));
    if entropy_bits < bits as f64 * (1.0 - MIN_ENTROPY_SAVING) {
        return false;
    }
    let lz4 = kompakt::Codec::Lz4 { acceleration: 1 };
    match probe(&mut Compressor::new(), lz4, codes, SAMPLES, &mut Vec::new()) {
        Ok(r) => r.fraction() > 1.0 - MIN_SAVING,
        Err(_) => false,
    }
}

/// Number of runs of equal values, if at most `limit` (stops counting past it).
fn count_runs<const W: usize>(words: &[[u8; W]], limit: usize) -> Option<usize> {
    if words.is_empty() || limit == 0 {
        return None;
    }
    let mut runs = 1;
    for pair in words.windows(2) {
        if pair[0] != pair[1] {
            runs += 1;
            if runs > limit {
                return None;
            }
        }
    }
    Some(runs)
}

/// `runs` runs: the count, each run's value (byte-shuffled), then each run's length minus one,
/// bit-packed.
fn encode_runs<const W: usize>(words: &[[u8; W]], runs: usize, out: &mut Vec<u8>) {
    let mut values: Vec<u8> = Vec::with_capacity(runs * W);
    let mut lengths: Vec<u64> = Vec::with_capacity(runs);
    let mut start = 0;
    values.extend_from_slice(&words[0]);
    for (i, pair) in words.windows(2).enumerate() {
        if pair[0] != pair[1] {
            lengths.push((i + 1 - start) as u64);
            start = i + 1;
            values.extend_from_slice(&pair[1]);
        }
    }
    lengths.push((words.len() - start) as u64);
    debug_assert_eq!(lengths.len(), runs);
    let longest = lengths.iter().copied().max().unwrap_or(1);
    let bits = 64 - (longest - 1).leading_zeros() as usize;
    out.push(encoding::RUNS);
    out.extend_from_slice(&(runs as u32).to_le_bytes());
    push_shuffled(W, &values, out);
    out.push(bits as u8);
    crate::bits::pack(lengths.iter().map(|&l| l - 1), bits, out);
}

/// Smallest and largest value, sign bit flipped by `flip` (so that unsigned order is signed
/// order). Four independent minimums and maximums: one chain of compare-and-select per value is
/// what limits a plain loop.
fn value_range<const W: usize>(words: &[[u8; W]], flip: u64) -> (u64, u64) {
    const LANES: usize = 4;
    let (mut lo, mut hi) = ([u64::MAX; LANES], [0u64; LANES]);
    let (chunks, tail) = words.as_chunks::<LANES>();
    for chunk in chunks {
        for (k, w) in chunk.iter().enumerate() {
            let v = load::<W>(w) ^ flip;
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
    }
    for w in tail {
        let v = load::<W>(w) ^ flip;
        lo[0] = lo[0].min(v);
        hi[0] = hi[0].max(v);
    }
    (
        lo.into_iter().min().expect("lanes"),
        hi.into_iter().max().expect("lanes"),
    )
}

/// Bits needed by the differences of consecutive values (mod 2^(8W)) as a frame of reference.
fn delta_width<const W: usize>(words: &[[u8; W]]) -> usize {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let sign = 1u64 << (8 * W - 1);
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for pair in words.windows(2) {
        let d = (load::<W>(&pair[1]).wrapping_sub(load::<W>(&pair[0])) & mask) ^ sign;
        lo = lo.min(d);
        hi = hi.max(d);
    }
    if lo > hi {
        return 0;
    }
    64 - (hi - lo).leading_zeros() as usize
}

/// The first value, then the differences (mod 2^(8W)) as a bit-packed frame of reference.
fn encode_delta<const W: usize>(words: &[[u8; W]], out: &mut Vec<u8>) {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let sign = 1u64 << (8 * W - 1);
    let deltas: Vec<u64> = words
        .windows(2)
        .map(|p| load::<W>(&p[1]).wrapping_sub(load::<W>(&p[0])) & mask)
        .collect();
    let lo = deltas.iter().map(|&d| d ^ sign).min().unwrap_or(sign) ^ sign;
    let hi = deltas
        .iter()
        .map(|&d| (d ^ sign).wrapping_sub(lo ^ sign))
        .max()
        .unwrap_or(0);
    let bits = 64 - hi.leading_zeros() as usize;
    out.push(encoding::DELTA);
    out.extend_from_slice(&words[0]);
    out.extend_from_slice(&lo.to_le_bytes()[..W]);
    out.push(bits as u8);
    crate::bits::pack(deltas.iter().map(|&d| d.wrapping_sub(lo) & mask), bits, out);
}

fn encode_bitpack<const W: usize>(words: &[[u8; W]], bits: usize, base: u64, out: &mut Vec<u8>) {
    out.push(encoding::BITPACK);
    out.push(bits as u8);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    // Codes are differences mod 2^(8W): a signed range across zero wraps in u64 arithmetic.
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    crate::bits::pack(words.iter().map(|w| load::<W>(w).wrapping_sub(base) & mask), bits, out);
}

fn encode_for<const W: usize>(words: &[[u8; W]], k: usize, base: u64, out: &mut Vec<u8>) {
    out.push(encoding::FOR);
    out.push(k as u8);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    let mut codes = vec![0u8; words.len() * k];
    match k {
        1 => narrow::<W, 1>(words, base, &mut codes),
        2 => narrow::<W, 2>(words, base, &mut codes),
        3 => narrow::<W, 3>(words, base, &mut codes),
        4 => narrow::<W, 4>(words, base, &mut codes),
        5 => narrow::<W, 5>(words, base, &mut codes),
        6 => narrow::<W, 6>(words, base, &mut codes),
        _ => narrow::<W, 7>(words, base, &mut codes),
    }
    push_shuffled(k, &codes, out);
}

fn narrow<const W: usize, const K: usize>(words: &[[u8; W]], base: u64, codes: &mut [u8]) {
    let (codes, _) = codes.as_chunks_mut::<K>();
    for (c, w) in codes.iter_mut().zip(words) {
        store::<K>(load::<W>(w).wrapping_sub(base), c);
    }
}

/// Dictionary of at most 256 distinct values with one-byte codes, if the values allow it.
fn encode_dict<const W: usize>(words: &[[u8; W]], out: &mut Vec<u8>) -> bool {
    const SLOTS: usize = 1024;
    let mut keys = [0u64; SLOTS];
    let mut ids = [u16::MAX; SLOTS];
    let mut dict: Vec<u64> = Vec::new();
    let mut codes = Vec::with_capacity(words.len());
    for w in words {
        let v = load::<W>(w);
        let mut slot = (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize;
        loop {
            if ids[slot] == u16::MAX {
                if dict.len() == MAX_FIXED_DICT {
                    return false;
                }
                ids[slot] = dict.len() as u16;
                keys[slot] = v;
                dict.push(v);
                break;
            }
            if keys[slot] == v {
                break;
            }
            slot = (slot + 1) % SLOTS;
        }
        codes.push(ids[slot] as u8);
    }
    out.push(encoding::DICT);
    out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    let mut dict_bytes = vec![0u8; dict.len() * W];
    for (d, v) in dict_bytes.as_chunks_mut::<W>().0.iter_mut().zip(&dict) {
        store::<W>(*v, d);
    }
    push_shuffled(W, &dict_bytes, out);
    out.push(1);
    out.extend_from_slice(&codes);
    true
}

/// Dictionary of 257 to `min(65536, n / 4)` distinct values with two-byte codes, if the values
/// allow it and no prefix of 1024 rows or more is more than half distinct values (checked on
/// the first 1024 first, so that pages without repeats stop after about 512 values).
fn encode_wide_dict<const W: usize>(words: &[[u8; W]], out: &mut Vec<u8>) -> bool {
    use std::collections::HashMap;
    let n = words.len();
    let limit = (n / 4).min(MAX_WIDE_DICT);
    if limit <= MAX_FIXED_DICT {
        return false;
    }
    let prefix = &words[..n.min(1024)];
    let mut distinct: std::collections::HashSet<u64, BuildFx> =
        std::collections::HashSet::with_capacity_and_hasher(prefix.len() / 2 + 1, BuildFx);
    for w in prefix {
        if distinct.insert(load::<W>(w)) && distinct.len() * 2 > prefix.len() {
            return false;
        }
    }
    let mut ids: HashMap<u64, u16, BuildFx> = HashMap::with_capacity_and_hasher(distinct.len() * 4, BuildFx);
    let mut dict: Vec<u64> = Vec::new();
    let mut codes: Vec<u8> = Vec::with_capacity(2 * n);
    for (seen, w) in (1..).zip(words) {
        let v = load::<W>(w);
        let id = match ids.get(&v) {
            Some(&id) => id,
            None => {
                // Past the prefix too, a page that turns mostly distinct stops early.
                if dict.len() == limit || (seen > 1024 && dict.len() * 2 >= seen) {
                    return false;
                }
                let id = dict.len() as u16; // below limit <= 65536
                ids.insert(v, id);
                dict.push(v);
                id
            }
        };
        codes.extend_from_slice(&id.to_le_bytes());
    }
    out.push(encoding::DICT);
    out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    let mut dict_bytes = vec![0u8; dict.len() * W];
    for (d, v) in dict_bytes.as_chunks_mut::<W>().0.iter_mut().zip(&dict) {
        store::<W>(*v, d);
    }
    push_shuffled(W, &dict_bytes, out);
    out.push(2);
    push_shuffled(2, &codes, out);
    true
}

/// Strings and binaries (offsets of `OW` bytes): lengths then data, or a dictionary of
/// distinct strings then codes when few values repeat many times.
fn encode_strings<const OW: usize>(pieces: &[ArrayData], n: usize, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    let mut lengths = Vec::with_capacity(n * OW);
    let mut spans: Vec<&[u8]> = Vec::with_capacity(pieces.len());
    for p in pieces {
        let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
        let (offsets, _) = offsets.as_chunks::<OW>();
        let first = load::<OW>(&offsets[0]) as usize;
        let last = load::<OW>(&offsets[p.len()]) as usize;
        spans.push(&p.buffers()[1].as_slice()[first..last]);
        for pair in offsets.windows(2) {
            let len = load::<OW>(&pair[1]) - load::<OW>(&pair[0]);
            lengths.extend_from_slice(&len.to_le_bytes()[..OW]);
        }
    }
    // A page cut from one batch (the usual case) is read where it lies, not gathered into a
    // buffer first (a pass over every string byte); pieces of several batches are joined.
    let data: std::borrow::Cow<'_, [u8]> = match spans.as_slice() {
        [one] => std::borrow::Cow::Borrowed(one),
        _ => std::borrow::Cow::Owned(spans.concat()),
    };
    if let Some(()) = encode_string_dict::<OW>(&lengths, &data, n, out, cx) {
        return encoding::DICT;
    }
    out.push(encoding::PLAIN);
    encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&data);
    encoding::PLAIN
}

fn encode_string_dict<const OW: usize>(
    lengths: &[u8],
    data: &[u8],
    n: usize,
    out: &mut Vec<u8>,
    cx: &mut Ctx,
) -> Option<()> {
    use std::collections::HashMap;
    if n < 64 {
        return None;
    }
    let (lens, _) = lengths.as_chunks::<OW>();
    let mut starts = Vec::with_capacity(n + 1);
    let mut pos = 0usize;
    starts.push(0);
    for l in lens {
        pos += load::<OW>(l) as usize;
        starts.push(pos);
    }
    let value = |i: usize| &data[starts[i]..starts[i + 1]];
    // A sample decides cheaply whether values repeat enough to be worth hashing them all.
    let sample = n.min(256);
    let distinct: std::collections::HashSet<&[u8]> = (0..sample).map(value).collect();
    if distinct.len() * 4 > sample {
        return None;
    }
    let limit = MAX_STRING_DICT.min(n / 2);
    let mut ids: HashMap<&[u8], u32, BuildFx> = HashMap::with_capacity_and_hasher(distinct.len() * 2, BuildFx);
    let mut order: Vec<usize> = Vec::new();
    let mut codes: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n {
        let next = ids.len() as u32;
        let id = *ids.entry(value(i)).or_insert_with(|| {
            order.push(i);
            next
        });
        if ids.len() > limit {
            return None;
        }
        codes.push(id);
    }
    out.push(encoding::DICT);
    out.extend_from_slice(&(order.len() as u32).to_le_bytes());
    let mut dict_lengths = Vec::with_capacity(order.len() * OW);
    let mut dict_data = Vec::new();
    for &i in &order {
        dict_lengths.extend_from_slice(&((starts[i + 1] - starts[i]) as u64).to_le_bytes()[..OW]);
        dict_data.extend_from_slice(value(i));
    }
    encode_words::<OW>(&dict_lengths, Kind::Int { signed: false }, out, cx);
    out.extend_from_slice(&(dict_data.len() as u64).to_le_bytes());
    out.extend_from_slice(&dict_data);
    if order.len() <= 256 {
        out.push(1);
        out.extend(codes.iter().map(|&c| c as u8));
    } else {
        out.push(2);
        let bytes: Vec<u8> = codes.iter().flat_map(|&c| (c as u16).to_le_bytes()).collect();
        push_shuffled(2, &bytes, out);
    }
    Some(())
}

/// FxHash-style hasher: string keys of a page dictionary need speed, not DoS resistance (the
/// dictionary is bounded and built by the writer from its own data).
#[derive(Default, Clone, Copy)]
struct BuildFx;

impl std::hash::BuildHasher for BuildFx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    fn write_usize(&mut self, i: usize) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Bytes the page may still decode to: one bound for all its parts (a struct's fields, a
    /// list's levels), so that nesting cannot multiply what a hostile page makes us allocate.
    budget: u64,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self::with_budget(bytes, MAX_PAGE_DATA)
    }

    fn with_budget(bytes: &'a [u8], budget: u64) -> Self {
        Cursor { bytes, pos: 0, budget }
    }

    /// Counts `len` decoded bytes against the page's budget.
    fn charge(&mut self, len: usize) -> Result<()> {
        self.budget = self
            .budget
            .checked_sub(len as u64)
            .ok_or_else(|| corrupt(format!("the page decodes to more than {} GiB", MAX_PAGE_DATA >> 30)))?;
        Ok(())
    }

    /// `len` zero bytes of decoded values, counted against the page's budget; an error, not an
    /// abort, when the memory is not there.
    fn alloc(&mut self, len: usize) -> Result<MutableBuffer> {
        self.charge(len)?;
        Ok(ZeroedBuffer::new(len, "a page's values")?.into_mutable())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                corrupt(format!(
                    "page ends early: {n} bytes needed at {} of {}",
                    self.pos,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

fn corrupt(detail: impl Into<String>) -> Error {
    Error::corrupt("table page", 0, detail)
}

/// Decodes a page of `n` rows of type `dt` (a leaf type; for a dictionary column, its key type).
pub fn decode_page(dt: &DataType, n: usize, bytes: &[u8]) -> Result<ArrayData> {
    decode_page_rows(dt, n, bytes, 0..n)
}

/// Decodes rows `rows` of a page of `n` rows. Fixed-width and boolean pages decode only those
/// rows (after the codec, a 1000-row read of a 16384-row page widens 1000 values, not all);
/// other types decode the page and slice it.
pub fn decode_page_rows(dt: &DataType, n: usize, bytes: &[u8], rows: std::ops::Range<usize>) -> Result<ArrayData> {
    decode_rows_within(dt, StringLayout::AsStored, n, bytes, rows, MAX_PAGE_DATA)
}

/// [`decode_page_rows`], a `Utf8` or `Binary` page decoded to the type `strings` asks for
/// ([`StringLayout::read_type`]) as it decodes, instead of by a cast later.
pub fn decode_page_rows_as(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
) -> Result<ArrayData> {
    decode_rows_within(dt, strings, n, bytes, rows, MAX_PAGE_DATA)
}

/// [`decode_page_rows_as`] with `budget` bytes for all the page decodes to.
fn decode_rows_within(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    budget: u64,
) -> Result<ArrayData> {
    if rows.start > rows.end || rows.end > n {
        return Err(Error::OutOfRange {
            detail: format!("rows {}..{} of a page of {n}", rows.start, rows.end),
        });
    }
    let mut c = Cursor::with_budget(bytes, budget);
    let windowed = *dt == DataType::Boolean || crate::schema::fixed_width(dt).is_some();
    let data = if windowed {
        decode_window(dt, n, rows.clone(), &mut c)?
    } else {
        decode_node_as(dt, strings, n, &mut c)?
    };
    if c.pos != bytes.len() {
        return Err(corrupt(format!("{} bytes after the page's data", bytes.len() - c.pos)));
    }
    if windowed || rows == (0..n) {
        Ok(data)
    } else {
        Ok(slice_data(&data, rows.start, rows.len()))
    }
}

/// Bitmaps of a window of rows, starting at bit 0: validity (absent: no nulls) and, for
/// booleans, the values.
#[derive(Debug)]
pub struct WindowBits {
    /// Validity of the rows, if the page has a bitmap.
    pub validity: Option<Buffer>,
    /// Values of a boolean page; `None` for fixed-width pages, whose values went to `dst`.
    pub values: Option<Buffer>,
}

/// Decodes rows `rows` of a fixed-width or boolean page of `n` rows straight into `dst`:
/// `width * rows.len()` bytes for fixed-width types, empty for booleans (whose values come
/// back as bits). This is how a whole-column read fills one buffer from many pages.
pub fn decode_page_into(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
) -> Result<WindowBits> {
    if rows.start > rows.end || rows.end > n {
        return Err(Error::OutOfRange {
            detail: format!("rows {}..{} of a page of {n}", rows.start, rows.end),
        });
    }
    let expected = crate::schema::fixed_width(dt).map_or(0, |w| w * rows.len());
    if dst.len() != expected || (*dt != DataType::Boolean && crate::schema::fixed_width(dt).is_none()) {
        return Err(Error::Usage(format!(
            "decode_page_into: {dt} pages need a {expected}-byte destination, got {}",
            dst.len()
        )));
    }
    let mut c = Cursor::new(bytes);
    let bits = decode_window_bits(dt, n, rows, &mut c, dst)?;
    if c.pos != bytes.len() {
        return Err(corrupt(format!("{} bytes after the page's data", bytes.len() - c.pos)));
    }
    Ok(bits)
}

/// Rows `rows` of a fixed-width or boolean node of `n` rows.
fn decode_window(dt: &DataType, n: usize, rows: std::ops::Range<usize>, c: &mut Cursor<'_>) -> Result<ArrayData> {
    let m = rows.len();
    let mut values = match crate::schema::fixed_width(dt) {
        Some(w) => c.alloc(w * m)?,
        None => MutableBuffer::new(0),
    };
    let bits = decode_window_bits(dt, n, rows, c, values.as_slice_mut())?;
    let builder = ArrayDataBuilder::new(dt.clone()).len(m).null_bit_buffer(bits.validity);
    build(builder.add_buffer(bits.values.unwrap_or_else(|| values.into())))
}

fn decode_window_bits(
    dt: &DataType,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
) -> Result<WindowBits> {
    let nbytes = bit_util::ceil(n, 8);
    let m = rows.len();
    let window_bits = |bits: &[u8]| {
        if rows.start == 0 && m == n {
            return Buffer::from(bits);
        }
        let mut out = vec![0u8; bit_util::ceil(m, 8)];
        set_bits(&mut out, bits, 0, rows.start, m);
        Buffer::from_vec(out)
    };
    let validity = match c.u8()? {
        0 => None,
        1 => Some(window_bits(c.take(nbytes)?)),
        v => return Err(corrupt(format!("unknown validity kind {v}"))),
    };
    if *dt == DataType::Boolean {
        let values = Some(window_bits(c.take(nbytes)?));
        return Ok(WindowBits { validity, values });
    }
    let w = crate::schema::fixed_width(dt).ok_or_else(|| corrupt(format!("no page layout for {dt}")))?;
    decode_fixed_rows_into(w, n, rows, c, dst)?;
    Ok(WindowBits { validity, values: None })
}

fn decode_node(dt: &DataType, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    decode_node_as(dt, StringLayout::AsStored, n, c)
}

/// A node of type `dt`, a `Utf8` or `Binary` one as `strings` says.
fn decode_node_as(dt: &DataType, strings: StringLayout, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    if *dt == DataType::Null {
        return build(ArrayDataBuilder::new(DataType::Null).len(n));
    }
    let nbytes = bit_util::ceil(n, 8);
    let validity = match c.u8()? {
        0 => None,
        1 => Some(Buffer::from(c.take(nbytes)?)),
        v => return Err(corrupt(format!("unknown validity kind {v}"))),
    };
    let builder = ArrayDataBuilder::new(dt.clone())
        .len(n)
        .null_bit_buffer(validity.clone());
    match dt {
        DataType::Boolean => build(builder.add_buffer(Buffer::from(c.take(nbytes)?))),
        DataType::Struct(fields) => {
            let children = fields
                .iter()
                .map(|f| decode_node(f.data_type(), n, c))
                .collect::<Result<Vec<_>>>()?;
            build(builder.child_data(children))
        }
        DataType::List(item) => {
            let (offsets, m) = decode_offsets::<4>(n, c)?;
            build(
                builder
                    .add_buffer(offsets)
                    .add_child_data(decode_node(item.data_type(), m, c)?),
            )
        }
        DataType::LargeList(item) => {
            let (offsets, m) = decode_offsets::<8>(n, c)?;
            build(
                builder
                    .add_buffer(offsets)
                    .add_child_data(decode_node(item.data_type(), m, c)?),
            )
        }
        DataType::Utf8 | DataType::Binary if strings == StringLayout::View => {
            let utf8 = *dt == DataType::Utf8;
            let (views, data) = decode_string_views(n, c, utf8)?;
            view_array(utf8, n, views, data, validity)
        }
        DataType::Utf8 if strings == StringLayout::Large => {
            let (offsets, data) = decode_strings::<4, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeUtf8Type>(n, offsets, data, validity)
        }
        DataType::Binary if strings == StringLayout::Large => {
            let (offsets, data) = decode_strings::<4, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeBinaryType>(n, offsets, data, validity)
        }
        DataType::Utf8 => {
            let (offsets, data) = decode_strings::<4, 4>(n, c)?;
            byte_array::<arrow_array::types::Utf8Type>(n, offsets, data, validity)
        }
        DataType::Binary => {
            let (offsets, data) = decode_strings::<4, 4>(n, c)?;
            byte_array::<arrow_array::types::BinaryType>(n, offsets, data, validity)
        }
        DataType::LargeUtf8 => {
            let (offsets, data) = decode_strings::<8, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeUtf8Type>(n, offsets, data, validity)
        }
        DataType::LargeBinary => {
            let (offsets, data) = decode_strings::<8, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeBinaryType>(n, offsets, data, validity)
        }
        DataType::FixedSizeBinary(w) => {
            let len = (*w as usize).checked_mul(n).ok_or_else(|| corrupt("page too large"))?;
            build(builder.add_buffer(Buffer::from(c.take(len)?)))
        }
        _ => {
            let w = crate::schema::fixed_width(dt).ok_or_else(|| corrupt(format!("no page layout for {dt}")))?;
            let values = decode_fixed(w, n, c)?;
            build(builder.add_buffer(values.into()))
        }
    }
}

/// A string or binary array of `n` rows, checked as `GenericByteArray::try_new` checks it:
/// UTF-8 over the whole data at once, then each offset on a character boundary (`ArrayData`
/// validation goes string by string, several times slower).
fn byte_array<T: arrow_array::types::ByteArrayType>(
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

fn build(b: ArrayDataBuilder) -> Result<ArrayData> {
    // Full validation: a page from a hostile file must never become an invalid Arrow array.
    b.build().map_err(|e| corrupt(format!("invalid array: {e}")))
}

fn decode_fixed(w: usize, n: usize, c: &mut Cursor<'_>) -> Result<MutableBuffer> {
    decode_fixed_rows(w, n, 0..n, c)
}

/// Rows `rows` of `n` fixed-width values of `w` bytes (the cursor moves past all `n`).
fn decode_fixed_rows(w: usize, n: usize, rows: std::ops::Range<usize>, c: &mut Cursor<'_>) -> Result<MutableBuffer> {
    let mut out = c.alloc(w * rows.len())?;
    decode_fixed_rows_into(w, n, rows, c, out.as_slice_mut())?;
    Ok(out)
}

/// [`decode_fixed_rows`] into `dst` (`w * rows.len()` bytes).
fn decode_fixed_rows_into(
    w: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
) -> Result<()> {
    let len = w.checked_mul(n).ok_or_else(|| corrupt("page too large"))?;
    debug_assert_eq!(dst.len(), w * rows.len());
    let enc = c.u8()?;
    if enc == encoding::PLAIN {
        let src = c.take(len)?;
        unshuffle_rows(w, n, src, rows, dst);
        return Ok(());
    }
    match w {
        1 => decode_words::<1>(enc, n, rows, c, dst)?,
        2 => decode_words::<2>(enc, n, rows, c, dst)?,
        4 => decode_words::<4>(enc, n, rows, c, dst)?,
        8 => decode_words::<8>(enc, n, rows, c, dst)?,
        _ => return Err(corrupt(format!("encoding {enc} is not defined for {w}-byte values"))),
    }
    Ok(())
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
) -> Result<()> {
    let (dst, _) = dst.as_chunks_mut::<W>();
    let (lo, hi) = (rows.start, rows.end);
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
                let mut buf = vec![0u8; (hi - lo) * k];
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
            let width = c.u8()?;
            if d > MAX_FIXED_DICT && width != 2 {
                return Err(corrupt(format!("a dictionary of {d} values needs 2-byte codes")));
            }
            let too_big = || corrupt(format!("a dictionary code is not below the dictionary size {d}"));
            match width {
                1 => {
                    let mut table = [[0u8; W]; MAX_FIXED_DICT];
                    unshuffle_into(raw, &mut table[..d]);
                    let codes = &c.take(n)?[lo..hi];
                    if codes.iter().fold(0u8, |m, &x| m.max(x)) as usize >= d && !codes.is_empty() {
                        return Err(too_big());
                    }
                    for (o, &x) in dst.iter_mut().zip(codes) {
                        *o = table[x as usize];
                    }
                }
                2 => {
                    let mut table = vec![[0u8; W]; d];
                    unshuffle_into(raw, &mut table);
                    // Take the bytes before allocating: what a page claims is bounded by what it holds.
                    let len = n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?;
                    let src = c.take(len)?;
                    let mut codes = vec![0u8; (hi - lo) * 2];
                    unshuffle_rows(2, n, src, rows, &mut codes);
                    let (codes, _) = codes.as_chunks::<2>();
                    if codes.iter().fold(0u16, |m, &x| m.max(u16::from_le_bytes(x))) as usize >= d {
                        return Err(too_big());
                    }
                    for (o, &x) in dst.iter_mut().zip(codes) {
                        *o = table[u16::from_le_bytes(x) as usize];
                    }
                }
                other => {
                    return Err(corrupt(format!(
                        "dictionary codes of fixed-width values of {other} bytes (1 or 2 allowed)"
                    )))
                }
            }
            Ok(())
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
            let mut values = vec![[0u8; W]; runs];
            unshuffle_into(raw, &mut values);
            let mut ends: Vec<u64> = Vec::with_capacity(runs);
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

/// Offsets and data buffers of `n` strings with `OW`-byte offsets.
/// The offsets and data of a string or binary page of `n` rows whose lengths are stored `SW`
/// bytes wide (4 for `Utf8`/`Binary`, 8 for the large types), with offsets `OW >= SW` wide.
fn decode_strings<const SW: usize, const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, Buffer)> {
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN => {
            let (offsets, total) = offsets_from_lengths::<SW, OW>(n, c)?;
            let data_len = c.u64()?;
            if total != data_len {
                return Err(corrupt("string lengths do not add up to the data"));
            }
            // Not counted against the budget: a copy of bytes the page holds expands nothing.
            let data = Buffer::from(c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?);
            Ok((offsets, data))
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_STRING_DICT {
                return Err(corrupt(format!("string dictionary of {d} values")));
            }
            let lengths = decode_fixed(SW, d, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            let mut starts = Vec::with_capacity(d + 1);
            let mut pos = 0u64;
            starts.push(0usize);
            for l in lengths.as_slice().as_chunks::<SW>().0 {
                pos = pos.saturating_add(load::<SW>(l));
                starts.push(pos.min(u64::MAX >> 1) as usize);
            }
            if pos != data.len() as u64 {
                return Err(corrupt("dictionary lengths do not add up to its data"));
            }
            c.charge(n.saturating_mul(2))?;
            let codes: Vec<u16> = match c.u8()? {
                1 => c.take(n)?.iter().map(|&x| u16::from(x)).collect(),
                2 => {
                    let src = c.take(n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?)?;
                    let mut b = vec![0u8; src.len()];
                    unshuffle(2, src, &mut b);
                    b.as_chunks::<2>().0.iter().map(|x| u16::from_le_bytes(*x)).collect()
                }
                k => return Err(corrupt(format!("{k}-byte dictionary codes"))),
            };
            // One pass checks the codes and sums the lengths before anything is allocated.
            let mut total = 0u64;
            for &x in &codes {
                let x = usize::from(x);
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
            let total =
                usize::try_from(total).map_err(|_| corrupt(format!("page expands to {total} bytes of strings")))?;
            c.charge(total.saturating_add((n + 1) * OW))?;
            let (offsets, data) = rebuild_strings::<OW>(&codes, &starts, data, total)?;
            Ok((offsets.into(), data.into()))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
}

/// The views (16 bytes a row) and data of a `Utf8` (`utf8`) or `Binary` page of `n` rows: short
/// values inline, long ones pointing into the data, which for a dictionary page is its
/// dictionary. Every value is checked to be UTF-8 for `utf8` pages, as `byte_array` checks.
fn decode_string_views(n: usize, c: &mut Cursor<'_>, utf8: bool) -> Result<(Buffer, Buffer)> {
    use arrow_array::builder::make_view;
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN => {
            let lengths = decode_fixed(4, n, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
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
            Ok((Buffer::from_vec(views), Buffer::from(data)))
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
            let mut values = Vec::with_capacity(d);
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
                    let mut codes = vec![0u8; src.len()];
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
            // The page as a file holds it must still fit 32-bit offsets once expanded (what
            // a read as stored checks), though views never expand it: the same pages are
            // corrupt whichever way they are read. A view's low 32 bits are its length.
            let total: u64 = views.iter().map(|&v| u64::from(v as u32)).sum();
            if total > i32::MAX as u64 {
                return Err(corrupt(format!("page expands to {total} bytes of strings")));
            }
            Ok((Buffer::from_vec(views), Buffer::from(data)))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
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
    views.try_reserve_exact(n).map_err(|_| Error::OutOfRange {
        detail: format!("no memory for {n} string views"),
    })?;
    Ok(views)
}

/// A `Utf8View` (`utf8`) or `BinaryView` array of `n` rows from what [`decode_string_views`]
/// made.
fn view_array(utf8: bool, n: usize, views: Buffer, data: Buffer, validity: Option<Buffer>) -> Result<ArrayData> {
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

/// The strings of a dictionary page, one per code: offsets (`OW` bytes each, from 0) and data.
/// `starts` are the dictionary's `d + 1` offsets into `dict`, every code is below `d`, and
/// `total` is the sum of the coded strings' lengths (all checked by the caller).
fn rebuild_strings<const OW: usize>(
    codes: &[u16],
    starts: &[usize],
    dict: &[u8],
    total: usize,
) -> Result<(MutableBuffer, MutableBuffer)> {
    // Strings are copied in whole 16-byte chunks, which compile to plain moves: a memcpy call
    // per string (these are short, often a few bytes) cost more than the copying. Both the
    // dictionary and the output carry 16 bytes of slack, so a last chunk stays in bounds, and
    // the next string overwrites what a chunk wrote past its string's end. Positions are kept
    // in locals, not in a growing vector's length, so the loop keeps them in registers.
    const CHUNK: usize = 16;
    let mut padded = Vec::with_capacity(dict.len() + CHUNK);
    padded.extend_from_slice(dict);
    padded.resize(dict.len() + CHUNK, 0);
    let mut out = ZeroedBuffer::new(total + CHUNK, "a page's strings")?.into_mutable();
    let mut offsets = ZeroedBuffer::new((codes.len() + 1) * OW, "a page's string offsets")?.into_mutable();
    let data = out.as_slice_mut();
    let mut at = 0usize;
    for (&x, offset) in codes.iter().zip(offsets.as_slice_mut()[OW..].as_chunks_mut::<OW>().0) {
        let (start, end) = (starts[usize::from(x)], starts[usize::from(x) + 1]);
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

/// List offsets from `n` encoded lengths, and the child's length (their sum).
fn decode_offsets<const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, usize)> {
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
fn offsets_from_lengths<const SW: usize, const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, u64)> {
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
        decode_fixed_rows_into(SW, n, 0..n, c, words[1..].as_flattened_mut())?;
        for w in &mut words[1..] {
            at = at.saturating_add(load::<OW>(w));
            store::<OW>(at, w);
        }
    } else {
        // n * SW <= (n + 1) * OW bytes, already counted against the budget above.
        let mut lengths = vec![0u8; n * SW];
        decode_fixed_rows_into(SW, n, 0..n, c, &mut lengths)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        Array, BooleanArray, Float64Array, Int32Array, Int64Array, LargeStringArray, StringArray, UInt16Array,
        UInt64Array,
    };

    fn round_trip(arr: &dyn Array) -> u8 {
        round_trip_page(arr).summary
    }

    fn round_trip_page(arr: &dyn Array) -> Encoded {
        let data = arr.to_data();
        let mut page = Vec::new();
        let summary = encode_page(arr.data_type(), std::slice::from_ref(&data), &mut page).unwrap();
        if summary.summary & 0x7f == encoding::RUNS {
            assert_eq!(summary.layout, 2);
        }
        let back = decode_page(arr.data_type(), arr.len(), &page).unwrap();
        assert_eq!(arrow_array::make_array(back).as_ref(), arr);
        let n = arr.len();
        for (a, b) in [
            (0, 0),
            (0, n / 2),
            (n / 3, n),
            (n / 2, n / 2 + 1),
            (1, n.saturating_sub(1)),
            (n, n),
        ] {
            let (a, b) = (a.min(n), b.min(n).max(a.min(n)));
            let part = decode_page_rows(arr.data_type(), n, &page, a..b).unwrap();
            assert_eq!(
                arrow_array::make_array(part).as_ref(),
                arr.slice(a, b - a).as_ref(),
                "rows {a}..{b}"
            );
            for layout in [StringLayout::Large, StringLayout::View] {
                let got = decode_page_rows_as(arr.data_type(), layout, n, &page, a..b).unwrap();
                got.validate_full().unwrap();
                let got = arrow_array::make_array(got);
                match read_as(arr, layout) {
                    Some(want) => assert_eq!(got.as_ref(), want.slice(a, b - a).as_ref(), "{layout:?}, rows {a}..{b}"),
                    None => assert_eq!(got.as_ref(), arr.slice(a, b - a).as_ref(), "rows {a}..{b}"),
                }
            }
        }
        // Every truncation is an error, never a panic.
        for cut in 0..page.len() {
            assert!(decode_page(arr.data_type(), arr.len(), &page[..cut]).is_err());
        }
        summary
    }

    /// A `Utf8` or `Binary` array as `layout` hands it over, built value by value; None for
    /// other types.
    fn read_as(arr: &dyn Array, layout: StringLayout) -> Option<arrow_array::ArrayRef> {
        use arrow_array::cast::AsArray;
        if layout == StringLayout::View {
            return match arr.data_type() {
                DataType::Utf8 => Some(std::sync::Arc::new(arrow_array::StringViewArray::from_iter(
                    arr.as_string::<i32>().iter(),
                ))),
                DataType::Binary => Some(std::sync::Arc::new(arrow_array::BinaryViewArray::from_iter(
                    arr.as_binary::<i32>().iter(),
                ))),
                _ => None,
            };
        }
        match arr.data_type() {
            DataType::Utf8 => Some(std::sync::Arc::new(LargeStringArray::from_iter(
                arr.as_string::<i32>().iter(),
            ))),
            DataType::Binary => Some(std::sync::Arc::new(arrow_array::LargeBinaryArray::from_iter(
                arr.as_binary::<i32>().iter(),
            ))),
            _ => None,
        }
    }

    #[test]
    fn encodings_are_chosen_from_the_data() {
        let narrow = Int32Array::from_iter_values((0..1000).map(|i| 1 + i % 100));
        assert_eq!(round_trip(&narrow), encoding::FOR);
        let prices = Float64Array::from_iter_values((0..1000).map(|i| [1.5, 2.25, 99.99][i % 3]));
        assert_eq!(round_trip(&prices), encoding::DICT);
        let steady = Int64Array::from_iter_values((0..1000).map(|i| i * 1_000_003));
        assert_eq!(round_trip(&steady), encoding::DELTA);
        let sorted = Int64Array::from_iter_values((0..1000i64).map(|i| (1 << 40) | (i * 1000 + (i * 7919) % 13)));
        assert_eq!(round_trip(&sorted), encoding::DELTA);
        let twenty_bits = Int32Array::from_iter_values((0..1000).map(|i| (i * 7919) % 1_000_000));
        assert_eq!(round_trip(&twenty_bits), encoding::BITPACK);
        let three_bytes = Int64Array::from_iter_values((0..1000).map(|i| -(i * 16_000_003 % 16_700_000)));
        assert_eq!(round_trip(&three_bytes), encoding::FOR);
        let full = UInt64Array::from_iter_values((0..1000u64).map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 3
        }));
        assert_eq!(round_trip(&full), encoding::BITPACK);
        let one = Int32Array::from(vec![5]);
        round_trip(&one);
        let random = Int64Array::from_iter_values((0..1000u64).map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) as i64
        }));
        assert_eq!(round_trip(&random), encoding::PLAIN);
        let negative = Int32Array::from_iter_values((0..1000).map(|i| -50 + i % 7));
        assert_eq!(round_trip(&negative), encoding::FOR);
        let extremes = Int64Array::from(vec![i64::MIN, i64::MAX, 0, -1]);
        round_trip(&extremes);
        let u16s = UInt16Array::from_iter_values((0..300).map(|i| i * 200));
        round_trip(&u16s);
        // Signed ranges across zero: codes are differences mod 2^(8W), not mod 2^64.
        let across_zero = Int32Array::from_iter_values((0..5000).map(|i| (i * 7919) % 2000 - 1000));
        assert_eq!(round_trip(&across_zero), encoding::BITPACK);
        let small_across = Int32Array::from_iter_values((0..5000).map(|i| (i * 31) % 400 - 200));
        assert_eq!(round_trip(&small_across), encoding::BITPACK);
        let i16s = arrow_array::Int16Array::from_iter_values((0..5000).map(|i| ((i * 31) % 600 - 300) as i16));
        assert_eq!(round_trip(&i16s), encoding::BITPACK);
        let i8s = arrow_array::Int8Array::from_iter_values((0..5000).map(|i| ((i * 7) % 21 - 10) as i8));
        assert_eq!(round_trip(&i8s), encoding::BITPACK);
    }

    #[test]
    fn codes_the_codec_could_not_shrink_are_bit_packed() {
        let mut x = 1u64;
        let mut uniform = |k: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % k
        };
        // Uniform in 1..100: 6.6 bits of entropy in 7-bit codes, nothing for zstd to add.
        let random: Vec<i32> = (0..16_384).map(|_| 1 + uniform(100) as i32).collect();
        assert_eq!(round_trip(&Int32Array::from(random.clone())), encoding::BITPACK);
        // The same range with skewed frequencies (about 2 bits of entropy): left to the codec.
        let skewed = Int32Array::from_iter_values((0..16_384).map(|_| {
            let u = uniform(1000);
            if u < 900 {
                (u % 4) as i32
            } else {
                (u % 100) as i32
            }
        }));
        assert_eq!(round_trip(&skewed), encoding::FOR);
        // Uniform codes, but repeated: LZ4 finds the repeats, so the codec keeps them.
        let repeated = Int32Array::from(random[..2048].repeat(8));
        assert_eq!(round_trip(&repeated), encoding::FOR);
        // One-byte integers: 7 bits of entropy in 7 bits are packed; 70 values (6.1 bits) are
        // left to the codec, whose entropy stage saves 12 % over packing.
        let i8s = arrow_array::Int8Array::from_iter_values((0..16_384).map(|_| uniform(128) as i8));
        assert_eq!(round_trip(&i8s), encoding::BITPACK);
        let keys = arrow_array::Int8Array::from_iter_values((0..16_384).map(|_| uniform(70) as i8));
        assert_eq!(round_trip(&keys), encoding::PLAIN);
    }

    #[test]
    fn long_runs_become_runs() {
        // Sorted keys, 100 rows each: one run per key.
        let keys = Int64Array::from_iter_values((0..5000i64).map(|i| 1_000_000_007 * (i / 100)));
        let enc = round_trip_page(&keys);
        assert_eq!((enc.summary, enc.layout), (encoding::RUNS, 2));
        let prices = Float64Array::from_iter_values((0..4000).map(|i| [9.99, -0.0, 0.0, f64::NAN][i / 700 % 4]));
        assert_eq!(round_trip(&prices), encoding::RUNS);
        let constant = arrow_array::Int8Array::from_iter_values((0..100).map(|_| -3));
        assert_eq!(round_trip(&constant), encoding::RUNS);
        // Nulls inside runs take the value before them, so they do not break the runs.
        let gappy = Int32Array::from_iter((0..3000).map(|i| (i % 9 != 4).then_some(i / 100)));
        assert_eq!(round_trip(&gappy), encoding::RUNS | SUMMARY_NULLS);
        let leading_nulls = Int32Array::from_iter((0..400).map(|i| (i >= 30).then_some(7)));
        assert_eq!(round_trip(&leading_nulls), encoding::RUNS | SUMMARY_NULLS);
        // Integers need runs of 64 rows on average (shorter ones are smaller as deltas);
        // floats 16.
        let step =
            |run: i64| Int64Array::from_iter_values((0..4096i64).map(move |i| (1 << 40) + (i / run) * 1_000_003));
        assert_eq!(round_trip(&step(63)), encoding::DELTA);
        assert_eq!(round_trip(&step(64)), encoding::RUNS);
        let float_steps = |run: usize| Float64Array::from_iter_values((0..4096).map(move |i| (i / run) as f64 * 0.1));
        assert_eq!(round_trip(&float_steps(15)), encoding::DICT);
        assert_eq!(round_trip(&float_steps(16)), encoding::RUNS);
        // Runs of different lengths (10-bit lengths), windows across them.
        let ragged =
            Int32Array::from_iter_values((0..20_000).map(|i: i32| if i < 19_900 { i / 1000 } else { -i / 50 }));
        assert_eq!(round_trip(&ragged), encoding::RUNS);
        // Strings of one length: the lengths are a run, which the page summary does not show.
        let codes = StringArray::from_iter_values((0..1000).map(|i| format!("{:06}", i * 7919 % 1_000_000)));
        let enc = round_trip_page(&codes);
        assert_eq!((enc.summary, enc.layout), (encoding::PLAIN, 2));
        // Pages without runs stay readable by layout-1 readers.
        let plain = Int32Array::from_iter_values((0..1000).map(|i| 1 + i % 100));
        assert_eq!(round_trip_page(&plain).layout, 1);
    }

    #[test]
    fn floats_with_hundreds_of_values_get_two_byte_codes() {
        // A random walk in steps of 0.01: about 600 distinct values in 4096 rows.
        let mut x = 100.0f64;
        let walk = Float64Array::from_iter_values((0..4096u64).map(|i| {
            x += [0.01, -0.01, 0.02, -0.02, 0.0][(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize % 5];
            (x * 100.0).round() / 100.0
        }));
        let enc = round_trip_page(&walk);
        assert_eq!((enc.summary, enc.layout), (encoding::DICT, 2));
        let prices =
            arrow_array::Float32Array::from_iter((0..4096).map(|i| (i % 9 != 0).then_some((i * 7 % 400) as f32 / 4.0)));
        assert_eq!(round_trip(&prices), encoding::DICT | SUMMARY_NULLS);
        // Repeats at first, then distinct values: plain, found out before the page's end.
        let turning =
            Float64Array::from_iter_values((0..8192).map(|i| if i < 1500 { (i % 10) as f64 } else { i as f64 }));
        assert_eq!(round_trip(&turning), encoding::PLAIN);
        // Few repeats: plain, without hashing the whole page.
        let noise = Float64Array::from_iter_values(
            (0..4096u64).map(|i| f64::from_bits(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2)),
        );
        assert_eq!(
            round_trip_page(&noise),
            Encoded {
                summary: encoding::PLAIN,
                layout: 1
            }
        );
        // Up to 256 values keep one-byte codes, readable by layout-1 readers.
        let few = Float64Array::from_iter_values((0..4096).map(|i| (i % 200) as f64 * 0.5));
        assert_eq!(
            round_trip_page(&few),
            Encoded {
                summary: encoding::DICT,
                layout: 1
            }
        );
    }

    #[test]
    fn hostile_dictionary_pages_are_errors() {
        // Int32, 4 rows, dictionary of `d` values (all 7), code width `k`, then `codes`.
        let page = |d: u32, k: u8, codes: &[u8]| {
            let mut p = vec![0u8, encoding::DICT];
            p.extend_from_slice(&d.to_le_bytes());
            let values: Vec<u8> = (0..d).flat_map(|_| 7i32.to_le_bytes()).collect();
            push_shuffled(4, &values, &mut p);
            p.push(k);
            p.extend_from_slice(codes);
            p
        };
        // Codes 0, 299, 1, 2 (byte-shuffled: low bytes, then high bytes).
        let wide = page(300, 2, &[0, 43, 1, 2, 0, 1, 0, 0]);
        assert!(decode_page(&DataType::Int32, 4, &wide).is_ok());
        for (why, bad) in [
            ("a code past the dictionary", page(300, 2, &[0, 44, 1, 2, 0, 1, 0, 0])),
            ("300 values with 1-byte codes", page(300, 1, &[0, 1, 2, 3])),
            ("3-byte codes", page(3, 3, &[0; 12])),
            ("too many values", page(65_537, 2, &[0; 8])),
            ("codes cut short", page(300, 2, &[0, 43, 1, 2, 0, 1, 0])),
        ] {
            assert!(decode_page(&DataType::Int32, 4, &bad).is_err(), "{why}");
            assert!(decode_page_rows(&DataType::Int32, 4, &bad, 1..2).is_err(), "{why}");
        }
    }

    #[test]
    fn hostile_run_pages_are_errors() {
        // Int32 runs: `runs`, the values, `bits`, then `lengths` (minus one) packed in `bits`.
        let page = |runs: u32, values: &[i32], bits: u8, lengths: &[u64]| {
            let mut p = vec![0u8, encoding::RUNS];
            p.extend_from_slice(&runs.to_le_bytes());
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            push_shuffled(4, &bytes, &mut p);
            p.push(bits);
            crate::bits::pack(lengths.iter().map(|l| l - 1), bits as usize, &mut p);
            p
        };
        let good = page(2, &[1, 2], 3, &[3, 7]);
        let back = arrow_array::make_array(decode_page(&DataType::Int32, 10, &good).unwrap());
        assert_eq!(
            back.as_ref(),
            &Int32Array::from(vec![1, 1, 1, 2, 2, 2, 2, 2, 2, 2]) as &dyn Array
        );
        let mut wide_bits = page(2, &[1, 2], 3, &[3, 7]);
        let at = wide_bits.len() - 2;
        wide_bits[at] = 64;
        for (why, bad, n) in [
            ("no runs", page(0, &[], 0, &[]), 10),
            ("more runs than rows", page(3, &[1, 2, 3], 1, &[1, 1, 1]), 2),
            ("lengths short of the page", page(2, &[1, 2], 3, &[3, 6]), 10),
            ("lengths past the page", page(2, &[1, 2], 3, &[3, 8]), 10),
            ("lengths cut short", page(2, &[1, 2], 3, &[3, 7])[..14].to_vec(), 10),
            ("64-bit lengths", wide_bits, 10),
            ("a huge run count", page(u32::MAX, &[1], 4, &[10]), 10),
        ] {
            assert!(decode_page(&DataType::Int32, n, &bad).is_err(), "{why}");
            assert!(decode_page_rows(&DataType::Int32, n, &bad, 0..0).is_err(), "{why}");
        }
        // Lengths that would overflow a sum: errors, not wrap-arounds.
        let huge = page(2, &[1, 2], 63, &[1 << 62, 1 << 62]);
        assert!(decode_page(&DataType::Int32, 10, &huge).is_err());
        // 2-byte dictionary codes for more rows than can be addressed.
        let mut wide = vec![0u8, encoding::DICT, 0x2c, 1, 0, 0];
        wide.extend(std::iter::repeat_n(0u8, 300));
        wide.push(2);
        assert!(decode_page_rows(&DataType::UInt8, 1 << 63, &wide, 0..0).is_err());
    }

    #[test]
    fn nulls_and_slices() {
        let with_nulls = Int32Array::from_iter((0..1000).map(|i| (i % 7 != 0).then_some(i % 50)));
        assert_eq!(round_trip(&with_nulls), encoding::FOR | SUMMARY_NULLS);
        let sliced = with_nulls.slice(3, 500);
        round_trip(&sliced);
        let bools = BooleanArray::from_iter((0..1001).map(|i| (i % 5 != 0).then_some(i % 3 == 0)));
        round_trip(&bools);
        round_trip(&bools.slice(5, 99));
        let all_null = Float64Array::from(vec![None; 17]);
        round_trip(&all_null);
    }

    #[test]
    fn strings_plain_and_dictionary() {
        let words = StringArray::from_iter((0..1000).map(|i| (i % 11 != 0).then(|| format!("w{}", i * 7919))));
        assert_eq!(round_trip(&words), encoding::PLAIN | SUMMARY_NULLS);
        let cities = LargeStringArray::from_iter_values((0..1000).map(|i| ["Paris", "Oslo", "Lima"][i % 3]));
        assert_eq!(round_trip(&cities), encoding::DICT);
        round_trip(&cities.slice(10, 300));
        // Dictionary values around the 16-byte copy chunk, empty and multi-byte ones included.
        let values = [
            "",
            "a",
            "é15-bytes-abcd",
            "0123456789abcdef",
            "0123456789abcdefg",
            "ü".repeat(20).as_str(),
        ]
        .map(String::from);
        let mixed = StringArray::from_iter((0..1000).map(|i| (i % 13 != 0).then(|| values[i * 7 % 6].clone())));
        assert_eq!(round_trip(&mixed), encoding::DICT | SUMMARY_NULLS);
        let bytes = arrow_array::BinaryArray::from_iter((0..1000u32).map(|i| (i % 5 != 0).then(|| i.to_le_bytes())));
        assert_eq!(round_trip(&bytes), encoding::PLAIN | SUMMARY_NULLS);
    }

    #[test]
    fn several_pieces_make_one_page() {
        let a = Int32Array::from_iter((0..100).map(|i| (i % 3 != 0).then_some(i)));
        let b = Int32Array::from_iter_values(100..250);
        let mut page = Vec::new();
        encode_page(&DataType::Int32, &[a.to_data().slice(7, 50), b.to_data()], &mut page).unwrap();
        let back = arrow_array::make_array(decode_page(&DataType::Int32, 200, &page).unwrap());
        let want: Vec<Option<i32>> = a.slice(7, 50).iter().chain(b.iter()).collect();
        assert_eq!(
            back.as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            want
        );
    }

    #[test]
    fn hostile_pages_are_errors() {
        // A dictionary code past the dictionary.
        let page = [0u8, encoding::DICT, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 5];
        assert!(decode_page(&DataType::Int64, 1, &page).is_err());
        // Strings whose lengths overflow.
        let mut page = vec![0u8, encoding::PLAIN, encoding::PLAIN];
        page.extend_from_slice(&u64::MAX.to_le_bytes());
        page.extend_from_slice(&0u64.to_le_bytes());
        assert!(decode_page(&DataType::LargeUtf8, 1, &page).is_err());
        // Invalid UTF-8.
        let mut page = vec![0u8, encoding::PLAIN, encoding::PLAIN, 2, 0, 0, 0];
        page.extend_from_slice(&2u64.to_le_bytes());
        page.extend_from_slice(&[0xff, 0xfe]);
        assert!(decode_page(&DataType::Utf8, 1, &page).is_err());
        assert!(decode_page(&DataType::Binary, 1, &page).is_ok());
    }

    /// `byte_array` with arbitrary offsets and data: the same verdict and array as
    /// `GenericByteArray::try_new`, on both its ASCII path (no per-offset check) and the other.
    fn byte_array_agrees<T: arrow_array::types::ByteArrayType>(data: &[u8], lengths: &[usize], nulls: Option<&[u8]>) {
        use arrow_buffer::{ArrowNativeType, BooleanBuffer, NullBuffer, OffsetBuffer};
        let n = lengths.len();
        let mut at = 0usize;
        let mut offsets = vec![T::Offset::usize_as(0)];
        for &l in lengths {
            at += l;
            offsets.push(T::Offset::usize_as(at));
        }
        let offset_bytes = Buffer::from_vec(offsets.clone());
        let validity = nulls.map(Buffer::from);
        let ours = byte_array::<T>(n, offset_bytes, Buffer::from(data), validity.clone());
        let theirs = arrow_array::GenericByteArray::<T>::try_new(
            OffsetBuffer::new(offsets.into()),
            Buffer::from(data),
            validity.map(|b| NullBuffer::new(BooleanBuffer::new(b, 0, n))),
        );
        match (ours, theirs) {
            (Ok(a), Ok(b)) => assert_eq!(arrow_array::make_array(a).as_ref(), &b as &dyn arrow_array::Array),
            (Err(_), Err(_)) => {}
            (a, b) => panic!(
                "byte_array {:?}, try_new {:?} on {data:?} {lengths:?}",
                a.is_ok(),
                b.is_ok()
            ),
        }
    }

    #[test]
    fn byte_array_checks_like_try_new() {
        use arrow_array::types::{BinaryType, LargeUtf8Type, Utf8Type};
        let cases: &[(&[u8], &[usize])] = &[
            (b"", &[]),
            (b"", &[0, 0]),
            (b"abc", &[1, 2]),
            (b"abc", &[1, 1]),             // data longer than the offsets say: allowed
            (b"abc", &[2, 2]),             // an offset past the data
            ("héllo".as_bytes(), &[2, 4]), // split inside "é"
            ("héllo".as_bytes(), &[3, 3]),
            (&[0x61, 0xff, 0x62], &[1, 2]), // not UTF-8
            (&[0x80], &[1]),
        ];
        for (data, lengths) in cases {
            byte_array_agrees::<Utf8Type>(data, lengths, None);
            byte_array_agrees::<LargeUtf8Type>(data, lengths, None);
            byte_array_agrees::<BinaryType>(data, lengths, None);
            byte_array_agrees::<Utf8Type>(data, lengths, Some(&[0b10]));
        }
    }

    /// A `Utf8`/`Binary` page of strings cut from `data` at `lengths` (which add up to it),
    /// plain, or as a dictionary of those strings indexed by `codes`.
    fn string_page(data: &[u8], lengths: &[usize], codes: Option<&[u8]>) -> Vec<u8> {
        let mut page = vec![
            0u8,
            if codes.is_some() {
                encoding::DICT
            } else {
                encoding::PLAIN
            },
        ];
        if codes.is_some() {
            page.extend_from_slice(&(lengths.len() as u32).to_le_bytes());
        }
        let raw: Vec<u8> = lengths.iter().flat_map(|&l| (l as u32).to_le_bytes()).collect();
        let mut shuffled = vec![0u8; raw.len()];
        shuffle(4, &raw, &mut shuffled);
        page.push(encoding::PLAIN);
        page.extend_from_slice(&shuffled);
        page.extend_from_slice(&(data.len() as u64).to_le_bytes());
        page.extend_from_slice(data);
        if let Some(codes) = codes {
            page.push(1);
            page.extend_from_slice(codes);
        }
        page
    }

    proptest::proptest! {
        #[test]
        fn string_views_check_like_try_new_on_any_bytes(
            data in proptest::collection::vec(proptest::prop_oneof![0u8..0x80, proptest::num::u8::ANY], 0..60),
            cuts in proptest::collection::vec(0usize..60, 1..8),
            codes in proptest::collection::vec(0u8..8, 0..30),
            dictionary in proptest::bool::ANY,
        ) {
            // Views of any bytes, cut anywhere (inside characters too, short and long values):
            // the page decodes as views exactly when `StringArray::try_new` accepts its strings
            // (for a dictionary page, its values), and what decodes is valid and equal.
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort_unstable();
            cuts.push(data.len());
            let lengths: Vec<usize> = cuts.iter().scan(0, |at, &c| { let l = c - *at; *at = c; Some(l) }).collect();
            let mut offsets = vec![0i32];
            offsets.extend(cuts.iter().map(|&c| c as i32));
            let values = StringArray::try_new(
                arrow_buffer::OffsetBuffer::new(offsets.clone().into()), Buffer::from(data.as_slice()), None);
            let codes: Vec<u8> = codes.iter().map(|&x| x % lengths.len() as u8).collect();
            let (page, n) = match dictionary {
                true => (string_page(&data, &lengths, Some(&codes)), codes.len()),
                false => (string_page(&data, &lengths, None), lengths.len()),
            };
            for (dt, utf8) in [(DataType::Utf8, true), (DataType::Binary, false)] {
                let got = decode_page_rows_as(&dt, StringLayout::View, n, &page, 0..n);
                proptest::prop_assert_eq!(got.is_ok(), values.is_ok() || !utf8, "{:?}", got.as_ref().err());
                let Ok(got) = got else { continue };
                got.validate_full().unwrap();
                let binary = arrow_array::BinaryArray::new(
                    arrow_buffer::OffsetBuffer::new(offsets.clone().into()), Buffer::from(data.as_slice()), None);
                let want: Vec<&[u8]> = match dictionary {
                    true => codes.iter().map(|&x| binary.value(usize::from(x))).collect(),
                    false => binary.iter().map(Option::unwrap).collect(),
                };
                let got = arrow_array::make_array(got);
                let got: Vec<&[u8]> = match utf8 {
                    true => got.as_any().downcast_ref::<arrow_array::StringViewArray>().unwrap().iter().map(|v| v.unwrap().as_bytes()).collect(),
                    false => got.as_any().downcast_ref::<arrow_array::BinaryViewArray>().unwrap().iter().map(Option::unwrap).collect(),
                };
                proptest::prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn byte_array_checks_like_try_new_on_any_bytes(
            data in proptest::collection::vec(proptest::prop_oneof![0u8..0x80, proptest::num::u8::ANY], 0..40),
            cuts in proptest::collection::vec(0usize..48, 0..8),
        ) {
            let mut cuts = cuts;
            cuts.sort_unstable();
            let lengths: Vec<usize> = cuts.iter().scan(0, |at, &c| { let l = c - *at; *at = c; Some(l) }).collect();
            byte_array_agrees::<arrow_array::types::Utf8Type>(&data, &lengths, None);
            byte_array_agrees::<arrow_array::types::LargeBinaryType>(&data, &lengths, None);
        }

        #[test]
        fn dictionary_strings_round_trip(
            values in proptest::collection::vec("[a-c\\x{e9}\\x{1F600}]{0,40}", 1..6),
            picks in proptest::collection::vec((0usize..6, 0u8..10), 100..400),
        ) {
            // Long, short and empty values, multi-byte ones, nulls: both offset widths.
            let rows = picks.iter().map(|&(i, null)| (null != 0).then(|| values[i % values.len()].as_str()));
            let small = StringArray::from_iter(rows.clone());
            let large = LargeStringArray::from_iter(rows);
            for arr in [&small as &dyn Array, &large] {
                let summary = round_trip(arr);
                proptest::prop_assert_eq!(summary & 0x7f, encoding::DICT);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn string_offsets_never_decrease(
            lengths in proptest::collection::vec(proptest::prop_oneof![40 => 0u64..40, 1 => proptest::num::u64::ANY], 0..20),
            codes in proptest::collection::vec(0u8..20, 0..60),
            large in proptest::bool::ANY,
            dictionary in proptest::bool::ANY,
        ) {
            // String pages with hostile lengths, plain or as a dictionary: a page whose
            // lengths sum past what the offsets can hold fails, and every page that decodes
            // has offsets that `OffsetBuffer::new`'s own check accepts (what `byte_array`'s
            // `new_unchecked` relies on).
            let (ow, dt) = if large { (8usize, DataType::LargeUtf8) } else { (4, DataType::Utf8) };
            let stored = |l: u64| if ow == 8 { l } else { l & 0xFFFF_FFFF };
            let limit = if ow == 8 { i64::MAX as u64 } else { i32::MAX as u64 };
            let mut raw = Vec::new();
            for &l in &lengths {
                raw.extend_from_slice(&l.to_le_bytes()[..ow]);
            }
            let mut shuffled = vec![0u8; raw.len()];
            shuffle(ow, &raw, &mut shuffled);
            let sum = |ls: &mut dyn Iterator<Item = u64>| ls.fold(0u64, |a, l| a.saturating_add(l));
            let dict_sum = sum(&mut lengths.iter().map(|&l| stored(l)));
            // The data holds what the lengths claim when that is small; hostile sums get 4 KiB.
            let data_len = if dict_sum <= 1 << 12 { dict_sum } else { 1 << 12 };
            // Codes within the dictionary (a code past it is another test's subject).
            let codes: Vec<u8> = codes.iter().map(|&x| x % lengths.len().max(1) as u8).collect();
            let mut page = vec![0u8];
            let (n, total) = if dictionary {
                let n = codes.len();
                page.push(encoding::DICT);
                page.extend_from_slice(&(lengths.len() as u32).to_le_bytes());
                let total = sum(&mut codes.iter().map(|&x| lengths.get(usize::from(x)).map_or(0, |&l| stored(l))));
                (n, total)
            } else {
                page.push(encoding::PLAIN);
                (lengths.len(), dict_sum)
            };
            page.push(encoding::PLAIN);
            page.extend_from_slice(&shuffled);
            page.extend_from_slice(&data_len.to_le_bytes());
            page.extend(std::iter::repeat_n(b'a', data_len as usize));
            if dictionary {
                page.push(1);
                page.extend_from_slice(&codes);
            }
            let got = decode_page(&dt, n, &page);
            if total > limit {
                proptest::prop_assert!(got.is_err(), "{total} bytes of strings in a page");
            }
            // As views: whatever decodes is a valid array; what decodes as stored decodes as
            // views too, to the same values.
            let views = decode_page_rows_as(&dt, StringLayout::View, n, &page, 0..n);
            if let Ok(v) = &views {
                v.validate_full().unwrap();
            }
            if let (Ok(stored), false) = (&got, large) {
                let views = arrow_array::make_array(views.unwrap());
                let want = read_as(arrow_array::make_array(stored.clone()).as_ref(), StringLayout::View).unwrap();
                proptest::prop_assert_eq!(views.as_ref(), want.as_ref());
            }
            // Widened as they decode: the same verdict, the same offsets as 64-bit values.
            let wide = decode_page_rows_as(&dt, StringLayout::Large, n, &page, 0..n);
            proptest::prop_assert_eq!(wide.is_ok(), got.is_ok());
            if let (Ok(narrow), Ok(wide), false) = (&got, &wide, large) {
                let offsets = |d: &ArrayData, w: usize| -> Vec<u64> {
                    d.buffers()[0].as_slice().chunks(w).map(|c| {
                        let mut a = [0u8; 8];
                        a[..w].copy_from_slice(c);
                        u64::from_le_bytes(a)
                    }).take(n + 1).collect()
                };
                proptest::prop_assert_eq!(offsets(narrow, 4), offsets(wide, 8));
                proptest::prop_assert_eq!(wide.data_type(), &DataType::LargeUtf8);
                proptest::prop_assert_eq!(narrow.buffers()[1].as_slice(), wide.buffers()[1].as_slice());
            }
            if let Ok(data) = got {
                let offsets = &data.buffers()[0];
                if large {
                    arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::<i64>::new(offsets.clone(), 0, n + 1));
                } else {
                    arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::<i32>::new(offsets.clone(), 0, n + 1));
                }
                proptest::prop_assert_eq!(data.len(), n);
            }
        }
    }

    #[test]
    fn one_budget_covers_every_part_of_a_page() {
        use arrow_array::builder::{Int64Builder, ListBuilder};
        // Lists of lists of int64: offsets at two levels, then the values.
        let mut b = ListBuilder::new(ListBuilder::new(Int64Builder::new()));
        for i in 0..64i64 {
            for j in 0..8 {
                b.values().values().append_slice(&[i, j, i * j, 7]);
                b.values().append(true);
            }
            b.append(true);
        }
        let arr = b.finish();
        let dt = arr.data_type().clone();
        let mut page = Vec::new();
        encode_page(&dt, &[arr.to_data()], &mut page).unwrap();
        // Decoded: 65 + 513 offsets of 4 bytes, 2048 values of 8: the largest part is 16 KiB.
        let total = (65 + 513) * 4 + 2048 * 8;
        let whole = decode_rows_within(&dt, StringLayout::AsStored, 64, &page, 0..64, total).unwrap();
        assert_eq!(arrow_array::make_array(whole).as_ref(), &arr as &dyn Array);
        // Enough for each part on its own, not for all of them.
        let err = decode_rows_within(&dt, StringLayout::AsStored, 64, &page, 0..64, total - 1).unwrap_err();
        assert!(err.to_string().contains("the page decodes to more than"), "{err}");
    }
}
