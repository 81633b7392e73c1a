//! Options for writing: [`WriteOptions`] for a file, [`StreamOptions`] for one stream, and
//! the constants they default to or are bounded by.

use crate::codec::CodecSpec;
use crate::error::{Error, Result};
use crate::filter::FilterSpec;
use crate::stream::block::BlockSettings;
use crate::stream::format::{MAX_BLOCK_SIZE, MIN_BLOCK_SIZE};

/// Default block size: 1 MiB (`docs/DESIGN.md`, "Block size: 1 MiB", says why).
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Full blocks a stream buffers from small writes before compressing them together.
///
/// It is a constant, not derived from the thread count, because it decides how blocks of
/// different streams interleave in the file: the bytes written must not depend on threads.
pub const STAGED_BLOCKS: usize = 8;

/// Largest metadata a writer accepts (the whole footer must stay under 1 GiB).
pub const MAX_METADATA_LEN: usize = 256 << 20;

/// Options for writing a file; per-stream settings default to these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Codec, filter and element size: the defaults for every stream of the file (codec: unified
    /// level [`crate::codec::DEFAULT_LEVEL`]; filter: shuffle, applied when typesize > 1).
    pub stream: StreamOptions,
    /// Raw bytes per block, 64 KiB..=64 MiB (default 1 MiB). Larger blocks compress a little
    /// better; smaller ones make random reads cheaper.
    pub block_size: usize,
    /// Compression threads; 0 = all available cores. Does not change the bytes written (unless
    /// the writer adapts to the disk: [`Writer::adapt_to`](super::Writer::adapt_to)).
    pub threads: usize,
    /// Whether a file of one stream of at most
    /// [`COMPACT_WRITE_MAX`](crate::stream::compact::COMPACT_WRITE_MAX) bytes, no dictionary,
    /// and metadata that a compact file can stand for, is written as a compact file (format
    /// 3.0, [`crate::stream::compact`]). Default: no (a compact file cannot be one of several
    /// files read in a row, as the JVM's shuffle reads them); the front ends that save objects
    /// and files turn it on.
    pub compact: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            stream: StreamOptions::default(),
            block_size: DEFAULT_BLOCK_SIZE,
            threads: 0,
            compact: false,
        }
    }
}

impl WriteOptions {
    /// Sets the codec of every stream (see [`StreamOptions::codec`]).
    pub fn codec(mut self, codec: CodecSpec) -> Self {
        self.stream = self.stream.codec(codec);
        self
    }
    /// Sets the filter of every stream.
    pub fn filter(mut self, filter: FilterSpec) -> Self {
        self.stream = self.stream.filter(filter);
        self
    }
    /// Sets the element size of every stream.
    pub fn typesize(mut self, typesize: u8) -> Self {
        self.stream = self.stream.typesize(typesize);
        self
    }
    /// Whether small single-stream files may be written compact ([`WriteOptions::compact`]).
    pub fn compact(mut self, compact: bool) -> Self {
        self.compact = compact;
        self
    }
    /// Sets the block size.
    pub fn block_size(mut self, block_size: usize) -> Self {
        self.block_size = block_size;
        self
    }
    /// Sets the thread count (0 = all cores).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Checks every option, with errors that name the valid range.
    pub fn validate(&self) -> Result<()> {
        if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&self.block_size) {
            return Err(Error::invalid(
                "block size",
                self.block_size.to_string(),
                "64 KiB ..= 64 MiB",
            ));
        }
        self.stream_options().validate()
    }

    /// The per-stream part of these options (the defaults for every stream).
    pub fn stream_options(&self) -> StreamOptions {
        self.stream
    }
}

/// How one stream is encoded: codec, filter and element size. Block size and thread count
/// belong to the file ([`WriteOptions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions {
    /// Codec, or `auto`.
    pub codec: CodecSpec,
    /// Filter for typed data. `FilterSpec::Auto` chooses per block; with codec `auto`,
    /// `FilterSpec::None` forbids filters and anything else lets `auto` choose.
    pub filter: FilterSpec,
    /// Element size of the data (1 = plain bytes).
    pub typesize: u8,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            codec: CodecSpec::default(),
            filter: FilterSpec::default(),
            typesize: 1,
        }
    }
}

impl StreamOptions {
    /// Sets the codec.
    pub fn codec(mut self, codec: CodecSpec) -> Self {
        self.codec = codec;
        self
    }
    /// Sets the filter.
    pub fn filter(mut self, filter: FilterSpec) -> Self {
        self.filter = filter;
        self
    }
    /// Sets the element size.
    pub fn typesize(mut self, typesize: u8) -> Self {
        self.typesize = typesize;
        self
    }

    /// Checks codec level and element size.
    pub fn validate(&self) -> Result<()> {
        if self.typesize == 0 {
            return Err(Error::invalid("typesize", "0", "an element size of 1..=255 bytes"));
        }
        if let CodecSpec::Fixed(c) = self.codec {
            c.validate()?;
        }
        Ok(())
    }

    /// The block-level settings these options resolve to (for callers that encode blocks
    /// themselves with a [`BlockEncoder`](crate::stream::BlockEncoder) and add them with
    /// [`Writer::write_block`](super::Writer::write_block)).
    pub fn block_settings(&self) -> BlockSettings {
        BlockSettings {
            codec: self.codec,
            filters: self.filter.resolve(self.typesize),
            typesize: self.typesize,
            auto_filters: match self.codec {
                CodecSpec::Auto => self.filter != FilterSpec::None,
                CodecSpec::Fixed(_) => self.filter == FilterSpec::Auto,
            },
            dictionary: None,
        }
    }
}
