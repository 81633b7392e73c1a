//! Reads every stream of a kompakt file into buffers allocated and touched beforehand, best of
//! `--rounds`: the decode path of a load without the kernel's cost of fresh pages, which on a
//! VM varies several-fold from run to run (bench/RESULTS.md, "Loads against np.load").
//! `--fresh` reads into new, untouched buffers instead (allocated outside the timing), as a
//! load does.
//!
//! ```text
//! cargo run --release -p kompakt --example read_into -- FILE [--rounds N] [--threads N] [--fresh]
//! ```

use kompakt::{ReadOptions, Reader};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut path, mut rounds, mut threads, mut fresh) = (None, 10usize, 0usize, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().ok_or("--rounds needs a number")?.parse()?,
            "--threads" => threads = args.next().ok_or("--threads needs a number")?.parse()?,
            "--fresh" => fresh = true,
            _ => path = Some(arg),
        }
    }
    let path = path.ok_or("usage: read_into FILE [--rounds N] [--threads N] [--fresh]")?;
    let opts = ReadOptions {
        threads,
        ..ReadOptions::default()
    };
    let mut reader = Reader::at(std::fs::File::open(&path)?, opts)?;
    let lens: Vec<u64> = (0..reader.streams().len() as u32)
        .map(|s| reader.stream_len(s))
        .collect::<Result<_, _>>()?;
    let mut buffers: Vec<Vec<u8>> = lens.iter().map(|&n| vec![1u8; n as usize]).collect();
    let total: u64 = lens.iter().sum();
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        if fresh {
            // Zeroed allocations this large are fresh mappings: no page is touched yet.
            buffers = lens.iter().map(|&n| vec![0u8; n as usize]).collect();
        }
        let start = Instant::now();
        for (s, buf) in buffers.iter_mut().enumerate() {
            reader.read_stream_into(s as u32, buf)?;
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{path}: {} streams, {:.1} MB in {:.1} ms, {:.2} GB/s (best of {rounds}{})",
        lens.len(),
        total as f64 / 1e6,
        best * 1e3,
        total as f64 / best / 1e9,
        if fresh { ", fresh buffers" } else { "" }
    );
    Ok(())
}
