//! `Store`: the object store's index and object files, for `kompakt.Store`.
//!
//! The Python class in `kompakt/_store.py` serializes values (pickle 5, as `save` does) and
//! calls these methods; keys, hashing, transactions and files are handled in the core crate.

use crate::buffers::Buffer;
use crate::errors::IntoPy;
use crate::options;
use crate::pyfile::{Sink, Source};
use crate::reader::FileReader;
use crate::writer::FileWriter;
use kompakt::stream::{ContentHasher, StreamOptions};
use kompakt::{FilterSpec, ReadOptions, Reader};
use kompakt_remote::Location;
use kompakt_store::{ContentStore, PendingObject};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::Mutex;

/// An object ready to be committed under a key (made by `Store.prepare`).
#[pyclass(module = "kompakt._core", frozen)]
pub struct Pending {
    inner: Mutex<Option<PendingObject>>,
    hash: String,
}

#[pymethods]
impl Pending {
    /// The object's content hash (32 hex digits).
    #[getter]
    fn hash(&self) -> &str {
        &self.hash
    }
}

impl Pending {
    fn new(object: PendingObject) -> Pending {
        Pending {
            hash: object.hash().to_string(),
            inner: Mutex::new(Some(object)),
        }
    }

    fn take(&self) -> PyResult<PendingObject> {
        self.inner
            .lock()
            .map_err(crate::errors::poisoned)?
            .take()
            .ok_or_else(|| crate::errors::usage_error("this object was already committed"))
    }
}

/// The store at a folder or on object storage: see `kompakt.Store` for the user-facing class.
#[pyclass(module = "kompakt._core", frozen, name = "Store")]
pub struct PyStore {
    store: Box<dyn ContentStore>,
}

fn codec_override(codec: Option<&str>, level: Option<i64>) -> PyResult<Option<kompakt::CodecSpec>> {
    if codec.is_none() && level.is_none() {
        return Ok(None);
    }
    options::codec_spec(codec, level).map(Some)
}

/// Options of a small object's streams: bytes (a pickle), no filter.
fn bytes_stream(codec: kompakt::CodecSpec) -> StreamOptions {
    StreamOptions::default()
        .codec(codec)
        .typesize(1)
        .filter(FilterSpec::None)
}

impl PyStore {
    /// The object for whole streams; for a value of `namespace`, small values use (or help
    /// train) the namespace's dictionary.
    fn pending_from_streams(
        &self,
        py: Python<'_>,
        namespace: Option<&str>,
        streams: &Bound<'_, PyList>,
        metadata: &[u8],
        codec: Option<kompakt::CodecSpec>,
    ) -> PyResult<PendingObject> {
        let buffers = streams.iter().map(|s| Buffer::get(&s)).collect::<PyResult<Vec<_>>>()?;
        let opts = self.store.local().write_options(codec);
        let stream_opts = bytes_stream(opts.stream.codec);
        py.detach(|| {
            let parts: Vec<_> = buffers.iter().map(|b| (b.as_slice(), stream_opts)).collect();
            match namespace {
                Some(namespace) => self.store.prepare_for(namespace, &parts, metadata, opts),
                None => self.store.local().prepare(&parts, metadata, opts),
            }
        })
        .py_err()
    }
}

#[pymethods]
impl PyStore {
    #[new]
    #[pyo3(signature = (path, *, codec=None, level=None, create=true, durable=false, threads=None, adapt=None, dictionaries=true, dictionary_max_slowdown=Some(kompakt_store::MAX_SLOWDOWN), cache_dir=None, grace=None, cache_dir_limit=None, multipart_threshold=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: Bound<'_, PyAny>,
        codec: Option<&str>,
        level: Option<i64>,
        create: bool,
        durable: bool,
        threads: Option<i64>,
        adapt: Option<bool>,
        dictionaries: bool,
        dictionary_max_slowdown: Option<f64>,
        cache_dir: Option<std::path::PathBuf>,
        grace: Option<f64>,
        cache_dir_limit: Option<f64>,
        multipart_threshold: Option<u64>,
    ) -> PyResult<Self> {
        let location = crate::pyfile::location(&path)?;
        let args = kompakt_api::store::StoreArgs {
            codec,
            level,
            threads,
            create: Some(create),
            durable,
            adapt,
            dictionaries: Some(dictionaries),
            // Python's None adopts a dictionary on size alone.
            dictionary_max_slowdown: Some(dictionary_max_slowdown.unwrap_or(f64::INFINITY)),
            cache_dir,
            cache_limit: cache_dir_limit,
            grace_seconds: grace,
            multipart_threshold: multipart_threshold.map(|t| t.min(i64::MAX as u64) as i64),
        };
        let name = match &location {
            Location::Local(path) => path.clone(),
            Location::Remote(url) => std::path::PathBuf::from(url.as_str()),
        };
        let store = py
            .detach(|| kompakt_api::store::open(&location, &args))
            .map_err(|e| match e {
                kompakt_store::Error::Format(kompakt::Error::Io(io)) => crate::errors::os_error(io, &name),
                e => crate::errors::store_to_py(e),
            })?;
        Ok(PyStore { store })
    }

    /// The store's folder, or its URL (a `str`: a URL is no path).
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.store.cache_dir() {
            None => self.store.local().root().into_pyobject(py).map(|p| p.into_any()),
            Some(_) => Ok(self.store.location().into_pyobject(py)?.into_any()),
        }
    }

    /// The local cache folder of a store on object storage (None for a local store).
    #[getter]
    fn cache_dir(&self) -> Option<std::path::PathBuf> {
        self.store.cache_dir().map(|dir| dir.to_path_buf())
    }

    /// The default codec new objects are written with.
    #[getter]
    fn codec(&self) -> String {
        self.store.local().config().codec.to_string()
    }

    /// Whether objects written with the default codec adapt to the disk.
    #[getter]
    fn adapts(&self) -> bool {
        self.store.local().adapts(&self.store.local().write_options(None))
    }

    /// Records a new default codec in the store's configuration.
    #[pyo3(signature = (codec=None, level=None))]
    fn set_default_codec(&self, py: Python<'_>, codec: Option<&str>, level: Option<i64>) -> PyResult<()> {
        let spec = options::codec_spec(codec, level)?;
        py.detach(|| self.store.local().set_default_codec(spec)).py_err()
    }

    /// Stores whole byte streams with metadata under `key` in one call; returns the hash.
    #[pyo3(signature = (namespace, key, streams, metadata, *, codec=None, level=None))]
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        py: Python<'_>,
        namespace: &str,
        key: &str,
        streams: &Bound<'_, PyList>,
        metadata: &[u8],
        codec: Option<&str>,
        level: Option<i64>,
    ) -> PyResult<String> {
        let object =
            self.pending_from_streams(py, Some(namespace), streams, metadata, codec_override(codec, level)?)?;
        let hash = object.hash();
        py.detach(|| self.store.commit_many(namespace, vec![(key.to_string(), object)]))
            .py_err()?;
        Ok(hash.to_string())
    }

    /// Builds an object from whole byte streams, to commit later (`commit`) under
    /// `namespace` (which lets a small value use the namespace's dictionary).
    #[pyo3(signature = (streams, metadata, *, namespace=None, codec=None, level=None))]
    fn prepare(
        &self,
        py: Python<'_>,
        streams: &Bound<'_, PyList>,
        metadata: &[u8],
        namespace: Option<&str>,
        codec: Option<&str>,
        level: Option<i64>,
    ) -> PyResult<Pending> {
        self.pending_from_streams(py, namespace, streams, metadata, codec_override(codec, level)?)
            .map(Pending::new)
    }

    /// The zstd dictionary the namespace's small values are compressed with, or None.
    fn dictionary(&self, py: Python<'_>, namespace: &str) -> PyResult<Option<crate::dictionary::PyDictionary>> {
        let found = py.detach(|| self.store.dictionary(namespace)).py_err()?;
        Ok(found.map(|inner| crate::dictionary::PyDictionary { inner }))
    }

    /// Trains a dictionary for `namespace` on `samples`, judges it on held-out ones and adopts
    /// it if it pays; returns what the trial found.
    #[pyo3(signature = (namespace, samples, *, max_slowdown=Some(kompakt_store::MAX_SLOWDOWN)))]
    fn train_dictionary<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        samples: Vec<Bound<'py, PyAny>>,
        max_slowdown: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let buffers = samples.iter().map(Buffer::get).collect::<PyResult<Vec<_>>>()?;
        let trial = py
            .detach(|| {
                let slices: Vec<&[u8]> = buffers.iter().map(|b| b.as_slice()).collect();
                self.store.train_dictionary(namespace, &slices, max_slowdown)
            })
            .py_err()?;
        let d = PyDict::new(py);
        d.set_item("namespace", &trial.namespace)?;
        d.set_item("adopted", trial.adopted)?;
        d.set_item("reason", &trial.reason)?;
        d.set_item("dictionary_id", trial.dictionary.map(|(id, _)| id.to_string()))?;
        d.set_item("dictionary_bytes", trial.dictionary.map(|(_, n)| n))?;
        d.set_item("trained_samples", trial.trained_samples)?;
        d.set_item("trained_bytes", trial.trained_bytes)?;
        d.set_item("held_out_samples", trial.held_out_samples)?;
        d.set_item("held_out_bytes", trial.held_out_bytes)?;
        d.set_item("stored_without", trial.stored_without)?;
        d.set_item("stored_with", trial.stored_with)?;
        d.set_item("seconds_without", trial.seconds_without)?;
        d.set_item("seconds_with", trial.seconds_with)?;
        d.set_item("overhead_seconds", trial.overhead_seconds)?;
        d.set_item("training_seconds", trial.training_seconds)?;
        Ok(d)
    }

    /// A `FileWriter` whose file becomes a store object: write it, then pass it to `finish`.
    #[pyo3(signature = (*, codec=None, level=None))]
    fn writer(&self, py: Python<'_>, codec: Option<&str>, level: Option<i64>) -> PyResult<FileWriter> {
        let opts = self.store.local().write_options(codec_override(codec, level)?);
        let spill = self.store.local().spill(&opts);
        let mut writer = py
            .detach(|| kompakt_fs::writer(Sink::Spill(spill), opts, None))
            .py_err()?;
        writer.hash_content().py_err()?;
        Ok(FileWriter::from_writer(writer, opts))
    }

    /// Ends a writer made by `writer()`: the object, ready to commit.
    fn finish(&self, py: Python<'_>, writer: &FileWriter) -> PyResult<Pending> {
        let writer = writer
            .take_writer(py)?
            .ok_or_else(|| crate::errors::usage_error("this writer is already closed"))?;
        let raw = writer.bytes_in();
        let object = py
            .detach(|| -> kompakt_store::Result<Option<PendingObject>> {
                let (sink, hash) = writer.finish_hashed()?;
                let (Sink::Spill(spill), Some(hash)) = (sink, hash) else {
                    return Ok(None);
                };
                PendingObject::new(spill, hash, raw).map(Some)
            })
            .py_err()?
            .ok_or_else(|| crate::errors::usage_error("this writer was not made by the store's writer()"))?;
        Ok(Pending::new(object))
    }

    /// Points keys at objects, all in one transaction: `items` is a list of (key, Pending).
    fn commit(&self, py: Python<'_>, namespace: &str, items: &Bound<'_, PyList>) -> PyResult<()> {
        let mut objects = Vec::with_capacity(items.len());
        for item in items.iter() {
            let (key, pending): (String, Bound<'_, Pending>) = item.extract()?;
            objects.push((key, pending.get().take()?));
        }
        py.detach(|| self.store.commit_many(namespace, objects)).py_err()
    }

    /// The object under `key`: None if missing; `(hash, metadata, stream0)` (bytes) for a
    /// small single-stream object; else `(hash, FileReader)`. The hash is that of the object
    /// read, even if another writer changes the key meanwhile.
    #[pyo3(signature = (namespace, key, *, threads=None))]
    fn fetch<'py>(
        &self,
        py: Python<'py>,
        namespace: &str,
        key: &str,
        threads: Option<i64>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let opts = ReadOptions::default().threads(match threads {
            None => self.store.local().read_options().threads,
            t => options::threads(t)?,
        });
        enum Found {
            Whole(String, Vec<u8>, Vec<u8>),
            Reader(String, Reader<Source>),
        }
        let found = py
            .detach(|| -> kompakt_store::Result<Option<Found>> {
                let Some(object) = self.store.get(namespace, key)? else {
                    return Ok(None);
                };
                let (inline, hash) = (object.inline, object.hash.to_string());
                let mut reader = Reader::new(Source::Object(object.source), opts)?;
                reader.set_dictionaries(object.dictionaries);
                if inline && reader.streams().len() == 1 {
                    let data = reader.read_stream(0)?;
                    return Ok(Some(Found::Whole(hash, reader.metadata().to_vec(), data)));
                }
                Ok(Some(Found::Reader(hash, reader)))
            })
            .py_err()?;
        Ok(match found {
            None => None,
            Some(Found::Whole(hash, meta, data)) => Some(
                PyTuple::new(
                    py,
                    [
                        hash.into_pyobject(py)?.into_any(),
                        PyBytes::new(py, &meta).into_any(),
                        PyBytes::new(py, &data).into_any(),
                    ],
                )?
                .into_any(),
            ),
            Some(Found::Reader(hash, reader)) => Some(
                PyTuple::new(
                    py,
                    [
                        hash.into_pyobject(py)?.into_any(),
                        Bound::new(py, FileReader::from_reader(reader))?.into_any(),
                    ],
                )?
                .into_any(),
            ),
        })
    }

    /// The content hash `key` points at, or None.
    fn hash(&self, py: Python<'_>, namespace: &str, key: &str) -> PyResult<Option<String>> {
        let h = py.detach(|| self.store.hash_of(namespace, key)).py_err()?;
        Ok(h.map(|h| h.to_string()))
    }

    fn exists(&self, py: Python<'_>, namespace: &str, key: &str) -> PyResult<bool> {
        py.detach(|| self.store.exists(namespace, key)).py_err()
    }

    fn delete(&self, py: Python<'_>, namespace: &str, key: &str) -> PyResult<bool> {
        py.detach(|| self.store.delete(namespace, key)).py_err()
    }

    #[pyo3(signature = (namespace=None))]
    fn clear(&self, py: Python<'_>, namespace: Option<&str>) -> PyResult<u64> {
        py.detach(|| self.store.clear(namespace)).py_err()
    }

    fn keys(&self, py: Python<'_>, namespace: &str) -> PyResult<Vec<String>> {
        py.detach(|| self.store.keys(namespace)).py_err()
    }

    fn len(&self, py: Python<'_>, namespace: &str) -> PyResult<u64> {
        py.detach(|| self.store.len(namespace)).py_err()
    }

    fn namespaces(&self, py: Python<'_>) -> PyResult<Vec<(String, u64)>> {
        py.detach(|| self.store.namespaces()).py_err()
    }

    /// Counts and sizes, as `kompakt store info` shows them.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let config = self.store.local().config();
        d.set_item("codec", config.codec.to_string())?;
        let summary = py.detach(|| self.store.summary()).py_err()?;
        d.set_item("version", summary.layout_version)?;
        d.set_item("hash", config.hash)?;
        d.set_item("objects", summary.objects)?;
        d.set_item("stored_bytes", summary.stored_bytes)?;
        d.set_item("dictionaries", summary.dictionaries)?;
        d.set_item("dictionary_bytes", summary.dictionary_bytes)?;
        match (&summary.local, &summary.cache_dir) {
            (Some(info), _) => {
                d.set_item("path", self.store.local().root().to_string_lossy())?;
                d.set_item("key_encoding", config.key_encoding)?;
                d.set_item("inline_objects", info.inline_objects)?;
                d.set_item("inline_bytes", info.inline_bytes)?;
                d.set_item("file_objects", info.file_objects)?;
                d.set_item("file_bytes", info.file_bytes)?;
                d.set_item("raw_bytes", info.raw_bytes)?;
                d.set_item("index_bytes", info.index_bytes)?;
            }
            (None, cache_dir) => {
                d.set_item("path", &summary.location)?;
                if let Some(dir) = cache_dir {
                    d.set_item("cache_dir", dir.to_string_lossy())?;
                }
            }
        }
        let namespaces = summary.namespaces;
        let ns = PyDict::new(py);
        for (name, count) in &namespaces {
            ns.set_item(name, count)?;
        }
        d.set_item("namespaces", ns)?;
        d.set_item("keys", namespaces.iter().map(|(_, n)| n).sum::<u64>())?;
        Ok(d)
    }

    /// Drops the least recently used objects until the object files hold at most
    /// `max_bytes` (a remote store's: of its cache folder); returns what it removed.
    fn reduce_size<'py>(&self, py: Python<'py>, max_bytes: u64) -> PyResult<Bound<'py, PyDict>> {
        let r = py.detach(|| self.store.local().reduce_size(max_bytes)).py_err()?;
        let d = PyDict::new(py);
        d.set_item("keys", r.keys)?;
        d.set_item("objects", r.gc.objects)?;
        d.set_item("bytes", r.gc.bytes)?;
        d.set_item("file_bytes", r.file_bytes)?;
        Ok(d)
    }

    /// Removes unreferenced objects; returns what it removed.
    fn gc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = py.detach(|| self.store.gc()).py_err()?;
        let d = PyDict::new(py);
        d.set_item("objects", r.objects)?;
        d.set_item("bytes", r.bytes)?;
        d.set_item("orphan_files", r.orphan_files)?;
        d.set_item("temp_files", r.temp_files)?;
        d.set_item("dictionaries", r.dictionaries)?;
        d.set_item("problems", r.problems)?;
        Ok(d)
    }

    /// Reads every object back; returns counts and the list of problems (empty: sound).
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = py.detach(|| self.store.verify(&mut |_| {})).py_err()?;
        let d = PyDict::new(py);
        d.set_item("objects", r.objects)?;
        d.set_item("raw_bytes", r.raw_bytes)?;
        d.set_item("keys", r.keys)?;
        d.set_item("dictionaries", r.dictionaries)?;
        d.set_item("problems", r.problems)?;
        Ok(d)
    }
}

/// Streaming XXH3-128 over bytes-like objects (used to key memoized calls). Large buffers are
/// hashed with the GIL released.
#[pyclass(module = "kompakt._core")]
pub struct Hasher {
    inner: ContentHasher,
}

#[pymethods]
impl Hasher {
    #[new]
    fn new() -> Self {
        let mut inner = ContentHasher::new();
        inner.add_stream();
        Hasher { inner }
    }

    /// Adds the bytes of a bytes-like object; returns their length (so it can be a file's
    /// `write`).
    fn write(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let buf = Buffer::get(data)?;
        let inner = &mut self.inner;
        if buf.len() >= 1 << 16 {
            let b = &buf;
            py.detach(|| inner.update(0, b.as_slice()));
        } else {
            inner.update(0, buf.as_slice());
        }
        Ok(buf.len())
    }

    /// 32 hex digits.
    fn hexdigest(&self) -> String {
        self.inner.finish(b"").to_string()
    }
}

/// Items a plain container may hold, and characters (or bytes) a plain string may hold.
const PLAIN_ITEMS_MAX: usize = 1024;
const PLAIN_TEXT_MAX: usize = 4096;

/// Whether `value` pickles the same through `pickle.dumps` as through the object encoder
/// and stays small: a builtin scalar (float, int, bool, None, complex, short str or bytes),
/// or a dict, list or tuple of at most 1024 of those. Such values skip the encoder's setup
/// (about 3 us of a tiny set); checking the items here rather than in Python saves as much
/// again on a 40-item dict.
#[pyfunction]
pub fn is_plain(value: &Bound<'_, PyAny>) -> bool {
    if let Some(scalar) = plain_scalar(value) {
        return scalar;
    }
    if let Ok(dict) = value.cast_exact::<PyDict>() {
        dict.len() <= PLAIN_ITEMS_MAX
            && dict
                .iter()
                .all(|(k, v)| plain_scalar(&k) == Some(true) && plain_scalar(&v) == Some(true))
    } else if let Ok(list) = value.cast_exact::<PyList>() {
        list.len() <= PLAIN_ITEMS_MAX && all_plain(list.iter())
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        tuple.len() <= PLAIN_ITEMS_MAX && all_plain(tuple.iter())
    } else {
        false
    }
}

fn all_plain<'py>(mut items: impl Iterator<Item = Bound<'py, PyAny>>) -> bool {
    items.all(|item| plain_scalar(&item) == Some(true))
}

/// Some(plain or not) for a value of a builtin scalar type (exactly, not a subclass); None
/// for anything else.
fn plain_scalar(value: &Bound<'_, PyAny>) -> Option<bool> {
    use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyString};
    if value.is_exact_instance_of::<PyFloat>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyBool>()
        || value.is_none()
        || value.is_exact_instance_of::<PyComplex>()
    {
        Some(true)
    } else if let Ok(text) = value.cast_exact::<PyString>() {
        // len() in characters, as Python counts them.
        Some(text.len().is_ok_and(|n| n <= PLAIN_TEXT_MAX))
    } else if let Ok(bytes) = value.cast_exact::<PyBytes>() {
        Some(bytes.as_bytes().len() <= PLAIN_TEXT_MAX)
    } else {
        None
    }
}
