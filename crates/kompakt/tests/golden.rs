//! Golden files: files written by released versions must stay readable forever.
//!
//! `tests/golden/v1/*.kpk` were written by format 1.0; `MANIFEST.tsv` beside them holds each
//! stream's length and XXH3-64 and the metadata in hex. Existing golden files are never
//! rewritten: `cargo test --test golden -- --ignored write_missing_golden_files` only adds
//! files that do not exist yet (for a new case or a new format version).
//!
//! The golden store folders are read by `kompakt-store`'s tests.

use kompakt::stream::{decode_sequential, StreamOptions, Writer, MIN_BLOCK_SIZE};
use kompakt::{CodecSpec, FilterSpec, ReadOptions, Reader, WriteOptions};
use std::collections::BTreeMap;
use std::fs;
use std::io::Cursor;
use std::path::PathBuf;
use xxhash_rust::xxh3::xxh3_64;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v1")
}

fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("row {i}, city {}, price {}.{:02}\n", i % 70, 10 + i % 20, i % 97).as_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

fn floats(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (20.0 + (i % 20) as f64 * 0.25).to_le_bytes())
        .collect()
}

fn sorted_ints(n: usize) -> Vec<u8> {
    let steps = noise(n, 9);
    let mut t = 1_700_000_000_000i64;
    steps
        .iter()
        .flat_map(|s| {
            t += i64::from(*s % 50);
            t.to_le_bytes()
        })
        .collect()
}

/// One golden case: options and the streams written (in the order given, interleaved in
/// pieces of `piece` bytes when there are several).
struct Case {
    name: &'static str,
    opts: WriteOptions,
    streams: Vec<(Option<StreamOptions>, Vec<u8>)>,
    metadata: &'static [u8],
}

fn base(codec: &str) -> WriteOptions {
    WriteOptions::default()
        .codec(CodecSpec::parse(codec).unwrap())
        .block_size(MIN_BLOCK_SIZE)
        .threads(1)
}

fn cases() -> Vec<Case> {
    let one = |name, opts: WriteOptions, data| Case {
        name,
        opts,
        streams: vec![(None, data)],
        metadata: b"",
    };
    let typed = |codec: &str, ts: u8, f: FilterSpec| base(codec).typesize(ts).filter(f);
    vec![
        Case {
            name: "empty-file",
            opts: base("zstd:3"),
            streams: vec![],
            metadata: b"",
        },
        one("empty-stream", base("zstd:3"), vec![]),
        one("one-byte", base("zstd:3"), vec![42]),
        one("none", base("none"), text(100_000)),
        one("lz4", base("lz4"), text(150_000)),
        one("lz4hc-9", base("lz4hc:9"), text(150_000)),
        one("zstd-3", base("zstd:3"), text(150_000)),
        one("zstd-fast5", base("zstd:-5"), text(150_000)),
        one("gzip-6", base("gzip:6"), text(150_000)),
        one("zlib-6", base("zlib:6"), text(150_000)),
        one("incompressible", base("zstd:3"), noise(70_000, 3)),
        one("shuffle8-zstd", typed("zstd:1", 8, FilterSpec::Shuffle), floats(20_000)),
        one(
            "shuffle3-lz4",
            typed("lz4", 3, FilterSpec::Shuffle),
            floats(10_000)[..79_999].to_vec(),
        ),
        one("delta8-lz4", typed("lz4", 8, FilterSpec::Delta), sorted_ints(20_000)),
        one(
            "delta1-zstd",
            typed("zstd:1", 1, FilterSpec::Delta),
            (0..90_000u32).map(|i| (i / 3) as u8).collect(),
        ),
        Case {
            name: "multi-stream-auto",
            opts: base("auto"),
            streams: vec![
                (Some(base("auto").stream_options().typesize(8)), sorted_ints(25_000)),
                (None, text(90_000)),
                (Some(base("lz4").stream_options()), vec![]),
                (None, noise(5_000, 5)),
            ],
            metadata: b"{\"kind\": \"golden\", \"version\": 1}",
        },
    ]
}

fn write_case(case: &Case) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), case.opts).unwrap();
    let ids: Vec<_> = case.streams.iter().map(|(o, _)| w.add_stream(*o).unwrap()).collect();
    let mut offsets = vec![0usize; case.streams.len()];
    const PIECE: usize = 40_000;
    loop {
        let mut progressed = false;
        for (i, (_, data)) in case.streams.iter().enumerate() {
            let end = (offsets[i] + PIECE).min(data.len());
            if end > offsets[i] {
                w.write(ids[i], &data[offsets[i]..end]).unwrap();
                offsets[i] = end;
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    w.set_metadata(case.metadata.to_vec()).unwrap();
    w.finish().unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// MANIFEST.tsv rows: `file  streams  N`, `file  stream  raw_len  xxh3_64` and `file  meta  hex`.
fn manifest() -> BTreeMap<String, Vec<Vec<String>>> {
    let text = fs::read_to_string(golden_dir().join("MANIFEST.tsv")).expect("tests/golden/v1/MANIFEST.tsv");
    let mut m: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<String> = line.split('\t').map(str::to_string).collect();
        m.entry(cols[0].clone()).or_default().push(cols[1..].to_vec());
    }
    m
}

#[test]
fn golden_files_read_back_exactly() {
    let manifest = manifest();
    let files: Vec<_> = fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".kpk"))
        .collect();
    assert!(files.len() >= 16, "golden files are missing: {files:?}");
    for name in files {
        let bytes = fs::read(golden_dir().join(&name)).unwrap();
        let rows = manifest
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is not in MANIFEST.tsv"));
        let mut r = Reader::new(Cursor::new(&bytes), ReadOptions::default()).unwrap();
        assert_eq!(r.version(), (1, 0), "{name}");
        let mut streams = 0;
        let mut sequential: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        decode_sequential(Cursor::new(&bytes), &ReadOptions::default(), |s, d| {
            sequential.entry(s).or_default().extend_from_slice(d);
            Ok(())
        })
        .unwrap();
        for row in rows {
            if row[0] == "meta" {
                assert_eq!(hex(r.metadata()), row[1], "{name} metadata");
                continue;
            }
            if row[0] == "streams" {
                assert_eq!(r.streams().len().to_string(), row[1], "{name} stream count");
                continue;
            }
            let s: u32 = row[0].parse().unwrap();
            let data = r.read_stream(s).unwrap();
            assert_eq!(data.len().to_string(), row[1], "{name} stream {s} length");
            assert_eq!(format!("{:016x}", xxh3_64(&data)), row[2], "{name} stream {s} content");
            assert!(
                sequential.get(&s).map_or(data.is_empty(), |q| *q == data),
                "{name} sequential"
            );
            streams += 1;
        }
        assert_eq!(streams, r.streams().len(), "{name}: stream count");
        r.verify(&mut |_| {}).unwrap();
    }
}

#[test]
fn golden_cases_cover_every_codec_and_filter() {
    let mut codecs = std::collections::BTreeSet::new();
    let mut filters = std::collections::BTreeSet::new();
    for entry in fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "kpk") {
            let r = Reader::new(Cursor::new(fs::read(&path).unwrap()), ReadOptions::default()).unwrap();
            for b in r.blocks() {
                codecs.insert(b.header.codec.name());
                filters.insert(b.header.filters.bits());
            }
        }
    }
    assert_eq!(codecs.len(), 5, "{codecs:?}");
    assert_eq!(filters.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

/// Adds golden files for cases that have none; never touches an existing file.
#[test]
#[ignore = "writes files; run by hand when adding a golden case"]
fn write_missing_golden_files() {
    let dir = golden_dir();
    fs::create_dir_all(&dir).unwrap();
    let mut rows = String::new();
    for case in cases() {
        let name = format!("{}.kpk", case.name);
        let path = dir.join(&name);
        if path.exists() {
            continue;
        }
        fs::write(&path, write_case(&case)).unwrap();
        rows.push_str(&format!("{name}\tstreams\t{}\n", case.streams.len()));
        for (i, (_, data)) in case.streams.iter().enumerate() {
            rows.push_str(&format!("{name}\t{i}\t{}\t{:016x}\n", data.len(), xxh3_64(data)));
        }
        if !case.metadata.is_empty() {
            rows.push_str(&format!("{name}\tmeta\t{}\n", hex(case.metadata)));
        }
    }
    let manifest = dir.join("MANIFEST.tsv");
    let mut text = fs::read_to_string(&manifest).unwrap_or_else(|_| {
        "# file\tstream\traw_len\txxh3_64 (also: file\tstreams\tcount, file\tmeta\thex)\n".to_string()
    });
    text.push_str(&rows);
    fs::write(manifest, text).unwrap();
}

#[test]
fn current_writer_still_reproduces_the_golden_bytes() {
    // Not a format promise (a codec library upgrade may change compressed bytes), but a change
    // here means the writer changed: look before accepting it.
    for case in cases() {
        let path = golden_dir().join(format!("{}.kpk", case.name));
        let golden = fs::read(&path).unwrap_or_else(|_| panic!("missing {}", path.display()));
        let now = write_case(&case);
        let r = Reader::new(Cursor::new(&now), ReadOptions::default()).unwrap();
        let g = Reader::new(Cursor::new(&golden), ReadOptions::default()).unwrap();
        assert_eq!(r.streams(), g.streams(), "{}", case.name);
        let layout = |rd: &Reader<Cursor<&Vec<u8>>>| {
            rd.blocks()
                .iter()
                .map(|b| (b.header.stream, b.header.raw_len, b.header.codec, b.header.filters))
                .collect::<Vec<_>>()
        };
        assert_eq!(layout(&r), layout(&g), "{}: block layout changed", case.name);
    }
}

/// Format 2.0 (`zstd-dict` blocks): `v2/dictionary.kpk`, written with the dictionary
/// `v2/dictionary.kpkd`: a stream of text compressed with it (two blocks) and one of noise
/// stored raw. Its manifest has the same rows as `v1/`'s.
fn golden_v2_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v2")
}

fn v2_streams() -> Vec<Vec<u8>> {
    vec![text(100_000), noise(3_000, 11)]
}

#[test]
fn golden_v2_files_read_back_exactly() {
    use kompakt::codec::{CodecId, Dictionary};
    let dir = golden_v2_dir();
    let dictionary = Dictionary::new(fs::read(dir.join("dictionary.kpkd")).unwrap()).unwrap();
    let bytes = fs::read(dir.join("dictionary.kpk")).unwrap();
    let manifest = fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut r = Reader::new(Cursor::new(&bytes), ReadOptions::default()).unwrap();
    assert_eq!(r.version(), (2, 0));
    assert!(r.blocks().iter().any(|b| b.header.codec == CodecId::ZstdDict));
    assert_eq!(r.dictionaries_needed(16).unwrap(), vec![dictionary.id()]);
    let err = r.read_stream(0).unwrap_err();
    assert!(
        matches!(err, kompakt::Error::MissingDictionary { id, .. } if id == dictionary.id()),
        "{err}"
    );
    r.set_dictionaries(vec![dictionary.clone()].into());
    let mut sequential: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let dicts = vec![dictionary].into();
    kompakt::stream::decode_sequential_with(Cursor::new(&bytes), &ReadOptions::default(), &dicts, |s, d| {
        sequential.entry(s).or_default().extend_from_slice(d);
        Ok(())
    })
    .unwrap();
    let mut rows = 0;
    for line in manifest.lines().filter(|l| l.starts_with("dictionary.kpk\t")) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[1] == "streams" {
            assert_eq!(r.streams().len().to_string(), cols[2]);
            continue;
        }
        let s: u32 = cols[1].parse().unwrap();
        let data = r.read_stream(s).unwrap();
        assert_eq!(data.len().to_string(), cols[2], "stream {s} length");
        assert_eq!(format!("{:016x}", xxh3_64(&data)), cols[3], "stream {s} content");
        assert_eq!(sequential[&s], data, "stream {s} sequential");
        rows += 1;
    }
    assert_eq!(rows, 2);
    r.verify(&mut |_| {}).unwrap();
}

/// Adds the format 2.0 golden files if they are missing; never touches existing ones.
#[test]
#[ignore = "writes files; run by hand when adding a golden case"]
fn write_missing_golden_v2() {
    use kompakt::codec::Dictionary;
    let dir = golden_v2_dir();
    if dir.join("dictionary.kpk").exists() {
        return;
    }
    fs::create_dir_all(&dir).unwrap();
    let lines: Vec<Vec<u8>> = text(400_000).split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let dictionary = Dictionary::train(&lines, 4096).unwrap();
    let streams = v2_streams();
    let mut w = Writer::with_dictionary(Vec::new(), base("zstd:3"), dictionary.clone()).unwrap();
    let a = w.add_stream(None).unwrap();
    let b = w.add_stream(None).unwrap();
    w.write(a, &streams[0]).unwrap();
    w.write(b, &streams[1]).unwrap();
    fs::write(dir.join("dictionary.kpkd"), dictionary.bytes()).unwrap();
    fs::write(dir.join("dictionary.kpk"), w.finish().unwrap()).unwrap();
    let mut rows = String::from("# file\tstream\traw_len\txxh3_64 (also: file\tstreams\tcount)\n");
    rows.push_str(&format!("dictionary.kpk\tstreams\t{}\n", streams.len()));
    for (i, data) in streams.iter().enumerate() {
        rows.push_str(&format!(
            "dictionary.kpk\t{i}\t{}\t{:016x}\n",
            data.len(),
            xxh3_64(data)
        ));
    }
    fs::write(dir.join("MANIFEST.tsv"), rows).unwrap();
}

/// Format 3.0 (compact files): `v3/*.kpk`, each written once by a front end (the CLI, R,
/// Python; see tests/golden/README.md), read back against `v3/MANIFEST.tsv` by random access
/// and front to back.
#[test]
fn golden_v3_compact_files_read_back_exactly() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/v3");
    let manifest = fs::read_to_string(dir.join("MANIFEST.tsv")).expect("tests/golden/v3/MANIFEST.tsv");
    let mut checked = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, raw_len, digest, meta] = cols[..] else {
            panic!("four columns: {line}")
        };
        let bytes = fs::read(dir.join(name)).unwrap();
        assert_eq!(&bytes[4..6], &[3, 0], "{name} is a compact file");
        let mut r = Reader::new(Cursor::new(&bytes), ReadOptions::default()).unwrap();
        assert_eq!(r.version(), (3, 0));
        let data = r.read_stream(0).unwrap();
        assert_eq!(data.len().to_string(), raw_len, "{name}");
        assert_eq!(format!("{:016x}", xxh3_64(&data)), digest, "{name}");
        assert_eq!(hex(r.metadata()), meta, "{name}");
        let mut seq = Vec::new();
        let footer = decode_sequential(Cursor::new(&bytes), &ReadOptions::default(), |_, b| {
            seq.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!((seq, hex(&footer.metadata)), (data, meta.to_string()), "{name}");
        checked += 1;
    }
    assert!(checked >= 3, "every golden v3 file is listed");
}
