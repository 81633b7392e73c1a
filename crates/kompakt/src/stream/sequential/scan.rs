//! Reading a kompakt file's parts in file order from any `Read`: the header, each block's
//! header and payload, then the footer and trailer, checked against the blocks seen. The input
//! is passed to every call rather than owned, so a caller can feed it from somewhere that only
//! exists during a call (a JVM input stream).

use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use crate::stream::compact;
use crate::stream::format::{
    BlockEntry, BlockHeader, FileHeader, Footer, Trailer, BLOCK_HEADER_LEN, BLOCK_TAG, FILE_HEADER_LEN,
    FOOTER_HEADER_LEN, FOOTER_TAG, TRAILER_LEN,
};
use std::collections::HashMap;
use std::io::{self, Read};

/// A block as read from the input: its header bytes, its fields and its file offset (the
/// payload goes to a buffer the caller gives).
pub(crate) struct ScannedBlock {
    pub header: [u8; BLOCK_HEADER_LEN],
    pub fields: BlockHeader,
    pub offset: u64,
}

/// The state of one file being read front to back.
pub(crate) struct BlockScanner {
    file_header: FileHeader,
    offset: u64,
    seen: Vec<BlockEntry>,
    raw_offsets: HashMap<u32, u64>,
    footer_head: Option<[u8; FOOTER_HEADER_LEN]>,
    /// A compact file, read whole at the start (it has no footer to end it: its payload runs
    /// to the end of the input), and its length.
    compact: Option<Box<(compact::Opened, u64)>>,
}

impl BlockScanner {
    /// Reads and checks the file header; `first` is its first byte when the caller has already
    /// read it (to learn whether another file follows). A compact file is read whole, to the
    /// end of the input, so it cannot be one of several files read in a row: with
    /// `alone` false it is refused.
    pub fn start<R: Read + ?Sized>(input: &mut R, first: Option<u8>, alone: bool) -> Result<Self> {
        let mut head = [0u8; FILE_HEADER_LEN];
        let from = match first {
            Some(b) => {
                head[0] = b;
                1
            }
            None => 0,
        };
        read_exact(input, &mut head[from..], "file header")?;
        let file_header = FileHeader::decode(&head)?;
        let compact = if file_header.major == compact::COMPACT_MAJOR {
            if !alone {
                return Err(Error::corrupt(
                    "file header",
                    0,
                    "a compact file (format 3.0) ends only where its input does, so it cannot be one of \
                     several files read in a row",
                ));
            }
            let max = (compact::COMPACT_HEADER_LEN + compact::COMPACT_MAX_RAW) as u64;
            let mut file = head.to_vec();
            // One byte past the limit at most: enough to know the input is too long.
            input.take(max + 1 - FILE_HEADER_LEN as u64).read_to_end(&mut file)?;
            let len = file.len() as u64;
            Some(Box::new((compact::open(&file)?, len)))
        } else {
            None
        };
        Ok(BlockScanner {
            file_header,
            offset: FILE_HEADER_LEN as u64,
            seen: Vec::new(),
            raw_offsets: HashMap::new(),
            footer_head: None,
            compact,
        })
    }

    /// Reads the next block into `payload` (replacing its content), or `None` once the footer
    /// begins. The payload buffer grows with the bytes that arrive, so a header that merely
    /// claims 64 MiB in a short input costs nothing.
    pub fn next_block<R: Read + ?Sized>(
        &mut self,
        input: &mut R,
        payload: &mut Vec<u8>,
    ) -> Result<Option<ScannedBlock>> {
        if self.footer_head.is_some() {
            return Ok(None);
        }
        if let Some(compact) = &self.compact {
            let opened = &compact.0;
            if !self.seen.is_empty() {
                return Ok(None);
            }
            let entry = opened.footer.blocks[0];
            let header: [u8; BLOCK_HEADER_LEN] = opened.image[FILE_HEADER_LEN..FILE_HEADER_LEN + BLOCK_HEADER_LEN]
                .try_into()
                .expect("a block header");
            payload.clear();
            payload.extend_from_slice(&opened.image[FILE_HEADER_LEN + BLOCK_HEADER_LEN..]);
            self.seen.push(entry);
            return Ok(Some(ScannedBlock {
                header,
                fields: entry.header,
                offset: entry.file_offset,
            }));
        }
        let offset = self.offset;
        let mut tag = [0u8; 1];
        read_exact(input, &mut tag, "block or footer")?;
        match tag[0] {
            BLOCK_TAG => {
                let mut header = [0u8; BLOCK_HEADER_LEN];
                header[0] = BLOCK_TAG;
                read_exact(input, &mut header[1..], "block header")?;
                let fields = BlockHeader::decode(&header, offset)?;
                if !self.file_header.allows(fields.codec) {
                    return Err(Error::corrupt(
                        "block header",
                        offset,
                        "a zstd-dict block in a format 1 file (dictionaries came with format 2.0)",
                    ));
                }
                let stored = u64::from(fields.stored_len);
                payload.clear();
                payload.reserve(stored.min(1 << 20) as usize);
                input.take(stored).read_to_end(payload)?;
                if payload.len() as u64 != stored {
                    return Err(Error::Truncated {
                        what: "block payload",
                        needed: stored,
                        available: payload.len() as u64,
                    });
                }
                let raw_offset = self.raw_offsets.entry(fields.stream).or_insert(0);
                self.seen.push(BlockEntry {
                    file_offset: offset,
                    raw_offset: *raw_offset,
                    header: fields,
                });
                *raw_offset += u64::from(fields.raw_len);
                self.offset += (BLOCK_HEADER_LEN as u64) + stored;
                Ok(Some(ScannedBlock { header, fields, offset }))
            }
            FOOTER_TAG => {
                let mut h = [0u8; FOOTER_HEADER_LEN];
                h[0] = FOOTER_TAG;
                read_exact(input, &mut h[1..], "footer header")?;
                self.footer_head = Some(h);
                Ok(None)
            }
            other => Err(Error::corrupt(
                "block header",
                offset,
                format!("tag is {other:#04x}, expected a block or the footer"),
            )),
        }
    }

    /// After [`next_block`](Self::next_block) returned `None`: reads the footer body and the
    /// trailer and checks them, and that the footer indexes exactly the blocks seen. The input
    /// is left just after the trailer, whose end offset is returned with the footer.
    pub fn finish<R: Read + ?Sized>(self, input: &mut R) -> Result<(Footer, u64)> {
        if let Some(compact) = self.compact {
            let (opened, len) = *compact;
            return Ok((opened.footer, len));
        }
        let footer_offset = self.offset;
        let head = self
            .footer_head
            .ok_or_else(|| Error::corrupt("file", footer_offset, "no footer"))?;
        let body_len = Footer::body_len(&head, footer_offset)?;
        let mut footer = head.to_vec();
        // Grows with the bytes actually present, never to a size the input merely claims.
        let got = input.take(body_len).read_to_end(&mut footer)?;
        if got as u64 != body_len {
            return Err(Error::Truncated {
                what: "footer",
                needed: body_len,
                available: got as u64,
            });
        }
        let trailer_offset = footer_offset + footer.len() as u64;
        let mut tail = [0u8; TRAILER_LEN];
        read_exact(input, &mut tail, "trailer")?;
        let trailer = Trailer::decode(&tail, trailer_offset)?;
        if trailer.footer_offset != footer_offset || xxh3_64(&footer) != trailer.footer_checksum {
            return Err(Error::ChecksumMismatch {
                what: "footer",
                offset: footer_offset,
            });
        }
        let footer = Footer::decode(&footer, footer_offset)?;
        if footer.blocks != self.seen {
            return Err(Error::corrupt(
                "footer",
                footer_offset,
                "block index disagrees with the blocks in the file",
            ));
        }
        Ok((footer, trailer_offset + TRAILER_LEN as u64))
    }
}

/// One more byte of the input, if there is one: whether something follows a file.
pub(crate) fn next_byte<R: Read + ?Sized>(input: &mut R) -> io::Result<Option<u8>> {
    let mut b = [0u8; 1];
    Ok((read_full(input, &mut b)? == 1).then_some(b[0]))
}

pub(crate) fn read_exact<R: Read + ?Sized>(input: &mut R, buf: &mut [u8], what: &'static str) -> Result<()> {
    let n = read_full(input, buf)?;
    if n < buf.len() {
        return Err(Error::Truncated {
            what,
            needed: buf.len() as u64,
            available: n as u64,
        });
    }
    Ok(())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
