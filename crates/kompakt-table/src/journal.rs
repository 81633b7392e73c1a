//! The journal that makes an append crash-safe (docs/FORMAT.md, "Appending"): before an
//! append cuts the file's footer off, the footer and trailer are saved in
//! `<file>.kompakt-journal` (fsynced, locked while the append runs). A journal found later
//! means the append did not finish, and [`recover_if_needed`] puts the old footer back.
//!
//! This module knows bytes and files only, not tables: the reader calls it before opening,
//! the append writes through it.

use kompakt::hash::xxh3_64;
use kompakt::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub(crate) const JOURNAL_MAGIC: [u8; 8] = *b"KTJRNL01";

/// Where the journal of an append to `path` lives.
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".kompakt-journal");
    path.with_file_name(name)
}

pub(crate) fn sync_parent(path: &Path) -> Result<()> {
    #[cfg(unix)]
    kompakt_fs::sync_parent_dir(path)?;
    let _ = path;
    Ok(())
}

/// Takes the journal's lock, or fails when another append holds it.
pub(crate) fn lock_journal(path: &Path) -> Result<File> {
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
pub(crate) fn restore(path: &Path, journal: &mut File) -> Result<()> {
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
