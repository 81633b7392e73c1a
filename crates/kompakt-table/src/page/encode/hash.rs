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
    // Numbers as keys (shared dictionaries of numbers): one multiply, not a hash of 8 bytes.
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
