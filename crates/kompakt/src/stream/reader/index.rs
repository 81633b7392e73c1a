//! Opening a file: reading and checking its header, trailer and footer into a [`FileIndex`],
//! and finding in that index the blocks a byte range of a stream needs.

use super::{ReadOptions, Reader};
use crate::codec::{CodecId, Dictionaries, DictionaryId, DICTIONARY_ID_LEN};
use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use crate::stream::compact;
use crate::stream::format::{
    BlockEntry, FileHeader, Footer, StreamInfo, Trailer, BLOCK_HEADER_LEN, FILE_HEADER_LEN, FOOTER_HEADER_LEN,
    TRAILER_LEN,
};
use crate::stream::sequential::read_full;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

/// What opening a file reads and checks: its header and its index. Readers of the same file
/// may share one ([`Reader::index`], [`Reader::at_with_index`]), so that opening the file again
/// reads and parses none of it; a table's index is tens of thousands of entries.
#[derive(Debug)]
pub struct FileIndex {
    pub(super) header: FileHeader,
    pub(super) footer: Footer,
    /// For each stream, indices into `footer.blocks`, in raw-offset order.
    pub(super) stream_blocks: Vec<Vec<usize>>,
    pub(super) file_len: u64,
    /// For a compact file, the format-1 file it stands for, up to its block's end: its block
    /// is read from here ([`super::super::compact`]).
    pub(super) image: Option<Arc<[u8]>>,
    /// XXH3-64 of the footer as stored (the trailer's checksum of it); of the whole file for a
    /// compact file.
    pub(super) fingerprint: u64,
}

impl FileIndex {
    /// A 64-bit fingerprint of the file's index: the footer's checksum, which covers every
    /// block's checksum, the streams and the metadata (a compact file's: of its bytes). Two
    /// opens of an unchanged file agree; any write that changes the file changes it (short of
    /// a 64-bit hash collision). What front ends key what they derive from an index by.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Size of the file the index describes, in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Heap bytes the index holds, roughly: what keeping it costs a cache.
    pub fn heap_size(&self) -> usize {
        self.footer.blocks.len() * (std::mem::size_of::<BlockEntry>() + std::mem::size_of::<usize>())
            + self.footer.metadata.len()
            + self.image.as_ref().map_or(0, |i| i.len())
            + self.footer.streams.len() * std::mem::size_of::<StreamInfo>()
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Opens a file: checks header, trailer and footer checksums and validates the index.
    pub fn new(mut inner: R, opts: ReadOptions) -> Result<Self> {
        let file_len = inner.seek(SeekFrom::End(0))?;
        let mut head = [0u8; FILE_HEADER_LEN];
        inner.seek(SeekFrom::Start(0))?;
        let got = read_full(&mut inner, &mut head)?;
        if got == FILE_HEADER_LEN && compact::is_compact_header(&head) {
            return Self::open_compact(inner, &head, file_len, opts);
        }
        let min = (FILE_HEADER_LEN + FOOTER_HEADER_LEN + 16 + 8 + TRAILER_LEN) as u64;
        if file_len < min {
            let found: [u8; 4] = head[..4].try_into().expect("4 bytes");
            if got >= 4 && found != crate::stream::format::MAGIC {
                return Err(Error::BadMagic {
                    what: "header",
                    found,
                    expected: crate::stream::format::MAGIC,
                });
            }
            return Err(Error::Truncated {
                what: "file",
                needed: min,
                available: file_len,
            });
        }
        let header = FileHeader::decode(&head)?;
        if header.major == compact::COMPACT_MAJOR {
            return Err(Error::corrupt(
                "file header",
                0,
                "a compact file whose header is damaged",
            ));
        }
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
                image: None,
                fingerprint: trailer.footer_checksum,
            }),
            opts,
            in_memory: |_| None,
            positional: |_| None,
            dictionaries: Dictionaries::none(),
        })
    }

    /// Opens a compact file (format 3.0) as the format-1 file it stands for: the whole file is
    /// read (at most 1 MiB and 28 bytes) and its block is then read from memory.
    fn open_compact(mut inner: R, head: &[u8; FILE_HEADER_LEN], file_len: u64, opts: ReadOptions) -> Result<Self> {
        let max = (compact::COMPACT_HEADER_LEN + compact::COMPACT_MAX_RAW) as u64;
        let mut file = Vec::with_capacity(file_len.min(max) as usize);
        file.extend_from_slice(head);
        // One byte past the limit at most: enough to know the file is too long.
        (&mut inner)
            .take(max + 1 - FILE_HEADER_LEN as u64)
            .read_to_end(&mut file)?;
        let opened = compact::open(&file)?;
        Ok(Reader {
            inner,
            index: Arc::new(FileIndex {
                header: opened.header,
                stream_blocks: vec![vec![0]],
                footer: opened.footer,
                file_len,
                image: Some(opened.image.into()),
                fingerprint: xxh3_64(&file),
            }),
            opts,
            in_memory: |_| None,
            positional: |_| None,
            dictionaries: Dictionaries::none(),
        })
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
        // A compact file's block lies in its image (the offsets are the image's).
        let memory = match &index.image {
            Some(image) => Some(&image[..]),
            None => (self.in_memory)(&self.inner),
        };
        if let Some(file) = memory {
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

    /// Blocks of `stream` that cover raw bytes `start..end`, as positions in its block list.
    pub(super) fn covering(&self, stream: u32, start: u64, end: u64) -> Result<std::ops::Range<usize>> {
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
    /// [`BlockDecoder::decode_entry`](crate::stream::BlockDecoder::decode_entry)).
    pub fn covering_blocks(&self, stream: u32, start: u64, end: u64) -> Result<Vec<BlockEntry>> {
        let range = self.covering(stream, start, end)?;
        Ok(self.index.stream_blocks[stream as usize][range]
            .iter()
            .map(|&i| self.index.footer.blocks[i])
            .collect())
    }
}
