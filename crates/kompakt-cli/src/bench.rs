//! `bench`: the codec lab (crates/kompakt-lab) on the user's files: ratio and speed of codecs,
//! levels, filters, block sizes and thread counts, in memory, and what to pick for a disk.

use crate::args::BenchArgs;
use crate::human::{format_size, parse_size};
use crate::{CliError, CliResult};
use kompakt::stream::resolve_threads;
use kompakt::FilterSpec;
use kompakt_lab::{check_disk_bytes, expand_codecs, measure, measure_disk, parse_speed, recommend, Config, Row, Sink};
use serde_json::json;
use std::io::{self, Write};

impl From<kompakt_lab::Error> for CliError {
    fn from(e: kompakt_lab::Error) -> Self {
        CliError::new(e.0)
    }
}

/// A comma-separated list of `what`, each parsed by `parse`.
fn list_of<T>(list: &str, what: &str, parse: impl Fn(&str) -> CliResult<T>) -> CliResult<Vec<T>> {
    let items = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse)
        .collect::<CliResult<Vec<T>>>()?;
    if items.is_empty() {
        return Err(CliError::new(format!("no {what} given")));
    }
    Ok(items)
}

pub fn run(a: BenchArgs, quiet: bool) -> CliResult {
    let specs = expand_codecs(&a.codecs)?;
    let mut sink = a.sink_speed.as_deref().map(parse_speed).transpose()?.map(Sink::both);
    let min_speed = parse_speed(&a.min_speed)?;
    let threads = a
        .threads
        .split(',')
        .map(|t| crate::threads_arg(t).map(resolve_threads).map_err(CliError::new))
        .collect::<CliResult<Vec<_>>>()?;
    if !(a.seconds.is_finite() && (0.0..=3600.0).contains(&a.seconds)) {
        return Err(CliError::new(format!(
            "invalid --seconds {}: expected a number of seconds from 0 to 3600",
            a.seconds
        )));
    }
    let filters = list_of(&a.filter, "filter", |f| Ok(f.parse::<FilterSpec>()?))?;
    let block_sizes = list_of(&a.block_size, "block size", |b| {
        Ok(usize::try_from(parse_size(b)?).unwrap_or(usize::MAX))
    })?;
    let config = Config {
        codecs: specs,
        filters,
        block_sizes,
        threads,
        typesize: a.typesize,
        seconds: a.seconds,
        unverified: a.unverified,
    };
    let disk_bytes = parse_size(&a.disk_bytes).map_err(|e| CliError::new(format!("--disk-bytes: {e}")))?;
    check_disk_bytes(disk_bytes).map_err(|e| CliError::new(format!("--disk-bytes: {e}")))?;
    // Measured before the codecs, so that a wrong path fails at once.
    let disk = match &a.disk {
        Some(path) => {
            if !quiet {
                eprintln!(
                    "bench: measuring the disk of {} ({} written, fsync, read back)",
                    path.display(),
                    format_size(disk_bytes)
                );
            }
            let d = measure_disk(path, disk_bytes)?;
            sink = Some(d.sink());
            Some(d)
        }
        None => None,
    };
    let mut rows = Vec::new();
    for path in &a.files {
        let data = std::fs::read(path).map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))?;
        let name = path.display().to_string();
        let size = format_size(data.len() as u64);
        rows.extend(measure(&name, &data, &config, &mut |what| {
            if !quiet {
                eprintln!("bench: {name} ({size}) {what}");
            }
        })?);
    }
    if let Some(path) = &a.plot {
        let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        let title = format!("{}: ratio against speed (this machine)", names.join(", "));
        kompakt_lab::plot(&rows, &title, path)?;
    }
    let mut out = io::stdout().lock();
    let recommendations = if a.recommend {
        recommend(&rows, sink, min_speed)
    } else {
        Vec::new()
    };
    if a.json {
        let v: Vec<_> = rows.iter().map(|r| r.to_json(sink)).collect();
        let v = if a.recommend || disk.is_some() {
            let mut o = json!({"rows": v});
            if a.recommend {
                o["recommendations"] = recommendations.iter().map(|p| p.to_json(&rows)).collect();
            }
            if let Some(d) = &disk {
                o["disk"] = d.to_json();
            }
            o
        } else {
            serde_json::Value::Array(v)
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&v).expect("json"))?;
    } else {
        let unverified = |text: String| {
            if a.unverified {
                format!(" {text:>16}")
            } else {
                String::new()
            }
        };
        let through = |r: Option<&Row>| match (sink, r) {
            (None, _) => String::new(),
            (Some(_), None) => format!(" {:>12} {:>12}", "write MB/s", "read MB/s"),
            (Some(_), Some(r)) => format!(" {:>12.1} {:>12.1}", r.write_mbps(sink), r.read_mbps(sink)),
        };
        if let Some(d) = &disk {
            writeln!(out, "{}", d.describe())?;
        }
        match sink.map(|s| (s, s.one_speed())) {
            Some((_, Some(mbps))) => writeln!(out, "write and read MB/s: through a sink of {mbps:.0} MB/s")?,
            Some((s, None)) => writeln!(
                out,
                "write and read MB/s: through a sink writing {:.0} MB/s and reading {:.0} MB/s",
                s.write_mbps, s.read_mbps
            )?,
            None => {}
        }
        writeln!(
            out,
            "{:<28} {:<12} {:<10} {:>9} {:>7} {:>12} {:>8} {:>14} {:>14}{}{}",
            "file",
            "codec",
            "filter",
            "block",
            "threads",
            "compressed",
            "ratio",
            "compress MB/s",
            "decompr. MB/s",
            unverified("unverified MB/s".into()),
            through(None)
        )?;
        for r in &rows {
            writeln!(
                out,
                "{:<28} {:<12} {:<10} {:>9} {:>7} {:>12} {:>8.3} {:>14.1} {:>14.1}{}{}",
                truncate(&r.file, 28),
                r.codec,
                r.filter,
                format_size(r.block_size as u64),
                r.threads,
                format_size(r.stored),
                r.raw as f64 / r.stored.max(1) as f64,
                r.compress.mbps(r.raw),
                r.decompress.mbps(r.raw),
                unverified(
                    r.unverified
                        .map_or_else(String::new, |u| format!("{:.1}", u.mbps(r.raw)))
                ),
                through(Some(r))
            )?;
        }
        for (i, p) in recommendations.iter().enumerate() {
            if i == 0 || recommendations[i - 1].file != p.file {
                let sink_text = sink.map_or_else(|| "in memory".into(), |s| format!("through {}", s.describe()));
                writeln!(out, "\nrecommended for {} ({sink_text}):", p.file)?;
            }
            let options = p.chosen.map_or_else(|| "-".to_string(), |i| rows[i].options());
            writeln!(out, "  {:<36} {options}: {}", p.goal, p.figure)?;
        }
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let tail: String = s
            .chars()
            .rev()
            .take(n - 1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    }
}
