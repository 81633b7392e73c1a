//! The block stream: a self-describing, checksummed, seekable file of compressed blocks.
//!
//! A file holds numbered streams, each cut into blocks of a fixed raw size. Every block carries
//! its codec, filters, sizes and an XXH3 checksum; a footer indexes all blocks, so a reader can
//! decode any byte range of any stream by reading only the blocks that cover it. The layout is
//! specified byte by byte in `docs/FORMAT.md` and in [`format`](mod@format).
//!
//! - [`Writer`] / [`Encoder`]: write (multi-threaded, never seeking, deterministic output);
//! - [`Reader`] / [`StreamReader`]: random access over `Read + Seek`;
//! - [`decode_sequential`], [`SequentialDecoder`]: front-to-back decoding of a pipe;
//! - [`compact`]: compact files (format 3.0), a small single-stream file in 28 bytes more than
//!   its payload, which readers open as the format-1 file it stands for.

mod block;
pub mod compact;
mod content;
pub mod format;
mod pace;
mod parallel;
mod pool;
mod reader;
mod sequential;
mod source;
mod writer;

pub use block::{worthwhile_limit, BlockDecoder, BlockEncoder, BlockSettings, EncodedBlock, Payload, SMALL_BLOCK};
pub use content::{content_hash_sequential, ContentHash, ContentHasher};
pub use format::{BlockEntry, BlockHeader, Footer, StreamInfo, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE};
pub use pace::Pace;
pub use parallel::{resolve_threads, MAX_THREADS};
pub use reader::{filter_label, BlockCache, FileIndex, ReadOptions, Reader, StreamReader, StreamSummary, VerifyReport};
pub use sequential::{decode_sequential, decode_sequential_with, SequentialDecoder, SequentialReader};
pub use source::{ReadAt, SourceCursor};
pub use writer::{
    Encoder, InMemory, StreamId, StreamOptions, WriteOptions, Writer, DEFAULT_BLOCK_SIZE, MAX_METADATA_LEN,
    STAGED_BLOCKS,
};
