//! Arbitrary bytes into one decoder: byte 0 picks the codec id (mod 6), bytes 1..4 the
//! declared output size (little-endian, capped at 1 MiB), the rest is the payload. For
//! `zstd-dict`, bit 7 of byte 0 puts a fuzz dictionary's id in front of the payload (bit 6:
//! which one), so the frame reaches zstd with that dictionary loaded.
//! `Decompressor::decompress_into` must return an error or fill the buffer, never panic.
#![no_main]

use kompakt::codec::Decompressor;
use kompakt::CodecId;
use kompakt_fuzz::{fuzz_dictionaries, fuzz_dictionary, trained_dictionary};
use libfuzzer_sys::fuzz_target;

const MAX_OUT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&[id, a, b, c], payload)) = data.split_first_chunk::<4>() else {
        return;
    };
    let codec = CodecId::from_u8(id % 6).expect("0..=5 are codec ids");
    let size = (u32::from_le_bytes([a, b, c, 0]) as usize).min(MAX_OUT);
    let named;
    let payload = if codec == CodecId::ZstdDict && id & 0x80 != 0 {
        let dictionary = if id & 0x40 != 0 { trained_dictionary() } else { fuzz_dictionary() };
        named = [&dictionary.id().0.to_le_bytes()[..], payload].concat();
        &named[..]
    } else {
        payload
    };
    let dictionaries = fuzz_dictionaries();
    let mut out = vec![0u8; size];
    let mut d = Decompressor::new();
    let first = d.decompress_with(codec, payload, &mut out, &dictionaries);
    if first.is_ok() && codec == CodecId::None {
        assert!(out == payload, "raw block copied wrongly");
    }
    // A reused context must behave like a fresh one.
    let mut again = vec![0u8; size];
    let second = d.decompress_with(codec, payload, &mut again, &dictionaries);
    assert_eq!(
        first.is_ok(),
        second.is_ok(),
        "{codec}: reused context changed the outcome"
    );
    if first.is_ok() {
        assert!(out == again, "{codec}: reused context decoded differently");
    }
});
