//! zstd dictionaries through the block stream: round trips, the format version they need, and
//! what a reader without the dictionary says.

use kompakt::codec::{CodecId, Dictionaries, Dictionary, DictionaryId};
use kompakt::stream::{decode_sequential, decode_sequential_with, format::FileHeader, Writer};
use kompakt::{CodecSpec, Error, ReadOptions, Reader, WriteOptions};
use proptest::prelude::*;
use std::io::Cursor;

fn record(i: usize) -> Vec<u8> {
    format!(
        "{{\"ts\":\"2026-11-{:02}T{:02}:{:02}:00Z\",\"level\":\"{}\",\"service\":\"checkout\",\
         \"user_id\":{},\"latency_ms\":{},\"path\":\"/api/v2/orders/{}/items\"}}\n",
        1 + i % 28,
        i % 24,
        i % 60,
        ["info", "warn", "error"][i % 3],
        i * 7919 % 100_000,
        i * 31 % 997,
        i * 131 % 10_000
    )
    .into_bytes()
}

fn dictionary() -> Dictionary {
    let samples: Vec<Vec<u8>> = (0..3000).map(record).collect();
    Dictionary::train(&samples, 8 << 10).unwrap()
}

fn zstd(level: i32) -> WriteOptions {
    WriteOptions::default().codec(CodecSpec::Fixed(kompakt::Codec::Zstd { level }))
}

#[test]
fn small_values_shrink_with_a_dictionary_and_read_back() {
    let dict = dictionary();
    let (mut plain, mut with) = (0, 0);
    for i in 10_000..10_200 {
        let value = record(i);
        let a = kompakt::compress(&value, &zstd(3)).unwrap();
        let b = kompakt::compress_with_dictionary(&value, &zstd(3), &dict).unwrap();
        plain += a.len();
        with += b.len();
        let got = kompakt::decompress_with_dictionaries(&b, &vec![dict.clone()].into()).unwrap();
        assert_eq!(got, value);
    }
    // Every file has the same ~150 bytes of header, index and trailer; the payloads differ.
    assert!(with + 200 * 40 < plain, "with {with}, without {plain}");
}

#[test]
fn a_file_with_a_dictionary_is_format_2_and_says_which_it_needs() {
    let dict = dictionary();
    let value: Vec<u8> = (0..400).flat_map(record).collect();
    let file = kompakt::compress_with_dictionary(&value, &zstd(3), &dict).unwrap();
    let mut r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    assert_eq!(r.version(), (2, 0));
    assert!(r.blocks().iter().all(|b| b.header.codec == CodecId::ZstdDict));
    assert_eq!(r.dictionaries_needed(16).unwrap(), vec![dict.id()]);
    let err = r.read_stream(0).unwrap_err();
    assert!(
        matches!(err, Error::MissingDictionary { id, .. } if id == dict.id()),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&dict.id().to_string()) && text.contains("no dictionary was given"),
        "{text}"
    );

    let other = Dictionary::new(b"some other dictionary".to_vec()).unwrap();
    r.set_dictionaries(vec![other.clone()].into());
    let text = r.read_stream(0).unwrap_err().to_string();
    assert!(text.contains(&other.id().to_string()), "{text}");
    r.set_dictionaries(vec![other, dict.clone()].into());
    assert_eq!(r.read_stream(0).unwrap(), value);
    r.verify(&mut |_| {}).unwrap();

    // Front to back, as from a pipe.
    let mut got = Vec::new();
    decode_sequential_with(
        Cursor::new(&file),
        &ReadOptions::default(),
        &vec![dict].into(),
        |_, d| {
            got.extend_from_slice(d);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(got, value);
    let err = decode_sequential(Cursor::new(&file), &ReadOptions::default(), |_, _| Ok(())).unwrap_err();
    assert!(matches!(err, Error::MissingDictionary { .. }), "{err}");

    // Without a dictionary nothing changes: format 1.0, readable by every kompakt.
    let plain = kompakt::compress(&value, &zstd(3)).unwrap();
    assert_eq!(
        Reader::new(Cursor::new(&plain), ReadOptions::default())
            .unwrap()
            .version(),
        (1, 0)
    );
}

#[test]
fn a_dictionary_block_in_a_format_1_file_is_damage() {
    let dict = dictionary();
    let value: Vec<u8> = (0..50).flat_map(record).collect();
    let mut file = kompakt::compress_with_dictionary(&value, &zstd(3), &dict).unwrap();
    file[..16].copy_from_slice(&FileHeader::CURRENT.encode());
    let err = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap_err();
    assert!(err.is_corruption() && err.to_string().contains("format 2.0"), "{err}");
    let dicts: Dictionaries = vec![dict].into();
    let err = decode_sequential_with(Cursor::new(&file), &ReadOptions::default(), &dicts, |_, _| Ok(())).unwrap_err();
    assert!(err.is_corruption(), "{err}");
}

#[test]
fn a_dictionary_needs_zstd() {
    let dict = dictionary();
    for codec in ["lz4", "auto", "gzip:6", "none", "10"] {
        let opts = WriteOptions::default().codec(codec.parse().unwrap());
        let err = Writer::with_dictionary(Vec::new(), opts, dict.clone()).unwrap_err();
        assert!(
            matches!(err, Error::InvalidOption { .. }) && err.to_string().contains("zstd"),
            "{codec}: {err}"
        );
    }
    // A unified level that maps to zstd is fine.
    let opts = WriteOptions::default().codec("60".parse().unwrap());
    assert!(Writer::with_dictionary(Vec::new(), opts, dict).is_ok());
}

#[test]
fn incompressible_values_are_stored_raw_in_a_format_2_file() {
    let dict = dictionary();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let file = kompakt::compress_with_dictionary(&noise, &zstd(3), &dict).unwrap();
    let r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    assert_eq!(r.version(), (2, 0));
    assert_eq!(r.blocks()[0].header.codec, CodecId::None);
    // Nothing needs the dictionary, so a reader without it reads the file.
    assert_eq!(kompakt::decompress(&file).unwrap(), noise);
}

#[test]
fn a_flipped_dictionary_id_is_caught() {
    let dict = dictionary();
    let value: Vec<u8> = (0..50).flat_map(record).collect();
    let mut file = kompakt::compress_with_dictionary(&value, &zstd(3), &dict).unwrap();
    file[16 + 24] ^= 1; // the first byte of the block's dictionary id
    let dicts: Dictionaries = vec![dict.clone()].into();
    let err = kompakt::decompress_with_dictionaries(&file, &dicts).unwrap_err();
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    // Unchecked, the id names a dictionary nobody has.
    let mut r = Reader::new(
        Cursor::new(&file),
        ReadOptions {
            verify_checksums: false,
            threads: 1,
        },
    )
    .unwrap();
    r.set_dictionaries(dicts);
    let err = r.read_stream(0).unwrap_err();
    assert!(
        matches!(err, Error::MissingDictionary { id, .. } if id == DictionaryId(dict.id().0 ^ 1)),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn anything_round_trips_with_any_dictionary(
        dict in proptest::collection::vec(any::<u8>(), 1..4096),
        data in proptest::collection::vec(0u8..8, 0..100_000),
        level in -5i32..12,
    ) {
        let dict = Dictionary::new(dict).unwrap();
        let file = kompakt::compress_with_dictionary(&data, &zstd(level), &dict).unwrap();
        let got = kompakt::decompress_with_dictionaries(&file, &vec![dict].into()).unwrap();
        prop_assert_eq!(got, data);
    }
}

#[test]
fn filter_auto_uses_the_dictionary_on_small_records() {
    let dict = dictionary();
    let value = record(123_456);
    let opts = zstd(3).filter(kompakt::FilterSpec::Auto);
    let file = kompakt::compress_with_dictionary(&value, &opts, &dict).unwrap();
    let r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    assert_eq!(r.blocks()[0].header.codec, CodecId::ZstdDict);
}

#[test]
fn a_writer_without_a_dictionary_refuses_a_dictionary_block() {
    use kompakt::stream::{BlockEncoder, StreamOptions};
    let mut settings = StreamOptions::default()
        .codec(CodecSpec::Fixed(kompakt::Codec::Zstd { level: 3 }))
        .block_settings();
    settings.dictionary = Some(dictionary());
    let data: Vec<u8> = (0..100).flat_map(record).collect();
    let block = BlockEncoder::default().encode(0, &settings, &data).unwrap();
    assert_eq!(block.fields.codec, CodecId::ZstdDict);
    let mut w = Writer::new(Vec::new(), zstd(3)).unwrap();
    let s = w.add_stream(None).unwrap();
    let err = w.write_block(s, &block).unwrap_err();
    assert!(
        matches!(err, Error::Usage(_)) && err.to_string().contains("2.0"),
        "{err}"
    );
    let mut w = Writer::with_dictionary(Vec::new(), zstd(3), dictionary()).unwrap();
    let s = w.add_stream(None).unwrap();
    w.write_block(s, &block).unwrap();
    let file = w.finish().unwrap();
    let got = kompakt::decompress_with_dictionaries(&file, &vec![dictionary()].into()).unwrap();
    assert_eq!(got, data);
}
