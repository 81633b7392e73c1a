//! Filters: reversible transforms that make typed data compress better.
//!
//! - **shuffle** groups the k-th byte of every element together, so the slowly changing high
//!   bytes of numbers form long runs (the blosc idea);
//! - **delta** replaces each little-endian integer by its difference from the previous one, so
//!   sorted ids and timestamps become small numbers (then shuffled).
//!
//! A block records the filters it used as a flag byte ([`FilterSet`]) plus the element size.

mod delta;
mod shuffle;

pub use delta::{delta_decode, delta_encode};
pub(crate) use shuffle::Stores;
pub use shuffle::{shuffle, unshuffle};

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The filters applied to one block, as stored (bit 0: shuffle, bit 1: delta; delta runs first
/// when encoding and last when decoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FilterSet(u8);

impl FilterSet {
    /// No filter.
    pub const NONE: FilterSet = FilterSet(0);
    /// Byte shuffle.
    pub const SHUFFLE: FilterSet = FilterSet(1);
    /// Delta alone.
    pub const DELTA: FilterSet = FilterSet(2);
    /// Delta, then byte shuffle.
    pub const DELTA_SHUFFLE: FilterSet = FilterSet(3);
    const KNOWN_BITS: u8 = 0b11;

    /// Parses the stored byte; unknown bits (filters of a newer version) give `None`.
    pub fn from_bits(bits: u8) -> Option<FilterSet> {
        (bits & !Self::KNOWN_BITS == 0).then_some(FilterSet(bits))
    }

    /// The stored byte.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// True when byte shuffle is applied.
    pub fn shuffles(self) -> bool {
        self.0 & 1 != 0
    }

    /// True when delta is applied.
    pub fn deltas(self) -> bool {
        self.0 & 2 != 0
    }

    /// True when no filter is applied.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Checks that this filter set can be applied to elements of `typesize` bytes.
    pub fn supports(self, typesize: u8) -> bool {
        (!self.shuffles() || typesize >= 2) && (!self.deltas() || matches!(typesize, 1 | 2 | 4 | 8))
    }

    /// Applies the filters to `src`, writing into `dst` (resized to `src.len()`);
    /// `tmp` is scratch space for a two-step pipeline.
    pub fn encode(self, typesize: u8, src: &[u8], dst: &mut Vec<u8>, tmp: &mut Vec<u8>) {
        dst.resize(src.len(), 0);
        let ts = usize::from(typesize);
        match (self.deltas(), self.shuffles()) {
            (false, false) => dst.copy_from_slice(src),
            (false, true) => shuffle(ts, src, dst),
            (true, false) => delta_encode(ts, src, dst),
            (true, true) => {
                tmp.resize(src.len(), 0);
                delta_encode(ts, src, tmp);
                shuffle(ts, tmp, dst);
            }
        }
    }

    /// Undoes [`encode`](Self::encode): `src` holds filtered bytes, `dst` receives the original.
    pub fn decode(self, typesize: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        self.decode_to(typesize, src, dst, Stores::Cached)
    }

    /// [`decode`](Self::decode), writing `dst` with `stores`.
    pub(crate) fn decode_to(self, typesize: u8, src: &[u8], dst: &mut [u8], stores: Stores) -> Result<()> {
        if src.len() != dst.len() || !self.supports(typesize) {
            return Err(Error::corrupt(
                "block filters",
                0,
                format!("filters {self} cannot apply to element size {typesize}"),
            ));
        }
        let ts = usize::from(typesize);
        if self.shuffles() && self.deltas() && ts == 8 {
            shuffle::unshuffle8_undelta(src, dst, stores);
            return Ok(());
        }
        if self.shuffles() {
            shuffle::unshuffle_to(ts, src, dst, stores);
        } else {
            dst.copy_from_slice(src);
        }
        if self.deltas() {
            delta_decode(ts, dst);
        }
        Ok(())
    }
}

impl fmt::Display for FilterSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.deltas(), self.shuffles()) {
            (false, false) => "none",
            (false, true) => "shuffle",
            (true, false) => "delta",
            (true, true) => "delta+shuffle",
        })
    }
}

/// The filter a user asks for; applied only when the element size allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FilterSpec {
    /// Never filter.
    None,
    /// Byte shuffle when the element size is 2 or more (the default).
    #[default]
    Shuffle,
    /// Delta then shuffle, for integer columns (element size 1, 2, 4 or 8).
    Delta,
    /// Chosen per block from LZ4 trials on samples: none, shuffle or delta+shuffle (for mixed
    /// data such as the buffers of a saved Python object).
    Auto,
}

impl FilterSpec {
    /// The filters actually applied to elements of `typesize` bytes.
    pub fn resolve(self, typesize: u8) -> FilterSet {
        let wanted = match self {
            FilterSpec::None => FilterSet::NONE,
            FilterSpec::Shuffle => FilterSet::SHUFFLE,
            FilterSpec::Delta if typesize == 1 => FilterSet::DELTA,
            FilterSpec::Delta => FilterSet::DELTA_SHUFFLE,
            // The fallback; the encoder chooses per block.
            FilterSpec::Auto => FilterSet::SHUFFLE,
        };
        if wanted.supports(typesize) {
            wanted
        } else if FilterSet::SHUFFLE.supports(typesize) && self != FilterSpec::None {
            FilterSet::SHUFFLE
        } else {
            FilterSet::NONE
        }
    }
}

impl FromStr for FilterSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(FilterSpec::None),
            "shuffle" => Ok(FilterSpec::Shuffle),
            "delta" => Ok(FilterSpec::Delta),
            "auto" => Ok(FilterSpec::Auto),
            _ => Err(Error::invalid("filter", s, "one of: none, shuffle, delta, auto")),
        }
    }
}

impl fmt::Display for FilterSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FilterSpec::None => "none",
            FilterSpec::Shuffle => "shuffle",
            FilterSpec::Delta => "delta",
            FilterSpec::Auto => "auto",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_filter_round_trips(data in proptest::collection::vec(any::<u8>(), 0..3000),
                                    ts in prop::sample::select(vec![1u8, 2, 3, 4, 7, 8, 16, 255]),
                                    bits in 0u8..4) {
            let f = FilterSet::from_bits(bits).unwrap();
            prop_assume!(f.supports(ts));
            let (mut enc, mut tmp) = (Vec::new(), Vec::new());
            f.encode(ts, &data, &mut enc, &mut tmp);
            let mut dec = vec![0u8; data.len()];
            f.decode(ts, &enc, &mut dec).unwrap();
            prop_assert_eq!(dec, data);
        }
    }

    #[test]
    fn unknown_bits_and_bad_sizes_are_rejected() {
        assert!(FilterSet::from_bits(4).is_none());
        assert!(FilterSet::DELTA.decode(3, &[0; 6], &mut [0; 6]).is_err());
        assert!(FilterSet::SHUFFLE.decode(1, &[0; 6], &mut [0; 6]).is_err());
        assert!(FilterSet::NONE.decode(1, &[0; 6], &mut [0; 5]).is_err());
    }

    #[test]
    fn resolve_falls_back_when_the_size_does_not_fit() {
        assert_eq!(FilterSpec::Shuffle.resolve(1), FilterSet::NONE);
        assert_eq!(FilterSpec::Shuffle.resolve(8), FilterSet::SHUFFLE);
        assert_eq!(FilterSpec::Delta.resolve(8), FilterSet::DELTA_SHUFFLE);
        assert_eq!(FilterSpec::Delta.resolve(3), FilterSet::SHUFFLE);
        assert_eq!(FilterSpec::Delta.resolve(1), FilterSet::DELTA);
        assert_eq!(FilterSpec::None.resolve(8), FilterSet::NONE);
    }
}
