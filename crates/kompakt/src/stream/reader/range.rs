//! Reads of byte ranges and whole streams: the blocks that cover a range are fetched in order
//! and decoded on several threads, straight into the caller's buffer or out to a `Write`.

use super::blocks::{BlockSource, Readahead};
use super::decode::{is_whole_raw, run_job, Job};
use super::Reader;
use crate::error::{Error, Result};
use crate::filter::Stores;
use crate::stream::format::{BlockEntry, BLOCK_HEADER_LEN};
use crate::stream::parallel::ordered_map;
use crate::stream::source::ReadAt;
use std::borrow::Cow;
use std::io::{Read, Seek, Write};
use std::sync::Arc;

impl<R: Read + Seek> Reader<R> {
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
        let index = Arc::clone(&self.index);
        let mut source = match &index.image {
            Some(image) => BlockSource::Memory(image),
            None => BlockSource::new(&mut self.inner, self.in_memory, positional, self.positional),
        };
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
            || crate::stream::pool::take_decoder_with(&dictionaries),
            |dec, job| run_job(dec, job, verify),
            crate::stream::pool::give_decoder,
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
        let index = Arc::clone(&self.index);
        let mut source = match &index.image {
            Some(image) => BlockSource::Memory(image),
            None => BlockSource::new(&mut self.inner, self.in_memory, positional, self.positional),
        };
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
            || crate::stream::pool::take_decoder_with(&dictionaries),
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
            crate::stream::pool::give_decoder,
            |buf| {
                out.write_all(&buf)?;
                written += buf.len() as u64;
                progress(written);
                Ok(())
            },
        )?;
        Ok(written)
    }
}

/// A block's bytes as the producing thread hands them over: read, or for the decoding
/// thread to read from the source.
enum Fetched<'s> {
    Read(Cow<'s, [u8]>),
    Later(&'s dyn ReadAt),
}
