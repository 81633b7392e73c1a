//! The content-addressed store on object storage: [`RemoteStore`].
//!
//! Layout under the store's URL (`s3://bucket/prefix`), specified in docs/FORMAT.md:
//!
//! - `kompakt-store.json`: what the prefix holds and the layout's version;
//! - `objects/ab/ab12…ef.kpk`: immutable objects (kompakt files) by content hash, written
//!   with create-only puts (`ab12…ef.<dictionary>.kpk` when compressed with a dictionary);
//! - `keys/n<namespace>/k<key>`: a small JSON record per key naming its object, replaced with
//!   conditional puts (ETag compare-and-swap);
//! - `dictionaries/<id>.kpkd` and `namespaces/n<namespace>.json` (layout 2): the zstd
//!   dictionaries small values are compressed with, and the one each namespace shares, so
//!   that every machine compresses a namespace's values with one dictionary and reads any.
//!
//! A local store (kompakt-store) is the cache: objects are built there first (the same
//! writers, hashing and spilling as a local store), uploaded from there, and kept there after
//! a get, so a repeated get costs one small request (the key record, usually answered "not
//! modified") and no object transfer.

use crate::connect::{connect, describe};
use crate::records::{
    decode_segment, encode_segment, object_file_name, parse_dictionary_file_name, parse_object_file_name, KeyRecord,
    NamespaceRecord,
};
use crate::runtime::block_on;
use kompakt::codec::{Dictionary, DictionaryId, MAX_DICTIONARY_SIZE};
use kompakt::stream::{ContentHash, StreamOptions, WriteOptions};
use kompakt_store::{
    DictionaryTrial, Entry, GcReport, PendingObject, Store, StoreOptions, StoreVerifyReport, StoredObject,
};
use maintenance::age;
use object_store::path::Path as ObjectPath;
use object_store::{
    GetOptions, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion, WriteMultipart,
};
use std::collections::{HashMap, HashSet};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use url::Url;

mod content_store;
mod maintenance;
mod transfer;

pub use maintenance::RemoteStoreInfo;

/// The newest layout version this code reads (and writes, when it needs what it added).
pub const LAYOUT_VERSION: u64 = 2;

/// The layout a store is raised to by its first dictionary: objects compressed with one,
/// `dictionaries/` and `namespaces/`. A store without dictionaries stays at layout 1, which
/// older kompakt reads.
pub const LAYOUT_VERSION_DICTIONARIES: u64 = 2;

/// How long an object no key points at is kept before `gc` removes it: long enough for any
/// writer between its upload and its key record (and for clocks that disagree by less).
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3600);

/// Objects of at least this many bytes are uploaded in parts by default
/// ([`RemoteStoreOptions::multipart_threshold`]); AWS advises parts above 100 MB.
pub const DEFAULT_MULTIPART_THRESHOLD: u64 = 128 << 20;

/// The largest layout, key or namespace record read (they are a few hundred bytes).
const MAX_RECORD: u64 = 64 << 10;

/// Bytes in each part of a multipart upload, and how many parts are in flight at once.
const PART_SIZE: usize = 16 << 20;
const PARTS_IN_FLIGHT: usize = 4;

/// What the cache folder's object files may hold by default, in stored bytes.
pub const DEFAULT_CACHE_LIMIT: u64 = 10 << 30;

/// Options of [`RemoteStore::open`].
#[derive(Debug, Clone)]
pub struct RemoteStoreOptions {
    /// The local cache folder (default: under `$XDG_CACHE_HOME` or `~/.cache`, one per URL).
    pub cache: Option<PathBuf>,
    /// What the cache's object files may hold, in stored bytes (None: no limit). Past it, the
    /// least recently used are dropped until a quarter of the limit is free; they are fetched
    /// again when asked for. See [`DEFAULT_CACHE_LIMIT`].
    pub cache_limit: Option<u64>,
    /// Objects of at least this many bytes are uploaded in parts (see
    /// [`DEFAULT_MULTIPART_THRESHOLD`]); smaller ones with one PUT, read whole into memory.
    pub multipart_threshold: u64,
    /// Options of the cache, a local store: codec, threads, durability.
    pub local: StoreOptions,
    /// See [`DEFAULT_GRACE`].
    pub grace: Duration,
}

impl Default for RemoteStoreOptions {
    fn default() -> Self {
        RemoteStoreOptions {
            cache: None,
            cache_limit: Some(DEFAULT_CACHE_LIMIT),
            multipart_threshold: DEFAULT_MULTIPART_THRESHOLD,
            local: StoreOptions::default(),
            grace: DEFAULT_GRACE,
        }
    }
}

fn store_error(e: io::Error) -> kompakt_store::Error {
    kompakt_store::Error::from(e)
}

/// What an object's file name holds: its content hash and the dictionary it needs.
type ObjectName = (ContentHash, Option<DictionaryId>);

/// Key records by (namespace, key), with the ETag each was read or written with.
type KnownRecords = HashMap<(String, String), (Option<String>, KeyRecord)>;

/// The store on object storage at a URL, with its local cache.
pub struct RemoteStore {
    url: String,
    client: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    cache: Store,
    cache_limit: Option<u64>,
    multipart_threshold: u64,
    /// What the cache's object files hold, as far as this handle knows (other processes may
    /// share the folder): read when first needed, then counted up as objects come in.
    cache_bytes: Mutex<Option<u64>>,
    grace: Duration,
    /// Key records read or written by this handle, with their ETags: a get asks the server
    /// only whether the record changed.
    records: Mutex<KnownRecords>,
    /// The layout version of the store, as last read or written.
    layout: Mutex<u64>,
    /// Each namespace's shared dictionary as this handle last read its record; looked up
    /// once per namespace, before its first value.
    namespaces: Mutex<HashMap<String, SharedDictionary>>,
    /// Dictionaries on the server known young enough (see [`RemoteStore::upload_dictionary`])
    /// until the instant given: a set does not ask again meanwhile.
    fresh_dictionaries: Mutex<HashMap<DictionaryId, Instant>>,
}

/// Locks a mutex that holds a cache: a panic elsewhere leaves it usable.
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A namespace's record on the server, as a handle last read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SharedDictionary {
    /// No record: the first writer to adopt a dictionary publishes it.
    Absent,
    /// The dictionary every writer uses.
    Shared(DictionaryId),
    /// A record whose dictionary is damaged or missing (`verify` reports it): not used, and
    /// not published over (the record exists), so that it costs no requests per set.
    Unusable,
}

impl SharedDictionary {
    fn id(self) -> Option<DictionaryId> {
        match self {
            SharedDictionary::Shared(id) => Some(id),
            _ => None,
        }
    }
}

/// What publishing a namespace's dictionary came to.
enum Published {
    Ours,
    /// Another writer published first: the cache now compresses with that one (None: theirs
    /// is not usable, and the cache keeps its own).
    Theirs(Option<DictionaryId>),
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("url", &self.url)
            .field("cache", &self.cache.root())
            .finish_non_exhaustive()
    }
}

impl RemoteStore {
    /// Opens (creating when `opts.local.create`) the store at `url` (`s3://bucket/prefix`).
    pub fn open(url: &Url, opts: RemoteStoreOptions) -> kompakt_store::Result<RemoteStore> {
        if !url.scheme().starts_with("s3") {
            return Err(kompakt_store::Error::Store(format!(
                "{url}: stores on object storage need an s3:// URL"
            )));
        }
        let (client, prefix) = connect(url)?;
        let name = url.as_str().trim_end_matches('/').to_string();
        let cache_dir = match opts.cache {
            Some(dir) => dir,
            None => default_cache_dir(&name)?,
        };
        let store = RemoteStore {
            url: name,
            client,
            prefix,
            cache: Store::open(
                &cache_dir,
                StoreOptions {
                    create: true,
                    ..opts.local
                },
            )?,
            cache_limit: opts.cache_limit,
            multipart_threshold: opts.multipart_threshold.max(1),
            cache_bytes: Mutex::new(None),
            grace: opts.grace,
            records: Mutex::new(HashMap::new()),
            layout: Mutex::new(1),
            namespaces: Mutex::new(HashMap::new()),
            fresh_dictionaries: Mutex::new(HashMap::new()),
        };
        let asked = Instant::now();
        store.check_layout(opts.local.create)?;
        // Until a set is timed (its three requests), a dictionary trial weighs its codec time
        // against this first request, connection set-up included: an overestimate, but the
        // codec's difference on values of at most 64 KiB is microseconds against milliseconds
        // either way, so the verdict is the one a timed set would give.
        store.cache.observe_value_overhead(asked.elapsed());
        Ok(store)
    }

    /// The store's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The local cache: objects are built there (its writers), and read from there.
    pub fn cache(&self) -> &Store {
        &self.cache
    }

    fn path(&self, rest: &str) -> ObjectPath {
        let raw = if self.prefix.as_ref().is_empty() {
            rest.to_string()
        } else {
            format!("{}/{rest}", self.prefix.as_ref())
        };
        ObjectPath::parse(raw).expect("segments are encoded")
    }

    fn layout_path(&self) -> ObjectPath {
        self.path("kompakt-store.json")
    }

    /// The store's layout version (1, or 2 once it holds dictionaries).
    pub fn layout_version(&self) -> u64 {
        *locked(&self.layout)
    }

    fn object_path(&self, hash: ContentHash, dictionary: Option<DictionaryId>) -> ObjectPath {
        let hex = hash.to_string();
        self.path(&format!("objects/{}/{}", &hex[..2], object_file_name(hash, dictionary)))
    }

    fn dictionary_path(&self, id: DictionaryId) -> ObjectPath {
        self.path(&format!("dictionaries/{id}.kpkd"))
    }

    fn namespace_record_path(&self, namespace: &str) -> ObjectPath {
        self.path(&format!("namespaces/{}.json", encode_segment('n', namespace)))
    }

    fn namespace_path(&self, namespace: &str) -> ObjectPath {
        self.path(&format!("keys/{}", encode_segment('n', namespace)))
    }

    fn key_path(&self, namespace: &str, key: &str) -> ObjectPath {
        self.path(&format!(
            "keys/{}/{}",
            encode_segment('n', namespace),
            encode_segment('k', key)
        ))
    }

    fn io<T>(&self, r: object_store::Result<T>) -> kompakt_store::Result<T> {
        r.map_err(|e| store_error(describe(e, &self.url)))
    }

    fn run<F: std::future::Future + Send>(&self, f: F) -> kompakt_store::Result<F::Output>
    where
        F::Output: Send,
    {
        block_on(f).map_err(store_error)
    }

    /// Writes the layout record if the prefix is new (create-only: two first writers agree),
    /// then checks it names a layout this code reads.
    fn check_layout(&self, create: bool) -> kompakt_store::Result<()> {
        let path = self.layout_path();
        let found = self.get_small(&path)?;
        let data = match found {
            Ok(data) => data.to_vec(),
            Err(object_store::Error::NotFound { .. }) if create => {
                let opts = PutOptions {
                    mode: PutMode::Create,
                    ..PutOptions::default()
                };
                let put = self.run(self.client.put_opts(&path, PutPayload::from(layout_record(1)), opts))?;
                match put {
                    Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => {}
                    Err(e) => return self.io(Err(e)),
                }
                return self.check_layout(false);
            }
            Err(object_store::Error::NotFound { .. }) => {
                return Err(kompakt_store::Error::Store(format!(
                    "{}: no store here (no kompakt-store.json under this prefix)",
                    self.url
                )))
            }
            Err(e) => return self.io(Err(e)),
        };
        *locked(&self.layout) = self.layout_of(&data)?;
        Ok(())
    }

    /// The version a layout record names, if this code reads it.
    fn layout_of(&self, record: &[u8]) -> kompakt_store::Result<u64> {
        let v: serde_json::Value = serde_json::from_slice(record)
            .map_err(|e| kompakt_store::Error::corrupt("store layout record", 0, format!("{}: {e}", self.url)))?;
        let version = match v.get("version").and_then(|v| v.as_u64()) {
            Some(version @ 1..=LAYOUT_VERSION) => version,
            other => {
                return Err(kompakt_store::Error::Store(format!(
                    "{}: a store of layout version {}; this kompakt reads versions 1 to {LAYOUT_VERSION} \
                     (a newer kompakt may have written it)",
                    self.url,
                    other.map_or_else(|| "(none given)".to_string(), |v| v.to_string())
                )))
            }
        };
        // Every layout this code reads says what it is and how its objects are named: a record
        // that says otherwise is not one of ours, whatever its version.
        for (field, want) in [("format", LAYOUT_FORMAT), ("hash", LAYOUT_HASH)] {
            let found = v.get(field).and_then(|f| f.as_str());
            if found != Some(want) {
                return Err(kompakt_store::Error::Store(format!(
                    "{}: kompakt-store.json gives {field} {}, not {want:?}: not a kompakt store this \
                     version reads",
                    self.url,
                    found.map_or_else(|| "(none)".to_string(), |f| format!("{f:?}"))
                )));
            }
        }
        Ok(version)
    }

    /// Raises the store to [`LAYOUT_VERSION_DICTIONARIES`] unless it is there: a put
    /// conditional on the record's ETag, so that two writers raising it agree.
    fn require_dictionary_layout(&self) -> kompakt_store::Result<()> {
        if self.layout_version() >= LAYOUT_VERSION_DICTIONARIES {
            return Ok(());
        }
        let path = self.layout_path();
        for _ in 0..32 {
            let (e_tag, data) = self.io(self.get_record(&path, GetOptions::default())?)?;
            let version = self.layout_of(&data)?;
            if version >= LAYOUT_VERSION_DICTIONARIES {
                *locked(&self.layout) = version;
                return Ok(());
            }
            let opts = PutOptions {
                mode: PutMode::Update(UpdateVersion { e_tag, version: None }),
                ..PutOptions::default()
            };
            let record = layout_record(LAYOUT_VERSION_DICTIONARIES);
            match self.run(self.client.put_opts(&path, PutPayload::from(record), opts))? {
                Ok(_) => {
                    *locked(&self.layout) = LAYOUT_VERSION_DICTIONARIES;
                    return Ok(());
                }
                Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {}
                Err(e) => return self.io(Err(e)),
            }
        }
        Err(kompakt_store::Error::Store(format!(
            "{}: the layout record kept changing while it was raised to version {LAYOUT_VERSION_DICTIONARIES}",
            self.url
        )))
    }

    /// Points each key at its object: objects first (create-only uploads from the cache),
    /// then the key records. Each key changes atomically; unlike a local store, several keys
    /// do not change as one transaction.
    pub fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> kompakt_store::Result<()> {
        let keys: Vec<String> = items.iter().map(|(k, _)| k.clone()).collect();
        self.cache.commit_many(namespace, items)?;
        let mut added = 0;
        let mut used = None;
        for key in keys {
            // What the cache holds under the key is what goes up: equal content may be there
            // already, compressed with or without a dictionary, and its record says which.
            let object = self
                .cache
                .get(namespace, &key)?
                .ok_or_else(|| kompakt_store::Error::Store(format!("key {key:?} vanished from the cache")))?;
            let dictionary = object
                .dictionaries
                .ids()
                .first()
                .and_then(|&id| object.dictionaries.find(id).cloned());
            let record = KeyRecord {
                hash: object.hash,
                raw_size: object.raw_size,
                stored_size: object.stored_size,
                dictionary: dictionary.as_ref().map(Dictionary::id),
            };
            let looked = Instant::now();
            if let Some(d) = &dictionary {
                self.upload_dictionary(d)?;
            }
            self.upload_object(record, object.source)?;
            self.put_record(namespace, &key, record)?;
            // A dictionary trial weighs its codec time against this (milliseconds of
            // requests), not against the codec alone.
            self.cache.observe_value_overhead(looked.elapsed());
            if looked.elapsed() > self.grace / 4 {
                // Slow enough that a gc which began meanwhile may have judged the object
                // unreferenced and old: make sure it is still there, or put it back.
                self.restore_object(namespace, &key, record, dictionary.as_ref())?;
            }
            added += record.stored_size;
            used = used.or(dictionary);
        }
        // Trimmed only once every object is uploaded: a key's object must stay in the cache
        // until then.
        self.cached(added);
        if let Some(used) = used {
            // The values are stored whatever comes of this: sharing the dictionary is an
            // optimisation, tried again with the namespace's next values if it fails now.
            let _ = self.publish_if_adopted(namespace, &used);
        }
        Ok(())
    }

    /// Publishes the namespace's dictionary if the cache adopted `used` (a value of this
    /// commit was compressed with it) and the server knows none for the namespace.
    fn publish_if_adopted(&self, namespace: &str, used: &Dictionary) -> kompakt_store::Result<()> {
        let known = locked(&self.namespaces).get(namespace).copied();
        if known.is_some_and(|k| k != SharedDictionary::Absent) {
            return Ok(());
        }
        match self.cache.dictionary(namespace)? {
            Some(current) if current.id() == used.id() => self.publish(namespace, &current).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Makes `dictionary` the namespace's on the server unless another writer's is there
    /// (a create-only put): then the cache switches to that one for the values to come.
    fn publish(&self, namespace: &str, dictionary: &Dictionary) -> kompakt_store::Result<Published> {
        self.upload_dictionary(dictionary)?;
        let record = NamespaceRecord {
            dictionary: dictionary.id(),
        };
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let path = self.namespace_record_path(namespace);
        match self.run(self.client.put_opts(&path, PutPayload::from(record.encode()), opts))? {
            Ok(_) => {
                let shared = SharedDictionary::Shared(dictionary.id());
                locked(&self.namespaces).insert(namespace.to_owned(), shared);
                Ok(Published::Ours)
            }
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                let theirs = self.sync_namespace(namespace, true)?;
                Ok(if theirs == Some(dictionary.id()) {
                    Published::Ours
                } else {
                    Published::Theirs(theirs)
                })
            }
            Err(e) => self.io(Err(e)),
        }
    }

    /// Reads the namespace's record (once per handle unless `again`) and makes the cache
    /// compress the namespace's values with the dictionary it names. Returns that dictionary;
    /// None when the namespace has none, or one that is not usable (its file missing or
    /// damaged: `verify` reports it), and then the cache keeps what it had.
    fn sync_namespace(&self, namespace: &str, again: bool) -> kompakt_store::Result<Option<DictionaryId>> {
        if !again {
            if let Some(known) = locked(&self.namespaces).get(namespace) {
                return Ok(known.id());
            }
        }
        let path = self.namespace_record_path(namespace);
        let found = match self.get_small(&path) {
            Err(e) if e.is_corruption() => Ok(bytes::Bytes::new()), // decodes to no record
            other => other?,
        };
        let state = match found {
            Ok(data) => match NamespaceRecord::decode(&data) {
                None => SharedDictionary::Unusable,
                Some(record) => match self.load_dictionary(record.dictionary) {
                    Ok(Some(d)) => {
                        // Best effort, as the cache's own trials are: if its index is busy
                        // now, it keeps compressing as it did.
                        if self.cache.dictionary(namespace)?.is_none_or(|mine| mine.id() != d.id()) {
                            let _ = self.cache.use_dictionary(namespace, &d);
                        }
                        SharedDictionary::Shared(d.id())
                    }
                    Ok(None) => SharedDictionary::Unusable,
                    Err(e) if e.is_corruption() => SharedDictionary::Unusable,
                    Err(e) => return Err(e),
                },
            },
            Err(object_store::Error::NotFound { .. }) => SharedDictionary::Absent,
            Err(e) => return self.io(Err(e)),
        };
        locked(&self.namespaces).insert(namespace.to_owned(), state);
        Ok(state.id())
    }

    /// The record at `path` and its ETag. One larger than [`MAX_RECORD`] is damage, refused
    /// before it is read (a hostile or broken server cannot make it allocate more).
    fn get_record(
        &self,
        path: &ObjectPath,
        opts: GetOptions,
    ) -> kompakt_store::Result<object_store::Result<(Option<String>, bytes::Bytes)>> {
        let got = self.run(crate::file::within(
            crate::file::request_deadline(MAX_RECORD),
            &self.url,
            "a record",
            async {
                let result = self.client.get_opts(path, opts).await?;
                if result.meta.size > MAX_RECORD {
                    return Ok(Err(result.meta.size));
                }
                let e_tag = result.meta.e_tag.clone();
                Ok(Ok((e_tag, result.bytes().await?)))
            },
        ))??;
        match got {
            Ok(Ok(found)) => Ok(Ok(found)),
            Ok(Err(size)) => Err(kompakt_store::Error::corrupt(
                "store record",
                0,
                format!(
                    "{}: {path}: {size} bytes, more than a record of the store holds ({MAX_RECORD})",
                    self.url
                ),
            )),
            Err(e) => Ok(Err(e)),
        }
    }

    /// [`get_record`](Self::get_record) without conditions, the bytes alone.
    fn get_small(&self, path: &ObjectPath) -> kompakt_store::Result<object_store::Result<bytes::Bytes>> {
        Ok(self.get_record(path, GetOptions::default())?.map(|(_, data)| data))
    }

    /// Dictionary `id`, from the cache or else the server (None: the server has none);
    /// checked against its id either way.
    fn load_dictionary(&self, id: DictionaryId) -> kompakt_store::Result<Option<Dictionary>> {
        if let Some(d) = self.cache.dictionary_with_id(id)? {
            return Ok(Some(d));
        }
        match self.download_dictionary(id)? {
            Some(Ok(d)) => Ok(Some(d)),
            Some(Err(problem)) => Err(kompakt_store::Error::corrupt("store dictionary", 0, problem)),
            None => Ok(None),
        }
    }

    /// Dictionary `id` from the server: None if absent, an error message if its file is not
    /// that dictionary (too large to be one, not one, or other bytes).
    fn download_dictionary(&self, id: DictionaryId) -> kompakt_store::Result<Option<Result<Dictionary, String>>> {
        let path = self.dictionary_path(id);
        let got = self.run(async {
            let result = self.client.get(&path).await?;
            if result.meta.size > MAX_DICTIONARY_SIZE as u64 {
                return Ok(Err(result.meta.size));
            }
            Ok::<_, object_store::Error>(Ok(result.bytes().await?))
        })?;
        let damaged = |detail: String| Ok(Some(Err(format!("{}: dictionary {id}: {detail}", self.url))));
        let data = match got {
            Ok(Ok(data)) => data,
            Ok(Err(size)) => return damaged(format!("{size} bytes, more than a dictionary holds")),
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return self.io(Err(e)),
        };
        match Dictionary::new(data.to_vec()) {
            Ok(d) if d.id() == id => Ok(Some(Ok(d))),
            Ok(d) => damaged(format!("its bytes hash to {}", d.id())),
            Err(e) => damaged(e.to_string()),
        }
    }

    /// Uploads a dictionary unless a young enough copy is there, as [`upload_object`] does
    /// for objects (the same rule keeps it from `gc`); a dictionary known young enough is
    /// not asked about again until half of what is left of half the grace period has passed.
    ///
    /// [`upload_object`]: RemoteStore::upload_object
    fn upload_dictionary(&self, dictionary: &Dictionary) -> kompakt_store::Result<()> {
        let id = dictionary.id();
        if locked(&self.fresh_dictionaries)
            .get(&id)
            .is_some_and(|&until| Instant::now() < until)
        {
            return Ok(());
        }
        self.require_dictionary_layout()?;
        let path = self.dictionary_path(id);
        let looked = Instant::now();
        let half = self.grace / 2;
        let mode = match self.run(self.client.head(&path))? {
            Ok(meta) => match half.checked_sub(age(&meta, SystemTime::now())) {
                Some(left) if !left.is_zero() => {
                    locked(&self.fresh_dictionaries).insert(id, looked + left / 2);
                    return Ok(());
                }
                _ => PutMode::Overwrite,
            },
            Err(object_store::Error::NotFound { .. }) => PutMode::Create,
            Err(e) => return self.io(Err(e)),
        };
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let body = PutPayload::from(dictionary.bytes().to_vec());
        match self.run(self.client.put_opts(&path, body, opts))? {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => {
                locked(&self.fresh_dictionaries).insert(id, looked + half / 2);
                Ok(())
            }
            Err(e) => self.io(Err(e)),
        }
    }

    /// Like [`Store::prepare_for`] (a small value is compressed with its namespace's
    /// dictionary, or helps train one), with the namespace's dictionary on the server, which
    /// every writer of the store shares, looked up first.
    pub fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> kompakt_store::Result<PendingObject> {
        if self.cache.dictionaries_enabled() {
            // A damaged namespace record or dictionary costs only the dictionary (`verify`
            // reports it): the values are written without, or with one this cache trains.
            self.sync_namespace(namespace, false)?;
        }
        self.cache.prepare_for(namespace, streams, metadata, opts)
    }

    /// The dictionary values of `namespace` are compressed with, as shared on the server
    /// (or adopted by this cache and not yet shared).
    pub fn dictionary(&self, namespace: &str) -> kompakt_store::Result<Option<Dictionary>> {
        self.sync_namespace(namespace, false)?;
        self.cache.dictionary(namespace)
    }

    /// [`Store::train_dictionary`] for a namespace of the store: a dictionary adopted is
    /// published on the server for every writer, unless another writer published one first
    /// (then the trial reports it not adopted, and values use that one).
    pub fn train_dictionary<S: AsRef<[u8]>>(
        &self,
        namespace: &str,
        samples: &[S],
        max_slowdown: Option<f64>,
    ) -> kompakt_store::Result<DictionaryTrial> {
        self.sync_namespace(namespace, false)?;
        let mut trial = self.cache.train_dictionary(namespace, samples, max_slowdown)?;
        if trial.adopted {
            let adopted = self.cache.dictionary(namespace)?.ok_or_else(|| {
                kompakt_store::Error::Store(format!("namespace {namespace:?} lost the dictionary it adopted"))
            })?;
            if let Published::Theirs(theirs) = self.publish(namespace, &adopted)? {
                trial.adopted = false;
                trial.reason = Some(match theirs {
                    Some(id) => format!("another writer published dictionary {id} first"),
                    None => "another writer published a dictionary first (one that is not usable)".into(),
                });
            }
        }
        Ok(trial)
    }

    /// Replaces a key's record by compare-and-swap on its ETag: a write based on a version
    /// another writer replaced meanwhile is refused by the server, and retried on the new one.
    fn put_record(&self, namespace: &str, key: &str, record: KeyRecord) -> kompakt_store::Result<()> {
        let path = self.key_path(namespace, key);
        let id = (namespace.to_string(), key.to_string());
        let mut known: Option<Option<String>> = self.lock().get(&id).map(|(etag, _)| etag.clone());
        for _ in 0..32 {
            let mode = match &known {
                None => PutMode::Create,
                Some(e_tag) => PutMode::Update(UpdateVersion {
                    e_tag: e_tag.clone(),
                    version: None,
                }),
            };
            let opts = PutOptions {
                mode,
                ..PutOptions::default()
            };
            match self.run(self.client.put_opts(&path, PutPayload::from(record.encode()), opts))? {
                Ok(put) => {
                    self.lock().insert(id, (put.e_tag, record));
                    return Ok(());
                }
                Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                    known = Some(match self.run(self.client.head(&path))? {
                        Ok(meta) => meta.e_tag,
                        Err(object_store::Error::NotFound { .. }) => {
                            known = None;
                            continue;
                        }
                        Err(e) => return self.io(Err(e)),
                    });
                }
                Err(e) => return self.io(Err(e)),
            }
        }
        Err(kompakt_store::Error::Store(format!(
            "{}: key {key:?} kept changing while it was written",
            self.url
        )))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KnownRecords> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The record of `key`, asking the server whether the one known changed.
    fn record(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<KeyRecord>> {
        let path = self.key_path(namespace, key);
        let id = (namespace.to_string(), key.to_string());
        let known = self.lock().get(&id).cloned();
        let opts = GetOptions {
            if_none_match: known.as_ref().and_then(|(etag, _)| etag.clone()),
            ..GetOptions::default()
        };
        match self.get_record(&path, opts)? {
            Ok((e_tag, data)) => {
                let record = KeyRecord::decode(&data).ok_or_else(|| {
                    kompakt_store::Error::corrupt(
                        "store key record",
                        0,
                        format!("{}: the record of key {key:?} is not one", self.url),
                    )
                })?;
                self.lock().insert(id, (e_tag, record));
                Ok(Some(record))
            }
            Err(object_store::Error::NotModified { .. }) => Ok(known.map(|(_, r)| r)),
            Err(object_store::Error::NotFound { .. }) => {
                self.lock().remove(&id);
                Ok(None)
            }
            Err(e) => self.io(Err(e)),
        }
    }

    /// The object under `key`, from the cache (fetched into it first when it lacks it).
    pub fn get(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<StoredObject>> {
        // An object (or dictionary) missing under a record just read may have been collected
        // after another machine pointed the key elsewhere: the record is read again before
        // that is damage.
        let mut missing: Option<KeyRecord> = None;
        loop {
            let Some(record) = self.record(namespace, key)? else {
                self.cache.delete(namespace, key)?;
                return Ok(None);
            };
            let gone_again = missing == Some(record);
            if self.cache.hash_of(namespace, key)? == Some(record.hash) {
                if let Some(found) = self.cache.get(namespace, key)? {
                    if found.hash == record.hash {
                        return Ok(Some(found));
                    }
                }
            }
            match self.fetch(namespace, key, record)? {
                Ok(found) => return Ok(found),
                Err(what) if gone_again => {
                    return Err(kompakt_store::Error::corrupt(
                        "store",
                        0,
                        format!("{}: {what} of key {key:?} is missing", self.url),
                    ))
                }
                Err(_) => missing = Some(record),
            }
        }
    }

    /// The content hash `key` points at.
    pub fn hash_of(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<ContentHash>> {
        Ok(self.record(namespace, key)?.map(|r| r.hash))
    }

    /// True if `key` exists.
    pub fn exists(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        Ok(self.record(namespace, key)?.is_some())
    }

    /// Removes `key` (its object stays until `gc`); false if it did not exist.
    pub fn delete(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        // A damaged record is there too, and deleting it is how a user gets rid of it.
        let existed = match self.record(namespace, key) {
            Ok(record) => record.is_some(),
            Err(e) if e.is_corruption() => true,
            Err(e) => return Err(e),
        };
        let path = self.key_path(namespace, key);
        match self.run(self.client.delete(&path))? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return self.io(Err(e)),
        }
        self.lock().remove(&(namespace.to_string(), key.to_string()));
        self.cache.delete(namespace, key)?;
        Ok(existed)
    }

    fn list(&self, prefix: &ObjectPath) -> kompakt_store::Result<Vec<ObjectMeta>> {
        use futures::TryStreamExt;
        let listed = self.run(async { self.client.list(Some(prefix)).try_collect::<Vec<_>>().await })?;
        self.io(listed)
    }

    /// The keys of `namespace`, sorted.
    pub fn keys(&self, namespace: &str) -> kompakt_store::Result<Vec<String>> {
        let mut keys: Vec<String> = self
            .list(&self.namespace_path(namespace))?
            .iter()
            .filter_map(|m| m.location.filename().and_then(|f| decode_segment('k', f)))
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Every (namespace, key), from one listing.
    fn all_keys(&self) -> kompakt_store::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for meta in self.list(&self.path("keys"))? {
            let parts: Vec<_> = meta.location.parts().collect();
            let n = parts.len();
            if n < 2 {
                continue;
            }
            if let (Some(ns), Some(key)) = (
                decode_segment('n', parts[n - 2].as_ref()),
                decode_segment('k', parts[n - 1].as_ref()),
            ) {
                out.push((ns, key));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Number of keys in `namespace`.
    pub fn len(&self, namespace: &str) -> kompakt_store::Result<u64> {
        Ok(self.keys(namespace)?.len() as u64)
    }

    /// Keys of `namespace` (every namespace if None) with their objects: a request per key.
    pub fn entries(&self, namespace: Option<&str>) -> kompakt_store::Result<Vec<Entry>> {
        let mut out = Vec::new();
        for (ns, key) in self.all_keys()? {
            if namespace.is_some_and(|n| n != ns) {
                continue;
            }
            if let Some(r) = self.record(&ns, &key)? {
                out.push(Entry {
                    namespace: ns,
                    key,
                    hash: r.hash,
                    raw_size: r.raw_size,
                    stored_size: r.stored_size,
                });
            }
        }
        Ok(out)
    }

    /// Namespaces with their key counts.
    pub fn namespaces(&self) -> kompakt_store::Result<Vec<(String, u64)>> {
        let mut counts: Vec<(String, u64)> = Vec::new();
        for (ns, _) in self.all_keys()? {
            match counts.last_mut() {
                Some((last, n)) if *last == ns => *n += 1,
                _ => counts.push((ns, 1)),
            }
        }
        Ok(counts)
    }

    /// Removes every key of `namespace` (None: of all); returns how many.
    pub fn clear(&self, namespace: Option<&str>) -> kompakt_store::Result<u64> {
        let mut removed = 0;
        for (ns, key) in self.all_keys()? {
            if namespace.is_none_or(|n| n == ns) && self.delete(&ns, &key)? {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// The layout record of a store of layout `version`.
/// The `format` and `hash` of every layout record.
const LAYOUT_FORMAT: &str = "kompakt store on object storage";
const LAYOUT_HASH: &str = "xxh3-128";

fn layout_record(version: u64) -> String {
    serde_json::json!({
        "format": LAYOUT_FORMAT,
        "version": version,
        "hash": LAYOUT_HASH,
    })
    .to_string()
}

/// `$XDG_CACHE_HOME/kompakt/remote/<hash of the URL and endpoint>` (else `~/.cache/...`).
fn default_cache_dir(url: &str) -> io::Result<PathBuf> {
    let base = match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
        (Some(dir), _) if !dir.is_empty() => PathBuf::from(dir),
        (_, Some(home)) => PathBuf::from(home).join(".cache"),
        _ => std::env::temp_dir(),
    };
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    let id = twox_hash::XxHash3_64::oneshot(format!("{endpoint}|{url}").as_bytes());
    Ok(base.join("kompakt").join("remote").join(format!("{id:016x}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_paths_parse_for_any_name() {
        for name in ["", ".", "..", "a/b", "naïve key", "%41", "tab\there"] {
            let path = format!("p/keys/{}/{}", encode_segment('n', name), encode_segment('k', name));
            assert!(ObjectPath::parse(&path).is_ok(), "{name:?} -> {path}");
        }
    }
}
