//! Damaged files: every flipped byte and every truncation must give a typed corruption error
//! from every reader, never a panic, a hang, a huge allocation or wrong data.

use kompakt::stream::{decode_sequential, MIN_BLOCK_SIZE};
use kompakt::{CodecSpec, Error, ReadOptions, Reader, WriteOptions, Writer};
use std::io::Cursor;

/// A small file that still has every kind of structure: two compressed blocks (one shuffled),
/// a raw block, two streams and metadata.
fn sample_file() -> Vec<u8> {
    let opts = WriteOptions::default().block_size(MIN_BLOCK_SIZE).threads(1);
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let a = w
        .add_stream(Some(opts.typesize(8).codec(CodecSpec::parse("zstd:1").unwrap())))
        .unwrap();
    let b = w
        .add_stream(Some(opts.codec(CodecSpec::parse("lz4").unwrap())))
        .unwrap();
    let numbers: Vec<u8> = (0..(MIN_BLOCK_SIZE as u64 / 8 + 100))
        .flat_map(|i| (i * i).to_le_bytes())
        .collect();
    w.write(a, &numbers).unwrap();
    let mut x = 12345u32;
    let noise: Vec<u8> = (0..300)
        .map(|_| {
            x = x.wrapping_mul(1103515245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    w.write(b, &noise).unwrap();
    w.set_metadata(b"meta".to_vec());
    w.finish().unwrap()
}

/// Reads everything through both readers; Ok only if both succeed.
fn read_all(file: &[u8]) -> Vec<Result<Vec<Vec<u8>>, Error>> {
    let opts = ReadOptions::default().threads(2);
    let random = Reader::new(Cursor::new(file), opts).and_then(|mut r| {
        (0..r.streams().len() as u32)
            .map(|s| r.read_stream(s))
            .collect::<Result<Vec<_>, _>>()
    });
    let mut streams: Vec<Vec<u8>> = Vec::new();
    let sequential = decode_sequential(Cursor::new(file), &opts, |s, d| {
        if streams.len() <= s as usize {
            streams.resize(s as usize + 1, Vec::new());
        }
        streams[s as usize].extend_from_slice(d);
        Ok(())
    })
    .map(|_| streams);
    vec![random, sequential]
}

fn assert_corrupt(file: &[u8], what: &str) {
    for (reader, r) in ["random-access", "sequential"].iter().zip(read_all(file)) {
        match r {
            Ok(_) => panic!("{what}: {reader} reader accepted a damaged file"),
            Err(e) => assert!(e.is_corruption(), "{what}: {reader} gave a non-corruption error: {e}"),
        }
    }
}

#[test]
fn the_sample_is_valid() {
    let file = sample_file();
    let r = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap();
    let codecs: Vec<_> = r.blocks().iter().map(|b| b.header.codec.name()).collect();
    assert_eq!(
        codecs,
        ["zstd", "zstd", "none"],
        "the sample should cover compressed and raw blocks"
    );
    assert!(r.blocks()[0].header.filters.shuffles());
    for result in read_all(&file) {
        assert_eq!(result.unwrap().len(), 2);
    }
}

#[test]
fn every_flipped_byte_is_detected() {
    let file = sample_file();
    for i in 0..file.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = file.clone();
            bad[i] ^= mask;
            assert_corrupt(&bad, &format!("byte {i} ^ {mask:#x}"));
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let file = sample_file();
    for len in 0..file.len() {
        assert_corrupt(&file[..len], &format!("truncated to {len}"));
    }
}

#[test]
fn trailing_garbage_and_foreign_files_are_rejected() {
    let mut file = sample_file();
    file.extend_from_slice(b"junk");
    assert_corrupt(&file, "trailing bytes");
    assert_corrupt(
        b"PK\x03\x04 this is a zip file, not kompakt at all, no no no no no no no no",
        "zip",
    );
    assert_corrupt(&[0u8; 200], "zeros");
    let e = Reader::new(
        Cursor::new(b"\x28\xb5\x2f\xfd plus enough bytes to pass the size check....................."),
        ReadOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::BadMagic { .. }), "{e}");
}

#[test]
fn newer_major_versions_are_refused_clearly() {
    let mut file = sample_file();
    file[4] = 2; // major version 2
    let sum = (xxhash_rust_free_checksum(&file[0..12])).to_le_bytes();
    file[12..16].copy_from_slice(&sum);
    let e = Reader::new(Cursor::new(&file), ReadOptions::default()).unwrap_err();
    assert!(matches!(e, Error::UnsupportedVersion { major: 2, .. }), "{e}");
    assert!(e.to_string().contains("upgrade"));
}

/// The header checksum, recomputed through the public format module.
fn xxhash_rust_free_checksum(bytes: &[u8]) -> u32 {
    let mut h = [0u8; 16];
    h.copy_from_slice(&kompakt::stream::format::FileHeader::CURRENT.encode());
    h[..12].copy_from_slice(bytes);
    // Re-encode through a decoded copy is not possible for an unknown version, so hash directly.
    kompakt::stream::format::header_checksum(&h[..12])
}

#[test]
fn a_block_claiming_64_mib_in_a_tiny_pipe_is_cheap_to_reject() {
    let mut file = sample_file();
    // Block 0's stored length -> 64 MiB: header checksum fails, or the payload runs out first.
    file[16 + 12..16 + 16].copy_from_slice(&(64u32 << 20).to_le_bytes());
    file[16 + 8..16 + 12].copy_from_slice(&(64u32 << 20).to_le_bytes());
    assert_corrupt(&file, "huge stored length");
}
