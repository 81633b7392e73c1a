//! Object files: the fan-out folder of large objects, and the temporary files they are
//! written to first.

use crate::error::Result;
use kompakt::stream::ContentHash;
use kompakt_fs::{PacedOutput, WritebackFile, WritebackProgress};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// `objects/ab/ab12...ef.kpk`: 256 folders by the first hash byte keep folders small.
pub fn object_path(root: &Path, hash: ContentHash) -> PathBuf {
    let hex = hash.to_string();
    root.join("objects").join(&hex[..2]).join(format!("{hex}.kpk"))
}

/// The hash an object file's name gives, if it is one.
pub fn hash_of_file_name(name: &str) -> Option<ContentHash> {
    ContentHash::from_hex(name.strip_suffix(".kpk")?)
}

/// A temporary file in the store's `tmp/` folder, locked (an exclusive `flock`) while its
/// writer lives, so that `gc` removes only the files of writers that died. Removed on drop
/// unless [`persist`](TempObject::persist)ed.
#[derive(Debug)]
pub struct TempObject {
    file: WritebackFile,
    pub(super) path: PathBuf,
    persisted: bool,
}

impl TempObject {
    /// Creates a uniquely named file in `dir` (unique across threads and processes).
    pub fn create(dir: &Path) -> io::Result<TempObject> {
        Self::create_with(dir, "", None)
    }

    /// Like [`create`](TempObject::create), with the file name starting with `prefix`.
    pub fn create_prefixed(dir: &Path, prefix: &str) -> io::Result<TempObject> {
        Self::create_with(dir, prefix, None)
    }

    fn create_with(dir: &Path, prefix: &str, progress: Option<Arc<WritebackProgress>>) -> io::Result<TempObject> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{prefix}{}.{n}.{nanos:x}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    let temp = TempObject {
                        file: WritebackFile::with_progress(file, progress),
                        path,
                        persisted: false,
                    };
                    temp.file.get_ref().try_lock().map_err(io::Error::other)?;
                    return Ok(temp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < u64::MAX => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", dir.display()))),
            }
        }
    }

    /// Flushes the data to stable storage.
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Renames the file to `target` (creating its folder) and makes the rename durable.
    pub fn persist(mut self, target: &Path) -> io::Result<()> {
        let dir = target.parent().expect("object paths have a folder");
        if !dir.is_dir() {
            fs::create_dir_all(dir)?;
            // The new folder's entry must be durable too, before any commit points at it.
            if let Some(Ok(parent)) = dir.parent().map(File::open) {
                let _ = parent.sync_all();
            }
        }
        fs::rename(&self.path, target)?;
        self.persisted = true;
        let _ = kompakt_fs::sync_parent_dir(target);
        Ok(())
    }
}

impl Write for TempObject {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for TempObject {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Where an object being written goes: memory while it is small, a temporary file once it
/// outgrows `limit` bytes. Small objects thus never touch the file system.
#[derive(Debug)]
pub struct Spill {
    memory: Vec<u8>,
    limit: usize,
    dir: PathBuf,
    file: Option<TempObject>,
    progress: Option<Arc<WritebackProgress>>,
}

/// Where a finished object's bytes are.
#[derive(Debug)]
pub enum Spilled {
    /// The whole file, in memory.
    Memory(Vec<u8>),
    /// A temporary file, synced.
    File(TempObject, u64),
}

impl Spill {
    /// Keeps up to `limit` bytes in memory, then moves to a temporary file in `dir`.
    pub fn new(dir: PathBuf, limit: usize) -> Spill {
        Spill {
            memory: Vec::new(),
            limit,
            dir,
            file: None,
            progress: None,
        }
    }

    /// Like [`new`](Spill::new), for a writer that adapts to the disk: the temporary file
    /// reports its write-back to [`progress`](Spill::progress).
    pub fn paced(dir: PathBuf, limit: usize) -> Spill {
        Spill {
            progress: Some(Arc::new(WritebackProgress::on_device_of(&dir))),
            ..Spill::new(dir, limit)
        }
    }

    /// Ends the output: memory as it is, or the temporary file, synced.
    pub fn finish(mut self) -> Result<Spilled> {
        match self.file.take() {
            None => Ok(Spilled::Memory(std::mem::take(&mut self.memory))),
            Some(mut f) => {
                f.sync()?;
                let len = f.file.get_ref().metadata()?.len();
                Ok(Spilled::File(f, len))
            }
        }
    }
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.file.is_none() && self.memory.len() + buf.len() <= self.limit {
            self.memory.extend_from_slice(buf);
            return Ok(());
        }
        if self.file.is_none() {
            // Paced from its first byte when the spill is (see `WritebackFile::paced`).
            let mut f = TempObject::create_with(&self.dir, "", self.progress.clone())?;
            f.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(f);
        }
        self.file.as_mut().expect("spilled").write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl PacedOutput for Spill {
    /// A paced spill's write-back progress, which [`kompakt_fs::writer`] paces its writer by.
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        self.progress.clone()
    }
}

impl TempObject {
    /// Links the file at `target` (failing if it exists); the temporary name is removed on drop.
    pub fn link_to(&self, target: &Path) -> io::Result<()> {
        fs::hard_link(&self.path, target)?;
        if let Some(dir) = target.parent() {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}
