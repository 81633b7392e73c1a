//! `inspect` and `verify`.

use crate::args::{InspectArgs, VerifyArgs};
use crate::files::open_reader;
use crate::human::format_size;
use crate::{progress_bar, CliError, CliResult};
use kompakt::stream::{decode_sequential_with, filter_label, BlockEntry, StreamSummary};
use kompakt::{ReadOptions, Reader};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" ")
}

fn ratio(raw: u64, stored: u64) -> f64 {
    StreamSummary {
        raw,
        stored,
        ..Default::default()
    }
    .ratio()
}

pub fn inspect(a: InspectArgs) -> CliResult {
    let mut out = io::stdout().lock();
    let mut reader = open_reader(&a.file, 1)?;
    let streams = reader.summary();
    let (major, minor) = reader.version();
    // Each block names its dictionary: read those ids (8 bytes a block) for 2.0 files only.
    let dictionaries: Vec<String> = match major {
        1 => Vec::new(),
        _ => reader
            .dictionaries_needed(16)
            .map_err(|e| CliError::from(e).context(a.file.display()))?
            .iter()
            .map(ToString::to_string)
            .collect(),
    };
    let raw: u64 = streams.iter().map(|s| s.raw).sum();
    if a.json {
        let mut v = json!({
            "file": a.file.display().to_string(),
            "format_version": format!("{major}.{minor}"),
            "file_size": reader.file_len(),
            "raw_size": raw,
            "ratio": ratio(raw, reader.file_len()),
            "metadata_size": reader.metadata().len(),
            "dictionaries": dictionaries,
            "streams": streams.iter().enumerate().map(|(i, s)| json!({
                "id": i, "raw_size": s.raw, "stored_size": s.stored, "blocks": s.blocks,
                "ratio": s.ratio(), "codecs": s.codecs, "filters": s.filters,
            })).collect::<Vec<_>>(),
        });
        if a.blocks {
            v["blocks"] = Value::Array(reader.blocks().iter().map(block_json).collect());
        }
        if kompakt_table::is_table_metadata(reader.metadata()) {
            v["table"] = crate::table::inspect_json(&a.file)?;
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v).expect("json"))?;
        return Ok(());
    }
    writeln!(out, "file      {}", a.file.display())?;
    writeln!(out, "format    {major}.{minor}")?;
    if !dictionaries.is_empty() {
        writeln!(out, "needs     zstd dictionary {}", dictionaries.join(", "))?;
    }
    writeln!(
        out,
        "size      {} ({} bytes)",
        format_size(reader.file_len()),
        reader.file_len()
    )?;
    writeln!(
        out,
        "raw       {} ({} bytes), ratio {:.3}",
        format_size(raw),
        raw,
        ratio(raw, reader.file_len())
    )?;
    writeln!(out, "metadata  {}", format_size(reader.metadata().len() as u64))?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>6}  {:>10}  {:>10}  {:>7}  {:>7}  {:<24}  filters",
        "stream", "raw", "stored", "ratio", "blocks", "codecs"
    )?;
    for (i, s) in streams.iter().enumerate() {
        writeln!(
            out,
            "{:>6}  {:>10}  {:>10}  {:>7.3}  {:>7}  {:<24}  {}",
            i,
            format_size(s.raw),
            format_size(s.stored),
            s.ratio(),
            s.blocks,
            counts(&s.codecs),
            counts(&s.filters)
        )?;
    }
    if kompakt_table::is_table_metadata(reader.metadata()) {
        crate::table::inspect_section(&a.file, &mut out)?;
    }
    if a.blocks {
        writeln!(out)?;
        writeln!(
            out,
            "{:>7}  {:>6}  {:>12}  {:>12}  {:>9}  {:>9}  {:<5}  filters",
            "block", "stream", "file offset", "raw offset", "raw", "stored", "codec"
        )?;
        for (i, b) in reader.blocks().iter().enumerate() {
            writeln!(
                out,
                "{:>7}  {:>6}  {:>12}  {:>12}  {:>9}  {:>9}  {:<5}  {}",
                i,
                b.header.stream,
                b.file_offset,
                b.raw_offset,
                b.header.raw_len,
                b.header.stored_len,
                b.header.codec.name(),
                filter_label(&b.header)
            )?;
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
/// What `verify` found in a good file: its blocks, raw bytes and, for a table, its rows and
/// whether it has sort keys and statistics (then checked).
struct Verified {
    blocks: u64,
    raw: u64,
    table: Option<(u64, bool, bool)>,
}

pub fn verify(a: VerifyArgs, quiet: bool) -> CliResult<u8> {
    let mut out = io::stdout().lock();
    let mut worst = 0u8;
    let dictionaries = crate::files::load_dictionaries(&a.dictionary)?;
    for path in &a.files {
        let opts = ReadOptions::default().threads(a.threads);
        let result: Result<Verified, kompakt::Error> = if path.as_os_str() == "-" {
            let mut raw = 0u64;
            decode_sequential_with(io::stdin().lock(), &opts, &dictionaries, |_, d| {
                raw += d.len() as u64;
                Ok(())
            })
            .map(|f| Verified {
                blocks: f.blocks.len() as u64,
                raw,
                table: None,
            })
        } else {
            // A file that cannot be opened is reported like a damaged one, and the rest are
            // still checked.
            let bar = progress_bar(None, quiet, "verifying");
            let r = crate::source::open_source(path)
                .and_then(|file| Reader::at(file, opts))
                .and_then(|mut r| {
                    r.set_dictionaries(dictionaries.clone());
                    let total: u64 = r.streams().iter().map(|s| s.raw_len).sum();
                    bar.set_length(total);
                    let report = r.verify(&mut |n| bar.set_position(n))?;
                    Ok((report, kompakt_table::is_table_metadata(r.metadata())))
                })
                .and_then(|(report, table)| {
                    // Checksums hold; a table's pages must also decode, and its rows follow
                    // its sort keys.
                    let mut rows = None;
                    if table {
                        let t = crate::source::open_table(path)?;
                        bar.set_position(0);
                        bar.set_length(t.num_rows());
                        let n = t.verify_rows(a.threads, &mut |n| bar.set_position(n))?;
                        rows = Some((n, !t.sorted_by().is_empty(), t.has_statistics()));
                    }
                    Ok((report, rows))
                });
            bar.finish_and_clear();
            r.map(|(rep, table)| Verified {
                blocks: rep.blocks,
                raw: rep.raw_bytes,
                table,
            })
        };
        match result {
            Ok(Verified {
                blocks,
                raw,
                table: None,
            }) => writeln!(
                out,
                "{}: OK ({blocks} blocks, {} raw)",
                path.display(),
                format_size(raw)
            )?,
            Ok(Verified {
                blocks,
                raw,
                table: Some((rows, sorted, statistics)),
            }) => writeln!(
                out,
                "{}: OK ({blocks} blocks, {} raw; table of {rows} rows, every page decodes{})",
                path.display(),
                format_size(raw),
                match (sorted, statistics) {
                    (true, true) => ", rows in sort-key order, statistics hold",
                    (true, false) => ", rows in sort-key order",
                    (false, true) => ", statistics hold",
                    (false, false) => "",
                }
            )?,
            // Not kompakt at all is not damage: said as such, still exit code 1 (not good).
            Err(e @ kompakt::Error::BadMagic { what: "header", .. }) => {
                writeln!(out, "{}: NOT KOMPAKT: {e}", path.display())?;
                worst = worst.max(1);
            }
            Err(e) if e.is_corruption() => {
                writeln!(out, "{}: DAMAGED: {e}", path.display())?;
                worst = worst.max(1);
            }
            Err(e) => {
                writeln!(out, "{}: ERROR: {e}", path.display())?;
                worst = 2;
            }
        }
    }
    Ok(worst)
}
