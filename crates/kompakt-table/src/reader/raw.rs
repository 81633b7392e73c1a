//! A stream's raw bytes: the blocks covering them read by position and decoded, into this
//! thread's scratch buffers.

use super::TableReader;
use kompakt::stream::{BlockDecoder, BlockEntry, ReadAt};
use kompakt::{Error, Result};
use std::cell::RefCell;

thread_local! {
    static DECODER: RefCell<BlockDecoder> = RefCell::new(BlockDecoder::default());
    /// A page's stored blocks and its decoded bytes, reused from page to page: fresh buffers
    /// cost an allocation and a zero fill each.
    /// Not shortened for a shorter page (see [`fit`]); freed past [`SCRATCH_KEEP`].
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Scratch buffers larger than this are freed after use rather than kept by the thread.
const SCRATCH_KEEP: usize = 8 << 20;

impl TableReader {
    /// Calls `f` with the raw (decoded) bytes `start..end` of a stream, read with positional
    /// reads into this thread's scratch buffers.
    pub(super) fn with_raw<T>(
        &self,
        stream: u32,
        start: u64,
        end: u64,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<T> {
        // Taken, not borrowed: `f` may read another stream (a dictionary) on this thread.
        let (mut stored, mut raw) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        let result = self
            .read_raw_into(stream, start, end, &mut stored, &mut raw)
            .and_then(|len| f(&raw[..len]));
        for buf in [&mut stored, &mut raw] {
            if buf.capacity() > SCRATCH_KEEP {
                *buf = Vec::new();
            }
        }
        SCRATCH.with(|s| *s.borrow_mut() = (stored, raw));
        result
    }

    /// Reads raw bytes `start..end` of a stream into the first bytes of `out` (grown to hold
    /// them), through `stored`; returns how many.
    fn read_raw_into(
        &self,
        stream: u32,
        start: u64,
        end: u64,
        stored: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let len = usize::try_from(end.saturating_sub(start)).map_err(|_| Error::OutOfRange {
            detail: "a page larger than memory".into(),
        })?;
        let out = fit(out, len)?;
        if len == 0 {
            return Ok(0);
        }
        let blocks: Vec<BlockEntry> = self.index.covering_blocks(stream, start, end)?;
        if blocks.len() > 1 && len >= PARALLEL_PAGE && rayon::current_thread_index().is_some() {
            return self.read_blocks_in_parallel(&blocks, start, end, out).map(|()| len);
        }
        for b in blocks {
            let lo = start.max(b.raw_offset);
            let hi = end.min(b.raw_offset + u64::from(b.header.raw_len));
            let dst = &mut out[(lo - start) as usize..(hi - start) as usize];
            self.decode_block(&b, stored, (lo - b.raw_offset) as usize, dst)?;
        }
        Ok(len)
    }

    /// Reads block `b` into `stored` and decodes its bytes from `skip` on into `dst`.
    fn decode_block(&self, b: &BlockEntry, stored: &mut Vec<u8>, skip: usize, dst: &mut [u8]) -> Result<()> {
        let stored = fit(
            stored,
            kompakt::stream::format::BLOCK_HEADER_LEN + b.header.stored_len as usize,
        )?;
        read_exact_at(self.source.as_ref(), stored, b.file_offset)?;
        DECODER.with(|d| d.borrow_mut().decode_entry(b, stored, self.verify, skip, dst))
    }
}

/// Pages of at least this many bytes in several blocks decode their blocks in parallel when
/// the read runs on a pool: a table of long text has few pages (three of 5.4 MB for 38,350
/// Debian changelog entries), fewer than a pool has threads to decode them.
const PARALLEL_PAGE: usize = 2 << 20;

impl TableReader {
    /// As [`read_raw_into`](Self::read_raw_into), each block on a thread of the current pool,
    /// into its own part of `out`, through a buffer of that thread's.
    fn read_blocks_in_parallel(&self, blocks: &[BlockEntry], start: u64, end: u64, out: &mut [u8]) -> Result<()> {
        use rayon::prelude::*;
        thread_local! {
            static STORED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        // The blocks cover start..end in order, one after another: each gets the next part.
        let mut parts = Vec::with_capacity(blocks.len());
        let mut rest = out;
        let mut at = start;
        for b in blocks {
            let lo = start.max(b.raw_offset);
            let hi = end.min(b.raw_offset + u64::from(b.header.raw_len));
            if lo != at || hi < lo {
                return Err(Error::corrupt(
                    "block",
                    b.file_offset,
                    "blocks of a stream that overlap or leave a gap",
                ));
            }
            let (part, tail) = std::mem::take(&mut rest).split_at_mut((hi - lo) as usize);
            parts.push((b, part, (lo - b.raw_offset) as usize));
            rest = tail;
            at = hi;
        }
        parts.into_par_iter().try_for_each(|(b, dst, skip)| {
            STORED.with(|stored| {
                let stored = &mut *stored.borrow_mut();
                let decoded = self.decode_block(b, stored, skip, dst);
                if stored.capacity() > SCRATCH_KEEP {
                    *stored = Vec::new();
                }
                decoded
            })
        })
    }
}

/// `buf`'s first `len` bytes, grown to hold them when shorter, failing (not aborting) when the
/// memory is not there. Only bytes past its length are zero-filled: a page's bytes are all
/// written before they are read (a stream's blocks cover it without gaps, which reading its
/// footer checks), so what an earlier page left is never seen. Truncating to each page and
/// filling again cost a zero fill of every long page after a short one: 3.6 of the 6.6 % of
/// samples in zero fills when reading the Debian changelogs, whose pages of text are 5.4 MB.
fn fit(buf: &mut Vec<u8>, len: usize) -> Result<&mut [u8]> {
    if len > buf.len() {
        buf.try_reserve_exact(len - buf.len())
            .map_err(|_| Error::OverLimit(format!("a page of {len} bytes does not fit in memory")))?;
        buf.resize(len, 0);
    }
    Ok(&mut buf[..len])
}

/// The block at `offset` from `source`; a source that ends first is a damaged (or changed)
/// file.
fn read_exact_at(source: &dyn ReadAt, buf: &mut [u8], offset: u64) -> Result<()> {
    source.read_exact_at(buf, offset).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::corrupt(
            "block",
            offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        ),
        _ => e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn scratch_keeps_its_length_and_gives_each_page_its_own() {
        let mut buf = Vec::new();
        fit(&mut buf, 5).unwrap().copy_from_slice(b"abcde");
        // A shorter page: its bytes only, the buffer kept as long.
        assert_eq!(fit(&mut buf, 2).unwrap(), b"ab");
        assert_eq!(buf.len(), 5);
        // A longer one: the old bytes, then zeros past them (the caller overwrites all).
        assert_eq!(fit(&mut buf, 8).unwrap(), b"abcde\0\0\0");
        assert!(fit(&mut buf, 0).unwrap().is_empty());
        assert!(
            fit(&mut buf, usize::MAX).is_err(),
            "too large is an error, not an abort"
        );
    }
}
