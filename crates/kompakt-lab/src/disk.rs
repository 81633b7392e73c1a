//! The speed of a disk, measured: write a test file (fsync included), drop it from the page
//! cache, read it back. `kompakt bench --disk PATH` uses the figures as its sink's speeds.

use crate::{Error, Result, Sink};
use serde_json::json;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Bytes [`measure_disk`] writes unless told otherwise: enough to get past the drive's and
/// the controller's write caches on most disks, small enough to take seconds.
pub const DISK_BYTES: u64 = 256 << 20;

/// The fewest bytes [`measure_disk`] takes: less measures system calls and caches.
pub const DISK_BYTES_MIN: u64 = 1 << 20;

/// Bytes per write and per read: large enough that the calls cost nothing next to the disk.
const CHUNK: usize = 8 << 20;

/// What [`measure_disk`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskSpeed {
    /// The folder the test file was written in.
    pub dir: PathBuf,
    /// Bytes written, then read.
    pub bytes: u64,
    /// Bytes a second written, the fsync included.
    pub write_bytes_per_sec: f64,
    /// Bytes a second read back, front to back.
    pub read_bytes_per_sec: f64,
    /// Whether the file had left the page cache before the read. When false (a tmpfs, a
    /// system without `posix_fadvise`), the read figure is the memory's, not the disk's.
    pub page_cache_dropped: bool,
}

impl DiskSpeed {
    /// The sink these speeds make, in MB/s, as `--sink-speed` gives one.
    pub fn sink(&self) -> Sink {
        Sink {
            write_mbps: self.write_bytes_per_sec / 1e6,
            read_mbps: self.read_bytes_per_sec / 1e6,
        }
    }

    /// One line for people: `disk /tmp: write 512 MB/s, read 1.9 GB/s (256 MiB, fsync, page
    /// cache dropped)`.
    pub fn describe(&self) -> String {
        let cache = if self.page_cache_dropped {
            "page cache dropped"
        } else {
            "read from the page cache: it could not be dropped, so the read figure is memory's"
        };
        format!(
            "disk {}: write {}, read {} ({}, fsync, {cache})",
            self.dir.display(),
            speed(self.write_bytes_per_sec),
            speed(self.read_bytes_per_sec),
            mib(self.bytes)
        )
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "path": self.dir.display().to_string(), "bytes": self.bytes,
            "write_bytes_per_sec": self.write_bytes_per_sec, "read_bytes_per_sec": self.read_bytes_per_sec,
            "page_cache_dropped": self.page_cache_dropped,
        })
    }
}

/// `512 MB/s`, `1.9 GB/s` (decimal units, as the bench's other speeds).
fn speed(bytes_per_sec: f64) -> String {
    let mbps = bytes_per_sec / 1e6;
    if mbps >= 1000.0 {
        format!("{:.1} GB/s", mbps / 1e3)
    } else {
        format!("{mbps:.0} MB/s")
    }
}

fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// An error unless `bytes` is a size [`measure_disk`] takes.
pub fn check_disk_bytes(bytes: u64) -> Result {
    if bytes < DISK_BYTES_MIN {
        return Err(Error(format!(
            "invalid disk test size {bytes} bytes: expected at least 1 MiB (default {}); less \
             measures the caches, not the disk",
            mib(DISK_BYTES)
        )));
    }
    Ok(())
}

/// Removes the test file however the measurement ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Measures the disk holding `path` (a folder, or a file in the folder to measure): writes
/// `bytes` of pseudo-random data (a disk that compresses or dedupes would make zeros look
/// fast) to a hidden temporary file there in 8 MiB writes and fsyncs it, timing both; drops
/// the file from the page cache; reads it back in 8 MiB reads, timing that; and removes it,
/// also on error. Errors name the path.
pub fn measure_disk(path: &Path, bytes: u64) -> Result<DiskSpeed> {
    check_disk_bytes(bytes)?;
    let dir = match fs::metadata(path) {
        Ok(m) if m.is_dir() => path.to_path_buf(),
        Ok(_) => match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
        Err(e) => {
            return Err(Error(format!(
                "cannot measure the disk of {}: {} (expected an existing folder, or a file in one)",
                path.display(),
                io_reason(&e)
            )))
        }
    };
    let fail = |what: &str, e: std::io::Error| {
        Error(format!(
            "cannot measure the disk of {}: {what}: {} (--disk needs a folder it can write to, with {} free)",
            dir.display(),
            io_reason(&e),
            mib(bytes)
        ))
    };
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!(".kompakt-disk-test.{}.{nanos}.tmp", std::process::id());
    let temp = dir.join(name);
    let mut chunk = random_bytes(CHUNK, nanos as u64 ^ u64::from(std::process::id()));

    // Readable too: mapping it to look at its pages in the cache needs that.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| fail("cannot create a test file", e))?;
    let _guard = RemoveOnDrop(temp.clone());
    let started = Instant::now();
    let mut written = 0u64;
    while written < bytes {
        let n = CHUNK.min(usize::try_from(bytes - written).unwrap_or(CHUNK));
        stamp(&mut chunk[..n], written);
        file.write_all(&chunk[..n])
            .map_err(|e| fail("writing the test file", e))?;
        written += n as u64;
    }
    file.sync_all().map_err(|e| fail("fsync of the test file", e))?;
    let write_seconds = started.elapsed().as_secs_f64().max(1e-9);
    let page_cache_dropped = drop_from_cache(&file);
    drop(file);

    let mut file = File::open(&temp).map_err(|e| fail("cannot open the test file again", e))?;
    let started = Instant::now();
    let mut read = 0u64;
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => read += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(fail("reading the test file", e)),
        }
    }
    let read_seconds = started.elapsed().as_secs_f64().max(1e-9);
    if read != bytes {
        return Err(Error(format!(
            "cannot measure the disk of {}: read back {read} of the {bytes} bytes written",
            dir.display()
        )));
    }
    Ok(DiskSpeed {
        dir,
        bytes,
        write_bytes_per_sec: bytes as f64 / write_seconds,
        read_bytes_per_sec: bytes as f64 / read_seconds,
        page_cache_dropped,
    })
}

/// The error without Rust's `(os error 2)` tail.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// `n` bytes of splitmix64 output: incompressible, and unlike any other run's.
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// Writes each 4 KiB page's file offset into its first bytes: the one random chunk is written
/// again and again, and a deduplicating file system must not see the repeats.
fn stamp(chunk: &mut [u8], offset: u64) {
    for (i, page) in chunk.chunks_mut(4096).enumerate() {
        let at = (offset + (i as u64) * 4096).to_le_bytes();
        let n = page.len().min(8);
        page[..n].copy_from_slice(&at[..n]);
    }
}

/// Asks the kernel to drop `file`'s pages (clean after the fsync) from the page cache, and
/// checks that it did: a tmpfs accepts the advice and keeps every page. Linux only.
#[cfg(target_os = "linux")]
fn drop_from_cache(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fadvise takes plain integers and touches none of this process's memory;
    // `file` is borrowed, so its descriptor stays open for the call.
    let advised = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    advised == 0 && resident_fraction(file).is_none_or(|f| f <= 0.01)
}

#[cfg(not(target_os = "linux"))]
fn drop_from_cache(_file: &File) -> bool {
    false
}

/// The fraction of `file`'s pages in the page cache (`mincore` of a mapping that is never
/// read, so it faults nothing in); None when it cannot be told.
#[cfg(target_os = "linux")]
fn resident_fraction(file: &File) -> Option<f64> {
    use std::os::fd::AsRawFd;
    let len = usize::try_from(file.metadata().ok()?.len()).ok().filter(|&n| n > 0)?;
    // SAFETY: sysconf reads a constant of the system.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|&p| p > 0)?;
    // SAFETY: a new read-only mapping of an open file, at an address the kernel picks; nothing
    // reads through it, and it is unmapped below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    let mut pages = vec![0u8; len.div_ceil(page)];
    // SAFETY: `addr..addr + len` is the mapping made above; `pages` has one byte for each of
    // its pages, which is what mincore writes.
    let done = unsafe { libc::mincore(addr, len, pages.as_mut_ptr()) };
    // SAFETY: the mapping made above, unmapped once; no reference into it exists.
    unsafe { libc::munmap(addr, len) };
    if done != 0 {
        return None;
    }
    let resident = pages.iter().filter(|&&p| p & 1 != 0).count();
    Some(resident as f64 / pages.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kompakt-lab-disk-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_disk_is_measured_and_left_as_it_was() {
        let dir = temp_dir("measure");
        let d = measure_disk(&dir, 8 << 20).unwrap();
        assert_eq!((d.dir.as_path(), d.bytes), (dir.as_path(), 8 << 20));
        for s in [d.write_bytes_per_sec, d.read_bytes_per_sec] {
            assert!(s.is_finite() && s > 0.0, "{d:?}");
        }
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "the test file is gone");
        let sink = d.sink();
        assert!((sink.write_mbps * 1e6 - d.write_bytes_per_sec).abs() < 1e-3);
        let text = d.describe();
        assert!(text.starts_with(&format!("disk {}: write ", dir.display())), "{text}");
        assert!(text.contains("(8 MiB, fsync, "), "{text}");
        assert_eq!(d.to_json()["bytes"], 8 << 20);
        // A file stands for its folder; a size that is not a whole number of chunks is written
        // whole.
        fs::write(dir.join("data.bin"), b"x").unwrap();
        let d = measure_disk(&dir.join("data.bin"), (1 << 20) + 12345).unwrap();
        assert_eq!((d.dir.as_path(), d.bytes), (dir.as_path(), (1 << 20) + 12345));
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_folder_or_a_tiny_size_is_an_error_naming_it() {
        let dir = temp_dir("missing");
        let missing = dir.join("no-such-folder");
        let err = measure_disk(&missing, 8 << 20).unwrap_err().0;
        assert!(err.contains(&missing.display().to_string()), "{err}");
        assert!(err.contains("existing folder"), "{err}");
        let err = measure_disk(&dir, 1000).unwrap_err().0;
        assert!(err.contains("1000 bytes") && err.contains("1 MiB"), "{err}");
        // A folder inside a file cannot be written: the error names the folder.
        fs::write(dir.join("file"), b"x").unwrap();
        let err = measure_disk(&dir.join("file/sub"), 8 << 20).unwrap_err().0;
        assert!(err.contains("file/sub"), "{err}");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A tmpfs takes the advice to drop its pages and keeps them: the figure must say so.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_read_from_memory_is_not_passed_off_as_the_disk() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            return;
        }
        let Ok(d) = measure_disk(shm, 2 << 20) else {
            return; // a /dev/shm this user cannot write to
        };
        assert!(!d.page_cache_dropped, "{d:?}");
        assert!(d.describe().contains("read from the page cache"), "{}", d.describe());
    }

    #[test]
    fn the_test_data_does_not_repeat() {
        let mut chunk = random_bytes(CHUNK, 7);
        assert!(chunk.iter().filter(|&&b| b == 0).count() < CHUNK / 200);
        stamp(&mut chunk, 0);
        let pages: std::collections::HashSet<&[u8]> = chunk.chunks(4096).collect();
        assert_eq!(pages.len(), CHUNK / 4096);
        assert_eq!(&chunk[4096..4104], &4096u64.to_le_bytes());
    }
}
