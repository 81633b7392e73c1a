//! Codecs: one interface over none, LZ4 (fast and HC), ZSTD, gzip and zlib.
//!
//! - [`Codec`] is a concrete codec with its native level; [`CodecSpec`] is what a user asks for
//!   (a codec, `auto`, or a unified level 0-100) and parses from strings like `zstd:3`.
//! - [`CodecId`] is the byte stored in each block: it names the *decoder*, not the level
//!   (LZ4 and LZ4-HC write the same block format, so they share an id).
//! - [`Compressor`] and [`Decompressor`] hold reusable contexts; one per thread.
//!
//! Compression writes into a caller-sized buffer and reports `None` when the output would not
//! fit: that is how a block that does not shrink is detected and stored raw, often before the
//! codec has spent the time to compress all of it.

mod dictionary;
mod probe;
mod spec;

pub use dictionary::{
    Dictionaries, Dictionary, DictionaryId, DEFAULT_DICTIONARY_SIZE, DICTIONARY_CODEC, DICTIONARY_ID_LEN,
    MAX_DICTIONARY_SIZE, MIN_DICTIONARY_SIZE,
};

pub use probe::{
    clearly_short, entropy_saving_bound, looks_incompressible, probe, probe_spans, too_little_saved, ProbeResult,
    SavingBar, ENTROPY_SAMPLES, FAST_MIN_SAVING, MIN_ENTROPY_SAVING, MIN_SAVING, SAMPLES, SAMPLE_LEN,
};
pub use spec::{CodecSpec, DEFAULT_LEVEL};

use crate::error::{Error, Result};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use std::fmt;

/// The decoder a stored block needs, as recorded in the file (see `docs/FORMAT.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CodecId {
    /// Stored raw.
    None = 0,
    /// LZ4 block format (written by LZ4 fast or LZ4-HC).
    Lz4 = 1,
    /// One or more ZSTD frames.
    Zstd = 2,
    /// A gzip member (RFC 1952).
    Gzip = 3,
    /// A zlib stream (RFC 1950).
    Zlib = 4,
    /// A dictionary's id (8 bytes) and ZSTD frames compressed with that dictionary
    /// (format 2.0 and later).
    ZstdDict = 5,
}

impl CodecId {
    /// The most bytes `stored` bytes of this codec can decode to: the format's own limit on
    /// expansion, so that a block (or file) cannot declare more than its bytes can produce.
    /// LZ4 spends at least one byte per 255 bytes of a match; deflate's longest match (258
    /// bytes) costs at least two bits, 1032:1; zstd's densest form is an RLE block, 3 header
    /// bytes and 1 byte for up to 128 KiB, 32768:1. The constants cover headers and ends.
    pub fn max_decoded_len(self, stored: u64) -> u64 {
        let (ratio, slack) = match self {
            CodecId::None => (1, 0),
            CodecId::Lz4 => (255, 64),
            CodecId::Gzip | CodecId::Zlib => (1032, 1024),
            CodecId::Zstd => (32768, 0),
            CodecId::ZstdDict => {
                return stored.saturating_sub(DICTIONARY_ID_LEN as u64).saturating_mul(32768);
            }
        };
        stored.saturating_mul(ratio).saturating_add(slack)
    }

    /// Parses the stored byte.
    pub fn from_u8(byte: u8) -> Option<CodecId> {
        Some(match byte {
            0 => CodecId::None,
            1 => CodecId::Lz4,
            2 => CodecId::Zstd,
            3 => CodecId::Gzip,
            4 => CodecId::Zlib,
            5 => CodecId::ZstdDict,
            _ => return None,
        })
    }

    /// Lower-case name, as users type it.
    pub fn name(self) -> &'static str {
        match self {
            CodecId::None => "none",
            CodecId::Lz4 => "lz4",
            CodecId::Zstd => "zstd",
            CodecId::Gzip => "gzip",
            CodecId::Zlib => "zlib",
            CodecId::ZstdDict => "zstd-dict",
        }
    }
}

impl fmt::Display for CodecId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A concrete codec and its native level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// Store bytes as they are.
    None,
    /// LZ4 fast; higher acceleration is faster and compresses less (1 = LZ4's default).
    Lz4 {
        /// LZ4 acceleration, 1..=65537.
        acceleration: u32,
    },
    /// LZ4 high compression, levels 1..=12; decodes as fast as LZ4.
    Lz4Hc {
        /// LZ4-HC level.
        level: u8,
    },
    /// Zstandard; negative levels are zstd's `--fast` levels.
    Zstd {
        /// zstd level, -50..=22.
        level: i32,
    },
    /// Deflate in a gzip wrapper, levels 1..=9.
    Gzip {
        /// Deflate level.
        level: u8,
    },
    /// Deflate in a zlib wrapper, levels 1..=9.
    Zlib {
        /// Deflate level.
        level: u8,
    },
}

/// Range of zstd levels accepted (zstd itself goes lower, but nothing below -50 is useful).
pub const ZSTD_LEVELS: std::ops::RangeInclusive<i32> = -50..=22;
/// Range of LZ4-HC levels.
pub const LZ4HC_LEVELS: std::ops::RangeInclusive<u8> = 1..=12;
/// Range of deflate levels (gzip and zlib).
pub const DEFLATE_LEVELS: std::ops::RangeInclusive<u8> = 1..=9;
/// Range of LZ4 accelerations.
pub const LZ4_ACCELERATIONS: std::ops::RangeInclusive<u32> = 1..=65537;

impl Codec {
    /// The decoder id stored in each block written with this codec.
    pub fn id(self) -> CodecId {
        match self {
            Codec::None => CodecId::None,
            Codec::Lz4 { .. } | Codec::Lz4Hc { .. } => CodecId::Lz4,
            Codec::Zstd { .. } => CodecId::Zstd,
            Codec::Gzip { .. } => CodecId::Gzip,
            Codec::Zlib { .. } => CodecId::Zlib,
        }
    }

    /// Checks the level against the codec's valid range.
    pub fn validate(self) -> Result<Codec> {
        let ok = match self {
            Codec::None => true,
            Codec::Lz4 { acceleration } => LZ4_ACCELERATIONS.contains(&acceleration),
            Codec::Lz4Hc { level } => LZ4HC_LEVELS.contains(&level),
            Codec::Zstd { level } => ZSTD_LEVELS.contains(&level),
            Codec::Gzip { level } | Codec::Zlib { level } => DEFLATE_LEVELS.contains(&level),
        };
        if ok {
            Ok(self)
        } else {
            let expected = match self {
                Codec::Lz4 { .. } => "lz4 acceleration 1..=65537",
                Codec::Lz4Hc { .. } => "lz4hc level 1..=12",
                Codec::Zstd { .. } => "zstd level -50..=22",
                _ => "gzip/zlib level 1..=9",
            };
            Err(Error::invalid("codec level", self.to_string(), expected))
        }
    }
}

impl fmt::Display for Codec {
    /// Formats as the spec string that parses back to this codec (`zstd:3`, `lz4hc:9`, ...).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Codec::None => f.write_str("none"),
            Codec::Lz4 { acceleration: 1 } => f.write_str("lz4"),
            Codec::Lz4 { acceleration } => write!(f, "lz4:{acceleration}"),
            Codec::Lz4Hc { level } => write!(f, "lz4hc:{level}"),
            Codec::Zstd { level } => write!(f, "zstd:{level}"),
            Codec::Gzip { level } => write!(f, "gzip:{level}"),
            Codec::Zlib { level } => write!(f, "zlib:{level}"),
        }
    }
}

/// Reusable compression contexts for one thread.
#[derive(Default)]
pub struct Compressor {
    /// One context per zstd level used, most recent first: the incompressibility probe's
    /// level-1 trial and the block's own level alternate, and making a context costs more
    /// than compressing a small block.
    zstd: Vec<(i32, zstd::bulk::Compressor<'static>)>,
    /// Contexts with a dictionary loaded (digested once, on first use), by dictionary and
    /// level, most recent first: loading costs 50-200 us, more than compressing a small value.
    /// Each keeps the dictionary it loaded, so an equal id with other bytes is not taken for it.
    zstd_dict: Vec<(Dictionary, i32, zstd::zstd_safe::CCtx<'static>)>,
}

/// zstd contexts a [`Compressor`] keeps (each is a few hundred KiB to a few MiB).
const ZSTD_CONTEXTS: usize = 3;

impl fmt::Debug for Compressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compressor").finish_non_exhaustive()
    }
}

impl Compressor {
    /// A compressor with no contexts yet (they are made on first use and kept).
    pub fn new() -> Self {
        Self::default()
    }

    /// Compresses `src` into `dst`, returning the compressed length, or `None` when the result
    /// would not fit in `dst` (the caller sizes `dst` to the largest output worth keeping).
    /// [`compress_append`](Self::compress_append) does the same without the copy into `dst`.
    pub fn compress_into(&mut self, codec: Codec, src: &[u8], dst: &mut [u8]) -> Result<Option<usize>> {
        let mut out = Vec::new();
        let stored = self.compress_append(codec, src, &mut out, dst.len())?;
        if let Some(n) = stored {
            dst[..n].copy_from_slice(&out);
        }
        Ok(stored)
    }

    /// Compresses `src` and appends the result to `dst` when it takes at most `limit` bytes,
    /// returning its length; `None`, with `dst` as it was, when it does not fit. The output
    /// goes straight into `dst`'s spare capacity: no zeroing first and no staging copy, which
    /// is what lets a writer compress into its output's memory (see `stream::Writer::to_memory`;
    /// not a link: `codec` is below `stream` and names nothing of it).
    pub fn compress_append(
        &mut self,
        codec: Codec,
        src: &[u8],
        dst: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Option<usize>> {
        if src.is_empty() || limit == 0 {
            return Ok(None);
        }
        let start = dst.len();
        // Every codec gets room for its worst case, not just `limit`: zstd and deflate given
        // less may fail on a block whose result would fit (zstd needs room to fall back to a
        // raw block), and the outcome would then depend on how much spare capacity `dst`
        // happens to have (a staging buffer, or a whole file in memory). The limit is checked
        // on the result below.
        let room = match codec {
            Codec::Zstd { .. } => zstd::zstd_safe::compress_bound(src.len()),
            Codec::Gzip { .. } | Codec::Zlib { .. } => deflate_bound(src.len()),
            _ => limit,
        };
        dst.reserve(limit.max(room));
        let written = match codec {
            Codec::None => None,
            Codec::Lz4 { acceleration } => {
                lz4_append(src, Lz4Mode::Fast(i32::try_from(acceleration).unwrap_or(i32::MAX)), dst)
            }
            Codec::Lz4Hc { level } => lz4_append(src, Lz4Mode::High(level.into()), dst),
            Codec::Zstd { level } => {
                let cctx = self.zstd_context(level)?;
                // The cursor makes zstd write after the bytes already there, into the spare
                // capacity, and set the length to cover what it wrote. zstd may use more room
                // than `limit` (the spare capacity can be larger); the check below decides.
                let mut tail = std::io::Cursor::new(&mut *dst);
                tail.set_position(start as u64);
                cctx.compress_to_buffer(src, &mut tail).ok()
            }
            Codec::Gzip { level } => deflate_append(Compress::new_gzip(Compression::new(level.into()), 15), src, dst)?,
            Codec::Zlib { level } => deflate_append(Compress::new(Compression::new(level.into()), true), src, dst)?,
        };
        match written {
            Some(n) if n <= limit && dst.len() == start + n => Ok(Some(n)),
            _ => {
                dst.truncate(start);
                Ok(None)
            }
        }
    }

    /// Compresses `src` with zstd at `level` and `dictionary` as a `zstd-dict` payload (the
    /// dictionary's id, then the frame) appended to `dst`, when it takes at most `limit` bytes;
    /// `None`, with `dst` as it was, otherwise. The frame leaves out zstd's own dictionary id
    /// and checksum: the payload names the dictionary and the block has a checksum.
    pub fn compress_append_with_dictionary(
        &mut self,
        level: i32,
        dictionary: &Dictionary,
        src: &[u8],
        dst: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Option<usize>> {
        if src.is_empty() || limit <= DICTIONARY_ID_LEN {
            return Ok(None);
        }
        let cctx = self.zstd_dict_context(level, dictionary)?;
        let start = dst.len();
        dst.reserve(DICTIONARY_ID_LEN + zstd::zstd_safe::compress_bound(src.len()));
        dst.extend_from_slice(&dictionary.id().0.to_le_bytes());
        let mut tail = std::io::Cursor::new(&mut *dst);
        tail.set_position((start + DICTIONARY_ID_LEN) as u64);
        // The room is zstd's bound, so a failure is zstd's error, not a block that does not fit.
        let written = match cctx.compress2(&mut tail, src) {
            Ok(n) => n,
            Err(code) => {
                dst.truncate(start);
                return Err(Error::Codec {
                    codec: "zstd",
                    detail: zstd::zstd_safe::get_error_name(code).to_string(),
                });
            }
        };
        if DICTIONARY_ID_LEN + written <= limit && dst.len() == start + DICTIONARY_ID_LEN + written {
            Ok(Some(DICTIONARY_ID_LEN + written))
        } else {
            dst.truncate(start);
            Ok(None)
        }
    }

    fn zstd_dict_context(
        &mut self,
        level: i32,
        dictionary: &Dictionary,
    ) -> Result<&mut zstd::zstd_safe::CCtx<'static>> {
        use zstd::zstd_safe::CParameter;
        if let Some(i) = self
            .zstd_dict
            .iter()
            .position(|(d, l, _)| d.same_as(dictionary) && *l == level)
        {
            let c = self.zstd_dict.remove(i);
            self.zstd_dict.insert(0, c);
        } else {
            let err = |code| Error::Codec {
                codec: "zstd",
                detail: zstd::zstd_safe::get_error_name(code).to_string(),
            };
            let mut cctx = zstd::zstd_safe::CCtx::try_create().ok_or_else(|| Error::Codec {
                codec: "zstd",
                detail: "cannot allocate a context".into(),
            })?;
            for p in [
                CParameter::CompressionLevel(level),
                CParameter::DictIdFlag(false),
                CParameter::ChecksumFlag(false),
            ] {
                cctx.set_parameter(p).map_err(err)?;
            }
            cctx.load_dictionary(dictionary.bytes()).map_err(err)?;
            self.zstd_dict.truncate(ZSTD_CONTEXTS - 1);
            self.zstd_dict.insert(0, (dictionary.clone(), level, cctx));
        }
        Ok(&mut self.zstd_dict[0].2)
    }

    /// The zstd context for `level`, moved to the front of the kept ones (made if missing).
    fn zstd_context(&mut self, level: i32) -> Result<&mut zstd::bulk::Compressor<'static>> {
        match self.zstd.iter().position(|(l, _)| *l == level) {
            Some(0) => {}
            Some(i) => {
                let c = self.zstd.remove(i);
                self.zstd.insert(0, c);
            }
            None => {
                let c = zstd::bulk::Compressor::new(level).map_err(|e| Error::Codec {
                    codec: "zstd",
                    detail: e.to_string(),
                })?;
                self.zstd.truncate(ZSTD_CONTEXTS - 1);
                self.zstd.insert(0, (level, c));
            }
        }
        Ok(&mut self.zstd[0].1)
    }
}

enum Lz4Mode {
    Fast(i32),
    High(i32),
}

/// LZ4 appended to `dst` (in its spare capacity, no zeroing: `lzzzz` writes there and sets the
/// length); the length written, or `None` when LZ4 refuses the input. The caller's `limit` is
/// checked afterwards: LZ4 gets room for its worst case, so it never stops half way.
fn lz4_append(src: &[u8], mode: Lz4Mode, dst: &mut Vec<u8>) -> Option<usize> {
    // LZ4's own input limit (LZ4_MAX_INPUT_SIZE); blocks are at most 64 MiB.
    const MAX_INPUT: usize = 0x7E00_0000;
    if src.len() > MAX_INPUT {
        return None;
    }
    let written = match mode {
        Lz4Mode::Fast(acceleration) => lzzzz::lz4::compress_to_vec(src, dst, acceleration),
        Lz4Mode::High(level) => lzzzz::lz4_hc::compress_to_vec(src, dst, level),
    };
    written.ok()
}

/// The most bytes zlib or gzip output of `len` bytes can take: zlib's `compressBound`, and the
/// gzip header and trailer (18 bytes; 32 to spare).
fn deflate_bound(len: usize) -> usize {
    len + (len >> 12) + (len >> 14) + (len >> 25) + 13 + 32
}

fn deflate_append(mut enc: Compress, src: &[u8], dst: &mut Vec<u8>) -> Result<Option<usize>> {
    match enc.compress_vec(src, dst, FlushCompress::Finish) {
        Ok(Status::StreamEnd) => Ok(Some(enc.total_out() as usize)),
        Ok(_) => Ok(None),
        Err(e) => Err(Error::Codec {
            codec: "deflate",
            detail: e.to_string(),
        }),
    }
}

/// Reusable decompression contexts for one thread.
#[derive(Default)]
pub struct Decompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    /// Contexts with a dictionary loaded, most recent first (as [`Compressor`]'s).
    zstd_dict: Vec<(Dictionary, zstd::zstd_safe::DCtx<'static>)>,
}

impl fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decompressor").finish_non_exhaustive()
    }
}

impl Decompressor {
    /// A decompressor with no contexts yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `src` into `dst`, which must be exactly the decoded size.
    ///
    /// Every decoder used here is bounds-checked: hostile input yields an error, never a write
    /// outside `dst` or an allocation sized by the input.
    pub fn decompress_into(&mut self, codec: CodecId, src: &[u8], dst: &mut [u8]) -> Result<()> {
        self.decompress_with(codec, src, dst, &Dictionaries::none())
    }

    /// [`decompress_into`](Self::decompress_into), with `dictionaries` for `zstd-dict` blocks;
    /// a block needing one that is not among them is [`Error::MissingDictionary`].
    pub fn decompress_with(
        &mut self,
        codec: CodecId,
        src: &[u8],
        dst: &mut [u8],
        dictionaries: &Dictionaries,
    ) -> Result<()> {
        let produced = match codec {
            CodecId::None => {
                if src.len() != dst.len() {
                    return Err(codec_err(codec, "raw block length differs from its declared size"));
                }
                dst.copy_from_slice(src);
                dst.len()
            }
            CodecId::Lz4 => {
                if i32::try_from(dst.len()).is_err() {
                    return Err(codec_err(codec, "block too large for lz4"));
                }
                // LZ4_decompress_safe: never reads or writes outside the given slices.
                lzzzz::lz4::decompress(src, dst).map_err(|e| codec_err(codec, e.to_string()))?
            }
            CodecId::Zstd => {
                let dctx = match &mut self.zstd {
                    Some(d) => d,
                    slot => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| codec_err(codec, e.to_string()))?),
                };
                dctx.decompress_to_buffer(src, dst)
                    .map_err(|e| codec_err(codec, e.to_string()))?
            }
            CodecId::Gzip => deflate_decompress(Decompress::new_gzip(15), codec, src, dst)?,
            CodecId::Zlib => deflate_decompress(Decompress::new(true), codec, src, dst)?,
            CodecId::ZstdDict => {
                let id = dictionary::payload_id(src)
                    .ok_or_else(|| codec_err(codec, "payload shorter than its dictionary id"))?;
                let dictionary = dictionaries.find(id).ok_or_else(|| dictionaries.missing(id))?;
                let dctx = self.zstd_dict_context(dictionary)?;
                dctx.decompress(dst, &src[DICTIONARY_ID_LEN..])
                    .map_err(|code| codec_err(codec, zstd::zstd_safe::get_error_name(code)))?
            }
        };
        if produced != dst.len() {
            return Err(codec_err(
                codec,
                format!("decoded {produced} bytes, block declares {}", dst.len()),
            ));
        }
        Ok(())
    }
}

impl Decompressor {
    fn zstd_dict_context(&mut self, dictionary: &Dictionary) -> Result<&mut zstd::zstd_safe::DCtx<'static>> {
        if let Some(i) = self.zstd_dict.iter().position(|(d, _)| d.same_as(dictionary)) {
            let c = self.zstd_dict.remove(i);
            self.zstd_dict.insert(0, c);
        } else {
            let mut dctx = zstd::zstd_safe::DCtx::try_create()
                .ok_or_else(|| codec_err(CodecId::ZstdDict, "cannot allocate a context"))?;
            dctx.load_dictionary(dictionary.bytes())
                .map_err(|code| codec_err(CodecId::ZstdDict, zstd::zstd_safe::get_error_name(code)))?;
            self.zstd_dict.truncate(ZSTD_CONTEXTS - 1);
            self.zstd_dict.insert(0, (dictionary.clone(), dctx));
        }
        Ok(&mut self.zstd_dict[0].1)
    }
}

fn deflate_decompress(mut dec: Decompress, codec: CodecId, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    match dec.decompress(src, dst, FlushDecompress::Finish) {
        Ok(Status::StreamEnd) if dec.total_in() as usize == src.len() => Ok(dec.total_out() as usize),
        Ok(Status::StreamEnd) => Err(codec_err(codec, "trailing bytes after the deflate stream")),
        Ok(_) => Err(codec_err(codec, "deflate stream does not end where the block ends")),
        Err(e) => Err(codec_err(codec, e.to_string())),
    }
}

fn codec_err(codec: CodecId, detail: impl Into<String>) -> Error {
    Error::Codec {
        codec: codec.name(),
        detail: detail.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        (0..100_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect()
    }

    const ALL: [Codec; 7] = [
        Codec::Lz4 { acceleration: 1 },
        Codec::Lz4 { acceleration: 8 },
        Codec::Lz4Hc { level: 9 },
        Codec::Zstd { level: 3 },
        Codec::Zstd { level: -5 },
        Codec::Gzip { level: 6 },
        Codec::Zlib { level: 1 },
    ];

    #[test]
    fn every_codec_round_trips() {
        let src = sample();
        let mut c = Compressor::new();
        let mut d = Decompressor::new();
        for codec in ALL {
            let mut buf = vec![0u8; src.len()];
            let n = c.compress_into(codec, &src, &mut buf).unwrap().expect("compressible");
            assert!(n < src.len() / 2, "{codec} gave {n}");
            let mut out = vec![0u8; src.len()];
            d.decompress_into(codec.id(), &buf[..n], &mut out).unwrap();
            assert_eq!(out, src, "{codec}");
        }
    }

    #[test]
    fn appending_gives_the_bytes_compressing_into_a_slice_gives() {
        let src = sample();
        let mut c = Compressor::new();
        for codec in ALL {
            let mut buf = vec![0u8; src.len()];
            let n = c.compress_into(codec, &src, &mut buf).unwrap().unwrap();
            let mut dst = b"head".to_vec();
            assert_eq!(
                c.compress_append(codec, &src, &mut dst, src.len()).unwrap(),
                Some(n),
                "{codec}"
            );
            assert_eq!(&dst[..4], b"head");
            assert_eq!(&dst[4..], &buf[..n], "{codec}");
        }
    }

    #[test]
    fn an_append_that_does_not_fit_leaves_the_buffer_as_it_was() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let mut c = Compressor::new();
        for codec in ALL {
            // With and without spare room beyond the limit (zstd and deflate may use it).
            for spare in [0, 1 << 16] {
                let mut dst = Vec::with_capacity(3 + spare);
                dst.extend_from_slice(b"abc");
                assert_eq!(c.compress_append(codec, &src, &mut dst, 16).unwrap(), None, "{codec}");
                assert_eq!(dst, b"abc", "{codec}");
            }
        }
        let mut dst = Vec::new();
        assert_eq!(c.compress_append(Codec::None, &src, &mut dst, 8192).unwrap(), None);
        assert_eq!(c.compress_append(ALL[0], &[], &mut dst, 8192).unwrap(), None);
        assert!(dst.is_empty());
    }

    #[test]
    fn output_that_does_not_fit_is_none() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let mut c = Compressor::new();
        for codec in ALL {
            let mut buf = vec![0u8; 16];
            assert_eq!(c.compress_into(codec, &src, &mut buf).unwrap(), None, "{codec}");
        }
    }

    #[test]
    fn wrong_sizes_and_garbage_are_errors() {
        let src = sample();
        let mut c = Compressor::new();
        let mut d = Decompressor::new();
        for codec in ALL {
            let mut buf = vec![0u8; src.len()];
            let n = c.compress_into(codec, &src, &mut buf).unwrap().unwrap();
            let mut short = vec![0u8; src.len() - 1];
            assert!(d.decompress_into(codec.id(), &buf[..n], &mut short).is_err(), "{codec}");
            let mut long = vec![0u8; src.len() + 1];
            assert!(d.decompress_into(codec.id(), &buf[..n], &mut long).is_err(), "{codec}");
            let mut out = vec![0u8; src.len()];
            assert!(
                d.decompress_into(codec.id(), &buf[..n / 2], &mut out).is_err(),
                "{codec}"
            );
            assert!(d.decompress_into(codec.id(), &[0xff; 64], &mut out).is_err(), "{codec}");
        }
    }

    /// More dictionaries in turn than contexts kept: every value decodes with its own.
    #[test]
    fn dictionaries_in_turn_each_decode_their_blocks() {
        let dicts: Vec<Dictionary> = (0..5u8)
            .map(|k| Dictionary::new((0..2000u32).map(|i| (i % 200) as u8 ^ k).collect::<Vec<u8>>()).unwrap())
            .collect();
        let all = Dictionaries::from(dicts.clone());
        let mut c = Compressor::new();
        let mut d = Decompressor::new();
        for round in 0..3 {
            for (k, dict) in dicts.iter().enumerate() {
                let src: Vec<u8> = (0..3000u32).map(|i| (i % 200) as u8 ^ k as u8).collect();
                let mut out = Vec::new();
                let level = 1 + (round + k as i32) % 3;
                let n = c
                    .compress_append_with_dictionary(level, dict, &src, &mut out, src.len())
                    .unwrap()
                    .expect("compressible");
                assert_eq!(dictionary::payload_id(&out), Some(dict.id()));
                let mut back = vec![0u8; src.len()];
                d.decompress_with(CodecId::ZstdDict, &out[..n], &mut back, &all)
                    .unwrap();
                assert_eq!(back, src, "dictionary {k}, round {round}");
            }
        }
        assert!(c.zstd_dict.len() <= ZSTD_CONTEXTS && d.zstd_dict.len() <= ZSTD_CONTEXTS);
    }

    #[test]
    fn levels_are_validated() {
        assert!(Codec::Zstd { level: 23 }.validate().is_err());
        assert!(Codec::Lz4Hc { level: 0 }.validate().is_err());
        assert!(Codec::Gzip { level: 10 }.validate().is_err());
        assert!(Codec::Lz4 { acceleration: 0 }.validate().is_err());
        assert!(Codec::Zstd { level: -50 }.validate().is_ok());
    }

    /// The expansion bounds a reader enforces must hold for the densest data every codec and
    /// level writes: otherwise a valid file would be refused. Zeros, and one repeated byte
    /// pattern, in the largest block allowed.
    #[test]
    fn densest_blocks_stay_within_the_expansion_bound() {
        let size = crate::stream::format::MAX_BLOCK_SIZE;
        let zeros = vec![0u8; size];
        let pattern: Vec<u8> = (0..size).map(|i| (i % 7) as u8).collect();
        let codecs = [
            Codec::Lz4 { acceleration: 1 },
            Codec::Lz4 { acceleration: 65537 },
            Codec::Lz4Hc { level: 12 },
            Codec::Zstd { level: -5 },
            Codec::Zstd { level: 1 },
            Codec::Zstd { level: 19 },
            Codec::Gzip { level: 9 },
            Codec::Zlib { level: 1 },
        ];
        let mut c = Compressor::new();
        for codec in codecs {
            for data in [&zeros, &pattern] {
                let mut out = Vec::new();
                // A block that does not shrink is stored raw (LZ4 at acceleration 65537 on the
                // pattern): nothing to check.
                let Some(n) = c.compress_append(codec, data, &mut out, size).unwrap() else {
                    continue;
                };
                let bound = codec.id().max_decoded_len(n as u64);
                assert!(size as u64 <= bound, "{codec:?}: {size} bytes from {n}, bound {bound}");
            }
        }
    }

    /// Whether a block compresses must not depend on the spare capacity of the buffer it goes
    /// into (a writer's staging buffer, or a whole file in memory): the fuzz target
    /// `roundtrip` found a 60-byte block that zstd compressed into a roomy buffer and refused
    /// into one of exactly its limit, so `kompakt::compress` and a `Writer` made different files.
    #[test]
    fn the_outcome_does_not_depend_on_spare_capacity() {
        let codecs = [
            Codec::Zstd { level: 4 },
            Codec::Zstd { level: -5 },
            Codec::Gzip { level: 6 },
            Codec::Zlib { level: 9 },
            Codec::Lz4 { acceleration: 1 },
            Codec::Lz4Hc { level: 9 },
        ];
        let mut c = Compressor::new();
        for len in 1..300usize {
            let src: Vec<u8> = (0..len).map(|i| b";;;;A;;"[i % 7] ^ (i / 50) as u8).collect();
            let limit = len - len / 32;
            for codec in codecs {
                let mut tight = Vec::new();
                let mut roomy = Vec::with_capacity(1 << 20);
                let a = c.compress_append(codec, &src, &mut tight, limit).unwrap();
                let b = c.compress_append(codec, &src, &mut roomy, limit).unwrap();
                assert_eq!(a, b, "{codec:?}, {len} bytes");
                assert_eq!(tight, roomy, "{codec:?}, {len} bytes");
            }
        }
    }
}
