//! Cheap trial compressions of samples: detect incompressible blocks before burning CPU on them,
//! and let `auto` compare filters and codecs.

use super::{Codec, Compressor};
use crate::error::Result;

/// Bytes per sample; LZ4 needs a few KiB of history to find matches.
const SAMPLE_LEN: usize = 8 * 1024;
/// A probe whose samples shrink by less than this fraction calls the block incompressible.
pub const MIN_SAVING: f64 = 0.03;
/// When LZ4 finds no repeats, an entropy coder must save this much to be worth its time: it
/// costs 10-15x a memcpy for, on random float64, a 6 % gain that shuffle does far better.
pub const MIN_ENTROPY_SAVING: f64 = 0.10;

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
    let mut result = ProbeResult {
        sampled: 0,
        compressed: 0,
    };
    let sample_len = SAMPLE_LEN.min(data.len());
    if sample_len == 0 || max_samples == 0 {
        return Ok(result);
    }
    let samples = (data.len() / sample_len).min(max_samples);
    let stride = if samples > 1 {
        (data.len() - sample_len) / (samples - 1)
    } else {
        0
    };
    scratch.resize(sample_len, 0);
    for i in 0..samples {
        let sample = &data[i * stride..i * stride + sample_len];
        let n = compressor.compress_into(codec, sample, scratch)?.unwrap_or(sample_len);
        result.sampled += sample_len;
        result.compressed += n.min(sample_len);
    }
    Ok(result)
}

/// Samples [`looks_incompressible`] and `auto` take from a block.
pub const SAMPLES: usize = 8;
/// Samples of the short entropy-coder trial that follows an LZ4 trial that found nothing.
pub const ENTROPY_SAMPLES: usize = 2;

/// True when samples of `data` do not shrink meaningfully.
///
/// Fast LZ4 looks for repeats first (at least 3 % saved): it costs about 1/16 of a 1 MiB block
/// and skips quickly over random data. When it finds none and `entropy_coded` (the codec has an
/// entropy stage, like zstd and deflate), two samples also go through ZSTD level 1, which
/// shrinks data with skewed byte frequencies (hex, base64) that has no repeats for LZ4 to find;
/// that must save at least 10 %.
pub fn looks_incompressible(
    compressor: &mut Compressor,
    data: &[u8],
    entropy_coded: bool,
    scratch: &mut Vec<u8>,
) -> Result<bool> {
    const LZ4: Codec = Codec::Lz4 { acceleration: 1 };
    // One sample first: most compressible blocks show it at once, and then the probe costs
    // 1/128 of a 1 MiB block instead of 1/16.
    let first = probe(compressor, LZ4, data, 1, scratch)?;
    if first.sampled > 0 && first.fraction() < 0.9 {
        return Ok(false);
    }
    let r = probe(compressor, LZ4, data, SAMPLES, scratch)?;
    if r.sampled == 0 || r.fraction() <= 1.0 - MIN_SAVING {
        return Ok(false);
    }
    if !entropy_coded {
        return Ok(true);
    }
    let z = probe(compressor, Codec::Zstd { level: 1 }, data, ENTROPY_SAMPLES, scratch)?;
    Ok(z.fraction() > 1.0 - MIN_ENTROPY_SAVING)
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
    fn random_bytes_are_incompressible_and_text_is_not() {
        let mut c = Compressor::new();
        let mut s = Vec::new();
        assert!(looks_incompressible(&mut c, &noise(1 << 20), true, &mut s).unwrap());
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(30_000);
        assert!(!looks_incompressible(&mut c, &text, false, &mut s).unwrap());
        assert!(!looks_incompressible(&mut c, &[], true, &mut s).unwrap());
        assert!(looks_incompressible(&mut c, &noise(100), false, &mut s).unwrap());
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
            looks_incompressible(&mut c, &hex, false, &mut s).unwrap(),
            "LZ4 alone finds nothing"
        );
        assert!(!looks_incompressible(&mut c, &hex, true, &mut s).unwrap());
    }
}
