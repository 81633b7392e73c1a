//! The filters alone, on one thread, in GB/s of original bytes (best of rounds): what a typed
//! block's decode costs beyond its codec.
//!
//! ```text
//! cargo bench -p kompakt --bench filters -- [--mib N] [--rounds R]
//! ```
//!
//! Each filter set runs over 1 MiB blocks (the stream's default block size) of sorted int64
//! values, cycling through `--mib` MiB of them so that, at the default 256, source and output
//! live in memory rather than in the caches, as they do in a load.

use kompakt::FilterSet;
use std::time::Instant;

const BLOCK: usize = 1 << 20;

fn main() {
    let mut mib = 256usize;
    let mut rounds = 5usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{arg} needs a number"))
        };
        match arg.as_str() {
            "--mib" => mib = value(),
            "--rounds" => rounds = value(),
            "--bench" => {}
            other => panic!("unknown argument {other}; valid: --mib N, --rounds R"),
        }
    }
    let len = mib.max(1) * BLOCK;
    // Sorted int64 with small, irregular gaps: what delta+shuffle is for.
    let mut x = 0u64;
    let data: Vec<u8> = (0..len / 8)
        .flat_map(|i: usize| {
            x += (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
            x.to_le_bytes()
        })
        .collect();
    for filters in [FilterSet::SHUFFLE, FilterSet::DELTA, FilterSet::DELTA_SHUFFLE] {
        let mut encoded = vec![0u8; len];
        let (mut block, mut tmp) = (Vec::new(), Vec::new());
        for (src, dst) in data.chunks(BLOCK).zip(encoded.chunks_mut(BLOCK)) {
            filters.encode(8, src, &mut block, &mut tmp);
            dst.copy_from_slice(&block);
        }
        let mut out = vec![1u8; len];
        let mut best_decode = f64::MAX;
        for _ in 0..rounds.max(1) {
            let start = Instant::now();
            for (src, dst) in encoded.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
                filters.decode(8, src, dst).expect("decode");
            }
            best_decode = best_decode.min(start.elapsed().as_secs_f64());
        }
        assert!(out == data, "{filters}: decode differs from the input");
        let mut best_encode = f64::MAX;
        for _ in 0..rounds.max(1) {
            let start = Instant::now();
            for src in data.chunks(BLOCK) {
                filters.encode(8, src, &mut block, &mut tmp);
            }
            best_encode = best_encode.min(start.elapsed().as_secs_f64());
        }
        let gbs = |s: f64| len as f64 / s / 1e9;
        println!(
            "{filters:>14}  encode {:6.2} GB/s  decode {:6.2} GB/s",
            gbs(best_encode),
            gbs(best_decode)
        );
    }
}
