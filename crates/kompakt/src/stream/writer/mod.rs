//! Writing kompakt files: [`Writer`] (any number of streams) and [`Encoder`] (one stream, as an
//! `io::Write`).
//!
//! The writer never seeks: blocks go out as they are compressed and the index follows them in
//! the footer, so any `Write` (a pipe, a socket) is a valid target.
//!
//! This file holds the [`Writer`] type: how one is made, its streams and its counters. The rest
//! is one job a file:
//!
//! - `options`: [`WriteOptions`] and [`StreamOptions`], and the constants they default to;
//! - `append`: appending data to streams: staging small writes, hashing the content;
//! - `pipeline`: cutting input into blocks, compressing them on threads, writing them in order;
//! - `finish`: ending streams and the file: metadata, footer (the block index) and trailer;
//! - `encoder`: [`Encoder`], a single-stream file as an `io::Write`.

mod append;
mod encoder;
mod finish;
mod options;
mod pipeline;

pub use encoder::Encoder;
pub use options::{StreamOptions, WriteOptions, DEFAULT_BLOCK_SIZE, MAX_METADATA_LEN, STAGED_BLOCKS};

use super::block::BlockSettings;
use super::content::ContentHasher;
use super::format::{BlockEntry, FileHeader, StreamInfo};
use super::pace::Pace;
use super::parallel::resolve_threads;
use crate::codec::Dictionary;
use crate::error::{Error, Result};
use std::io::{BufWriter, Write};
use std::sync::Arc;

/// Identifies a stream within a file being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(pub u32);

#[derive(Debug)]
struct StreamState {
    settings: BlockSettings,
    staged: Vec<u8>,
    info: StreamInfo,
    open: bool,
}

/// How a [`Writer::with_memory`] finds the `Vec` its output keeps its bytes in, if any.
pub type InMemory<W> = fn(&mut W) -> Option<&mut Vec<u8>>;

/// Writes a kompakt file with one or more streams to any `Write`.
///
/// Blocks are compressed on `threads` threads; at most about 2 x threads blocks are in flight,
/// plus up to [`STAGED_BLOCKS`] staged blocks per open stream for small writes. Large writes
/// are compressed straight from the caller's slice, and incompressible blocks are written from
/// it without a copy.
///
/// Call [`finish`](Writer::finish): until then the file has no footer and cannot be read.
///
/// ```
/// use kompakt::stream::{Reader, ReadOptions, WriteOptions, Writer};
/// let mut w = Writer::new(Vec::new(), WriteOptions::default())?;
/// let s = w.add_stream(None)?;
/// w.write(s, b"hello kompakt")?;
/// let file = w.finish()?;
/// let mut r = Reader::new(std::io::Cursor::new(file), ReadOptions::default())?;
/// assert_eq!(r.read_stream(0)?, b"hello kompakt");
/// # Ok::<(), kompakt::Error>(())
/// ```
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: BufWriter<W>,
    offset: u64,
    opts: WriteOptions,
    threads: usize,
    streams: Vec<StreamState>,
    blocks: Vec<BlockEntry>,
    metadata: Vec<u8>,
    content: Option<ContentHasher>,
    /// Set by [`adapt_to`](Writer::adapt_to): decides per block whether to compress.
    pace: Option<Arc<dyn Pace>>,
    /// Blocks stored raw because the pace said so (see [`adapt_to`](Writer::adapt_to)).
    paced_raw_blocks: u64,
    /// Set by [`with_memory`](Writer::with_memory): the output's bytes when they are a `Vec`,
    /// which single-thread batches then compress into directly.
    in_memory: Option<InMemory<W>>,
    /// Set by [`with_dictionary`](Writer::with_dictionary): what zstd blocks are compressed with.
    dictionary: Option<Dictionary>,
    /// The file header, until it is written: with the first block, or at the end, unless the
    /// file is written compact instead ([`WriteOptions::compact`]).
    pending_header: Option<[u8; super::format::FILE_HEADER_LEN]>,
    poisoned: bool,
}

impl Writer<Vec<u8>> {
    /// A writer whose file is built in `out` (after what it holds), compressing straight into
    /// it (see [`with_memory`](Writer::with_memory)).
    ///
    /// ```
    /// use kompakt::stream::{WriteOptions, Writer};
    /// let mut w = Writer::to_memory(Vec::new(), WriteOptions::default())?;
    /// let s = w.add_stream(None)?;
    /// w.write(s, &b"kompakt ".repeat(1000))?;
    /// let file = w.finish()?;
    /// assert_eq!(kompakt::decompress(&file)?, b"kompakt ".repeat(1000));
    /// # Ok::<(), kompakt::Error>(())
    /// ```
    pub fn to_memory(out: Vec<u8>, opts: WriteOptions) -> Result<Self> {
        Self::with_memory(out, opts, |v| Some(v))
    }

    /// [`to_memory`](Writer::to_memory) with a dictionary ([`with_dictionary`](Writer::with_dictionary)).
    pub fn to_memory_with_dictionary(out: Vec<u8>, opts: WriteOptions, dictionary: Dictionary) -> Result<Self> {
        let mut writer = Self::create(out, opts, Some(dictionary))?;
        writer.in_memory = Some(|v| Some(v));
        Ok(writer)
    }
}

impl<W: Write> Writer<W> {
    /// Validates the options and writes the file header.
    pub fn new(out: W, opts: WriteOptions) -> Result<Self> {
        Self::create(out, opts, None)
    }

    /// A writer whose zstd blocks are compressed with `dictionary`, for many small values
    /// that share structure (records, small pickles, log lines): each block records the
    /// dictionary's id, and reading it needs the same dictionary
    /// ([`Reader::set_dictionaries`](super::Reader::set_dictionaries)). The file is format
    /// 2.0, which kompakt before dictionaries refuses as too new. The codec must be zstd.
    ///
    /// ```
    /// use kompakt::codec::{CodecSpec, Dictionary};
    /// use kompakt::stream::{Reader, ReadOptions, WriteOptions, Writer};
    /// let records: Vec<Vec<u8>> = (0..500)
    ///     .map(|i| format!("{{\"user\":{i},\"status\":\"active\",\"plan\":\"team\"}}").into_bytes())
    ///     .collect();
    /// let dictionary = Dictionary::train(&records, 1024)?;
    /// let opts = WriteOptions::default().codec("zstd:3".parse::<CodecSpec>()?);
    /// let mut w = Writer::with_dictionary(Vec::new(), opts, dictionary.clone())?;
    /// let s = w.add_stream(None)?;
    /// w.write(s, &records[7])?;
    /// let file = w.finish()?;
    /// let mut r = Reader::new(std::io::Cursor::new(file), ReadOptions::default())?;
    /// assert!(r.read_stream(0).is_err()); // which dictionary is missing, by id
    /// r.set_dictionaries(vec![dictionary].into());
    /// assert_eq!(r.read_stream(0)?, records[7]);
    /// # Ok::<(), kompakt::Error>(())
    /// ```
    pub fn with_dictionary(out: W, opts: WriteOptions, dictionary: Dictionary) -> Result<Self> {
        Self::create(out, opts, Some(dictionary))
    }

    fn create(out: W, opts: WriteOptions, dictionary: Option<Dictionary>) -> Result<Self> {
        opts.validate()?;
        if dictionary.is_some() {
            Dictionary::check_codec(&opts.stream.codec)?;
        }
        let out = BufWriter::with_capacity(64 << 10, out);
        let header = if dictionary.is_some() {
            FileHeader::WITH_DICTIONARIES
        } else {
            FileHeader::CURRENT
        }
        .encode();
        let threads = resolve_threads(opts.threads);
        Ok(Writer {
            out,
            offset: header.len() as u64,
            opts,
            threads,
            streams: Vec::new(),
            blocks: Vec::new(),
            metadata: Vec::new(),
            content: None,
            pace: None,
            paced_raw_blocks: 0,
            in_memory: None,
            dictionary,
            pending_header: Some(header),
            poisoned: false,
        })
    }

    /// Writes the file header if it is still pending: before the first block, or at the end.
    pub(super) fn write_header(&mut self) -> Result<()> {
        if let Some(header) = self.pending_header.take() {
            if let Err(e) = self.out.write_all(&header) {
                self.poisoned = true;
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Like [`new`](Writer::new), for an output that holds its bytes in a `Vec`, always or in
    /// some of its states (the Python writer's sink is a file or a `Vec`): `in_memory` returns
    /// that `Vec` when there is one. A batch compressed on one thread then goes straight into
    /// the `Vec`'s memory, the whole batch, instead of through a buffer of its own, saving a
    /// copy of every compressed block (3 % of LZ4's time on the benchmark's mixed table). The
    /// bytes written are the same either way. A sink that must see every write (one that
    /// spills to a file past a size) should not offer its `Vec`.
    pub fn with_memory(out: W, opts: WriteOptions, in_memory: InMemory<W>) -> Result<Self> {
        Self::with_parts(out, opts, Some(in_memory), None)
    }

    /// [`new`](Writer::new), [`with_memory`](Writer::with_memory) and
    /// [`with_dictionary`](Writer::with_dictionary) in one, for callers that choose at run time.
    pub fn with_parts(
        out: W,
        opts: WriteOptions,
        in_memory: Option<InMemory<W>>,
        dictionary: Option<Dictionary>,
    ) -> Result<Self> {
        let mut writer = Self::create(out, opts, dictionary)?;
        writer.in_memory = in_memory;
        Ok(writer)
    }

    /// Continues a file whose footer and trailer were cut off: `out` is positioned where the
    /// footer began, just after the last block, and `streams` and `blocks` are that footer's.
    /// New blocks go after the old ones (to any stream, old or new) and
    /// [`finish`](Writer::finish) writes a footer that indexes both. This is how a file grows
    /// without being rewritten; making it crash-safe (keeping the old footer until the new one
    /// is durable) is the caller's job.
    pub fn resume(out: W, opts: WriteOptions, streams: &[StreamInfo], blocks: &[BlockEntry]) -> Result<Self> {
        opts.validate()?;
        let offset = blocks
            .last()
            .map_or(super::format::FILE_HEADER_LEN as u64, |b| b.end_offset());
        let settings = opts.stream_options().block_settings();
        Ok(Writer {
            out: BufWriter::with_capacity(64 << 10, out),
            offset,
            opts,
            threads: resolve_threads(opts.threads),
            streams: streams
                .iter()
                .map(|&info| StreamState {
                    settings: settings.clone(),
                    staged: Vec::new(),
                    info,
                    open: true,
                })
                .collect(),
            blocks: blocks.to_vec(),
            metadata: Vec::new(),
            content: None,
            pace: None,
            paced_raw_blocks: 0,
            in_memory: None,
            dictionary: None,
            // The file's header is there already.
            pending_header: None,
            poisoned: false,
        })
    }

    /// Makes the writer ask `pace`, block by block, whether to compress or to store the block
    /// raw: the hook through which an output that knows its disk steers the compressor
    /// (`kompakt-fs` builds such writers: its pacing stores a block raw when the disk has
    /// caught up and would otherwise wait for the compressor, `zstd --adapt`'s idea). The
    /// price: **the bytes written then depend on timing**, so two writes of the same data may
    /// differ (the content and its [`ContentHash`](super::ContentHash) do not).
    pub fn adapt_to(&mut self, pace: Arc<dyn Pace>) {
        self.pace = Some(pace);
    }

    /// Whether this writer adapts to the disk ([`adapt_to`](Writer::adapt_to)).
    pub fn adapts(&self) -> bool {
        self.pace.is_some()
    }

    /// Blocks an adaptive writer stored raw because its pace said so (blocks the codec could
    /// not shrink are not counted).
    pub fn paced_raw_blocks(&self) -> u64 {
        self.paced_raw_blocks
    }

    /// Raw bytes written to a stream so far (staged bytes included).
    pub fn stream_len(&self, id: StreamId) -> Result<u64> {
        self.streams
            .get(id.0 as usize)
            .map(|s| s.info.raw_len + s.staged.len() as u64)
            .ok_or_else(|| Error::Usage(format!("no stream {}", id.0)))
    }

    /// Opens a new stream, encoded with `options` (default: the file's options).
    pub fn add_stream(&mut self, options: Option<StreamOptions>) -> Result<StreamId> {
        let options = options.unwrap_or_else(|| self.opts.stream_options());
        options.validate()?;
        let mut settings = options.block_settings();
        settings.dictionary = self.dictionary.clone();
        let id = u32::try_from(self.streams.len()).map_err(|_| Error::Usage("too many streams".into()))?;
        self.streams.push(StreamState {
            settings,
            staged: Vec::new(),
            info: StreamInfo::default(),
            open: true,
        });
        if let Some(h) = &mut self.content {
            h.add_stream();
        }
        Ok(StreamId(id))
    }

    /// Bytes written to the output so far (header and blocks).
    pub fn bytes_written(&self) -> u64 {
        self.offset
    }

    /// Total raw bytes accepted so far over all streams.
    pub fn bytes_in(&self) -> u64 {
        self.streams
            .iter()
            .map(|s| s.info.raw_len + s.staged.len() as u64)
            .sum()
    }

    /// Also computes the [`ContentHash`](super::ContentHash) of what is written, returned by
    /// [`finish_hashed`](Writer::finish_hashed). Call it before adding streams.
    pub fn hash_content(&mut self) -> Result<()> {
        if !self.streams.is_empty() {
            return Err(Error::Usage(
                "hash_content must be called before the first stream is added".into(),
            ));
        }
        self.content = Some(ContentHasher::new());
        Ok(())
    }

    fn check(&self, id: StreamId) -> Result<()> {
        if self.poisoned {
            return Err(Error::Usage(
                "an earlier write failed; this writer cannot continue".into(),
            ));
        }
        match self.streams.get(id.0 as usize) {
            Some(s) if s.open => Ok(()),
            Some(_) => Err(Error::Usage(format!("stream {} is already finished", id.0))),
            None => Err(Error::Usage(format!("no stream {}", id.0))),
        }
    }
}
