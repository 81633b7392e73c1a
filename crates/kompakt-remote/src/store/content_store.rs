//! A store wherever it is: the front ends' switch between a folder and a URL.

use super::*;

/// A store wherever it is, as the front ends hold one: a folder (kompakt-store), or a URL on
/// object storage ([`RemoteStore`]). Objects are built by a local store either way: the store
/// itself, or the remote store's cache.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per open store: boxing would buy nothing
pub enum AnyStore {
    Local(Store),
    Remote(RemoteStore),
}

impl AnyStore {
    /// The store's folder or URL, as messages name it.
    pub fn name(&self) -> String {
        match self {
            AnyStore::Local(s) => s.root().display().to_string(),
            AnyStore::Remote(r) => r.url().to_string(),
        }
    }

    /// The local store objects are built in and read from.
    pub fn local(&self) -> &Store {
        match self {
            AnyStore::Local(s) => s,
            AnyStore::Remote(r) => r.cache(),
        }
    }

    /// Builds a value of `namespace` ([`Store::prepare_for`], [`RemoteStore::prepare_for`]).
    pub fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> kompakt_store::Result<PendingObject> {
        match self {
            AnyStore::Local(s) => s.prepare_for(namespace, streams, metadata, opts),
            AnyStore::Remote(r) => r.prepare_for(namespace, streams, metadata, opts),
        }
    }

    /// The dictionary the namespace's small values are compressed with, if any.
    pub fn dictionary(&self, namespace: &str) -> kompakt_store::Result<Option<Dictionary>> {
        match self {
            AnyStore::Local(s) => s.dictionary(namespace),
            AnyStore::Remote(r) => r.dictionary(namespace),
        }
    }

    /// Trains, judges and perhaps adopts a dictionary for `namespace`
    /// ([`Store::train_dictionary`], [`RemoteStore::train_dictionary`]).
    pub fn train_dictionary<S: AsRef<[u8]>>(
        &self,
        namespace: &str,
        samples: &[S],
        max_slowdown: Option<f64>,
    ) -> kompakt_store::Result<DictionaryTrial> {
        match self {
            AnyStore::Local(s) => s.train_dictionary(namespace, samples, max_slowdown),
            AnyStore::Remote(r) => r.train_dictionary(namespace, samples, max_slowdown),
        }
    }

    pub fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> kompakt_store::Result<()> {
        match self {
            AnyStore::Local(s) => s.commit_many(namespace, items),
            AnyStore::Remote(r) => r.commit_many(namespace, items),
        }
    }

    pub fn get(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<StoredObject>> {
        match self {
            AnyStore::Local(s) => s.get(namespace, key),
            AnyStore::Remote(r) => r.get(namespace, key),
        }
    }

    pub fn hash_of(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<ContentHash>> {
        match self {
            AnyStore::Local(s) => s.hash_of(namespace, key),
            AnyStore::Remote(r) => r.hash_of(namespace, key),
        }
    }

    pub fn exists(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        match self {
            AnyStore::Local(s) => s.exists(namespace, key),
            AnyStore::Remote(r) => r.exists(namespace, key),
        }
    }

    pub fn delete(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        match self {
            AnyStore::Local(s) => s.delete(namespace, key),
            AnyStore::Remote(r) => r.delete(namespace, key),
        }
    }

    pub fn clear(&self, namespace: Option<&str>) -> kompakt_store::Result<u64> {
        match self {
            AnyStore::Local(s) => s.clear(namespace),
            AnyStore::Remote(r) => r.clear(namespace),
        }
    }

    pub fn keys(&self, namespace: &str) -> kompakt_store::Result<Vec<String>> {
        match self {
            AnyStore::Local(s) => s.keys(namespace),
            AnyStore::Remote(r) => r.keys(namespace),
        }
    }

    pub fn len(&self, namespace: &str) -> kompakt_store::Result<u64> {
        match self {
            AnyStore::Local(s) => s.len(namespace),
            AnyStore::Remote(r) => r.len(namespace),
        }
    }

    pub fn namespaces(&self) -> kompakt_store::Result<Vec<(String, u64)>> {
        match self {
            AnyStore::Local(s) => s.namespaces(),
            AnyStore::Remote(r) => r.namespaces(),
        }
    }

    pub fn gc(&self) -> kompakt_store::Result<GcReport> {
        match self {
            AnyStore::Local(s) => s.gc(),
            AnyStore::Remote(r) => r.gc(),
        }
    }

    pub fn verify(&self, progress: &mut dyn FnMut(u64)) -> kompakt_store::Result<StoreVerifyReport> {
        match self {
            AnyStore::Local(s) => s.verify(progress),
            AnyStore::Remote(r) => r.verify(progress),
        }
    }

    pub fn entries(&self, namespace: Option<&str>) -> kompakt_store::Result<Vec<Entry>> {
        match self {
            AnyStore::Local(s) => s.entries(namespace),
            AnyStore::Remote(r) => r.entries(namespace),
        }
    }

    /// Opens the store at `location`: a folder, with `opts.local`, or an `s3://` URL, with
    /// all of `opts`.
    pub fn open(location: &crate::Location, opts: RemoteStoreOptions) -> kompakt_store::Result<AnyStore> {
        match location {
            crate::Location::Local(path) => Store::open(path, opts.local).map(AnyStore::Local),
            crate::Location::Remote(url) => RemoteStore::open(url, opts).map(AnyStore::Remote),
        }
    }
}
