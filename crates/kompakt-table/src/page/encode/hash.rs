//! The hasher of the writer's dictionaries.

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
        self.write_u64(i as u64);
    }
    // Numbers as keys: one folded multiply (both halves of the 128-bit product), not a hash of
    // 8 bytes. A plain multiply leaves the low bits, which pick the bucket, depending on the
    // key's low bits only: doubles such as 12.5 have all of theirs zero, and a page of them
    // went to one bucket (a write of AER's CPS tables 3.9x Parquet's time).
    fn write_u64(&mut self, i: u64) {
        let product = u128::from(self.0 ^ i) * 0x51_7c_c1_b7_27_22_0a_95;
        self.0 = (product as u64) ^ (product >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A dictionary's key: bytes whose equality is a few word compares when they are short, as
/// most keys are (names, codes, versions), where the slices' `==` calls `memcmp`: a value
/// found again is compared once, and on a page of 100,000 short strings those calls were
/// half of its encoding (crates.io's index records, dependencies' names and requirements).
/// It hashes as its slice does, so that it looks up keys stored as boxed slices too.
#[derive(Clone, Copy)]
pub(crate) struct ShortKey<'a>(pub &'a [u8]);

impl PartialEq for ShortKey<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0, other.0);
        let n = a.len();
        if n != b.len() {
            return false;
        }
        // Two overlapping loads cover every length from 4 to 16 (and 1 to 3 in bytes).
        let u32_at = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        match n {
            0 => true,
            1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
            4..=8 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
            9..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
            _ => a == b,
        }
    }
}

impl Eq for ShortKey<'_> {}

impl std::hash::Hash for ShortKey<'_> {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl hashbrown::Equivalent<Box<[u8]>> for ShortKey<'_> {
    #[inline]
    fn equivalent(&self, key: &Box<[u8]>) -> bool {
        *self == ShortKey(key)
    }
}

#[cfg(test)]
mod tests {
    use super::ShortKey;
    use proptest::prelude::*;
    use std::hash::BuildHasher;

    proptest! {
        /// Short keys are equal exactly when their bytes are, at every length and wherever
        /// two keys of one length differ.
        #[test]
        fn short_keys_compare_as_their_bytes(
            a in prop::collection::vec(any::<u8>(), 0..40),
            bit in 0u8..8,
            other in prop::collection::vec(any::<u8>(), 0..40),
        ) {
            prop_assert!(ShortKey(&a) == ShortKey(&a.clone()));
            let boxed: Box<[u8]> = a.clone().into();
            prop_assert_eq!(super::BuildFx.hash_one(ShortKey(&a)), super::BuildFx.hash_one(&boxed));
            prop_assert!(hashbrown::Equivalent::equivalent(&ShortKey(&a), &boxed));
            prop_assert_eq!(ShortKey(&a) == ShortKey(&other), a == other);
            for i in 0..a.len() {
                let mut b = a.clone();
                b[i] ^= 1 << bit;
                prop_assert!(ShortKey(&a) != ShortKey(&b), "byte {} of {}", i, a.len());
            }
        }
    }
}
