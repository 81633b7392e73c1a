//! Mapping kompakt errors onto Python exceptions, in one place.
//!
//! The exception classes are defined in Python (`kompakt._errors`), where a class can have
//! two bases: `CorruptError` is both a `KompaktError` and a `ValueError`.

use kompakt::ErrorKind;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyTimeoutError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::PyErr;
use std::path::Path;

/// The Python classes of `kompakt._errors`.
#[derive(Clone, Copy)]
pub enum Kind {
    Corrupt,
    Option,
    Store,
    Usage,
    Dictionary,
    Limit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Corrupt => "CorruptError",
            Kind::Option => "OptionError",
            Kind::Store => "StoreError",
            Kind::Usage => "UsageError",
            Kind::Dictionary => "DictionaryError",
            Kind::Limit => "LimitError",
        }
    }

    /// The class, imported once per kind.
    pub fn class(self, py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        static CLASSES: [PyOnceLock<Py<PyType>>; 6] = [const { PyOnceLock::new() }; 6];
        CLASSES[self as usize].import(py, "kompakt._errors", self.name())
    }

    /// An exception of this kind; `args` are its constructor's (the message first).
    pub fn err<A>(self, args: A) -> PyErr
    where
        A: for<'py> IntoPyObject<'py, Target = pyo3::types::PyTuple> + Send + Sync + 'static,
    {
        Python::attach(|py| match self.class(py) {
            Ok(class) => PyErr::from_type(class.clone(), args),
            Err(e) => e,
        })
    }
}

/// A `CorruptError` with what is known of where: the file, the structure, its offset.
pub fn corrupt(message: impl Into<String>, path: Option<&Path>, what: Option<&str>, offset: Option<u64>) -> PyErr {
    let path = path.map(|p| p.display().to_string());
    Kind::Corrupt.err((message.into(), path, what.map(str::to_string), offset))
}

/// The Python exception of each kind of error: the binding's one table
/// ([`kompakt::ErrorKind`]). Every kind but I/O and kompakt's own faults is a `KompaktError`
/// (and a `ValueError`); I/O errors are `OSError`s, built where the `io::Error` is at hand.
pub fn exception(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::Corrupt => Kind::Corrupt.err((message,)),
        ErrorKind::Option => Kind::Option.err((message,)),
        ErrorKind::Usage => Kind::Usage.err((message,)),
        ErrorKind::Dictionary => Kind::Dictionary.err((message,)),
        ErrorKind::Limit => Kind::Limit.err((message,)),
        ErrorKind::Store => Kind::Store.err((message,)),
        // An untrusted load's refusal is raised by the Python layer (kompakt._safe.Refused).
        ErrorKind::Refused => Kind::Corrupt.err((message,)),
        ErrorKind::Internal => PyRuntimeError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// `Error::Io` becomes `OSError` (or, when it came from a Python file object, the exception
/// that object raised); every other error the exception of its kind ([`exception`]), with what
/// is known of where for damage and the dictionary needed for a missing one.
pub fn to_py(err: kompakt::Error) -> PyErr {
    to_py_at(err, None)
}

/// [`to_py`], for an error about the file at `path` (named by a `CorruptError`).
pub fn to_py_at(err: kompakt::Error, path: Option<&Path>) -> PyErr {
    use kompakt::Error as E;
    let message = err.to_string();
    match err {
        E::Io(io) => PyErr::from(io),
        E::Corrupt { what, offset, .. } | E::ChecksumMismatch { what, offset } => {
            corrupt(message, path, Some(what), Some(offset))
        }
        E::Truncated { what, .. } | E::BadMagic { what, .. } => corrupt(message, path, Some(what), None),
        e if e.is_corruption() => corrupt(message, path, None, None),
        E::MissingDictionary { id, .. } => Kind::Dictionary.err((message, id.to_string())),
        e => exception(e.kind(), message),
    }
}

/// Store errors: the format's as above; the others by their kind (a folder that is not a
/// store, or a failing index, `StoreError`; a handle poisoned by an earlier panic,
/// `RuntimeError`).
pub fn store_to_py(err: kompakt_store::Error) -> PyErr {
    match err {
        kompakt_store::Error::Format(e) => to_py(e),
        kompakt_store::Error::Poisoned => poisoned(()),
        e => exception(e.kind(), e.to_string()),
    }
}

/// A `kompakt.OptionError`: an argument the binding itself checks is not valid.
pub fn option_error(message: impl Into<String>) -> PyErr {
    Kind::Option.err((message.into(),))
}

/// A `kompakt.UsageError`: a call the object does not allow now.
pub fn usage_error(message: impl Into<String>) -> PyErr {
    Kind::Usage.err((message.into(),))
}

/// A `kompakt.LimitError`: more memory than the read may have, or than this machine has.
pub fn limit_error(message: impl Into<String>) -> PyErr {
    Kind::Limit.err((message.into(),))
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
    usage_error("I/O operation on a closed kompakt file")
}

/// An I/O error on `path` as Python raises it: `OSError(errno, strerror, filename)`, which
/// Python turns into the matching subclass (FileNotFoundError, PermissionError, ...).
pub fn os_error(err: std::io::Error, path: &Path) -> PyErr {
    let text = err.to_string();
    let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
    match (err.raw_os_error(), err.kind()) {
        (Some(code), _) => PyOSError::new_err((code, strerror, path.display().to_string())),
        // Errors of no system call (a server's answer): the subclass by kind, the message
        // naming the file unless it does already.
        (None, kind) => {
            let name = path.display().to_string();
            let message = if strerror.starts_with(&name) {
                strerror
            } else {
                format!("{name}: {strerror}")
            };
            match kind {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
                std::io::ErrorKind::TimedOut => PyTimeoutError::new_err(message),
                _ => PyOSError::new_err(message),
            }
        }
    }
}
