//! Encoding pages (docs/FORMAT.md, "Pages"): a fixed-width page chooses from its data between
//! runs, plain, frame of reference, bit packing, delta, a dictionary, scaled integers and
//! decimal floats (the last two choose again for what they hold); a string page between plain
//! and a dictionary, or symbols when the writer asks for them.

use super::symbols::SymbolTable;
use super::{
    encoding, load, slice_data, store, Encoded, MAX_FIXED_DICT, MAX_STRING_DICT, MAX_WIDE_DICT, SUMMARY_NULLS,
};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::bit_util;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::filter::shuffle;
use kompakt::{Error, Result};

/// A page is stored as runs when its runs are this many rows long on average, or longer.
/// Integers need longer runs: frame of reference, delta and the codec already shrink short
/// runs of them about as well (sorted timestamps with runs of 20 are 2x smaller as deltas).
const MIN_MEAN_RUN: usize = 16;
const MIN_MEAN_RUN_INT: usize = 64;

fn kind_of(dt: &DataType) -> Kind {
    match dt {
        DataType::Float32 | DataType::Float64 => Kind::Float,
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
    Int {
        signed: bool,
    },
    /// float32 and float64, which may be decimals.
    Float,
    Other,
}

/// What the encoders of one page may use, and the table layout what they used needs.
struct Ctx<'t> {
    /// Runs (layout 2).
    runs: bool,
    /// Scaled and decimal pages (layout 3).
    nest: bool,
    /// Validity as the null rows' numbers (layout 4).
    null_rows: bool,
    /// The codec the page goes through, to weigh packed bits against bytes it compresses.
    codec: Option<kompakt::Codec>,
    /// The symbol table the page's strings are coded with (layout 5), taken by the string
    /// node that uses it.
    symbols: Option<&'t SymbolTable>,
    layout: u16,
}

/// Encodes `pieces` (arrays of type `dt`, `n` rows in all) as one page appended to `out`;
/// `codec` is the one the page will go through (`None`: stored raw), which some choices weigh.
pub fn encode_page(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
) -> Result<Encoded> {
    // A dictionary column's pages hold its keys (its values are stored once, on their own).
    let dt = match dt {
        DataType::Dictionary(key, _) => key.as_ref(),
        other => other,
    };
    encode_top(dt, pieces, out, codec, None)
}

/// A page of `dt` with every encoding allowed, and `symbols` for its strings if given.
fn encode_top(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
    symbols: Option<&SymbolTable>,
) -> Result<Encoded> {
    let mut cx = Ctx {
        runs: true,
        nest: true,
        null_rows: true,
        codec,
        symbols,
        layout: 1,
    };
    let summary = encode_node(dt, pieces, out, &mut cx)?;
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Encodes a page of a top-level string or binary column (of type `dt`) with its bytes coded
/// by `table` (encoding [`SYMBOLS`](encoding::SYMBOLS), table layout 5); the page then goes
/// through no codec. [`SymbolTable::beats`] tells when that pays.
pub fn encode_symbol_page(
    dt: &DataType,
    pieces: &[ArrayData],
    table: &SymbolTable,
    out: &mut Vec<u8>,
) -> Result<Encoded> {
    if !crate::schema::is_byte_array(dt) {
        return Err(Error::Internal(format!("a symbol table for a column of {dt}")));
    }
    encode_top(dt, pieces, out, None, Some(table))
}

/// Encodes a page of a string or binary column as `codes` into the dictionary its pages share
/// (encoding [`COLUMN_DICT`](encoding::COLUMN_DICT), table layout 4): the validity of `pieces`
/// (the page's rows), then the codes as a nested page of 4-byte values, which chooses its own
/// encoding (bit-packed when a few values are common, runs, ...). Null rows' codes are the
/// caller's choice. Returns the page's summary and layout, and the codes' encoding.
pub fn encode_coded_strings(
    pieces: &[ArrayData],
    codes: &[u32],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
) -> Result<(Encoded, u8)> {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    if n != codes.len() {
        return Err(Error::Internal(format!("{} codes for a page of {n} rows", codes.len())));
    }
    let mut cx = Ctx {
        runs: true,
        nest: true,
        null_rows: true,
        codec,
        symbols: None,
        layout: 4,
    };
    let mut summary = encoding::COLUMN_DICT;
    if let Some(bits) = gather_validity(pieces, n) {
        push_validity(pieces, &bits, out, &mut cx);
        summary |= SUMMARY_NULLS;
    } else {
        out.push(super::validity::VALID);
    }
    out.push(encoding::COLUMN_DICT);
    let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
    let inner = encode_words::<4>(&bytes, Kind::Int { signed: false }, out, &mut cx);
    Ok((
        Encoded {
            summary,
            layout: cx.layout,
        },
        inner,
    ))
}

/// Encodes `pieces` (of type `dt`) as one page using only encodings of table layouts up to
/// `layout`: for pages a file's layout must not be raised for (its row-group statistics).
pub(crate) fn encode_page_within(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    layout: u16,
) -> Result<Encoded> {
    let mut cx = Ctx {
        runs: layout >= 2,
        nest: layout >= 3,
        null_rows: layout >= 4,
        codec: None,
        symbols: None,
        layout: 1,
    };
    let summary = encode_node(dt, pieces, out, &mut cx)?;
    debug_assert!(cx.layout <= layout.max(1));
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Encodes the values of a dictionary column as one page, without runs: a reader bounds the
/// count a dictionary claims by its bytes (every value at least a bit), which runs would break.
pub fn encode_dictionary_values(values: &ArrayData, out: &mut Vec<u8>) -> Result<Encoded> {
    // Nor scaled or decimal pages: dictionaries are small, and their rule stays simple.
    let mut cx = Ctx {
        runs: false,
        nest: false,
        null_rows: false,
        codec: None,
        symbols: None,
        layout: 1,
    };
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
        None => out.push(super::validity::VALID),
        Some(bits) => {
            push_validity(pieces, bits, out, cx);
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
            let w =
                crate::schema::fixed_width(dt).ok_or_else(|| Error::Internal(format!("no page encoding for {dt}")))?;
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

/// Pages of at least this many rows with at most one null in [`SPARSE_NULLS`] store the null
/// rows' numbers instead of a bitmap.
const MIN_NULL_ROWS_PAGE: usize = 1024;
const SPARSE_NULLS: usize = 32;

/// Writes the validity of a node with nulls (`bits`, its bitmap): the bitmap, or, when nulls
/// are sparse, the null rows' numbers as a nested page (deltas of a few bits each: a bitmap
/// costs a bit a row, which stays in the file when the page is stored raw, as bit-packed
/// codes are; aircraft tail numbers, 1 % null, lost 7 % of their page to it).
fn push_validity(pieces: &[ArrayData], bits: &[u8], out: &mut Vec<u8>, cx: &mut Ctx) {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    let nulls: usize = pieces.iter().map(ArrayData::null_count).sum();
    if !cx.null_rows || n < MIN_NULL_ROWS_PAGE || nulls * SPARSE_NULLS > n || n > u32::MAX as usize {
        out.push(super::validity::BITMAP);
        out.extend_from_slice(bits);
        return;
    }
    let mut rows = Vec::with_capacity(nulls * 4);
    for i in (0..n).filter(|&i| !bit_util::get_bit(bits, i)) {
        rows.extend_from_slice(&(i as u32).to_le_bytes());
    }
    out.push(super::validity::NULL_ROWS);
    out.extend_from_slice(&(nulls as u32).to_le_bytes());
    encode_words::<4>(&rows, Kind::Int { signed: false }, out, cx);
    cx.layout = cx.layout.max(4);
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

pub(super) fn push_shuffled(w: usize, bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + bytes.len(), 0);
    if w > 1 {
        shuffle(w, bytes, &mut out[start..]);
    } else {
        out[start..].copy_from_slice(bytes);
    }
}

/// Encodes fixed-width values as the data suggests (docs/DESIGN.md, "What kompakt's table
/// writer chooses"); returns the encoding and raises `layout` to what it needs.
fn encode_words<const W: usize>(vals: &[u8], kind: Kind, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    let choice = Choice {
        runs: cx.runs,
        scaled: cx.nest,
        decimal: cx.nest,
        codec: cx.codec,
    };
    let (enc, needs) = choose_words::<W>(vals, kind, choice, out);
    cx.layout = cx.layout.max(needs);
    enc
}

/// What [`choose_words`] may choose from.
#[derive(Clone, Copy)]
struct Choice {
    runs: bool,
    scaled: bool,
    decimal: bool,
    codec: Option<kompakt::Codec>,
}

/// Encodes as [`encode_words`] does; returns the encoding and the table layout it needs (2 for
/// runs and for dictionaries with 2-byte codes, 3 for scaled and decimal pages).
fn choose_words<const W: usize>(vals: &[u8], kind: Kind, choice: Choice, out: &mut Vec<u8>) -> (u8, u16) {
    let runs = choice.runs;
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
            if bits < 8 {
                let codes = &out[start + 2 + W..];
                // Packed when the codec could not shrink byte-wide codes much, or when trials
                // say the packed codes (through the codec or not) are as small: three airports
                // are 2.1 bits a row as zstd-coded bytes, 1.6 as packed bits through zstd,
                // since an entropy coder spends at least a bit on every byte.
                // (Not 0 bits: a dictionary's values must take a bit each, see
                // `encode_dictionary_values`; elsewhere runs take equal values first.)
                // Only below 4 bits of entropy a code: above, bytes through an entropy coder
                // come close enough to it (and pack_instead took the pages where they do not).
                let pack = pack_instead(codes, bits)
                    || bits > 0 && entropy_bits(codes) < 4.0 && {
                        let mut packed = Vec::with_capacity((words.len() * bits).div_ceil(8) + 2 + W);
                        encode_bitpack::<W>(words, bits, base, &mut packed);
                        !bytes_beat_packed(choice.codec, codes, &packed[2 + W..])
                    };
                if pack {
                    out.truncate(start);
                    encode_bitpack::<W>(words, bits, base, out);
                    return (encoding::BITPACK, 1);
                }
            }
            return (encoding::FOR, 1);
        }
        // A common factor first: whole hours in nanoseconds are 9 bits a page, not 48, and the
        // quotients may then be deltas, runs or a dictionary.
        if choice.scaled {
            if let Some(factor) = common_factor::<W>(words, base) {
                return encode_scaled::<W>(words, base, factor, choice, out);
            }
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
    if kind == Kind::Float && choice.decimal && (W == 4 || W == 8) {
        if let Some(needs) = encode_decimal::<W>(words, choice, out) {
            return (encoding::DECIMAL, needs);
        }
    }
    if let Some((bits, base)) = narrow_codes {
        let k = bits.div_ceil(8).max(1);
        if 8 * k - bits >= 3 || (W == 1 && bits < 8 && pack_instead(vals, bits)) {
            // At least 3 of 8k bits would be zero in every code, or the codec could not save
            // much more than the zero bits: pack them, unless the codec shrinks byte-wide
            // codes well below the packed size (clustered or repeating values: departure
            // times, flight numbers).
            let packed = (words.len() * bits).div_ceil(8);
            let start = out.len();
            if k < W {
                encode_for::<W>(words, k, base, out);
                if codec_beats(choice.codec, &out[start + 2 + W..], packed) {
                    return (encoding::FOR, 1);
                }
            } else {
                out.push(encoding::PLAIN);
                push_shuffled(W, vals, out);
                if codec_beats(choice.codec, &out[start + 1..], packed) {
                    return (encoding::PLAIN, 1);
                }
            }
            out.truncate(start);
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
    if !matches!(kind, Kind::Int { .. }) && W >= 4 && encode_wide_dict::<W>(words, out) {
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
    use kompakt::codec::{MIN_ENTROPY_SAVING, MIN_SAVING, SAMPLES};
    if entropy_bits(codes) < bits as f64 * (1.0 - MIN_ENTROPY_SAVING) {
        return false;
    }
    let lz4 = kompakt::Codec::Lz4 { acceleration: 1 };
    trial_fraction(lz4, codes, SAMPLES).is_some_and(|f| f > 1.0 - MIN_SAVING)
}

/// Bits of order-0 entropy a byte of `codes` holds, from samples' histograms.
fn entropy_bits(codes: &[u8]) -> f64 {
    use kompakt::codec::{entropy_saving_bound, SAMPLES};
    8.0 * (1.0 - entropy_saving_bound(codes, SAMPLES))
}

/// The fraction of its size `codec` leaves of up to `samples` samples of `data` (trial
/// compressions, [`kompakt::codec::probe`]), with this thread's compressor; `None` when a trial
/// fails.
pub(crate) fn trial_fraction(codec: kompakt::Codec, data: &[u8], samples: usize) -> Option<f64> {
    use kompakt::codec::{probe, Compressor};
    thread_local! {
        static TRIAL: std::cell::RefCell<(Compressor, Vec<u8>)> = std::cell::RefCell::new((Compressor::new(), Vec::new()));
    }
    TRIAL.with(|t| {
        let (compressor, scratch) = &mut *t.borrow_mut();
        probe(compressor, codec, data, samples, scratch)
            .ok()
            .map(|r| r.fraction())
    })
}

/// Whether `codec` is expected to store byte-wide `codes` in fewer bytes than the same codes
/// take bit-packed (`packed`), stored raw or through the codec, whichever is smaller: trial
/// compressions of samples of both. Both decode at about the same speed, so no margin. The
/// writer decides the same way whether a bit-packed page goes through the codec.
fn bytes_beat_packed(codec: Option<kompakt::Codec>, codes: &[u8], packed: &[u8]) -> bool {
    // Two samples each: it runs on every page of narrow integers (hours, minutes, codes).
    const TRIALS: usize = 2;
    let Some(codec) = trial_stand_in(codec) else {
        return false;
    };
    // What the writer does with a bit-packed page: the codec only when its byte histogram
    // shows something to gain, else raw.
    use kompakt::codec::{entropy_saving_bound, MIN_ENTROPY_SAVING, SAMPLES};
    let through_codec = entropy_saving_bound(packed, SAMPLES) >= MIN_ENTROPY_SAVING;
    let packed_best = match through_codec {
        true => trial_fraction(codec, packed, TRIALS).map_or(1.0, |f| f.min(1.0)),
        false => 1.0,
    } * packed.len() as f64;
    trial_fraction(codec, codes, TRIALS).is_some_and(|f| f * (codes.len() as f64) < packed_best)
}

/// A fast stand-in of the same family as `codec` for trial compressions (`None`: no codec):
/// slow levels would cost their time on every trial, and estimate only a little better.
fn trial_stand_in(codec: Option<kompakt::Codec>) -> Option<kompakt::Codec> {
    use kompakt::Codec;
    Some(match codec {
        None | Some(Codec::None) => return None,
        Some(Codec::Zstd { level }) => Codec::Zstd { level: level.min(3) },
        Some(Codec::Lz4Hc { .. }) => Codec::Lz4 { acceleration: 1 },
        Some(Codec::Gzip { level }) => Codec::Gzip { level: level.min(3) },
        Some(Codec::Zlib { level }) => Codec::Zlib { level: level.min(3) },
        Some(c) => c,
    })
}

/// Whether `codec` is expected to store `codes` in under 90 % of `packed` bytes. Uniform
/// codes are ruled out cheaply (their byte histograms leave an entropy coder too little, and
/// LZ4 finds no repeats), the rest by trial compressions of samples with the codec.
fn codec_beats(codec: Option<kompakt::Codec>, codes: &[u8], packed: usize) -> bool {
    use kompakt::codec::{entropy_saving_bound, MIN_SAVING, SAMPLES};
    use kompakt::Codec;
    const TRIALS: usize = 4;
    let Some(codec) = trial_stand_in(codec) else {
        return false;
    };
    let target = 0.9 * packed as f64;
    let entropy_floor = (1.0 - entropy_saving_bound(codes, SAMPLES)) * codes.len() as f64;
    if entropy_floor >= target {
        match trial_fraction(Codec::Lz4 { acceleration: 1 }, codes, SAMPLES) {
            Some(f) if f <= 1.0 - MIN_SAVING => {}
            _ => return false,
        }
    }
    trial_fraction(codec, codes, TRIALS).is_some_and(|f| f * (codes.len() as f64) < target)
}

/// The largest factor common to every value's offset from `base` (the smallest value), if it
/// is [`MIN_FACTOR`] or more; stops at the first value that leaves none.
fn common_factor<const W: usize>(words: &[[u8; W]], base: u64) -> Option<u64> {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let mut g = 0u64;
    for w in words {
        let d = load::<W>(w).wrapping_sub(base) & mask;
        // Zero (the minimum itself) is a multiple of every factor.
        if d != 0 && (g == 0 || !d.is_multiple_of(g)) {
            g = gcd(g, d);
            if g < MIN_FACTOR {
                return None;
            }
        }
    }
    // A factor of 2 or 3 saves a bit or two of codes the codec mostly finds anyway, and would
    // make the file need table layout 3.
    (g >= MIN_FACTOR).then_some(g)
}

/// Smallest common factor a scaled page is written for.
const MIN_FACTOR: u64 = 4;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A scaled page: the base, the factor, then the quotients as a nested page of values.
fn encode_scaled<const W: usize>(
    words: &[[u8; W]],
    base: u64,
    factor: u64,
    choice: Choice,
    out: &mut Vec<u8>,
) -> (u8, u16) {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    out.push(encoding::SCALED);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    out.extend_from_slice(&factor.to_le_bytes()[..W]);
    let mut quotients = vec![0u8; words.len() * W];
    for (q, w) in quotients.as_chunks_mut::<W>().0.iter_mut().zip(words) {
        store::<W>((load::<W>(w).wrapping_sub(base) & mask) / factor, q);
    }
    let inner = Choice {
        scaled: false,
        decimal: false,
        ..choice
    };
    let (_, needs) = choose_words::<W>(&quotients, Kind::Int { signed: false }, inner, out);
    (encoding::SCALED, needs.max(3))
}

/// Values sampled to choose a decimal page's power of ten.
const DECIMAL_SAMPLE: usize = 64;
/// Most exceptions a decimal page may carry, as a fraction of its rows (1/32): each costs
/// 4 + W bytes, and more of them mean the floats are not decimals.
const MAX_DECIMAL_EXCEPTIONS_SHIFT: u32 = 5;

/// The code of `v` at power `e`, if `v` is exactly that code divided by 10^e.
#[inline]
fn decimal_code<const W: usize>(bits: u64, e: u8) -> Option<u64> {
    if W == 8 {
        let v = f64::from_bits(bits);
        let scaled = (v * super::POW10_F64[e as usize]).round();
        // In range for i64 (NaN is not).
        if scaled.is_nan() || scaled.abs() >= 9.0e18 {
            return None;
        }
        let code = scaled as i64 as u64;
        (super::decimal_value::<8>(code, e) == bits).then_some(code)
    } else {
        let v = f32::from_bits(bits as u32);
        let scaled = (v * super::POW10_F32[e as usize]).round();
        if scaled.is_nan() || scaled.abs() >= 2.0e9 {
            return None;
        }
        let code = u64::from(scaled as i32 as u32);
        (super::decimal_value::<4>(code, e) == bits).then_some(code)
    }
}

/// A decimal page when the floats are decimals of one power of ten, all but a few: the power
/// that fits most of a sample (the smallest such), the codes as a nested page of integers,
/// then the exceptions. Returns the layout it needs, or `None` (nothing written) when the
/// floats are not decimals.
fn encode_decimal<const W: usize>(words: &[[u8; W]], choice: Choice, out: &mut Vec<u8>) -> Option<u16> {
    let n = words.len();
    let most = if W == 8 {
        super::MAX_DECIMAL_EXP_F64
    } else {
        super::MAX_DECIMAL_EXP_F32
    };
    // Evenly spread, jittered so that a stride in the data does not choose for all.
    let step = (n / DECIMAL_SAMPLE).max(1);
    let sample: Vec<u64> = (0..n.min(DECIMAL_SAMPLE))
        .map(|j| load::<W>(&words[(j * step + j * 37 % step).min(n - 1)]))
        .collect();
    // The smallest power that most of the sample fits: the narrowest codes. A few values with
    // more decimals (a computed 0.1 + 0.2) are exceptions, not a reason for 10^17.
    let fits = |e: u8| sample.iter().filter(|&&b| decimal_code::<W>(b, e).is_some()).count();
    let mut best_e = (0..=most).find(|&e| fits(e) * 8 >= sample.len() * 7)?;
    // And codes narrower than the floats by 16 bits (float32: 8): with 16 or 17 digits, most
    // doubles of modest size are some integer over 10^16 (a third is 3333333333333333 / 10^16),
    // which would cost a division per value to save nothing.
    let spare = if W == 8 { 16 } else { 8 };
    let (lo, hi) = sample
        .iter()
        .filter_map(|&b| decimal_code::<W>(b, best_e))
        .map(|c| if W == 8 { c as i64 } else { i64::from(c as u32 as i32) })
        .fold((i64::MAX, i64::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let width = 64 - (hi.wrapping_sub(lo) as u64).leading_zeros() as usize;
    if width + spare > 8 * W {
        return None;
    }
    // Raising the power by d widens the codes by about 3.33 d bits: only while they stay
    // narrow.
    let sampled_e = best_e;
    let can_raise_to = move |e: u8| width + (u32::from(e - sampled_e) * 10).div_ceil(3) as usize + spare <= 8 * W;
    let max_exceptions = n >> MAX_DECIMAL_EXCEPTIONS_SHIFT;
    let mut codes = vec![0u8; n * W];
    let mut positions: Vec<u8> = Vec::new();
    let mut exceptions: Vec<u8> = Vec::new();
    // A value the sample did not foresee (more decimals) may raise the power, twice at most;
    // when the raised power leaves too many exceptions, the sampled one is tried once more
    // with no raises, that value an exception.
    let mut raises = 0;
    'power: loop {
        positions.clear();
        exceptions.clear();
        let mut last_code = None;
        for (i, (c, w)) in codes.as_chunks_mut::<W>().0.iter_mut().zip(words).enumerate() {
            let bits = load::<W>(w);
            match decimal_code::<W>(bits, best_e) {
                Some(code) => last_code = Some(code),
                None => {
                    if raises < 2 {
                        if let Some(e) = (best_e + 1..=most)
                            .take_while(|&e| can_raise_to(e))
                            .find(|&e| decimal_code::<W>(bits, e).is_some())
                        {
                            (best_e, raises) = (e, raises + 1);
                            continue 'power;
                        }
                    }
                    if exceptions.len() / W == max_exceptions {
                        if best_e != sampled_e {
                            (best_e, raises) = (sampled_e, 2);
                            continue 'power;
                        }
                        return None;
                    }
                    positions.extend_from_slice(&(i as u32).to_le_bytes());
                    exceptions.extend_from_slice(w);
                }
            }
            // An exception's slot repeats the code before it, so that it breaks no run or
            // range (leading ones are given the first code below).
            store::<W>(last_code.unwrap_or(0), c);
        }
        // Leading exceptions take the first code, not 0, which could widen the range.
        let leading = positions
            .as_chunks::<4>()
            .0
            .iter()
            .enumerate()
            .take_while(|(k, p)| u32::from_le_bytes(**p) as usize == *k)
            .count();
        if leading > 0 && leading < n {
            let first: [u8; W] = codes.as_chunks::<W>().0[leading];
            codes.as_chunks_mut::<W>().0[..leading].fill(first);
        }
        break;
    }
    out.push(encoding::DECIMAL);
    out.push(best_e);
    let inner = Choice {
        decimal: false,
        ..choice
    };
    let (_, needs) = choose_words::<W>(&codes, Kind::Int { signed: true }, inner, out);
    out.extend_from_slice(&((exceptions.len() / W) as u32).to_le_bytes());
    out.extend_from_slice(&positions);
    out.extend_from_slice(&exceptions);
    Some(needs.max(3))
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
    for p in pieces {
        let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
        for pair in offsets.as_chunks::<OW>().0.windows(2) {
            let len = load::<OW>(&pair[1]) - load::<OW>(&pair[0]);
            lengths.extend_from_slice(&len.to_le_bytes()[..OW]);
        }
    }
    // A page cut from one batch (the usual case) is read where it lies, not gathered into a
    // buffer first (a pass over every string byte); pieces of several batches are joined.
    let data = super::symbols::string_bytes::<OW>(pieces);
    if let Some(table) = cx.symbols.take() {
        out.push(encoding::SYMBOLS);
        encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        table.write(out);
        let codes = table.compress(&data);
        out.extend_from_slice(&(codes.len() as u64).to_le_bytes());
        out.extend_from_slice(&codes);
        cx.layout = cx.layout.max(5);
        return encoding::SYMBOLS;
    }
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
    // Values that repeat within the page, at most half of them distinct (aircraft tail
    // numbers: about 600 distinct in a day's 1,000 flights, 3,000 in a page's 16,384). Unique
    // values (URLs, ids) stop after PREFIX rows when over 3/4 of them are distinct (a shorter
    // prefix misses tail numbers: a morning's first 256 flights are nearly all different
    // aircraft), and values over half distinct after 4 * PREFIX.
    const PREFIX: usize = 1024;
    if !repeats_likely(n, value) {
        return None;
    }
    let limit = MAX_STRING_DICT.min(n / 2);
    let mut ids: HashMap<&[u8], u32, BuildFx> = HashMap::with_capacity_and_hasher(256, BuildFx);
    let mut order: Vec<usize> = Vec::new();
    let mut codes: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n {
        let next = ids.len() as u32;
        let id = *ids.entry(value(i)).or_insert_with(|| {
            order.push(i);
            next
        });
        let seen = i + 1;
        if ids.len() > limit
            || (ids.len() * 4 > seen * 3 && seen >= PREFIX.min(n / 4))
            || (ids.len() * 2 > seen && seen >= 4 * PREFIX)
        {
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

/// Whether a page of `n` values (`value(i)`) may hold at most about n/2 distinct ones, from
/// the repeats in a sample of rows spread over the page: s values drawn from d equally common
/// ones repeat about s²/(2d) times, so at d = n/2, s²/n times (9 in a page of 16,384 rows;
/// tail numbers, d ≈ 3,000: 25); unique values (ids, URLs) about half that. 384 hashes
/// instead of the 1024 a prefix needs to tell them apart, on the pages where it matters.
pub(crate) fn repeats_likely<'a>(n: usize, value: impl Fn(usize) -> &'a [u8]) -> bool {
    const SAMPLE: usize = 384;
    // Small pages are hashed whole (the filter would be noisy there, and they cost little).
    if n < 8192 {
        return true;
    }
    let step = n / SAMPLE;
    let mut seen: std::collections::HashSet<&[u8], BuildFx> =
        std::collections::HashSet::with_capacity_and_hasher(SAMPLE, BuildFx);
    let repeats = (0..SAMPLE).filter(|&j| !seen.insert(value(j * step))).count();
    repeats * n >= SAMPLE * SAMPLE
}

/// FxHash-style hasher: string keys of a page dictionary need speed, not DoS resistance (the
/// dictionary is bounded and built by the writer from its own data).
#[derive(Default, Clone, Copy)]
pub(crate) struct BuildFx;

impl std::hash::BuildHasher for BuildFx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

pub(crate) struct FxHasher(u64);

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
