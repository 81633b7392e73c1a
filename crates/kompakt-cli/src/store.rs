//! `kompakt store ...`: a `kompakt.Store` (a folder, or an `s3://` URL) from the command line.

use crate::args::{
    RemoteStoreFlags, StoreArgs, StoreCommand, StoreDictionaryArgs, StoreGetArgs, StoreInfoArgs, StoreLsArgs,
    StorePathArgs, StorePutArgs,
};
use crate::human::format_size;
use crate::{progress_bar, CliError, CliResult};
use kompakt::Reader;
use kompakt_fs::AtomicFile;
use kompakt_store::ContentStore;
use std::io::{self, Read, Write};
use std::path::Path;

pub fn run(a: StoreArgs, quiet: bool) -> CliResult<u8> {
    let flags = &a.remote;
    match a.command {
        StoreCommand::Ls(a) => ls(a, flags).map(|_| 0),
        StoreCommand::Get(a) => get(a, flags).map(|_| 0),
        StoreCommand::Put(a) => put(a, flags, quiet).map(|_| 0),
        StoreCommand::Info(a) => info(a, flags).map(|_| 0),
        StoreCommand::Gc(a) => gc(a, flags).map(|_| 0),
        StoreCommand::Verify(a) => verify(a, flags, quiet),
        StoreCommand::Dictionary(a) => dictionary(a, flags).map(|_| 0),
    }
}

/// Opens an existing store at `path` (a folder or a URL).
fn open(path: &Path, flags: &RemoteStoreFlags) -> CliResult<Box<dyn ContentStore>> {
    open_with(
        path,
        flags,
        kompakt_api::store::StoreArgs {
            create: Some(false),
            ..Default::default()
        },
    )
}

/// Opens the store at `path` with `args` and the flags of stores on object storage; every
/// option is checked by kompakt-api, as for Python, C and R.
fn open_with(
    path: &Path,
    flags: &RemoteStoreFlags,
    args: kompakt_api::store::StoreArgs<'_>,
) -> CliResult<Box<dyn ContentStore>> {
    let in_store = |e: CliError| e.context(path.display());
    let size = |flag: &str, text: &Option<String>| -> CliResult<Option<f64>> {
        match text.as_deref() {
            None => Ok(None),
            Some("none") => Ok(Some(f64::INFINITY)),
            Some(t) => crate::human::parse_size(t)
                .map(|n| Some(n as f64))
                .map_err(|e| CliError::new(format!("--{flag}: {e}"))),
        }
    };
    let args = kompakt_api::store::StoreArgs {
        cache_dir: flags.cache_dir.clone(),
        cache_limit: size("cache-limit", &flags.cache_limit)?,
        grace_seconds: flags.grace,
        multipart_threshold: size("multipart-threshold", &flags.multipart_threshold)?.map(|n| n as i64),
        ..args
    };
    let location = crate::source::location(path).map_err(|e| in_store(e.into()))?;
    kompakt_api::store::open(&location, &args).map_err(|e| in_store(e.into()))
}

fn ls(a: StoreLsArgs, flags: &RemoteStoreFlags) -> CliResult {
    let store = open(&a.store, flags)?;
    let namespace = (!a.all).then_some(a.namespace.as_str());
    let mut out = io::stdout().lock();
    for e in store.entries(namespace)? {
        let shown = if a.all {
            format!("{}\t{}", e.namespace, e.key)
        } else {
            e.key
        };
        if a.long {
            let (raw, stored) = (format_size(e.raw_size), format_size(e.stored_size));
            writeln!(out, "{shown}\t{}\t{raw}\t{stored}", e.hash)?;
        } else {
            writeln!(out, "{shown}")?;
        }
    }
    Ok(())
}

fn get(a: StoreGetArgs, flags: &RemoteStoreFlags) -> CliResult {
    let store = open(&a.store, flags)?;
    let Some(object) = store.get(&a.namespace, &a.key)? else {
        return Err(CliError::new(format!(
            "no key {:?} in namespace {:?} of {}",
            a.key,
            a.namespace,
            a.store.display()
        )));
    };
    // Checked before any output is made: a refusal leaves nothing behind.
    let mut decoded = None;
    let mut stored = None;
    if a.decompress {
        let mut reader = Reader::new(object.source, store.local().read_options())?;
        reader.set_dictionaries(object.dictionaries);
        if reader.streams().len() > 1 {
            return Err(CliError::new(format!(
                "key {:?} holds {} streams (a value saved from Python or R: its pickle or R \
                 serialization and its buffers), and --decompress writes the data of a one-stream \
                 value; read it with kompakt.Store(...)[key] in Python or the store's R driver, or \
                 get the kompakt file itself (without --decompress)",
                a.key,
                reader.streams().len()
            )));
        }
        decoded = Some(reader);
    } else {
        stored = Some(object.source);
    }
    let write = |out: &mut dyn Write| -> CliResult {
        if let Some(mut reader) = decoded {
            if !reader.streams().is_empty() {
                io::copy(&mut reader.stream_reader(0)?, out)?;
            }
        } else if let Some(mut source) = stored {
            io::copy(&mut source, out)?;
        }
        Ok(())
    };
    match a.output.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            let mut file = AtomicFile::create_with(path, crate::files::durability())
                .map_err(|e| CliError::from(e).context(path.display()))?;
            write(&mut file)?;
            file.commit()?;
        }
        None => {
            let mut out = io::stdout().lock();
            write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}

fn put(a: StorePutArgs, flags: &RemoteStoreFlags, quiet: bool) -> CliResult {
    let adapt = match (a.adapt, a.no_adapt) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let store = open_with(
        &a.store,
        flags,
        kompakt_api::store::StoreArgs {
            adapt,
            ..Default::default()
        },
    )?;
    let (mut input, len): (Box<dyn Read>, Option<u64>) = if a.input.as_os_str() == "-" {
        (Box::new(io::stdin().lock()), None)
    } else {
        let file = kompakt_fs::open_for_reading(&a.input).map_err(|e| CliError::from(e).context(a.input.display()))?;
        let len = file.metadata().ok().map(|m| m.len());
        (Box::new(file), len)
    };
    let opts = store.local().write_options(None);
    let mut writer = store.local().writer(opts)?;
    let stream = writer.add_stream(None)?;
    let bar = progress_bar(len, quiet || len.is_none_or(|n| n < 64 << 20), "storing");
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        writer.write(stream, &buf[..n])?;
        bar.inc(n as u64);
    }
    // The stream's last blocks are written as it ends: count its raw blocks after that.
    writer.finish_stream(stream)?;
    let paced_raw = writer.paced_raw_blocks();
    let writer_adapted = writer.adapts();
    let blocks = writer.bytes_in().div_ceil(opts.block_size as u64);
    let object = store.local().finish(writer)?;
    let hash = object.hash();
    store.commit_many(&a.namespace, vec![(a.key.clone(), object)])?;
    bar.finish_and_clear();
    if !quiet {
        eprintln!("{}: {} -> {hash}", a.store.display(), a.key);
        if a.adapt {
            eprintln!("--adapt: {paced_raw} of {blocks} blocks stored raw while the disk waited");
        } else if writer_adapted && paced_raw > 0 {
            eprintln!(
                "{paced_raw} of {blocks} blocks stored raw while the disk waited (--no-adapt compresses them all)"
            );
        }
    }
    Ok(())
}

fn info(a: StoreInfoArgs, flags: &RemoteStoreFlags) -> CliResult {
    let store = open(&a.store, flags)?;
    let summary = store.summary()?;
    let config = store.local().config();
    let keys = summary.keys();
    // A folder is named as given; a URL as the store spells it.
    let name = match &summary.local {
        Some(_) => a.store.display().to_string(),
        None => summary.location.clone(),
    };
    let mut out = io::stdout().lock();
    if a.json {
        let namespaces: serde_json::Map<String, serde_json::Value> = summary
            .namespaces
            .iter()
            .map(|(n, c)| (n.clone(), (*c).into()))
            .collect();
        let mut v = serde_json::json!({
            "path": name,
            "version": summary.layout_version,
            "codec": config.codec.to_string(),
            "namespaces": namespaces,
            "keys": keys,
            "objects": summary.objects,
            "stored_bytes": summary.stored_bytes,
            "dictionaries": summary.dictionaries,
            "dictionary_bytes": summary.dictionary_bytes,
        });
        if let Some(dir) = &summary.cache_dir {
            v["cache_dir"] = serde_json::json!(dir);
        }
        if let Some(info) = &summary.local {
            for (field, value) in [
                ("hash", serde_json::json!(config.hash)),
                ("key_encoding", serde_json::json!(config.key_encoding)),
                ("inline_objects", info.inline_objects.into()),
                ("inline_bytes", info.inline_bytes.into()),
                ("file_objects", info.file_objects.into()),
                ("file_bytes", info.file_bytes.into()),
                ("raw_bytes", info.raw_bytes.into()),
                ("index_bytes", info.index_bytes.into()),
            ] {
                v[field] = value;
            }
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v).expect("JSON value"))?;
        return Ok(());
    }
    writeln!(out, "store:     {name}")?;
    match &summary.cache_dir {
        Some(dir) => writeln!(
            out,
            "layout:    version {} on object storage, local cache {}",
            summary.layout_version,
            dir.display()
        )?,
        None => writeln!(
            out,
            "layout:    version {}, objects addressed by {}, default codec {}",
            summary.layout_version, config.hash, config.codec
        )?,
    }
    writeln!(out, "keys:      {keys} in {} namespaces", summary.namespaces.len())?;
    for (ns, n) in &summary.namespaces {
        writeln!(out, "  {ns}: {n}")?;
    }
    match &summary.local {
        None => writeln!(
            out,
            "objects:   {} ({} stored)",
            summary.objects,
            format_size(summary.stored_bytes)
        )?,
        Some(info) => {
            let ratio = if summary.stored_bytes == 0 {
                1.0
            } else {
                info.raw_bytes as f64 / summary.stored_bytes as f64
            };
            writeln!(
                out,
                "objects:   {} ({} in the index, {}; {} files, {})",
                summary.objects,
                info.inline_objects,
                format_size(info.inline_bytes),
                info.file_objects,
                format_size(info.file_bytes)
            )?;
            writeln!(
                out,
                "size:      {} stored, {} raw, ratio {ratio:.2}; index files {}",
                format_size(summary.stored_bytes),
                format_size(info.raw_bytes),
                format_size(info.index_bytes)
            )?;
        }
    }
    dictionaries_line(&mut out, summary.dictionaries, summary.dictionary_bytes)
}

fn dictionary(a: StoreDictionaryArgs, flags: &RemoteStoreFlags) -> CliResult {
    let store = open(&a.store, flags)?;
    let Some(dictionary) = store.dictionary(&a.namespace)? else {
        return Err(CliError::new(format!(
            "namespace {:?} of {} has no dictionary (a store adopts one when its small values gain from it)",
            a.namespace,
            a.store.display()
        )));
    };
    let mut file = AtomicFile::create_with(&a.output, crate::files::durability())
        .map_err(|e| CliError::from(e).context(a.output.display()))?;
    file.write_all(dictionary.bytes())?;
    file.commit()?;
    Ok(())
}

fn gc(a: StorePathArgs, flags: &RemoteStoreFlags) -> CliResult {
    let store = open(&a.store, flags)?;
    let r = store.gc()?;
    for problem in &r.problems {
        eprintln!("kompakt: warning: {problem}");
    }
    writeln!(
        io::stdout().lock(),
        "removed {} unreferenced objects, {} orphan files, {} temporary files, {} unused dictionaries; freed {}",
        r.objects,
        r.orphan_files,
        r.temp_files,
        r.dictionaries,
        format_size(r.bytes)
    )?;
    Ok(())
}

fn verify(a: StorePathArgs, flags: &RemoteStoreFlags, quiet: bool) -> CliResult<u8> {
    let store = open(&a.store, flags)?;
    // A folder store knows its bytes from its index; a remote one would list every object.
    let total = match store.cache_dir() {
        None => store.local().info().ok().map(|i| i.inline_bytes + i.file_bytes),
        Some(_) => None,
    };
    let bar = progress_bar(total, quiet, "verifying");
    let report = store.verify(&mut |n| bar.inc(n))?;
    bar.finish_and_clear();
    let mut out = io::stdout().lock();
    for p in &report.problems {
        writeln!(out, "DAMAGED: {p}")?;
    }
    let verdict = if report.problems.is_empty() { "OK" } else { "DAMAGED" };
    writeln!(
        out,
        "{}: {verdict} ({} objects, {} keys, {} raw)",
        a.store.display(),
        report.objects,
        report.keys,
        format_size(report.raw_bytes)
    )?;
    Ok(if report.problems.is_empty() { 0 } else { 1 })
}

/// `kompakt store info` of a store on object storage: keys, objects, bytes on the server.
/// `kompakt store info`'s line on dictionaries, when the store holds any.
fn dictionaries_line(out: &mut impl Write, count: u64, bytes: u64) -> CliResult {
    if count > 0 {
        writeln!(
            out,
            "dictionaries: {count} ({}), trained for namespaces of small values",
            format_size(bytes)
        )?;
    }
    Ok(())
}
