//! Writes a small seed corpus to `fuzz/corpus/<target>/` (gitignored): valid files with every
//! kind of structure for `reader` and `sequential`, compressed payloads for `codec`, option
//! prefixes for `roundtrip`. Every seed stays under 32 KiB.
//!
//! Run from `fuzz/`: `cargo +nightly run --example gen_corpus` (smoke.sh does it).

use kompakt::codec::{Codec, Compressor};
use kompakt::stream::compact::Content;
use kompakt::stream::MIN_BLOCK_SIZE;
use kompakt::{CodecSpec, FilterSpec, WriteOptions, Writer};
use std::fs;
use std::path::Path;

const MAX_SEED: usize = 32 << 10;

fn spec(s: &str) -> CodecSpec {
    CodecSpec::parse(s).expect("valid spec")
}

fn noise(n: usize, mut x: u32) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect()
}

fn integers(n: u64) -> Vec<u8> {
    (0..n).flat_map(|i| (1_000_000 + i * 3).to_le_bytes()).collect()
}

fn text(n: usize) -> Vec<u8> {
    b"kompakt stores typed columns in checksummed blocks. "
        .iter()
        .copied()
        .cycle()
        .take(n)
        .collect()
}

/// (options per stream, data per stream, metadata)
fn files() -> Vec<(&'static str, Vec<u8>)> {
    let base = WriteOptions::default().block_size(MIN_BLOCK_SIZE).threads(1);
    let mut out = Vec::new();
    let mut file = |name: &'static str, streams: Vec<(WriteOptions, Vec<u8>)>, meta: &[u8]| {
        let mut w = Writer::new(Vec::new(), base).unwrap();
        let ids: Vec<_> = streams
            .iter()
            .map(|(o, _)| w.add_stream(Some(o.stream_options())).unwrap())
            .collect();
        for (id, (_, data)) in ids.iter().zip(&streams) {
            w.write(*id, data).unwrap();
        }
        w.set_metadata(meta.to_vec()).unwrap();
        out.push((name, w.finish().unwrap()));
    };
    file("empty", vec![], b"");
    file("empty-stream", vec![(base, vec![])], b"m");
    file("raw-small", vec![(base.codec(spec("none")), noise(300, 1))], b"");
    file("lz4-text", vec![(base.codec(spec("lz4")), text(5000))], b"");
    file("lz4hc-text", vec![(base.codec(spec("lz4hc:9")), text(3000))], b"meta");
    file(
        "zstd-shuffle",
        vec![(base.codec(spec("zstd:3")).typesize(8), integers(2000))],
        b"",
    );
    file(
        "zstd-delta",
        vec![(
            base.codec(spec("zstd:1")).typesize(8).filter(FilterSpec::Delta),
            integers(3000),
        )],
        b"",
    );
    file("gzip", vec![(base.codec(spec("gzip:6")), text(4000))], b"");
    file(
        "zlib-delta1",
        vec![(
            base.codec(spec("zlib:1")).filter(FilterSpec::Delta),
            (0..4000u32).map(|i| i as u8).collect(),
        )],
        b"",
    );
    file(
        "auto-typed",
        vec![(base.codec(spec("auto")).typesize(4), integers(1500))],
        b"",
    );
    // Two blocks in one stream (the first full, 64 KiB), a second stream with a raw block.
    file(
        "multi",
        vec![
            (
                base.codec(spec("zstd:1")).typesize(8),
                integers(MIN_BLOCK_SIZE as u64 / 8 + 100),
            ),
            (base.codec(spec("lz4")), noise(200, 7)),
            (
                base.codec(spec("gzip:1")).typesize(2).filter(FilterSpec::Shuffle),
                text(2000),
            ),
        ],
        b"metadata",
    );
    // Compact files (format 3.0): one of each content and of several codecs.
    for (name, codec, content, data) in [
        ("compact-r-zstd", "zstd:1", Content::RObject, text(900)),
        ("compact-python-lz4", "lz4", Content::PythonObject, text(400)),
        ("compact-data-none", "none", Content::Data, noise(200, 7)),
        ("compact-data-gzip", "gzip:6", Content::Data, text(2000)),
    ] {
        let mut w = Writer::new(Vec::new(), base.codec(spec(codec)).compact(true)).unwrap();
        let s = w.add_stream(None).unwrap();
        w.write(s, &data).unwrap();
        w.set_metadata(content.metadata().to_vec()).unwrap();
        let file = w.finish().unwrap();
        assert_eq!(file[4], 3, "{name} is compact");
        out.push((name, file));
    }
    out
}

fn codec_seeds() -> Vec<(String, Vec<u8>)> {
    let mut c = Compressor::new();
    let mut out = Vec::new();
    let data = text(3000);
    for codec in [
        Codec::None,
        Codec::Lz4 { acceleration: 1 },
        Codec::Zstd { level: 3 },
        Codec::Gzip { level: 6 },
        Codec::Zlib { level: 6 },
    ] {
        let payload = if codec == Codec::None {
            noise(100, 3)
        } else {
            let mut buf = vec![0u8; data.len()];
            let n = c.compress_into(codec, &data, &mut buf).unwrap().expect("compressible");
            buf.truncate(n);
            buf
        };
        let size = if codec == Codec::None {
            payload.len()
        } else {
            data.len()
        } as u32;
        let mut seed = vec![codec.id() as u8];
        seed.extend_from_slice(&size.to_le_bytes()[..3]);
        seed.extend_from_slice(&payload);
        out.push((codec.id().name().to_string(), seed));
    }
    out
}

fn roundtrip_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let payloads = [text(2000), integers(300), noise(500, 9), vec![]];
    for family in 0u8..8 {
        for (p, payload) in payloads.iter().enumerate() {
            // family, level, typesize, filter|streams, block size|threads, repeat, chunking, metadata
            let head = [
                family,
                5 + family,
                p as u8 % 8,
                ((family + p as u8) % 3) | ((p as u8 & 1) << 7),
                p as u8 | 0x80,
                if p == 0 { 12 } else { 200 },
                p as u8,
                3,
            ];
            let mut seed = head.to_vec();
            seed.extend_from_slice(payload);
            out.push((format!("f{family}-p{p}"), seed));
        }
    }
    out
}

/// Block descriptions for the `forged` target (layout documented at `kompakt_fuzz::forge`).
fn forged_seeds() -> Vec<(String, Vec<u8>)> {
    let record = |stream: u8, flags: u8, typesize: u8, data: &[u8]| {
        let mut r = vec![stream, flags, typesize];
        r.extend_from_slice(&(data.len() as u16).to_le_bytes());
        r.extend_from_slice(data);
        r
    };
    let ints = integers(200);
    let words = text(700);
    let mut out = Vec::new();
    for codec in 0u8..5 {
        for filter in 0u8..4 {
            let typesize = [1u8, 8, 8, 8][usize::from(filter)];
            let mut seed = vec![1u8];
            seed.extend(record(0, codec | filter << 3, typesize, &ints));
            seed.extend(record(1, codec, 1, &words));
            seed.extend(record(0, codec | filter << 3, typesize, &ints[..64]));
            seed.extend_from_slice(b"meta");
            out.push((format!("c{codec}-f{filter}"), seed));
        }
    }
    out
}

/// The golden table files, and pages (type byte, row count, page) of each encoding of runs.
fn table_seeds() -> Vec<(String, Vec<u8>)> {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/v1/table");
    let mut seeds: Vec<(String, Vec<u8>)> = [
        "fst.kpk",
        "layout2.kpk",
        "layout3.kpk",
        "layout4.kpk",
        "layout5.kpk",
        "layout6.kpk",
        "layout7.kpk",
        "layout8.kpk",
        "layout9.kpk",
    ]
    .iter()
    .map(|name| (name.to_string(), fs::read(golden.join(name)).unwrap()))
    .collect();
    // Int32 (type 0), 10 rows, no nulls, runs: 2 runs of values 1 and 2 ending at rows 3 and 10.
    let mut page = vec![0u8, 10, 0, 0, 5, 2, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0];
    page.extend(3u32.to_le_bytes());
    page.extend(10u32.to_le_bytes());
    seeds.push(("page-runs-int32".into(), page));
    // Scaled and decimal pages as the writer makes them: Int64 (type 1) whole hours, Float64
    // (type 2) with two decimals and exceptions, Float32 (type 11) tenths; 300 rows each.
    use arrow_array::{Array, Float32Array, Float64Array, Int64Array};
    let rows = 300usize;
    let hours = Int64Array::from_iter_values((0..rows as i64).map(|i| 3_600_000_000 * (i / 7 + i % 3)));
    let humid = Float64Array::from_iter((0..rows).map(|i| {
        (i % 13 != 0).then_some(if i % 97 == 5 {
            f64::NAN
        } else {
            (i * 7919 % 10_000) as f64 / 100.0
        })
    }));
    let tenths = Float32Array::from_iter_values((0..rows as i32).map(|i| (i * 31 % 900 - 450) as f32 / 10.0));
    // Sixteen thirds, each as frequent: a dictionary whose codes are bit-packed (layout 8).
    let thirds = Float64Array::from_iter_values(
        (0..rows as u64).map(|i| ((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as f64 % 16.0 / 3.0),
    );
    // Sixty readings of two decimals and 150 sevenths: nested dictionaries whose values are a
    // decimal page and unshuffled (layout 9).
    let readings = Float64Array::from_iter_values((0..rows).map(|i| (250 + i * 7 % 60) as f64 / 100.0));
    let sevenths = Float64Array::from_iter_values((0..rows).map(|i| (i * 13 % 150) as f64 / 7.0 + 3.0));
    for (name, t, array) in [
        ("page-nested-dict-decimal-float64", 2u8, &readings as &dyn Array),
        ("page-nested-dict-unshuffled-float64", 2, &sevenths),
        ("page-scaled-int64", 1u8, &hours as &dyn Array),
        ("page-decimal-float64", 2, &humid),
        ("page-decimal-float32", 11, &tenths),
        ("page-dict-packed-float64", 2, &thirds),
    ] {
        let mut seed = vec![t];
        seed.extend((rows as u16).to_le_bytes());
        let data = array.to_data();
        let codec = Some(Codec::Zstd { level: 2 });
        kompakt_table::page::encode_page(array.data_type(), std::slice::from_ref(&data), &mut seed, codec).unwrap();
        seeds.push((name.into(), seed));
    }
    // A Utf8 page (type 4) coded against the target's column dictionary of 4 values, with
    // sparse nulls stored as row numbers.
    let codes: Vec<u32> = (0..rows as u32).map(|i| i * 7 % 4).collect();
    let strings = arrow_array::StringArray::from_iter((0..rows).map(|i| (i % 150 != 9).then_some("")));
    let mut seed = vec![4u8];
    seed.extend((rows as u16).to_le_bytes());
    let codec = Some(Codec::Zstd { level: 2 });
    let utf8 = arrow_schema::DataType::Utf8;
    kompakt_table::page::encode_coded_values(&utf8, &[strings.to_data()], &codes, &mut seed, codec, None).unwrap();
    seeds.push(("page-column-dict-utf8".into(), seed));
    // An Int64 page (type 1) and a Float32 page (type 11) coded against the target's column
    // dictionaries of 4 values of their width (table layout 6), with a few nulls.
    let longs = Int64Array::from_iter((0..rows).map(|i| (i % 150 != 9).then_some(0)));
    let floats = Float32Array::from_iter((0..rows).map(|i| (i % 150 != 9).then_some(0.0)));
    for (name, t, array) in [
        ("page-column-dict-int64", 1u8, &longs as &dyn Array),
        ("page-column-dict-float32", 11, &floats),
    ] {
        let mut seed = vec![t];
        seed.extend((rows as u16).to_le_bytes());
        let data = array.to_data();
        kompakt_table::page::encode_coded_values(array.data_type(), &[data], &codes, &mut seed, codec, None).unwrap();
        seeds.push((name.into(), seed));
    }
    // A Utf8 page of URLs coded with a symbol table trained on them, with a null and a value
    // whose bytes the table has no symbols for (escapes).
    let urls: Vec<Option<String>> = (0..rows)
        .map(|i| match i % 100 {
            3 => None,
            4 => Some("\u{7f}~|".to_string()),
            _ => Some(format!(
                "https://example.com/{}/{}",
                ["a", "bb", "ccc"][i % 3],
                i * 7919 % 10_000
            )),
        })
        .collect();
    let training: Vec<&[u8]> = urls.iter().flatten().map(|s| s.as_bytes()).collect();
    let table = kompakt_table::page::SymbolTable::train(&training);
    let strings = arrow_array::StringArray::from(urls.clone());
    let mut seed = vec![4u8];
    seed.extend((rows as u16).to_le_bytes());
    kompakt_table::page::encode_symbol_page(strings.data_type(), &[strings.to_data()], &table, &mut seed).unwrap();
    seeds.push(("page-symbols-utf8".into(), seed));
    seeds
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    assert!(bytes.len() <= MAX_SEED, "seed {name} is {} bytes", bytes.len());
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
}

/// Edit lists for the `index` target (10 bytes each: op, selector, u64 value): one of each
/// kind of lie, and the aliasing bomb (more row groups, every new page a copy of the last).
fn index_seeds() -> Vec<(String, Vec<u8>)> {
    let edit = |op: u8, which: u8, value: u64| {
        let mut e = vec![op, which];
        e.extend_from_slice(&value.to_le_bytes());
        e
    };
    let mut seeds: Vec<(String, Vec<u8>)> = (0..8u8).map(|op| (format!("op{op}"), edit(op, 1, 3))).collect();
    seeds.push(("unchanged".into(), Vec::new()));
    seeds.push((
        "aliased-groups".into(),
        [edit(3, 0, 64 * 4000), edit(4, 0, 64)].concat(),
    ));
    seeds.push(("huge-block".into(), edit(5, 0, 64 << 20)));
    seeds
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let files = files();
    for target in ["reader", "sequential"] {
        for (name, bytes) in &files {
            write(&root.join(target), name, bytes);
        }
    }
    for (name, bytes) in codec_seeds() {
        write(&root.join("codec"), &name, &bytes);
    }
    for (name, bytes) in forged_seeds() {
        write(&root.join("forged"), &name, &bytes);
    }
    for (name, bytes) in roundtrip_seeds() {
        write(&root.join("roundtrip"), &name, &bytes);
    }
    for (name, bytes) in table_seeds() {
        write(&root.join("table"), &name, &bytes);
    }
    for (name, bytes) in index_seeds() {
        write(&root.join("index"), &name, &bytes);
    }
    // Key records as the store writes them (without and with a dictionary), a namespace
    // record, object and dictionary file names, and encoded names.
    use kompakt_remote::records::{object_file_name, KeyRecord, NamespaceRecord};
    let dictionary = kompakt::codec::DictionaryId(0xfedc_ba98_7654_3210);
    let mut record = KeyRecord {
        hash: kompakt::stream::ContentHash(0x0123_4567_89ab_cdef_0011_2233_4455_6677),
        raw_size: 1000,
        stored_size: 420,
        dictionary: None,
    };
    write(&root.join("remote_records"), "record", &record.encode());
    record.dictionary = Some(dictionary);
    write(&root.join("remote_records"), "record-dictionary", &record.encode());
    write(
        &root.join("remote_records"),
        "namespace",
        &NamespaceRecord { dictionary }.encode(),
    );
    let object = object_file_name(record.hash, record.dictionary);
    write(&root.join("remote_records"), "object-name", object.as_bytes());
    write(
        &root.join("remote_records"),
        "dictionary-name",
        format!("{dictionary}.kpkd").as_bytes(),
    );
    for (i, name) in ["model.pkl", "", "a/b c%", ".."].iter().enumerate() {
        let segment = kompakt_remote::records::encode_segment('k', name);
        write(
            &root.join("remote_records"),
            &format!("segment-{i}"),
            segment.as_bytes(),
        );
    }
    // R serialization streams written by R 4.2 (crates/kompakt-rserial/tests/data/make.R): data
    // and code, in the three formats; the ones that fit a seed.
    let streams = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/kompakt-rserial/tests/data");
    for entry in fs::read_dir(&streams).unwrap() {
        let path = entry.unwrap().path();
        let bytes = fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".R") && bytes.len() <= MAX_SEED {
            write(&root.join("rserial"), &name, &bytes);
        }
    }
    println!("seed corpus written to {}", root.display());
}
