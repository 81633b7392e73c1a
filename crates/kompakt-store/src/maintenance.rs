//! Looking after a store: its totals, collecting garbage, checking every object, keeping it
//! under a size.

use crate::{checked_dictionary, index, objects, Error, ObjectSource, Result, Store, INDEX_FILE, TEMP_MIN_AGE};
use index::ObjectRow;
use kompakt::codec::{Dictionaries, DictionaryId};
use kompakt::stream::{ContentHash, ContentHasher, ReadOptions, Reader};
use rusqlite::TransactionBehavior;
use std::collections::HashMap;
use std::fs;
use std::io::{self, Cursor};
use std::path::{Path, PathBuf};

/// Totals of a store, as `info()` and `kompakt store info` report them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreInfo {
    /// Namespaces with their key counts.
    pub namespaces: Vec<(String, u64)>,
    /// Objects kept inside the index: object rows, and values held in key rows (counted once
    /// per key).
    pub inline_objects: u64,
    /// Their stored bytes.
    pub inline_bytes: u64,
    /// Objects kept as files.
    pub file_objects: u64,
    /// Their stored bytes.
    pub file_bytes: u64,
    /// Raw bytes of all objects.
    pub raw_bytes: u64,
    /// Size of the index files (database and write-ahead log).
    pub index_bytes: u64,
    /// zstd dictionaries held (trained for namespaces of small values).
    pub dictionaries: u64,
    /// Their bytes.
    pub dictionary_bytes: u64,
}

/// What [`Store::reduce_size`] removed, and what is left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReduceReport {
    /// Keys removed.
    pub keys: u64,
    /// What the collection after removed: the objects of those keys, and any other garbage.
    pub gc: GcReport,
    /// Stored bytes of the object files left.
    pub file_bytes: u64,
}

/// What [`Store::gc`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Objects no key pointed at.
    pub objects: u64,
    /// Their stored bytes.
    pub bytes: u64,
    /// Object files the index did not know (left by a writer that died before committing).
    pub orphan_files: u64,
    /// Temporary files of writers that died.
    pub temp_files: u64,
    /// Dictionaries no value needed and no namespace with keys uses (their bytes are in
    /// `bytes`).
    pub dictionaries: u64,
    /// What gc passed over and why (a damaged key record on object storage): the rest of the
    /// store was collected. Objects only such records could name are not kept for them.
    pub problems: Vec<String>,
}

/// What [`Store::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreVerifyReport {
    /// Objects read back completely (a value held in a key row counts once per key).
    pub objects: u64,
    /// Their raw bytes.
    pub raw_bytes: u64,
    /// Keys checked.
    pub keys: u64,
    /// Dictionaries checked (their bytes against their id).
    pub dictionaries: u64,
    /// Every problem found, one line each; empty when the store is sound.
    pub problems: Vec<String>,
}

impl StoreVerifyReport {
    /// Counts an object read back completely, or records its problem under `what`.
    fn record(
        &mut self,
        checked: std::result::Result<(), String>,
        raw: u64,
        stored: u64,
        progress: &mut dyn FnMut(u64),
        what: impl FnOnce() -> String,
    ) {
        match checked {
            Ok(()) => {
                self.objects += 1;
                self.raw_bytes += raw;
                progress(stored);
            }
            Err(problem) => self.problems.push(format!("{}: {problem}", what())),
        }
    }
}

impl Store {
    /// Removes the keys of the least recently used object files (by modification time, see
    /// [`touch`](Store::touch)) until those left hold at most `max_bytes`, then collects them
    /// ([`gc`](Store::gc)). Values kept in the index are small and stay. A key repointed by
    /// another writer meanwhile is left alone.
    pub fn reduce_size(&self, max_bytes: u64) -> Result<ReduceReport> {
        let mut report = ReduceReport::default();
        let mut objects: HashMap<ContentHash, (u64, Vec<(String, String)>)> = HashMap::new();
        for e in self.entries(None)? {
            let (_, keys) = objects.entry(e.hash).or_insert((e.stored_size, Vec::new()));
            keys.push((e.namespace, e.key));
        }
        let mut files: Vec<(std::time::SystemTime, ContentHash, u64)> = Vec::new();
        for (hash, (stored, _)) in &objects {
            // Inline objects have no file; a file gone (collected meanwhile) counts for nothing.
            if let Ok(meta) = fs::metadata(objects::object_path(&self.root, *hash)) {
                files.push((meta.modified().unwrap_or(std::time::UNIX_EPOCH), *hash, *stored));
            }
        }
        files.sort();
        let mut total: u64 = files.iter().map(|f| f.2).sum();
        {
            let mut conn = self.write()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for (_, hash, stored) in &files {
                if total <= max_bytes {
                    break;
                }
                for (namespace, key) in &objects[hash].1 {
                    report.keys += u64::from(index::delete_key_if(&tx, namespace, key, *hash)?);
                }
                total -= stored;
            }
            tx.commit()?;
        }
        report.gc = self.gc()?;
        report.file_bytes = self.info()?.file_bytes;
        Ok(report)
    }

    /// Counts and sizes.
    pub fn info(&self) -> Result<StoreInfo> {
        let conn = self.read()?;
        // One read transaction: a value moving between a key row and the object table is
        // counted once.
        let conn = conn.unchecked_transaction()?;
        let mut info = StoreInfo {
            namespaces: index::namespaces(&conn)?,
            ..StoreInfo::default()
        };
        let (count, raw, stored) = index::key_values_summary(&conn)?;
        info.inline_objects += count;
        info.inline_bytes += stored;
        info.raw_bytes += raw;
        for object in index::objects(&conn)? {
            info.raw_bytes += object.raw_size;
            if object.inline {
                info.inline_objects += 1;
                info.inline_bytes += object.stored_size;
            } else {
                info.file_objects += 1;
                info.file_bytes += object.stored_size;
            }
        }
        (info.dictionaries, info.dictionary_bytes) = index::dictionaries_summary(&conn)?;
        for name in [INDEX_FILE.to_string(), format!("{INDEX_FILE}-wal")] {
            info.index_bytes += fs::metadata(self.root.join(name)).map_or(0, |m| m.len());
        }
        Ok(info)
    }

    /// Removes objects no key points at, object files the index does not know, and temporary
    /// files of writers that died. Safe while other processes read and write: it runs inside
    /// one write transaction, and readers holding an object open keep reading it.
    pub fn gc(&self) -> Result<GcReport> {
        let mut report = GcReport::default();
        // gc removes files by the names it builds: a link in the layout would make it remove
        // files elsewhere. Such a store is refused (and removal never follows one anyway).
        for folder in ["objects", "tmp"] {
            let path = self.root.join(folder);
            if fs::symlink_metadata(&path).is_ok() && !kompakt_fs::is_real_folder(&path) {
                return Err(Error::Store(format!(
                    "{} is a symbolic link or not a folder: gc never removes files through one; \
                     make it a folder of the store",
                    path.display()
                )));
            }
        }
        // Listed before taking the write lock (a large store has many files); a file renamed
        // in after this list was committed with its row under the lock, so it is kept below.
        let mut candidates = Vec::new();
        for dir in read_dir_sorted(&self.root.join("objects"))? {
            if !kompakt_fs::is_real_folder(&dir) {
                continue;
            }
            for file in read_dir_sorted(&dir)? {
                let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if let Some(h) = objects::hash_of_file_name(name) {
                    if objects::object_path(&self.root, h) == file {
                        candidates.push((h, file));
                    }
                }
            }
        }
        {
            let mut conn = self.write()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            index::merge_version_1_keys(&tx)?;
            let mut collected = std::collections::HashSet::new();
            for (hash, stored, inline) in index::delete_unreferenced(&tx)? {
                report.objects += 1;
                report.bytes += stored;
                if !inline {
                    self.remove_if_present(&objects::object_path(&self.root, hash))?;
                    collected.insert(hash);
                }
            }
            for (hash, file) in candidates {
                if !collected.contains(&hash) && index::object_kind(&tx, hash)? != Some(false) {
                    report.orphan_files += 1;
                    report.bytes += fs::metadata(&file).map_or(0, |m| m.len());
                    self.remove_if_present(&file)?;
                }
            }
            for (_, bytes) in index::delete_unused_dictionaries(&tx)? {
                report.dictionaries += 1;
                report.bytes += bytes;
            }
            tx.commit()?;
            // Frees one page per step: step until done.
            let mut vacuum = conn.prepare("PRAGMA incremental_vacuum")?;
            let mut rows = vacuum.query([])?;
            while rows.next()?.is_some() {}
        }
        for file in read_dir_sorted(&self.root.join("tmp"))? {
            if kompakt_fs::abandoned(&file, TEMP_MIN_AGE) {
                report.temp_files += 1;
                self.remove_if_present(&file)?;
            }
        }
        Ok(report)
    }

    /// Removes `path`, a file below the store's folder, following no symbolic link below it.
    fn remove_if_present(&self, path: &Path) -> Result<()> {
        let relative = path.strip_prefix(&self.root).map_err(|_| {
            Error::Store(format!(
                "{} is not inside the store {}",
                path.display(),
                self.root.display()
            ))
        })?;
        match kompakt_fs::remove_file_beneath(&self.root, relative) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(Error::Store(e.to_string())),
            Err(e) => Err(io::Error::new(e.kind(), format!("removing {}: {e}", path.display())).into()),
        }
    }

    /// Reads every object back (checksums and content hash) and checks every key.
    pub fn verify(&self, progress: &mut dyn FnMut(u64)) -> Result<StoreVerifyReport> {
        let mut report = StoreVerifyReport::default();
        let (objects, dangling, namespaces, last_row, dictionary_rows, dangling_dictionaries) = {
            let conn = self.read()?;
            let conn = conn.unchecked_transaction()?; // one snapshot
            (
                index::objects(&conn)?,
                index::dangling_keys(&conn)?,
                index::namespaces(&conn)?,
                index::last_key_row(&conn)?,
                index::dictionaries(&conn)?,
                index::dangling_dictionaries(&conn)?,
            )
        };
        report.keys = namespaces.iter().map(|(_, n)| n).sum();
        for (ns, key, hash) in dangling {
            report.problems.push(format!(
                "key {key:?} in namespace {ns:?} points at missing object {hash}"
            ));
        }
        let mut dictionaries = HashMap::new();
        for row in dictionary_rows {
            match checked_dictionary(row.id, row.data) {
                Ok(d) => {
                    report.dictionaries += 1;
                    dictionaries.insert(row.id, Some(d));
                }
                Err(e) => {
                    report.problems.push(e.to_string());
                    // Values that need it must not be read with a good copy cached earlier.
                    dictionaries.insert(row.id, None);
                }
            }
        }
        for (what, id) in dangling_dictionaries {
            report
                .problems
                .push(format!("{what} needs dictionary {id}, which the index does not hold"));
        }
        // A value written after the snapshot may need a dictionary adopted after it: looked up
        // then, not reported missing.
        let dictionaries_for = |id: Option<DictionaryId>| -> Dictionaries {
            match id.map(|id| (id, dictionaries.get(&id))) {
                None => Dictionaries::none(),
                Some((_, Some(Some(d)))) => vec![d.clone()].into(),
                Some((_, Some(None))) => Dictionaries::none(),
                Some((id, None)) => self.dictionaries_for(Some(id)).unwrap_or_default(),
            }
        };
        for index::ObjectSummary {
            hash,
            raw_size: raw,
            stored_size: stored,
            inline,
            dictionary,
        } in objects
        {
            let source = if inline {
                match index::inline_data(&*self.read()?, hash)? {
                    Some(data) => ObjectSource::Memory(Cursor::new(data)),
                    None => continue, // removed by a concurrent gc
                }
            } else {
                match fs::File::open(objects::object_path(&self.root, hash)) {
                    Ok(f) => ObjectSource::File(f),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Asked under the write lock: a gc in progress finishes first.
                        if self.settled(|c| index::object_kind(c, hash))? == Some(false) {
                            report.problems.push(format!("object {hash}: its file is missing"));
                        }
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            };
            let checked = check_object(
                source,
                self.read_options(),
                dictionaries_for(dictionary),
                hash,
                raw,
                stored,
            );
            report.record(checked, raw, stored, progress, || format!("object {hash}"));
        }
        // Values held in key rows, a batch at a time (a store may hold millions), up to the last
        // row of the snapshot above.
        let mut after = 0;
        loop {
            let batch = index::key_values_between(&*self.read()?, after, last_row, 1024)?;
            let Some(last) = batch.last() else { break };
            after = last.row;
            for index::KeyValue {
                namespace, key, object, ..
            } in batch
            {
                let ObjectRow {
                    hash,
                    raw_size,
                    stored_size,
                    data,
                    dictionary,
                } = object;
                let source = ObjectSource::Memory(Cursor::new(data.unwrap_or_default()));
                let checked = check_object(
                    source,
                    self.read_options(),
                    dictionaries_for(dictionary),
                    hash,
                    raw_size,
                    stored_size,
                );
                report.record(checked, raw_size, stored_size, progress, || {
                    format!("key {key:?} in namespace {namespace:?}: its value {hash}")
                });
            }
        }
        Ok(report)
    }
}

/// Reads an object completely: block checksums, then its content hash and sizes.
fn check_object(
    source: ObjectSource,
    opts: ReadOptions,
    dictionaries: Dictionaries,
    hash: ContentHash,
    raw: u64,
    stored: u64,
) -> Result<(), String> {
    let mut reader = Reader::new(source, opts).map_err(|e| e.to_string())?;
    reader.set_dictionaries(dictionaries);
    if reader.file_len() != stored {
        return Err(format!("file is {} bytes, the index says {stored}", reader.file_len()));
    }
    let mut hasher = ContentHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    for stream in 0..reader.streams().len() as u32 {
        let id = hasher.add_stream();
        let len = reader.stream_len(stream).map_err(|e| e.to_string())?;
        let mut pos = 0u64;
        while pos < len {
            let n = (len - pos).min(buf.len() as u64) as usize;
            reader
                .read_range_into(stream, pos, &mut buf[..n])
                .map_err(|e| e.to_string())?;
            hasher.update(id, &buf[..n]);
            pos += n as u64;
        }
        total += len;
    }
    let found = hasher.finish(reader.metadata());
    if found != hash {
        return Err(format!("content hashes to {found}"));
    }
    if total != raw {
        return Err(format!("holds {total} raw bytes, the index says {raw}"));
    }
    Ok(())
}

fn read_dir_sorted(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = match fs::read_dir(dir) {
        Ok(d) => d.map(|e| e.map(|e| e.path())).collect::<io::Result<Vec<_>>>()?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    out.sort();
    Ok(out)
}
