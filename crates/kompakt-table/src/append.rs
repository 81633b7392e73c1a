//! Appending rows to a table file in place, crash-safe through a journal
//! (docs/FORMAT.md, "Appending").
//!
//! An append cuts the file's footer and trailer off, writes new pages after the last block and
//! a new footer that indexes old and new pages. Before it cuts anything it saves the old footer
//! and trailer in `<file>.kompakt-journal` (fsynced) and holds a lock on that journal; it
//! deletes the journal only once the new file is on disk. A journal that outlives its append
//! (a crash, a power failure) means the append did not finish: the next open puts the old
//! footer back, so the table is exactly what it was before the append.

use crate::{TableOptions, TableReader, TableWriter};
use arrow_array::RecordBatch;
use kompakt::hash::xxh3_64;
use kompakt::{Error, Result};
use kompakt_fs::WritebackFile;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const JOURNAL_MAGIC: [u8; 8] = *b"KTJRNL01";

/// Where the journal of an append to `path` lives.
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".kompakt-journal");
    path.with_file_name(name)
}

fn sync_parent(path: &Path) -> Result<()> {
    #[cfg(unix)]
    kompakt_fs::sync_parent_dir(path)?;
    let _ = path;
    Ok(())
}

/// Takes the journal's lock, or fails when another append holds it.
fn lock_journal(path: &Path) -> Result<File> {
    let journal = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(journal_path(path))?;
    match journal.try_lock() {
        Ok(()) => Ok(journal),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Usage(format!(
            "{}: another process is appending to this table; try again when it is done",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Puts back the footer an interrupted append saved, then removes the journal. `journal` is
/// locked by the caller.
fn restore(path: &Path, journal: &mut File) -> Result<()> {
    let mut saved = Vec::new();
    journal.seek(SeekFrom::Start(0))?;
    journal.read_to_end(&mut saved)?;
    // A journal that is not complete was being written when the process stopped: the table
    // had not been touched yet.
    let complete = saved.len() >= 32 && saved[..8] == JOURNAL_MAGIC && {
        let body = &saved[..saved.len() - 8];
        let sum = u64::from_le_bytes(saved[saved.len() - 8..].try_into().expect("8 bytes"));
        xxh3_64(body) == sum
    };
    if complete {
        let cut = u64::from_le_bytes(saved[8..16].try_into().expect("8 bytes"));
        let tail_len = u64::from_le_bytes(saved[16..24].try_into().expect("8 bytes")) as usize;
        let tail = saved
            .get(24..24 + tail_len)
            .ok_or_else(|| Error::corrupt("append journal", 0, "its saved footer is shorter than it says"))?;
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.set_len(cut)?;
        file.seek(SeekFrom::Start(cut))?;
        file.write_all(tail)?;
        file.sync_all()?;
    }
    std::fs::remove_file(journal_path(path))?;
    sync_parent(path)
}

/// Opens a table, first undoing an append that was interrupted (when no append is running).
pub(crate) fn recover_if_needed(path: &Path) -> Result<()> {
    if !journal_path(path).exists() {
        return Ok(());
    }
    let mut journal = match lock_journal(path) {
        Ok(j) => j,
        Err(Error::Usage(_)) => {
            return Err(Error::Usage(format!(
                "{}: an append to this table is in progress; open it when the append is done",
                path.display()
            )))
        }
        Err(e) => return Err(e),
    };
    restore(path, &mut journal)
}

/// Appends `batches` (with the table's column types) to the table file at `path`, without
/// rewriting it. Returns the rows appended. The table's rows per group is kept; the codec and
/// threads come from `opts`, and `opts.metadata` is merged into the table's.
///
/// A crash or an error during the append leaves the table as it was before (restored on the
/// next open); a partial last row group is written again with the new rows.
pub fn append_table_file(
    path: impl AsRef<Path>,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: TableOptions,
) -> Result<u64> {
    let path = path.as_ref();
    let mut journal = lock_journal(path)?;
    if journal.metadata()?.len() > 0 {
        restore(path, &mut journal)?;
        journal = lock_journal(path)?;
    }
    let result = append_locked(path, &mut journal, batches, opts);
    match result {
        Ok(rows) => {
            std::fs::remove_file(journal_path(path))?;
            sync_parent(path)?;
            Ok(rows)
        }
        Err(e) => {
            // Put the old footer back now rather than at the next open.
            let _ = restore(path, &mut journal);
            Err(e)
        }
    }
}

/// The journal an append to `old` (the table at `path`) writes before touching it: the offset
/// where the footer starts and the footer and trailer bytes, checksummed.
fn journal_record(path: &Path, old: &TableReader) -> Result<(u64, Vec<u8>)> {
    let (_, blocks) = old.stream_index();
    let cut = blocks
        .last()
        .map_or(kompakt::stream::format::FILE_HEADER_LEN as u64, |b| b.end_offset());
    let mut tail = vec![0u8; (old.file_len() - cut) as usize];
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(cut))?;
    f.read_exact(&mut tail)?;
    let mut record = Vec::with_capacity(32 + tail.len());
    record.extend_from_slice(&JOURNAL_MAGIC);
    record.extend_from_slice(&cut.to_le_bytes());
    record.extend_from_slice(&(tail.len() as u64).to_le_bytes());
    record.extend_from_slice(&tail);
    record.extend_from_slice(&xxh3_64(&record).to_le_bytes());
    Ok((cut, record))
}

/// The journal an append to the table at `path` would write first (for crash tests).
#[doc(hidden)]
pub fn append_journal_for_tests(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    let path = path.as_ref();
    journal_record(path, &TableReader::open_unrecovered(path)?).map(|(_, r)| r)
}

fn append_locked(
    path: &Path,
    journal: &mut File,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: TableOptions,
) -> Result<u64> {
    let old = TableReader::open_unrecovered(path)?;
    let (cut, record) = journal_record(path, &old)?;
    journal.set_len(0)?;
    journal.seek(SeekFrom::Start(0))?;
    journal.write_all(&record)?;
    journal.sync_all()?;
    sync_parent(path)?;

    // 2. The rows of a partial last group are written again, with the new ones.
    let r = u64::from(old.rows_per_group());
    let keep_groups = (old.num_rows() / r) as usize;
    let (_, redo) = old.read(None, keep_groups as u64 * r..old.num_rows(), opts.threads)?;

    // 3. Cut the footer off and continue the file.
    let mut file = OpenOptions::new().write(true).open(path)?;
    file.set_len(cut)?;
    file.seek(SeekFrom::Start(cut))?;
    let mut file = WritebackFile::new(file);
    let mut w = TableWriter::resume(&mut file, &old, opts, keep_groups)?;
    let before = w.rows_written();
    for b in redo {
        w.write(&b)?;
    }
    let redone = w.rows_written() - before;
    for b in batches {
        w.write(&b?)?;
    }
    let appended = w.rows_written() - before - redone;
    w.finish()?;
    file.sync_all()?;
    Ok(appended)
}
