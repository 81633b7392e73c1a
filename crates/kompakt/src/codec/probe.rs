//! Cheap trial compressions of samples: detect incompressible blocks before burning CPU on them,
//! and let `auto` compare filters and codecs.

use super::{Codec, Compressor};
use crate::error::Result;

/// Bytes per sample; LZ4 needs a few KiB of history to find matches.
const SAMPLE_LEN: usize = 8 * 1024;
/// Samples taken from a block (spread evenly across it).
const SAMPLES: usize = 8;
/// A probe whose samples shrink by less than this fraction calls the block incompressible.
const MIN_SAVING: f64 = 0.03;

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

/// Compresses evenly spaced samples of `data` with `codec`; `scratch` is reused between calls.
pub fn probe(compressor: &mut Compressor, codec: Codec, data: &[u8], scratch: &mut Vec<u8>) -> Result<ProbeResult> {
    let mut result = ProbeResult {
        sampled: 0,
        compressed: 0,
    };
    let sample_len = SAMPLE_LEN.min(data.len());
    if sample_len == 0 {
        return Ok(result);
    }
    let samples = if data.len() <= SAMPLE_LEN * SAMPLES {
        data.len() / sample_len
    } else {
        SAMPLES
    };
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

/// True when samples of `data` do not shrink meaningfully under fast LZ4.
///
/// Costs about 1/16 of a block's bytes through LZ4 on a 1 MiB block, and LZ4 skips ahead quickly
/// on random data, so the check itself is near memcpy speed.
pub fn looks_incompressible(compressor: &mut Compressor, data: &[u8], scratch: &mut Vec<u8>) -> Result<bool> {
    let r = probe(compressor, Codec::Lz4 { acceleration: 1 }, data, scratch)?;
    Ok(r.sampled > 0 && r.fraction() > 1.0 - MIN_SAVING)
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
        assert!(looks_incompressible(&mut c, &noise(1 << 20), &mut s).unwrap());
        let text = b"the quick brown fox jumps over the lazy dog ".repeat(30_000);
        assert!(!looks_incompressible(&mut c, &text, &mut s).unwrap());
        assert!(!looks_incompressible(&mut c, &[], &mut s).unwrap());
        assert!(looks_incompressible(&mut c, &noise(100), &mut s).unwrap());
    }
}
