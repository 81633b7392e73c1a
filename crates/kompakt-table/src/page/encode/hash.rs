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
