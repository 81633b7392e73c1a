//! Round trips through every API, codec, filter, block size and thread count.

use kompakt::stream::{decode_sequential, Encoder, StreamId, MIN_BLOCK_SIZE};
use kompakt::{CodecSpec, FilterSpec, ReadOptions, Reader, WriteOptions, Writer};
use proptest::prelude::*;
use std::io::{Cursor, Read, Seek, SeekFrom, Write};

/// Data that compresses somewhat, with a typed structure for filters to find.
fn typed_data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len);
    let mut acc = 1_000_000u64;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x % 16;
        v.extend_from_slice(&acc.to_le_bytes());
    }
    v.truncate(len);
    v
}

const CODECS: [&str; 9] = [
    "none", "lz4", "lz4:4", "lz4hc:4", "zstd:1", "zstd:-3", "gzip:1", "zlib:3", "auto",
];

/// Writes with the given options and checks every read path gives the data back.
fn check_all_paths(data: &[u8], opts: WriteOptions) -> Vec<u8> {
    let file = kompakt::compress(data, &opts).unwrap();
    for threads in [1, 3] {
        let ro = ReadOptions::default().threads(threads);
        let mut r = Reader::new(Cursor::new(&file), ro).unwrap();
        assert!(r.read_stream(0).unwrap() == data, "read_stream, {opts:?}");
        let mut seq = Vec::new();
        decode_sequential(Cursor::new(&file), &ro, |s, d| {
            assert_eq!(s, 0);
            seq.extend_from_slice(d);
            Ok(())
        })
        .unwrap();
        assert!(seq == data, "sequential, {opts:?}");
        let mut copied = Vec::new();
        r.copy_range_to(0, 0, data.len() as u64, &mut copied, &mut |_| {})
            .unwrap();
        assert!(copied == data);
        // From a file on disk: each thread reads its own blocks with positional reads.
        let mut disk = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut disk, &file).unwrap();
        let mut d = Reader::at(disk, ro).unwrap();
        assert!(d.read_stream(0).unwrap() == data, "Reader::at, {opts:?}");
        if data.len() > 10 {
            let mut part = vec![0u8; data.len() - 10];
            d.read_range_into(0, 3, &mut part).unwrap();
            assert!(part[..] == data[3..data.len() - 7], "Reader::at range, {opts:?}");
            let mut copied = Vec::new();
            d.copy_range_to(0, 3, data.len() as u64 - 7, &mut copied, &mut |_| {})
                .unwrap();
            assert!(
                copied[..] == data[3..data.len() - 7],
                "Reader::at copy_range_to, {opts:?}"
            );
        }
        let mut m = Reader::from_memory(&file[..], ro).unwrap();
        assert!(m.read_stream(0).unwrap() == data, "from_memory, {opts:?}");
        copied.clear();
        m.copy_range_to(0, 0, data.len() as u64, &mut copied, &mut |_| {})
            .unwrap();
        assert!(copied == data, "from_memory copy_range_to, {opts:?}");
    }
    file
}

#[test]
fn every_codec_and_filter_round_trips() {
    let data = typed_data(300_001, 7);
    for codec in CODECS {
        for filter in [
            FilterSpec::None,
            FilterSpec::Shuffle,
            FilterSpec::Delta,
            FilterSpec::Auto,
        ] {
            for typesize in [1u8, 4, 8] {
                let opts = WriteOptions::default()
                    .codec(codec.parse().unwrap())
                    .filter(filter)
                    .typesize(typesize)
                    .block_size(MIN_BLOCK_SIZE)
                    .threads(2);
                check_all_paths(&data, opts);
            }
        }
    }
}

#[test]
fn empty_and_tiny_inputs_round_trip() {
    for len in [
        0usize,
        1,
        2,
        7,
        8,
        9,
        MIN_BLOCK_SIZE - 1,
        MIN_BLOCK_SIZE,
        MIN_BLOCK_SIZE + 1,
    ] {
        let data = typed_data(len, 3);
        for codec in ["none", "lz4", "zstd", "auto"] {
            let opts = WriteOptions::default()
                .codec(codec.parse().unwrap())
                .typesize(8)
                .block_size(MIN_BLOCK_SIZE);
            check_all_paths(&data, opts);
        }
    }
}

#[test]
fn output_is_identical_whatever_the_thread_count() {
    let data = typed_data(2_000_000, 11);
    for codec in ["lz4", "zstd:3", "auto", "gzip:1"] {
        let base = WriteOptions::default()
            .codec(codec.parse().unwrap())
            .typesize(8)
            .block_size(MIN_BLOCK_SIZE);
        let one = kompakt::compress(&data, &base.threads(1)).unwrap();
        let four = kompakt::compress(&data, &base.threads(4)).unwrap();
        assert!(one == four, "{codec}");
        // Small writes through the io::Write adapter give the same bytes too.
        let mut enc = Encoder::new(Vec::new(), base.threads(4)).unwrap();
        for piece in data.chunks(4097) {
            enc.write_all(piece).unwrap();
        }
        assert!(enc.finish().unwrap() == one, "{codec} via Encoder");
    }
}

/// `write_from` (threads reading their own blocks of a source) writes the file `write` of the
/// same bytes writes: after small writes or none, with a content hash or without, on one
/// thread or several, for inputs shorter than a batch or not a whole number of blocks.
#[test]
fn writing_from_a_source_gives_the_same_bytes_as_writing_them() {
    let data = typed_data(3 * 8 * MIN_BLOCK_SIZE + 12_345, 7);
    for codec in ["none", "lz4", "zstd:1", "auto"] {
        for (threads, hash, head) in [
            (1, false, 0),
            (3, false, 0),
            (3, false, 100),
            (2, true, 5000),
            (1, true, 0),
        ] {
            let opts = WriteOptions::default()
                .codec(codec.parse().unwrap())
                .typesize(8)
                .block_size(MIN_BLOCK_SIZE)
                .threads(threads);
            for len in [0, 10, MIN_BLOCK_SIZE, 8 * MIN_BLOCK_SIZE - 1, data.len() - head] {
                let what = format!("{codec}, {threads} threads, hash {hash}, {head} bytes first, {len} bytes");
                let write = |from_source: bool| {
                    let mut w = Writer::new(Vec::new(), opts).unwrap();
                    if hash {
                        w.hash_content().unwrap();
                    }
                    let s = w.add_stream(None).unwrap();
                    w.write(s, &data[..head]).unwrap();
                    let body = &data[head..head + len];
                    if from_source {
                        let mut seen = Vec::new();
                        w.write_from(s, &data, head as u64, len as u64, &mut |n| seen.push(n))
                            .unwrap();
                        assert!(seen.windows(2).all(|p| p[0] <= p[1]), "{what}: progress went back");
                        assert_eq!(seen.last().copied().unwrap_or(0), len as u64, "{what}: progress");
                    } else {
                        w.write(s, body).unwrap();
                    }
                    w.finish().unwrap()
                };
                assert!(write(true) == write(false), "{what}");
            }
        }
    }
    // A source shorter than asked for is an I/O error, not a panic or a short file.
    let mut w = Writer::new(Vec::new(), WriteOptions::default().threads(2)).unwrap();
    let s = w.add_stream(None).unwrap();
    let e = w
        .write_from(s, &data, 0, data.len() as u64 + 1, &mut |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("ends before byte"), "{e}");
}

/// A writer to memory compresses single-thread batches straight into its `Vec`; a writer to
/// any other sink, or on several threads, stages each block. The bytes must not differ.
#[test]
fn writing_to_memory_gives_the_same_bytes_as_any_sink() {
    let data = typed_data(700_001, 5);
    for codec in CODECS {
        for filter in [FilterSpec::None, FilterSpec::Shuffle, FilterSpec::Auto] {
            let opts = WriteOptions::default()
                .codec(codec.parse().unwrap())
                .filter(filter)
                .typesize(4)
                .block_size(MIN_BLOCK_SIZE);
            let staged = |threads: usize| {
                let mut w = Writer::new(Cursor::new(Vec::new()), opts.threads(threads)).unwrap();
                let s = w.add_stream(None).unwrap();
                w.write(s, &data).unwrap();
                w.finish().unwrap().into_inner()
            };
            // After bytes already in the buffer, which stay.
            let mut w = Writer::to_memory(b"kept".to_vec(), opts.threads(1)).unwrap();
            let s = w.add_stream(None).unwrap();
            w.write(s, &data).unwrap();
            let direct = w.finish().unwrap();
            assert!(direct.starts_with(b"kept"), "{codec} {filter:?}");
            let direct = &direct[4..];
            assert!(direct == staged(1), "{codec} {filter:?}, 1 thread");
            assert!(direct == staged(3), "{codec} {filter:?}, 3 threads");
            assert!(
                Reader::from_memory(direct, ReadOptions::default())
                    .unwrap()
                    .read_stream(0)
                    .unwrap()
                    == data
            );
        }
    }
}

#[test]
fn interleaved_streams_and_metadata() {
    let a = typed_data(500_000, 1);
    let b = b"pickle-ish header bytes".repeat(5000);
    let write = |threads| {
        let opts = WriteOptions::default().block_size(MIN_BLOCK_SIZE).threads(threads);
        let mut w = Writer::new(Vec::new(), opts).unwrap();
        let sa = w
            .add_stream(Some(opts.stream_options().typesize(8).codec(CodecSpec::Auto)))
            .unwrap();
        let sb = w.add_stream(None).unwrap();
        let empty = w.add_stream(None).unwrap();
        let (mut pa, mut pb) = (a.chunks(70_000), b.chunks(20_000));
        loop {
            let (x, y) = (pa.next(), pb.next());
            if x.is_none() && y.is_none() {
                break;
            }
            w.write(sa, x.unwrap_or_default()).unwrap();
            w.write(sb, y.unwrap_or_default()).unwrap();
        }
        w.finish_stream(empty).unwrap();
        assert!(w.write(empty, b"x").is_err(), "finished streams refuse writes");
        assert!(w.write(StreamId(9), b"x").is_err());
        w.set_metadata(b"{\"kind\":\"test\"}".to_vec()).unwrap();
        w.finish().unwrap()
    };
    let file = write(1);
    assert_eq!(file, write(2));
    let mut r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    assert_eq!(r.streams().len(), 3);
    assert_eq!(r.metadata(), b"{\"kind\":\"test\"}");
    assert!(r.read_stream(0).unwrap() == a);
    assert!(r.read_stream(1).unwrap() == b);
    assert_eq!(r.read_stream(2).unwrap(), b"");
    assert!(r.read_stream(3).is_err());
    let mut seen = vec![Vec::new(); 3];
    decode_sequential(Cursor::new(&file), &ReadOptions::default(), |s, d| {
        seen[s as usize].extend_from_slice(d);
        Ok(())
    })
    .unwrap();
    assert!(seen == vec![a, b, Vec::new()]);
}

#[test]
fn stream_reader_seeks_and_reads() {
    let data = typed_data(400_000, 5);
    let file = kompakt::compress(&data, &WriteOptions::default().block_size(MIN_BLOCK_SIZE)).unwrap();
    let mut r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    let mut s = r.stream_reader(0).unwrap();
    assert_eq!(s.len(), data.len() as u64);
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    assert!(all == data);
    s.seek(SeekFrom::Start(65_530)).unwrap();
    let mut buf = [0u8; 20];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, &data[65_530..65_550]);
    s.seek(SeekFrom::End(-5)).unwrap();
    let mut tail = Vec::new();
    s.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, &data[data.len() - 5..]);
    assert!(s.seek(SeekFrom::Current(-1_000_000)).is_err());
    s.seek(SeekFrom::Start(10_000_000)).unwrap();
    assert_eq!(s.read(&mut buf).unwrap(), 0, "reading past the end gives EOF");
}

#[test]
fn bad_options_are_refused_with_the_valid_range() {
    let data = b"x";
    for opts in [
        WriteOptions::default().block_size(1000),
        WriteOptions::default().block_size(1 << 30),
        WriteOptions::default().typesize(0),
    ] {
        let msg = kompakt::compress(data, &opts).unwrap_err().to_string();
        assert!(msg.contains("64") || msg.contains("255"), "{msg}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_range_reads_back(len in 0usize..400_000, seed in any::<u64>(),
                            codec in prop::sample::select(CODECS.to_vec()),
                            typesize in prop::sample::select(vec![1u8, 2, 4, 8, 16]),
                            threads in 1usize..4,
                            block_size in prop::sample::select(vec![MIN_BLOCK_SIZE, 100_000, 1 << 20]),
                            a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let data = typed_data(len, seed);
        let opts = WriteOptions::default()
            .codec(codec.parse().unwrap())
            .typesize(typesize)
            .block_size(block_size)
            .threads(threads);
        let file = kompakt::compress(&data, &opts).unwrap();
        let mut r = Reader::new(Cursor::new(&file), ReadOptions::default().threads(threads)).unwrap();
        let (mut lo, mut hi) = (a.index(len + 1), b.index(len + 1));
        if lo > hi { std::mem::swap(&mut lo, &mut hi); }
        let mut buf = vec![0u8; hi - lo];
        r.read_range_into(0, lo as u64, &mut buf).unwrap();
        prop_assert_eq!(&buf[..], &data[lo..hi]);
        prop_assert!(r.read_range_into(0, len as u64, &mut [0u8; 1]).is_err());
        let mut m = Reader::from_memory(file, ReadOptions::default().threads(threads)).unwrap();
        buf.fill(0);
        m.read_range_into(0, lo as u64, &mut buf).unwrap();
        prop_assert_eq!(&buf[..], &data[lo..hi]);
    }

    /// `read_at` with a cache, as a file object uses it: any mix of small and large reads at
    /// any positions, on two streams sharing one cache, returns the right bytes.
    #[test]
    fn read_at_with_a_cache_matches_the_data(seed in any::<u64>(),
                                             reads in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>(), 0usize..300_000), 1..24)) {
        let a = typed_data(350_000, seed);
        let b = typed_data(90_000, seed ^ 1);
        let mut w = Writer::new(Vec::new(), WriteOptions::default().block_size(MIN_BLOCK_SIZE)).unwrap();
        let (sa, sb) = (w.add_stream(None).unwrap(), w.add_stream(None).unwrap());
        w.write(sa, &a).unwrap();
        w.write(sb, &b).unwrap();
        let file = w.finish().unwrap();
        let mut r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
        let mut cache = kompakt::stream::BlockCache::new();
        for (second, at, size) in reads {
            let (stream, data) = if second { (1, &b) } else { (0, &a) };
            let pos = at.index(data.len() + 10);
            let mut out = vec![0u8; size];
            let n = r.read_at(stream, pos as u64, &mut out, &mut cache).unwrap();
            let expect = &data[pos.min(data.len())..(pos + size).min(data.len())];
            prop_assert!(n > 0 || expect.is_empty());
            prop_assert_eq!(&out[..n], &expect[..n]);
        }
    }
}

/// Filter `auto` with a fixed codec picks per block: shuffle for small integers, none where
/// shuffling scatters repeated 8-byte values, and stores random doubles raw at fast levels.
#[test]
fn filter_auto_chooses_per_block() {
    let n = 131_072; // one 1 MiB block of 8-byte values per kind
    let mut x = 0x2545F4914F6CDD1Du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let small_ints: Vec<u8> = (0..n).flat_map(|_| (next() % 100).to_le_bytes()).collect();
    let prices: Vec<f64> = (0..20).map(|i| 1.0 + f64::from(i) * 3.77).collect();
    let repeated: Vec<u8> = (0..n)
        .flat_map(|_| prices[(next() % 20) as usize].to_le_bytes())
        .collect();
    let random: Vec<u8> = (0..n)
        .flat_map(|_| ((next() >> 11) as f64 / (1u64 << 53) as f64).to_le_bytes())
        .collect();
    let data = [small_ints.clone(), repeated.clone(), random.clone()].concat();
    let opts = WriteOptions::default()
        .codec("zstd:1".parse().unwrap())
        .filter(FilterSpec::Auto)
        .typesize(8)
        .block_size(1 << 20);
    let file = check_all_paths(&data, opts);
    let r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    let labels: Vec<String> = r
        .blocks()
        .iter()
        .map(|b| format!("{}:{}", b.header.codec.name(), kompakt::stream::filter_label(&b.header)))
        .collect();
    assert_eq!(labels, ["zstd:shuffle/8", "zstd:none", "none:none"], "{labels:?}");
}

/// A source that records the prefetch hints it gets and the reads it serves, in order.
struct HintedSource {
    data: Vec<u8>,
    events: std::sync::Mutex<Vec<(bool, std::ops::Range<u64>)>>,
}

impl kompakt::stream::ReadAt for HintedSource {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.data.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let at = offset as usize;
        buf.copy_from_slice(&self.data[at..at + buf.len()]);
        let range = offset..offset + buf.len() as u64;
        self.events.lock().unwrap().push((false, range));
        Ok(())
    }

    fn prefetch(&self, ranges: &[std::ops::Range<u64>]) {
        let mut events = self.events.lock().unwrap();
        events.extend(ranges.iter().map(|r| (true, r.clone())));
    }
}

#[test]
fn long_reads_hint_each_block_once_before_reading_it_and_a_bounded_window_ahead() {
    // 100 raw blocks of 1 MiB: three windows of hints and more.
    let block = 1usize << 20;
    let data = vec![7u8; 100 * block];
    let opts = WriteOptions::default().codec("none".parse().unwrap()).block_size(block);
    let file = kompakt::compress(&data, &opts).unwrap();
    for threads in [1, 2] {
        for copy in [false, true] {
            let source = HintedSource {
                data: file.clone(),
                events: Default::default(),
            };
            let mut reader = Reader::at(source, ReadOptions::default().threads(threads)).unwrap();
            let blocks: Vec<u64> = reader.blocks().iter().map(|b| b.file_offset).collect();
            reader.get_ref().get_ref().events.lock().unwrap().clear();
            if copy {
                let mut out = Vec::new();
                reader
                    .copy_range_to(0, 0, data.len() as u64, &mut out, &mut |_| {})
                    .unwrap();
                assert!(out == data);
            } else {
                assert!(reader.read_stream(0).unwrap() == data);
            }
            let events = reader.get_ref().get_ref().events.lock().unwrap().clone();
            let hinted: Vec<u64> = events.iter().filter(|e| e.0).map(|e| e.1.start).collect();
            assert_eq!(hinted, blocks, "every block hinted once, in order ({threads} threads)");
            let mut hinted_so_far = 0usize;
            for (is_hint, range) in &events {
                if *is_hint {
                    hinted_so_far += 1;
                    continue;
                }
                let block = blocks.partition_point(|&b| b <= range.start) - 1;
                assert!(block < hinted_so_far, "block {block} read before its hint");
                // At most two windows of 32 MiB ahead of the block handed out last, which
                // the decoders' queue (2 x threads blocks) may run ahead of this read.
                let ahead = hinted_so_far - block;
                assert!(ahead <= 64 + 2 * threads + 1, "{ahead} blocks hinted ahead");
            }
        }
    }
}
