//! `inspect` and `verify`.

use crate::args::{InspectArgs, VerifyArgs};
use crate::files::open_reader;
use crate::human::format_size;
use crate::{progress_bar, CliError, CliResult};
use kompakt::stream::{decode_sequential, BlockEntry};
use kompakt::{ReadOptions, Reader};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;

/// Per-stream summary for `inspect`.
#[derive(Default)]
struct StreamSummary {
    raw: u64,
    stored: u64,
    blocks: u64,
    codecs: BTreeMap<String, u64>,
    filters: BTreeMap<String, u64>,
}

fn filter_label(b: &BlockEntry) -> String {
    if b.header.filters.is_none() {
        "none".into()
    } else {
        format!("{}/{}", b.header.filters, b.header.typesize)
    }
}

fn summarize(reader: &Reader<File>) -> Vec<StreamSummary> {
    let mut out: Vec<StreamSummary> = reader
        .streams()
        .iter()
        .map(|s| StreamSummary {
            raw: s.raw_len,
            ..Default::default()
        })
        .collect();
    for b in reader.blocks() {
        let s = &mut out[b.header.stream as usize];
        s.stored += u64::from(b.header.stored_len);
        s.blocks += 1;
        *s.codecs.entry(b.header.codec.name().to_string()).or_default() += 1;
        *s.filters.entry(filter_label(b)).or_default() += 1;
    }
    out
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" ")
}

fn ratio(raw: u64, stored: u64) -> f64 {
    if stored == 0 {
        1.0
    } else {
        raw as f64 / stored as f64
    }
}

pub fn inspect(a: InspectArgs) -> CliResult {
    let reader = open_reader(&a.file, 1)?;
    let streams = summarize(&reader);
    let (major, minor) = reader.version();
    let raw: u64 = streams.iter().map(|s| s.raw).sum();
    if a.json {
        let mut v = json!({
            "file": a.file.display().to_string(),
            "format_version": format!("{major}.{minor}"),
            "file_size": reader.file_len(),
            "raw_size": raw,
            "ratio": ratio(raw, reader.file_len()),
            "metadata_size": reader.metadata().len(),
            "streams": streams.iter().enumerate().map(|(i, s)| json!({
                "id": i, "raw_size": s.raw, "stored_size": s.stored, "blocks": s.blocks,
                "ratio": ratio(s.raw, s.stored), "codecs": s.codecs, "filters": s.filters,
            })).collect::<Vec<_>>(),
        });
        if a.blocks {
            v["blocks"] = Value::Array(reader.blocks().iter().map(block_json).collect());
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        return Ok(());
    }
    println!("file      {}", a.file.display());
    println!("format    {major}.{minor}");
    println!(
        "size      {} ({} bytes)",
        format_size(reader.file_len()),
        reader.file_len()
    );
    println!(
        "raw       {} ({} bytes), ratio {:.3}",
        format_size(raw),
        raw,
        ratio(raw, reader.file_len())
    );
    println!("metadata  {}", format_size(reader.metadata().len() as u64));
    println!();
    println!(
        "{:>6}  {:>10}  {:>10}  {:>7}  {:>7}  {:<24}  filters",
        "stream", "raw", "stored", "ratio", "blocks", "codecs"
    );
    for (i, s) in streams.iter().enumerate() {
        println!(
            "{:>6}  {:>10}  {:>10}  {:>7.3}  {:>7}  {:<24}  {}",
            i,
            format_size(s.raw),
            format_size(s.stored),
            ratio(s.raw, s.stored),
            s.blocks,
            counts(&s.codecs),
            counts(&s.filters)
        );
    }
    if a.blocks {
        println!();
        println!(
            "{:>7}  {:>6}  {:>12}  {:>12}  {:>9}  {:>9}  {:<5}  filters",
            "block", "stream", "file offset", "raw offset", "raw", "stored", "codec"
        );
        for (i, b) in reader.blocks().iter().enumerate() {
            println!(
                "{:>7}  {:>6}  {:>12}  {:>12}  {:>9}  {:>9}  {:<5}  {}",
                i,
                b.header.stream,
                b.file_offset,
                b.raw_offset,
                b.header.raw_len,
                b.header.stored_len,
                b.header.codec.name(),
                filter_label(b)
            );
        }
    }
    Ok(())
}

fn block_json(b: &BlockEntry) -> Value {
    json!({
        "stream": b.header.stream, "file_offset": b.file_offset, "raw_offset": b.raw_offset,
        "raw_size": b.header.raw_len, "stored_size": b.header.stored_len,
        "codec": b.header.codec.name(), "filters": b.header.filters.to_string(), "typesize": b.header.typesize,
    })
}

/// Exit code 0 when every file is good, 1 when any is damaged, 2 when one cannot be read.
pub fn verify(a: VerifyArgs, quiet: bool) -> CliResult<u8> {
    let mut worst = 0u8;
    for path in &a.files {
        let opts = ReadOptions::default().threads(a.threads);
        let result: Result<(u64, u64), kompakt::Error> = if path.as_os_str() == "-" {
            let mut raw = 0u64;
            decode_sequential(io::stdin().lock(), &opts, |_, d| {
                raw += d.len() as u64;
                Ok(())
            })
            .map(|f| (f.blocks.len() as u64, raw))
        } else {
            let file = File::open(path).map_err(|e| CliError::new(format!("cannot open {}: {e}", path.display())))?;
            let len = file.metadata()?.len();
            let bar = progress_bar(Some(len), quiet, "verifying");
            let r = Reader::new(file, opts).and_then(|mut r| {
                let total: u64 = r.streams().iter().map(|s| s.raw_len).sum();
                bar.set_length(total);
                r.verify(&mut |n| bar.set_position(n))
            });
            bar.finish_and_clear();
            r.map(|rep| (rep.blocks, rep.raw_bytes))
        };
        match result {
            Ok((blocks, raw)) => println!("{}: OK ({blocks} blocks, {} raw)", path.display(), format_size(raw)),
            Err(e) if e.is_corruption() => {
                println!("{}: DAMAGED: {e}", path.display());
                worst = worst.max(1);
            }
            Err(e) => {
                println!("{}: ERROR: {e}", path.display());
                worst = 2;
            }
        }
    }
    Ok(worst)
}
