//! kompakt: fast, compressed, multi-threaded storage for data-science data.
//!
//! The crate is layered; each layer uses only the ones above it:
//!
//! - [`codec`]: none, LZ4 (fast and HC), ZSTD, gzip and zlib behind one interface, a unified
//!   level 0-100, and detection of incompressible data;
//! - [`filter`]: byte shuffle and delta for typed data;
//! - [`stream`]: the block-stream file format: multi-threaded writer, random-access and
//!   sequential readers, checksums everywhere;
//!
//! This crate is the format and nothing else: it reads and writes any `Read + Seek` / `Write`.
//! Files on disk (atomic output, write-back, pacing the compressor by the disk) are
//! `kompakt-fs`'s job; the object store is `kompakt-store`'s; tables are `kompakt-table`'s.
//!
//! One-shot helpers for in-memory data:
//!
//! ```
//! let data = b"kompakt kompakt kompakt kompakt".repeat(1000);
//! let packed = kompakt::compress(&data, &kompakt::WriteOptions::default())?;
//! assert!(packed.len() < data.len() / 10);
//! assert_eq!(kompakt::decompress(&packed)?, data);
//! # Ok::<(), kompakt::Error>(())
//! ```
#![deny(missing_docs)]
// Three audited exceptions: `copy::copy_uncached` (streaming stores, which std does not offer
// safely), the SSE2 unshuffle in `filter::shuffle` (16-byte loads and stores, streaming ones
// too) and `codec::lz4_append` (LZ4 into a Vec's spare capacity, which the lz4 crate cannot
// do); everything else is safe code.
#![deny(unsafe_code)]

pub mod codec;
mod copy;
mod dictionary_id;
mod error;
pub mod filter;
pub mod hash;
pub mod stream;

pub use codec::{Codec, CodecId, CodecSpec};
pub use error::{Error, ErrorKind, Result};
pub use filter::{FilterSet, FilterSpec};
pub use stream::{Encoder, ReadOptions, Reader, WriteOptions, Writer};

/// Compresses `data` into a complete single-stream kompakt file in memory.
pub fn compress(data: &[u8], opts: &WriteOptions) -> Result<Vec<u8>> {
    let mut w = Writer::to_memory(Vec::with_capacity(data.len() / 2 + 64), *opts)?;
    let s = w.add_stream(None)?;
    w.write(s, data)?;
    w.finish()
}

/// Compresses `data` into a single-stream kompakt file with a zstd dictionary
/// ([`Writer::with_dictionary`]); `opts` must name a zstd codec.
pub fn compress_with_dictionary(data: &[u8], opts: &WriteOptions, dictionary: &codec::Dictionary) -> Result<Vec<u8>> {
    let out = Vec::with_capacity(data.len() / 2 + 64);
    let mut w = Writer::to_memory_with_dictionary(out, *opts, dictionary.clone())?;
    let s = w.add_stream(None)?;
    w.write(s, data)?;
    w.finish()
}

/// Decompresses stream 0 of an in-memory kompakt file.
pub fn decompress(file: &[u8]) -> Result<Vec<u8>> {
    decompress_with_dictionaries(file, &codec::Dictionaries::none())
}

/// [`decompress`], with the dictionaries its blocks may need.
pub fn decompress_with_dictionaries(file: &[u8], dictionaries: &codec::Dictionaries) -> Result<Vec<u8>> {
    let mut r = Reader::new(std::io::Cursor::new(file), ReadOptions::default())?;
    r.set_dictionaries(dictionaries.clone());
    if r.streams().is_empty() {
        return Ok(Vec::new());
    }
    r.read_stream(0)
}
