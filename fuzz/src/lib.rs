//! Helpers shared by the kompakt fuzz targets.
//!
//! The file format is checksummed everywhere (file header, every block, footer, trailer), so
//! a mutated file almost never gets past the first checksum. [`with_header`] and [`repair`]
//! rebuild what a mutation cannot guess (the header, the footer's length field, every
//! checksum) so that the index validation, the block decoders and the filters see the mutated
//! bytes too.

use kompakt::codec::{Dictionaries, Dictionary};
use kompakt::stream::compact::{COMPACT_HEADER_LEN, COMPACT_MAJOR};
use kompakt::stream::format::{
    header_checksum, FileHeader, BLOCK_HEADER_LEN, BLOCK_TAG, FILE_HEADER_LEN, FOOTER_HEADER_LEN, FOOTER_TAG, MAGIC,
    TRAILER_LEN,
};
use kompakt::stream::{decode_sequential_with, SequentialDecoder};
use kompakt::{Error, ReadOptions, Reader};
use std::collections::BTreeMap;
use std::io::{Cursor, Read, Seek, SeekFrom};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// Largest stream a target reads whole (declared sizes can be far larger than the input:
/// a block entry of 56 bytes may declare 64 MiB).
pub const MAX_WHOLE_STREAM: u64 = 64 << 20;
/// Largest total a target collects from `decode_sequential`.
pub const MAX_COLLECTED: u64 = 128 << 20;
/// Largest single range read.
pub const MAX_RANGE: u64 = 1 << 20;

/// Single-threaded reads: panics surface in the fuzzer's thread (the parallel engine turns a
/// worker's panic into an error) and the 2-core machine is not oversubscribed.
pub fn read_options(verify_checksums: bool) -> ReadOptions {
    ReadOptions {
        threads: 1,
        verify_checksums,
    }
}

/// `data` behind a valid file header, unless it already starts with the magic.
pub fn with_header(data: &[u8]) -> Option<Vec<u8>> {
    if data.starts_with(&MAGIC) {
        return None;
    }
    let mut f = FileHeader::CURRENT.encode().to_vec();
    f.extend_from_slice(data);
    Some(f)
}

/// Makes every checksum and length field that a mutation cannot get right consistent again:
/// the file header, the checksum of every block that can be walked from the header, the
/// footer header's reserved bytes and body length, the footer checksum and the trailer.
///
/// The footer is found from the trailer's offset when that is plausible, else at the last
/// `0xF0` byte that leaves room for a footer. A file written by kompakt comes back unchanged.
/// Returns `None` when the input is too short to hold the structures.
pub fn repair(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() >= 6 && data.starts_with(&MAGIC) && data[4..6] == COMPACT_MAJOR.to_le_bytes() {
        return repair_compact(data);
    }
    let mut f = match with_header(data) {
        Some(f) => f,
        None => data.to_vec(),
    };
    let min_footer = FOOTER_HEADER_LEN + 16 + 8;
    if f.len() < FILE_HEADER_LEN + min_footer + TRAILER_LEN {
        return None;
    }
    // Keep a 2.0 file 2.0 (it may hold `zstd-dict` blocks) and make anything else 1.0.
    let header = match FileHeader::decode(f[..FILE_HEADER_LEN].try_into().expect("16 bytes")) {
        Ok(h) if h.major == FileHeader::WITH_DICTIONARIES.major => FileHeader::WITH_DICTIONARIES,
        _ => FileHeader::CURRENT,
    };
    f[..FILE_HEADER_LEN].copy_from_slice(&header.encode());
    let trailer_at = f.len() - TRAILER_LEN;
    let last_footer = trailer_at - min_footer;
    let claimed = le_u64(&f, trailer_at);
    let footer_at = if (FILE_HEADER_LEN as u64..=last_footer as u64).contains(&claimed) {
        claimed as usize
    } else {
        (FILE_HEADER_LEN..=last_footer).rev().find(|&p| f[p] == FOOTER_TAG)?
    };
    // Footer header: tag, reserved zeros, body length.
    let footer_len = trailer_at - footer_at;
    f[footer_at] = FOOTER_TAG;
    f[footer_at + 1..footer_at + 8].fill(0);
    f[footer_at + 8..footer_at + 16].copy_from_slice(&((footer_len - FOOTER_HEADER_LEN) as u64).to_le_bytes());
    // Block checksums, for the blocks that can be walked from the header.
    let mut pos = FILE_HEADER_LEN;
    while pos + BLOCK_HEADER_LEN <= footer_at && f[pos] == BLOCK_TAG {
        let stored = le_u32(&f, pos + 12) as usize;
        let Some(end) = (pos + BLOCK_HEADER_LEN).checked_add(stored).filter(|&e| e <= footer_at) else {
            break;
        };
        let mut h = Xxh3::new();
        h.update(&f[pos..pos + 16]);
        h.update(&f[pos + BLOCK_HEADER_LEN..end]);
        let sum = h.digest();
        f[pos + 16..pos + 24].copy_from_slice(&sum.to_le_bytes());
        pos = end;
    }
    // Trailer.
    let footer_sum = xxh3_64(&f[footer_at..trailer_at]);
    let mut t = [0u8; TRAILER_LEN];
    t[0..8].copy_from_slice(&(footer_at as u64).to_le_bytes());
    t[8..16].copy_from_slice(&(footer_len as u64).to_le_bytes());
    t[16..24].copy_from_slice(&footer_sum.to_le_bytes());
    let check = header_checksum(&t[0..24]);
    t[24..28].copy_from_slice(&check.to_le_bytes());
    t[28..32].copy_from_slice(&MAGIC);
    f[trailer_at..].copy_from_slice(&t);
    Some(f)
}

/// [`repair`] of a compact file (format 3.0): its header checksum and its block checksum,
/// over the block header its fields describe, whatever they say.
fn repair_compact(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < COMPACT_HEADER_LEN {
        return None;
    }
    let mut f = data.to_vec();
    let check = header_checksum(&f[0..12]);
    f[12..16].copy_from_slice(&check.to_le_bytes());
    let stored = (f.len() - COMPACT_HEADER_LEN) as u32;
    let mut head = [0u8; 16];
    head[0] = BLOCK_TAG;
    head[1] = f[9];
    head[3] = 1;
    head[8..12].copy_from_slice(&f[16..20]);
    head[12..16].copy_from_slice(&stored.to_le_bytes());
    let mut h = Xxh3::new();
    h.update(&head);
    h.update(&f[COMPACT_HEADER_LEN..]);
    let sum = h.digest();
    f[20..28].copy_from_slice(&sum.to_le_bytes());
    Some(f)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// A tiny deterministic generator (splitmix64) for ranges derived from the input.
pub struct Rng(u64);

impl Rng {
    /// Seeded from the bytes, so a crash reproduces from its input alone.
    pub fn from_bytes(data: &[u8]) -> Rng {
        Rng(xxh3_64(data))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..=max`.
    pub fn upto(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            self.next_u64()
        } else {
            self.next_u64() % (max + 1)
        }
    }
}

/// Errors that a damaged or hostile file may produce. Anything else (I/O, usage, "a worker
/// thread panicked") from decoding an in-memory file is a bug.
pub fn assert_corruption(e: &Error, context: &str) {
    assert!(
        e.is_corruption() || missing_dictionary(e),
        "{context}: non-corruption error from a damaged file: {e:?}"
    );
}

/// The dictionaries the readers are given: `zstd-dict` blocks naming one reach zstd (the
/// `roundtrip` and `codec` targets make such blocks), others are a missing-dictionary error.
/// One raw-content dictionary and one trained (with entropy tables: the golden file's).
pub fn fuzz_dictionaries() -> Dictionaries {
    vec![fuzz_dictionary(), trained_dictionary()].into()
}

/// The golden 2.0 file's dictionary, a trained zstd dictionary.
pub fn trained_dictionary() -> Dictionary {
    Dictionary::new(include_bytes!("../../tests/golden/v2/dictionary.kpkd").to_vec()).expect("a valid dictionary")
}

/// A missing-dictionary error for a dictionary the fuzz readers were not given (one they were
/// given going missing would be a bug).
fn missing_dictionary(e: &Error) -> bool {
    match e {
        Error::MissingDictionary { id, .. } => fuzz_dictionaries().find(*id).is_none(),
        _ => false,
    }
}

/// See [`fuzz_dictionaries`].
pub fn fuzz_dictionary() -> Dictionary {
    Dictionary::new(b"kompakt fuzz dictionary: {\"level\":\"info\",\"user\":0,\"path\":\"/api/v2\"}".to_vec())
        .expect("a valid dictionary")
}

/// Decodes every stream of `file` with [`decode_sequential_with`]. `Ok(None)` when the streams
/// exceed [`MAX_COLLECTED`] bytes (decoding is stopped by the sink).
pub fn sequential_streams(file: &[u8], verify: bool) -> Result<Option<BTreeMap<u32, Vec<u8>>>, Error> {
    let mut streams: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut total = 0u64;
    let mut capped = false;
    let result = decode_sequential_with(file, &read_options(verify), &fuzz_dictionaries(), |s, bytes| {
        total += bytes.len() as u64;
        if total > MAX_COLLECTED {
            capped = true;
            return Err(Error::Usage("fuzz: collected too much".into()));
        }
        streams.entry(s).or_default().extend_from_slice(bytes);
        Ok(())
    });
    match result {
        Ok(footer) => {
            // Streams with no blocks never reach the sink.
            for s in 0..footer.streams.len() as u32 {
                streams.entry(s).or_default();
            }
            assert_eq!(
                streams.len(),
                footer.streams.len(),
                "decode_sequential: blocks name streams the footer does not have"
            );
            for (s, info) in footer.streams.iter().enumerate() {
                assert_eq!(
                    streams[&(s as u32)].len() as u64,
                    info.raw_len,
                    "decode_sequential: stream {s} length differs from the footer"
                );
            }
            Ok(Some(streams))
        }
        Err(_) if capped => Ok(None),
        Err(e) => {
            assert_corruption(&e, "decode_sequential");
            Err(e)
        }
    }
}

/// Decodes `input` with the pull decoder ([`SequentialDecoder`], what the JVM's input stream
/// uses), collecting at most [`MAX_COLLECTED`] bytes (`Ok(None)` past that).
pub fn pulled(input: &[u8], verify: bool, concatenated: bool) -> Result<Option<Vec<u8>>, Error> {
    let mut decoder = SequentialDecoder::new(&read_options(verify), fuzz_dictionaries()).concatenated(concatenated);
    let mut input = input;
    let mut out = Vec::new();
    while let Some(block) = decoder.next_block(&mut input)? {
        if (out.len() + block.len()) as u64 > MAX_COLLECTED {
            return Ok(None);
        }
        out.extend_from_slice(block);
    }
    Ok(Some(out))
}

/// The pull decoder must agree with [`sequential_streams`]' result `pushed` for the same
/// `file`: the same bytes where only stream 0 has data, an error where the push decoder
/// failed or another stream has data; and the file twice, read as concatenated files, gives
/// its bytes twice (a compact file, which ends only where its input does: an error).
pub fn check_pull_agrees(file: &[u8], verify: bool, pushed: &Result<Option<BTreeMap<u32, Vec<u8>>>, Error>) {
    let pull = pulled(file, verify, false);
    match pushed {
        Ok(None) => {}
        Err(_) => {
            let e = pull.expect_err("the pull decoder read a file decode_sequential refused");
            assert!(
                !matches!(e.kind(), kompakt::ErrorKind::Internal),
                "pull decoder: an internal error: {e}"
            );
        }
        Ok(Some(streams)) => {
            let others_empty = streams.iter().all(|(&s, bytes)| s == 0 || bytes.is_empty());
            if !others_empty {
                assert!(pull.is_err(), "the pull decoder read a file with data in two streams");
                return;
            }
            let want = streams.get(&0).cloned().unwrap_or_default();
            let Some(got) = pull.expect("the pull decoder failed where decode_sequential read the file") else {
                return;
            };
            assert_eq!(got, want, "pull decoder: different bytes");
            let compact = file.len() >= 6 && file[4..6] == COMPACT_MAJOR.to_le_bytes();
            if compact {
                // A compact file ends only where its input does: never one of several in a row.
                let twice = [file, file].concat();
                let e = pulled(&twice, verify, true).expect_err("a compact file read as one of several");
                assert!(!matches!(e.kind(), kompakt::ErrorKind::Internal), "{e}");
            } else if (2 * want.len() as u64) < MAX_COLLECTED {
                let twice = [file, file].concat();
                let got = pulled(&twice, verify, true).expect("the same file twice, concatenated");
                assert_eq!(got, Some([want.clone(), want].concat()), "concatenated files");
            }
        }
    }
}

/// Everything the random-access reader offers, on `file`: open, metadata, whole streams,
/// pseudo-random ranges (checked against the whole stream), `copy_range_to`, the
/// `StreamReader` view, out-of-range requests and `verify`.
///
/// Returns the decoded streams when every stream was read whole successfully.
pub fn exercise_reader(file: &[u8], verify: bool) -> Option<Vec<Vec<u8>>> {
    let mut rng = Rng::from_bytes(file);
    let mut r = match Reader::new(Cursor::new(file), read_options(verify)) {
        Ok(r) => r,
        Err(e) => {
            assert_corruption(&e, "Reader::new");
            return None;
        }
    };
    r.set_dictionaries(fuzz_dictionaries());
    let _ = (r.version(), r.file_len(), r.metadata().len(), r.blocks().len());
    let n = r.streams().len() as u32;
    assert!(r.stream_len(n).is_err(), "stream_len past the last stream");
    assert!(r.read_stream(n).is_err(), "read_stream past the last stream");
    let mut whole_streams = Some(Vec::new());
    for s in 0..n {
        let len = r.stream_len(s).expect("stream exists");
        let whole = if len <= MAX_WHOLE_STREAM {
            match r.read_stream(s) {
                Ok(w) => {
                    assert_eq!(w.len() as u64, len, "read_stream length");
                    Some(w)
                }
                Err(e) => {
                    assert_corruption(&e, "read_stream");
                    None
                }
            }
        } else {
            None
        };
        for _ in 0..4 {
            let start = rng.upto(len);
            let n = rng.upto((len - start).min(MAX_RANGE));
            let mut buf = vec![0u8; n as usize];
            match r.read_range_into(s, start, &mut buf) {
                Ok(()) => {
                    if let Some(w) = &whole {
                        assert!(
                            w[start as usize..(start + n) as usize] == buf[..],
                            "stream {s}: read_range_into({start}, {n}) differs from read_stream"
                        );
                    }
                }
                Err(e) => assert_corruption(&e, "read_range_into"),
            }
            let end = start + rng.upto((len - start).min(MAX_RANGE));
            let mut out = Vec::new();
            let mut last = 0;
            match r.copy_range_to(s, start, end, &mut out, &mut |p| last = p) {
                Ok(written) => {
                    assert_eq!(written, end - start, "copy_range_to count");
                    assert_eq!(out.len() as u64, written, "copy_range_to output");
                    assert_eq!(last, written, "copy_range_to progress");
                    if let Some(w) = &whole {
                        assert!(
                            w[start as usize..end as usize] == out[..],
                            "stream {s}: copy_range_to({start}..{end}) differs from read_stream"
                        );
                    }
                }
                Err(e) => assert_corruption(&e, "copy_range_to"),
            }
        }
        // Requests outside the stream are errors, never panics.
        assert!(r.read_range_into(s, len, &mut [0u8; 1]).is_err(), "read past the end");
        assert!(
            r.read_range_into(s, u64::MAX, &mut [0u8; 2]).is_err(),
            "overflowing range"
        );
        assert!(r
            .copy_range_to(s, 0, len + 1, &mut std::io::sink(), &mut |_| {})
            .is_err());
        if len > 0 {
            assert!(r
                .copy_range_to(s, len, len - 1, &mut std::io::sink(), &mut |_| {})
                .is_err());
        }
        // The Read + Seek view.
        let pos = rng.upto(len);
        let want = rng.upto(4096) as usize;
        let mut sr = r.stream_reader(s).expect("stream exists");
        assert_eq!(sr.len(), len);
        assert_eq!(sr.seek(SeekFrom::Start(pos)).expect("seek"), pos);
        let mut got = Vec::new();
        match (&mut sr).take(want as u64).read_to_end(&mut got) {
            Ok(k) => {
                assert_eq!(
                    k as u64,
                    want.min((len - pos) as usize) as u64,
                    "StreamReader short read"
                );
                if let Some(w) = &whole {
                    assert!(
                        w[pos as usize..pos as usize + k] == got[..],
                        "stream {s}: StreamReader at {pos} differs from read_stream"
                    );
                }
            }
            Err(e) => {
                // A block naming a dictionary the fuzz readers lack is InvalidInput (not damage).
                let missing = e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<Error>())
                    .is_some_and(|k| missing_dictionary(k));
                assert!(
                    e.kind() == std::io::ErrorKind::InvalidData || missing,
                    "StreamReader: a damaged file must give InvalidData: {e:?}"
                )
            }
        }
        if let Ok(l) = i64::try_from(len) {
            assert!(sr.seek(SeekFrom::Current(-l - 1)).is_err(), "seek before the start");
        }
        match (whole, whole_streams.as_mut()) {
            (Some(w), Some(v)) => v.push(w),
            _ => whole_streams = None,
        }
    }
    match r.verify(&mut |_| {}) {
        Ok(report) => {
            assert_eq!(report.blocks, r.blocks().len() as u64);
            let total: u64 = r.streams().iter().map(|s| s.raw_len).sum();
            assert_eq!(report.raw_bytes, total, "verify: raw bytes");
        }
        Err(e) => assert_corruption(&e, "verify"),
    }
    whole_streams
}

/// Both readers must agree. `random` is what [`exercise_reader`] decoded (every stream, or
/// `None`); the sequential decoder is run here and compared in both directions.
pub fn cross_check(file: &[u8], verify: bool, random: Option<&[Vec<u8>]>) {
    if let Some(r) = random {
        // Blocks decoded where they lie in memory: the same streams as read ones.
        let mut m = Reader::from_memory(file, read_options(verify))
            .unwrap_or_else(|e| panic!("Reader::new accepts the file but Reader::from_memory fails: {e}"));
        m.set_dictionaries(fuzz_dictionaries());
        for (i, data) in r.iter().enumerate() {
            match m.read_stream(i as u32) {
                Ok(w) => assert!(&w == data, "from_memory decodes stream {i} differently"),
                Err(e) => panic!("Reader decodes stream {i} but from_memory fails: {e}"),
            }
        }
    }
    let sequential = sequential_streams(file, verify);
    match (random, sequential) {
        (Some(r), Ok(Some(s))) => {
            assert_eq!(r.len(), s.len(), "readers disagree on the stream count");
            for (i, data) in r.iter().enumerate() {
                assert!(
                    &s[&(i as u32)] == data,
                    "readers decode stream {i} differently (verify_checksums={verify})"
                );
            }
        }
        (Some(r), Err(e)) => panic!(
            "Reader decodes all {} streams but decode_sequential fails (verify_checksums={verify}): {e}",
            r.len()
        ),
        (None, Ok(Some(s))) => check_against_reader(file, verify, &s),
        _ => {}
    }
}

/// When `decode_sequential` decoded `streams`, the random-access reader must decode the same.
pub fn check_against_reader(file: &[u8], verify: bool, streams: &BTreeMap<u32, Vec<u8>>) {
    let mut rd = Reader::new(Cursor::new(file), read_options(verify))
        .unwrap_or_else(|e| panic!("decode_sequential accepts the file but Reader::new fails: {e}"));
    rd.set_dictionaries(fuzz_dictionaries());
    assert_eq!(
        rd.streams().len(),
        streams.len(),
        "readers disagree on the stream count"
    );
    for (&i, data) in streams {
        if data.len() as u64 > MAX_WHOLE_STREAM {
            continue;
        }
        match rd.read_stream(i) {
            Ok(w) => assert!(
                &w == data,
                "readers decode stream {i} differently (verify_checksums={verify})"
            ),
            Err(e) => panic!(
                "decode_sequential decodes stream {i} but Reader::read_stream fails (verify_checksums={verify}): {e}"
            ),
        }
    }
}

/// A file built from a fuzzer-chosen description, with a valid header, checksums, index and
/// trailer, and `expected` set to the streams it must decode to when every block was built
/// honestly (no length overrides, no payload damage).
pub struct Forged {
    /// The file bytes.
    pub file: Vec<u8>,
    /// What both readers must return, when the file is honest.
    pub expected: Option<Vec<Vec<u8>>>,
}

/// Builds a kompakt file whose structure is consistent (so no checksum or index check stops
/// the readers) but whose blocks are chosen by the fuzzer, and may lie.
///
/// Layout of `data`: byte 0 = stream count (1 + b % 4); then block records until the input
/// ends:
///
/// | byte | meaning                                                                          |
/// |------|----------------------------------------------------------------------------------|
/// | 0    | stream (mod count)                                                               |
/// | 1    | bits 0-2 codec (mod 5); 3-4 filter bits; 5 payload = raw bytes, not compressed;  |
/// |      | 6 override lengths (2 more bytes); 7 flip one payload byte                       |
/// | 2    | typesize (0 allowed: must be rejected)                                           |
/// | 3, 4 | raw data length (LE, capped by what is left); the data follows the record        |
/// | 5, 6 | with bit 6: raw_len change (i8; 0x7f = 64 MiB, 0x80 = 0), stored_len change (i8) |
pub fn forge(data: &[u8]) -> Option<Forged> {
    use kompakt::codec::{Codec, Compressor};
    use kompakt::stream::format::{BlockEntry, BlockHeader, Footer, StreamInfo, Trailer};
    use kompakt::{CodecId, FilterSet};

    let (&first, mut rest) = data.split_first()?;
    let stream_count = 1 + usize::from(first % 4);
    let mut file = FileHeader::CURRENT.encode().to_vec();
    let mut streams = vec![StreamInfo::default(); stream_count];
    let mut expected = vec![Vec::new(); stream_count];
    let mut honest = true;
    let mut blocks = Vec::new();
    let mut compressor = Compressor::new();
    let (mut filtered, mut tmp) = (Vec::new(), Vec::new());
    while blocks.len() < 64 {
        let Some((&[sel, flags, typesize, l0, l1], tail)) = rest.split_first_chunk::<5>() else {
            break;
        };
        rest = tail;
        let (raw_delta, stored_delta) = if flags & 0x40 != 0 {
            let Some((&[a, b], tail)) = rest.split_first_chunk::<2>() else {
                break;
            };
            rest = tail;
            (a, b as i8)
        } else {
            (0, 0)
        };
        let len = usize::from(u16::from_le_bytes([l0, l1])).min(rest.len());
        let (raw, tail) = rest.split_at(len);
        rest = tail;
        let stream = usize::from(sel) % stream_count;
        let filters = FilterSet::from_bits((flags >> 3) & 3).expect("two known bits");
        let codec = match flags % 8 % 5 {
            0 => Codec::None,
            1 => Codec::Lz4 { acceleration: 1 },
            2 => Codec::Zstd { level: 1 },
            3 => Codec::Gzip { level: 1 },
            _ => Codec::Zlib { level: 1 },
        };
        let usable = typesize != 0 && filters.supports(typesize);
        let input: &[u8] = if usable && !filters.is_none() {
            filters.encode(typesize, raw, &mut filtered, &mut tmp);
            &filtered
        } else {
            raw
        };
        let mut payload;
        let mut codec_id = codec.id();
        if flags & 0x20 != 0 || codec == Codec::None {
            payload = input.to_vec();
            honest &= codec == Codec::None;
        } else {
            payload = vec![0u8; input.len() * 2 + 128];
            match compressor.compress_into(codec, input, &mut payload).ok().flatten() {
                Some(n) if n <= raw.len() => payload.truncate(n),
                _ => {
                    // Would not shrink: store raw, as the writer does.
                    payload = input.to_vec();
                    codec_id = CodecId::None;
                }
            }
        }
        // (A raw block with filters is legal: it stores the filtered bytes.)
        honest &= usable && !raw.is_empty();
        if flags & 0x80 != 0 && !payload.is_empty() {
            let at = usize::from(l0) % payload.len();
            payload[at] ^= 1 << (l1 % 8);
            honest = false;
        }
        let mut raw_len = raw.len() as u32;
        match raw_delta {
            0 => {}
            0x7f => raw_len = MAX_BLOCK as u32,
            0x80 => raw_len = 0,
            d => raw_len = raw_len.wrapping_add_signed(i32::from(d as i8)),
        }
        if stored_delta != 0 {
            let n = (payload.len() as i64 + i64::from(stored_delta)).max(0) as usize;
            payload.resize(n, 0xA5);
        }
        honest &= raw_len as usize == raw.len() && stored_delta == 0;
        let header = BlockHeader {
            codec: codec_id,
            filters,
            typesize,
            stream: stream as u32,
            raw_len,
            stored_len: payload.len() as u32,
        };
        blocks.push(BlockEntry {
            file_offset: file.len() as u64,
            raw_offset: streams[stream].raw_len,
            header,
        });
        streams[stream].raw_len += u64::from(raw_len);
        streams[stream].block_count += 1;
        expected[stream].extend_from_slice(raw);
        file.extend_from_slice(&header.encode(&payload));
        file.extend_from_slice(&payload);
    }
    let footer_offset = file.len() as u64;
    let footer = Footer {
        streams,
        blocks,
        metadata: rest.iter().take(64).copied().collect(),
    }
    .encode();
    let trailer = Trailer {
        footer_offset,
        footer_len: footer.len() as u64,
        footer_checksum: xxh3_64(&footer),
    };
    file.extend_from_slice(&footer);
    file.extend_from_slice(&trailer.encode());
    Some(Forged {
        file,
        expected: honest.then_some(expected),
    })
}

const MAX_BLOCK: usize = kompakt::stream::MAX_BLOCK_SIZE;
