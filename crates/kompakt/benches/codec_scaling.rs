//! The codecs alone at 1 and at 2 threads: the ceiling that the block stream's own 2-thread
//! speed-up is judged against (`bench/core.sh`, section d).
//!
//! ```text
//! cargo bench -p kompakt --bench codec_scaling -- [--seconds S] [--max-mb N] [--codecs LIST] FILE...
//! ```
//!
//! The threads take the file's 1 MiB chunks in turn from a shared counter, compress each into
//! a buffer of their own and drop the result: no block format, checksum, incompressibility
//! probe, ordering or copy into an output. What the block stream adds shows as the gap
//! between its speed-up and this one. Rounds of 1 thread then 2 threads alternate for
//! `--seconds` per codec (at least 3 rounds), so both see the same machine; one JSON object
//! per file and codec goes to stdout: the best MB/s at each thread count and the median over
//! rounds of the 2-thread / 1-thread ratio. Slow codecs get a sample of the file's chunks,
//! spread evenly over it (`--max-mb` at most), so that a round stays short.

use kompakt::codec::{Codec, CodecSpec, Compressor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const CHUNK: usize = 1 << 20;

struct Args {
    seconds: f64,
    max_mb: usize,
    codecs: Vec<(String, Codec)>,
    files: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 3.0,
        max_mb: 64,
        codecs: Vec::new(),
        files: Vec::new(),
    };
    let mut codecs = "lz4,lz4hc:9,zstd:1,zstd:3,zstd:9".to_string();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => args.seconds = value("--seconds")?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--max-mb" => args.max_mb = value("--max-mb")?.parse().map_err(|e| format!("--max-mb: {e}"))?,
            "--codecs" => codecs = value("--codecs")?,
            // `cargo bench` passes this to every bench target.
            "--bench" => {}
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => args.files.push(arg),
        }
    }
    for name in codecs.split(',') {
        match name.parse::<CodecSpec>().map_err(|e| e.to_string())? {
            CodecSpec::Fixed(Codec::None) | CodecSpec::Auto => {
                return Err(format!("{name}: only a fixed codec can be timed alone"))
            }
            CodecSpec::Fixed(codec) => args.codecs.push((name.to_string(), codec)),
        }
    }
    if args.files.is_empty() {
        return Err("no input files".into());
    }
    Ok(args)
}

/// Seconds for `threads` threads to compress all of `chunks`.
fn round(chunks: &[&[u8]], codec: Codec, threads: usize) -> f64 {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut compressor = Compressor::new();
                let mut out = Vec::with_capacity(2 * CHUNK);
                let mut stored = 0;
                while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    out.clear();
                    let n = compressor
                        .compress_append(codec, chunk, &mut out, 2 * CHUNK)
                        .expect("compress");
                    stored += n.unwrap_or(chunk.len());
                }
                std::hint::black_box(stored);
            });
        }
    });
    started.elapsed().as_secs_f64()
}

/// Up to `n` chunks of `data`, evenly spaced over it (all of them when it has no more).
fn spread(data: &[u8], n: usize) -> Vec<&[u8]> {
    let all: Vec<&[u8]> = data.chunks(CHUNK).collect();
    let step = all.len().div_ceil(n.max(1)).max(1);
    all.into_iter().step_by(step).collect()
}

fn total(chunks: &[&[u8]]) -> usize {
    chunks.iter().map(|c| c.len()).sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args = parse_args().unwrap_or_else(|e| {
        eprintln!("codec_scaling: {e}");
        std::process::exit(2);
    });
    for path in &args.files {
        let data = std::fs::read(path).unwrap_or_else(|e| {
            eprintln!("codec_scaling: cannot read {path}: {e}");
            std::process::exit(1);
        });
        for (name, codec) in &args.codecs {
            // A first 1-thread pass over 8 chunks sizes the sample so that a round takes
            // about a quarter of the budget. The chunks are spread over the whole file: its
            // parts can differ (mixed.bin starts with a column of flags).
            let probe = spread(&data, 8);
            let speed = total(&probe) as f64 / round(&probe, *codec, 1).max(1e-9);
            let want = (speed * args.seconds / 4.0).min((args.max_mb << 20) as f64) as usize;
            // At least 64 chunks, so that the last chunk of a 2-thread round, which one thread
            // finishes alone, costs little.
            let chunks = spread(&data, (want / CHUNK).max(64));
            let len = total(&chunks);
            let (mut one, mut two, mut ratios) = (f64::MAX, f64::MAX, Vec::new());
            let started = Instant::now();
            while ratios.len() < 3 || started.elapsed().as_secs_f64() < args.seconds {
                let t1 = round(&chunks, *codec, 1);
                let t2 = round(&chunks, *codec, 2);
                one = one.min(t1);
                two = two.min(t2);
                ratios.push(t1 / t2);
            }
            let mb = len as f64 / 1e6;
            println!(
                "{}",
                serde_json::json!({
                    "file": path,
                    "codec": name,
                    "bytes": len,
                    "file_bytes": data.len(),
                    "rounds": ratios.len(),
                    "mb_s_1": mb / one,
                    "mb_s_2": mb / two,
                    "scaling_best": one / two,
                    "scaling_median": median(ratios),
                })
            );
        }
    }
}
