//! Encoding and decoding of one block: filters, codec choice, raw fallback, checksum.
//! No I/O happens here; the writer and readers move the bytes.

use super::format::{verify_block, BlockHeader, BLOCK_HEADER_LEN};
use crate::codec::{
    clearly_short, looks_incompressible, probe, too_little_saved, Codec, CodecId, CodecSpec, Compressor, Decompressor,
    Dictionaries, Dictionary, ProbeResult, SavingBar, ENTROPY_SAMPLES, MIN_SAVING, SAMPLES,
};
use crate::error::Result;
use crate::filter::{FilterSet, Stores};

/// How the blocks of one stream are encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSettings {
    /// Codec, or `auto`.
    pub codec: CodecSpec,
    /// Filters for fixed codecs (already resolved against the element size), unless
    /// `auto_filters` lets the encoder choose them per block.
    pub filters: FilterSet,
    /// Element size hint (1 = bytes).
    pub typesize: u8,
    /// Whether the encoder chooses the filters of each block from trial compressions: with
    /// codec `auto` unless the user asked for no filter, with a fixed codec when the user asked
    /// for filter `auto`.
    pub auto_filters: bool,
    /// The zstd dictionary blocks compressed with zstd use (`zstd-dict` blocks, which only a
    /// format 2.0 file may hold: see [`Writer::with_dictionary`](super::Writer::with_dictionary)).
    pub dictionary: Option<Dictionary>,
}

/// An encoded block: its header and a payload that is either the caller's bytes (stored raw,
/// no copy) or a compressed buffer.
#[derive(Debug)]
pub struct EncodedBlock<'a> {
    /// Header bytes, checksum included.
    pub header: [u8; BLOCK_HEADER_LEN],
    /// Decoded header fields.
    pub fields: BlockHeader,
    /// Payload to write after the header.
    pub payload: Payload<'a>,
}

/// A block's payload.
#[derive(Debug)]
pub enum Payload<'a> {
    /// The input bytes themselves (stored raw).
    Borrowed(&'a [u8]),
    /// Compressed bytes (the buffer may be longer; `len` bytes are used).
    Owned(Vec<u8>, usize),
}

impl Payload<'_> {
    /// The bytes to store.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::Borrowed(b) => b,
            Payload::Owned(v, n) => &v[..*n],
        }
    }
}

/// Blocks up to this size skip the incompressibility probe (see [`BlockEncoder::encode`]).
pub const SMALL_BLOCK: usize = 64 << 10;

/// Blocks up to this size, with a speed-first zstd level, try LZ4 first (see
/// [`BlockEncoder::encode`]): the small values of a store, the pickles of small objects.
pub const TINY_BLOCK: usize = 4 << 10;

/// zstd at a speed-first level (the levels [`SavingBar::for_codec`] gives the fast bar).
fn is_fast_zstd(codec: Codec) -> bool {
    matches!(codec, Codec::Zstd { .. }) && SavingBar::for_codec(codec) == SavingBar::FAST
}

/// Largest stored size accepted for a compressed block of `raw` bytes: a block must shrink by
/// at least 1/64 (1.6 %), or it is stored raw and decodes at memcpy speed.
pub fn worthwhile_limit(raw: usize) -> usize {
    raw - raw / 64 - 1
}

/// Per-thread encoding state: codec contexts and scratch buffers, reused across blocks.
#[derive(Debug, Default)]
pub struct BlockEncoder {
    compressor: Compressor,
    filtered: Vec<u8>,
    tmp: Vec<u8>,
    scratch: Vec<u8>,
}

impl BlockEncoder {
    /// Frees scratch buffers larger than `max` bytes.
    pub(crate) fn trim(&mut self, max: usize) {
        for buf in [&mut self.filtered, &mut self.tmp, &mut self.scratch] {
            super::pool::trim_buffer(buf, max);
        }
    }

    /// Encodes `data` (1..=64 MiB) as one block of `stream`.
    pub fn encode<'a>(&mut self, stream: u32, settings: &BlockSettings, data: &'a [u8]) -> Result<EncodedBlock<'a>> {
        let mut out = Vec::new();
        match self.compress(stream, settings, data, &mut out)? {
            Some(fields) => Ok(EncodedBlock {
                header: fields.encode(&out),
                fields,
                payload: Payload::Owned(out, fields.stored_len as usize),
            }),
            None => Ok(raw_block(stream, data)),
        }
    }

    /// Encodes `data` (1..=64 MiB) as one block of `stream` and appends its header and
    /// payload to `out`, compressing straight into `out`'s memory; returns the header's fields.
    pub fn encode_append(
        &mut self,
        stream: u32,
        settings: &BlockSettings,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let start = out.len();
        out.extend_from_slice(&[0; BLOCK_HEADER_LEN]);
        let fields = match self.compress(stream, settings, data, out) {
            Ok(Some(fields)) => fields,
            Ok(None) => {
                out.extend_from_slice(data);
                raw_fields(stream, data)
            }
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        };
        let header = fields.encode(&out[start + BLOCK_HEADER_LEN..]);
        out[start..start + BLOCK_HEADER_LEN].copy_from_slice(&header);
        Ok(fields)
    }

    /// Compresses `data` as its settings say and appends the payload to `out`, returning the
    /// block's header fields; `None`, with nothing appended, when the block is stored raw.
    fn compress(
        &mut self,
        stream: u32,
        settings: &BlockSettings,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<BlockHeader>> {
        // `auto` and chosen filters probe while choosing; fixed settings probe below.
        let (codec, filters, probed) = match settings.codec {
            CodecSpec::Fixed(Codec::None) => (Codec::None, FilterSet::NONE, true),
            CodecSpec::Fixed(codec) if settings.auto_filters => {
                let (codec, filters) = self.choose_filters(codec, settings, data)?;
                (codec, filters, true)
            }
            CodecSpec::Fixed(codec) => (codec, settings.filters, false),
            CodecSpec::Auto => {
                let (codec, filters) = self.choose(settings, data)?;
                (codec, filters, true)
            }
        };
        if codec == Codec::None {
            return Ok(None);
        }
        let input: &[u8] = if filters.is_none() {
            data
        } else {
            filters.encode(settings.typesize, data, &mut self.filtered, &mut self.tmp);
            &self.filtered
        };
        // Fixed codecs probe here so random data costs ~a memcpy. A small block is compressed
        // straight away instead: its samples would cover most of it, so probing would cost
        // as much as compressing, and the codec's own result decides.
        let small = data.len() <= SMALL_BLOCK;
        if !probed
            && !small
            && looks_incompressible(
                &mut self.compressor,
                input,
                entropy_coded(codec),
                filters.shuffles(),
                SavingBar::for_codec(codec),
                &mut self.scratch,
            )?
        {
            return Ok(None);
        }
        let limit = if small && !probed {
            let bar = SavingBar::for_codec(codec).repeats;
            worthwhile_limit(data.len()).min(data.len() - (data.len() as f64 * bar).ceil() as usize)
        } else {
            worthwhile_limit(data.len())
        };
        if let (Codec::Zstd { level }, Some(dictionary)) = (codec, &settings.dictionary) {
            // The dictionary is the point on small blocks; no LZ4 first.
            let stored = self
                .compressor
                .compress_append_with_dictionary(level, dictionary, input, out, limit)?;
            return Ok(stored.map(|n| BlockHeader {
                codec: CodecId::ZstdDict,
                filters,
                typesize: settings.typesize,
                stream,
                raw_len: data.len() as u32,
                stored_len: n as u32,
            }));
        }
        let mut codec = codec;
        let mut stored = None;
        if small && !probed && data.len() <= TINY_BLOCK && is_fast_zstd(codec) {
            // On a tiny block zstd's fixed cost (building its entropy tables, ~10 us for 1 KiB)
            // outweighs the work; LZ4 takes about 1 us. A speed-first zstd level keeps LZ4's
            // result when it clears the bar (`limit`), and runs zstd only when it does not.
            const LZ4: Codec = Codec::Lz4 { acceleration: 1 };
            stored = self.compressor.compress_append(LZ4, input, out, limit)?;
            if stored.is_some() {
                codec = LZ4;
            }
        }
        if stored.is_none() {
            stored = self.compressor.compress_append(codec, input, out, limit)?;
        }
        Ok(stored.map(|n| BlockHeader {
            codec: codec.id(),
            filters,
            typesize: settings.typesize,
            stream,
            raw_len: data.len() as u32,
            stored_len: n as u32,
        }))
    }

    /// The filter whose samples compress best under LZ4, with that trial's result and the
    /// gathered samples (empty when only the unfiltered block was tried).
    fn best_filter(&mut self, settings: &BlockSettings, data: &[u8]) -> Result<(ProbeResult, FilterSet, Vec<u8>)> {
        const LZ4: Codec = Codec::Lz4 { acceleration: 1 };
        let typesize = settings.typesize;
        // Unfiltered, the block itself is probed (no copy). Typed data also tries shuffle and
        // delta+shuffle on a gathered copy of the samples; plain bytes try nothing else, since
        // delta on bytes rarely pays and a second trial would double the cost of every block.
        let mut best = (
            probe(&mut self.compressor, LZ4, data, SAMPLES, &mut self.scratch)?,
            FilterSet::NONE,
        );
        let filtered_candidates = [FilterSet::SHUFFLE, FilterSet::DELTA_SHUFFLE];
        let mut samples = Vec::new();
        if settings.auto_filters && filtered_candidates.iter().any(|f| f.supports(typesize)) {
            samples = gather_samples(data, usize::from(typesize));
            for f in filtered_candidates.into_iter().filter(|f| f.supports(typesize)) {
                f.encode(typesize, &samples, &mut self.filtered, &mut self.tmp);
                let r = probe(&mut self.compressor, LZ4, &self.filtered, SAMPLES, &mut self.scratch)?;
                if r.fraction() < best.0.fraction() {
                    best = (r, f);
                }
            }
        }
        Ok((best.0, best.1, samples))
    }

    /// Filter `auto` with a fixed codec: the best filter by LZ4 trial, or raw (`Codec::None`)
    /// when the trials save less than the codec's bar.
    fn choose_filters(&mut self, codec: Codec, settings: &BlockSettings, data: &[u8]) -> Result<(Codec, FilterSet)> {
        let (lz4, filters, samples) = self.best_filter(settings, data)?;
        if settings.dictionary.is_some() {
            // Trials without the dictionary would call small records incompressible; the
            // codec's own result decides.
            return Ok((codec, filters));
        }
        let bar = SavingBar::for_codec(codec);
        let entropy = entropy_coded(codec);
        let trial = trial_input(
            &mut self.filtered,
            &mut self.tmp,
            settings.typesize,
            filters,
            data,
            &samples,
        );
        let shuffled = filters.shuffles();
        let raw = too_little_saved(
            &mut self.compressor,
            trial,
            lz4,
            entropy,
            shuffled,
            bar,
            &mut self.scratch,
        )?;
        Ok(if raw {
            (Codec::None, FilterSet::NONE)
        } else {
            (codec, filters)
        })
    }

    /// `auto`: pick the filter whose samples compress best under LZ4, then LZ4 or ZSTD-1 from a
    /// second trial; store raw when neither saves [`SavingBar::FAST`] (both codecs are fast).
    fn choose(&mut self, settings: &BlockSettings, data: &[u8]) -> Result<(Codec, FilterSet)> {
        const LZ4: Codec = Codec::Lz4 { acceleration: 1 };
        const ZSTD: Codec = Codec::Zstd { level: 1 };
        let (lz4, filters, samples) = self.best_filter(settings, data)?;
        let lz4_fraction = lz4.fraction();
        let trial = trial_input(
            &mut self.filtered,
            &mut self.tmp,
            settings.typesize,
            filters,
            data,
            &samples,
        );
        // When LZ4 finds nothing, two samples are enough to tell whether entropy coding alone
        // would pay (this keeps random data near memcpy speed), unless the samples are byte
        // planes, which differ too much for two to stand for eight.
        let zstd_samples = if lz4_fraction > 1.0 - MIN_SAVING && !filters.shuffles() {
            ENTROPY_SAMPLES
        } else {
            SAMPLES
        };
        let bar = SavingBar::FAST;
        if clearly_short(trial, lz4, zstd_samples, bar.entropy) {
            return Ok((Codec::None, FilterSet::NONE));
        }
        let zstd_fraction = probe(&mut self.compressor, ZSTD, trial, zstd_samples, &mut self.scratch)?.fraction();
        let lz4_short = lz4_fraction > 1.0 - bar.repeats;
        let codec = if lz4_short && zstd_fraction > 1.0 - bar.entropy {
            Codec::None
        } else if lz4_short || zstd_fraction < lz4_fraction * 0.9 {
            ZSTD
        } else {
            LZ4
        };
        Ok((codec, filters))
    }
}

/// What trials run on once the filter is chosen: the block itself, or the filtered samples.
fn trial_input<'d>(
    filtered: &'d mut Vec<u8>,
    tmp: &mut Vec<u8>,
    typesize: u8,
    filters: FilterSet,
    data: &'d [u8],
    samples: &[u8],
) -> &'d [u8] {
    if filters.is_none() {
        data
    } else {
        filters.encode(typesize, samples, filtered, tmp);
        filtered
    }
}

/// Whether a codec has an entropy stage (zstd, deflate), which helps data without repeats.
fn entropy_coded(codec: Codec) -> bool {
    !matches!(codec, Codec::Lz4 { .. } | Codec::Lz4Hc { .. })
}

/// Up to 64 KiB of evenly spaced, element-aligned samples of `data`.
fn gather_samples(data: &[u8], typesize: usize) -> Vec<u8> {
    const PIECES: usize = 8;
    const PIECE: usize = 8 * 1024;
    if data.len() <= PIECES * PIECE {
        return data.to_vec();
    }
    let ts = typesize.max(1);
    let piece = PIECE / ts * ts;
    let stride = (data.len() - piece) / (PIECES - 1) / ts * ts;
    (0..PIECES)
        .flat_map(|i| &data[i * stride..i * stride + piece])
        .copied()
        .collect()
}

fn raw_fields(stream: u32, data: &[u8]) -> BlockHeader {
    BlockHeader {
        codec: CodecId::None,
        filters: FilterSet::NONE,
        typesize: 1,
        stream,
        raw_len: data.len() as u32,
        stored_len: data.len() as u32,
    }
}

fn raw_block(stream: u32, data: &[u8]) -> EncodedBlock<'_> {
    let fields = raw_fields(stream, data);
    EncodedBlock {
        header: fields.encode(data),
        fields,
        payload: Payload::Borrowed(data),
    }
}

/// Per-thread decoding state.
#[derive(Debug, Default)]
pub struct BlockDecoder {
    decompressor: Decompressor,
    scratch: Vec<u8>,
    whole: Vec<u8>,
    /// Blocks this thread read from the file itself (see `Reader`'s positional reads).
    fetched: Vec<u8>,
    /// What `zstd-dict` blocks may use.
    dictionaries: Dictionaries,
}

impl BlockDecoder {
    /// Frees scratch buffers larger than `max` bytes.
    pub(crate) fn trim(&mut self, max: usize) {
        for buf in [&mut self.scratch, &mut self.whole, &mut self.fetched] {
            super::pool::trim_buffer(buf, max);
        }
    }

    /// Sets the dictionaries `zstd-dict` blocks may use (none by default).
    pub fn set_dictionaries(&mut self, dictionaries: Dictionaries) {
        self.dictionaries = dictionaries;
    }

    /// The buffer for blocks read by this thread; give it back with
    /// [`give_fetch_buffer`](Self::give_fetch_buffer) to keep its memory.
    pub(crate) fn take_fetch_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.fetched)
    }

    pub(crate) fn give_fetch_buffer(&mut self, buf: Vec<u8>) {
        self.fetched = buf;
    }

    /// Checks the checksum (when `verify`) and decodes a whole block into `dst`
    /// (exactly `raw_len` bytes).
    pub fn decode_into(
        &mut self,
        header: &[u8; BLOCK_HEADER_LEN],
        fields: &BlockHeader,
        payload: &[u8],
        offset: u64,
        verify: bool,
        dst: &mut [u8],
    ) -> Result<()> {
        self.decode_to(header, fields, payload, offset, verify, dst, Stores::Cached)
    }

    /// [`decode_into`](Self::decode_into), with the filters writing `dst` with `stores`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn decode_to(
        &mut self,
        header: &[u8; BLOCK_HEADER_LEN],
        fields: &BlockHeader,
        payload: &[u8],
        offset: u64,
        verify: bool,
        dst: &mut [u8],
        stores: Stores,
    ) -> Result<()> {
        if verify {
            verify_block(header, payload, offset)?;
        }
        if fields.filters.is_none() {
            return self
                .decompressor
                .decompress_with(fields.codec, payload, dst, &self.dictionaries);
        }
        self.scratch.resize(dst.len(), 0);
        self.decompressor
            .decompress_with(fields.codec, payload, &mut self.scratch, &self.dictionaries)?;
        fields.filters.decode_to(fields.typesize, &self.scratch, dst, stores)
    }

    /// Decodes a block read from the file (`bytes`: its header and payload) after checking that
    /// the header says what the footer's index `entry` says, copying `dst.len()` raw bytes from
    /// `skip` on. For callers that read blocks themselves (positional reads on many threads).
    pub fn decode_entry(
        &mut self,
        entry: &super::format::BlockEntry,
        bytes: &[u8],
        verify: bool,
        skip: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let fits = skip
            .checked_add(dst.len())
            .is_some_and(|end| end <= entry.header.raw_len as usize);
        if bytes.len() != BLOCK_HEADER_LEN + entry.header.stored_len as usize || !fits {
            return Err(crate::Error::Usage(
                "decode_entry: buffer sizes do not match the block".into(),
            ));
        }
        let (head, payload) = bytes.split_at(BLOCK_HEADER_LEN);
        let head: &[u8; BLOCK_HEADER_LEN] = head.try_into().expect("split at the header length");
        if BlockHeader::decode(head, entry.file_offset)? != entry.header {
            return Err(crate::Error::corrupt(
                "block header",
                entry.file_offset,
                "disagrees with the footer's block index",
            ));
        }
        if skip == 0 && dst.len() == entry.header.raw_len as usize {
            self.decode_into(head, &entry.header, payload, entry.file_offset, verify, dst)
        } else {
            self.decode_part(head, &entry.header, payload, entry.file_offset, verify, skip, dst)
        }
    }

    /// Decodes a block and copies `dst.len()` bytes starting at `skip` within it.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_part(
        &mut self,
        header: &[u8; BLOCK_HEADER_LEN],
        fields: &BlockHeader,
        payload: &[u8],
        offset: u64,
        verify: bool,
        skip: usize,
        dst: &mut [u8],
    ) -> Result<()> {
        let mut whole = std::mem::take(&mut self.whole);
        whole.resize(fields.raw_len as usize, 0);
        let result = self.decode_into(header, fields, payload, offset, verify, &mut whole);
        if result.is_ok() {
            dst.copy_from_slice(&whole[skip..skip + dst.len()]);
        }
        self.whole = whole;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterSpec;

    fn settings(codec: &str, typesize: u8) -> BlockSettings {
        BlockSettings {
            codec: codec.parse().unwrap(),
            filters: FilterSpec::Shuffle.resolve(typesize),
            typesize,
            auto_filters: true,
            dictionary: None,
        }
    }

    fn round_trip(s: &BlockSettings, data: &[u8]) -> BlockHeader {
        let mut enc = BlockEncoder::default();
        let b = enc.encode(7, s, data).unwrap();
        let mut dec = BlockDecoder::default();
        let mut out = vec![0u8; data.len()];
        dec.decode_into(&b.header, &b.fields, b.payload.bytes(), 0, true, &mut out)
            .unwrap();
        assert_eq!(out, data);
        let mut part = vec![0u8; data.len() / 3];
        dec.decode_part(
            &b.header,
            &b.fields,
            b.payload.bytes(),
            0,
            true,
            data.len() / 2,
            &mut part,
        )
        .unwrap();
        assert_eq!(part, &data[data.len() / 2..data.len() / 2 + part.len()]);
        b.fields
    }

    #[test]
    fn sorted_integers_pick_a_filter_under_auto() {
        let data: Vec<u8> = (0..200_000u64)
            .flat_map(|i| (1_000_000 + i * 3).to_le_bytes())
            .collect();
        let h = round_trip(&settings("auto", 8), &data);
        assert!(!h.filters.is_none(), "{h:?}");
        assert!(h.stored_len < h.raw_len / 10);
    }

    #[test]
    fn random_data_is_stored_raw_by_every_codec() {
        let mut x = 1u64;
        let data: Vec<u8> = (0..300_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) as u8
            })
            .collect();
        for codec in ["auto", "lz4", "zstd:19", "gzip", "lz4hc"] {
            let h = round_trip(&settings(codec, 1), &data);
            assert_eq!(h.codec, CodecId::None, "{codec}");
        }
    }

    #[test]
    fn tiny_blocks_of_fast_zstd_try_lz4_first() {
        let settings = |codec: &str, _| BlockSettings {
            codec: codec.parse().unwrap(),
            filters: FilterSet::NONE,
            typesize: 1,
            auto_filters: false,
            dictionary: None,
        };
        // Repeats LZ4 finds: LZ4 is kept.
        let repeats = b"measurement_07=0.25;".repeat(50);
        assert_eq!(round_trip(&settings("zstd:1", 1), &repeats).codec, CodecId::Lz4);
        assert_eq!(round_trip(&settings("zstd:-3", 1), &repeats).codec, CodecId::Lz4);
        // Text without repeats, which only entropy coding shrinks: zstd still runs.
        let mut x = 7u64;
        let letters: Vec<u8> = (0..3000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                b"etaoinshrdlu"[((x >> 33) % 12) as usize]
            })
            .collect();
        assert_eq!(round_trip(&settings("zstd:1", 1), &letters).codec, CodecId::Zstd);
        // Larger blocks and other levels are left to the codec asked for.
        assert_eq!(round_trip(&settings("zstd:3", 1), &repeats).codec, CodecId::Zstd);
        let larger = b"measurement_07=0.25;".repeat(300);
        assert_eq!(round_trip(&settings("zstd:1", 1), &larger).codec, CodecId::Zstd);
    }

    #[test]
    fn typed_floats_round_trip_with_shuffle() {
        let data: Vec<u8> = (0..100_000).flat_map(|i| (f64::from(i) * 0.25).to_le_bytes()).collect();
        for codec in ["lz4", "zstd:3", "auto", "zlib:1"] {
            let h = round_trip(&settings(codec, 8), &data);
            assert!(h.stored_len < h.raw_len / 2, "{codec}: {h:?}");
        }
    }
}
