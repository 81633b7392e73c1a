//! Where readers get their bytes: positional reads of byte ranges ([`ReadAt`]).
//!
//! Every reader of kompakt files (the block stream's [`Reader`](super::Reader), the table
//! reader) reads through this one trait, so a new kind of source (object storage, a remote
//! URL) plugs in here: implement [`ReadAt`], and [`Reader::at`](super::Reader::at) or the
//! table reader opens it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

/// A source of bytes read by position: a file, memory, or a remote object (crate
/// `kompakt-remote`).
///
/// Reads may come from several threads at once, so they take `&self` and never move a shared
/// cursor.
pub trait ReadAt: Send + Sync {
    /// The source's length in bytes.
    fn size(&self) -> io::Result<u64>;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`; an error of kind
    /// `UnexpectedEof` when the source ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;

    /// The whole source, when it is in memory: readers then decode blocks where they lie.
    fn as_bytes(&self) -> Option<&[u8]> {
        None
    }

    /// A hint that the byte ranges `ranges` (ascending, not overlapping) will be read soon:
    /// a remote source fetches them at once, merged and in parallel, where reading them one
    /// by one would pay a round trip each. Local sources ignore it.
    fn prefetch(&self, ranges: &[Range<u64>]) {
        let _ = ranges;
    }
}

impl ReadAt for File {
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    #[cfg(windows)]
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(self, buf, offset)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

impl ReadAt for [u8] {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl ReadAt for Vec<u8> {
    fn size(&self) -> io::Result<u64> {
        self.as_slice().size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.as_slice().read_exact_at(buf, offset)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Arc<T> {
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        (**self).as_bytes()
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        (**self).prefetch(ranges)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        (**self).as_bytes()
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        (**self).prefetch(ranges)
    }
}

/// A [`ReadAt`] source as a `Read + Seek` stream with a cursor of its own: how the block
/// stream's reader, which reads sequentially, reads any source.
#[derive(Debug)]
pub struct SourceCursor<S> {
    source: S,
    pos: u64,
    len: u64,
}

impl<S: ReadAt> SourceCursor<S> {
    /// A cursor at the start of `source`.
    pub fn new(source: S) -> io::Result<Self> {
        let len = source.size()?;
        Ok(SourceCursor { source, pos: 0, len })
    }

    /// Size of the source in bytes, as found when the cursor was made.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the source is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        &self.source
    }

    /// The whole source, when it is in memory (for [`Reader::with_memory`](super::Reader::with_memory)).
    pub fn in_memory(&self) -> Option<&[u8]> {
        self.source.as_bytes()
    }

    /// The source, for positional reads on many threads (for
    /// [`Reader::with_positional`](super::Reader::with_positional)).
    pub fn positional(&self) -> Option<&dyn ReadAt> {
        Some(&self.source)
    }
}

impl<S: ReadAt> Read for SourceCursor<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        self.source.read_exact_at(&mut buf[..n], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<S: ReadAt> Seek for SourceCursor<S> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_reads_the_same_ranges() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &data).unwrap();
        let shared: Arc<dyn ReadAt> = Arc::new(data.clone());
        let sources: [&dyn ReadAt; 4] = [&file, &data, &&data[..], &shared];
        for source in sources {
            assert_eq!(source.size().unwrap(), 10_000);
            let mut buf = [0u8; 100];
            source.read_exact_at(&mut buf, 9_900).unwrap();
            assert_eq!(buf[..], data[9_900..]);
            let err = source.read_exact_at(&mut buf, 9_901).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
            assert!(source.read_exact_at(&mut buf, u64::MAX).is_err());
        }
        assert!(file.as_bytes().is_none() && shared.as_bytes().is_some());
    }

    #[test]
    fn a_cursor_reads_and_seeks_like_a_file() {
        let data: Vec<u8> = (0..=255u8).collect();
        let mut c = SourceCursor::new(&data[..]).unwrap();
        let mut buf = [0u8; 10];
        c.seek(SeekFrom::End(-5)).unwrap();
        assert_eq!(c.read(&mut buf).unwrap(), 5);
        assert_eq!(buf[..5], data[251..]);
        assert_eq!(c.read(&mut buf).unwrap(), 0, "at the end");
        c.seek(SeekFrom::Start(300)).unwrap();
        assert_eq!(c.read(&mut buf).unwrap(), 0, "past the end");
        assert!(c.seek(SeekFrom::Current(-1000)).is_err());
    }

    #[test]
    fn the_reader_opens_any_source() {
        use crate::stream::{ReadOptions, Reader, WriteOptions};
        let data = b"kompakt ".repeat(100_000);
        let packed = crate::compress(&data, &WriteOptions::default().block_size(64 << 10)).unwrap();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &packed).unwrap();
        let shared: Arc<dyn ReadAt> = Arc::new(packed.clone());
        let check = |mut r: Reader<SourceCursor<&dyn ReadAt>>| {
            assert_eq!(r.read_stream(0).unwrap(), data);
            let mut part = vec![0u8; 1000];
            r.read_range_into(0, 500_000, &mut part).unwrap();
            assert_eq!(part[..], data[500_000..501_000]);
        };
        for source in [&file as &dyn ReadAt, &packed, &shared] {
            check(Reader::at(source, ReadOptions::default()).unwrap());
        }
        let cut = &packed[..packed.len() - 1];
        assert!(Reader::at(cut, ReadOptions::default()).is_err_and(|e| e.is_corruption()));
    }

    #[test]
    fn a_reader_opens_again_with_the_index_it_read() {
        use crate::stream::{ReadOptions, Reader, WriteOptions};
        let data = b"again ".repeat(50_000);
        let packed = crate::compress(&data, &WriteOptions::default().block_size(64 << 10)).unwrap();
        let first = Reader::at(&packed[..], ReadOptions::default()).unwrap();
        let index = first.index();
        let mut again = Reader::at_with_index(&packed[..], Arc::clone(&index), ReadOptions::default()).unwrap();
        assert_eq!(again.read_stream(0).unwrap(), data);
        assert_eq!(again.blocks(), first.blocks());
        // Bytes of another size are refused; a changed block fails its checksum.
        let cut = &packed[..packed.len() - 1];
        assert!(
            Reader::at_with_index(cut, Arc::clone(&index), ReadOptions::default()).is_err_and(|e| e.is_corruption())
        );
        let mut flipped = packed.clone();
        flipped[100] ^= 1;
        let mut bad = Reader::at_with_index(&flipped[..], index, ReadOptions::default()).unwrap();
        assert!(bad.read_stream(0).is_err_and(|e| e.is_corruption()));
    }
}
