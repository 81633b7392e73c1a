//! Compress, then decompress, and compare. The first 8 bytes choose the options:
//!
//! | byte | meaning                                                                     |
//! |------|-----------------------------------------------------------------------------|
//! | 0    | codec family: none, auto, lz4, lz4hc, zstd, gzip, zlib, unified level        |
//! | 1    | the level / acceleration within the family                                  |
//! | 2    | typesize (1, 2, 3, 4, 8, 16, 255 or 5)                                       |
//! | 3    | filter (none, shuffle, delta, auto); bit 7: a second stream with other options |
//! | 4    | block size 64/128/256 KiB; bit 7: also write with 2 threads, compare bytes  |
//! | 5    | if < 16: repeat the payload to (b + 1) x 40 KiB (multi-block, staging)      |
//! | 6    | write chunking: one call, small pieces, 64 KiB - 1, 300 001                  |
//! | 7    | metadata length; odd with a zstd codec: the fuzz dictionary (format 2.0)    |
//!
//! The rest is the payload. Both readers must return it exactly, the file must have the
//! expected block structure, and the bytes written must not depend on the thread count.
#![no_main]

use kompakt::codec::Codec;
use kompakt::stream::{StreamId, Writer};
use kompakt::{CodecSpec, FilterSpec, WriteOptions};
use kompakt_fuzz::{cross_check, exercise_reader, fuzz_dictionary};
use libfuzzer_sys::fuzz_target;

fn codec(family: u8, b: u8) -> CodecSpec {
    let c = match family % 8 {
        0 => Codec::None,
        1 => return CodecSpec::Auto,
        2 => Codec::Lz4 {
            acceleration: 1 + u32::from(b) * 257,
        },
        3 => Codec::Lz4Hc { level: 1 + b % 12 },
        // -50..=19; zstd's "ultra" levels 20-22 come only from unified levels 91-100 (slow).
        4 => Codec::Zstd {
            level: i32::from(b % 70) - 50,
        },
        5 => Codec::Gzip { level: 1 + b % 9 },
        6 => Codec::Zlib { level: 1 + b % 9 },
        _ => return CodecSpec::level(b % 101).expect("0..=100 is a unified level"),
    };
    CodecSpec::Fixed(c)
}

fn write_file(opts: WriteOptions, second: Option<WriteOptions>, parts: &[&[u8]], chunk: usize, meta: &[u8]) -> Vec<u8> {
    let zstd = matches!(opts.stream.codec, CodecSpec::Fixed(Codec::Zstd { .. }));
    let mut w = if zstd && meta.len() % 2 == 1 {
        Writer::with_dictionary(Vec::new(), opts, fuzz_dictionary()).expect("valid options")
    } else {
        Writer::new(Vec::new(), opts).expect("valid options")
    };
    let mut ids: Vec<StreamId> = vec![w.add_stream(None).expect("add_stream")];
    if let Some(o) = second {
        ids.push(
            w.add_stream(Some(o.stream_options()))
                .expect("add_stream with valid options"),
        );
    }
    // Interleave the streams' writes, `chunk` bytes at a time.
    let mut offsets = vec![0usize; ids.len()];
    loop {
        let mut any = false;
        for (k, &id) in ids.iter().enumerate() {
            let data = parts[k];
            if offsets[k] < data.len() {
                let end = (offsets[k] + chunk).min(data.len());
                w.write(id, &data[offsets[k]..end]).expect("write");
                offsets[k] = end;
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    w.set_metadata(meta.to_vec()).expect("metadata");
    w.finish().expect("finish")
}

fuzz_target!(|data: &[u8]| {
    let Some((&[b0, b1, b2, b3, b4, b5, b6, b7], payload)) = data.split_first_chunk::<8>() else {
        return;
    };
    let typesize = [1u8, 2, 3, 4, 8, 16, 255, 5][usize::from(b2 % 8)];
    let filter = [
        FilterSpec::None,
        FilterSpec::Shuffle,
        FilterSpec::Delta,
        FilterSpec::Auto,
    ][usize::from(b3 % 4)];
    let block_size = (64 << 10) << (b4 % 3);
    let opts = WriteOptions::default()
        .codec(codec(b0, b1))
        .typesize(typesize)
        .filter(filter)
        .block_size(block_size)
        .threads(1);

    let mut owned = Vec::new();
    let input: &[u8] = if b5 < 16 && !payload.is_empty() {
        let target = (usize::from(b5) + 1) * (40 << 10);
        while owned.len() < target {
            owned.extend_from_slice(payload);
            // Vary the copies a little so not every block is an exact repeat.
            let n = owned.len();
            owned[n - 1] = owned[n - 1].wrapping_add(n as u8);
        }
        &owned
    } else {
        payload
    };
    let chunk = match b6 % 4 {
        0 => usize::MAX,
        1 => 1 + usize::from(b6) * 37,
        2 => (64 << 10) - 1,
        _ => 300_001,
    };
    let meta = &payload[..usize::from(b7).min(payload.len())];

    // One stream, or two with different options over the two halves of the input.
    let (parts, second): (Vec<&[u8]>, _) = if b3 & 0x80 != 0 {
        let (a, b) = input.split_at(input.len() / 2);
        let o = opts
            .codec(codec(b0.wrapping_add(3), b1.rotate_left(3)))
            .typesize([1u8, 8, 2, 4][usize::from(b2 >> 6)])
            .filter(FilterSpec::Delta);
        (vec![a, b], Some(o))
    } else {
        (vec![input], None)
    };

    let file = write_file(opts, second, &parts, chunk, meta);
    if second.is_none() && chunk == usize::MAX && meta.is_empty() {
        // `compress` writes to memory: on one thread it compresses straight into its `Vec`,
        // where `write_file` stages every block.
        let one_shot = kompakt::compress(input, &opts).expect("compress");
        assert!(
            one_shot == file,
            "kompakt::compress differs from Writer with the same options"
        );
        let back = kompakt::decompress(&file).expect("decompress a file just written");
        assert!(back == input, "kompakt::decompress did not return the input");
    }
    if b4 & 0x80 != 0 {
        let threaded = write_file(opts.threads(2), second.map(|o| o.threads(2)), &parts, chunk, meta);
        assert!(threaded == file, "the bytes written depend on the thread count");
    }

    // Structure: every block of a stream is full except its last; stored <= raw.
    let r = kompakt::Reader::new(
        std::io::Cursor::new(&file[..]),
        kompakt::ReadOptions::default().threads(1),
    )
    .expect("open a file just written");
    assert_eq!(r.streams().len(), parts.len());
    assert!(r.metadata() == meta, "metadata");
    for (s, part) in parts.iter().enumerate() {
        let info = r.streams()[s];
        assert_eq!(info.raw_len, part.len() as u64, "stream {s} length");
        assert_eq!(
            info.block_count,
            part.len().div_ceil(block_size) as u64,
            "stream {s} block count"
        );
    }
    let stored: u64 = r.blocks().iter().map(|b| u64::from(b.header.stored_len)).sum();
    let overhead = 16 + 16 + 16 + 8 + 32 + 16 * parts.len() + 56 * r.blocks().len() + meta.len();
    assert_eq!(
        file.len() as u64,
        stored + overhead as u64,
        "file size is not header + blocks + footer + trailer"
    );
    for b in r.blocks() {
        assert!(b.header.stored_len <= b.header.raw_len);
        let part_len = parts[b.header.stream as usize].len() as u64;
        if b.raw_offset + u64::from(b.header.raw_len) < part_len {
            assert_eq!(
                b.header.raw_len as usize, block_size,
                "a block other than the last is not full"
            );
        }
    }
    drop(r);

    let decoded = exercise_reader(&file, true).expect("Reader decodes a file just written");
    assert_eq!(decoded.len(), parts.len());
    for (s, part) in parts.iter().enumerate() {
        assert!(
            decoded[s][..] == part[..],
            "Reader: stream {s} differs from what was written"
        );
    }
    cross_check(&file, true, Some(&decoded));
});
