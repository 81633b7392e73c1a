//! kompakt's codec lab: ratio and speed of codecs, levels, filters, block sizes and thread
//! counts on the user's data, in memory (so the figures measure kompakt, not the disk), and
//! what to pick for a disk or network of a given speed. `kompakt bench` and Python's
//! `kompakt.bench` are front ends of it.
//!
//! Speeds are raw MB/s (10^6 bytes a second), as `zstd -b` and `lz4 -b` report them; each
//! figure is the best of the runs made in `seconds`. Decompression checks every block's
//! checksum, as every read does; `unverified` adds a figure without the checks, the work the
//! C tools' benchmarks measure.

mod disk;
mod plot;
pub use disk::{check_disk_bytes, measure_disk, DiskSpeed, DISK_BYTES, DISK_BYTES_MIN};
pub use plot::{plot, series, Series};

use kompakt::{CodecSpec, FilterSpec, ReadOptions, Reader, WriteOptions, Writer};
use serde_json::json;
use std::time::Instant;

/// A bench that could not run: a bad option, or data that did not round-trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<kompakt::Error> for Error {
    fn from(e: kompakt::Error) -> Self {
        Error(e.to_string())
    }
}

pub type Result<T = ()> = std::result::Result<T, Error>;

/// What to measure: every codec x filter x block size x thread count.
#[derive(Debug, Clone)]
pub struct Config {
    pub codecs: Vec<CodecSpec>,
    pub filters: Vec<FilterSpec>,
    pub block_sizes: Vec<usize>,
    /// Thread counts, resolved (no 0).
    pub threads: Vec<usize>,
    pub typesize: u8,
    /// Seconds to spend on each figure (at least two runs each; the best counts).
    pub seconds: f64,
    /// Also time decompression without checksum checks.
    pub unverified: bool,
}

/// One measured configuration of one dataset.
#[derive(Debug, Clone)]
pub struct Row {
    pub file: String,
    /// The codec spec (what to pass to `--codec`), or `memcpy` for the yardstick row.
    pub codec: String,
    pub filter: String,
    pub block_size: usize,
    pub threads: usize,
    pub raw: u64,
    pub stored: u64,
    pub compress: Timing,
    pub decompress: Timing,
    /// Decompression without checksum checks (`Config::unverified`).
    pub unverified: Option<Timing>,
}

/// The best run of a measurement: its wall time, and the CPU time of all threads in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Seconds.
    pub wall: f64,
    /// CPU seconds of all threads.
    pub cpu: f64,
}

impl Timing {
    /// Raw MB/s of `bytes` in this time.
    pub fn mbps(self, bytes: u64) -> f64 {
        bytes as f64 / 1e6 / self.wall
    }
}

/// CPU seconds this process has used so far, user and system, all threads.
fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` through the pointer, which points at room for one.
    let done = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    // SAFETY: all of `rusage` is integers, so the zeroed value is valid even if the call failed.
    let usage = unsafe { usage.assume_init() };
    if done != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `f` repeatedly for about `seconds`, at least twice, and returns the best run.
///
/// A first run pays for faulting in the output's pages and warming the allocator (about 10 %
/// at zstd level 3 on 310 MB), which `zstd -b` and `lz4 -b` spend before timing; a slow codec
/// on a large file fits one run in `seconds`, so that run must not be the only one.
fn best_time(seconds: f64, mut f: impl FnMut() -> Result) -> Result<Timing> {
    let mut best = Timing {
        wall: f64::INFINITY,
        cpu: 0.0,
    };
    let started = Instant::now();
    for run in 1.. {
        let (t, cpu) = (Instant::now(), cpu_seconds());
        f()?;
        let wall = t.elapsed().as_secs_f64();
        if wall < best.wall {
            best = Timing {
                wall,
                cpu: cpu_seconds() - cpu,
            };
        }
        if run >= 2 && started.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    best.wall = best.wall.max(1e-9);
    Ok(best)
}

/// A codec list: specs and unified levels, and ranges of either: `zstd:1-9`,
/// `lz4hc:1-12:3` (a step), `0-100:10` (unified levels), `zstd:-5--1`.
pub fn expand_codecs(list: &str) -> Result<Vec<CodecSpec>> {
    const MOST: usize = 1000;
    let mut specs = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, levels) = match item.split_once(':') {
            // "0-100:10": unified levels with a step.
            Some((range, _)) if parse_range(item).is_some() && !range.is_empty() => (None, item),
            Some((name, levels)) => (Some(name), levels),
            None => (None, item),
        };
        let Some(range) = parse_range(levels) else {
            specs.push(item.parse::<CodecSpec>()?);
            continue;
        };
        let (from, to, step) = range.map_err(|why| {
            Error(format!(
                "invalid level range {item:?} in the codecs: {why} (expected FROM-TO or FROM-TO:STEP, \
                 as in zstd:1-9, lz4hc:1-12:3 or 0-100:10)"
            ))
        })?;
        for level in (from..=to).step_by(step) {
            let spec = match name {
                Some(name) => CodecSpec::from_options(Some(name), Some(level))?,
                None => CodecSpec::from_options(None, Some(level))?,
            };
            specs.push(spec);
            if specs.len() > MOST {
                return Err(Error(format!(
                    "the codecs {list:?} name more than {MOST} configurations"
                )));
            }
        }
    }
    Ok(specs)
}

/// `FROM-TO` or `FROM-TO:STEP` (levels may be negative: `-5--1`); None when `s` is not a range
/// at all, an error when it is one that makes no sense.
fn parse_range(s: &str) -> Option<std::result::Result<(i64, i64, usize), String>> {
    let (bounds, step) = match s.split_once(':') {
        Some((bounds, step)) => (bounds, Some(step)),
        None => (s, None),
    };
    // The dash between the bounds: not a leading minus sign.
    let cut = bounds.char_indices().skip(1).find(|&(_, c)| c == '-')?.0;
    let (from, to) = (
        bounds[..cut].trim().parse::<i64>().ok()?,
        bounds[cut + 1..].trim().parse::<i64>().ok()?,
    );
    let step = match step.map(|t| t.trim().parse::<usize>()) {
        None => 1,
        Some(Ok(step)) if step >= 1 => step,
        Some(_) => return Some(Err("the step must be a whole number of at least 1".into())),
    };
    if from > to {
        return Some(Err(format!("{from} is above {to}")));
    }
    Some(Ok((from, to, step)))
}

/// Measures every configuration of `config` on `data` (named `name` in the rows), after a
/// memcpy of it (the yardstick row); `progress` hears of each configuration before it runs.
pub fn measure(name: &str, data: &[u8], config: &Config, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>> {
    if !(config.seconds.is_finite() && (0.0..=3600.0).contains(&config.seconds)) {
        return Err(Error(format!(
            "invalid seconds {}: expected a number of seconds from 0 to 3600",
            config.seconds
        )));
    }
    let mut rows = Vec::new();
    let mut dst = vec![0u8; data.len()];
    // The floor every codec is compared with: one memcpy of the data.
    let copy = best_time(config.seconds, || {
        dst.copy_from_slice(data);
        Ok(())
    })?;
    rows.push(Row {
        file: name.to_string(),
        codec: "memcpy".into(),
        filter: "none".into(),
        block_size: data.len(),
        threads: 1,
        raw: data.len() as u64,
        stored: data.len() as u64,
        compress: copy,
        decompress: copy,
        unverified: config.unverified.then_some(copy),
    });
    let mut packed = Vec::with_capacity(data.len() + (1 << 20));
    for spec in &config.codecs {
        for &filter in &config.filters {
            for &block_size in &config.block_sizes {
                for &t in &config.threads {
                    let opts = WriteOptions::default()
                        .codec(*spec)
                        .filter(filter)
                        .typesize(config.typesize)
                        .block_size(block_size)
                        .threads(t);
                    opts.validate()?;
                    progress(&format!("{spec} {filter} block {block_size} threads={t}"));
                    let compress = best_time(config.seconds, || {
                        packed.clear();
                        let mut w = Writer::to_memory(std::mem::take(&mut packed), opts)?;
                        let s = w.add_stream(None)?;
                        w.write(s, data)?;
                        packed = w.finish()?;
                        Ok(())
                    })?;
                    let mut decompress = |verify_checksums: bool| -> Result<Timing> {
                        let read_opts = ReadOptions {
                            verify_checksums,
                            ..ReadOptions::default().threads(t)
                        };
                        let d = best_time(config.seconds, || {
                            let mut r = Reader::from_memory(&packed, read_opts)?;
                            r.read_stream_into(0, &mut dst)?;
                            Ok(())
                        })?;
                        if dst != data {
                            return Err(Error(format!("round trip of {name} with {spec} lost data")));
                        }
                        Ok(d)
                    };
                    let decompressed = decompress(true)?;
                    let unverified = if config.unverified {
                        Some(decompress(false)?)
                    } else {
                        None
                    };
                    rows.push(Row {
                        file: name.to_string(),
                        codec: spec.to_string(),
                        filter: filter.to_string(),
                        block_size,
                        threads: t,
                        raw: data.len() as u64,
                        stored: packed.len() as u64,
                        compress,
                        decompress: decompressed,
                        unverified,
                    });
                }
            }
        }
    }
    Ok(rows)
}

/// A row as JSON: kompakt's names (`codec` is the spec to pass to `--codec`), and the columns
/// of the squash benchmark's CSV (dataset, plugin, codec name, level, CPU and wall seconds each
/// way), with the machine's cores, so results from several machines combine.
impl Row {
    /// `sink_mb_s` is the sink's speed when it writes and reads at one speed (null when not);
    /// `sink_write_mb_s` and `sink_read_mb_s` are its speeds each way.
    pub fn to_json(&self, sink: Option<Sink>) -> serde_json::Value {
        let r = self;
        let (codec_name, level) = match r.codec.split_once(':') {
            Some((name, level)) => (name, level.parse::<i64>().ok()),
            None => (r.codec.as_str(), None),
        };
        json!({
            "file": r.file, "codec": r.codec, "threads": r.threads, "raw_size": r.raw,
            "compressed_size": r.stored, "ratio": r.raw as f64 / r.stored.max(1) as f64,
            "compress_mb_s": r.compress.mbps(r.raw), "decompress_mb_s": r.decompress.mbps(r.raw),
            "decompress_unverified_mb_s": r.unverified.map(|u| u.mbps(r.raw)),
            "dataset": std::path::Path::new(&r.file).file_name().map_or(r.file.clone(), |n| n.to_string_lossy().into_owned()),
            "plugin": "kompakt", "codec_name": codec_name, "level": level, "filter": r.filter,
            "block_size": r.block_size, "uncompressed_size": r.raw,
            "compress_cpu": r.compress.cpu, "compress_wall": r.compress.wall,
            "decompress_cpu": r.decompress.cpu, "decompress_wall": r.decompress.wall,
            "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "sink_mb_s": sink.and_then(Sink::one_speed),
            "sink_write_mb_s": sink.map(|s| s.write_mbps), "sink_read_mb_s": sink.map(|s| s.read_mbps),
            "write_mb_s": r.write_mbps(sink), "read_mb_s": r.read_mbps(sink),
        })
    }
}

/// A speed such as `200MB/s`, `1.5GB/s`, `800MiB/s` or `200` (MB/s), in MB/s (10^6 bytes a
/// second, as the bench reports speeds).
pub fn parse_speed(text: &str) -> Result<f64> {
    let s = text.trim();
    let s = s.strip_suffix("/s").unwrap_or(s).trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "m" | "mb" => 1.0,
        "b" => 1e-6,
        "k" | "kb" => 1e-3,
        "g" | "gb" => 1e3,
        "t" | "tb" => 1e6,
        "kib" => 1024.0 / 1e6,
        "mib" => (1u64 << 20) as f64 / 1e6,
        "gib" => (1u64 << 30) as f64 / 1e6,
        _ => f64::NAN,
    };
    match number.parse::<f64>() {
        Ok(n) if (n * scale).is_finite() && n * scale > 0.0 => Ok(n * scale),
        _ => Err(Error(format!(
            "invalid speed {text:?}: expected a positive number and a unit, such as 200MB/s, 1.5GB/s or 800MiB/s"
        ))),
    }
}

/// The disk or network the data goes to: the MB/s it writes and reads. `--sink-speed X` is X
/// both ways; `--disk PATH` measures each ([`measure_disk`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sink {
    pub write_mbps: f64,
    pub read_mbps: f64,
}

impl Sink {
    /// A sink that writes and reads at `mbps`.
    pub fn both(mbps: f64) -> Sink {
        Sink {
            write_mbps: mbps,
            read_mbps: mbps,
        }
    }

    /// The speed, when writes and reads have the same.
    pub fn one_speed(self) -> Option<f64> {
        (self.write_mbps == self.read_mbps).then_some(self.write_mbps)
    }

    /// `200 MB/s`, or `512 MB/s write, 1900 MB/s read`.
    pub fn describe(self) -> String {
        match self.one_speed() {
            Some(mbps) => format!("{mbps:.0} MB/s"),
            None => format!("{:.0} MB/s write, {:.0} MB/s read", self.write_mbps, self.read_mbps),
        }
    }
}

/// Raw MB/s through a codec of `codec_mbps` and a sink of `sink_mbps`, pipelined (blocks are
/// compressed while earlier ones are written): the slower of the two, where the sink carries
/// the compressed bytes, `ratio` times fewer.
fn through_sink(codec_mbps: f64, ratio: f64, sink_mbps: Option<f64>) -> f64 {
    match sink_mbps {
        Some(sink) => codec_mbps.min(sink * ratio),
        None => codec_mbps,
    }
}

impl Row {
    pub fn ratio(&self) -> f64 {
        self.raw as f64 / self.stored.max(1) as f64
    }

    /// Raw MB/s written through `sink` at its write speed (None: in memory).
    pub fn write_mbps(&self, sink: Option<Sink>) -> f64 {
        through_sink(self.compress.mbps(self.raw), self.ratio(), sink.map(|s| s.write_mbps))
    }

    /// Raw MB/s read through `sink` at its read speed (None: in memory).
    pub fn read_mbps(&self, sink: Option<Sink>) -> f64 {
        through_sink(self.decompress.mbps(self.raw), self.ratio(), sink.map(|s| s.read_mbps))
    }

    /// The options that make this configuration.
    pub fn options(&self) -> String {
        format!(
            "--codec {} --filter {} --block-size {} (threads {})",
            self.codec,
            self.filter,
            size_option(self.block_size),
            self.threads
        )
    }
}

/// A size as an option takes it: 1M, 256K, or bytes.
pub fn size_option(bytes: usize) -> String {
    match bytes {
        b if b > 0 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b > 0 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// One line of `--recommend`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub file: String,
    pub goal: String,
    /// The row chosen (None: no configuration meets the goal).
    pub chosen: Option<usize>,
    pub figure: String,
}

impl Recommendation {
    /// The recommendation with the options of the row it chose (of `rows`, which it was made
    /// from), as `--json` and Python give it.
    pub fn to_json(&self, rows: &[Row]) -> serde_json::Value {
        let row = self.chosen.map(|i| &rows[i]);
        json!({
            "file": self.file, "goal": self.goal, "codec": row.map(|r| &r.codec),
            "filter": row.map(|r| &r.filter), "block_size": row.map(|r| r.block_size),
            "threads": row.map(|r| r.threads), "figure": self.figure,
        })
    }
}

/// For each file: the fastest write, the smallest file written at `min_mbps` or faster, and
/// the fastest read, through `sink` when given (writes at its write speed, reads at its read
/// speed). The memcpy row is a yardstick, not a choice.
pub fn recommend(rows: &[Row], sink: Option<Sink>, min_mbps: f64) -> Vec<Recommendation> {
    let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    let through = if sink.is_some() { " through the sink" } else { "" };
    let mut out = Vec::new();
    for file in files {
        let candidates: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].file == file && rows[i].codec != "memcpy")
            .collect();
        let best_by = |key: &dyn Fn(&Row) -> f64| {
            candidates
                .iter()
                .copied()
                .max_by(|&a, &b| key(&rows[a]).total_cmp(&key(&rows[b])))
        };
        let write = best_by(&|r| r.write_mbps(sink));
        out.push(Recommendation {
            file: file.to_string(),
            goal: "fastest write".into(),
            chosen: write,
            figure: write.map_or_else(String::new, |i| {
                format!("{:.0} MB/s{through}", rows[i].write_mbps(sink))
            }),
        });
        let small = candidates
            .iter()
            .copied()
            .filter(|&i| rows[i].write_mbps(sink) >= min_mbps)
            .min_by(|&a, &b| {
                (rows[a].stored, -rows[a].write_mbps(sink))
                    .partial_cmp(&(rows[b].stored, -rows[b].write_mbps(sink)))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        out.push(Recommendation {
            file: file.to_string(),
            goal: format!("smallest file, writing >= {min_mbps:.0} MB/s"),
            chosen: small,
            figure: small.map_or_else(
                || format!("none of these writes {min_mbps:.0} MB/s{through}"),
                |i| {
                    format!(
                        "ratio {:.3}, {:.0} MB/s{through}",
                        rows[i].ratio(),
                        rows[i].write_mbps(sink)
                    )
                },
            ),
        });
        let read = best_by(&|r| r.read_mbps(sink));
        out.push(Recommendation {
            file: file.to_string(),
            goal: "fastest read".into(),
            chosen: read,
            figure: read.map_or_else(String::new, |i| format!("{:.0} MB/s{through}", rows[i].read_mbps(sink))),
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn names(list: &str) -> Vec<String> {
        expand_codecs(list).unwrap().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn codec_lists_expand_level_ranges() {
        assert_eq!(
            names("zstd:1-3,lz4,auto"),
            ["zstd:1", "zstd:2", "zstd:3", "lz4", "auto"]
        );
        assert_eq!(names("lz4hc:1-12:4"), ["lz4hc:1", "lz4hc:5", "lz4hc:9"]);
        assert_eq!(names("zstd:-3--1"), ["zstd:-3", "zstd:-2", "zstd:-1"]);
        assert_eq!(names(" zstd:5-5 , "), ["zstd:5"]);
        // Unified levels: each as `--level N` would choose it.
        let unified = expand_codecs("0-100:50").unwrap();
        let one_by_one: Vec<CodecSpec> = [0, 50, 100]
            .iter()
            .map(|&l| CodecSpec::from_options(None, Some(l)).unwrap())
            .collect();
        assert_eq!(unified, one_by_one);
        assert_eq!(
            expand_codecs("30").unwrap(),
            [CodecSpec::from_options(None, Some(30)).unwrap()]
        );
    }

    #[test]
    fn bad_ranges_name_the_item_and_the_forms() {
        for (list, needle) in [
            ("zstd:9-1", "9 is above 1"),
            ("zstd:1-9:0", "step"),
            ("zstd:1-9:x", "step"),
            ("0-100:-1", "step"),
            ("zstd:1-40", "zstd"),
            ("0-200:50", "0-100"),
            ("lz4:1-5000", "more than 1000"),
        ] {
            let err = expand_codecs(list).map(|_| ()).unwrap_err().0;
            assert!(err.contains(needle), "{list}: {err}");
        }
        let err = expand_codecs("zstd:9-1").map(|_| ()).unwrap_err().0;
        assert!(err.contains("\"zstd:9-1\"") && err.contains("lz4hc:1-12:3"), "{err}");
    }

    fn row(codec: &str, ratio: f64, compress: f64, decompress: f64) -> Row {
        synthetic_row(codec, 2, ratio, compress, decompress)
    }

    /// A measured row of `codec` (raw 100 MB) at `threads`, with `ratio` and speeds in MB/s.
    pub(crate) fn synthetic_row(codec: &str, threads: usize, ratio: f64, compress: f64, decompress: f64) -> Row {
        let raw = 100_000_000u64;
        let timing = |mbps: f64| Timing {
            wall: raw as f64 / 1e6 / mbps,
            cpu: 0.0,
        };
        Row {
            file: "data.bin".into(),
            codec: codec.into(),
            filter: "shuffle".into(),
            block_size: 1 << 20,
            threads,
            raw,
            stored: (raw as f64 / ratio) as u64,
            compress: timing(compress),
            decompress: timing(decompress),
            unverified: None,
        }
    }

    fn picks(rows: &[Row], sink: Option<Sink>, min: f64) -> Vec<String> {
        recommend(rows, sink, min)
            .iter()
            .map(|p| p.chosen.map_or("-".into(), |i| rows[i].codec.clone()))
            .collect()
    }

    #[test]
    fn recommendations_follow_the_sink() {
        let rows = [
            row("memcpy", 1.0, 10_000.0, 10_000.0),
            row("none", 1.0, 8_000.0, 8_000.0),
            row("lz4", 2.0, 700.0, 3_000.0),
            row("zstd:1", 3.0, 400.0, 1_000.0),
            row("zstd:19", 4.0, 5.0, 900.0),
        ];
        // Memory speed (no sink): the fastest codec writes and reads fastest; the smallest
        // file at >= 100 MB/s is zstd:1 (zstd:19 is too slow).
        assert_eq!(picks(&rows, None, 100.0), ["none", "zstd:1", "none"]);
        // A fast disk (2 GB/s): lz4 carries 4 GB/s of raw data through it but compresses at
        // 700; none is limited by the disk to 2000. Reads: lz4 (min(3000, 4000)).
        assert_eq!(
            picks(&rows, Some(Sink::both(2_000.0)), 100.0),
            ["none", "zstd:1", "lz4"]
        );
        // A slow network (100 MB/s): the ratio decides; zstd:19 writes at 5 MB/s only.
        assert_eq!(
            picks(&rows, Some(Sink::both(100.0)), 100.0),
            ["zstd:1", "zstd:1", "zstd:19"]
        );
        // Nothing writes 10 GB/s: said so, no choice.
        let p = recommend(&rows, None, 10_000.0);
        assert_eq!(p[1].chosen, None);
        assert!(p[1].figure.contains("none of these"), "{}", p[1].figure);
        // The memcpy yardstick is never chosen.
        assert_eq!(picks(&rows[..1], None, 1.0), ["-", "-", "-"]);
    }

    #[test]
    fn writes_and_reads_go_through_the_sink_at_their_own_speeds() {
        let rows = [
            row("memcpy", 1.0, 10_000.0, 10_000.0),
            row("none", 1.0, 8_000.0, 8_000.0),
            row("lz4", 2.0, 700.0, 3_000.0),
            row("zstd:1", 3.0, 400.0, 1_000.0),
        ];
        // A disk that writes 100 MB/s and reads 5 GB/s: writes want the ratio (zstd:1 carries
        // 300 MB/s of raw data), reads the fastest decoder (none reads at 5000, lz4 at 3000).
        let disk = Sink {
            write_mbps: 100.0,
            read_mbps: 5_000.0,
        };
        assert_eq!(picks(&rows, Some(disk), 100.0), ["zstd:1", "zstd:1", "none"]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(close(rows[3].write_mbps(Some(disk)), 300.0));
        assert!(close(rows[1].read_mbps(Some(disk)), 5_000.0));
        // The other way round: none writes fastest, zstd:1 reads fastest (3 x 100 MB/s).
        let reversed = Sink {
            write_mbps: 5_000.0,
            read_mbps: 100.0,
        };
        assert_eq!(picks(&rows, Some(reversed), 100.0), ["none", "zstd:1", "zstd:1"]);
        assert_eq!(disk.describe(), "100 MB/s write, 5000 MB/s read");
        assert_eq!(Sink::both(200.0).describe(), "200 MB/s");
        let j = rows[2].to_json(Some(disk));
        assert_eq!(
            (j["sink_mb_s"].is_null(), j["sink_write_mb_s"].as_f64()),
            (true, Some(100.0))
        );
        assert!(close(j["write_mb_s"].as_f64().unwrap(), 200.0), "{j}");
        assert!(close(j["read_mb_s"].as_f64().unwrap(), 3_000.0), "{j}");
        let j = rows[2].to_json(Some(Sink::both(50.0)));
        assert_eq!(
            (j["sink_mb_s"].as_f64(), j["sink_read_mb_s"].as_f64()),
            (Some(50.0), Some(50.0))
        );
    }

    #[test]
    fn speeds_parse_in_decimal_and_binary_units() {
        assert_eq!(parse_speed("200MB/s").unwrap(), 200.0);
        assert_eq!(parse_speed(" 1.5GB/s ").unwrap(), 1500.0);
        assert_eq!(parse_speed("200").unwrap(), 200.0);
        assert_eq!(parse_speed("500k").unwrap(), 0.5);
        assert!((parse_speed("1MiB/s").unwrap() - 1.048576).abs() < 1e-12);
        for bad in ["", "fast", "0MB/s", "-5MB/s", "10 furlongs/s", "infGB/s"] {
            assert!(parse_speed(bad).unwrap_err().0.contains("200MB/s"), "{bad}");
        }
        assert_eq!(size_option(1 << 20), "1M");
        assert_eq!(size_option(256 << 10), "256K");
        assert_eq!(size_option(1000), "1000");
    }

    #[test]
    fn cpu_time_counts_this_process_work() {
        let before = cpu_seconds();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 50 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let used = cpu_seconds() - before;
        assert!(used > 0.02 && used < 5.0, "{used}");
    }
}
