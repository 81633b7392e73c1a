//! Where a read gets its blocks: read in turn from a `Read + Seek`, borrowed from a file in
//! memory, or read by the decoding threads themselves with positional reads; with hints to the
//! source of the blocks coming next.

use crate::error::{Error, Result};
use crate::stream::format::{BlockEntry, BLOCK_HEADER_LEN};
use crate::stream::sequential::read_full;
use crate::stream::source::ReadAt;
use std::borrow::Cow;
use std::io::{self, Read, Seek, SeekFrom};

/// How far ahead of its decoders a read of many blocks tells its source which blocks come
/// next ([`ReadAt::prefetch`]), in stored bytes: a remote source then has requests in flight
/// while the blocks before decode. Files and memory ignore the hint.
const READAHEAD: u64 = 32 << 20;

/// The hints of one read: a window of [`READAHEAD`] bytes of blocks at a time, given when the
/// read reaches the window before it, so one is always on its way.
pub(super) struct Readahead<'l> {
    list: &'l [usize],
    blocks: &'l [BlockEntry],
    /// Blocks (positions in `list`) hinted so far.
    hinted: usize,
    /// Where the read next hints a window: the start of the last window hinted.
    refill_at: usize,
}

impl<'l> Readahead<'l> {
    pub(super) fn new(list: &'l [usize], blocks: &'l [BlockEntry]) -> Self {
        Readahead {
            list,
            blocks,
            hinted: 0,
            refill_at: 0,
        }
    }

    /// Called as block `k` of the read is handed out.
    pub(super) fn before<R: Read + Seek>(&mut self, k: usize, source: &BlockSource<'_, R>) {
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
pub(super) enum BlockSource<'s, R> {
    File {
        inner: &'s mut R,
        next: Option<u64>,
        /// `inner` as a positional source, to hint at the blocks coming ([`Readahead`]).
        hints: for<'x> fn(&'x R) -> Option<&'x dyn ReadAt>,
    },
    Memory(&'s [u8]),
    /// A source the decoding threads read blocks from themselves
    /// ([`Job::Fetch`](super::decode::Job::Fetch)).
    Positional(&'s dyn ReadAt),
}

impl<'s, R: Read + Seek> BlockSource<'s, R> {
    pub(super) fn new(
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
    pub(super) fn read_raw_into(
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
    pub(super) fn block(&mut self, entry: &BlockEntry) -> Result<Cow<'s, [u8]>> {
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

/// Reads `buf.len()` bytes of block `entry`, from `at` bytes into it, with a positional read.
pub(super) fn read_block_at(source: &dyn ReadAt, buf: &mut [u8], entry: &BlockEntry, at: u64) -> Result<()> {
    match source.read_exact_at(buf, entry.file_offset + at) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(Error::corrupt(
            "block",
            entry.file_offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        )),
        other => Ok(other?),
    }
}
