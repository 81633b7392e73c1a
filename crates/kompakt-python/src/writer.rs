//! `FileWriter`: a kompakt file being written, one or more streams.

use crate::buffers::Buffer;
use crate::dictionary::PyDictionary;
use crate::errors::IntoPy;
use crate::guard::Shared;
use crate::options;
use crate::pyfile::{PyFile, Sink, Target};
use kompakt::stream::StreamId;
use kompakt::{WriteOptions, Writer};
use kompakt_fs::AtomicFile;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Writes a kompakt file to a path (atomically), a binary file object, or memory.
/// `adapt=True` (a path only) compresses only as far as the disk leaves time for.
///
/// Low level: `kompakt.save`, `kompakt.dumps` and `kompakt.open(..., "wb")` are built on it.
/// Nothing is visible at a path before `close()`; `abort()` (or an error) discards the file.
#[pyclass(module = "kompakt._core", frozen)]
pub struct FileWriter {
    state: Shared<Writer<Sink>>,
    opts: WriteOptions,
}

impl FileWriter {
    pub(crate) fn from_writer(writer: Writer<Sink>, opts: WriteOptions) -> FileWriter {
        FileWriter {
            state: Shared::new(writer),
            opts,
        }
    }

    pub(crate) fn take_writer(&self, py: Python<'_>) -> PyResult<Option<Writer<Sink>>> {
        self.state.take(py)
    }

    fn with_writer<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Writer<Sink>) -> kompakt::Result<T> + Send,
    ) -> PyResult<T> {
        self.state.with(py, |w| f(w).py_err())
    }
}

fn needs_a_path() -> PyErr {
    crate::errors::option_error("adapt=True paces the compressor by the disk and needs a path to write to")
}

#[pymethods]
impl FileWriter {
    /// `target`: a path (`str` or `os.PathLike`), a binary file object, or None for memory.
    /// `adapt`: compress only as far as the disk leaves time for (a path only; see `Store`).
    #[new]
    #[pyo3(signature = (target=None, *, codec=None, level=None, threads=None, typesize=None, filter=None, block_size=None, adapt=false, dictionary=None, sync=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        target: Option<Bound<'_, PyAny>>,
        codec: Option<&str>,
        level: Option<i64>,
        threads: Option<i64>,
        typesize: Option<i64>,
        filter: Option<&str>,
        block_size: Option<i64>,
        adapt: bool,
        dictionary: Option<PyRef<'_, PyDictionary>>,
        sync: Option<&str>,
    ) -> PyResult<Self> {
        let durability = options::sync(sync)?;
        let opts = options::write_options(
            codec,
            level,
            threads,
            typesize,
            filter,
            block_size,
            dictionary.is_some(),
        )?;
        let dictionary = dictionary.map(|d| d.inner.clone());
        let sink = match target {
            None if adapt => return Err(needs_a_path()),
            None => Sink::Memory(Vec::new()),
            Some(t) => match Target::classify(t, "write")? {
                Target::Path(path) => Sink::Atomic(
                    py.detach(|| {
                        let progress = adapt.then(Default::default);
                        AtomicFile::with_options(&path, progress, durability)
                    })
                    .map_err(|e| crate::errors::os_error(e, &path))?,
                ),
                Target::Url(url) => return Err(crate::pyfile::cannot_write(&url)),
                Target::FileObject(_) if adapt => return Err(needs_a_path()),
                Target::FileObject(obj) => Sink::Python(PyFile::new(obj)),
                Target::Data(obj) => {
                    return Err(PyTypeError::new_err(format!(
                        "expected a path (str, os.PathLike) or a binary file object with write(), got {}",
                        obj.get_type().name()?
                    )))
                }
            },
        };
        let writer = py
            .detach(|| kompakt_fs::writer_with_dictionary(sink, opts, Some(Sink::memory), dictionary))
            .py_err()?;
        Ok(FileWriter {
            state: Shared::new(writer),
            opts,
        })
    }

    /// Opens a stream and returns its id. Unset options default to the file's.
    #[pyo3(signature = (*, codec=None, level=None, typesize=None, filter=None))]
    fn add_stream(
        &self,
        py: Python<'_>,
        codec: Option<&str>,
        level: Option<i64>,
        typesize: Option<i64>,
        filter: Option<&str>,
    ) -> PyResult<u32> {
        let opts = options::stream_options(self.opts.stream_options(), codec, level, typesize, filter)?;
        self.with_writer(py, |w| w.add_stream(Some(opts))).map(|id| id.0)
    }

    /// Appends a bytes-like object to a stream (compressed straight from its memory, with the
    /// GIL released) and returns its length in bytes.
    fn write(&self, py: Python<'_>, stream: u32, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let buf = Buffer::get(data)?;
        let buf = &buf;
        self.with_writer(py, |w| w.write(StreamId(stream), buf.as_slice()))?;
        Ok(buf.len())
    }

    /// Ends a stream; later writes to it fail.
    fn finish_stream(&self, py: Python<'_>, stream: u32) -> PyResult<()> {
        self.with_writer(py, |w| w.finish_stream(StreamId(stream)))
    }

    /// Sets the metadata stored in the footer (at most 256 MiB).
    fn set_metadata(&self, py: Python<'_>, metadata: Vec<u8>) -> PyResult<()> {
        self.with_writer(py, move |w| w.set_metadata(metadata))
    }

    /// Raw bytes accepted so far, over all streams.
    #[getter]
    fn bytes_in(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_writer(py, |w| Ok(w.bytes_in()))
    }

    /// True when this writer adapts its compression to the disk (`adapt=True`).
    #[getter]
    fn adapts(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_writer(py, |w| Ok(w.adapts()))
    }

    /// True once `close()` or `abort()` ran.
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.state.is_closed(py)
    }

    /// Writes the index and completes the file: a path is fsynced and renamed into place, a
    /// file object is flushed (not closed). Returns the file as `bytes` when writing to memory,
    /// else None. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<Option<Py<PyBytes>>> {
        let Some(writer) = self.state.take(py)? else {
            return Ok(None);
        };
        let sink = py.detach(|| writer.finish()).py_err()?;
        match sink {
            Sink::Atomic(file) => {
                let target = file.target().to_path_buf();
                py.detach(|| file.commit())
                    .map_err(|e| crate::errors::os_error(e, &target))?;
                Ok(None)
            }
            Sink::Python(mut file) => {
                use std::io::Write;
                file.flush()?;
                Ok(None)
            }
            Sink::Memory(bytes) => Ok(Some(PyBytes::new(py, &bytes).unbind())),
            Sink::Spill(_) => Err(crate::errors::usage_error(
                "a store object is completed by Store.finish, not close()",
            )),
        }
    }

    /// Discards the file: a path keeps what it held before (the temporary file is removed).
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        let writer = self.state.take(py)?;
        py.detach(move || drop(writer));
        Ok(())
    }
}
