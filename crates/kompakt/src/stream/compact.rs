//! Compact files (format 3.0): a small object in 28 bytes more than its compressed bytes.
//!
//! A format-1 file of one small stream costs 160 bytes beyond its payload and metadata (header,
//! block header, footer, index, trailer), 252 with an R object's metadata: most of the size of a targets branch or a cache
//! value. A compact file stands for exactly such a file, one stream of one block with one of a
//! few known metadata texts, and readers open it as that file:
//!
//! ```text
//! offset  size  field
//!  0      4     magic `KMPK`
//!  4      2     major version 3
//!  6      2     minor version 0
//!  8      1     content: 0 plain data, 1 R object, 2 Python object (the metadata it stands for)
//!  9      1     codec id of the payload (0-5; 5, zstd-dict, as in format 2.0)
//! 10      2     reserved, zero
//! 12      4     low 32 bits of XXH3-64 of bytes 0..12 (every kompakt file header's checksum)
//! 16      4     raw length, 1..=COMPACT_MAX_RAW
//! 20      8     checksum: XXH3-64 of the 16 bytes the equivalent block header starts with
//!               (tag, codec, no filters, element size 1, stream 0, raw and stored length),
//!               then the payload
//! 28      ...   payload, to the end of the file (its stored length)
//! ```
//!
//! Readers before format 3.0 refuse such a file as a newer version (the header is laid out
//! as every kompakt file header). `docs/FORMAT.md` is the normative text.

use super::format::{
    header_checksum, verify_block, BlockEntry, BlockHeader, FileHeader, Footer, StreamInfo, BLOCK_HEADER_LEN,
    FILE_HEADER_LEN, MAGIC,
};
use crate::codec::CodecId;
use crate::error::{Error, Result};
use crate::filter::FilterSet;
use crate::hash::xxh3_64_parts;

/// The major format version of compact files.
pub const COMPACT_MAJOR: u16 = 3;
/// Bytes before the payload.
pub const COMPACT_HEADER_LEN: usize = 28;
/// The largest raw length a compact file may declare: its reader decodes it whole when it
/// opens it.
pub const COMPACT_MAX_RAW: usize = 1 << 20;
/// The largest stream kompakt's writer puts in a compact file (a writer's choice, not the
/// format's): above it a file's fixed cost is under 0.5 % of it.
pub const COMPACT_WRITE_MAX: usize = 64 << 10;

/// What a compact file holds, which is the metadata of the file it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Plain data: no metadata.
    Data,
    /// An R object ([`R_OBJECT_METADATA`]).
    RObject,
    /// A Python object without out-of-band buffers ([`PYTHON_OBJECT_METADATA`]).
    PythonObject,
}

/// The metadata kompakt for R writes with an object (FORMAT.md, "R object files").
pub const R_OBJECT_METADATA: &[u8] =
    br#"{"kompakt":"r-serialize","version":1,"serialize":{"stream":0,"format":"binary","version":3}}"#;
/// The metadata kompakt for Python writes with an object that is a pickle alone (FORMAT.md,
/// "Python object files").
pub const PYTHON_OBJECT_METADATA: &[u8] =
    br#"{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[]}"#;

impl Content {
    /// The byte that stands for it in a compact file's header.
    pub fn byte(self) -> u8 {
        match self {
            Content::Data => 0,
            Content::RObject => 1,
            Content::PythonObject => 2,
        }
    }

    fn from_byte(b: u8) -> Option<Content> {
        match b {
            0 => Some(Content::Data),
            1 => Some(Content::RObject),
            2 => Some(Content::PythonObject),
            _ => None,
        }
    }

    /// The metadata of the file a compact file of this content stands for.
    pub fn metadata(self) -> &'static [u8] {
        match self {
            Content::Data => b"",
            Content::RObject => R_OBJECT_METADATA,
            Content::PythonObject => PYTHON_OBJECT_METADATA,
        }
    }

    /// The content whose metadata is exactly `metadata`, if any: only such files can be
    /// written compact.
    pub fn of_metadata(metadata: &[u8]) -> Option<Content> {
        [Content::Data, Content::RObject, Content::PythonObject]
            .into_iter()
            .find(|c| c.metadata() == metadata)
    }
}

/// Whether `head` is the header of a compact file: the magic, a valid header checksum and
/// major version 3 (the rest is checked when the file is read).
pub fn is_compact_header(head: &[u8; FILE_HEADER_LEN]) -> bool {
    head[0..4] == MAGIC
        && u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) == header_checksum(&head[0..12])
        && u16::from_le_bytes([head[4], head[5]]) == COMPACT_MAJOR
}

/// The first 16 bytes of the block header equivalent to a compact file's block.
fn block_head(codec: CodecId, raw_len: u32, stored_len: u32) -> [u8; 16] {
    let fields = BlockHeader {
        codec,
        filters: FilterSet::NONE,
        typesize: 1,
        stream: 0,
        raw_len,
        stored_len,
    };
    fields.encode(&[])[..16].try_into().expect("16 bytes")
}

/// A compact file of `content` whose payload is `payload`, coded with `codec`, decoding to
/// `raw_len` bytes. The caller has checked that the block is valid (the encoder made it).
pub fn encode(content: Content, codec: CodecId, raw_len: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(COMPACT_HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&COMPACT_MAJOR.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&[content.byte(), codec as u8, 0, 0]);
    let sum = header_checksum(&out[0..12]);
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(&raw_len.to_le_bytes());
    let stored = u32::try_from(payload.len()).expect("a block's payload fits in u32");
    let check = xxh3_64_parts(&[&block_head(codec, raw_len, stored), payload]);
    out.extend_from_slice(&check.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A compact file opened as the format-1 file it stands for.
#[derive(Debug)]
pub(crate) struct Opened {
    pub header: FileHeader,
    pub footer: Footer,
    /// The equivalent file's bytes up to its block's end: the header, the block header (with
    /// the compact file's checksum, checked when the block is read) and the payload. Blocks
    /// are read from here.
    pub image: Vec<u8>,
}

/// Parses and checks the compact file `file` (all of it), its block's checksum included.
pub(crate) fn open(file: &[u8]) -> Result<Opened> {
    let min = COMPACT_HEADER_LEN + 1;
    if file.len() < min {
        return Err(Error::Truncated {
            what: "compact file",
            needed: min as u64,
            available: file.len() as u64,
        });
    }
    let max = COMPACT_HEADER_LEN + COMPACT_MAX_RAW;
    if file.len() > max {
        return Err(Error::corrupt(
            "compact file",
            0,
            format!("{} bytes, over the {max} a compact file may have", file.len()),
        ));
    }
    let head: &[u8; FILE_HEADER_LEN] = file[..FILE_HEADER_LEN].try_into().expect("16 bytes");
    debug_assert!(is_compact_header(head));
    let content = Content::from_byte(head[8]).ok_or_else(|| {
        Error::corrupt(
            "compact file header",
            8,
            format!("unknown content {} (a newer kompakt may have written it)", head[8]),
        )
    })?;
    let codec = CodecId::from_u8(head[9])
        .ok_or_else(|| Error::corrupt("compact file header", 9, format!("unknown codec id {}", head[9])))?;
    if head[10..12] != [0, 0] {
        return Err(Error::corrupt("compact file header", 10, "reserved bytes are not zero"));
    }
    let raw_len = u32::from_le_bytes(file[16..20].try_into().expect("4 bytes"));
    if raw_len as usize > COMPACT_MAX_RAW {
        return Err(Error::corrupt(
            "compact file header",
            16,
            format!("raw length {raw_len} over the {COMPACT_MAX_RAW} bytes a compact file may hold"),
        ));
    }
    let payload = &file[COMPACT_HEADER_LEN..];
    let stored_len = payload.len() as u32;
    let mut block = [0u8; BLOCK_HEADER_LEN];
    block[..16].copy_from_slice(&block_head(codec, raw_len, stored_len));
    block[16..].copy_from_slice(&file[20..28]);
    // The checks of every block header: lengths, codec, what the payload can decode to.
    let fields = BlockHeader::decode(&block, FILE_HEADER_LEN as u64)?;
    // And the checksum now: nothing else in the file tells a file cut short from a whole one
    // (the payload runs to the end), and the whole file is in hand anyway.
    verify_block(&block, payload, FILE_HEADER_LEN as u64)?;
    let mut image = Vec::with_capacity(FILE_HEADER_LEN + BLOCK_HEADER_LEN + payload.len());
    image.extend_from_slice(head);
    image.extend_from_slice(&block);
    image.extend_from_slice(payload);
    Ok(Opened {
        header: FileHeader {
            major: COMPACT_MAJOR,
            minor: u16::from_le_bytes([head[6], head[7]]),
        },
        footer: Footer {
            streams: vec![StreamInfo {
                raw_len: u64::from(raw_len),
                block_count: 1,
            }],
            blocks: vec![BlockEntry {
                file_offset: FILE_HEADER_LEN as u64,
                raw_offset: 0,
                header: fields,
            }],
            metadata: content.metadata().to_vec(),
        },
        image,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_are_known_by_their_exact_metadata() {
        for c in [Content::Data, Content::RObject, Content::PythonObject] {
            assert_eq!(Content::of_metadata(c.metadata()), Some(c));
            assert_eq!(Content::from_byte(c.byte()), Some(c));
        }
        assert_eq!(Content::of_metadata(b"{}"), None);
        assert_eq!(Content::of_metadata(&R_OBJECT_METADATA[1..]), None);
        assert_eq!(Content::from_byte(3), None);
    }

    #[test]
    fn a_compact_file_opens_as_its_one_block_file_and_damage_is_named() {
        let file = encode(Content::RObject, CodecId::None, 5, b"hello");
        assert_eq!(file.len(), COMPACT_HEADER_LEN + 5);
        assert!(is_compact_header(file[..16].try_into().unwrap()));
        let opened = open(&file).unwrap();
        assert_eq!(opened.footer.metadata, R_OBJECT_METADATA);
        assert_eq!(opened.footer.blocks[0].header.raw_len, 5);
        let block: &[u8; 24] = opened.image[16..40].try_into().unwrap();
        crate::stream::format::verify_block(block, &opened.image[40..], 16).unwrap();
        // A raw payload must be as long as it says.
        let mut short = encode(Content::Data, CodecId::None, 6, b"hello");
        assert!(open(&short)
            .unwrap_err()
            .to_string()
            .contains("raw block stores 5 of its 6 bytes"));
        short.truncate(COMPACT_HEADER_LEN);
        assert!(matches!(open(&short).unwrap_err(), Error::Truncated { .. }));
        let mut unknown = file.clone();
        unknown[8] = 9;
        let sum = header_checksum(&unknown[..12]);
        unknown[12..16].copy_from_slice(&sum.to_le_bytes());
        assert!(open(&unknown).unwrap_err().to_string().contains("unknown content 9"));
    }
}
