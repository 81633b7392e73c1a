//! Cheap trial compressions of samples: detect incompressible blocks before burning CPU on them,
//! and let `auto` compare filters and codecs.

use super::{Codec, Compressor};
use crate::error::Result;

/// Bytes per sample; LZ4 needs a few KiB of history to find matches.
pub const SAMPLE_LEN: usize = 8 * 1024;
/// A probe whose samples shrink by less than this fraction calls the block incompressible.
pub const MIN_SAVING: f64 = 0.03;
/// When LZ4 finds no repeats, an entropy coder must save this much to be worth its time: it
/// costs 10-15x a memcpy for, on random float64, a 6 % gain that shuffle does far better.
pub const MIN_ENTROPY_SAVING: f64 = 0.10;

/// With a speed-first codec (LZ4, ZSTD level 1 or less, `auto`), samples must shrink by this
/// much, from repeats or from entropy coding, or the block is stored raw: on data that gains
/// less (random float64 after shuffle gains 12-16 %), decoding costs more time than reading
/// the bytes it saves from a fast disk or the page cache.
pub const FAST_MIN_SAVING: f64 = 0.20;

/// How much trial compressions must save for a block to be compressed rather than stored raw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SavingBar {
    /// Fraction that LZ4 (repeats) must save.
    pub repeats: f64,
    /// Fraction that ZSTD level 1 (entropy coding) must save when LZ4 did not.
    pub entropy: f64,
}

impl SavingBar {
    /// For codecs chosen for ratio: store raw only what really does not compress.
    pub const THOROUGH: SavingBar = SavingBar {
        repeats: MIN_SAVING,
        entropy: MIN_ENTROPY_SAVING,
    };
    /// For speed-first codecs: compress only what gains at least [`FAST_MIN_SAVING`].
    pub const FAST: SavingBar = SavingBar {
        repeats: FAST_MIN_SAVING,
        entropy: FAST_MIN_SAVING,
    };

    /// The bar for `codec`: FAST for LZ4 and ZSTD levels up to 1, THOROUGH for the rest.
    pub fn for_codec(codec: Codec) -> SavingBar {
        match codec {
            Codec::Lz4 { .. } => SavingBar::FAST,
            Codec::Zstd { level } if level <= 1 => SavingBar::FAST,
            _ => SavingBar::THOROUGH,
        }
    }
}

/// What a trial compression of samples measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeResult {
    /// Bytes sampled.
    pub sampled: usize,
    /// Their compressed size (a sample that did not shrink counts at its raw size).
    pub compressed: usize,
}

impl ProbeResult {
    /// Compressed size over raw size (1.0 = no gain).
    pub fn fraction(&self) -> f64 {
        if self.sampled == 0 {
            1.0
        } else {
            self.compressed as f64 / self.sampled as f64
        }
    }
}

/// Compresses up to `max_samples` evenly spaced samples of `data` with `codec`; `scratch` is
/// reused between calls.
pub fn probe(
    compressor: &mut Compressor,
    codec: Codec,
    data: &[u8],
    max_samples: usize,
    scratch: &mut Vec<u8>,
) -> Result<ProbeResult> {
    probe_spans(compressor, codec, data, SAMPLE_LEN, max_samples, scratch)
}

/// [`probe`] with samples of `span` bytes: long enough spans keep what a codec finds in a
/// history of that length (LZ4's window is 64 KiB), which 8 KiB samples miss.
pub fn probe_spans(
    compressor: &mut Compressor,
    codec: Codec,
    data: &[u8],
    span: usize,
    max_samples: usize,
    scratch: &mut Vec<u8>,
) -> Result<ProbeResult> {
    let mut result = ProbeResult {
        sampled: 0,
        compressed: 0,
    };
    for sample in samples(data, span, max_samples) {
        scratch.clear();
        let n = compressor
            .compress_append(codec, sample, scratch, sample.len())?
            .unwrap_or(sample.len());
        result.sampled += sample.len();
        result.compressed += n.min(sample.len());
    }
    Ok(result)
}

/// Up to `max_samples` evenly spaced pieces of `span` bytes (all of `data` when shorter).
fn samples(data: &[u8], span: usize, max_samples: usize) -> impl Iterator<Item = &[u8]> {
    let sample_len = span.max(1).min(data.len());
    let count = data.len().checked_div(sample_len).unwrap_or(0).min(max_samples);
    let stride = if count > 1 {
        (data.len() - sample_len) / (count - 1)
    } else {
        0
    };
    (0..count).map(move |i| &data[i * stride..i * stride + sample_len])
}

/// The most that coding bytes one at a time (Huffman, as an entropy coder does with literals)
/// could save on samples of `data`, as a fraction: 1 - (order-0 entropy / 8 bits), each
/// sample's own histogram, averaged over the samples.
///
/// Per sample, because trials compress each sample on its own: samples with different byte
/// ranges (the planes of shuffled data, two halves of a block) each compress well while their
/// pooled histogram looks random. A histogram costs a few microseconds where a zstd trial of
/// the same sample costs tens, and no order-0 coder beats this bound.
pub fn entropy_saving_bound(data: &[u8], max_samples: usize) -> f64 {
    let (mut bits, mut total) = (0.0f64, 0usize);
    for sample in samples(data, SAMPLE_LEN, max_samples) {
        bits += order0_bits(sample);
        total += sample.len();
    }
    if total == 0 {
        return 0.0;
    }
    (1.0 - bits / (8.0 * total as f64)).max(0.0)
}

/// Shannon entropy of the bytes of `sample`, in bits (all bytes together).
fn order0_bits(sample: &[u8]) -> f64 {
    // Four tables, so that runs of one byte value do not serialize on one counter.
    let mut counts = [[0u32; 256]; 4];
    let mut quads = sample.chunks_exact(4);
    for q in &mut quads {
        counts[0][usize::from(q[0])] += 1;
        counts[1][usize::from(q[1])] += 1;
        counts[2][usize::from(q[2])] += 1;
        counts[3][usize::from(q[3])] += 1;
    }
    for &b in quads.remainder() {
        counts[0][usize::from(b)] += 1;
    }
    let n = sample.len() as f64;
    (0..256)
        .map(|v| f64::from(counts[0][v] + counts[1][v] + counts[2][v] + counts[3][v]))
        .filter(|&c| c > 0.0)
        .map(|c| -c * (c / n).log2())
        .sum()
}

/// Samples [`looks_incompressible`] and `auto` take from a block.
pub const SAMPLES: usize = 8;
/// Samples of the short entropy-coder trial that follows an LZ4 trial that found nothing.
pub const ENTROPY_SAMPLES: usize = 2;

/// True when samples of `data` do not shrink by what `bar` asks.
///
/// Fast LZ4 looks for repeats first (`bar.repeats` saved): it costs about 1/16 of a 1 MiB block
/// and skips quickly over random data. When it finds too little and `entropy_coded` (the codec
/// has an entropy stage, like zstd and deflate), two samples also go through ZSTD level 1, which
/// shrinks data with skewed byte frequencies (hex, base64) that has no repeats for LZ4 to find;
/// that must save `bar.entropy`. `shuffled` data (byte planes one after the other) gets eight
/// entropy samples instead of two, so that every plane is seen.
pub fn looks_incompressible(
    compressor: &mut Compressor,
    data: &[u8],
    entropy_coded: bool,
    shuffled: bool,
    bar: SavingBar,
    scratch: &mut Vec<u8>,
) -> Result<bool> {
    const LZ4: Codec = Codec::Lz4 { acceleration: 1 };
    // One sample first: most compressible blocks show it at once, and then the probe costs
    // 1/128 of a 1 MiB block instead of 1/16. A sample that alone clears the bar is enough:
    // 8 KiB give LZ4 little history, so a sample understates what the block saves (on table
    // columns a sample saves 26 %, the whole block 54 %), and asking it for a margin on top
    // sent most table blocks through eight more samples.
    let first = probe(compressor, LZ4, data, 1, scratch)?;
    if first.sampled > 0 && first.fraction() <= 1.0 - bar.repeats {
        return Ok(false);
    }
    let r = probe(compressor, LZ4, data, SAMPLES, scratch)?;
    too_little_saved(compressor, data, r, entropy_coded, shuffled, bar, scratch)
}

/// Given the LZ4 trial `lz4` of `data`, whether the block should be stored raw (running the
/// entropy trial when LZ4 did not clear the bar: two samples, or eight for `shuffled` data,
/// whose byte planes differ too much for two samples to stand for them).
pub fn too_little_saved(
    compressor: &mut Compressor,
    data: &[u8],
    lz4: ProbeResult,
    entropy_coded: bool,
    shuffled: bool,
    bar: SavingBar,
    scratch: &mut Vec<u8>,
) -> Result<bool> {
    if lz4.sampled == 0 || lz4.fraction() <= 1.0 - bar.repeats {
        return Ok(false);
    }
    if !entropy_coded {
        return Ok(true);
    }
    let samples = if shuffled { SAMPLES } else { ENTROPY_SAMPLES };
    if clearly_short(data, lz4, samples, bar.entropy) {
        return Ok(true);
    }
    let z = probe(compressor, Codec::Zstd { level: 1 }, data, samples, scratch)?;
    Ok(z.fraction() > 1.0 - bar.entropy)
}

/// Whether the samples are so far below `entropy_bar` that a zstd trial is not worth running:
/// LZ4 found almost no repeats and even ideal order-0 coding would save under half the bar.
pub fn clearly_short(data: &[u8], lz4: ProbeResult, samples: usize, entropy_bar: f64) -> bool {
    let repeats_saved = 1.0 - lz4.fraction();
    repeats_saved < MIN_SAVING && repeats_saved + entropy_saving_bound(data, samples) < entropy_bar / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize) -> Vec<u8> {
        let mut x = 0x9E3779B97F4A7C15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn spans_are_evenly_spread_and_never_past_the_data() {
        let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let starts = |span, count| -> Vec<(usize, usize)> {
            samples(&data, span, count)
                .map(|s| (s.as_ptr() as usize - data.as_ptr() as usize, s.len()))
                .collect()
        };
        assert_eq!(starts(100, 3), [(0, 100), (450, 100), (900, 100)]);
        assert_eq!(starts(400, 8), [(0, 400), (600, 400)], "no more spans than fit");
        assert_eq!(starts(5000, 2), [(0, 1000)], "data shorter than a span is one sample");
        assert_eq!(starts(0, 2).len(), 2, "a zero span samples single bytes");
        assert!(samples(&[], 10, 4).next().is_none());
        let mut c = Compressor::new();
        let text = b"spans of text compress as the text does; ".repeat(2000);
        let r = probe_spans(
            &mut c,
            Codec::Lz4 { acceleration: 1 },
            &text,
            16 << 10,
            2,
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(r.sampled, 32 << 10);
        assert!(r.fraction() < 0.1, "{r:?}");
    }

    #[test]
    fn random_bytes_are_incompressible_and_text_is_not() {
        let mut c = Compressor::new();
        let mut s = Vec::new();
        assert!(looks_incompressible(&mut c, &noise(1 << 20), true, false, SavingBar::THOROUGH, &mut s).unwrap());
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(30_000);
        assert!(!looks_incompressible(&mut c, &text, false, false, SavingBar::THOROUGH, &mut s).unwrap());
        assert!(!looks_incompressible(&mut c, &[], true, false, SavingBar::THOROUGH, &mut s).unwrap());
        assert!(looks_incompressible(&mut c, &noise(100), false, false, SavingBar::THOROUGH, &mut s).unwrap());
    }

    #[test]
    fn skewed_bytes_without_repeats_are_compressible_for_entropy_coders() {
        // Hex digits of random bytes: no repeats for LZ4, but 4 bits of entropy per byte.
        let hex: Vec<u8> = noise(1 << 19)
            .iter()
            .map(|b| b"0123456789abcdef"[usize::from(b & 15)])
            .collect();
        let mut c = Compressor::new();
        let mut s = Vec::new();
        assert!(
            looks_incompressible(&mut c, &hex, false, false, SavingBar::THOROUGH, &mut s).unwrap(),
            "LZ4 alone finds nothing"
        );
        assert!(!looks_incompressible(&mut c, &hex, true, false, SavingBar::THOROUGH, &mut s).unwrap());
        assert!(!looks_incompressible(&mut c, &hex, true, false, SavingBar::FAST, &mut s).unwrap());
    }

    #[test]
    fn entropy_bound_brackets_what_zstd_saves() {
        let mut c = Compressor::new();
        let mut s = Vec::new();
        assert!(entropy_saving_bound(&noise(1 << 20), SAMPLES) < 0.01);
        assert_eq!(entropy_saving_bound(&[], SAMPLES), 0.0);
        assert!((entropy_saving_bound(&[7u8; 100_000], 2) - 1.0).abs() < 1e-9);
        // Hex digits: 4 of 8 bits; zstd's Huffman stage gets close to the bound, never past it.
        let hex: Vec<u8> = noise(1 << 20)
            .iter()
            .map(|b| b"0123456789abcdef"[usize::from(b & 15)])
            .collect();
        let bound = entropy_saving_bound(&hex, ENTROPY_SAMPLES);
        assert!((bound - 0.5).abs() < 0.01, "{bound}");
        let zstd = 1.0
            - probe(&mut c, Codec::Zstd { level: 1 }, &hex, ENTROPY_SAMPLES, &mut s)
                .unwrap()
                .fraction();
        assert!(zstd <= bound && zstd > bound - 0.05, "zstd saves {zstd}, bound {bound}");
        // Samples that each use a narrow byte range compress although their pooled bytes
        // cover all 256 values: halves of a block in 0..128 and 128..256, say.
        let halves: Vec<u8> = noise(1 << 20)
            .iter()
            .enumerate()
            .map(|(i, b)| if i < 1 << 19 { b & 0x7f } else { b | 0x80 })
            .collect();
        assert!(entropy_saving_bound(&halves, ENTROPY_SAMPLES) > 0.1);
        // Random data skips the zstd trial; hex does not.
        let none = ProbeResult {
            sampled: 10,
            compressed: 10,
        };
        assert!(clearly_short(&noise(1 << 20), none, ENTROPY_SAMPLES, FAST_MIN_SAVING));
        assert!(!clearly_short(&hex, none, ENTROPY_SAMPLES, FAST_MIN_SAVING));
        // Nor does data whose repeats LZ4 already found, whatever its histogram.
        let some = ProbeResult {
            sampled: 10,
            compressed: 9,
        };
        assert!(!clearly_short(&noise(1 << 20), some, ENTROPY_SAMPLES, FAST_MIN_SAVING));
    }

    #[test]
    fn a_first_sample_that_clears_the_bar_decides() {
        // A quarter of the first 8 KiB repeats, the rest is noise: that sample saves 20-30 %
        // (clearing the speed-first bar, not the old margin of 10 points above it), and eight
        // samples would average under the bar. The first sample alone decides, and the
        // codec's own result on the whole block has the last word.
        let mut bytes = b"0123456789abcdef".repeat(120);
        bytes.extend(noise((1 << 20) - bytes.len()));
        let mut c = Compressor::new();
        let mut s = Vec::new();
        let first = probe(&mut c, Codec::Lz4 { acceleration: 1 }, &bytes, 1, &mut s).unwrap();
        assert!((0.7..=0.8).contains(&first.fraction()), "{first:?}");
        let eight = probe(&mut c, Codec::Lz4 { acceleration: 1 }, &bytes, SAMPLES, &mut s).unwrap();
        assert!(eight.fraction() > 1.0 - FAST_MIN_SAVING, "{eight:?}");
        assert!(!looks_incompressible(&mut c, &bytes, true, false, SavingBar::FAST, &mut s).unwrap());
        // Without that first sample, the same noise is incompressible.
        assert!(looks_incompressible(&mut c, &bytes[8192..], true, false, SavingBar::FAST, &mut s).unwrap());
    }

    #[test]
    fn speed_first_codecs_store_small_gains_raw() {
        // 100 equally likely byte values: entropy coding saves ~17 %, repeats nothing.
        let bytes: Vec<u8> = noise(1 << 20).iter().map(|b| b % 100).collect();
        let mut c = Compressor::new();
        let mut s = Vec::new();
        assert!(!looks_incompressible(&mut c, &bytes, true, false, SavingBar::THOROUGH, &mut s).unwrap());
        assert!(looks_incompressible(&mut c, &bytes, true, false, SavingBar::FAST, &mut s).unwrap());
        assert_eq!(SavingBar::for_codec(Codec::Zstd { level: 1 }), SavingBar::FAST);
        assert_eq!(SavingBar::for_codec(Codec::Lz4 { acceleration: 8 }), SavingBar::FAST);
        assert_eq!(SavingBar::for_codec(Codec::Zstd { level: 3 }), SavingBar::THOROUGH);
        assert_eq!(SavingBar::for_codec(Codec::Lz4Hc { level: 9 }), SavingBar::THOROUGH);
    }
}
