//! Atomic file output: write to a unique temporary file beside the target, fsync, rename.
//! A crash or an error mid-write never leaves a half-written file where a good one was.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A file that appears at its target path only when [`commit`](AtomicFile::commit) succeeds.
/// Dropped without commit, the temporary file is removed and the target is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates a uniquely named temporary file in the target's folder.
    pub fn create(target: impl AsRef<Path>) -> io::Result<AtomicFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let target = target.as_ref().to_path_buf();
        let name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a file path", target.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for _ in 0..100 {
            // pid + per-process counter + clock: unique across threads and processes.
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{name}.{}.{n}.{nanos:x}.tmp", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file: Some(file),
                        tmp,
                        target,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "could not create a unique temporary file",
        ))
    }

    /// The path the file will have after commit.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("file is open until commit")
    }

    /// Flushes, fsyncs, renames over the target and fsyncs the folder. On failure the
    /// temporary file is removed and the target is untouched.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.as_mut().expect("file is open until commit");
        file.flush()?;
        file.sync_all()?;
        fs::rename(&self.tmp, &self.target)?;
        // Renamed: from here on there is no temporary file for Drop to remove.
        self.file = None;
        let dir = match self.target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Makes the rename itself durable; not possible on every platform, so best effort.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_appears_only_on_commit() {
        let dir = std::env::temp_dir().join(format!("kompakt-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        fs::write(&target, b"old").unwrap();
        {
            let mut f = AtomicFile::create(&target).unwrap();
            f.write_all(b"half").unwrap();
            // dropped: simulated failure
        }
        assert_eq!(fs::read(&target).unwrap(), b"old");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        let leftovers = fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
        // A commit that cannot rename (the target is a folder) fails and cleans up.
        let folder = dir.join("folder");
        fs::create_dir(&folder).unwrap();
        let mut f = AtomicFile::create(&folder).unwrap();
        f.write_all(b"x").unwrap();
        assert!(f.commit().is_err());
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            2,
            "temporary file removed after a failed commit"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
