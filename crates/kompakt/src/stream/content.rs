//! The content hash of a file: what its streams and metadata hold, not how they were stored.
//!
//! Two files get the same content hash exactly when they decode to the same streams and
//! metadata, whatever codec, filters, block size, thread count or kompakt version wrote them.
//! The object store addresses objects by it. Definition (docs/FORMAT.md, "Content hash"):
//!
//! ```text
//! XXH3-128( "kompakt content 1\n"
//!           || u32 stream count
//!           || for each stream: u64 raw length || XXH3-128(raw bytes) as 16 bytes LE
//!           || u64 metadata length || metadata )
//! ```
//! (integers little-endian).

use crate::hash::{xxh3_128, Xxh3_128};
use std::fmt;

const DOMAIN: &[u8] = b"kompakt content 1\n";

/// A 128-bit content hash; shown as 32 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(pub u128);

impl ContentHash {
    /// The 16 bytes stored in indexes (big-endian, so that byte order sorts like the hex form).
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// Inverse of [`to_bytes`](ContentHash::to_bytes); None unless exactly 16 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<ContentHash> {
        Some(ContentHash(u128::from_be_bytes(bytes.try_into().ok()?)))
    }

    /// Parses the 32-digit hex form.
    pub fn from_hex(hex: &str) -> Option<ContentHash> {
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u128::from_str_radix(hex, 16).ok().map(ContentHash)
    }

    /// Hash of streams given whole, with their metadata (the same value a [`ContentHasher`]
    /// fed the same bytes returns).
    pub fn of(streams: &[&[u8]], metadata: &[u8]) -> ContentHash {
        let mut h = ContentHasher::new();
        for s in streams {
            let id = h.add_stream();
            h.update(id, s);
        }
        h.finish(metadata)
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

/// Computes a [`ContentHash`] while the streams are written, one pass, no copy.
#[derive(Clone, Default)]
pub struct ContentHasher {
    streams: Vec<(u64, Xxh3_128)>,
}

impl fmt::Debug for ContentHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContentHasher")
            .field("streams", &self.streams.len())
            .finish()
    }
}

impl ContentHasher {
    /// A hasher with no streams.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the next stream (streams are numbered in the order added, from 0).
    pub fn add_stream(&mut self) -> usize {
        self.streams.push((0, Xxh3_128::new()));
        self.streams.len() - 1
    }

    /// Feeds raw bytes of stream `id`.
    ///
    /// # Panics
    /// If `id` was not returned by [`add_stream`](ContentHasher::add_stream).
    pub fn update(&mut self, id: usize, data: &[u8]) {
        let (len, h) = &mut self.streams[id];
        *len += data.len() as u64;
        h.update(data);
    }

    /// The hash of everything fed, with the file's metadata.
    pub fn finish(&self, metadata: &[u8]) -> ContentHash {
        let mut summary = Vec::with_capacity(DOMAIN.len() + 4 + 24 * self.streams.len() + 8 + metadata.len());
        summary.extend_from_slice(DOMAIN);
        summary.extend_from_slice(&(self.streams.len() as u32).to_le_bytes());
        for (len, h) in &self.streams {
            summary.extend_from_slice(&len.to_le_bytes());
            summary.extend_from_slice(&h.digest().to_le_bytes());
        }
        summary.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
        summary.extend_from_slice(metadata);
        ContentHash(xxh3_128(&summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_of_how_bytes_arrive() {
        let a = b"0123456789".repeat(1000);
        let mut h = ContentHasher::new();
        let s = h.add_stream();
        for chunk in a.chunks(7) {
            h.update(s, chunk);
        }
        assert_eq!(h.finish(b"m"), ContentHash::of(&[&a], b"m"));
    }

    #[test]
    fn stream_boundaries_and_metadata_count() {
        let one = ContentHash::of(&[b"abcd"], b"");
        assert_ne!(one, ContentHash::of(&[b"ab", b"cd"], b""));
        assert_ne!(one, ContentHash::of(&[b"abcd"], b"x"));
        assert_ne!(one, ContentHash::of(&[b"abcd", b""], b""));
        assert_ne!(ContentHash::of(&[], b""), ContentHash::of(&[b""], b""));
    }

    #[test]
    fn pinned_value() {
        // The definition is part of the format: this value must never change.
        let h = ContentHash::of(&[b"kompakt"], b"{}");
        assert_eq!(ContentHash::from_hex(&h.to_string()), Some(h));
        assert_eq!(ContentHash::from_bytes(&h.to_bytes()), Some(h));
        assert_eq!(h.to_string(), PINNED);
    }

    const PINNED: &str = "1899baae225e6e61919a08aacfdba985";
}
