//! Opening a table again without reading its footer.
//!
//! A 1000-row read of a 10-million-row table spends most of its time opening the file: reading
//! and checking a footer of some 100 KB and parsing its page index. Front ends that open a table
//! per call (R's `read_kpk_table`, Python's `read_table`) open it through here: the parsed index
//! of the last few files is kept, keyed by path, and reused while the file at that path is the
//! same file, unchanged. "Unchanged" is the file's identity and times, as `git` and DuckDB's
//! metadata cache judge it: same device and inode (an atomic replace makes a new inode), same
//! size (an append grows it), same modification and change times (any write sets them).
//!
//! Timestamps are coarse (a kernel tick, or seconds on some file systems), so a file changed
//! twice within one tick at the same size could look unchanged. As git does with "racily clean"
//! entries, an index is kept only for a file whose times are [`SETTLED`] in the past when it is
//! opened: a change after that moves the times on. The cache holds no file handle (a deleted
//! file's space is freed as usual), every open opens the file itself, and every block still
//! checks its checksum when read, but for small dictionaries an earlier reader of the same
//! unchanged file read, checked and decoded, which the index keeps for the next.

use crate::reader::{TableIndex, TableReader};
use kompakt::Result;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long a file must have been left alone before its index is kept.
pub const SETTLED: Duration = Duration::from_secs(2);
/// Indexes kept at most.
const ENTRIES: usize = 8;
/// Heap bytes of all kept indexes at most, and of one.
const TOTAL_BYTES: usize = 64 << 20;
const ENTRY_BYTES: usize = 16 << 20;

/// What says that the file at a path is still the one an index was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    device: u64,
    inode: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileId {
    #[cfg(unix)]
    fn of(file: &File) -> std::io::Result<Option<FileId>> {
        use std::os::unix::fs::MetadataExt;
        let m = file.metadata()?;
        Ok(Some(FileId {
            device: m.dev(),
            inode: m.ino(),
            len: m.size(),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        }))
    }

    /// Elsewhere, nothing is cached.
    #[cfg(not(unix))]
    fn of(_file: &File) -> std::io::Result<Option<FileId>> {
        Ok(None)
    }

    /// Whether both times are at least [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let latest = self.modified.max(self.changed);
        let (Ok(secs), Ok(nanos)) = (u64::try_from(latest.0), u32::try_from(latest.1)) else {
            return false;
        };
        Duration::new(secs, nanos.min(999_999_999)) + SETTLED <= now
    }
}

struct Entry {
    path: PathBuf,
    id: FileId,
    index: TableIndex,
    bytes: usize,
    last_used: u64,
}

#[derive(Default)]
struct Cache {
    entries: Vec<Entry>,
    clock: u64,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    clock: 0,
});

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    // A panic elsewhere while the lock was held leaves a valid cache (entries are whole).
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Cache {
    fn get(&mut self, path: &Path, id: &FileId) -> Option<TableIndex> {
        self.clock += 1;
        let at = self.entries.iter().position(|e| e.path == path)?;
        if self.entries[at].id != *id {
            self.entries.swap_remove(at);
            return None;
        }
        self.entries[at].last_used = self.clock;
        Some(self.entries[at].index.clone())
    }

    fn put(&mut self, path: &Path, id: FileId, index: TableIndex) {
        let bytes = index.heap_size();
        if bytes > ENTRY_BYTES {
            return;
        }
        self.entries.retain(|e| e.path != path);
        while self.entries.len() >= ENTRIES || self.bytes() + bytes > TOTAL_BYTES {
            let Some(oldest) = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used) else {
                break;
            };
            self.entries.swap_remove(oldest);
        }
        self.clock += 1;
        self.entries.push(Entry {
            path: path.to_path_buf(),
            id,
            index,
            bytes,
            last_used: self.clock,
        });
    }

    fn bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes).sum()
    }
}

// `open_cached` is here, not in `reader`, so that the dependency goes one way: the cache builds
// on the reader (it keeps the `TableIndex` a reader parsed and opens readers from it), and the
// reader knows nothing of the cache.
impl TableReader {
    /// Like [`TableReader::open`], but a file this process opened before and has not changed
    /// since (same device, inode, size, modification and change times) is opened without
    /// reading its footer again: what repeated small reads of one file cost most
    /// ([`crate::open_cache`] says when an index is kept).
    pub fn open_cached(path: impl AsRef<Path>) -> Result<Self> {
        open(path.as_ref())
    }
}

/// [`TableReader::open_cached`].
pub(crate) fn open(path: &Path) -> Result<TableReader> {
    crate::journal::recover_if_needed(path)?;
    let file = File::open(path)?;
    let Some(id) = FileId::of(&file)? else {
        return TableReader::from_file(file);
    };
    let kept = cache().get(path, &id);
    if let Some(index) = kept {
        return TableReader::with_index(Arc::new(file), index);
    }
    let reader = TableReader::from_file(file)?;
    if id.settled(SystemTime::now()) {
        cache().put(path, id, reader.shared_index());
    }
    Ok(reader)
}

/// Forgets every kept index (tests).
#[cfg(test)]
fn clear() {
    cache().entries.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{write_table_file, TableOptions};
    use arrow_array::{Int64Array, RecordBatch};
    use std::sync::Arc;

    /// The cache is one per process: its tests take turns.
    static TURN: Mutex<()> = Mutex::new(());

    fn batch(values: Vec<i64>) -> RecordBatch {
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(values)) as _)]).unwrap()
    }

    fn write(path: &Path, values: Vec<i64>) {
        let b = batch(values);
        write_table_file(path, b.schema(), [Ok(b)], TableOptions::default()).unwrap();
    }

    fn column(path: &Path) -> Vec<i64> {
        let t = TableReader::open_cached(path).unwrap();
        let (_, batches) = t.read(None, 0..t.num_rows(), 1).unwrap();
        batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect()
    }

    /// Sets both times of `path` well in the past, as if it were written long ago.
    fn settle(path: &Path) {
        let old = SystemTime::now() - Duration::from_secs(60);
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn settled_needs_both_times_in_the_past() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let id = |m: i64, c: i64| FileId {
            device: 1,
            inode: 1,
            len: 1,
            modified: (m, 0),
            changed: (c, 0),
        };
        assert!(id(990, 990).settled(now));
        assert!(id(998, 998).settled(now));
        assert!(!id(999, 990).settled(now));
        assert!(!id(990, 999).settled(now));
        assert!(!id(2_000, 990).settled(now));
        assert!(!id(-5, -5).settled(now), "times before 1970 are not trusted");
    }

    #[test]
    fn a_changed_or_replaced_file_is_read_again() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        clear();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.kpk");
        write(&path, vec![1, 2, 3]);
        assert_eq!(column(&path), [1, 2, 3]);
        // Written just now: not settled, so not kept.
        assert!(cache().entries.is_empty());

        // The change time cannot be set back, so "settled" is judged at a later `now` here.
        let file = File::open(&path).unwrap();
        let id = FileId::of(&file).unwrap().unwrap();
        assert!(id.settled(SystemTime::now() + SETTLED));
        let index = TableReader::from_file(file).unwrap().shared_index();
        cache().put(&path, id, index);
        assert_eq!(column(&path), [1, 2, 3]);
        assert_eq!(cache().entries.len(), 1);

        // Replaced by a new file of the same size (a new inode; the times too).
        let tmp = dir.path().join("t.tmp");
        write(&tmp, vec![4, 5, 6]);
        settle(&tmp);
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(column(&path), [4, 5, 6]);

        // Appended to: the size changes.
        let kept = {
            let file = File::open(&path).unwrap();
            let id = FileId::of(&file).unwrap().unwrap();
            (id, TableReader::from_file(file).unwrap().shared_index())
        };
        cache().put(&path, kept.0, kept.1);
        crate::append_table_file(&path, [Ok(batch(vec![7]))], TableOptions::default()).unwrap();
        assert_eq!(column(&path), [4, 5, 6, 7]);
    }

    #[test]
    fn readers_of_one_index_share_its_small_dictionaries_only() {
        use arrow_array::types::Int32Type;
        use arrow_array::{Array, DictionaryArray};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.kpk");
        let small: DictionaryArray<Int32Type> = (0..6000).map(|i| ["a", "b", "c"][i % 3]).collect();
        let words: Vec<String> = (0..6000).map(|i| format!("a longer level, number {i:06}")).collect();
        let large: DictionaryArray<Int32Type> = (0..6000).map(|i| words[(i * 7) % 6000].as_str()).collect();
        let b = RecordBatch::try_from_iter([
            ("small", Arc::new(small) as arrow_array::ArrayRef),
            ("large", Arc::new(large) as arrow_array::ArrayRef),
        ])
        .unwrap();
        write_table_file(&path, b.schema(), [Ok(b.clone())], TableOptions::default()).unwrap();
        let first = TableReader::open(&path).unwrap();
        let (_, got) = first.read(None, 0..1000, 1).unwrap();
        let index = first.shared_index();
        {
            let shared = index.shared_dictionaries.lock().unwrap();
            assert!(shared.contains_key(&0), "the 3 levels are shared");
            assert!(!shared.contains_key(&1), "6000 levels of 30 bytes are not");
        }
        let source: Arc<dyn kompakt::stream::ReadAt> = Arc::new(File::open(&path).unwrap());
        let second = TableReader::with_index(source, index).unwrap();
        let (_, again) = second.read(None, 0..1000, 1).unwrap();
        assert_eq!(got, again);
        assert_eq!(again[0].column(0).len(), 1000);
        assert_eq!(again[0], b.slice(0, 1000));
    }

    #[test]
    fn the_cache_is_bounded() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        clear();
        let dir = tempfile::tempdir().unwrap();
        for i in 0..ENTRIES + 3 {
            let path = dir.path().join(format!("{i}.kpk"));
            write(&path, vec![i as i64]);
            let file = File::open(&path).unwrap();
            let id = FileId::of(&file).unwrap().unwrap();
            cache().put(&path, id, TableReader::from_file(file).unwrap().shared_index());
            assert_eq!(column(&path), [i as i64]);
        }
        let c = cache();
        assert_eq!(c.entries.len(), ENTRIES);
        assert!(c.entries.iter().all(|e| !e.path.ends_with("0.kpk")));
    }
}
