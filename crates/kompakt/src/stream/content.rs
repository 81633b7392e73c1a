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
        summarize(self.streams.iter().map(|(len, h)| (*len, h.digest())), metadata)
    }
}

/// The content hash of streams given as (raw length, XXH3-128 of their bytes), in id order.
fn summarize(streams: impl ExactSizeIterator<Item = (u64, u128)>, metadata: &[u8]) -> ContentHash {
    let mut summary = Vec::with_capacity(DOMAIN.len() + 4 + 24 * streams.len() + 8 + metadata.len());
    summary.extend_from_slice(DOMAIN);
    summary.extend_from_slice(&(streams.len() as u32).to_le_bytes());
    for (len, digest) in streams {
        summary.extend_from_slice(&len.to_le_bytes());
        summary.extend_from_slice(&digest.to_le_bytes());
    }
    summary.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
    summary.extend_from_slice(metadata);
    ContentHash(xxh3_128(&summary))
}

/// The content hash of a whole file read front to back from `input` (a download, a pipe),
/// decoded as it arrives ([`decode_sequential_with`](super::decode_sequential_with): every
/// block's checksum, then the footer against the blocks), and the raw bytes it holds. Memory:
/// the decoder's blocks in flight and one hasher per stream that has data.
pub fn content_hash_sequential<R: std::io::Read>(
    input: R,
    opts: &super::ReadOptions,
    dictionaries: &crate::codec::Dictionaries,
) -> crate::Result<(ContentHash, u64)> {
    // By stream id as blocks arrive: streams may interleave, and an id is only checked against
    // the footer at the end, so nothing is sized by one.
    let mut streams: std::collections::BTreeMap<u32, (u64, Xxh3_128)> = Default::default();
    let footer = super::decode_sequential_with(input, opts, dictionaries, |id, bytes| {
        let (len, h) = streams.entry(id).or_insert_with(|| (0, Xxh3_128::new()));
        *len += bytes.len() as u64;
        h.update(bytes);
        Ok(())
    })?;
    let empty = Xxh3_128::new().digest();
    let count = footer.streams.len() as u32;
    let digests = (0..count).map(|id| streams.get(&id).map_or((0, empty), |(len, h)| (*len, h.digest())));
    let raw = streams.values().map(|(len, _)| len).sum();
    Ok((summarize(digests, &footer.metadata), raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_front_to_back_a_file_hashes_as_written() {
        use crate::stream::{ReadOptions, WriteOptions, Writer};
        let opts = WriteOptions {
            block_size: crate::stream::MIN_BLOCK_SIZE,
            ..WriteOptions::default()
        };
        let mut w = Writer::new(Vec::new(), opts).unwrap();
        let a: Vec<u8> = (0..200_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let s0 = w.add_stream(Default::default()).unwrap();
        let s1 = w.add_stream(Default::default()).unwrap();
        let _empty = w.add_stream(Default::default()).unwrap();
        // Interleaved: blocks of stream 1 come before the rest of stream 0.
        w.write(s0, &a[..100_000]).unwrap();
        w.write(s1, b"second").unwrap();
        w.write(s0, &a[100_000..]).unwrap();
        w.set_metadata(b"meta".to_vec()).unwrap();
        let file = w.finish().unwrap();
        let (hash, raw) = content_hash_sequential(&file[..], &ReadOptions::default(), &Default::default()).unwrap();
        assert_eq!(hash, ContentHash::of(&[&a, b"second", b""], b"meta"));
        assert_eq!(raw, a.len() as u64 + 6);
        // A flipped byte is caught (by a block checksum or the hash), truncation too.
        let mut bad = file.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        assert!(
            content_hash_sequential(&bad[..], &ReadOptions::default(), &Default::default())
                .map_or(true, |(h, _)| h != hash)
        );
        assert!(
            content_hash_sequential(&file[..file.len() - 1], &ReadOptions::default(), &Default::default()).is_err()
        );
    }

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
