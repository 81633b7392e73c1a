//! `kompakt.Dictionary`: a zstd dictionary for many small values that look alike.

use crate::buffers::Buffer;
use crate::errors::IntoPy;
use crate::errors::Kind;
use kompakt::codec::MAX_DICTIONARY_SIZE;
use pyo3::exceptions::PyTypeError;
use std::io::Write;
use std::path::{Path, PathBuf};

fn io_error(e: std::io::Error, path: &Path) -> PyErr {
    crate::errors::os_error(e, path)
}
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A zstd dictionary, named by the hash of its bytes (``id``, 16 hex digits).
///
/// ``Dictionary(data)`` wraps the bytes of one (a ``.kpkd`` file, or what ``zstd --train``
/// wrote); ``kompakt.train_dictionary(samples)`` makes one. Pass it as ``dictionary=`` to
/// ``kompakt.compress`` and ``kompakt.decompress``; ``bytes(d)`` gives its bytes back.
#[pyclass(module = "kompakt", name = "Dictionary", frozen)]
pub struct PyDictionary {
    pub inner: kompakt::codec::Dictionary,
}

#[pymethods]
impl PyDictionary {
    #[new]
    fn new(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        if data.is_instance_of::<pyo3::types::PyString>() {
            return Err(PyTypeError::new_err(
                "Dictionary() takes the dictionary's bytes; for a file use kompakt.Dictionary.load(path)",
            ));
        }
        let buf = Buffer::get(data)?;
        let inner = kompakt::codec::Dictionary::new(buf.as_slice().to_vec()).py_err()?;
        Ok(PyDictionary { inner })
    }

    /// The dictionary's id: XXH3-64 of its bytes as 16 hex digits (what errors name).
    #[getter]
    fn id(&self) -> String {
        self.inner.id().to_string()
    }

    /// Reads a dictionary file (``.kpkd``, or any zstd dictionary).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let len = std::fs::metadata(&path).map_err(|e| io_error(e, &path))?.len();
        if len > MAX_DICTIONARY_SIZE as u64 {
            return Err(Kind::Option.err((format!(
                "{}: {len} bytes is larger than a dictionary can be ({MAX_DICTIONARY_SIZE} bytes)",
                path.display()
            ),)));
        }
        let bytes = std::fs::read(&path).map_err(|e| io_error(e, &path))?;
        let inner = kompakt::codec::Dictionary::new(bytes)
            .map_err(|e| Kind::Option.err((format!("{}: {e}", path.display()),)))?;
        Ok(PyDictionary { inner })
    }

    /// Writes the dictionary to ``path`` atomically (a temporary file, fsync, rename).
    fn save(&self, path: PathBuf) -> PyResult<()> {
        let mut file = kompakt_fs::AtomicFile::create(&path).map_err(|e| io_error(e, &path))?;
        file.file()
            .write_all(self.inner.bytes())
            .map_err(|e| io_error(e, &path))?;
        file.commit().map_err(|e| io_error(e, &path))
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.bytes())
    }

    fn __len__(&self) -> usize {
        self.inner.bytes().len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDictionary>()
            .is_ok_and(|o| o.get().inner.id() == self.inner.id() && o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        self.inner.id().0
    }

    fn __repr__(&self) -> String {
        format!(
            "kompakt.Dictionary(id={:?}, size={})",
            self.id(),
            self.inner.bytes().len()
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        Ok((slf.get_type().into_any(), (PyBytes::new(py, slf.get().inner.bytes()),)))
    }
}

/// Trains a dictionary on samples (bytes-like objects) with zstd's trainer.
#[pyfunction]
#[pyo3(signature = (samples, *, size))]
pub fn train_dictionary(py: Python<'_>, samples: Vec<Bound<'_, PyAny>>, size: usize) -> PyResult<PyDictionary> {
    let buffers: Vec<Buffer> = samples.iter().map(Buffer::get).collect::<PyResult<_>>()?;
    let slices: Vec<&[u8]> = buffers.iter().map(Buffer::as_slice).collect();
    let inner = py
        .detach(|| kompakt::codec::Dictionary::train(&slices, size))
        .py_err()?;
    Ok(PyDictionary { inner })
}
