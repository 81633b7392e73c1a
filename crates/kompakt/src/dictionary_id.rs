//! [`DictionaryId`], the name of a zstd dictionary.
//!
//! It is its own module, below both `codec` (which makes and finds dictionaries) and `error`
//! (whose `Error::MissingDictionary` names the one a block needs), so that neither of the two
//! depends on the other for it. Its public path is `kompakt::codec::DictionaryId`.

use std::fmt;

/// Names a dictionary: XXH3-64 of its bytes, shown as 16 hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DictionaryId(pub u64);

impl fmt::Display for DictionaryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
