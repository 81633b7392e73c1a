//! Byte layout of a kompakt file (format version 1). `docs/FORMAT.md` is the normative spec;
//! the tables here mirror it. All integers are little-endian.
//!
//! ```text
//! file    = header block* footer trailer
//! header  = 16 bytes                         (FileHeader)
//! block   = 24-byte block header, payload    (BlockHeader)
//! footer  = 16-byte footer header, body      (Footer: stream table, block index, metadata)
//! trailer = 32 bytes, ends with the magic    (Trailer)
//! ```

use crate::codec::CodecId;
use crate::error::{Error, Result};
use crate::filter::FilterSet;
use crate::hash::{xxh3_64, xxh3_64_parts};

/// First and last four bytes of every kompakt file.
pub const MAGIC: [u8; 4] = *b"KMPK";
/// Major format version of files without dictionaries; every reader of kompakt reads it.
pub const VERSION_MAJOR: u16 = 1;
/// Major format version of files with `zstd-dict` blocks (2.0 adds that codec and nothing
/// else): a writer given a dictionary writes it, so a reader that predates dictionaries
/// refuses the file asking for a newer kompakt instead of calling the codec id damage.
pub const VERSION_MAJOR_DICTIONARIES: u16 = 2;
/// The newest major version this build reads (it reads every one from 1 up to it; 3 is a
/// compact file, [`super::compact`]).
pub const MAX_VERSION_MAJOR: u16 = super::compact::COMPACT_MAJOR;
/// Minor format version written by this build. Every minor of a supported major M is read as
/// M.0: a reader refuses unknown flags, codecs, filters and reserved fields as damage, so a
/// minor version may change only what writers choose; anything new takes a new major.
pub const VERSION_MINOR: u16 = 0;

/// Largest raw block a file may declare (and the largest a writer may be asked for).
pub const MAX_BLOCK_SIZE: usize = 64 << 20;
/// Smallest block size a writer may be asked for.
pub const MIN_BLOCK_SIZE: usize = 64 << 10;
/// Largest footer a reader accepts (a 1 GiB index would describe ~30 million blocks).
pub const MAX_FOOTER_LEN: u64 = 1 << 30;

/// File header layout.
///
/// | offset | size | field                                     |
/// |--------|------|-------------------------------------------|
/// | 0      | 4    | magic `KMPK`                              |
/// | 4      | 2    | major version (1)                         |
/// | 6      | 2    | minor version (0)                         |
/// | 8      | 4    | flags (none defined; must be 0)           |
/// | 12     | 4    | low 32 bits of XXH3-64 of bytes 0..12     |
pub const FILE_HEADER_LEN: usize = 16;

/// Block header layout; the payload (`stored_len` bytes) follows it.
///
/// | offset | size | field                                                  |
/// |--------|------|--------------------------------------------------------|
/// | 0      | 1    | tag `0xB1`                                             |
/// | 1      | 1    | codec id (0 none, 1 lz4, 2 zstd, 3 gzip, 4 zlib, 5 zstd-dict) |
/// | 2      | 1    | filter bits (bit 0 shuffle, bit 1 delta)               |
/// | 3      | 1    | element size for the filters (1..=255)                 |
/// | 4      | 4    | stream id                                              |
/// | 8      | 4    | raw length (1..=64 MiB)                                |
/// | 12     | 4    | stored length (<= raw length; == raw length for codec none) |
/// | 16     | 8    | XXH3-64 of header bytes 0..16 followed by the payload  |
pub const BLOCK_HEADER_LEN: usize = 24;
/// Tag byte that starts a block header.
pub const BLOCK_TAG: u8 = 0xB1;

/// Footer header layout: a tag that tells a sequential reader the blocks have ended, then the
/// body length.
///
/// | offset | size | field                     |
/// |--------|------|---------------------------|
/// | 0      | 1    | tag `0xF0`                |
/// | 1      | 7    | reserved, zero            |
/// | 8      | 8    | body length               |
pub const FOOTER_HEADER_LEN: usize = 16;
/// Tag byte that starts the footer.
pub const FOOTER_TAG: u8 = 0xF0;
/// Bytes of one stream-table entry in the footer body.
pub const STREAM_ENTRY_LEN: usize = 16;
/// Bytes of one block-index entry in the footer body.
pub const BLOCK_ENTRY_LEN: usize = 32;

/// Trailer layout (the last 32 bytes of a file).
///
/// | offset | size | field                                  |
/// |--------|------|----------------------------------------|
/// | 0      | 8    | footer offset                          |
/// | 8      | 8    | footer length (header + body)          |
/// | 16     | 8    | XXH3-64 of the footer bytes            |
/// | 24     | 4    | low 32 bits of XXH3-64 of bytes 0..24  |
/// | 28     | 4    | magic `KMPK`                           |
pub const TRAILER_LEN: usize = 32;

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn check32(bytes: &[u8]) -> u32 {
    xxh3_64(bytes) as u32
}

/// The 32-bit checksum used by the file header and the trailer: the low half of XXH3-64.
pub fn header_checksum(bytes: &[u8]) -> u32 {
    check32(bytes)
}

/// The file header: format version and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl FileHeader {
    /// The header this build writes.
    pub const CURRENT: FileHeader = FileHeader {
        major: VERSION_MAJOR,
        minor: VERSION_MINOR,
    };

    /// The header of a file whose blocks may need dictionaries.
    pub const WITH_DICTIONARIES: FileHeader = FileHeader {
        major: VERSION_MAJOR_DICTIONARIES,
        minor: 0,
    };

    /// Whether blocks of this file may use `codec`: `zstd-dict` came with format 2.0 (and
    /// a compact file, 3.0, may hold it too).
    pub fn allows(&self, codec: CodecId) -> bool {
        codec != CodecId::ZstdDict || self.major >= VERSION_MAJOR_DICTIONARIES
    }

    /// Serializes the header.
    pub fn encode(&self) -> [u8; FILE_HEADER_LEN] {
        let mut b = [0u8; FILE_HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4..6].copy_from_slice(&self.major.to_le_bytes());
        b[6..8].copy_from_slice(&self.minor.to_le_bytes());
        let sum = check32(&b[0..12]);
        b[12..16].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks a header: magic, then checksum, then version and flags.
    pub fn decode(b: &[u8; FILE_HEADER_LEN]) -> Result<FileHeader> {
        let found: [u8; 4] = b[0..4].try_into().expect("4 bytes");
        if found != MAGIC {
            return Err(Error::BadMagic {
                what: "header",
                found,
                expected: MAGIC,
            });
        }
        if le_u32(b, 12) != check32(&b[0..12]) {
            return Err(Error::ChecksumMismatch {
                what: "file header",
                offset: 0,
            });
        }
        let (major, minor) = (le_u16(b, 4), le_u16(b, 6));
        if major == super::compact::COMPACT_MAJOR {
            // Bytes 8..12 of a compact file are its own fields, checked when it is opened.
            return Ok(FileHeader { major, minor });
        }
        if !(VERSION_MAJOR..=MAX_VERSION_MAJOR).contains(&major) {
            return Err(Error::UnsupportedVersion {
                major,
                minor,
                supported: MAX_VERSION_MAJOR,
            });
        }
        let flags = le_u32(b, 8);
        if flags != 0 {
            return Err(Error::corrupt("file header", 0, format!("unknown flags {flags:#x}")));
        }
        Ok(FileHeader { major, minor })
    }
}

/// What every block records about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Decoder needed.
    pub codec: CodecId,
    /// Filters to undo after decoding.
    pub filters: FilterSet,
    /// Element size the filters used.
    pub typesize: u8,
    /// Stream the block belongs to.
    pub stream: u32,
    /// Decoded length.
    pub raw_len: u32,
    /// Payload length in the file.
    pub stored_len: u32,
}

impl BlockHeader {
    /// Serializes the header, with the checksum over it and `payload`.
    pub fn encode(&self, payload: &[u8]) -> [u8; BLOCK_HEADER_LEN] {
        let mut b = [0u8; BLOCK_HEADER_LEN];
        b[0] = BLOCK_TAG;
        b[1] = self.codec as u8;
        b[2] = self.filters.bits();
        b[3] = self.typesize;
        b[4..8].copy_from_slice(&self.stream.to_le_bytes());
        b[8..12].copy_from_slice(&self.raw_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.stored_len.to_le_bytes());
        let sum = block_checksum(&b[0..16], payload);
        b[16..24].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and validates the fields of a block header; the checksum is checked separately
    /// (with [`verify_block`]) once the payload has been read.
    pub fn decode(b: &[u8; BLOCK_HEADER_LEN], offset: u64) -> Result<BlockHeader> {
        if b[0] != BLOCK_TAG {
            return Err(Error::corrupt(
                "block header",
                offset,
                format!("tag is {:#04x}, expected {BLOCK_TAG:#04x}", b[0]),
            ));
        }
        let h = BlockHeader {
            codec: CodecId::from_u8(b[1])
                .ok_or_else(|| Error::corrupt("block header", offset, format!("unknown codec id {}", b[1])))?,
            filters: FilterSet::from_bits(b[2])
                .ok_or_else(|| Error::corrupt("block header", offset, format!("unknown filter bits {:#04x}", b[2])))?,
            typesize: b[3],
            stream: le_u32(b, 4),
            raw_len: le_u32(b, 8),
            stored_len: le_u32(b, 12),
        };
        h.validate(offset)?;
        Ok(h)
    }

    #[inline]
    fn validate(&self, offset: u64) -> Result<()> {
        if self.is_valid() {
            Ok(())
        } else {
            Err(self.invalid(offset))
        }
    }

    /// Whether the fields agree with each other (what [`Self::invalid`] explains).
    #[inline]
    fn is_valid(&self) -> bool {
        self.raw_len != 0
            && self.raw_len as usize <= MAX_BLOCK_SIZE
            && self.stored_len <= self.raw_len
            && (self.codec != CodecId::None || self.stored_len == self.raw_len)
            && u64::from(self.raw_len) <= self.codec.max_decoded_len(self.stored_len.into())
            && self.typesize != 0
            && self.filters.supports(self.typesize)
    }

    /// What is wrong with a header that is not [valid](Self::is_valid).
    #[cold]
    fn invalid(&self, offset: u64) -> Error {
        let detail = if self.raw_len == 0 || self.raw_len as usize > MAX_BLOCK_SIZE {
            format!("raw length {} outside 1..={MAX_BLOCK_SIZE}", self.raw_len)
        } else if self.stored_len > self.raw_len {
            format!("stored length {} exceeds raw length {}", self.stored_len, self.raw_len)
        } else if self.codec == CodecId::None && self.stored_len != self.raw_len {
            format!("raw block stores {} of its {} bytes", self.stored_len, self.raw_len)
        } else if u64::from(self.raw_len) > self.codec.max_decoded_len(self.stored_len.into()) {
            format!(
                "{} bytes of {} cannot decode to the {} bytes it declares (at most {})",
                self.stored_len,
                self.codec.name(),
                self.raw_len,
                self.codec.max_decoded_len(self.stored_len.into())
            )
        } else {
            format!("filters {} with element size {}", self.filters, self.typesize)
        };
        Error::corrupt("block header", offset, detail)
    }

    /// The checksum stored in a header.
    pub fn stored_checksum(b: &[u8; BLOCK_HEADER_LEN]) -> u64 {
        le_u64(b, 16)
    }
}

/// XXH3-64 of a block header's first 16 bytes followed by its payload.
pub fn block_checksum(header16: &[u8], payload: &[u8]) -> u64 {
    xxh3_64_parts(&[header16, payload])
}

/// Checks a block's checksum against its header bytes and payload.
pub fn verify_block(header: &[u8; BLOCK_HEADER_LEN], payload: &[u8], offset: u64) -> Result<()> {
    if block_checksum(&header[0..16], payload) != BlockHeader::stored_checksum(header) {
        return Err(Error::ChecksumMismatch { what: "block", offset });
    }
    Ok(())
}

/// Per-stream totals in the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamInfo {
    /// Decoded length of the stream.
    pub raw_len: u64,
    /// Number of blocks in the stream.
    pub block_count: u64,
}

/// One block-index entry in the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockEntry {
    /// Offset of the block header in the file.
    pub file_offset: u64,
    /// Offset of the block's first byte in its decoded stream.
    pub raw_offset: u64,
    /// The block's header fields.
    pub header: BlockHeader,
}

impl BlockEntry {
    /// Offset just past the block's payload.
    pub fn end_offset(&self) -> u64 {
        self.file_offset + BLOCK_HEADER_LEN as u64 + u64::from(self.header.stored_len)
    }
}

/// The footer: stream table, block index (in file order) and user metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footer {
    /// One entry per stream, by stream id.
    pub streams: Vec<StreamInfo>,
    /// Every block, in file order.
    pub blocks: Vec<BlockEntry>,
    /// Opaque bytes given by the writer's user.
    pub metadata: Vec<u8>,
}

impl Footer {
    /// Serializes footer header and body.
    pub fn encode(&self) -> Vec<u8> {
        let body_len =
            16 + self.streams.len() * STREAM_ENTRY_LEN + self.blocks.len() * BLOCK_ENTRY_LEN + 8 + self.metadata.len();
        let mut b = Vec::with_capacity(FOOTER_HEADER_LEN + body_len);
        b.push(FOOTER_TAG);
        b.extend_from_slice(&[0u8; 7]);
        b.extend_from_slice(&(body_len as u64).to_le_bytes());
        b.extend_from_slice(&(self.streams.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(self.blocks.len() as u64).to_le_bytes());
        for s in &self.streams {
            b.extend_from_slice(&s.raw_len.to_le_bytes());
            b.extend_from_slice(&s.block_count.to_le_bytes());
        }
        for e in &self.blocks {
            let h = &e.header;
            b.extend_from_slice(&e.file_offset.to_le_bytes());
            b.extend_from_slice(&e.raw_offset.to_le_bytes());
            b.extend_from_slice(&h.stream.to_le_bytes());
            b.extend_from_slice(&h.raw_len.to_le_bytes());
            b.extend_from_slice(&h.stored_len.to_le_bytes());
            b.extend_from_slice(&[h.codec as u8, h.filters.bits(), h.typesize, 0]);
        }
        b.extend_from_slice(&(self.metadata.len() as u64).to_le_bytes());
        b.extend_from_slice(&self.metadata);
        b
    }

    /// Reads the body length from a footer header.
    pub fn body_len(header: &[u8; FOOTER_HEADER_LEN], offset: u64) -> Result<u64> {
        if header[0] != FOOTER_TAG || header[1..8] != [0; 7] {
            return Err(Error::corrupt("footer header", offset, "bad tag or reserved bytes"));
        }
        let len = le_u64(header, 8);
        if len > MAX_FOOTER_LEN {
            return Err(Error::corrupt(
                "footer header",
                offset,
                format!("footer of {len} bytes exceeds {MAX_FOOTER_LEN}"),
            ));
        }
        Ok(len)
    }

    /// Parses a footer (header + body) that starts at `footer_offset`, and checks that the index
    /// describes exactly the blocks between the file header and the footer, in order, with
    /// every stream's blocks contiguous in raw offsets.
    pub fn decode(bytes: &[u8], footer_offset: u64) -> Result<Footer> {
        let fail = |d: String| Error::corrupt("footer", footer_offset, d);
        let Some((head, body)) = bytes.split_first_chunk::<FOOTER_HEADER_LEN>() else {
            return Err(fail("shorter than its header".into()));
        };
        let body_len = Footer::body_len(head, footer_offset)?;
        if body_len != body.len() as u64 || body.len() < 16 {
            return Err(fail(format!("body is {} bytes, header says {body_len}", body.len())));
        }
        let stream_count = le_u32(body, 0) as u64;
        if le_u32(body, 4) != 0 {
            return Err(fail("reserved field is not zero".into()));
        }
        let block_count = le_u64(body, 8);
        // Every count is checked against the bytes present before anything is allocated.
        let fixed = stream_count
            .checked_mul(STREAM_ENTRY_LEN as u64)
            .and_then(|s| {
                block_count
                    .checked_mul(BLOCK_ENTRY_LEN as u64)
                    .and_then(|b| b.checked_add(s))
            })
            .and_then(|t| t.checked_add(16 + 8))
            .filter(|&t| t <= body_len)
            .ok_or_else(|| {
                fail(format!(
                    "{stream_count} streams and {block_count} blocks do not fit in {body_len} bytes"
                ))
            })?;
        let meta_len = le_u64(body, fixed as usize - 8);
        if fixed.checked_add(meta_len) != Some(body_len) {
            return Err(fail(format!(
                "metadata length {meta_len} does not match the footer size"
            )));
        }
        let mut pos = 16usize;
        let mut streams = Vec::with_capacity(stream_count as usize);
        for _ in 0..stream_count {
            streams.push(StreamInfo {
                raw_len: le_u64(body, pos),
                block_count: le_u64(body, pos + 8),
            });
            pos += STREAM_ENTRY_LEN;
        }
        let mut blocks = Vec::with_capacity(block_count as usize);
        let mut next_offset = FILE_HEADER_LEN as u64;
        let mut seen = vec![StreamInfo::default(); streams.len()];
        // A table file's index holds a block per page (tens of thousands), parsed on every
        // open: fixed-size entries and a cold error path keep this loop to a few loads.
        let index = &body[pos..pos + block_count as usize * BLOCK_ENTRY_LEN];
        pos += index.len();
        for (i, e) in index.as_chunks::<BLOCK_ENTRY_LEN>().0.iter().enumerate() {
            let word = |at: usize| u64::from_le_bytes(e[at..at + 8].try_into().expect("8 bytes"));
            let half = |at: usize| u32::from_le_bytes(e[at..at + 4].try_into().expect("4 bytes"));
            let (file_offset, raw_offset) = (word(0), word(8));
            let (Some(codec), Some(filters)) = (CodecId::from_u8(e[28]), FilterSet::from_bits(e[29])) else {
                return Err(fail(bad_entry(i, e)));
            };
            let (stream, raw_len, stored_len, typesize) = (half(16), half(20), half(24), e[30]);
            let header = || BlockHeader {
                codec,
                filters,
                typesize,
                stream,
                raw_len,
                stored_len,
            };
            // Checked field by field, and the entry built only when it is pushed: building it
            // first and copying it in stalled on store forwarding (a third of an open's time).
            if !header().is_valid() {
                return Err(header().invalid(file_offset));
            }
            if e[31] != 0 {
                return Err(fail(bad_entry(i, e)));
            }
            if file_offset != next_offset {
                return Err(fail(format!(
                    "block {i} at offset {file_offset}, expected {next_offset}"
                )));
            }
            let s = seen
                .get_mut(stream as usize)
                .ok_or_else(|| fail(format!("block {i} names stream {stream} of {stream_count}")))?;
            if raw_offset != s.raw_len {
                return Err(fail(format!(
                    "block {i} starts at raw offset {raw_offset}, expected {}",
                    s.raw_len
                )));
            }
            s.raw_len += u64::from(raw_len);
            s.block_count += 1;
            next_offset = file_offset + BLOCK_HEADER_LEN as u64 + u64::from(stored_len);
            blocks.push(BlockEntry {
                file_offset,
                raw_offset,
                header: header(),
            });
        }
        if next_offset != footer_offset {
            return Err(fail(format!(
                "blocks end at {next_offset}, footer starts at {footer_offset}"
            )));
        }
        if seen != streams {
            return Err(fail("stream table disagrees with the block index".into()));
        }
        Ok(Footer {
            streams,
            blocks,
            metadata: body[pos + 8..].to_vec(),
        })
    }
}

/// Why block-index entry `i` has an unknown codec, unknown filter bits or a nonzero reserved byte.
#[cold]
fn bad_entry(i: usize, e: &[u8; BLOCK_ENTRY_LEN]) -> String {
    if CodecId::from_u8(e[28]).is_none() {
        format!("block {i}: unknown codec id {}", e[28])
    } else if FilterSet::from_bits(e[29]).is_none() {
        format!("block {i}: unknown filter bits {}", e[29])
    } else {
        format!("block {i}: reserved byte is not zero")
    }
}

/// The fixed-size end of a file: where the footer is and its checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the footer header.
    pub footer_offset: u64,
    /// Footer length, header included.
    pub footer_len: u64,
    /// XXH3-64 of the footer bytes.
    pub footer_checksum: u64,
}

impl Trailer {
    /// Serializes the trailer.
    pub fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut b = [0u8; TRAILER_LEN];
        b[0..8].copy_from_slice(&self.footer_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.footer_len.to_le_bytes());
        b[16..24].copy_from_slice(&self.footer_checksum.to_le_bytes());
        let sum = check32(&b[0..24]);
        b[24..28].copy_from_slice(&sum.to_le_bytes());
        b[28..32].copy_from_slice(&MAGIC);
        b
    }

    /// Parses a trailer found at `offset` (so that it ends the file) and checks it is
    /// consistent with that position.
    pub fn decode(b: &[u8; TRAILER_LEN], offset: u64) -> Result<Trailer> {
        let found: [u8; 4] = b[28..32].try_into().expect("4 bytes");
        if found != MAGIC {
            return Err(Error::BadMagic {
                what: "trailer",
                found,
                expected: MAGIC,
            });
        }
        if le_u32(b, 24) != check32(&b[0..24]) {
            return Err(Error::ChecksumMismatch {
                what: "trailer",
                offset,
            });
        }
        let t = Trailer {
            footer_offset: le_u64(b, 0),
            footer_len: le_u64(b, 8),
            footer_checksum: le_u64(b, 16),
        };
        if t.footer_offset < FILE_HEADER_LEN as u64
            || t.footer_len < FOOTER_HEADER_LEN as u64 + 24
            || t.footer_offset.checked_add(t.footer_len) != Some(offset)
        {
            return Err(Error::corrupt(
                "trailer",
                offset,
                format!(
                    "footer at {} of {} bytes does not end at the trailer",
                    t.footer_offset, t.footer_len
                ),
            ));
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(stream: u32, raw: u32, stored: u32) -> BlockHeader {
        BlockHeader {
            codec: if raw == stored { CodecId::None } else { CodecId::Zstd },
            filters: FilterSet::NONE,
            typesize: 1,
            stream,
            raw_len: raw,
            stored_len: stored,
        }
    }

    fn footer() -> Footer {
        let hs = [block(0, 100, 50), block(1, 10, 10), block(0, 7, 7)];
        let mut off = FILE_HEADER_LEN as u64;
        let mut raw = [0u64; 2];
        let blocks = hs
            .iter()
            .map(|h| {
                let e = BlockEntry {
                    file_offset: off,
                    raw_offset: raw[h.stream as usize],
                    header: *h,
                };
                off = e.end_offset();
                raw[h.stream as usize] += u64::from(h.raw_len);
                e
            })
            .collect();
        Footer {
            streams: vec![
                StreamInfo {
                    raw_len: 107,
                    block_count: 2,
                },
                StreamInfo {
                    raw_len: 10,
                    block_count: 1,
                },
            ],
            blocks,
            metadata: b"meta".to_vec(),
        }
    }

    #[test]
    fn structures_round_trip() {
        let h = FileHeader::CURRENT;
        assert_eq!(FileHeader::decode(&h.encode()).unwrap(), h);
        let b = block(3, 1000, 10);
        let bytes = b.encode(b"payload");
        assert_eq!(BlockHeader::decode(&bytes, 0).unwrap(), b);
        verify_block(&bytes, b"payload", 0).unwrap();
        assert!(verify_block(&bytes, b"paylaod", 0).is_err());
        let f = footer();
        let end = f.blocks.last().unwrap().end_offset();
        assert_eq!(Footer::decode(&f.encode(), end).unwrap(), f);
        let t = Trailer {
            footer_offset: 100,
            footer_len: 40,
            footer_checksum: 7,
        };
        assert_eq!(Trailer::decode(&t.encode(), 140).unwrap(), t);
        assert!(Trailer::decode(&t.encode(), 141).is_err());
    }

    #[test]
    fn inconsistent_index_is_rejected() {
        let f = footer();
        let end = f.blocks.last().unwrap().end_offset();
        let mut g = f.clone();
        g.blocks[1].raw_offset = 5;
        assert!(Footer::decode(&g.encode(), end).is_err());
        let mut g = f.clone();
        g.streams[0].raw_len += 1;
        assert!(Footer::decode(&g.encode(), end).is_err());
        assert!(Footer::decode(&f.encode(), end + 1).is_err());
        let mut bytes = f.encode();
        bytes[FOOTER_HEADER_LEN + 8] = 0xff; // absurd block count
        assert!(Footer::decode(&bytes, end).is_err());
    }

    #[test]
    fn every_damaged_index_field_is_named() {
        let f = footer();
        let end = f.blocks.last().unwrap().end_offset();
        // Entry 1 of the index: (byte within the entry, value, what the error says).
        let entry = FOOTER_HEADER_LEN + 16 + 2 * STREAM_ENTRY_LEN + BLOCK_ENTRY_LEN;
        let cases: [(usize, u8, &str); 10] = [
            (28, 9, "unknown codec id 9"),
            (29, 0x80, "unknown filter bits"),
            (31, 1, "reserved byte is not zero"),
            (20, 0, "raw length 0 outside"),
            (24, 11, "stored length 11 exceeds raw length 10"),
            (24, 9, "raw block stores 9 of its 10 bytes"),
            (30, 0, "element size 0"),
            (0, 1, "block 1 at offset"),
            (8, 1, "block 1 starts at raw offset"),
            (16, 7, "block 1 names stream 7 of 2"),
        ];
        for (at, value, says) in cases {
            let mut bytes = f.encode();
            bytes[entry + at] = value;
            let err = Footer::decode(&bytes, end).unwrap_err().to_string();
            assert!(err.contains(says), "byte {at} = {value}: {err}");
        }
    }

    #[test]
    fn impossible_block_headers_are_rejected() {
        for h in [
            block(0, 0, 0),
            block(0, 10, 11),
            block(0, (MAX_BLOCK_SIZE + 1) as u32, 1),
        ] {
            let bytes = h.encode(&[]);
            assert!(BlockHeader::decode(&bytes, 0).is_err(), "{h:?}");
        }
        let mut bytes = block(0, 10, 5).encode(&[]);
        bytes[1] = 9;
        assert!(BlockHeader::decode(&bytes, 0).is_err());
    }

    #[test]
    fn blocks_cannot_declare_more_than_their_bytes_decode_to() {
        for (codec, stored) in [(CodecId::Lz4, 1000u32), (CodecId::Gzip, 100), (CodecId::Zstd, 10)] {
            let mut h = block(0, 1, stored);
            h.codec = codec;
            let bound = codec.max_decoded_len(stored.into());
            h.raw_len = bound as u32;
            assert!(BlockHeader::decode(&h.encode(&[]), 0).is_ok(), "{codec:?} at its bound");
            h.raw_len = bound as u32 + 1;
            let err = BlockHeader::decode(&h.encode(&[]), 0).unwrap_err().to_string();
            assert!(err.contains("cannot decode to"), "{codec:?}: {err}");
        }
    }
}
