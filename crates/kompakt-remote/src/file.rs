//! One object read by byte ranges: [`RemoteFile`].

use crate::connect::{connect, describe};
use crate::runtime::{block_on, spawn};
use bytes::Bytes;
use kompakt::stream::ReadAt;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use url::Url;

/// Bytes fetched from the end at open: a footer of a few thousand blocks or a table of a few
/// hundred columns fits, and one request then opens the file.
pub const TAIL_LEN: u64 = 256 << 10;

/// Bytes fetched from the start at open, alongside the tail: where a file's header is.
pub const HEAD_LEN: u64 = 4 << 10;

/// A read that misses the prefetched ranges fetches at least this much: below it a request
/// costs its round trip whatever its size, and sequential readers read on into what it got.
pub const MIN_REQUEST: u64 = 64 << 10;

/// What prefetched ranges may hold at once, fetched or on their way; ranges beyond it are
/// read when asked for.
pub const PREFETCH_LIMIT: u64 = 256 << 20;

/// The most one prefetch request asks for: a long run of ranges goes out as several requests
/// in flight at once, which a server (S3 above all) serves faster than one stream.
pub const MAX_REQUEST: u64 = 16 << 20;

/// Requests made and bytes received by one [`RemoteFile`], opening included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    pub requests: u64,
    pub bytes: u64,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    fn add(&self, requests: u64, bytes: u64) {
        self.requests.fetch_add(requests, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// Prefetched ranges: fetched and waiting to be read, or on their way. What they hold is
/// bounded by [`PREFETCH_LIMIT`]; the oldest go first.
#[derive(Default)]
struct Fetched {
    /// By offset.
    held: Vec<Held>,
    held_bytes: u64,
    /// Requests in flight, of this process only (see [`Shared::lock`]).
    pending: Vec<Range<u64>>,
    pending_bytes: u64,
    arrivals: u64,
    /// The process whose requests `pending` lists (see [`Shared::lock`]).
    owner: u32,
}

struct Held {
    start: u64,
    data: Bytes,
    arrival: u64,
}

impl Fetched {
    fn find(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let i = self.held.partition_point(|h| h.start <= offset).checked_sub(1)?;
        let held = &self.held[i];
        let from = usize::try_from(offset - held.start).ok()?;
        held.data.get(from..from.checked_add(len)?)
    }

    /// Whether a request in flight will bring all of `range`.
    fn awaits(&self, range: &Range<u64>) -> bool {
        self.pending
            .iter()
            .any(|p| p.start <= range.start && range.end <= p.end)
    }

    fn has(&self, range: &Range<u64>) -> bool {
        self.awaits(range) || self.find(range.start, (range.end - range.start) as usize).is_some()
    }

    fn insert(&mut self, start: u64, data: Bytes) {
        let len = data.len() as u64;
        while !self.held.is_empty() && self.held_bytes + self.pending_bytes + len > PREFETCH_LIMIT {
            let oldest = (0..self.held.len())
                .min_by_key(|&i| self.held[i].arrival)
                .expect("not empty");
            self.held_bytes -= self.held.remove(oldest).data.len() as u64;
        }
        let i = self.held.partition_point(|h| h.start < start);
        self.arrivals += 1;
        let arrival = self.arrivals;
        self.held.insert(i, Held { start, data, arrival });
        self.held_bytes += len;
    }

    fn depart(&mut self, range: &Range<u64>) {
        if let Some(i) = self.pending.iter().position(|p| p == range) {
            self.pending.swap_remove(i);
            self.pending_bytes -= range.end - range.start;
        }
    }
}

/// A prefetch request's end, reported when dropped (see [`Shared::arrive`]).
struct Arrival {
    shared: Arc<Shared>,
    range: Option<Range<u64>>,
    data: Option<Bytes>,
}

impl Drop for Arrival {
    fn drop(&mut self) {
        if let Some(range) = self.range.take() {
            self.shared.arrive(range, self.data.take());
        }
    }
}

/// What a file shares with its prefetch requests, which outlive the call that made them.
#[derive(Default)]
struct Shared {
    fetched: Mutex<Fetched>,
    /// Signalled whenever a prefetch request ends, with data or not.
    arrived: Condvar,
    traffic: Counters,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Fetched> {
        let mut fetched = self.fetched.lock().unwrap_or_else(|e| e.into_inner());
        // A child made by `fork` inherits its parent's pending requests but not the requests:
        // they never arrive here, so they neither count nor are waited for.
        let pid = std::process::id();
        if fetched.owner != pid {
            fetched.pending.clear();
            fetched.pending_bytes = 0;
            fetched.owner = pid;
        }
        fetched
    }

    /// A prefetch request has ended: its data (when it came whole) is kept, and readers
    /// waiting for it look again. A failure is left to the read that needs the range, which
    /// fetches it itself and reports an error in its own words.
    fn arrive(&self, range: Range<u64>, result: Option<Bytes>) {
        let mut fetched = self.lock();
        fetched.depart(&range);
        if let Some(data) = result {
            self.traffic.add(1, data.len() as u64);
            if data.len() as u64 == range.end - range.start {
                fetched.insert(range.start, data);
            }
        }
        drop(fetched);
        self.arrived.notify_all();
    }
}

/// An object on S3 (or any server speaking its API) or behind an HTTP(S) URL, read by byte
/// ranges as a [`ReadAt`] source: every kompakt reader opens it as it opens a file.
///
/// Opening makes one request, a suffix range that returns the size, the ETag and the last
/// [`TAIL_LEN`] bytes (where the footer is). Every later request carries `If-Match` with that
/// ETag, so an object replaced while it is read fails the read with an error saying so,
/// instead of mixing two versions.
pub struct RemoteFile {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    size: u64,
    e_tag: Option<String>,
    /// What the object was when opened: every response must be of it (see [`Pin`]).
    pin: Arc<Pin>,
    tail_start: u64,
    tail: Bytes,
    shared: Arc<Shared>,
    /// Prefetch requests in flight, aborted when the file is dropped: a scan that stops early
    /// does not leave downloads running.
    /// With the process that made them: a child made by `fork` leaves its parent's alone.
    requests: Mutex<(u32, Vec<tokio::task::JoinHandle<()>>)>,
}

impl Drop for RemoteFile {
    fn drop(&mut self) {
        let (owner, requests) = self.requests.get_mut().unwrap_or_else(|e| e.into_inner());
        if *owner == std::process::id() {
            requests.drain(..).for_each(|r| r.abort());
        }
    }
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFile")
            .field("url", &self.url)
            .field("size", &self.size)
            .field("e_tag", &self.e_tag)
            .finish_non_exhaustive()
    }
}

impl RemoteFile {
    /// Opens the object at `url` (`s3://bucket/key`, `http(s)://host/path`). Credentials,
    /// region and endpoint of S3 come from the AWS environment variables.
    pub fn open(url: &Url) -> io::Result<RemoteFile> {
        let (store, path) = connect(url)?;
        RemoteFile::open_in(store, path, url.as_str())
    }

    /// Opens the object at `path` of `store`; `url` names it in messages.
    pub fn open_in(store: Arc<dyn ObjectStore>, path: ObjectPath, url: &str) -> io::Result<RemoteFile> {
        let mut file = RemoteFile {
            url: url.to_string(),
            store,
            path,
            size: 0,
            e_tag: None,
            pin: Arc::default(),
            tail_start: 0,
            tail: Bytes::new(),
            shared: Arc::default(),
            requests: Mutex::default(),
        };
        // The tail and the head at once: one round trip opens a file of any size.
        let get = |range: GetRange| {
            let options = GetOptions {
                range: Some(range),
                ..GetOptions::default()
            };
            async {
                let result = file.store.get_opts(&file.path, options).await?;
                let (meta, range) = (result.meta.clone(), result.range.clone());
                Ok::<_, object_store::Error>((meta, range, result.bytes().await?))
            }
        };
        let deadline = request_deadline(TAIL_LEN + HEAD_LEN);
        let (fetched, head) = block_on(within(deadline, url, "its first bytes", async {
            futures::join!(get(GetRange::Suffix(TAIL_LEN)), get(GetRange::Bounded(0..HEAD_LEN)))
        }))??;
        let (meta, range, tail) = match fetched {
            Ok(got) => got,
            // An empty object has no suffix to give: servers answer 416, or (moto, some
            // others) the whole empty object. Its metadata alone, then; the reader calls a file
            // of no bytes what it is, a truncated one. A non-empty object answered whole is a
            // server that ignores ranges.
            Err(e) if is_unsatisfiable(&e) || is_whole_answer(&e) => {
                let meta = block_on(file.store.head(&file.path))?.map_err(|e| describe(e, &file.url))?;
                file.shared.traffic.add(1, 0);
                if meta.size != 0 {
                    return Err(describe(e, &file.url));
                }
                (meta, 0..0, Bytes::new())
            }
            Err(e @ object_store::Error::NotFound { .. }) if !e.to_string().contains("NoSuchBucket") => {
                // The 404 of a missing bucket does not always carry its code: ask the bucket.
                let listed = block_on(async { file.store.list_with_delimiter(None).await })?;
                let what = match listed {
                    Err(l) if l.to_string().contains("NoSuchBucket") => "no such bucket",
                    _ => "no such object",
                };
                return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: {what}", file.url)));
            }
            Err(e) => return Err(describe(e, &file.url)),
        };
        file.shared.traffic.add(1, tail.len() as u64);
        if range.end != meta.size || tail.len() as u64 != range.end - range.start {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: the server answered the request for the last {} bytes with bytes {}..{} of {}",
                    file.url, TAIL_LEN, range.start, range.end, meta.size
                ),
            ));
        }
        let pin = Pin::of(&meta);
        // Nothing names this version of the object: two requests could see two versions, and
        // block checksums cannot tell (a block of the same shape from the other version is
        // sound). One answer is safe; more are refused.
        if !pin.pins() && tail.len() as u64 != meta.size {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{url}: the server sends neither an ETag nor a Last-Modified date, so a read of \
                     this {} byte object in several requests could mix two versions of it; download \
                     it whole and read the file",
                    meta.size
                ),
            ));
        }
        // The head counts only when it comes from the same version, and the tail lacks it.
        if let Ok((head_meta, head_range, head)) = head {
            file.shared.traffic.add(1, head.len() as u64);
            let whole = head_range.start == 0 && head.len() as u64 == head_range.end;
            if whole && pin.matches(&head_meta) && head_range.end < range.start {
                file.lock().insert(0, head);
            }
        } else {
            file.shared.traffic.add(1, 0);
        }
        file.size = meta.size;
        file.e_tag = meta.e_tag;
        file.pin = Arc::new(pin);
        file.tail_start = range.start;
        file.tail = tail;
        Ok(file)
    }

    /// The URL the file was opened by.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The object's ETag when it was opened (every read is pinned to it).
    pub fn e_tag(&self) -> Option<&str> {
        self.e_tag.as_deref()
    }

    /// Requests made and bytes received so far.
    pub fn traffic(&self) -> Traffic {
        Traffic {
            requests: self.shared.traffic.requests.load(Ordering::Relaxed),
            bytes: self.shared.traffic.bytes.load(Ordering::Relaxed),
        }
    }

    /// A request for `range`, conditional on the version opened: its ETag, or without one its
    /// Last-Modified date (a server may ignore either; every answer is checked too).
    fn get_options(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: self.e_tag.clone(),
            if_unmodified_since: self.pin.last_modified.filter(|_| self.e_tag.is_none()),
            ..GetOptions::default()
        }
    }

    /// Fetches `range` (one request), checked to be what was asked for, of the version opened.
    fn fetch(&self, range: Range<u64>) -> io::Result<Bytes> {
        let want = range.end - range.start;
        let options = self.get_options(range.clone());
        let what = format!("bytes {}..{}", range.start, range.end);
        let data = block_on(within(request_deadline(want), &self.url, &what, async {
            let result = self.store.get_opts(&self.path, options).await?;
            if !self.pin.matches(&result.meta) {
                return Ok(Err(changed(&self.url)));
            }
            result.bytes().await.map(Ok)
        }))??
        .map_err(|e| describe(e, &self.url))??;
        self.shared.traffic.add(1, data.len() as u64);
        self.check_len(&range, data.len() as u64, want)?;
        Ok(data)
    }

    fn check_len(&self, range: &Range<u64>, got: u64, want: u64) -> io::Result<()> {
        if got == want {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{}: asked for bytes {}..{}, the server sent {got} bytes",
                self.url, range.start, range.end
            ),
        ))
    }

    fn copy_from_tail(&self, buf: &mut [u8], offset: u64) -> bool {
        if offset < self.tail_start {
            return false;
        }
        let from = (offset - self.tail_start) as usize;
        buf.copy_from_slice(&self.tail[from..from + buf.len()]);
        true
    }

    fn lock(&self) -> MutexGuard<'_, Fetched> {
        self.shared.lock()
    }
}

impl ReadAt for RemoteFile {
    fn size(&self) -> io::Result<u64> {
        Ok(self.size)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|end| *end <= self.size)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{}: a read past the end of the object ({} bytes)", self.url, self.size),
                )
            })?;
        if buf.is_empty() || self.copy_from_tail(buf, offset) {
            return Ok(());
        }
        {
            let wanted = offset..end;
            let mut fetched = self.lock();
            loop {
                if let Some(data) = fetched.find(offset, buf.len()) {
                    buf.copy_from_slice(data);
                    return Ok(());
                }
                if !fetched.awaits(&wanted) {
                    break;
                }
                fetched = self.shared.arrived.wait(fetched).unwrap_or_else(|e| e.into_inner());
            }
        }
        // At least MIN_REQUEST, never into the tail (which is here already).
        let fetch_end = end.max(offset.saturating_add(MIN_REQUEST).min(self.tail_start));
        let data = self.fetch(offset..fetch_end)?;
        buf.copy_from_slice(&data[..buf.len()]);
        if fetch_end > end {
            self.lock().insert(offset, data);
        }
        Ok(())
    }

    fn prefetch(&self, ranges: &[Range<u64>]) {
        // Only what is neither here nor on its way, within the prefetch limit; requests go
        // out at once and the call returns: the reads that need the ranges wait for them.
        let merged = {
            let mut fetched = self.lock();
            let mut wanted = Vec::new();
            let mut total = fetched.pending_bytes;
            for r in ranges {
                let r = r.start..r.end.min(self.tail_start);
                if r.is_empty() || fetched.has(&r) {
                    continue;
                }
                total += r.end - r.start;
                if total > PREFETCH_LIMIT {
                    break;
                }
                wanted.push(r);
            }
            let merged = merge_ranges(&wanted, MIN_REQUEST, MAX_REQUEST);
            for range in &merged {
                fetched.pending_bytes += range.end - range.start;
                fetched.pending.push(range.clone());
            }
            merged
        };
        // One request per merged range (object_store's get_ranges, which coalesces too, cannot
        // pin the ETag).
        for range in merged {
            let (store, path, shared) = (Arc::clone(&self.store), self.path.clone(), Arc::clone(&self.shared));
            let pin = Arc::clone(&self.pin);
            let deadline = request_deadline(range.end - range.start);
            let options = self.get_options(range.clone());
            let unsent = range.clone();
            let request = async move {
                // Arrives when dropped: a request that fails, panics or is aborted still ends
                // its pending entry, so no reader waits for it forever.
                let mut arrival = Arrival {
                    shared,
                    range: Some(range),
                    data: None,
                };
                // An answer of another version, or one too slow, is dropped: the read that
                // needs it asks again and reports what it finds.
                let got = tokio::time::timeout(deadline, async {
                    let result = store.get_opts(&path, options).await?;
                    if !pin.matches(&result.meta) {
                        return Ok(None);
                    }
                    result.bytes().await.map(Some)
                })
                .await;
                arrival.data = got.ok().and_then(|r: object_store::Result<_>| r.ok()).flatten();
            };
            match spawn(request) {
                Ok(handle) => {
                    let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
                    let pid = std::process::id();
                    if requests.0 != pid {
                        *requests = (pid, Vec::new());
                    }
                    requests.1.retain(|h| !h.is_finished());
                    requests.1.push(handle);
                }
                // No runtime, no request: the read that needs the range fetches it itself.
                Err(_) => self.shared.arrive(unsent, None),
            }
        }
    }
}

/// Ascending ranges merged where the gap between two is under `gap` and the two together span
/// at most `max_len`: one request then fetches both, which costs less than a second round
/// trip, and long runs still go out as several requests at once.
pub fn merge_ranges(ranges: &[Range<u64>], gap: u64, max_len: u64) -> Vec<Range<u64>> {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted.into_iter().filter(|r| r.start < r.end) {
        match merged.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) && r.end.max(last.end) - last.start <= max_len => {
                last.end = last.end.max(r.end)
            }
            _ => merged.push(r),
        }
    }
    merged
}

/// What names the version of an object a file was opened at: its size, its ETag and its
/// Last-Modified date, each where the server gives one. Every response must agree with it,
/// whatever the server made of the request's conditions.
#[derive(Debug, Default)]
struct Pin {
    size: u64,
    e_tag: Option<String>,
    last_modified: Option<chrono::DateTime<chrono::Utc>>,
}

impl Pin {
    fn of(meta: &object_store::ObjectMeta) -> Pin {
        Pin {
            size: meta.size,
            e_tag: meta.e_tag.clone(),
            last_modified: known_date(meta),
        }
    }

    /// Whether anything but the size names the version.
    fn pins(&self) -> bool {
        self.e_tag.is_some() || self.last_modified.is_some()
    }

    fn matches(&self, meta: &object_store::ObjectMeta) -> bool {
        meta.size == self.size
            && (self.e_tag.is_none() || meta.e_tag.is_none() || meta.e_tag == self.e_tag)
            && (self.last_modified.is_none() || known_date(meta) == self.last_modified)
    }
}

/// A response's Last-Modified date, `None` when it sent none (object_store gives the epoch).
fn known_date(meta: &object_store::ObjectMeta) -> Option<chrono::DateTime<chrono::Utc>> {
    Some(meta.last_modified).filter(|d| d.timestamp() != 0 || d.timestamp_subsec_nanos() != 0)
}

fn changed(url: &str) -> io::Error {
    io::Error::other(format!(
        "{url}: the object changed while it was read (its size, ETag or Last-Modified date is not \
         what it was when opened); open it again"
    ))
}

/// The longest a request for `bytes` may take, its answer included: 30 seconds, plus a second
/// for every MiB past the first 30 (a server that sends less than 1 MiB/s is taken for one
/// that stalls, or drips bytes to hold a reader). `KOMPAKT_REQUEST_TIMEOUT` (seconds) sets
/// the 30.
pub fn request_deadline(bytes: u64) -> std::time::Duration {
    let base = std::env::var("KOMPAKT_REQUEST_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(30.0);
    std::time::Duration::from_secs_f64(base + (bytes >> 20) as f64)
}

/// `work` within `deadline`; a timed-out request is an error naming `what` of `url`.
pub(crate) async fn within<T>(
    deadline: std::time::Duration,
    url: &str,
    what: &str,
    work: impl std::future::Future<Output = T>,
) -> io::Result<T> {
    tokio::time::timeout(deadline, work).await.map_err(|_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "{url}: {what} did not arrive within {:.0} s (a request may take 30 s plus 1 s per MiB; \
                 KOMPAKT_REQUEST_TIMEOUT sets the 30): the server stalls or sends too slowly",
                deadline.as_secs_f64()
            ),
        )
    })
}

/// object_store's error for a 200 answer with the whole object to a range request.
fn is_whole_answer(e: &object_store::Error) -> bool {
    e.to_string().contains("non-partial response")
}

fn is_unsatisfiable(e: &object_store::Error) -> bool {
    // object_store reports a 416 as a generic error; its text names the status.
    let text = e.to_string();
    text.contains("416") || text.contains("Range Not Satisfiable") || text.contains("InvalidRange")
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::PutPayload;
    use proptest::prelude::*;

    fn put(store: &Arc<dyn ObjectStore>, key: &str, data: Vec<u8>) {
        block_on(store.put(&ObjectPath::from(key), PutPayload::from(data)))
            .unwrap()
            .unwrap();
    }

    fn sample(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn reads_every_range_like_memory() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let data = sample(3 * TAIL_LEN as usize + 12_345);
        put(&store, "a/x.kpk", data.clone());
        let file = RemoteFile::open_in(Arc::clone(&store), "a/x.kpk".into(), "mem://a/x.kpk").unwrap();
        assert_eq!(file.size().unwrap(), data.len() as u64);
        assert_eq!(
            file.traffic(),
            Traffic {
                requests: 2,
                bytes: TAIL_LEN + HEAD_LEN
            }
        );
        let mut buf = vec![0u8; 1000];
        for offset in [0, 5, TAIL_LEN - 500, data.len() as u64 - 1000, 2 * TAIL_LEN + 7] {
            file.read_exact_at(&mut buf, offset).unwrap();
            assert_eq!(buf[..], data[offset as usize..offset as usize + 1000]);
        }
        let e = file.read_exact_at(&mut buf, data.len() as u64 - 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("mem://a/x.kpk"), "{e}");
    }

    #[test]
    fn a_small_file_is_opened_and_read_with_one_request() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        put(&store, "small", sample(5000));
        let file = RemoteFile::open_in(Arc::clone(&store), "small".into(), "mem://small").unwrap();
        let mut buf = vec![0u8; 5000];
        file.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(buf, sample(5000));
        assert_eq!(file.traffic().requests, 2);
        put(&store, "empty", Vec::new());
        let empty = RemoteFile::open_in(Arc::clone(&store), "empty".into(), "mem://empty").unwrap();
        assert_eq!(empty.size().unwrap(), 0);
        empty.read_exact_at(&mut [], 0).unwrap();
    }

    #[test]
    fn prefetched_ranges_are_merged_and_then_read_without_requests() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let data = sample(8 << 20);
        put(&store, "big", data.clone());
        let file = RemoteFile::open_in(Arc::clone(&store), "big".into(), "mem://big").unwrap();
        // Two close ranges (one request) and a far one (another).
        let ranges = [1000..2000, 3000..9000, 4_000_000..4_100_000];
        file.prefetch(&ranges);
        // The reads wait for the requests in flight instead of making their own.
        for r in ranges.clone() {
            let mut buf = vec![0u8; (r.end - r.start) as usize];
            file.read_exact_at(&mut buf, r.start).unwrap();
            assert_eq!(buf[..], data[r.start as usize..r.end as usize]);
        }
        assert_eq!(file.traffic().requests, 4);
        // Prefetching what is here already asks for nothing.
        file.prefetch(&ranges);
        assert_eq!(file.traffic().requests, 4);
    }

    #[test]
    fn a_replaced_object_fails_the_read_instead_of_mixing_versions() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        put(&store, "k", sample(2 << 20));
        let file = RemoteFile::open_in(Arc::clone(&store), "k".into(), "mem://k").unwrap();
        put(&store, "k", vec![1u8; 2 << 20]);
        // (Past the head, which was fetched with the tail at open.)
        let e = file.read_exact_at(&mut [0u8; 100], 1 << 20).unwrap_err();
        assert!(e.to_string().contains("changed"), "{e}");
        assert!(e.to_string().contains("mem://k"), "{e}");
        // A prefetch that fails leaves the read to fetch and report, instead of waiting.
        let range = (1 << 20)..(1 << 20) + 5000;
        file.prefetch(std::slice::from_ref(&range));
        let e = file.read_exact_at(&mut [0u8; 100], (1 << 20) + 10).unwrap_err();
        assert!(e.to_string().contains("changed"), "{e}");
    }

    #[test]
    fn prefetched_ranges_stay_within_the_limit_dropping_the_oldest() {
        let mut fetched = Fetched::default();
        // Zeroed allocations: pages never touched, so no memory is used.
        let third = PREFETCH_LIMIT / 3 + 1;
        for i in 0..3u64 {
            fetched.insert(i * third, Bytes::from(vec![0u8; third as usize]));
        }
        assert!(fetched.held_bytes <= PREFETCH_LIMIT);
        assert!(fetched.find(0, 10).is_none(), "the oldest is dropped");
        assert!(fetched.find(third, 10).is_some() && fetched.find(2 * third, 10).is_some());
    }

    #[test]
    fn a_missing_object_is_not_found_naming_the_url() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let e = RemoteFile::open_in(store, "nope".into(), "mem://nope").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("mem://nope"), "{e}");
    }

    proptest! {
        #[test]
        fn merged_ranges_cover_exactly_and_keep_gaps(
            mut ranges in proptest::collection::vec((0u64..10_000, 1u64..500), 0..20),
            gap in 0u64..300,
            max_len in 1u64..3000,
        ) {
            ranges.sort();
            let ranges: Vec<Range<u64>> = ranges.into_iter().map(|(s, l)| s..s + l).collect();
            let merged = merge_ranges(&ranges, gap, max_len);
            for r in &ranges {
                prop_assert!(merged.iter().any(|m| m.start <= r.start && r.end <= m.end));
            }
            for m in &merged {
                // Longer than max_len only when one range is.
                prop_assert!(m.end - m.start <= max_len || ranges.contains(m));
            }
            for w in merged.windows(2) {
                prop_assert!(w[1].start > w[0].end + gap || w[1].end.max(w[0].end) - w[0].start > max_len);
            }
        }
    }
}
