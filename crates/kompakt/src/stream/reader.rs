//! Reading kompakt files with random access: [`Reader`] over any `Read + Seek`, and
//! [`StreamReader`], one stream as a `Read + Seek`.

use super::block::BlockDecoder;
use super::format::{
    verify_block, BlockEntry, FileHeader, Footer, StreamInfo, Trailer, BLOCK_HEADER_LEN, FILE_HEADER_LEN,
    FOOTER_HEADER_LEN, TRAILER_LEN,
};
use super::parallel::ordered_map;
use super::parallel::resolve_threads;
use super::sequential::read_full;
use super::source::{ReadAt, SourceCursor};
use crate::codec::{CodecId, Dictionaries, DictionaryId, DICTIONARY_ID_LEN};
use crate::error::{Error, Result};
use crate::filter::Stores;
use crate::hash::xxh3_64;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
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

/// Totals from [`Reader::verify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifyReport {
    /// Blocks checked and decoded.
    pub blocks: u64,
    /// Raw bytes they decoded to.
    pub raw_bytes: u64,
    /// Stored bytes read.
    pub stored_bytes: u64,
}

/// What one stream holds, as `kompakt inspect` shows it: sizes and how its blocks are encoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamSummary {
    /// Raw (decoded) bytes.
    pub raw: u64,
    /// Stored bytes: block payloads, without block headers.
    pub stored: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// Blocks per codec name.
    pub codecs: BTreeMap<String, u64>,
    /// Blocks per filter label (`none`, or `shuffle/8`: filters and element size).
    pub filters: BTreeMap<String, u64>,
}

impl StreamSummary {
    /// Raw over stored bytes (1.0 for an empty stream).
    pub fn ratio(&self) -> f64 {
        if self.stored == 0 {
            1.0
        } else {
            self.raw as f64 / self.stored as f64
        }
    }
}

/// A block's filters with its element size, for reports: `none` or e.g. `shuffle/8`.
pub fn filter_label(header: &super::format::BlockHeader) -> String {
    if header.filters.is_none() {
        "none".into()
    } else {
        format!("{}/{}", header.filters, header.typesize)
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

/// What opening a file reads and checks: its header and its index. Readers of the same file
/// may share one ([`Reader::index`], [`Reader::at_with_index`]), so that opening the file again
/// reads and parses none of it; a table's index is tens of thousands of entries.
#[derive(Debug)]
pub struct FileIndex {
    header: FileHeader,
    footer: Footer,
    /// For each stream, indices into `footer.blocks`, in raw-offset order.
    stream_blocks: Vec<Vec<usize>>,
    file_len: u64,
}

impl FileIndex {
    /// Size of the file the index describes, in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Heap bytes the index holds, roughly: what keeping it costs a cache.
    pub fn heap_size(&self) -> usize {
        self.footer.blocks.len() * (std::mem::size_of::<BlockEntry>() + std::mem::size_of::<usize>())
            + self.footer.metadata.len()
            + self.footer.streams.len() * std::mem::size_of::<StreamInfo>()
    }
}

enum Job<'d, 's> {
    /// A compressed (or filtered) block to decode into `dst`, from `skip` bytes into the block.
    Decode {
        entry: BlockEntry,
        bytes: Cow<'s, [u8]>,
        skip: usize,
        dst: &'d mut [u8],
        stores: Stores,
    },
    /// A whole raw block of a file in memory, to copy into `dst`, a part of a read too large
    /// for the caches (see [`crate::copy`]).
    Copy {
        entry: BlockEntry,
        bytes: &'s [u8],
        dst: &'d mut [u8],
    },
    /// A raw block already read straight into `dst`; only its checksum is left to check.
    Check {
        entry: BlockEntry,
        header: [u8; BLOCK_HEADER_LEN],
        dst: &'d mut [u8],
    },
    /// A block for the worker to read from `source` itself, then decode as [`Job::Decode`]
    /// (or read straight into `dst` and check, when it is raw and wanted whole).
    Fetch {
        entry: BlockEntry,
        source: &'s dyn ReadAt,
        skip: usize,
        dst: &'d mut [u8],
        stores: Stores,
    },
}

impl<R: Read + Seek> Reader<R> {
    /// Opens a file: checks header, trailer and footer checksums and validates the index.
    pub fn new(mut inner: R, opts: ReadOptions) -> Result<Self> {
        let file_len = inner.seek(SeekFrom::End(0))?;
        let min = (FILE_HEADER_LEN + FOOTER_HEADER_LEN + 16 + 8 + TRAILER_LEN) as u64;
        if file_len < min {
            let mut head = [0u8; 4];
            inner.seek(SeekFrom::Start(0))?;
            let n = read_full(&mut inner, &mut head)?;
            if n == 4 && head != super::format::MAGIC {
                return Err(Error::BadMagic {
                    what: "header",
                    found: head,
                    expected: super::format::MAGIC,
                });
            }
            return Err(Error::Truncated {
                what: "file",
                needed: min,
                available: file_len,
            });
        }
        let mut head = [0u8; FILE_HEADER_LEN];
        inner.seek(SeekFrom::Start(0))?;
        inner.read_exact(&mut head)?;
        let header = FileHeader::decode(&head)?;
        let mut tail = [0u8; TRAILER_LEN];
        let trailer_offset = file_len - TRAILER_LEN as u64;
        inner.seek(SeekFrom::Start(trailer_offset))?;
        inner.read_exact(&mut tail)?;
        let trailer = Trailer::decode(&tail, trailer_offset)?;
        // The trailer check guarantees footer_len < file_len, so this allocation is bounded by
        // the real size of the input.
        // Read without zero-filling first: a table's footer is megabytes, read on every open.
        let mut footer_bytes = Vec::with_capacity(trailer.footer_len as usize);
        inner.seek(SeekFrom::Start(trailer.footer_offset))?;
        (&mut inner).take(trailer.footer_len).read_to_end(&mut footer_bytes)?;
        if footer_bytes.len() as u64 != trailer.footer_len {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
        }
        if xxh3_64(&footer_bytes) != trailer.footer_checksum {
            return Err(Error::ChecksumMismatch {
                what: "footer",
                offset: trailer.footer_offset,
            });
        }
        let footer = Footer::decode(&footer_bytes, trailer.footer_offset)?;
        if let Some(b) = footer.blocks.iter().find(|b| !header.allows(b.header.codec)) {
            return Err(Error::corrupt(
                "block index",
                b.file_offset,
                "a zstd-dict block in a format 1 file (dictionaries came with format 2.0)",
            ));
        }
        let mut stream_blocks: Vec<Vec<usize>> = footer
            .streams
            .iter()
            .map(|s| Vec::with_capacity(s.block_count as usize))
            .collect();
        for (i, b) in footer.blocks.iter().enumerate() {
            stream_blocks[b.header.stream as usize].push(i);
        }
        Ok(Reader {
            inner,
            index: Arc::new(FileIndex {
                header,
                footer,
                stream_blocks,
                file_len,
            }),
            opts,
            in_memory: |_| None,
            positional: |_| None,
            dictionaries: Dictionaries::none(),
        })
    }

    /// Gives the reader the dictionaries the file's `zstd-dict` blocks were compressed with
    /// (any number; each block names its own by id). Reading a block whose dictionary is not
    /// among them is an [`Error::MissingDictionary`] naming it.
    pub fn set_dictionaries(&mut self, dictionaries: Dictionaries) {
        self.dictionaries = dictionaries;
    }

    /// The ids of the dictionaries the file's blocks need, in file order, each once, at most
    /// `limit` of them (reading stops there: a hostile file may name millions). Each is read
    /// from its block's first 8 payload bytes, unchecked: a damaged block may name a
    /// dictionary that never existed (reading the block then reports the damage).
    pub fn dictionaries_needed(&mut self, limit: usize) -> Result<Vec<DictionaryId>> {
        let index = Arc::clone(&self.index);
        let offsets = index
            .footer
            .blocks
            .iter()
            .filter(|b| b.header.codec == CodecId::ZstdDict)
            .map(|b| b.file_offset + BLOCK_HEADER_LEN as u64);
        let mut ids = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut note = |id: [u8; DICTIONARY_ID_LEN]| {
            let id = DictionaryId(u64::from_le_bytes(id));
            if seen.insert(id) {
                ids.push(id);
            }
            ids.len() < limit
        };
        if let Some(file) = (self.in_memory)(&self.inner) {
            for at in offsets {
                let at = at as usize;
                let id = file[at..at + DICTIONARY_ID_LEN].try_into().expect("8 bytes");
                if !note(id) {
                    break;
                }
            }
        } else {
            for at in offsets {
                let mut id = [0u8; DICTIONARY_ID_LEN];
                self.inner.seek(SeekFrom::Start(at))?;
                self.inner.read_exact(&mut id)?;
                if !note(id) {
                    break;
                }
            }
        }
        Ok(ids)
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

    /// Decoded length of a stream.
    pub fn stream_len(&self, stream: u32) -> Result<u64> {
        self.index
            .footer
            .streams
            .get(stream as usize)
            .map(|s| s.raw_len)
            .ok_or_else(|| Error::OutOfRange {
                detail: format!("no stream {stream}; the file has {}", self.index.footer.streams.len()),
            })
    }

    /// One summary per stream, from the index alone (no block is read).
    pub fn summary(&self) -> Vec<StreamSummary> {
        let mut out: Vec<StreamSummary> = self
            .index
            .footer
            .streams
            .iter()
            .map(|s| StreamSummary {
                raw: s.raw_len,
                ..Default::default()
            })
            .collect();
        for b in &self.index.footer.blocks {
            let s = &mut out[b.header.stream as usize];
            s.stored += u64::from(b.header.stored_len);
            s.blocks += 1;
            *s.codecs.entry(b.header.codec.name().to_string()).or_default() += 1;
            *s.filters.entry(filter_label(&b.header)).or_default() += 1;
        }
        out
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

    /// Blocks of `stream` that cover raw bytes `start..end`, as positions in its block list.
    fn covering(&self, stream: u32, start: u64, end: u64) -> Result<std::ops::Range<usize>> {
        let len = self.stream_len(stream)?;
        if start > end || end > len {
            return Err(Error::OutOfRange {
                detail: format!("bytes {start}..{end} of stream {stream}, which has {len} bytes"),
            });
        }
        let list = &self.index.stream_blocks[stream as usize];
        let blocks = &self.index.footer.blocks;
        let first = list.partition_point(|&i| blocks[i].raw_offset + u64::from(blocks[i].header.raw_len) <= start);
        let last = list.partition_point(|&i| blocks[i].raw_offset < end);
        Ok(first..last.max(first))
    }

    /// The index entries of the blocks of `stream` that cover raw bytes `start..end`, in order
    /// (for callers that read and decode blocks themselves, see
    /// [`BlockDecoder::decode_entry`](super::BlockDecoder::decode_entry)).
    pub fn covering_blocks(&self, stream: u32, start: u64, end: u64) -> Result<Vec<BlockEntry>> {
        let range = self.covering(stream, start, end)?;
        Ok(self.index.stream_blocks[stream as usize][range]
            .iter()
            .map(|&i| self.index.footer.blocks[i])
            .collect())
    }

    /// Reads raw bytes `start..start + dst.len()` of `stream` into `dst`, decoding only the
    /// blocks that cover them, in parallel, straight into `dst`.
    pub fn read_range_into(&mut self, stream: u32, start: u64, dst: &mut [u8]) -> Result<()> {
        let end = start.checked_add(dst.len() as u64).ok_or_else(|| Error::OutOfRange {
            detail: "range end overflows".into(),
        })?;
        let range = self.covering(stream, start, end)?;
        if dst.is_empty() {
            return Ok(());
        }
        let list = &self.index.stream_blocks[stream as usize][range];
        let verify = self.opts.verify_checksums;
        let threads = if list.len() <= 1 { 1 } else { self.threads() };
        let uncached = dst.len() >= crate::copy::UNCACHED_READ_MIN;
        let stores = if uncached { Stores::Uncached } else { Stores::Cached };
        let positional = if threads > 1 { self.positional } else { |_: &R| None };
        let dictionaries = self.dictionaries.clone();
        let mut source = BlockSource::new(&mut self.inner, self.in_memory, positional, self.positional);
        let blocks = &self.index.footer.blocks;
        let mut readahead = Readahead::new(list, blocks);
        let mut rest = dst;
        let mut pos = start;
        let mut items = list.iter().enumerate();
        ordered_map(
            threads,
            2 * threads,
            || {
                let Some((k, &i)) = items.next() else { return Ok(None) };
                readahead.before(k, &source);
                let entry = blocks[i];
                let skip = (pos - entry.raw_offset) as usize;
                let take = (entry.raw_offset + u64::from(entry.header.raw_len)).min(end) - pos;
                let (dst, tail) = std::mem::take(&mut rest).split_at_mut(take as usize);
                rest = tail;
                pos += take;
                if let BlockSource::Positional(source) = source {
                    return Ok(Some(Job::Fetch {
                        entry,
                        source,
                        skip,
                        dst,
                        stores,
                    }));
                }
                if is_whole_raw(&entry, skip, dst.len()) {
                    let mut header = [0u8; BLOCK_HEADER_LEN];
                    if source.read_raw_into(&entry, &mut header, dst)? {
                        return Ok(Some(Job::Check { entry, header, dst }));
                    }
                    if uncached {
                        if let Cow::Borrowed(bytes) = source.block(&entry)? {
                            return Ok(Some(Job::Copy { entry, bytes, dst }));
                        }
                    }
                }
                Ok(Some(Job::Decode {
                    entry,
                    bytes: source.block(&entry)?,
                    skip,
                    dst,
                    stores,
                }))
            },
            || super::pool::take_decoder_with(&dictionaries),
            |dec, job| run_job(dec, job, verify),
            super::pool::give_decoder,
            |()| Ok(()),
        )
    }

    /// Reads a whole stream into a new buffer (allocated once, at its final size).
    ///
    /// The size comes from the file's index. A small file can legitimately declare a huge
    /// stream (a block of 64 MiB of zeros compresses to a few bytes), so callers reading
    /// untrusted files should check [`stream_len`](Self::stream_len) first, or stream with
    /// [`copy_range_to`](Self::copy_range_to). An allocation that fails is an error, never an
    /// abort.
    pub fn read_stream(&mut self, stream: u32) -> Result<Vec<u8>> {
        let len = self.stream_len(stream)?;
        let too_big = || Error::OutOfRange {
            detail: format!("stream {stream} of {len} bytes does not fit in memory"),
        };
        let n = usize::try_from(len).map_err(|_| too_big())?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| too_big())?;
        out.resize(n, 0);
        self.read_stream_into(stream, &mut out)?;
        Ok(out)
    }

    /// Reads a whole stream into `dst`, which must be exactly its length.
    pub fn read_stream_into(&mut self, stream: u32, dst: &mut [u8]) -> Result<()> {
        let len = self.stream_len(stream)?;
        if dst.len() as u64 != len {
            return Err(Error::OutOfRange {
                detail: format!("buffer of {} bytes for stream {stream} of {len} bytes", dst.len()),
            });
        }
        self.read_range_into(stream, 0, dst)
    }

    /// Decodes raw bytes `start..end` of `stream` and writes them to `out` in order, using
    /// memory bounded by the thread count times the block size. `progress` is called with the
    /// raw bytes written so far.
    pub fn copy_range_to(
        &mut self,
        stream: u32,
        start: u64,
        end: u64,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64> {
        let range = self.covering(stream, start, end)?;
        if start == end {
            return Ok(0);
        }
        let threads = self.threads();
        let verify = self.opts.verify_checksums;
        let list = &self.index.stream_blocks[stream as usize][range];
        let positional = if threads > 1 { self.positional } else { |_: &R| None };
        let dictionaries = self.dictionaries.clone();
        let mut source = BlockSource::new(&mut self.inner, self.in_memory, positional, self.positional);
        // With a positional source, each thread reads its own blocks (see `read_range_into`).
        let fetch_from = match &source {
            BlockSource::Positional(s) => Some(*s),
            _ => None,
        };
        let blocks = &self.index.footer.blocks;
        let mut readahead = Readahead::new(list, blocks);
        let mut items = list.iter().enumerate();
        let mut written = 0u64;
        ordered_map(
            threads,
            2 * threads,
            || {
                let Some((k, &i)) = items.next() else { return Ok(None) };
                readahead.before(k, &source);
                let entry = blocks[i];
                let bytes = match fetch_from {
                    Some(source) => Fetched::Later(source),
                    None => Fetched::Read(source.block(&entry)?),
                };
                Ok(Some((entry, bytes)))
            },
            || super::pool::take_decoder_with(&dictionaries),
            |dec, (entry, bytes): (BlockEntry, Fetched<'_>)| {
                let lo = start.max(entry.raw_offset);
                let hi = end.min(entry.raw_offset + u64::from(entry.header.raw_len));
                let mut buf = vec![0u8; (hi - lo) as usize];
                let (skip, dst, stores) = ((lo - entry.raw_offset) as usize, &mut buf[..], Stores::Cached);
                let job = match bytes {
                    Fetched::Read(bytes) => Job::Decode {
                        entry,
                        bytes,
                        skip,
                        dst,
                        stores,
                    },
                    Fetched::Later(source) => Job::Fetch {
                        entry,
                        source,
                        skip,
                        dst,
                        stores,
                    },
                };
                run_job(dec, job, verify)?;
                Ok(buf)
            },
            super::pool::give_decoder,
            |buf| {
                out.write_all(&buf)?;
                written += buf.len() as u64;
                progress(written);
                Ok(())
            },
        )?;
        Ok(written)
    }

    /// Reads, checksums and decodes every block (in parallel), discarding the output.
    pub fn verify(&mut self, progress: &mut dyn FnMut(u64)) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        for s in 0..self.index.footer.streams.len() as u32 {
            let len = self.stream_len(s)?;
            let mut sink = io::sink();
            let base = report.raw_bytes;
            report.raw_bytes += self.copy_range_to(s, 0, len, &mut sink, &mut |n| progress(base + n))?;
        }
        report.blocks = self.index.footer.blocks.len() as u64;
        report.stored_bytes = self
            .index
            .footer
            .blocks
            .iter()
            .map(|b| u64::from(b.header.stored_len))
            .sum();
        Ok(report)
    }

    /// One stream as a `Read + Seek` (decoding one block at a time as it is reached).
    pub fn stream_reader(&mut self, stream: u32) -> Result<StreamReader<'_, R>> {
        let len = self.stream_len(stream)?;
        Ok(StreamReader {
            reader: self,
            stream,
            len,
            pos: 0,
            cache: BlockCache::new(),
        })
    }
}

fn run_job(dec: &mut BlockDecoder, job: Job<'_, '_>, verify: bool) -> Result<()> {
    match job {
        Job::Copy { entry, bytes, dst } => {
            let (head, payload) = bytes.split_at(BLOCK_HEADER_LEN);
            let head: &[u8; BLOCK_HEADER_LEN] = head.try_into().expect("header length");
            check_header_matches(head, &entry)?;
            if verify {
                verify_block(head, payload, entry.file_offset)?;
            }
            if payload.len() != dst.len() {
                return Err(Error::corrupt(
                    "block",
                    entry.file_offset,
                    "raw block length differs from its declared size",
                ));
            }
            crate::copy::copy_uncached(dst, payload);
            Ok(())
        }
        Job::Check { entry, header, dst } => check_raw(&entry, &header, dst, verify),
        Job::Decode {
            entry,
            bytes,
            skip,
            dst,
            stores,
        } => decode_block(dec, &entry, &bytes, skip, dst, verify, stores),
        Job::Fetch {
            entry,
            source,
            skip,
            dst,
            stores,
        } => {
            if is_whole_raw(&entry, skip, dst.len()) {
                let mut header = [0u8; BLOCK_HEADER_LEN];
                read_block_at(source, &mut header, &entry, 0)?;
                read_block_at(source, dst, &entry, BLOCK_HEADER_LEN as u64)?;
                return check_raw(&entry, &header, dst, verify);
            }
            let mut bytes = dec.take_fetch_buffer();
            // Grows (and zero-fills) only past the largest block this thread has read.
            bytes.resize(BLOCK_HEADER_LEN + entry.header.stored_len as usize, 0);
            let result = read_block_at(source, &mut bytes, &entry, 0)
                .and_then(|()| decode_block(dec, &entry, &bytes, skip, dst, verify, stores));
            dec.give_fetch_buffer(bytes);
            result
        }
    }
}

/// Whether all of block `entry`, from `skip` on into `len` bytes, is wanted and stored raw:
/// it can then be read straight into place.
fn is_whole_raw(entry: &BlockEntry, skip: usize, len: usize) -> bool {
    let header = &entry.header;
    skip == 0 && len == header.raw_len as usize && header.codec == CodecId::None && header.filters.is_none()
}

/// A raw block read into `dst`: its header must match the index, its checksum the bytes.
fn check_raw(entry: &BlockEntry, header: &[u8; BLOCK_HEADER_LEN], dst: &[u8], verify: bool) -> Result<()> {
    check_header_matches(header, entry)?;
    if verify {
        verify_block(header, dst, entry.file_offset)?;
    }
    Ok(())
}

/// Decodes block `entry` (`bytes`: its header and payload) into `dst`, from `skip` bytes in.
fn decode_block(
    dec: &mut BlockDecoder,
    entry: &BlockEntry,
    bytes: &[u8],
    skip: usize,
    dst: &mut [u8],
    verify: bool,
    stores: Stores,
) -> Result<()> {
    let (head, payload) = bytes.split_at(BLOCK_HEADER_LEN);
    let head: &[u8; BLOCK_HEADER_LEN] = head.try_into().expect("header length");
    check_header_matches(head, entry)?;
    if skip == 0 && dst.len() == entry.header.raw_len as usize {
        let offset = entry.file_offset;
        dec.decode_to(head, &entry.header, payload, offset, verify, dst, stores)
    } else {
        dec.decode_part(head, &entry.header, payload, entry.file_offset, verify, skip, dst)
    }
}

/// Reads `buf.len()` bytes of block `entry`, from `at` bytes into it, with a positional read.
fn read_block_at(source: &dyn ReadAt, buf: &mut [u8], entry: &BlockEntry, at: u64) -> Result<()> {
    match source.read_exact_at(buf, entry.file_offset + at) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(Error::corrupt(
            "block",
            entry.file_offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        )),
        other => Ok(other?),
    }
}

/// The block header in the file must say what the footer's index says about it.
fn check_header_matches(head: &[u8; BLOCK_HEADER_LEN], entry: &BlockEntry) -> Result<()> {
    let found = super::format::BlockHeader::decode(head, entry.file_offset)?;
    if found != entry.header {
        return Err(Error::corrupt(
            "block header",
            entry.file_offset,
            "disagrees with the footer's block index",
        ));
    }
    Ok(())
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

/// A block's bytes as the producing thread hands them over: read, or for the decoding
/// thread to read from the source.
enum Fetched<'s> {
    Read(Cow<'s, [u8]>),
    Later(&'s dyn ReadAt),
}

/// How far ahead of its decoders a read of many blocks tells its source which blocks come
/// next ([`ReadAt::prefetch`]), in stored bytes: a remote source then has requests in flight
/// while the blocks before decode. Files and memory ignore the hint.
const READAHEAD: u64 = 32 << 20;

/// The hints of one read: a window of [`READAHEAD`] bytes of blocks at a time, given when the
/// read reaches the window before it, so one is always on its way.
struct Readahead<'l> {
    list: &'l [usize],
    blocks: &'l [BlockEntry],
    /// Blocks (positions in `list`) hinted so far.
    hinted: usize,
    /// Where the read next hints a window: the start of the last window hinted.
    refill_at: usize,
}

impl<'l> Readahead<'l> {
    fn new(list: &'l [usize], blocks: &'l [BlockEntry]) -> Self {
        Readahead {
            list,
            blocks,
            hinted: 0,
            refill_at: 0,
        }
    }

    /// Called as block `k` of the read is handed out.
    fn before<R: Read + Seek>(&mut self, k: usize, source: &BlockSource<'_, R>) {
        while k >= self.refill_at && self.hinted < self.list.len() {
            let window = self.hinted;
            let mut ranges = Vec::new();
            let mut bytes = 0;
            while self.hinted < self.list.len() && bytes < READAHEAD {
                let entry = &self.blocks[self.list[self.hinted]];
                let len = BLOCK_HEADER_LEN as u64 + u64::from(entry.header.stored_len);
                ranges.push(entry.file_offset..entry.file_offset + len);
                bytes += len;
                self.hinted += 1;
            }
            source.prefetch(&ranges);
            self.refill_at = window;
        }
    }
}

/// Where a read gets its blocks: read from `inner` (seeking only when a block does not follow
/// the last one), or borrowed from the file in memory.
enum BlockSource<'s, R> {
    File {
        inner: &'s mut R,
        next: Option<u64>,
        /// `inner` as a positional source, to hint at the blocks coming ([`Readahead`]).
        hints: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>,
    },
    Memory(&'s [u8]),
    /// A source the decoding threads read blocks from themselves ([`Job::Fetch`]).
    Positional(&'s dyn ReadAt),
}

impl<'s, R: Read + Seek> BlockSource<'s, R> {
    fn new(
        inner: &'s mut R,
        in_memory: for<'x> fn(&'x R) -> Option<&'x [u8]>,
        positional: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>,
        hints: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>,
    ) -> Self {
        if in_memory(inner).is_none() && positional(inner).is_none() {
            return BlockSource::File {
                inner,
                next: None,
                hints,
            };
        }
        let inner: &'s R = inner;
        match in_memory(inner) {
            Some(bytes) => BlockSource::Memory(bytes),
            None => BlockSource::Positional(positional(inner).expect("checked just above")),
        }
    }

    /// Tells the source that `ranges` are about to be read.
    fn prefetch(&self, ranges: &[std::ops::Range<u64>]) {
        match self {
            BlockSource::File { inner, hints, .. } => {
                if let Some(source) = hints(inner) {
                    source.prefetch(ranges);
                }
            }
            BlockSource::Positional(source) => source.prefetch(ranges),
            BlockSource::Memory(_) => {}
        }
    }

    /// Positions a file at `entry`'s block.
    fn seek_to(&mut self, entry: &BlockEntry) -> Result<()> {
        if let BlockSource::File { inner, next, .. } = self {
            if *next != Some(entry.file_offset) {
                inner.seek(SeekFrom::Start(entry.file_offset))?;
            }
            *next = Some(entry.end_offset());
        }
        Ok(())
    }

    /// Reads raw block `entry`'s header and payload straight into `header` and `dst` (its
    /// length); false, with nothing read, for a file in memory, whose raw blocks the decoders
    /// copy, in parallel.
    fn read_raw_into(
        &mut self,
        entry: &BlockEntry,
        header: &mut [u8; BLOCK_HEADER_LEN],
        dst: &mut [u8],
    ) -> Result<bool> {
        self.seek_to(entry)?;
        match self {
            BlockSource::File { inner, .. } => {
                read_block_part(inner, header, entry)?;
                read_block_part(inner, dst, entry)?;
                Ok(true)
            }
            BlockSource::Positional(source) => {
                read_block_at(*source, header, entry, 0)?;
                read_block_at(*source, dst, entry, BLOCK_HEADER_LEN as u64)?;
                Ok(true)
            }
            BlockSource::Memory(_) => Ok(false),
        }
    }

    /// `entry`'s block: its header and payload.
    fn block(&mut self, entry: &BlockEntry) -> Result<Cow<'s, [u8]>> {
        self.seek_to(entry)?;
        match self {
            BlockSource::File { inner, .. } => Ok(Cow::Owned(read_block(inner, entry)?)),
            BlockSource::Positional(source) => {
                let mut bytes = vec![0; BLOCK_HEADER_LEN + entry.header.stored_len as usize];
                read_block_at(*source, &mut bytes, entry, 0)?;
                Ok(Cow::Owned(bytes))
            }
            BlockSource::Memory(file) => {
                let len = BLOCK_HEADER_LEN + entry.header.stored_len as usize;
                usize::try_from(entry.file_offset)
                    .ok()
                    .and_then(|at| file.get(at..at.checked_add(len)?))
                    .map(Cow::Borrowed)
                    .ok_or_else(|| {
                        Error::corrupt(
                            "block",
                            entry.file_offset,
                            "the file ends inside the block (was it truncated or changed while open?)",
                        )
                    })
            }
        }
    }
}

/// Reads a block's header and payload into a new buffer, without zeroing it first (the
/// length comes from the validated index, so it is at most 24 bytes + 64 MiB).
fn read_block<R: Read>(inner: &mut R, entry: &BlockEntry) -> Result<Vec<u8>> {
    let len = BLOCK_HEADER_LEN + entry.header.stored_len as usize;
    let mut bytes = Vec::with_capacity(len);
    inner.take(len as u64).read_to_end(&mut bytes)?;
    if bytes.len() < len {
        return Err(Error::corrupt(
            "block",
            entry.file_offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        ));
    }
    Ok(bytes)
}

fn read_block_part<R: Read>(inner: &mut R, buf: &mut [u8], entry: &BlockEntry) -> Result<()> {
    if read_full(inner, buf)? < buf.len() {
        return Err(Error::corrupt(
            "block",
            entry.file_offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        ));
    }
    Ok(())
}

/// The last decoded block of one stream, for small sequential reads at arbitrary positions
/// ([`Reader::read_at`]) without decoding a block once per read. Owns no reference to the
/// reader, so it can live beside one (in a binding's file object, say).
#[derive(Debug, Default)]
pub struct BlockCache {
    cached: Option<(u32, u64, Vec<u8>)>,
}

impl BlockCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of `stream` at `pos` that the cache holds.
    fn hit(&self, stream: u32, pos: u64) -> Option<&[u8]> {
        match &self.cached {
            Some((s, start, b)) if *s == stream && (*start..*start + b.len() as u64).contains(&pos) => {
                Some(&b[(pos - start) as usize..])
            }
            _ => None,
        }
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Reads up to `out.len()` bytes of `stream` at raw offset `pos`; returns how many (0 at
    /// the end of the stream). Small reads are served from the block held in `cache`; reads of
    /// two blocks or more are decoded straight into `out`, in parallel.
    pub fn read_at(&mut self, stream: u32, pos: u64, out: &mut [u8], cache: &mut BlockCache) -> Result<usize> {
        let len = self.stream_len(stream)?;
        if pos >= len || out.is_empty() {
            return Ok(0);
        }
        let want = (len - pos).min(out.len() as u64) as usize;
        if let Some(held) = cache.hit(stream, pos) {
            let n = want.min(held.len());
            out[..n].copy_from_slice(&held[..n]);
            return Ok(n);
        }
        let range = self.covering(stream, pos, pos + 1)?;
        let entry = self.index.footer.blocks[self.index.stream_blocks[stream as usize][range.start]];
        if want >= 2 * entry.header.raw_len as usize {
            self.read_range_into(stream, pos, &mut out[..want])?;
            return Ok(want);
        }
        let mut buf = match cache.cached.take() {
            Some((_, _, v)) => v,
            None => Vec::new(),
        };
        buf.resize(entry.header.raw_len as usize, 0);
        self.read_range_into(stream, entry.raw_offset, &mut buf)?;
        cache.cached = Some((stream, entry.raw_offset, buf));
        let held = cache.hit(stream, pos).expect("block just loaded covers pos");
        let n = want.min(held.len());
        out[..n].copy_from_slice(&held[..n]);
        Ok(n)
    }
}

/// One stream of a [`Reader`] as a `Read + Seek`; keeps the last decoded block.
#[derive(Debug)]
pub struct StreamReader<'r, R> {
    reader: &'r mut Reader<R>,
    stream: u32,
    len: u64,
    pos: u64,
    cache: BlockCache,
}

impl<R: Read + Seek> StreamReader<'_, R> {
    /// Decoded length of the stream.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<R: Read + Seek> Read for StreamReader<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read_at(self.stream, self.pos, out, &mut self.cache)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for StreamReader<'_, R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the stream",
            )),
        }
    }
}
