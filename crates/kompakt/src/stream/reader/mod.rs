//! Reading kompakt files with random access: [`Reader`] over any `Read + Seek`, and
//! [`StreamReader`], one stream as a `Read + Seek`.
//!
//! This file holds the [`Reader`] type: its options, how it is made over each kind of input,
//! and what it tells about the file. The rest is one job a file:
//!
//! - `index`: opening a file, reading and checking its index, finding the blocks of a range;
//! - `range`: reads of byte ranges and whole streams, decoded in parallel;
//! - `decode`: what a decoding thread does with one block;
//! - `blocks`: where a read gets its blocks from (a file, memory, positional reads);
//! - `cache`: small reads at any position, and [`StreamReader`];
//! - `report`: per-stream summaries and whole-file verification.

mod blocks;
mod cache;
mod decode;
mod index;
mod range;
mod report;

pub use cache::{BlockCache, StreamReader};
pub use index::FileIndex;
pub use report::{filter_label, StreamSummary, VerifyReport};

use super::parallel::resolve_threads;
use super::source::{ReadAt, SourceCursor};
use crate::codec::Dictionaries;
use crate::error::{Error, Result};
use crate::stream::format::{BlockEntry, StreamInfo};
use std::io::{Cursor, Read, Seek};
use std::sync::Arc;

/// Options for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Decompression threads; 0 = all available cores.
    pub threads: usize,
    /// Check every block's checksum before decoding it (default: true).
    pub verify_checksums: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            threads: 0,
            verify_checksums: true,
        }
    }
}

impl ReadOptions {
    /// Sets the thread count (0 = all cores).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }
}

/// A kompakt file opened for random access.
///
/// Opening reads the header, the trailer and the footer (the index); it does not touch the
/// blocks. Reads then decode only the blocks a byte range covers, on several threads, straight
/// into the caller's buffer.
#[derive(Debug)]
pub struct Reader<R> {
    inner: R,
    index: Arc<FileIndex>,
    opts: ReadOptions,
    /// The whole file, when `inner` holds it in memory ([`Reader::from_memory`]): blocks are
    /// then decoded where they lie instead of being read into a buffer of their own first.
    in_memory: for<'x> fn(&'x R) -> Option<&'x [u8]>,
    /// `inner` as a source of positional reads, when it is one: reads of many blocks then
    /// have each thread read its own blocks ([`Reader::with_positional`]).
    positional: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>,
    /// What `zstd-dict` blocks may use ([`Reader::set_dictionaries`]).
    dictionaries: Dictionaries,
}

impl<R: Read + Seek> Reader<R> {
    /// Gives the reader the dictionaries the file's `zstd-dict` blocks were compressed with
    /// (any number; each block names its own by id). Reading a block whose dictionary is not
    /// among them is an [`Error::MissingDictionary`] naming it.
    pub fn set_dictionaries(&mut self, dictionaries: Dictionaries) {
        self.dictionaries = dictionaries;
    }

    /// The parsed header and index, to open the same file again without reading them
    /// ([`Reader::at_with_index`]).
    pub fn index(&self) -> Arc<FileIndex> {
        Arc::clone(&self.index)
    }

    /// Format version of the file.
    pub fn version(&self) -> (u16, u16) {
        (self.index.header.major, self.index.header.minor)
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.index.file_len
    }

    /// The streams, by id.
    pub fn streams(&self) -> &[StreamInfo] {
        &self.index.footer.streams
    }

    /// Every block, in file order.
    pub fn blocks(&self) -> &[BlockEntry] {
        &self.index.footer.blocks
    }

    /// The user metadata stored in the footer.
    pub fn metadata(&self) -> &[u8] {
        &self.index.footer.metadata
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Gives back the inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn threads(&self) -> usize {
        resolve_threads(self.opts.threads)
    }
}

impl<T: AsRef<[u8]>> Reader<Cursor<T>> {
    /// Opens a file held in memory (a `Vec`, bytes borrowed from elsewhere, a memory map):
    /// reads decode its blocks where they lie, with no copy of each block into a buffer of its
    /// own first. `Reader::new(Cursor::new(data), opts)` reads the same, copying.
    pub fn from_memory(data: T, opts: ReadOptions) -> Result<Self> {
        fn whole<T: AsRef<[u8]>>(c: &Cursor<T>) -> Option<&[u8]> {
            Some(c.get_ref().as_ref())
        }
        Reader::with_memory(Cursor::new(data), opts, whole::<T>)
    }
}

impl<S: ReadAt> Reader<SourceCursor<S>> {
    /// Opens a file from any [`ReadAt`] source: a `File`, bytes in memory (decoded where they
    /// lie), or a source of the caller's.
    pub fn at(source: S, opts: ReadOptions) -> Result<Self> {
        let reader = Reader::with_memory(SourceCursor::new(source)?, opts, SourceCursor::in_memory)?;
        Ok(reader.with_positional(SourceCursor::positional))
    }

    /// Opens a file whose index was read before ([`Reader::index`]), reading nothing. The
    /// caller vouches that `source` holds the bytes that index was read from (for example, the
    /// same file, unchanged since: same identity, size and times); only the size is checked
    /// here. A block that differs all the same still fails its checksum when read.
    pub fn at_with_index(source: S, index: Arc<FileIndex>, opts: ReadOptions) -> Result<Self> {
        let inner = SourceCursor::new(source)?;
        let len = inner.len();
        if len != index.file_len {
            return Err(Error::corrupt(
                "file",
                0,
                format!("{len} bytes, but its index was read from {} bytes", index.file_len),
            ));
        }
        Ok(Reader {
            inner,
            index,
            opts,
            in_memory: SourceCursor::in_memory,
            positional: SourceCursor::positional,
            dictionaries: Dictionaries::none(),
        })
    }
}

impl<R: Read + Seek> Reader<R> {
    /// [`Reader::new`] over an input that may hold the whole file in memory: `in_memory`
    /// returns those bytes when it does (they must be what reading `inner` gives), and reads
    /// then decode blocks where they lie, as with [`Reader::from_memory`].
    pub fn with_memory(inner: R, opts: ReadOptions, in_memory: for<'x> fn(&'x R) -> Option<&'x [u8]>) -> Result<Self> {
        let mut reader = Reader::new(inner, opts)?;
        reader.in_memory = in_memory;
        Ok(reader)
    }

    /// Lets reads of many blocks have each thread read its own blocks, with positional reads
    /// of the source `positional` returns from `inner` (it must read what reading `inner`
    /// gives), instead of the calling thread reading them all in turn. Page faults and the
    /// copy out of the kernel's cache then run on every core too: a raw block is read straight
    /// into the caller's buffer by the thread that checks it. [`Reader::at`] does this by
    /// itself.
    pub fn with_positional(mut self, positional: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>) -> Self {
        self.positional = positional;
        self
    }
}
