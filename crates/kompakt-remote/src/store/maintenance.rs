//! Looking after a store on object storage: its totals, collecting garbage, checking every
//! object.

use super::*;

/// What [`RemoteStore::info`] reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteStoreInfo {
    pub namespaces: Vec<(String, u64)>,
    pub objects: u64,
    pub object_bytes: u64,
    /// zstd dictionaries on the server (trained for namespaces of small values).
    pub dictionaries: u64,
    pub dictionary_bytes: u64,
}

impl RemoteStore {
    /// Namespaces, objects, dictionaries and their bytes.
    pub fn info(&self) -> kompakt_store::Result<RemoteStoreInfo> {
        // Another machine may have raised the layout since this handle opened the store.
        self.check_layout(false)?;
        let objects = self.listed_objects()?;
        let dictionaries = self.listed_dictionaries()?;
        Ok(RemoteStoreInfo {
            namespaces: self.namespaces()?,
            objects: objects.len() as u64,
            object_bytes: objects.iter().map(|(_, m)| m.size).sum(),
            dictionaries: dictionaries.len() as u64,
            dictionary_bytes: dictionaries.iter().map(|(_, m)| m.size).sum(),
        })
    }

    /// Every object file on the server, with the hash and dictionary its name holds.
    pub(super) fn listed_objects(&self) -> kompakt_store::Result<Vec<(ObjectName, ObjectMeta)>> {
        let listed = self.list(&self.path("objects"))?;
        Ok(listed
            .into_iter()
            .filter_map(|m| Some((m.location.filename().and_then(parse_object_file_name)?, m)))
            .collect())
    }

    /// Every dictionary file on the server, with its id.
    pub(super) fn listed_dictionaries(&self) -> kompakt_store::Result<Vec<(DictionaryId, ObjectMeta)>> {
        let listed = self.list(&self.path("dictionaries"))?;
        Ok(listed
            .into_iter()
            .filter_map(|m| Some((m.location.filename().and_then(parse_dictionary_file_name)?, m)))
            .collect())
    }

    /// Every namespace record on the server: the namespace, and its record (None: damaged).
    pub(super) fn listed_namespace_records(
        &self,
    ) -> kompakt_store::Result<Vec<(String, ObjectMeta, Option<NamespaceRecord>)>> {
        let mut out = Vec::new();
        for meta in self.list(&self.path("namespaces"))? {
            let name = meta.location.filename().and_then(|f| f.strip_suffix(".json"));
            let Some(namespace) = name.and_then(|f| decode_segment('n', f)) else {
                continue;
            };
            let found = match self.get_small(&meta.location) {
                Err(e) if e.is_corruption() => Ok(bytes::Bytes::new()), // decodes to no record
                other => other?,
            };
            match found {
                Ok(data) => out.push((namespace, meta, NamespaceRecord::decode(&data))),
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return self.io(Err(e)),
            }
        }
        Ok(out)
    }

    /// Removes what nothing needs and that was older than the grace period when gc began:
    /// objects no key names, the dictionary records of namespaces without keys, and
    /// dictionaries no key and no namespace names. Each is looked at again just before it is
    /// removed: one a writer refreshed meanwhile stays.
    pub fn gc(&self) -> kompakt_store::Result<GcReport> {
        // Ages count from here: a key record written after the listing below began names an
        // object its writer made sure was younger than half the grace period then.
        let began = SystemTime::now();
        let mut live = HashSet::new();
        let mut live_dictionaries = HashSet::new();
        let mut with_keys = HashSet::new();
        let mut report = GcReport::default();
        for (ns, key) in self.all_keys()? {
            match self.record(&ns, &key) {
                Ok(Some(record)) => {
                    live.insert((record.hash, record.dictionary));
                    live_dictionaries.extend(record.dictionary);
                }
                Ok(None) => {}
                // One damaged record does not stop the collection of the whole store: it is
                // reported, and `delete` removes it.
                Err(e) if e.is_corruption() => report.problems.push(format!(
                    "key {key:?} (namespace {ns:?}): {e}; passed over (delete the key to remove it)"
                )),
                Err(e) => return Err(e),
            }
            with_keys.insert(ns);
        }
        for (ns, meta, record) in self.listed_namespace_records()? {
            if with_keys.contains(&ns) || !self.remove_if_old(&meta.location, began)? {
                live_dictionaries.extend(record.map(|r| r.dictionary));
            } else {
                locked(&self.namespaces).remove(&ns);
            }
        }
        for (name, meta) in self.listed_objects()? {
            if !live.contains(&name) && self.remove_if_old(&meta.location, began)? {
                report.objects += 1;
                report.bytes += meta.size;
            }
        }
        for (id, meta) in self.listed_dictionaries()? {
            if !live_dictionaries.contains(&id) && self.remove_if_old(&meta.location, began)? {
                locked(&self.fresh_dictionaries).remove(&id);
                report.dictionaries += 1;
                report.bytes += meta.size;
            }
        }
        Ok(report)
    }

    /// Removes what is at `path` if it was older than the grace period at `began`, looking
    /// at it again first; true if it removed it.
    pub(super) fn remove_if_old(&self, path: &ObjectPath, began: SystemTime) -> kompakt_store::Result<bool> {
        match self.run(self.client.head(path))? {
            Ok(meta) if age(&meta, began) >= self.grace => {}
            Ok(_) | Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(e) => return self.io(Err(e)),
        }
        match self.run(self.client.delete(path))? {
            Ok(()) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => self.io(Err(e)),
        }
    }

    /// Reads every key's object back (through the cache) and checks its checksums, and every
    /// dictionary against its id; every problem is reported, none stops the check.
    pub fn verify(&self, progress: &mut dyn FnMut(u64)) -> kompakt_store::Result<StoreVerifyReport> {
        let mut report = StoreVerifyReport::default();
        let mut sound_dictionaries = HashSet::new();
        for (id, _) in self.listed_dictionaries()? {
            match self.download_dictionary(id)? {
                Some(Ok(_)) => {
                    report.dictionaries += 1;
                    sound_dictionaries.insert(id);
                }
                Some(Err(problem)) => report.problems.push(problem),
                None => {} // removed by a gc meanwhile
            }
        }
        for (ns, _, record) in self.listed_namespace_records()? {
            match record {
                None => report
                    .problems
                    .push(format!("namespace {ns:?}: its dictionary record is not one")),
                Some(r) if !sound_dictionaries.contains(&r.dictionary) => report.problems.push(format!(
                    "namespace {ns:?}: its dictionary {} is missing or damaged",
                    r.dictionary
                )),
                Some(_) => {}
            }
        }
        // The server's copy of every key's object, not the cache's: downloaded and checked as
        // it arrives (checksums and content hash), nothing kept.
        for (ns, key) in self.all_keys()? {
            report.keys += 1;
            let checked = self.record(&ns, &key).and_then(|record| {
                let Some(record) = record else { return Ok(Ok(None)) };
                let dictionary = match record.dictionary {
                    None => None,
                    Some(id) => match self.load_dictionary(id)? {
                        Some(d) => Some(d),
                        None => return Ok(Err(format!("its dictionary {id} is missing"))),
                    },
                };
                Ok(match self.download_checked(&key, record, dictionary, |_| Ok(()))? {
                    Ok(()) => Ok(Some(record)),
                    Err(missing) => Err(format!("{missing} is missing")),
                })
            });
            match checked {
                Ok(Ok(Some(record))) => {
                    report.objects += 1;
                    report.raw_bytes += record.raw_size;
                    progress(record.stored_size);
                }
                Ok(Ok(None)) => {}
                Ok(Err(problem)) => report
                    .problems
                    .push(format!("key {key:?} (namespace {ns:?}): {problem}")),
                Err(e) => report.problems.push(format!("key {key:?} (namespace {ns:?}): {e}")),
            }
        }
        Ok(report)
    }
}

/// How old an object was at `at` (by the server's clock for its modification, this machine's
/// for `at`: the grace period covers the difference).
pub(super) fn age(meta: &ObjectMeta, at: SystemTime) -> Duration {
    at.duration_since(SystemTime::from(meta.last_modified))
        .unwrap_or_default()
}
