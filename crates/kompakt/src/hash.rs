//! XXH3, the one hash of the format: block, footer and header checksums, and content hashes.
//!
//! Computed with twox-hash, which picks AVX2 or SSE2 when it runs. The checksum of a block
//! stored raw covers every byte of it, so on incompressible data the hash runs as often as
//! the copy; an implementation limited to the build target's SSE2 took a third of the time.

use twox_hash::{XxHash3_128, XxHash3_64};

/// XXH3-64 (seed 0, default secret) of `bytes`.
#[inline]
pub fn xxh3_64(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot(bytes)
}

/// XXH3-64 of the concatenation of `parts`, without joining them.
pub fn xxh3_64_parts(parts: &[&[u8]]) -> u64 {
    match parts {
        [] => xxh3_64(&[]),
        [one] => xxh3_64(one),
        _ => {
            let mut h = XxHash3_64::new();
            for p in parts {
                std::hash::Hasher::write(&mut h, p);
            }
            std::hash::Hasher::finish(&h)
        }
    }
}

/// XXH3-128 (seed 0, default secret) of `bytes`.
#[inline]
pub fn xxh3_128(bytes: &[u8]) -> u128 {
    XxHash3_128::oneshot(bytes)
}

/// A streaming XXH3-128: the same value as [`xxh3_128`] of everything written.
#[derive(Clone, Default)]
pub struct Xxh3_128(XxHash3_128);

impl Xxh3_128 {
    /// A hasher that has seen nothing.
    pub fn new() -> Self {
        Self(XxHash3_128::new())
    }

    /// Feeds more bytes.
    #[inline]
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    /// The hash of everything fed so far.
    pub fn digest(&self) -> u128 {
        self.0.finish_128()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The format is defined by XXH3 itself: check this implementation against another one
    // (xxhash-rust, a test-only dependency), at the lengths where XXH3 changes code paths.
    #[test]
    fn agrees_with_an_independent_implementation() {
        let data: Vec<u8> = (0..(3usize << 20) + 77)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let mut lengths: Vec<usize> = (0..=300).collect();
        lengths.extend([
            1023,
            1024,
            1025,
            4095,
            4096,
            65_537,
            1 << 20,
            (1 << 20) + 13,
            data.len(),
        ]);
        for n in lengths {
            let d = &data[..n];
            assert_eq!(xxh3_64(d), xxhash_rust::xxh3::xxh3_64(d), "64-bit, {n} bytes");
            assert_eq!(xxh3_128(d), xxhash_rust::xxh3::xxh3_128(d), "128-bit, {n} bytes");
        }
    }

    proptest! {
        #[test]
        fn split_input_hashes_like_whole_input(data in proptest::collection::vec(any::<u8>(), 0..5000), cuts in proptest::collection::vec(0usize..5000, 0..4)) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut at = 0;
            for c in cuts.into_iter().chain([data.len()]) {
                parts.push(&data[at..c]);
                at = c;
            }
            let mut h = Xxh3_128::new();
            for p in &parts {
                h.update(p);
            }
            prop_assert_eq!(h.digest(), xxh3_128(&data));
            prop_assert_eq!(xxh3_64_parts(&parts), xxh3_64(&data));
        }
    }
}
