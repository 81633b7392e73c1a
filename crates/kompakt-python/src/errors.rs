//! Mapping kompakt errors onto Python exceptions.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;
use std::path::Path;

pyo3::create_exception!(
    kompakt,
    CorruptError,
    PyValueError,
    "The data is not a valid kompakt file: it is damaged (a checksum failed, it was truncated) or \
     was never one. A subclass of ValueError."
);

/// `Error::Io` becomes `OSError` (or, when it came from a Python file object, the exception
/// that object raised); damage becomes `CorruptError`; bad options and ranges `ValueError`.
pub fn to_py(err: kompakt::Error) -> PyErr {
    match err {
        kompakt::Error::Io(io) => PyErr::from(io),
        e if e.is_corruption() => CorruptError::new_err(e.to_string()),
        e => PyValueError::new_err(e.to_string()),
    }
}

/// Store errors: the format's as above; a folder that is not a store, or a failing index,
/// `ValueError`; a handle poisoned by an earlier panic, `RuntimeError`.
pub fn store_to_py(err: kompakt_store::Error) -> PyErr {
    match err {
        kompakt_store::Error::Format(e) => to_py(e),
        kompakt_store::Error::Poisoned => poisoned(()),
        e => PyValueError::new_err(e.to_string()),
    }
}

/// Extension for `kompakt::Result`.
pub trait IntoPy<T> {
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for kompakt::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}

impl<T> IntoPy<T> for kompakt_store::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(store_to_py)
    }
}

/// A lock poisoned by a panic in another thread: the object is unusable, not the interpreter.
pub fn poisoned<E>(_: E) -> PyErr {
    PyRuntimeError::new_err("kompakt: a previous call on this object panicked; the object is unusable")
}

pub fn closed() -> PyErr {
    PyValueError::new_err("I/O operation on a closed kompakt file")
}

/// An I/O error on `path` as Python raises it: `OSError(errno, strerror, filename)`, which
/// Python turns into the matching subclass (FileNotFoundError, PermissionError, ...).
pub fn os_error(err: std::io::Error, path: &Path) -> PyErr {
    let text = err.to_string();
    let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
    match err.raw_os_error() {
        Some(code) => PyOSError::new_err((code, strerror, path.display().to_string())),
        None => PyOSError::new_err(format!("{}: {strerror}", path.display())),
    }
}
