//! Writing kompakt files: [`Writer`] (any number of streams) and [`Encoder`] (one stream, as an
//! `io::Write`).
//!
//! The writer never seeks: blocks go out as they are compressed and the index follows them in
//! the footer, so any `Write` (a pipe, a socket) is a valid target.

use super::block::{BlockSettings, EncodedBlock, Payload};
use super::content::{ContentHash, ContentHasher};
use super::format::{
    BlockEntry, BlockHeader, FileHeader, Footer, StreamInfo, Trailer, BLOCK_HEADER_LEN, FOOTER_HEADER_LEN,
    MAX_BLOCK_SIZE, MAX_FOOTER_LEN, MIN_BLOCK_SIZE,
};
use super::pace::Pace;
use super::parallel::{ordered_map, resolve_threads};
use super::source::ReadAt;
use crate::codec::{Codec, CodecSpec, Dictionary};
use crate::error::{Error, Result};
use crate::filter::FilterSpec;
use crate::hash::xxh3_64;
use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex};

/// Default block size: 1 MiB (`docs/DESIGN.md`, "Block size: 1 MiB", says why).
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Full blocks a stream buffers from small writes before compressing them together.
///
/// It is a constant, not derived from the thread count, because it decides how blocks of
/// different streams interleave in the file: the bytes written must not depend on threads.
pub const STAGED_BLOCKS: usize = 8;

/// Writes at least this large hash their content concurrently with compressing it.
const PARALLEL_HASH_MIN: usize = 8 << 20;

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
    /// the writer adapts to the disk: [`Writer::adapt_to`]).
    pub threads: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            stream: StreamOptions::default(),
            block_size: DEFAULT_BLOCK_SIZE,
            threads: 0,
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
    /// themselves with a [`BlockEncoder`](super::BlockEncoder) and add them with
    /// [`Writer::write_block`]).
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
        if dictionary.is_some() && !matches!(opts.stream.codec, CodecSpec::Fixed(Codec::Zstd { .. })) {
            return Err(Error::invalid(
                "codec with a dictionary",
                opts.stream.codec.to_string(),
                "zstd or zstd:LEVEL (or a unified level 21-100): dictionaries are zstd's",
            ));
        }
        let mut out = BufWriter::with_capacity(64 << 10, out);
        let header = if dictionary.is_some() {
            FileHeader::WITH_DICTIONARIES
        } else {
            FileHeader::CURRENT
        }
        .encode();
        out.write_all(&header)?;
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
            poisoned: false,
        })
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
            poisoned: false,
        })
    }

    /// Makes the writer ask `pace`, block by block, whether to compress or to store the block
    /// raw: the hook through which an output that knows its disk steers the compressor
    /// (`kompakt-fs` builds such writers: its pacing stores a block raw when the disk has
    /// caught up and would otherwise wait for the compressor, `zstd --adapt`'s idea). The
    /// price: **the bytes written then depend on timing**, so two writes of the same data may
    /// differ (the content and its [`ContentHash`] do not).
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

    /// Appends `data` to a stream.
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<()> {
        self.check(id)?;
        let Some(mut hasher) = self.content.take() else {
            return self.write_data(id, data);
        };
        // The content hash runs at a few GB/s: on a large write, hash on a thread of its own
        // while the blocks are compressed, rather than before.
        let result = if data.len() >= PARALLEL_HASH_MIN && self.threads > 1 {
            std::thread::scope(|scope| {
                let hashing = scope.spawn(|| {
                    hasher.update(id.0 as usize, data);
                    hasher
                });
                let result = self.write_data(id, data);
                match hashing.join() {
                    Ok(h) => {
                        self.content = Some(h);
                        result
                    }
                    Err(_) => Err(Error::Internal("the hashing thread panicked".into())),
                }
            })
        } else {
            hasher.update(id.0 as usize, data);
            self.content = Some(hasher);
            self.write_data(id, data)
        };
        self.poisoned |= self.content.is_none();
        result
    }

    fn write_data(&mut self, id: StreamId, data: &[u8]) -> Result<()> {
        self.write_input(id, Input::Memory(data), &mut |_| {})
    }

    /// Appends `input` to a stream: fills a batch that small writes began (or stages a small
    /// input), compresses the whole blocks after it straight from `input`, and stages the
    /// rest. `progress` hears the bytes appended so far.
    fn write_input(&mut self, id: StreamId, input: Input<'_>, progress: &mut dyn FnMut(u64)) -> Result<()> {
        let bs = self.opts.block_size as u64;
        let batch = STAGED_BLOCKS as u64 * bs;
        let len = input.len();
        let mut pos = 0;
        let staged = self.streams[id.0 as usize].staged.len() as u64;
        if staged > 0 || len < batch {
            let take = (batch - staged).min(len);
            self.stage(id, input.part(0, take))?;
            pos = take;
            if staged + take == batch {
                self.flush_staged(id)?;
            }
            progress(pos);
            if pos == len {
                return Ok(());
            }
        }
        // Staging is empty here: compress whole blocks straight from the input.
        let whole = (len - pos) / bs * bs;
        if whole > 0 {
            let done = pos;
            self.encode_blocks(id, input.part(pos, whole), &mut |n| progress(done + n))?;
            pos += whole;
        }
        self.stage(id, input.part(pos, len - pos))?;
        progress(len);
        Ok(())
    }

    /// Appends `part` to stream `id`'s staged bytes.
    fn stage(&mut self, id: StreamId, part: Input<'_>) -> Result<()> {
        let batch = STAGED_BLOCKS * self.opts.block_size;
        let staged = &mut self.streams[id.0 as usize].staged;
        let old = staged.len();
        let want = old + part.len() as usize;
        if staged.capacity() < want {
            // Grow by doubling up to the batch, never beyond: a tiny file stays tiny.
            let grow = want.max(2 * staged.capacity()).min(batch.max(want));
            staged.reserve_exact(grow - old);
        }
        match part {
            Input::Memory(bytes) => staged.extend_from_slice(bytes),
            Input::Source { source, start, .. } => {
                staged.resize(want, 0);
                if let Err(e) = read_input(source, &mut staged[old..], start) {
                    staged.truncate(old);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Appends `len` bytes of `source`, from offset `start` on, to a stream, as
    /// [`write`](Writer::write) of those bytes would (the file is the same byte for byte), but
    /// each compressing thread reads its own blocks with positional reads: the input is never
    /// held whole in memory, and reading it runs on every core, each block read into a buffer
    /// the thread keeps in its caches. `progress` is called with the bytes appended so far.
    ///
    /// A source that ends before `start + len` gives an I/O error of kind `UnexpectedEof`.
    pub fn write_from(
        &mut self,
        id: StreamId,
        source: &dyn ReadAt,
        start: u64,
        len: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        self.check(id)?;
        let end = start
            .checked_add(len)
            .ok_or_else(|| Error::Usage(format!("{start} + {len} bytes overflows")))?;
        let batch = (STAGED_BLOCKS * self.opts.block_size) as u64;
        let mut pos = start;
        if self.content.is_some() {
            // The content hash takes the bytes in order: read them in batches.
            let mut buf = Vec::new();
            while pos < end {
                buf.resize((end - pos).min(batch) as usize, 0);
                read_input(source, &mut buf, pos)?;
                self.write(id, &buf)?;
                pos += buf.len() as u64;
                progress(pos - start);
            }
            return Ok(());
        }
        let input = Input::Source { source, start, len };
        self.write_input(id, input, progress)
    }

    /// Ends a stream: its last partial block is written; later writes to it are errors.
    pub fn finish_stream(&mut self, id: StreamId) -> Result<()> {
        self.check(id)?;
        self.flush_staged(id)?;
        let st = &mut self.streams[id.0 as usize];
        st.open = false;
        st.staged = Vec::new();
        Ok(())
    }

    /// Appends a block the caller encoded (with a [`BlockEncoder`](super::BlockEncoder), for
    /// stream `id`) to that stream.
    ///
    /// This lets a caller compress blocks of many streams on its own threads and write them in
    /// the order it chooses, such as a table writer encoding every column of a row group at
    /// once. The stream must have no staged bytes from [`write`](Writer::write) (they would
    /// come after this block), and the file must not compute a content hash (the raw bytes are
    /// not seen here).
    pub fn write_block(&mut self, id: StreamId, block: &super::EncodedBlock<'_>) -> Result<()> {
        self.check(id)?;
        if self.content.is_some() {
            return Err(Error::Usage("write_block cannot be used with hash_content".into()));
        }
        let st = &mut self.streams[id.0 as usize];
        if !st.staged.is_empty() {
            return Err(Error::Usage(format!(
                "stream {} has staged bytes from write(); a block cannot go before them",
                id.0
            )));
        }
        if block.fields.stream != id.0 {
            return Err(Error::Usage(format!(
                "the block was encoded for stream {}, not {}",
                block.fields.stream, id.0
            )));
        }
        // Only a writer made with a dictionary wrote a 2.0 header; a 1.0 file must not hold one.
        if block.fields.codec == crate::codec::CodecId::ZstdDict && self.dictionary.is_none() {
            return Err(Error::Usage(
                "a zstd-dict block needs a writer made with a dictionary (a format 2.0 file)".into(),
            ));
        }
        let payload = block.payload.bytes();
        let result = self
            .out
            .write_all(&block.header)
            .and_then(|()| self.out.write_all(payload));
        if let Err(e) = result {
            self.poisoned = true;
            return Err(e.into());
        }
        self.blocks.push(BlockEntry {
            file_offset: self.offset,
            raw_offset: st.info.raw_len,
            header: block.fields,
        });
        self.offset += (BLOCK_HEADER_LEN + payload.len()) as u64;
        st.info.raw_len += u64::from(block.fields.raw_len);
        st.info.block_count += 1;
        Ok(())
    }

    /// Sets the user metadata stored in the footer (replacing any set before); at most
    /// [`MAX_METADATA_LEN`] bytes.
    pub fn set_metadata(&mut self, metadata: Vec<u8>) -> Result<()> {
        if metadata.len() > MAX_METADATA_LEN {
            return Err(Error::invalid(
                "metadata",
                format!("{} bytes", metadata.len()),
                format!("at most {MAX_METADATA_LEN} bytes"),
            ));
        }
        self.metadata = metadata;
        Ok(())
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

    /// Also computes the [`ContentHash`] of what is written, returned by
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

    /// Ends every open stream, writes footer and trailer, flushes, and returns the output.
    pub fn finish(self) -> Result<W> {
        self.finish_hashed().map(|(out, _)| out)
    }

    /// Like [`finish`](Writer::finish), also returning the content hash when
    /// [`hash_content`](Writer::hash_content) was called.
    pub fn finish_hashed(mut self) -> Result<(W, Option<ContentHash>)> {
        for i in 0..self.streams.len() {
            if self.streams[i].open {
                self.finish_stream(StreamId(i as u32))?;
            }
        }
        let hash = self.content.as_ref().map(|h| h.finish(&self.metadata));
        let footer = Footer {
            streams: self.streams.iter().map(|s| s.info).collect(),
            blocks: std::mem::take(&mut self.blocks),
            metadata: std::mem::take(&mut self.metadata),
        }
        .encode();
        if footer.len() as u64 > MAX_FOOTER_LEN + FOOTER_HEADER_LEN as u64 {
            // Refuse to write a file no reader would open (tens of millions of blocks).
            return Err(Error::Usage(format!(
                "the block index would be {} bytes, over the 1 GiB limit: use a larger block size",
                footer.len()
            )));
        }
        let trailer = Trailer {
            footer_offset: self.offset,
            footer_len: footer.len() as u64,
            footer_checksum: xxh3_64(&footer),
        }
        .encode();
        self.out.write_all(&footer)?;
        self.out.write_all(&trailer)?;
        let out = self.out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
        Ok((out, hash))
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

    fn flush_staged(&mut self, id: StreamId) -> Result<()> {
        let staged = std::mem::take(&mut self.streams[id.0 as usize].staged);
        let result = self.encode_blocks(id, Input::Memory(&staged), &mut |_| {});
        let st = &mut self.streams[id.0 as usize];
        st.staged = staged;
        st.staged.clear();
        result
    }

    /// Compresses `input` as consecutive blocks of `id` and writes them in order; `progress`
    /// hears the bytes written so far.
    fn encode_blocks(&mut self, id: StreamId, input: Input<'_>, progress: &mut dyn FnMut(u64)) -> Result<()> {
        let result = self.encode_blocks_inner(id, input, progress);
        self.poisoned |= result.is_err();
        result
    }

    fn encode_blocks_inner(&mut self, id: StreamId, input: Input<'_>, progress: &mut dyn FnMut(u64)) -> Result<()> {
        let Writer {
            out,
            offset,
            opts,
            threads,
            streams,
            blocks,
            pace,
            paced_raw_blocks,
            in_memory,
            ..
        } = self;
        let st = &mut streams[id.0 as usize];
        let settings = st.settings.clone();
        let pace = pace.as_deref();
        let bs = opts.block_size;
        let total = input.len();
        let mut pieces = (0..total.div_ceil(bs as u64)).map(|i| input.part(i * bs as u64, bs as u64));
        // Small inputs are not worth the threads: their start costs more than the work.
        let threads = if total <= bs as u64 { 1 } else { *threads };
        let mut probes = pace.map_or(0, |p| p.probe_blocks(total as usize, bs, threads));
        let mut next = || {
            let probe = probes > 0;
            probes = probes.saturating_sub(1);
            pieces.next().map(|piece| (piece, probe))
        };
        let pacing = Pacing { pace, threads };
        let mut done = 0u64;
        let mut record = |fields: BlockHeader, paced: bool| {
            *paced_raw_blocks += u64::from(paced);
            blocks.push(BlockEntry {
                file_offset: *offset,
                raw_offset: st.info.raw_len,
                header: fields,
            });
            *offset += (BLOCK_HEADER_LEN + fields.stored_len as usize) as u64;
            st.info.raw_len += u64::from(fields.raw_len);
            st.info.block_count += 1;
            done += u64::from(fields.raw_len);
            progress(done);
        };
        if threads == 1 {
            if let Some(in_memory) = *in_memory {
                out.flush()?;
                if let Some(file) = in_memory(out.get_mut()) {
                    let mut enc = super::pool::take_encoder();
                    let mut buf = Vec::new();
                    let result = (|| {
                        while let Some((piece, probe)) = next() {
                            let chunk = piece.bytes(&mut buf)?;
                            let (fields, paced) = pacing.encode(probe, &settings, chunk.len(), |s| {
                                enc.encode_append(id.0, s, chunk, file)
                            })?;
                            record(fields, paced);
                        }
                        Ok(())
                    })();
                    super::pool::give_encoder(enc);
                    return result;
                }
            }
        }
        // The read buffers of blocks stored raw from a source, which became their payloads,
        // once written: for the threads to read the next blocks into. (Compressed payloads
        // are dropped, so the allocator hands their memory to the next ones.)
        let spare: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
        ordered_map(
            threads,
            2 * threads,
            || Ok(next()),
            || (super::pool::take_encoder(), Vec::new()),
            |(enc, buf), (piece, probe)| {
                if buf.capacity() == 0 {
                    *buf = spare.lock().map(|mut s| s.pop()).ok().flatten().unwrap_or_default();
                }
                let chunk = piece.bytes(buf)?;
                let (block, paced) = pacing.encode(probe, &settings, chunk.len(), |s| enc.encode(id.0, s, chunk))?;
                let EncodedBlock {
                    header,
                    fields,
                    payload,
                } = block;
                let (payload, read_buffer) = match payload {
                    Payload::Owned(v, n) => (Payload::Owned(v, n), false),
                    Payload::Borrowed(_) => piece.raw_payload(buf),
                };
                let block = EncodedBlock {
                    header,
                    fields,
                    payload,
                };
                Ok((block, paced, read_buffer))
            },
            |(enc, _)| super::pool::give_encoder(enc),
            |(block, paced, read_buffer): (EncodedBlock<'_>, bool, bool)| {
                out.write_all(&block.header)?;
                out.write_all(block.payload.bytes())?;
                record(block.fields, paced);
                if let (true, Payload::Owned(buf, _)) = (read_buffer, block.payload) {
                    if let Ok(mut spare) = spare.lock() {
                        if spare.len() < threads {
                            spare.push(buf);
                        }
                    }
                }
                Ok(())
            },
        )
    }
}

/// Where the bytes of a batch of blocks, or of one block, are.
#[derive(Clone, Copy)]
enum Input<'d> {
    /// In memory.
    Memory(&'d [u8]),
    /// `len` bytes of a source from `start` on, which the threads read their blocks from.
    Source {
        source: &'d dyn ReadAt,
        start: u64,
        len: u64,
    },
}

impl<'d> Input<'d> {
    fn len(&self) -> u64 {
        match self {
            Input::Memory(data) => data.len() as u64,
            Input::Source { len, .. } => *len,
        }
    }

    /// At most `most` bytes from `at` on.
    fn part(&self, at: u64, most: u64) -> Input<'d> {
        let len = (self.len() - at).min(most);
        match *self {
            Input::Memory(data) => Input::Memory(&data[at as usize..(at + len) as usize]),
            Input::Source { source, start, .. } => Input::Source {
                source,
                start: start + at,
                len,
            },
        }
    }

    /// The bytes, read into `buf` (grown, never shrunk: no zero-filling once it has held a
    /// block) when they are in a source.
    fn bytes<'a>(&self, buf: &'a mut Vec<u8>) -> Result<&'a [u8]>
    where
        'd: 'a,
    {
        match *self {
            Input::Memory(bytes) => Ok(bytes),
            Input::Source { source, start, len } => {
                let len = len as usize;
                if buf.len() < len {
                    buf.resize(len, 0);
                }
                read_input(source, &mut buf[..len], start)?;
                Ok(&buf[..len])
            }
        }
    }

    /// These bytes as a block stored raw, borrowing nothing of `buf` (which [`bytes`] read
    /// them into): bytes of a source take `buf` itself, with no copy. Also says whether they
    /// did.
    ///
    /// [`bytes`]: Input::bytes
    fn raw_payload(&self, buf: &mut Vec<u8>) -> (Payload<'d>, bool) {
        match *self {
            Input::Memory(bytes) => (Payload::Borrowed(bytes), false),
            Input::Source { len, .. } => (Payload::Owned(std::mem::take(buf), len as usize), true),
        }
    }
}

/// Fills `buf` from `source` at `at`, saying what ended early when it did.
fn read_input(source: &dyn ReadAt, buf: &mut [u8], at: u64) -> Result<()> {
    source.read_exact_at(buf, at).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            let end = at + buf.len() as u64;
            Error::Io(io::Error::new(
                e.kind(),
                format!("the input ends before byte {end} (did it shrink while it was read?)"),
            ))
        } else {
            Error::Io(e)
        }
    })
}

/// A writer's pace, if any, with the number of threads encoding the current batch.
struct Pacing<'a> {
    pace: Option<&'a dyn Pace>,
    threads: usize,
}

impl Pacing<'_> {
    /// Encodes a block of `len` bytes with `encode`, given `settings`, or raw settings when
    /// the pace says so (asked as the block's encoding starts, not as it is queued: the
    /// latest news); also says whether it was stored raw for the pace's sake.
    fn encode<T>(
        &self,
        probe: bool,
        settings: &BlockSettings,
        len: usize,
        encode: impl FnOnce(&BlockSettings) -> Result<T>,
    ) -> Result<(T, bool)> {
        let Some(pace) = self.pace else {
            return Ok((encode(settings)?, false));
        };
        if !pace.compress_next(probe, self.threads) {
            let raw = BlockSettings {
                codec: CodecSpec::Fixed(Codec::None),
                ..settings.clone()
            };
            return Ok((encode(&raw)?, true));
        }
        let started = std::time::Instant::now();
        let encoded = encode(settings)?;
        pace.compressed(len, started.elapsed());
        Ok((encoded, false))
    }
}

/// A single-stream file as an `io::Write`: everything written becomes stream 0.
///
/// It buffers up to [`STAGED_BLOCKS`] blocks; call [`finish`](Encoder::finish) to write the
/// last block and the footer (dropping an unfinished encoder leaves an unreadable file).
///
/// ```
/// use std::io::Write;
/// use kompakt::stream::{Encoder, WriteOptions};
/// let mut enc = Encoder::new(Vec::new(), WriteOptions::default())?;
/// enc.write_all(b"some bytes")?;
/// let file: Vec<u8> = enc.finish()?;
/// assert_eq!(kompakt::decompress(&file)?, b"some bytes");
/// # Ok::<(), kompakt::Error>(())
/// ```
#[derive(Debug)]
pub struct Encoder<W: Write> {
    writer: Writer<W>,
    stream: StreamId,
}

impl<W: Write> Encoder<W> {
    /// Starts a file with one stream.
    pub fn new(out: W, opts: WriteOptions) -> Result<Self> {
        let mut writer = Writer::new(out, opts)?;
        let stream = writer.add_stream(None)?;
        Ok(Encoder { writer, stream })
    }

    /// Sets the footer metadata (see [`Writer::set_metadata`]).
    pub fn set_metadata(&mut self, metadata: Vec<u8>) -> Result<()> {
        self.writer.set_metadata(metadata)
    }

    /// The underlying multi-stream writer.
    pub fn get_ref(&self) -> &Writer<W> {
        &self.writer
    }

    /// Writes the last block, footer and trailer; returns the output.
    pub fn finish(self) -> Result<W> {
        self.writer.finish()
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(self.stream, buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write(self.stream, buf).map_err(Into::into)
    }

    /// Flushes whole blocks already compressed; a partial block stays buffered, since cutting
    /// it here would make the file depend on when the caller flushed.
    fn flush(&mut self) -> io::Result<()> {
        self.writer.out.flush()
    }
}
