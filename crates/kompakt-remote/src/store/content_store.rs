//! [`RemoteStore`] as a [`ContentStore`]: the operations every front end uses, whichever
//! store it holds.

use super::*;
use kompakt_store::{ContentStore, StoreSummary};

impl ContentStore for RemoteStore {
    fn location(&self) -> String {
        self.url().to_string()
    }

    fn local(&self) -> &Store {
        self.cache()
    }

    fn cache_dir(&self) -> Option<&std::path::Path> {
        Some(self.cache().root())
    }

    fn summary(&self) -> kompakt_store::Result<StoreSummary> {
        let info = self.info()?;
        Ok(StoreSummary {
            location: self.location(),
            layout_version: self.layout_version(),
            namespaces: info.namespaces,
            objects: info.objects,
            stored_bytes: info.object_bytes,
            dictionaries: info.dictionaries,
            dictionary_bytes: info.dictionary_bytes,
            cache_dir: Some(self.cache().root().to_path_buf()),
            local: None,
        })
    }

    fn prepare_for(
        &self,
        namespace: &str,
        streams: &[(&[u8], StreamOptions)],
        metadata: &[u8],
        opts: WriteOptions,
    ) -> kompakt_store::Result<PendingObject> {
        RemoteStore::prepare_for(self, namespace, streams, metadata, opts)
    }

    fn dictionary(&self, namespace: &str) -> kompakt_store::Result<Option<Dictionary>> {
        RemoteStore::dictionary(self, namespace)
    }

    fn train_dictionary(
        &self,
        namespace: &str,
        samples: &[&[u8]],
        max_slowdown: Option<f64>,
    ) -> kompakt_store::Result<DictionaryTrial> {
        RemoteStore::train_dictionary(self, namespace, samples, max_slowdown)
    }

    fn commit_many(&self, namespace: &str, items: Vec<(String, PendingObject)>) -> kompakt_store::Result<()> {
        RemoteStore::commit_many(self, namespace, items)
    }

    fn get(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<StoredObject>> {
        RemoteStore::get(self, namespace, key)
    }

    fn hash_of(&self, namespace: &str, key: &str) -> kompakt_store::Result<Option<ContentHash>> {
        RemoteStore::hash_of(self, namespace, key)
    }

    fn exists(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        RemoteStore::exists(self, namespace, key)
    }

    fn delete(&self, namespace: &str, key: &str) -> kompakt_store::Result<bool> {
        RemoteStore::delete(self, namespace, key)
    }

    fn clear(&self, namespace: Option<&str>) -> kompakt_store::Result<u64> {
        RemoteStore::clear(self, namespace)
    }

    fn keys(&self, namespace: &str) -> kompakt_store::Result<Vec<String>> {
        RemoteStore::keys(self, namespace)
    }

    fn len(&self, namespace: &str) -> kompakt_store::Result<u64> {
        RemoteStore::len(self, namespace)
    }

    fn namespaces(&self) -> kompakt_store::Result<Vec<(String, u64)>> {
        RemoteStore::namespaces(self)
    }

    fn gc(&self) -> kompakt_store::Result<GcReport> {
        RemoteStore::gc(self)
    }

    fn verify(&self, progress: &mut dyn FnMut(u64)) -> kompakt_store::Result<StoreVerifyReport> {
        RemoteStore::verify(self, progress)
    }

    fn entries(&self, namespace: Option<&str>) -> kompakt_store::Result<Vec<Entry>> {
        RemoteStore::entries(self, namespace)
    }
}
