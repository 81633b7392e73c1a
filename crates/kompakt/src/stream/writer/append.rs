//! Appending to a stream: data from memory or from a source, staged into batches when it comes
//! in small writes, hashed when the file computes a content hash, and blocks encoded by the
//! caller.

use super::pipeline::{read_input, Input};
use super::{StreamId, Writer, STAGED_BLOCKS};
use crate::error::{Error, Result};
use crate::stream::format::{BlockEntry, BLOCK_HEADER_LEN};
use crate::stream::source::ReadAt;
use std::io::Write;

/// Writes at least this large hash their content concurrently with compressing it.
const PARALLEL_HASH_MIN: usize = 8 << 20;

impl<W: Write> Writer<W> {
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

    /// Appends a block the caller encoded (with a [`BlockEncoder`](crate::stream::BlockEncoder), for
    /// stream `id`) to that stream.
    ///
    /// This lets a caller compress blocks of many streams on its own threads and write them in
    /// the order it chooses, such as a table writer encoding every column of a row group at
    /// once. The stream must have no staged bytes from [`write`](Writer::write) (they would
    /// come after this block), and the file must not compute a content hash (the raw bytes are
    /// not seen here).
    pub fn write_block(&mut self, id: StreamId, block: &crate::stream::EncodedBlock<'_>) -> Result<()> {
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
        self.write_header()?;
        let st = &mut self.streams[id.0 as usize];
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

    pub(super) fn flush_staged(&mut self, id: StreamId) -> Result<()> {
        let staged = std::mem::take(&mut self.streams[id.0 as usize].staged);
        let result = self.encode_blocks(id, Input::Memory(&staged), &mut |_| {});
        let st = &mut self.streams[id.0 as usize];
        st.staged = staged;
        st.staged.clear();
        result
    }
}
