//! The block pipeline: a batch of input cut into blocks, compressed on several threads (or
//! stored raw when the writer's pace says so) and written in order, each recorded in the index.

use super::{StreamId, Writer};
use crate::codec::{Codec, CodecSpec};
use crate::error::{Error, Result};
use crate::stream::block::{BlockSettings, EncodedBlock, Payload};
use crate::stream::format::{BlockEntry, BlockHeader, BLOCK_HEADER_LEN};
use crate::stream::pace::Pace;
use crate::stream::parallel::ordered_map;
use crate::stream::source::ReadAt;
use std::io::{self, Write};
use std::sync::Mutex;

impl<W: Write> Writer<W> {
    /// Compresses `input` as consecutive blocks of `id` and writes them in order; `progress`
    /// hears the bytes written so far.
    pub(super) fn encode_blocks(
        &mut self,
        id: StreamId,
        input: Input<'_>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        self.write_header()?;
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
                    let mut enc = crate::stream::pool::take_encoder();
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
                    crate::stream::pool::give_encoder(enc);
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
            || (crate::stream::pool::take_encoder(), Vec::new()),
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
            |(enc, _)| crate::stream::pool::give_encoder(enc),
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
pub(super) enum Input<'d> {
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
    pub(super) fn len(&self) -> u64 {
        match self {
            Input::Memory(data) => data.len() as u64,
            Input::Source { len, .. } => *len,
        }
    }

    /// At most `most` bytes from `at` on.
    pub(super) fn part(&self, at: u64, most: u64) -> Input<'d> {
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
pub(super) fn read_input(source: &dyn ReadAt, buf: &mut [u8], at: u64) -> Result<()> {
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
