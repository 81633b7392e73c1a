//! Small reads at any position of a stream, served from the last decoded block
//! ([`BlockCache`]), and [`StreamReader`], one stream as a `Read + Seek`.

use super::Reader;
use crate::error::Result;
use std::io::{self, Read, Seek, SeekFrom};

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

impl<R: Read + Seek> Reader<R> {
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
