//! Files written back to disk while they are being written ([`WritebackFile`], on Linux), so
//! the final fsync waits for the last pages, not the whole file; and, for a paced file, how
//! far the disk got and how fast it is ([`WritebackProgress`]), remembered per device.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A file gets its data written back once this many bytes were written since the last time.
///
/// Why: Linux starts writing dirty pages back only past a share of available memory (10 %
/// by default, about 2.2 GB on a 24 GiB machine) or after 30 s, so a 1.5 GB file was still all
/// in memory at its fsync, which then took about as long as producing it had. Flushing on a
/// thread of its own overlaps the disk with the encoding. On the 2-core development VM a 2 GB
/// `compress --codec none` went from 1.1-3.0 s to 0.7-1.5 s, and the 2.4 GB benchmark table's
/// write from 1.6-3.3 s to 1.2-1.5 s. 8 MiB rather than 32 MiB lets medium files overlap too
/// (the final fsync of the 24 MB fst benchmark table takes about 4 ms) and made no measurable
/// difference on the 2 GB file; it is not tuned beyond that.
pub const WRITEBACK_EVERY: u64 = 8 << 20;

/// The write-back step of a file whose writer adapts to the disk ([`WritebackProgress`]): the
/// writer learns how far the disk got once per step, so the step bounds how late it notices.
pub const PACED_WRITEBACK_EVERY: u64 = 1 << 20;

/// A paced file's first write-back step comes sooner: until it has been timed the writer knows
/// nothing of the disk and compresses every block, which costs a fast disk its wait.
pub const PACED_FIRST_STEP: u64 = 256 << 10;

/// A plain (not paced) file asks the kernel to start writing its dirty pages back each time
/// this many more bytes were written (`sync_file_range` without waiting; Linux only), until
/// its write-back thread starts at [`WRITEBACK_EVERY`]. Without it, a file smaller than that
/// went to disk only at its final fsync, after it had been produced. Measured on the 2-core
/// development VM, a store's set of a float64 array without compression (fresh process
/// each): 2 MB 4.1-5.0 -> 2.8-3.1 ms, 8 MB 12.3-13.1 -> 7.7-8.5 ms, 32 MB 23-25 -> 16-21 ms,
/// where writing the raw bytes and one fsync took 2.3, 5.8-7.5 and 20-26 ms (best repeats).
/// Every 1 MiB gained less (8 MB: 9.2-9.6 ms). Going on after the thread starts gained nothing
/// measurable (32 and 80 MB sets) and moved the kernel's work into the writing thread.
pub const START_WRITEBACK_EVERY: u64 = 256 << 10;

/// How far a file's background write-back has got: bytes handed to the file, bytes the
/// write-back thread has seen reach the disk, and the disk's speed. Shared with a writer
/// that chooses, block by block, between compressing and storing raw (see [`DiskPace`](crate::DiskPace)).
#[derive(Debug)]
pub struct WritebackProgress {
    written: AtomicU64,
    synced: AtomicU64,
    started: AtomicBool,
    /// The disk's speed while it was writing this file back, in bytes per second, as `f64`
    /// bits; 0 before the first piece. One word, so a reader never sees the bytes of one
    /// update with the time of another.
    rate_bits: AtomicU64,
    /// When the thread started writing back its current range, in nanoseconds since `epoch`
    /// plus one; 0 while it is not writing back.
    waiting_since: AtomicU64,
    /// The length of that range. Stored before `waiting_since`, so a reader that finds
    /// `waiting_since` unchanged after reading it has the length of that same range.
    waiting_for: AtomicU64,
    epoch: Instant,
    /// The file's device, once known, and the speed this process last measured for it
    /// (`f64` bits, 0 for none): see `DEVICE_RATES`.
    device: OnceLock<u64>,
    remembered_bits: AtomicU64,
}

/// The write-back of a paced file waits for the disk in pieces of this size, so that its
/// progress and speed are known every piece even when one step covers many MiB: a disk that
/// takes 400 ms for a 44 MB step must not look as fast as its first, cached, MiB until then.
const RATE_PIECE: u64 = PACED_WRITEBACK_EVERY;

impl Default for WritebackProgress {
    fn default() -> WritebackProgress {
        WritebackProgress {
            written: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            started: AtomicBool::new(false),
            rate_bits: AtomicU64::new(0),
            waiting_since: AtomicU64::new(0),
            waiting_for: AtomicU64::new(0),
            epoch: Instant::now(),
            device: OnceLock::new(),
            remembered_bits: AtomicU64::new(0),
        }
    }
}

impl WritebackProgress {
    /// Bytes written but not yet known to be on disk; `None` until the write-back thread has
    /// started (the file is still small), when nothing is known about the disk.
    pub fn backlog(&self) -> Option<u64> {
        if !self.started.load(Ordering::Acquire) {
            return None;
        }
        let synced = self.synced.load(Ordering::Acquire);
        Some(self.written.load(Ordering::Acquire).saturating_sub(synced))
    }

    /// The disk's speed in bytes per second, while it was writing: the lower of what this
    /// file has measured and what the last paced file on the same device measured (the
    /// process remembers one speed per device); `None` before either is known. While a range
    /// is being written back, no more than the whole range over the time so far: a disk that
    /// stalls is seen to be slow before any of the range comes back. (Not a single piece over
    /// the time: a fast disk with a deep queue may return the whole range at once, and its
    /// first piece would make it look slow.)
    pub fn disk_rate(&self) -> Option<f64> {
        let measured = positive(f64::from_bits(self.rate_bits.load(Ordering::Acquire)));
        let remembered = self.remembered_rate();
        let rate = match (measured, remembered) {
            (Some(m), Some(r)) => m.min(r),
            (m, r) => m.or(r)?,
        };
        let since = self.waiting_since.load(Ordering::Acquire);
        if since == 0 {
            return Some(rate);
        }
        let range = self.waiting_for.load(Ordering::Acquire);
        if self.waiting_since.load(Ordering::Acquire) != since {
            return Some(rate); // that range just ended: its length may be the next one's
        }
        let waited = self.nanos_since_epoch().saturating_sub(since - 1).max(1);
        Some(rate.min(range as f64 * 1e9 / waited as f64))
    }

    /// The speed the last paced file on this file's device measured in this process, if any.
    pub fn remembered_rate(&self) -> Option<f64> {
        positive(f64::from_bits(self.remembered_bits.load(Ordering::Acquire)))
    }

    /// A record for a file that will be created at `path` or in the folder `path`: the speed
    /// remembered for its device is known before the file exists (a store's value first goes
    /// to memory, and its writer decides how to start before the file is created).
    pub fn on_device_of(path: &Path) -> WritebackProgress {
        let progress = WritebackProgress::default();
        if let Some(device) = fs::metadata(path).ok().and_then(|m| device_id(&m)) {
            progress.set_device(device);
        }
        progress
    }

    /// Notes the device `file` is on, and the speed remembered for it.
    fn learn_device(&self, file: &File) {
        if let Some(device) = file.metadata().ok().and_then(|m| device_id(&m)) {
            self.set_device(device);
        }
    }

    fn set_device(&self, device: u64) {
        if self.device.set(device).is_ok() {
            if let Some(rate) = remembered_rate(device) {
                self.remembered_bits.store(rate.to_bits(), Ordering::Release);
            }
        }
    }

    /// Remembers what this file measured for its device, for the next paced file there.
    fn remember(&self, meter: &RateMeter) {
        if let Some(&device) = self.device.get() {
            if meter.bytes >= REMEMBER_AFTER {
                remember_rate(device, meter.rate());
            }
        }
    }

    fn nanos_since_epoch(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Writes bytes `synced..written` back and waits for them (the write-back thread's work):
    /// all of them are started at once, so the device gets a deep queue, then waited for piece
    /// by piece, each piece timed into `meter`.
    fn write_back(&self, file: &File, meter: &mut RateMeter) -> io::Result<()> {
        // Counted before the write, so every byte counted is covered.
        let (from, to) = (
            self.synced.load(Ordering::Acquire),
            self.written.load(Ordering::Acquire),
        );
        if to <= from {
            return Ok(());
        }
        self.waiting_for.store(to.saturating_sub(from), Ordering::Release);
        self.waiting_since
            .store(self.nanos_since_epoch() + 1, Ordering::Release);
        let written = self.write_pieces(file, meter, from, to);
        self.waiting_since.store(0, Ordering::Release);
        written
    }

    fn write_pieces(&self, file: &File, meter: &mut RateMeter, from: u64, to: u64) -> io::Result<()> {
        // Timed from before the range is started: on a congested device starting it may block
        // while the requests are queued, and the pieces then come back at once.
        let mut started = Instant::now();
        start_range(file, from, to)?;
        let mut at = from;
        while at < to {
            let end = to.min(at + RATE_PIECE);
            if at > from {
                started = Instant::now();
            }
            write_range(file, at, end)?;
            meter.add(end - at, started.elapsed());
            self.rate_bits.store(meter.rate().to_bits(), Ordering::Release);
            self.synced.store(end, Ordering::Release);
            at = end;
        }
        Ok(())
    }

    /// A progress record in a given state, for tests of the writers that read it: `None`
    /// for a write-back that has not started, else (bytes written, bytes synced, nanoseconds
    /// the disk took for them).
    #[cfg(test)]
    pub(crate) fn simulated(state: Option<(u64, u64, u64)>) -> WritebackProgress {
        let p = WritebackProgress::default();
        if let Some((written, synced, nanos)) = state {
            p.started.store(true, Ordering::Release);
            p.written.store(written, Ordering::Release);
            p.synced.store(synced, Ordering::Release);
            if synced > 0 && nanos > 0 {
                let rate = synced as f64 * 1e9 / nanos as f64;
                p.rate_bits.store(rate.to_bits(), Ordering::Release);
            }
        }
        p
    }

    /// The same, as if an earlier file on its device had measured `rate`.
    #[cfg(test)]
    pub(crate) fn remembering(self, rate: f64) -> WritebackProgress {
        self.remembered_bits.store(rate.to_bits(), Ordering::Release);
        self
    }
}

fn positive(rate: f64) -> Option<f64> {
    (rate > 0.0 && rate.is_finite()).then_some(rate)
}

/// The write-back speed the last paced file on each device measured, in this process: a
/// paced file starts from it instead of knowing nothing. Why: a device that is fast at first
/// and slow after (a throttled cloud volume's burst allowance, a drive's write cache) looks
/// fast for its first MiB, and a writer that trusted those stored them raw; a store writes
/// many objects to one device, and all but the first now know better. A few devices at most;
/// the oldest is forgotten past [`DEVICES_REMEMBERED`].
static DEVICE_RATES: Mutex<Vec<(u64, f64)>> = Mutex::new(Vec::new());

const DEVICES_REMEMBERED: usize = 16;

/// A file's measurement is remembered only if it covered this much: one piece written while
/// a cache absorbed it says little about the device.
const REMEMBER_AFTER: u64 = 2 * RATE_PIECE;

fn remembered_rate(device: u64) -> Option<f64> {
    let rates = DEVICE_RATES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    rates.iter().find(|(d, _)| *d == device).map(|&(_, rate)| rate)
}

fn remember_rate(device: u64, rate: f64) {
    let Some(rate) = positive(rate) else { return };
    let mut rates = DEVICE_RATES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    rates.retain(|(d, _)| *d != device);
    if rates.len() >= DEVICES_REMEMBERED {
        rates.remove(0);
    }
    rates.push((device, rate));
}

#[cfg(unix)]
fn device_id(metadata: &fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    Some(metadata.dev())
}

#[cfg(not(unix))]
fn device_id(_metadata: &fs::Metadata) -> Option<u64> {
    None
}

/// Bytes a write-back thread saw reach the disk, and the time it waited for them.
#[derive(Debug, Default)]
struct RateMeter {
    bytes: u64,
    nanos: u64,
}

impl RateMeter {
    fn add(&mut self, bytes: u64, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.bytes = self.bytes.saturating_add(bytes);
        self.nanos = self.nanos.saturating_add(nanos);
    }

    /// Bytes per second; 0 before the first piece.
    fn rate(&self) -> f64 {
        if self.nanos == 0 {
            0.0
        } else {
            self.bytes as f64 * 1e9 / self.nanos as f64
        }
    }
}

/// Writes a file's data back to disk on a background thread while the file grows.
///
/// The thread holds its own handle of the file and runs `fdatasync` each time it is asked
/// ([`wrote`](Writeback::wrote) asks every [`WRITEBACK_EVERY`] bytes; a request made while
/// one is queued is merged into it). It starts with the first request, so small files never
/// pay for a thread. [`finish`](Writeback::finish) waits for it and returns its first error:
/// it must be called before the final fsync, since the kernel reports a write-back error
/// once per open file description, which the thread's handle shares with the writer's.
/// Dropped unfinished (a write that failed), it tells the thread to stop syncing a file that
/// is about to be removed, and does not wait for it.
///
/// Linux only: elsewhere `sync_data` is a full drive-cache flush (`F_FULLFSYNC` on macOS,
/// `FlushFileBuffers` on Windows), too dear to run every 8 MiB, and `wrote` does nothing.
#[derive(Debug, Default)]
pub(crate) struct Writeback {
    since_last: u64,
    /// Bytes written since the last [`start_writeback`] (plain files only).
    since_start: u64,
    pub(crate) worker: Option<Worker>,
    off: bool,
    /// Set for a paced file: published progress, and the step [`PACED_WRITEBACK_EVERY`].
    pub(crate) progress: Option<Arc<WritebackProgress>>,
    /// The thread's error, once returned (kind and message: `io::Error` is not `Clone`).
    failed: Option<(io::ErrorKind, String)>,
}

#[derive(Debug)]
pub(crate) struct Worker {
    requests: SyncSender<()>,
    cancelled: Arc<AtomicBool>,
    join: JoinHandle<io::Result<()>>,
}

impl Writeback {
    /// A paced write-back, publishing to `progress`.
    fn paced(progress: Arc<WritebackProgress>) -> Writeback {
        let mut w = Writeback::default();
        w.progress = Some(progress);
        w
    }

    /// Records `n` more bytes written to `file`; asks for a write-back when enough piled up.
    /// Returns the error of an earlier write-back, if one failed.
    fn wrote(&mut self, file: &File, n: usize) -> io::Result<()> {
        self.since_last += n as u64;
        let step = match &self.progress {
            Some(p) => {
                p.written.fetch_add(n as u64, Ordering::AcqRel);
                if self.worker.is_none() {
                    PACED_FIRST_STEP
                } else {
                    PACED_WRITEBACK_EVERY
                }
            }
            None => WRITEBACK_EVERY,
        };
        // Until a write-back thread exists: then its fdatasync takes over, and the kernel's
        // work of starting the write-back stays off the writing thread.
        if self.progress.is_none() && self.worker.is_none() && !self.off {
            self.since_start += n as u64;
            if self.since_start >= START_WRITEBACK_EVERY {
                self.since_start = 0;
                // Best effort: a failed start only leaves more for the final fsync, which
                // reports any write error the disk had.
                let _ = start_writeback(file);
            }
        }
        if self.since_last < step || self.off || !cfg!(target_os = "linux") {
            return Ok(());
        }
        self.since_last = 0;
        if self.worker.is_none() {
            // Best effort: without a handle or a thread the final fsync does all the work.
            let Ok(handle) = file.try_clone() else {
                self.off = true;
                return Ok(());
            };
            let (requests, rx) = mpsc::sync_channel::<()>(1);
            let cancelled = Arc::new(AtomicBool::new(false));
            let stop = Arc::clone(&cancelled);
            let progress = self.progress.clone();
            let spawned = std::thread::Builder::new()
                .name("kompakt-writeback".into())
                .spawn(move || {
                    let mut meter = RateMeter::default();
                    for () in rx {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        match &progress {
                            None => handle.sync_data()?,
                            Some(p) => match p.write_back(&handle, &mut meter) {
                                // A file system without sync_file_range: stop pacing, and let
                                // the final fsync do the work. The writer then sees the backlog
                                // grow and compresses, as a writer that does not adapt would.
                                Err(e) if unsupported(&e) => break,
                                done => done?,
                            },
                        }
                    }
                    // A cancelled file (its write failed) may have been cut short: not remembered.
                    if let Some(p) = progress.filter(|_| !stop.load(Ordering::Relaxed)) {
                        p.remember(&meter);
                    }
                    Ok(())
                });
            match spawned {
                Ok(join) => {
                    if let Some(p) = &self.progress {
                        p.started.store(true, Ordering::Release);
                    }
                    self.worker = Some(Worker {
                        requests,
                        cancelled,
                        join,
                    })
                }
                Err(_) => {
                    self.off = true;
                    return Ok(());
                }
            }
        }
        let sent = self.worker.as_ref().map(|w| w.requests.try_send(()));
        match sent {
            // Full: the queued request will cover these bytes too.
            None | Some(Ok(())) | Some(Err(TrySendError::Full(()))) => Ok(()),
            // The thread stopped on an error: report it now rather than at the commit.
            Some(Err(TrySendError::Disconnected(()))) => {
                self.off = true;
                self.finish()
            }
        }
    }

    /// Waits for the write-back thread, if any; returns its first error, and returns it again
    /// on every later call: the kernel reports a write-back error once per open file, so the
    /// final fsync would not see it.
    fn finish(&mut self) -> io::Result<()> {
        if let Some((kind, message)) = &self.failed {
            return Err(io::Error::new(*kind, message.clone()));
        }
        let Some(w) = self.worker.take() else { return Ok(()) };
        drop(w.requests);
        let joined = w.join.join();
        let result = joined.unwrap_or_else(|_| Err(io::Error::other("the write-back thread panicked")));
        if let Err(e) = &result {
            self.failed = Some((e.kind(), e.to_string()));
        }
        result
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        if let Some(w) = &self.worker {
            w.cancelled.store(true, Ordering::Relaxed);
        }
    }
}

/// Writes bytes `from..to` of `file` to disk and waits for them, without `fdatasync`'s flush
/// of the drive's cache (the final fsync does that): cheap enough to call every
/// [`PACED_WRITEBACK_EVERY`] bytes, where an `fdatasync` each MiB cost this VM's disk a third of
/// its speed. Only the thread of a paced file calls it.
#[cfg(target_os = "linux")]
fn write_range(file: &File, from: u64, to: u64) -> io::Result<()> {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    sync_range(file, from, to, flags)
}

/// Asks the kernel to start writing bytes `from..to` of `file` back, without waiting.
#[cfg(target_os = "linux")]
fn start_range(file: &File, from: u64, to: u64) -> io::Result<()> {
    sync_range(file, from, to, libc::SYNC_FILE_RANGE_WRITE)
}

/// `sync_file_range` with `flags` on bytes `from..to`; nothing for an empty range.
#[cfg(target_os = "linux")]
fn sync_range(file: &File, from: u64, to: u64, flags: libc::c_uint) -> io::Result<()> {
    let invalid = |_| io::Error::new(io::ErrorKind::InvalidInput, "file offset beyond i64");
    let offset = i64::try_from(from).map_err(invalid)?;
    let len = i64::try_from(to.saturating_sub(from)).map_err(invalid)?;
    if len == 0 {
        return Ok(());
    }
    sync_file_range(file, offset, len, flags)
}

/// Asks the kernel to start writing every dirty page of `file` to disk, and returns without
/// waiting. A plain file calls it every [`START_WRITEBACK_EVERY`] bytes from the writing
/// thread: the disk then works while the file is still being produced, and the final fsync
/// waits for the last pages and the journal only.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File) -> io::Result<()> {
    // Offset 0 and length 0: the whole file. Pages already on their way are skipped.
    sync_file_range(file, 0, 0, libc::SYNC_FILE_RANGE_WRITE)
}

/// Whether an error of `sync_file_range` says the file or file system cannot do it, rather
/// than that writing failed.
fn unsupported(e: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ESPIPE | libc::ENOSYS | libc::EOPNOTSUPP)
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = e;
        false
    }
}

/// `sync_file_range(2)`: the crate's one `unsafe` call (no maintained safe wrapper has it).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn sync_file_range(file: &File, offset: i64, len: i64, flags: libc::c_uint) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range takes plain integers and touches none of this process's memory;
    // `file` is borrowed, so its descriptor stays open for the call. Bad arguments come back
    // as an error code, which is returned.
    let done = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, flags) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn start_range(_file: &File, _from: u64, _to: u64) -> io::Result<()> {
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn write_range(_file: &File, _from: u64, _to: u64) -> io::Result<()> {
    Ok(())
}

/// An open file whose data is written back to disk while it grows (see
/// [`START_WRITEBACK_EVERY`] and [`WRITEBACK_EVERY`]):
/// what [`AtomicFile`](crate::AtomicFile) and the store's temporary objects write through, and a table's append
/// (which writes in place).
#[derive(Debug)]
pub struct WritebackFile {
    file: File,
    pub(crate) writeback: Writeback,
}

impl WritebackFile {
    /// Wraps `file`; only bytes written through this wrapper count.
    pub fn new(file: File) -> WritebackFile {
        WritebackFile {
            file,
            writeback: Writeback::default(),
        }
    }

    /// Like [`new`](Self::new), with write-back after the first [`PACED_FIRST_STEP`] bytes,
    /// then every [`PACED_WRITEBACK_EVERY`] bytes, and its
    /// progress published to `progress`, for a writer that paces itself by the disk. The file
    /// must be new and written from its start: byte counts serve as file offsets.
    pub fn paced(file: File, progress: Arc<WritebackProgress>) -> WritebackFile {
        progress.learn_device(&file);
        WritebackFile {
            file,
            writeback: Writeback::paced(progress),
        }
    }

    /// Wraps `file` without any write-back: for pipes and devices, where it means nothing.
    pub fn unsynced(file: File) -> WritebackFile {
        let mut writeback = Writeback::default();
        writeback.off = true;
        WritebackFile { file, writeback }
    }

    /// [`paced`](Self::paced) when `progress` is given, else [`new`](Self::new).
    pub fn with_progress(file: File, progress: Option<Arc<WritebackProgress>>) -> WritebackFile {
        match progress {
            Some(p) => WritebackFile::paced(file, p),
            None => WritebackFile::new(file),
        }
    }

    /// The file itself. Bytes written straight to it do not count towards the write-back.
    pub fn get_ref(&self) -> &File {
        &self.file
    }

    /// The file itself, mutably; the same caveat as [`get_ref`](Self::get_ref).
    pub fn get_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Waits for the background write-back (returning its error) and flushes, without an
    /// fsync: the bytes are the kernel's to write back when it chooses.
    pub fn finish_unsynced(&mut self) -> io::Result<()> {
        self.writeback.finish()?;
        self.file.flush()
    }

    /// Waits for the background write-back (returning its error), then fsyncs the file.
    pub fn sync_all(&mut self) -> io::Result<()> {
        self.writeback.finish()?;
        self.file.flush()?;
        self.file.sync_all()
    }
}

impl Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.writeback.wrote(&self.file, n)?;
        Ok(n)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)?;
        self.writeback.wrote(&self.file, buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    #[test]
    fn a_paced_file_reports_how_far_the_disk_got() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("paced.bin");
        let progress = Arc::new(WritebackProgress::default());
        let mut f = WritebackFile::paced(File::create(&path).unwrap(), Arc::clone(&progress));
        let first = (PACED_FIRST_STEP / 2) as usize;
        f.write_all(&vec![3u8; first]).unwrap();
        assert_eq!(progress.backlog(), None, "nothing is known before the first step");
        let chunk = vec![3u8; (PACED_WRITEBACK_EVERY / 2) as usize];
        for _ in 0..12 {
            f.write_all(&chunk).unwrap();
        }
        let total = (first + 12 * chunk.len()) as u64;
        // Joining the thread (part of sync_all) waits for every step it was asked for, so the
        // progress is final here: every byte up to the last step is known to be on disk.
        f.sync_all().unwrap();
        if cfg!(target_os = "linux") {
            let backlog = progress.backlog().expect("the write-back started");
            assert!(backlog < PACED_WRITEBACK_EVERY, "backlog {backlog} of {total}");
            let rate = progress.disk_rate().expect("a step was timed");
            assert!(rate.is_finite() && rate > 0.0, "rate {rate}");
        }
        assert_eq!(fs::read(&path).unwrap().len() as u64, total);
    }

    #[test]
    fn a_long_step_is_waited_for_piece_by_piece() {
        let temp = tempfile::tempdir().unwrap();
        let mut file = File::create(temp.path().join("w.bin")).unwrap();
        let len = 5 * RATE_PIECE + 123;
        file.write_all(&vec![7u8; len as usize]).unwrap();
        let progress = WritebackProgress::simulated(Some((len, 0, 0)));
        let mut meter = RateMeter::default();
        progress.write_back(&file, &mut meter).unwrap();
        assert_eq!(progress.backlog(), Some(0), "every byte counted is on disk");
        if cfg!(target_os = "linux") {
            assert_eq!(meter.bytes, len, "each piece was timed");
            let rate = progress.disk_rate().expect("timed");
            assert_eq!(rate, meter.rate());
        }
        // Nothing new: nothing to do, and the speed stands.
        progress.write_back(&file, &mut meter).unwrap();
        assert_eq!(progress.backlog(), Some(0));
    }

    #[test]
    fn a_range_waited_for_too_long_shows_a_slower_disk() {
        // 1 GB/s measured: a 1 MiB piece should take about 1 ms.
        let p = WritebackProgress::simulated(Some((64 << 20, 1 << 30, 1_000_000_000)));
        let measured = p.disk_rate().unwrap();
        assert!((measured - (1u64 << 30) as f64).abs() < 1.0);
        // Writing 1 MiB back for 20 ms or more: no faster than 1 MiB per 20 ms.
        p.waiting_for.store(RATE_PIECE, Ordering::Release);
        p.waiting_since.store(1, Ordering::Release);
        std::thread::sleep(Duration::from_millis(20));
        let stalled = p.disk_rate().unwrap();
        assert!(stalled <= RATE_PIECE as f64 / 0.020, "{stalled}");
        // A wait shorter than the measured speed allows changes nothing (a range so long that
        // no wait on a busy machine could make it look slow).
        p.waiting_for.store(1 << 50, Ordering::Release);
        p.waiting_since.store(p.nanos_since_epoch() + 1, Ordering::Release);
        assert_eq!(p.disk_rate().unwrap(), measured);
        p.waiting_since.store(0, Ordering::Release);
        assert_eq!(p.disk_rate().unwrap(), measured);
    }

    #[test]
    fn each_device_keeps_its_last_measured_speed() {
        // Device numbers no real file system uses here: other tests remember real ones.
        let base = u64::MAX - 100;
        assert_eq!(remembered_rate(base), None);
        remember_rate(base, 100e6);
        remember_rate(base + 1, 2e9);
        remember_rate(base, 50e6);
        assert_eq!(remembered_rate(base), Some(50e6), "the last measurement");
        assert_eq!(remembered_rate(base + 1), Some(2e9));
        remember_rate(base + 2, 0.0);
        remember_rate(base + 2, f64::NAN);
        assert_eq!(remembered_rate(base + 2), None, "no speed is not a speed");
        // A file measured now is the lower of its own speed and the remembered one.
        let p = WritebackProgress::simulated(Some((0, 1 << 30, 1_000_000_000)));
        p.set_device(base);
        assert_eq!(p.disk_rate(), Some(50e6));
        let unmeasured = WritebackProgress::default();
        unmeasured.set_device(base + 1);
        assert_eq!(unmeasured.disk_rate(), Some(2e9), "known before the first piece");
    }

    #[test]
    fn a_progress_record_learns_its_device_from_a_folder_or_a_file() {
        let temp = tempfile::tempdir().unwrap();
        let folder = WritebackProgress::on_device_of(temp.path());
        let file = File::create(temp.path().join("f")).unwrap();
        let from_file = WritebackProgress::default();
        from_file.learn_device(&file);
        assert_eq!(folder.device.get(), from_file.device.get());
        assert_eq!(folder.device.get().is_some(), cfg!(unix));
        let missing = WritebackProgress::on_device_of(&temp.path().join("nothing/here"));
        assert_eq!(missing.device.get(), None, "no device, no memory: still usable");
        assert_eq!(missing.remembered_rate(), None);
    }

    #[test]
    fn a_paced_file_remembers_its_speed_for_the_next() {
        let mut meter = RateMeter::default();
        let p = WritebackProgress::default();
        let device = u64::MAX - 200;
        p.set_device(device);
        meter.add(RATE_PIECE, Duration::from_millis(1));
        p.remember(&meter);
        assert_eq!(remembered_rate(device), None, "one piece says little");
        meter.add(RATE_PIECE, Duration::from_millis(1));
        p.remember(&meter);
        assert_eq!(remembered_rate(device), Some(meter.rate()));
    }

    #[test]
    fn only_errors_of_an_unable_file_system_stop_the_pacing() {
        if cfg!(target_os = "linux") {
            for code in [libc::EINVAL, libc::ESPIPE, libc::ENOSYS, libc::EOPNOTSUPP] {
                assert!(unsupported(&io::Error::from_raw_os_error(code)), "{code}");
            }
            for code in [libc::EIO, libc::ENOSPC, libc::EDQUOT, libc::EBADF] {
                assert!(!unsupported(&io::Error::from_raw_os_error(code)), "{code}");
            }
            // A pipe cannot be synced: that is the error a paced write-back stops on.
            let (reader, _writer) = std::io::pipe().unwrap();
            let pipe = File::from(std::os::fd::OwnedFd::from(reader));
            assert!(unsupported(&write_range(&pipe, 0, 10).unwrap_err()));
        }
        assert!(!unsupported(&io::Error::other("x")));
    }

    #[test]
    fn the_rate_meter_sums_bytes_and_time() {
        let mut m = RateMeter::default();
        assert_eq!(m.rate(), 0.0, "nothing measured");
        m.add(1 << 20, Duration::from_millis(1));
        m.add(3 << 20, Duration::from_millis(3));
        assert!((m.rate() - (1u64 << 20) as f64 * 1000.0).abs() < 1.0);
        m.add(1, Duration::ZERO); // a piece that took no measurable time still counts as 1 ns
        assert!(m.rate().is_finite());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn write_range_returns_the_kernels_errors_and_skips_empty_ranges() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("r.bin");
        fs::write(&path, vec![1u8; 4096]).unwrap();
        // A descriptor opened read-only on a regular file is valid for sync_file_range; the
        // call must succeed on a written range and on an empty one.
        let file = File::open(&path).unwrap();
        write_range(&file, 0, 4096).unwrap();
        write_range(&file, 4096, 4096).unwrap();
        // Offsets beyond i64 are refused before the call.
        assert!(write_range(&file, u64::MAX - 1, u64::MAX).is_err());
        // A pipe is not a file: the kernel's error comes back as an error, not a crash.
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(reader));
        assert!(write_range(&pipe, 0, 10).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn start_writeback_starts_on_files_and_reports_the_kernels_errors() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("s.bin");
        let mut file = File::create(&path).unwrap();
        file.write_all(&[3u8; 8192]).unwrap();
        start_writeback(&file).unwrap();
        start_writeback(&file).unwrap(); // pages already on their way are skipped
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(reader));
        assert!(start_writeback(&pipe).is_err());
    }

    #[test]
    fn plain_files_start_their_write_back_every_step() {
        let temp = tempfile::tempdir().unwrap();
        let mut f = WritebackFile::new(File::create(temp.path().join("p.bin")).unwrap());
        let step = START_WRITEBACK_EVERY as usize;
        f.write_all(&vec![1u8; step - 1]).unwrap();
        assert_eq!(f.writeback.since_start, step as u64 - 1);
        f.write_all(&[2u8; 2]).unwrap();
        assert_eq!(f.writeback.since_start, 0, "a start was asked for");
        assert!(f.writeback.worker.is_none(), "no thread below WRITEBACK_EVERY");
        // Once the write-back thread runs (Linux), it takes over: no more counting.
        f.write_all(&vec![3u8; WRITEBACK_EVERY as usize]).unwrap();
        f.write_all(&vec![4u8; step - 1]).unwrap();
        if cfg!(target_os = "linux") {
            assert!(f.writeback.worker.is_some());
            assert_eq!(f.writeback.since_start, 0, "no starts beside the thread");
        }
        f.sync_all().unwrap();
        // A paced file leaves the write-back to its thread.
        let progress = Arc::new(WritebackProgress::default());
        let mut p = WritebackFile::paced(File::create(temp.path().join("q.bin")).unwrap(), progress);
        p.write_all(&vec![1u8; step + 1]).unwrap();
        assert_eq!(p.writeback.since_start, 0);
        p.sync_all().unwrap();
    }

    #[test]
    fn files_written_in_place_are_written_back_too() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let path = dir.join("in-place.bin");
        fs::write(&path, b"start").unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"-").unwrap();
        let mut f = WritebackFile::new(file);
        let chunk = vec![7u8; WRITEBACK_EVERY as usize + 1];
        f.write_all(&chunk).unwrap();
        assert_eq!(f.writeback.worker.is_some(), cfg!(target_os = "linux"));
        f.sync_all().unwrap();
        assert!(f.writeback.worker.is_none(), "sync_all waited for the thread");
        let back = fs::read(&path).unwrap();
        assert_eq!(&back[..6], b"start-");
        assert_eq!(back.len(), 6 + chunk.len());
        assert!(back[6..].iter().all(|&b| b == 7));
    }

    #[test]
    fn writeback_without_a_thread_finishes_at_once() {
        let mut w = Writeback::default();
        assert!(w.finish().is_ok());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_writeback_is_reported() {
        // fdatasync on a pipe fails (EINVAL): the error must reach the writer.
        let (_reader, writer) = io::pipe().unwrap();
        let file = File::from(std::os::fd::OwnedFd::from(writer));
        let every = WRITEBACK_EVERY as usize;

        let mut w = Writeback::default();
        assert!(w.wrote(&file, every).is_ok(), "the first request starts the thread");
        assert!(w.finish().is_err(), "finish returns the thread's error");
        assert!(w.finish().is_err(), "and keeps returning it");

        // Once the thread has stopped on its error, the next request reports it at once.
        let mut w = Writeback::default();
        w.wrote(&file, every).unwrap();
        while !w.worker.as_ref().unwrap().join.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(w.wrote(&file, every).is_err());
        // Again at the end: the kernel reports a write-back error once, so the final fsync
        // would succeed and a damaged file would be committed.
        assert!(w.finish().is_err(), "the error sticks");

        // A paced file's write-back stops pacing instead when the file cannot be synced
        // that way (sync_file_range on a pipe: ESPIPE); the final fsync still reports what
        // matters, and the writer, seeing no progress, compresses every block.
        let progress = Arc::new(WritebackProgress::default());
        let mut w = Writeback::paced(Arc::clone(&progress));
        w.wrote(&file, PACED_WRITEBACK_EVERY as usize).unwrap();
        assert!(w.finish().is_ok());
        assert_eq!(progress.disk_rate(), None, "a failed step is not timed");
        assert_eq!(progress.backlog(), Some(PACED_WRITEBACK_EVERY), "and nothing is synced");
    }
}
