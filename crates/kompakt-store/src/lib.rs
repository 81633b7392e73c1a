//! The object store: a content-addressed key-value cache in a local folder.
//!
//! Keys (any UTF-8 string, grouped in namespaces) point at objects; an object is a kompakt
//! file addressed by its [`ContentHash`], so equal values are stored once whatever codec wrote
//! them (except values of at most [`KEY_VALUE_MAX`] bytes stored, kept in their key's row: once
//! per key). Small objects live inside the index (SQLite, WAL mode), the smallest in their key's
//! row; large ones are files in a fan-out folder. The layout is specified in the repository's `docs/FORMAT.md` ("Object store").
//!
//! ```text
//! store/
//!   kompakt-store.json     configuration: layout version, hash, key encoding, default codec
//!   index.sqlite           keys (with values of up to 1 KiB), object table, bytes of small objects
//!   objects/ab/ab…ef.kpk   large objects, one kompakt file each
//!   tmp/                   objects being written
//! ```
//!
//! Several processes may use one store at once: every change is one SQLite transaction, a
//! large object is renamed into place inside the transaction that points a key at it, and
//! [`Store::gc`] deletes unreferenced objects inside one transaction, so it never removes an
//! object a concurrent writer is about to reference.
//!
//! ```
//! use kompakt_store::{Store, StoreOptions};
//! let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path().join("cache"), StoreOptions::default())?;
//! store.set_bytes("objects", "greeting", b"hello")?;
//! assert_eq!(store.get_bytes("objects", "greeting")?.as_deref(), Some(&b"hello"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod content_store;
mod dictionaries;
mod error;
mod index;
mod maintenance;
mod objects;
mod setup;

pub use config::{Config, CONFIG_FILE, HASH_ALGORITHM, KEY_ENCODING, STORE_VERSION};
pub use content_store::{ContentStore, StoreSummary};
pub use dictionaries::{DictionaryTrial, DICTIONARY_VALUE_MAX, MAX_SLOWDOWN, MIN_GAIN};
pub use error::{Error, Result};
pub use index::{Entry, INDEX_FILE, INDEX_VERSION, INDEX_VERSION_DICTIONARIES};
pub use maintenance::{GcReport, ReduceReport, StoreInfo, StoreVerifyReport};
pub use objects::{hash_of_file_name, Spill, Spilled, TempObject};

use dictionaries::StoreDictionaries;
use index::ObjectRow;
use kompakt::codec::{CodecSpec, Dictionaries, Dictionary, DictionaryId};
use kompakt::stream::{ContentHash, ReadOptions, Reader, StreamOptions, WriteOptions, Writer};
use rusqlite::{Connection, TransactionBehavior};
use setup::open_config;
use std::fs;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// The namespace used when none is given (storr's default).
pub const DEFAULT_NAMESPACE: &str = "objects";

/// Objects whose file is at most this many bytes live inside the index: one B-tree update to
/// write, one lookup to read, no file to create and fsync. Measured with incompressible values
/// (codec none, 2 cores, ext4-like overlay): set/get 108/36 us at 16 KiB and 749/196 us at
/// 64 KiB inline; at 120 KiB inline 1242/270 us against 1438/228 us as a file at 136 KiB:
/// past this size a file costs no more (WAL checkpoints write inline bytes twice).
pub const INLINE_MAX: usize = 128 << 10;

/// Objects whose file is at most this many bytes are kept in their key's row: a set writes one
/// row and the key index, not an object row and its hash index as well (on 2 cores, 750-byte
/// values: SQLite commits of 30-47 us against 51-70 us); a get is one lookup. Equal values under
/// different keys are then stored once per key, which costs little at this size (a key row
/// pointing at an object is about 60 bytes). At 2 KB the two layouts measured the same.
pub const KEY_VALUE_MAX: usize = 1 << 10;

/// A temporary file younger than this is never removed by gc, even if unlocked (its writer may
/// be between creating and locking it).
const TEMP_MIN_AGE: Duration = Duration::from_secs(60);

/// How to open a store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreOptions {
    /// The default codec: for a new store, recorded in its configuration (None: the
    /// library default); for an existing one, it must equal the recorded codec.
    pub codec: Option<CodecSpec>,
    /// Create the store if the folder holds none (default true).
    pub create: bool,
    /// fsync every index commit (default false: commits are atomic and survive a crash of the
    /// process; a power failure may undo the last ones). Large objects are always fsynced.
    pub durable: bool,
    /// Compression and decompression threads for large objects; 0 = all cores.
    pub threads: usize,
    /// Whether large objects adapt their compression to the disk: a block is stored raw when
    /// the disk has caught up with the compressor, so that compressing does not make a set
    /// much slower than writing the raw bytes (see [`Writer::adapt_to`]; Linux only). `None`
    /// (the default): objects written with the library's default codec (zstd:1, whether named
    /// or not) adapt, objects written with any other codec do not ([`Store::adapts`]). Why:
    /// the default codec is a speed-first choice, and on a fast disk with few cores even
    /// zstd:1 made an 80 MB set 3-4x slower than writing the raw bytes; a chosen codec is a
    /// choice of ratio. Objects kept in the index are always compressed with the codec. Not
    /// recorded in the configuration: each process chooses.
    pub adapt: Option<bool>,
    /// Whether small values (at most [`DICTIONARY_VALUE_MAX`] raw bytes, codec zstd) of each
    /// namespace are sampled to train a zstd dictionary, adopted when it makes held-out values
    /// at least [`MIN_GAIN`] smaller and at most `dictionary_max_slowdown` slower, and then
    /// compressed with it (default true; values go through [`Store::prepare_for`]). Reading values compressed with a dictionary works either way. Not recorded in
    /// the configuration: each process chooses.
    pub dictionaries: bool,
    /// How much slower (a fraction) writing and reading held-out values may get with a
    /// dictionary for the store to adopt it: [`MAX_SLOWDOWN`] by default, None to adopt on
    /// size alone (say when the disk, not the CPU, is what is short). What a set costs
    /// besides the codec counts too ([`Store::observe_value_overhead`]).
    pub dictionary_max_slowdown: Option<f64>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            codec: None,
            create: true,
            durable: false,
            threads: 0,
            adapt: None,
            dictionaries: true,
            dictionary_max_slowdown: Some(MAX_SLOWDOWN),
        }
    }
}

/// An object ready to be committed under a key: its content hash and its bytes (in memory or
/// in a synced temporary file).
#[derive(Debug)]
pub struct PendingObject {
    hash: ContentHash,
    raw_size: u64,
    body: Spilled,
    /// The dictionary its blocks were compressed with, if any.
    dictionary: Option<Dictionary>,
}

impl PendingObject {
    /// Wraps a finished [`Spill`] and the content hash its writer computed.
    pub fn new(spill: Spill, hash: ContentHash, raw_size: u64) -> Result<PendingObject> {
        Ok(PendingObject {
            hash,
            raw_size,
            body: spill.finish()?,
            dictionary: None,
        })
    }

    /// The id of the dictionary it was compressed with, if any.
    pub fn dictionary(&self) -> Option<DictionaryId> {
        self.dictionary.as_ref().map(Dictionary::id)
    }

    /// Names the dictionary an object built elsewhere (say downloaded) was compressed with:
    /// committing it keeps the dictionary beside it, and reading it gets the dictionary.
    pub fn with_dictionary(mut self, dictionary: Option<Dictionary>) -> PendingObject {
        self.dictionary = dictionary;
        self
    }

    /// The object's content hash.
    pub fn hash(&self) -> ContentHash {
        self.hash
    }

    /// Bytes of the kompakt file.
    pub fn stored_size(&self) -> u64 {
        match &self.body {
            Spilled::Memory(v) => v.len() as u64,
            Spilled::File(_, len) => *len,
        }
    }
}

/// Where a stored object's bytes are.
#[derive(Debug)]
pub enum ObjectSource {
    /// An inline object, read from the index.
    Memory(Cursor<Vec<u8>>),
    /// An object file.
    File(fs::File),
}

impl Read for ObjectSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ObjectSource::Memory(c) => c.read(buf),
            ObjectSource::File(f) => f.read(buf),
        }
    }
}

impl Seek for ObjectSource {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            ObjectSource::Memory(c) => c.seek(pos),
            ObjectSource::File(f) => f.seek(pos),
        }
    }
}

/// An object found under a key.
#[derive(Debug)]
pub struct StoredObject {
    /// Content hash.
    pub hash: ContentHash,
    /// Raw (uncompressed) bytes over all streams.
    pub raw_size: u64,
    /// Bytes of its kompakt file.
    pub stored_size: u64,
    /// True when kept inside the index.
    pub inline: bool,
    /// Its file, open.
    pub source: ObjectSource,
    /// The dictionaries reading it needs: give them to its reader
    /// ([`Reader::set_dictionaries`]). Empty for a value compressed without one.
    pub dictionaries: Dictionaries,
}

/// An open store. Cheap calls share one index connection behind a mutex; open one `Store`
/// per thread for parallel index access, or share one across threads.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    config: Mutex<Config>,
    /// Lookups: never waits behind a writer (WAL readers do not block).
    reads: Mutex<Connection>,
    /// Commits, deletes and gc, which may wait for another process's write lock.
    writes: Mutex<Connection>,
    threads: usize,
    adapt: Option<bool>,
    dictionaries: StoreDictionaries,
    dictionary_max_slowdown: Option<f64>,
    /// The least time a value was seen to cost beyond compressing it, in nanoseconds
    /// (`u64::MAX`: none seen); see [`Store::observe_value_overhead`].
    value_overhead: AtomicU64,
}

impl Store {
    /// Opens the store in folder `root`, creating it if allowed.
    pub fn open(root: impl AsRef<Path>, opts: StoreOptions) -> Result<Store> {
        check_max_slowdown(opts.dictionary_max_slowdown)?;
        let root = root.as_ref().to_path_buf();
        let config = open_config(&root, &opts)?;
        let with_path = |e: io::Error, dir: &Path| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
        for dir in [root.join("objects"), root.join("tmp")] {
            fs::create_dir_all(&dir).map_err(|e| with_path(e, &dir))?;
        }
        let writes = index::open(&root, false, opts.durable)?;
        let reads = index::open(&root, false, opts.durable)?;
        Ok(Store {
            root,
            config: Mutex::new(config),
            reads: Mutex::new(reads),
            writes: Mutex::new(writes),
            threads: opts.threads,
            adapt: opts.adapt,
            dictionaries: StoreDictionaries::new(opts.dictionaries),
            dictionary_max_slowdown: opts.dictionary_max_slowdown,
            value_overhead: AtomicU64::new(u64::MAX),
        })
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Its configuration.
    pub fn config(&self) -> Config {
        self.config
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |c| c.clone())
    }

    /// Changes the default codec recorded in the configuration. Objects already stored keep
    /// their own codec; other processes see the change when they next open the store.
    pub fn set_default_codec(&self, codec: CodecSpec) -> Result<()> {
        let mut current = self.config.lock().map_err(|_| Error::Poisoned)?;
        let config = Config {
            codec,
            ..current.clone()
        };
        let mut file = kompakt_fs::AtomicFile::create(self.root.join(CONFIG_FILE))?;
        io::Write::write_all(&mut file, &config.to_json())?;
        file.commit()?;
        *current = config;
        Ok(())
    }

    /// Write options for a new object: the store's codec unless `codec` names another.
    pub fn write_options(&self, codec: Option<CodecSpec>) -> WriteOptions {
        WriteOptions::default()
            .codec(codec.unwrap_or(self.config().codec))
            .threads(self.threads)
            .compact(true)
    }

    /// A writer for a new object: add streams, write, set metadata, then [`Store::finish`].
    /// The content hash is computed as the data passes; the file stays in memory while it is
    /// small and moves to a temporary file in the store once it exceeds [`INLINE_MAX`].
    pub fn writer(&self, opts: WriteOptions) -> Result<Writer<Spill>> {
        let mut w = kompakt_fs::writer(self.spill(&opts), opts, None)?;
        w.hash_content()?;
        Ok(w)
    }

    /// Whether an object written with `opts` adapts its compression to the disk: as
    /// [`StoreOptions::adapt`] says, or, when it says nothing, whether `opts` has the
    /// library's default codec.
    pub fn adapts(&self, opts: &WriteOptions) -> bool {
        self.adapt.unwrap_or_else(|| opts.stream.codec == CodecSpec::default())
    }

    /// The output an object written with `opts` goes to, for writers built by a caller: build
    /// them with [`kompakt_fs::writer`] (so that a paced spill paces them), and pass
    /// [`Writer::hash_content`]'s result to [`PendingObject::new`].
    pub fn spill(&self, opts: &WriteOptions) -> Spill {
        if self.adapts(opts) {
            Spill::paced(self.root.join("tmp"), INLINE_MAX)
        } else {
            Spill::new(self.root.join("tmp"), INLINE_MAX)
        }
    }

    /// Ends an object started with [`Store::writer`].
    pub fn finish(&self, writer: Writer<Spill>) -> Result<PendingObject> {
        let raw = writer.bytes_in();
        let (spill, hash) = writer.finish_hashed()?;
        PendingObject::new(spill, hash.expect("store writers hash their content"), raw)
    }

    /// Builds an object from whole streams (each with its options) and metadata.
    pub fn prepare(
        &self,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> Result<PendingObject> {
        let mut w = self.writer(opts)?;
        for (data, options) in streams {
            let id = w.add_stream(Some(*options))?;
            w.write(id, data)?;
            w.finish_stream(id)?;
        }
        w.set_metadata(metadata.to_vec())?;
        self.finish(w)
    }

    /// Like [`prepare`](Store::prepare), for a value of `namespace`: a small value (at most
    /// [`DICTIONARY_VALUE_MAX`] raw bytes, every stream zstd) is compressed with the
    /// namespace's dictionary when it has one, and otherwise offered to the namespace's sample
    /// of values, from which a dictionary is trained and judged once enough have come
    /// ([`StoreOptions::dictionaries`]; that trial runs inside this call).
    pub fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> Result<PendingObject> {
        let Some(dictionary) = self.dictionary_for_value(namespace, streams, &opts)? else {
            return self.prepare(streams, metadata, opts);
        };
        let mut w = kompakt_fs::writer_with_dictionary(self.spill(&opts), opts, None, Some(dictionary.clone()))?;
        w.hash_content()?;
        for (data, options) in streams {
            let id = w.add_stream(Some(*options))?;
            w.write(id, data)?;
            w.finish_stream(id)?;
        }
        w.set_metadata(metadata.to_vec())?;
        let mut object = self.finish(w)?;
        object.dictionary = Some(dictionary);
        Ok(object)
    }

    /// The dictionary a value of `namespace` is to be compressed with, sampling it when the
    /// namespace has none.
    fn dictionary_for_value(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        opts: &WriteOptions,
    ) -> Result<Option<Dictionary>> {
        let zstd = |spec: &CodecSpec| matches!(spec, CodecSpec::Fixed(kompakt::codec::Codec::Zstd { .. }));
        let raw: usize = streams.iter().map(|(d, _)| d.len()).sum();
        if !self.dictionaries.enabled
            || !zstd(&opts.stream.codec)
            || !streams.iter().all(|(_, o)| zstd(&o.codec))
            || raw > DICTIONARY_VALUE_MAX
        {
            return Ok(None);
        }
        match self.dictionary(namespace) {
            Ok(Some(current)) => return Ok(Some(current)),
            Ok(None) => {}
            // A damaged dictionary costs the namespace its dictionary, not its writes (verify
            // reports it): values are stored without one, as on object storage, and the
            // namespace may adopt a sound one later.
            Err(e) if e.is_corruption() => self.dictionaries.set_current(namespace, None),
            Err(e) => return Err(e),
        }
        let parts: Vec<&[u8]> = streams.iter().map(|(d, _)| *d).collect();
        if let Some(samples) = self.dictionaries.offer(namespace, &parts) {
            // One process of the store trains at a time: processes writing alike values reach
            // their trials together, and eight trainings on two cores held sets for seconds.
            // The others put theirs off, and take what it adopts.
            match self.trial_lock() {
                TrialLock::Busy => self.dictionaries.trial_deferred(namespace),
                TrialLock::Held(_) | TrialLock::Unavailable => {
                    // A trial is an optimisation: if it fails (say the index is busy), the
                    // value is stored without a dictionary, as it would have been.
                    let _ = self.adopt_if_it_pays(namespace, &samples, opts, self.dictionary_max_slowdown);
                    self.dictionaries.trial_done(namespace);
                }
            }
        }
        Ok(self.dictionaries.cached_current(namespace).flatten())
    }

    /// The dictionary values of `namespace` are compressed with, if it has adopted one.
    pub fn dictionary(&self, namespace: &str) -> Result<Option<Dictionary>> {
        if let Some(current) = self.dictionaries.cached_current(namespace) {
            return Ok(current);
        }
        let found = index::namespace_dictionary(&*self.read()?, namespace)?;
        let current = match found {
            Some((id, bytes)) => Some(checked_dictionary(id, bytes)?),
            None => None,
        };
        self.dictionaries.set_current(namespace, current.clone());
        Ok(current)
    }

    /// Trains a dictionary for `namespace` on `samples` (values as the namespace holds them:
    /// each a sample), judges it on one in five held out of training, and adopts it if it
    /// makes them at least [`MIN_GAIN`] smaller and writing and reading them at most
    /// `max_slowdown` slower (a fraction; [`MAX_SLOWDOWN`] is the store's own rule; None: any
    /// speed), written with the store's codec (which must be zstd). A namespace that has a
    /// dictionary keeps it. The store does this by itself from the values it is given
    /// ([`StoreOptions::dictionaries`]); call this to decide from values at hand, or to trade
    /// speed for size.
    pub fn train_dictionary<S: AsRef<[u8]>>(
        &self,
        namespace: &str,
        samples: &[S],
        max_slowdown: Option<f64>,
    ) -> Result<DictionaryTrial> {
        check_max_slowdown(max_slowdown)?;
        let opts = self.write_options(None);
        if !dictionaries::codec_allows(&opts) {
            return Err(Error::Format(kompakt::Error::invalid(
                "codec with a dictionary",
                opts.stream.codec.to_string(),
                "a store whose default codec is zstd or zstd:LEVEL (dictionaries are zstd's)",
            )));
        }
        let samples: Vec<Vec<u8>> = samples.iter().map(|s| s.as_ref().to_vec()).collect();
        self.adopt_if_it_pays(namespace, &samples, &opts, max_slowdown)
    }

    /// The store's lock for dictionary trials (`tmp/dictionary-trial.lock`, an advisory
    /// `flock`, gone with its holder).
    fn trial_lock(&self) -> TrialLock {
        let path = self.root.join("tmp").join(TRIAL_LOCK_FILE);
        let Ok(file) = fs::OpenOptions::new().create(true).append(true).open(&path) else {
            return TrialLock::Unavailable; // a read-only store, say: train as before
        };
        match file.try_lock() {
            Ok(()) => TrialLock::Held(file),
            Err(fs::TryLockError::WouldBlock) => TrialLock::Busy,
            Err(fs::TryLockError::Error(_)) => TrialLock::Unavailable,
        }
    }

    fn adopt_if_it_pays(
        &self,
        namespace: &str,
        samples: &[Vec<u8>],
        opts: &WriteOptions,
        max_slowdown: Option<f64>,
    ) -> Result<DictionaryTrial> {
        // Another process may have adopted one since this one looked: asked of the index, not
        // of this handle's cache.
        if let Some((id, bytes)) = index::namespace_dictionary(&*self.read()?, namespace)? {
            self.dictionaries
                .set_current(namespace, Some(checked_dictionary(id, bytes)?));
        }
        if let Some(current) = self.dictionary(namespace)? {
            return Err(Error::Store(format!(
                "namespace {namespace:?} already has dictionary {}",
                current.id()
            )));
        }
        let overhead = match self.value_overhead.load(Ordering::Relaxed) {
            u64::MAX => Duration::ZERO,
            nanos => Duration::from_nanos(nanos),
        };
        let (mut trial, dictionary) = dictionaries::try_dictionary(namespace, samples, opts, max_slowdown, overhead)?;
        let Some(dictionary) = dictionary else {
            return Ok(trial);
        };
        let current = {
            let mut conn = self.write()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            index::insert_dictionary(&tx, namespace, dictionary.id(), dictionary.bytes())?;
            let current = index::adopt_dictionary(&tx, namespace, dictionary.id())?;
            tx.commit()?;
            current
        };
        if current == dictionary.id() {
            trial.adopted = true;
            self.dictionaries.set_current(namespace, Some(dictionary));
        } else {
            // Another process adopted one first: values of the namespace use that one (the
            // dictionary inserted here is unused, and gc removes it).
            trial.reason = Some(format!("another process adopted dictionary {current} first"));
            let theirs = index::dictionary(&*self.read()?, current)?
                .map(|bytes| checked_dictionary(current, bytes))
                .transpose()?;
            self.dictionaries.set_current(namespace, theirs);
        }
        Ok(trial)
    }

    /// Makes `dictionary` the one values of `namespace` are compressed with from now on,
    /// replacing any it had (values written with that one keep it). For a store that shares
    /// its namespaces' dictionaries with others: a remote store's cache adopts the dictionary
    /// published on object storage.
    pub fn use_dictionary(&self, namespace: &str, dictionary: &Dictionary) -> Result<()> {
        {
            let mut conn = self.write()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            index::insert_dictionary(&tx, namespace, dictionary.id(), dictionary.bytes())?;
            index::replace_namespace_dictionary(&tx, namespace, dictionary.id())?;
            tx.commit()?;
        }
        self.dictionaries.set_current(namespace, Some(dictionary.clone()));
        Ok(())
    }

    /// Tells the store what storing a value costs beyond compressing it, as seen once (say a
    /// set's requests to object storage); the least seen counts. A dictionary trial adds it to
    /// the times it compares, so that a dictionary is not refused for codec microseconds
    /// beside milliseconds of requests ("no loss of speed" is judged on the whole set). A
    /// local store never calls this: its trials judge the codec alone.
    pub fn observe_value_overhead(&self, cost: Duration) {
        let nanos = u64::try_from(cost.as_nanos()).unwrap_or(u64::MAX - 1);
        self.value_overhead.fetch_min(nanos, Ordering::Relaxed);
    }

    /// Whether small values are sampled and compressed with dictionaries
    /// ([`StoreOptions::dictionaries`]).
    pub fn dictionaries_enabled(&self) -> bool {
        self.dictionaries.enabled
    }

    /// Dictionary `id`, if the store holds it.
    pub fn dictionary_with_id(&self, id: DictionaryId) -> Result<Option<Dictionary>> {
        if let Some(d) = self.dictionaries.loaded(id) {
            return Ok(Some(d));
        }
        let Some(bytes) = index::dictionary(&*self.read()?, id)? else {
            return Ok(None);
        };
        let dictionary = checked_dictionary(id, bytes)?;
        self.dictionaries.remember(&dictionary);
        Ok(Some(dictionary))
    }

    /// The dictionaries a value compressed with `id` needs, loaded once per store.
    fn dictionaries_for(&self, id: Option<DictionaryId>) -> Result<Dictionaries> {
        let Some(id) = id else {
            return Ok(Dictionaries::none());
        };
        if let Some(d) = self.dictionaries.loaded(id) {
            return Ok(vec![d].into());
        }
        let bytes = index::dictionary(&*self.read()?, id)?.ok_or_else(|| {
            Error::corrupt(
                "store index",
                0,
                format!("a value needs dictionary {id}, which the index does not hold"),
            )
        })?;
        let dictionary = checked_dictionary(id, bytes)?;
        self.dictionaries.remember(&dictionary);
        Ok(vec![dictionary].into())
    }

    /// Points `key` at `object` (last writer wins) and returns its hash.
    pub fn commit(&self, namespace: &str, key: &str, object: PendingObject) -> Result<ContentHash> {
        let hash = object.hash;
        self.commit_many(namespace, vec![(key.to_owned(), object)])?;
        Ok(hash)
    }

    /// Commits several keys in one transaction: all or none become visible.
    pub fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> Result<()> {
        let mut conn = self.write()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut dictionary_held = None;
        for (key, object) in items {
            let PendingObject {
                hash,
                raw_size,
                body,
                dictionary,
            } = object;
            if let Some(d) = dictionary.as_ref().filter(|d| dictionary_held != Some(d.id())) {
                // Normally present since its adoption; a gc may have removed it meanwhile (its
                // namespace emptied), and then the value brings it back.
                index::insert_dictionary(&tx, namespace, d.id(), d.bytes())?;
                dictionary_held = Some(d.id());
            }
            let dictionary = dictionary.map(|d| d.id());
            match body {
                Spilled::Memory(data) if data.len() <= KEY_VALUE_MAX => {
                    index::set_key_value(&tx, namespace, &key, hash, raw_size, &data, dictionary)?;
                    continue;
                }
                Spilled::Memory(data) => {
                    let row = ObjectRow {
                        hash,
                        raw_size,
                        stored_size: data.len() as u64,
                        data: Some(data),
                        dictionary,
                    };
                    // New content (the common case) costs one statement. A row that exists
                    // stays, unless it is a file row whose file is gone (a gc that died
                    // mid-way): that counts as absent.
                    if !index::insert_object_if_absent(&tx, &row)?
                        && index::object_kind(&tx, hash)? == Some(false)
                        && !objects::object_path(&self.root, hash).is_file()
                    {
                        index::replace_object(&tx, &row)?;
                    }
                }
                Spilled::File(temp, len) => {
                    let path = objects::object_path(&self.root, hash);
                    let have = match index::object_kind(&tx, hash)? {
                        Some(true) => true,
                        Some(false) => path.is_file(),
                        None => false,
                    };
                    if have {
                        drop(temp); // the same content is already stored
                    } else {
                        temp.persist(&path)?;
                        let row = ObjectRow {
                            hash,
                            raw_size,
                            stored_size: len,
                            data: None,
                            dictionary,
                        };
                        index::replace_object(&tx, &row)?;
                    }
                }
            }
            index::set_key(&tx, namespace, &key, hash)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Stores `data` as a single-stream object under `key`.
    pub fn set_bytes(&self, namespace: &str, key: &str, data: &[u8]) -> Result<ContentHash> {
        let opts = self.write_options(None);
        let object = self.prepare_for(namespace, &[(data, opts.stream_options())], b"", opts)?;
        self.commit(namespace, key, object)
    }

    /// Stream 0 of the object under `key`, decompressed.
    pub fn get_bytes(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(obj) = self.get(namespace, key)? else {
            return Ok(None);
        };
        let mut r = Reader::new(obj.source, self.read_options())?;
        r.set_dictionaries(obj.dictionaries);
        if r.streams().is_empty() {
            return Ok(Some(Vec::new()));
        }
        Ok(Some(r.read_stream(0)?))
    }

    /// The object under `key`, open for reading; None if the key does not exist.
    pub fn get(&self, namespace: &str, key: &str) -> Result<Option<StoredObject>> {
        // A concurrent writer may repoint the key and gc remove the old object between the
        // lookup and the open: look again.
        for _ in 0..8 {
            let Some(row) = index::lookup(&*self.read()?, namespace, key)? else {
                return Ok(None);
            };
            let inline = row.data.is_some();
            let dictionaries = self.dictionaries_for(row.dictionary)?;
            let source = match row.data {
                Some(data) => ObjectSource::Memory(Cursor::new(data)),
                None => match fs::File::open(objects::object_path(&self.root, row.hash)) {
                    Ok(f) => ObjectSource::File(f),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Asked under the write lock: a gc in progress finishes first. Damage
                        // only if the key still points at this object as a file row and the
                        // file is still missing: the key may have been repointed, its value
                        // moved into its row (equal content written again, smaller), or the
                        // same content stored again as a file since (gc in between).
                        let path = objects::object_path(&self.root, row.hash);
                        let damaged = self.settled(|c| {
                            Ok(index::key_target(c, namespace, key)? == Some((row.hash, false))
                                && index::object_kind(c, row.hash)? == Some(false)
                                && !path.is_file())
                        })?;
                        if damaged {
                            return Err(Error::corrupt(
                                "store",
                                0,
                                format!("the file of object {} (key {key:?}) is missing", row.hash),
                            ));
                        }
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                },
            };
            let found = StoredObject {
                hash: row.hash,
                raw_size: row.raw_size,
                stored_size: row.stored_size,
                inline,
                source,
                dictionaries,
            };
            self.touch(&found);
            return Ok(Some(found));
        }
        Err(Error::from(io::Error::other(format!(
            "key {key:?} kept changing while it was read"
        ))))
    }

    /// Read options for objects of this store.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions::default().threads(self.threads)
    }

    /// True if `key` exists.
    pub fn exists(&self, namespace: &str, key: &str) -> Result<bool> {
        Ok(self.hash_of(namespace, key)?.is_some())
    }

    /// The content hash `key` points at.
    pub fn hash_of(&self, namespace: &str, key: &str) -> Result<Option<ContentHash>> {
        index::hash_of(&*self.read()?, namespace, key)
    }

    /// Removes `key` (its object stays until [`gc`](Store::gc), a value held in its row goes with
    /// it); false if it did not exist.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        index::delete_key(&*self.write()?, namespace, key)
    }

    /// Marks `object` as just used, for [`reduce_size`](Store::reduce_size): an object file's
    /// modification time is when it was last written or read ([`get`](Store::get) touches
    /// what it returns). Best effort: a file that cannot be touched keeps its time.
    pub fn touch(&self, object: &StoredObject) {
        if let ObjectSource::File(file) = &object.source {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
    }

    /// Removes every key of `namespace` (all namespaces if None); returns how many.
    pub fn clear(&self, namespace: Option<&str>) -> Result<u64> {
        index::clear(&*self.write()?, namespace)
    }

    /// Keys of `namespace`, sorted.
    pub fn keys(&self, namespace: &str) -> Result<Vec<String>> {
        index::keys(&*self.read()?, namespace)
    }

    /// Keys of `namespace` (all namespaces if None) with their objects, sorted.
    pub fn entries(&self, namespace: Option<&str>) -> Result<Vec<Entry>> {
        index::entries(&*self.read()?, namespace)
    }

    /// Number of keys in `namespace`.
    pub fn len(&self, namespace: &str) -> Result<u64> {
        index::count_keys(&*self.read()?, namespace)
    }

    /// Namespaces that hold keys, with their key counts.
    pub fn namespaces(&self) -> Result<Vec<(String, u64)>> {
        index::namespaces(&*self.read()?)
    }

    fn read(&self) -> Result<MutexGuard<'_, Connection>> {
        self.reads.lock().map_err(|_| poisoned())
    }

    fn write(&self) -> Result<MutexGuard<'_, Connection>> {
        self.writes.lock().map_err(|_| poisoned())
    }

    /// Runs a query inside a write transaction, so that it sees the state after any gc or
    /// commit running in another process.
    fn settled<T>(&self, query: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.write()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = query(&tx)?;
        tx.commit()?;
        Ok(value)
    }
}

fn check_max_slowdown(max_slowdown: Option<f64>) -> Result<()> {
    match max_slowdown {
        Some(m) if !(m >= 0.0 && m.is_finite()) => Err(Error::Format(kompakt::Error::invalid(
            "max_slowdown",
            m.to_string(),
            "a fraction >= 0 (0.05: 5 % slower allowed), or none to adopt on size alone",
        ))),
        _ => Ok(()),
    }
}

/// A dictionary read from the index, checked against the id it is stored under.
fn checked_dictionary(id: DictionaryId, bytes: Vec<u8>) -> Result<Dictionary> {
    let damaged = |detail: String| Error::corrupt("store index", 0, format!("dictionary {id}: {detail}"));
    let dictionary = Dictionary::new(bytes).map_err(|e| damaged(e.to_string()))?;
    if dictionary.id() != id {
        return Err(damaged(format!("its bytes hash to {}", dictionary.id())));
    }
    Ok(dictionary)
}

/// The file whose lock lets one process of a store train a dictionary at a time.
const TRIAL_LOCK_FILE: &str = "dictionary-trial.lock";

enum TrialLock {
    /// This process may train (the lock is released when the file is dropped).
    Held(#[allow(dead_code)] fs::File),
    /// Another process is training.
    Busy,
    /// No lock to be had (the folder is read-only, the file system has no locks).
    Unavailable,
}

fn poisoned() -> Error {
    Error::Poisoned
}

#[cfg(test)]
mod tests;
