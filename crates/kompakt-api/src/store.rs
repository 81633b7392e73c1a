//! Stores: a folder or an `s3://` URL opened as one [`ContentStore`], with every option of
//! both kinds checked here.
//!
//! Front ends hand over the plain values their users gave ([`StoreArgs`]) and get a
//! `Box<dyn ContentStore>`; whether the objects live in a folder or on object storage is
//! decided once, here, from the location.

use crate::options;
use kompakt::Error;
use kompakt_remote::{Location, RemoteStore, RemoteStoreOptions};
use kompakt_store::{ContentStore, Result, Store, StoreOptions};
use std::path::PathBuf;
use std::time::Duration;

pub use kompakt_remote::{DEFAULT_CACHE_LIMIT, DEFAULT_GRACE, DEFAULT_MULTIPART_THRESHOLD};
pub use kompakt_store::{StoreSummary, MAX_SLOWDOWN};

/// The options of a store as a front end receives them; `None` is "not given" (the default).
#[derive(Debug, Clone, Default)]
pub struct StoreArgs<'a> {
    /// The default codec (a spec or name) new values are written with; a new store records it,
    /// an existing one must have been made with the same.
    pub codec: Option<&'a str>,
    /// A unified level 0-100, or with a bare codec name that codec's level.
    pub level: Option<i64>,
    /// Threads for large values (0: all cores).
    pub threads: Option<i64>,
    /// Create the store when the location holds none (default true).
    pub create: Option<bool>,
    /// fsync every index commit (default false).
    pub durable: bool,
    /// Large values adapt their compression to the disk (default: when written with the
    /// library's default codec).
    pub adapt: Option<bool>,
    /// Train zstd dictionaries for namespaces of small values (default true).
    pub dictionaries: Option<bool>,
    /// How much slower (a fraction, >= 0, checked by the store) a dictionary may make small
    /// values for the store to adopt it (default [`MAX_SLOWDOWN`]); infinity adopts on size
    /// alone.
    pub dictionary_max_slowdown: Option<f64>,
    /// Object storage only: the local cache folder (default: one per URL under the user's
    /// cache folder).
    pub cache_dir: Option<PathBuf>,
    /// Object storage only: bytes the cache's objects may hold, >= 0 (default
    /// [`DEFAULT_CACHE_LIMIT`]); infinity for no limit.
    pub cache_limit: Option<f64>,
    /// Object storage only: seconds an unreferenced object is kept before `gc` removes it
    /// (default [`DEFAULT_GRACE`], an hour).
    pub grace_seconds: Option<f64>,
    /// Object storage only: objects of at least this many bytes are uploaded in parts
    /// (default [`DEFAULT_MULTIPART_THRESHOLD`]).
    pub multipart_threshold: Option<i64>,
}

impl StoreArgs<'_> {
    /// The options of the folder store (or of a remote store's cache).
    pub fn local_options(&self) -> kompakt::Result<StoreOptions> {
        let codec = match (self.codec, self.level) {
            (None, None) => None,
            (codec, level) => Some(options::codec(codec, level, false)?),
        };
        let threads = options::threads(self.threads.unwrap_or(0))?;
        // The store checks the fraction itself (train_dictionary takes one too).
        let dictionary_max_slowdown = match self.dictionary_max_slowdown {
            None => Some(MAX_SLOWDOWN),
            Some(s) if s == f64::INFINITY => None,
            given => given,
        };
        Ok(StoreOptions {
            codec,
            create: self.create.unwrap_or(true),
            durable: self.durable,
            threads,
            adapt: self.adapt,
            dictionaries: self.dictionaries.unwrap_or(true),
            dictionary_max_slowdown,
        })
    }

    /// The options of stores on object storage that were given, by name.
    fn remote_only(&self) -> Vec<&'static str> {
        [
            ("cache folder", self.cache_dir.is_some()),
            ("cache limit", self.cache_limit.is_some()),
            ("grace", self.grace_seconds.is_some()),
            ("multipart threshold", self.multipart_threshold.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// The options of a store on object storage, every one checked.
    pub fn remote_options(&self) -> kompakt::Result<RemoteStoreOptions> {
        let cache_limit = match self.cache_limit {
            None => Some(DEFAULT_CACHE_LIMIT),
            Some(l) if l == f64::INFINITY => None,
            Some(l) if l.is_finite() && l >= 0.0 => Some(l as u64),
            Some(l) => {
                return Err(Error::invalid(
                    "cache limit",
                    l.to_string(),
                    "a number of bytes >= 0, or infinity for no limit",
                ))
            }
        };
        let grace = match self.grace_seconds {
            None => DEFAULT_GRACE,
            Some(g) if g.is_finite() && g >= 0.0 => Duration::from_secs_f64(g),
            Some(g) => return Err(Error::invalid("grace", g.to_string(), "a number of seconds >= 0")),
        };
        let multipart_threshold = match self.multipart_threshold {
            None => DEFAULT_MULTIPART_THRESHOLD,
            Some(t) => u64::try_from(t)
                .ok()
                .filter(|&t| t >= 1)
                .ok_or_else(|| Error::invalid("multipart threshold", t.to_string(), "a number of bytes >= 1"))?,
        };
        Ok(RemoteStoreOptions {
            cache: self.cache_dir.clone(),
            cache_limit,
            multipart_threshold,
            local: self.local_options()?,
            grace,
        })
    }
}

/// Opens the store at `location`: a folder, or an `s3://` URL with its local cache. Options of
/// stores on object storage given for a folder are an option error, not ignored.
///
/// Errors of a remote store name its URL; a front end names the folder of a folder store.
pub fn open(location: &Location, args: &StoreArgs<'_>) -> Result<Box<dyn ContentStore>> {
    match location {
        Location::Local(path) => {
            let given = args.remote_only();
            if !given.is_empty() {
                return Err(kompakt_store::Error::from(Error::invalid(
                    "option for a folder store",
                    given.join(", "),
                    "the cache folder, cache limit, grace and multipart threshold are options of stores on \
                     object storage (s3:// URLs)",
                )));
            }
            let store = Store::open(path, args.local_options()?)?;
            Ok(Box::new(store))
        }
        Location::Remote(url) => Ok(Box::new(RemoteStore::open(url, args.remote_options()?)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kompakt::ErrorKind;

    fn folder() -> (tempfile::TempDir, Location) {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Local(dir.path().join("store"));
        (dir, location)
    }

    #[test]
    fn a_folder_opens_as_a_content_store() {
        let (_dir, location) = folder();
        let store = open(&location, &StoreArgs::default()).unwrap();
        assert!(store.summary().unwrap().local.is_some());
        assert_eq!(store.keys("objects").unwrap(), Vec::<String>::new());
        let e = open(
            &location,
            &StoreArgs {
                codec: Some("lz4"),
                ..StoreArgs::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("codec"), "{e}");
    }

    #[test]
    fn options_of_object_storage_are_refused_for_a_folder() {
        let (_dir, location) = folder();
        let e = open(
            &location,
            &StoreArgs {
                grace_seconds: Some(1.0),
                ..StoreArgs::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Option);
        assert!(e.to_string().contains("object storage"), "{e}");
        assert!(!location_exists(&location), "nothing created");
    }

    fn location_exists(location: &Location) -> bool {
        matches!(location, Location::Local(p) if p.exists())
    }

    #[test]
    fn every_number_is_checked_once() {
        let threads = StoreArgs {
            threads: Some(1000),
            ..StoreArgs::default()
        };
        assert_eq!(threads.local_options().unwrap_err().kind(), ErrorKind::Option);
        let (_dir, location) = folder();
        let slowdown = StoreArgs {
            dictionary_max_slowdown: Some(-0.5),
            ..StoreArgs::default()
        };
        let e = open(&location, &slowdown).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Option);
        assert!(e.to_string().contains("max_slowdown"), "{e}");
        let remote_bad = [
            StoreArgs {
                cache_limit: Some(-1.0),
                ..StoreArgs::default()
            },
            StoreArgs {
                grace_seconds: Some(f64::NAN),
                ..StoreArgs::default()
            },
            StoreArgs {
                multipart_threshold: Some(0),
                ..StoreArgs::default()
            },
        ];
        for args in &remote_bad {
            let e = args.remote_options().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Option, "{e}");
        }
        let o = StoreArgs {
            cache_limit: Some(f64::INFINITY),
            grace_seconds: Some(0.5),
            dictionary_max_slowdown: Some(f64::INFINITY),
            ..StoreArgs::default()
        }
        .remote_options()
        .unwrap();
        assert_eq!(o.cache_limit, None);
        assert_eq!(o.grace, Duration::from_millis(500));
        assert_eq!(o.local.dictionary_max_slowdown, None);
        assert_eq!(o.multipart_threshold, DEFAULT_MULTIPART_THRESHOLD);
    }
}
