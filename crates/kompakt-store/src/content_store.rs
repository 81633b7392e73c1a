//! [`ContentStore`]: what every store does, wherever its objects live. The folder store
//! ([`Store`]) implements it here, the store on object storage in kompakt-remote; front ends
//! hold a `Box<dyn ContentStore>` (kompakt-api opens one for a path or a URL) and never ask
//! which kind they have.

use crate::{
    DictionaryTrial, Entry, GcReport, PendingObject, Result, Store, StoreInfo, StoreVerifyReport, StoredObject,
};
use kompakt::codec::Dictionary;
use kompakt::stream::{ContentHash, StreamOptions, WriteOptions};
use std::fmt;
use std::path::{Path, PathBuf};

/// A content-addressed store: keys in namespaces pointing at immutable objects. Values are
/// built in a local [`Store`] (the store itself, or a remote store's cache) with
/// [`prepare_for`](ContentStore::prepare_for), then published by
/// [`commit_many`](ContentStore::commit_many).
pub trait ContentStore: fmt::Debug + Send + Sync {
    /// The store's folder or URL, as messages name it.
    fn location(&self) -> String;

    /// The local store objects are built in and read from: the store itself, or the cache of
    /// a store on object storage.
    fn local(&self) -> &Store;

    /// The local cache folder of a store on object storage; None for a folder store.
    fn cache_dir(&self) -> Option<&Path> {
        None
    }

    /// Counts and sizes, as `kompakt store info` shows them.
    fn summary(&self) -> Result<StoreSummary>;

    /// Builds a value of `namespace` from its streams and metadata, ready to commit.
    fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> Result<PendingObject>;

    /// The dictionary the namespace's small values are compressed with, if any.
    fn dictionary(&self, namespace: &str) -> Result<Option<Dictionary>>;

    /// Trains, judges and perhaps adopts a dictionary for `namespace` from sample values.
    fn train_dictionary(
        &self,
        namespace: &str,
        samples: &[&[u8]],
        max_slowdown: Option<f64>,
    ) -> Result<DictionaryTrial>;

    /// Points each key at its prepared object, all in one commit.
    fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> Result<()>;

    /// The object `key` points at, if any.
    fn get(&self, namespace: &str, key: &str) -> Result<Option<StoredObject>>;

    /// The content hash of the object `key` points at, if any.
    fn hash_of(&self, namespace: &str, key: &str) -> Result<Option<ContentHash>>;

    /// Whether `key` is set.
    fn exists(&self, namespace: &str, key: &str) -> Result<bool>;

    /// Removes `key`; whether it was set.
    fn delete(&self, namespace: &str, key: &str) -> Result<bool>;

    /// Removes every key of `namespace` (all namespaces: None); how many.
    fn clear(&self, namespace: Option<&str>) -> Result<u64>;

    /// The keys of `namespace`, sorted.
    fn keys(&self, namespace: &str) -> Result<Vec<String>>;

    /// How many keys `namespace` holds.
    fn len(&self, namespace: &str) -> Result<u64>;

    /// Namespaces with their key counts.
    fn namespaces(&self) -> Result<Vec<(String, u64)>>;

    /// Removes the objects no key points at.
    fn gc(&self) -> Result<GcReport>;

    /// Reads every object and checks it against its hash; `progress` gets bytes read.
    fn verify(&self, progress: &mut dyn FnMut(u64)) -> Result<StoreVerifyReport>;

    /// Keys with their objects' hashes and sizes (one namespace, or all).
    fn entries(&self, namespace: Option<&str>) -> Result<Vec<Entry>>;
}

/// What [`ContentStore::summary`] reports: the figures every store knows, and a folder
/// store's details.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSummary {
    /// The store's folder or URL.
    pub location: String,
    /// The layout version of the store (its configuration's, or the remote layout's).
    pub layout_version: u64,
    /// Namespaces with their key counts.
    pub namespaces: Vec<(String, u64)>,
    /// Objects stored.
    pub objects: u64,
    /// Their stored bytes.
    pub stored_bytes: u64,
    /// zstd dictionaries held (trained for namespaces of small values).
    pub dictionaries: u64,
    /// Their bytes.
    pub dictionary_bytes: u64,
    /// The local cache folder of a store on object storage.
    pub cache_dir: Option<PathBuf>,
    /// A folder store's details: objects in the index and as files, raw bytes, index files.
    pub local: Option<StoreInfo>,
}

impl StoreSummary {
    /// Keys in all namespaces.
    pub fn keys(&self) -> u64 {
        self.namespaces.iter().map(|(_, n)| n).sum()
    }
}

impl ContentStore for Store {
    fn location(&self) -> String {
        self.root().display().to_string()
    }

    fn local(&self) -> &Store {
        self
    }

    fn summary(&self) -> Result<StoreSummary> {
        let info = self.info()?;
        Ok(StoreSummary {
            location: self.location(),
            layout_version: self.config().version,
            namespaces: info.namespaces.clone(),
            objects: info.inline_objects + info.file_objects,
            stored_bytes: info.inline_bytes + info.file_bytes,
            dictionaries: info.dictionaries,
            dictionary_bytes: info.dictionary_bytes,
            cache_dir: None,
            local: Some(info),
        })
    }

    fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> Result<PendingObject> {
        Store::prepare_for(self, namespace, streams, metadata, opts)
    }

    fn dictionary(&self, namespace: &str) -> Result<Option<Dictionary>> {
        Store::dictionary(self, namespace)
    }

    fn train_dictionary(
        &self,
        namespace: &str,
        samples: &[&[u8]],
        max_slowdown: Option<f64>,
    ) -> Result<DictionaryTrial> {
        Store::train_dictionary(self, namespace, samples, max_slowdown)
    }

    fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> Result<()> {
        Store::commit_many(self, namespace, items)
    }

    fn get(&self, namespace: &str, key: &str) -> Result<Option<StoredObject>> {
        Store::get(self, namespace, key)
    }

    fn hash_of(&self, namespace: &str, key: &str) -> Result<Option<ContentHash>> {
        Store::hash_of(self, namespace, key)
    }

    fn exists(&self, namespace: &str, key: &str) -> Result<bool> {
        Store::exists(self, namespace, key)
    }

    fn delete(&self, namespace: &str, key: &str) -> Result<bool> {
        Store::delete(self, namespace, key)
    }

    fn clear(&self, namespace: Option<&str>) -> Result<u64> {
        Store::clear(self, namespace)
    }

    fn keys(&self, namespace: &str) -> Result<Vec<String>> {
        Store::keys(self, namespace)
    }

    fn len(&self, namespace: &str) -> Result<u64> {
        Store::len(self, namespace)
    }

    fn namespaces(&self) -> Result<Vec<(String, u64)>> {
        Store::namespaces(self)
    }

    fn gc(&self) -> Result<GcReport> {
        Store::gc(self)
    }

    fn verify(&self, progress: &mut dyn FnMut(u64)) -> Result<StoreVerifyReport> {
        Store::verify(self, progress)
    }

    fn entries(&self, namespace: Option<&str>) -> Result<Vec<Entry>> {
        Store::entries(self, namespace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreOptions;

    #[test]
    fn a_folder_store_through_the_trait() {
        let dir = tempfile::tempdir().unwrap();
        let store: Box<dyn ContentStore> =
            Box::new(Store::open(dir.path().join("s"), StoreOptions::default()).unwrap());
        let opts = store.local().write_options(None);
        let value = store
            .prepare_for("ns", &[(b"hello".as_slice(), opts.stream)], b"", opts)
            .unwrap();
        store.commit_many("ns", vec![("k".into(), value)]).unwrap();
        assert!(store.exists("ns", "k").unwrap());
        assert_eq!(store.keys("ns").unwrap(), ["k"]);
        let summary = store.summary().unwrap();
        assert_eq!((summary.keys(), summary.objects), (1, 1));
        assert!(summary.local.is_some() && summary.cache_dir.is_none());
        assert_eq!(summary.location, dir.path().join("s").display().to_string());
        assert!(store.delete("ns", "k").unwrap());
        assert_eq!(store.len("ns").unwrap(), 0);
    }
}
