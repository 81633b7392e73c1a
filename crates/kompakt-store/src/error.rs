//! The store's error type: the format's errors, and what only a store can get wrong.

use kompakt::ErrorKind;
use std::io;

/// Result alias of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing an object failed: I/O, or an object file that is damaged.
    #[error(transparent)]
    Format(#[from] kompakt::Error),

    /// The folder is missing, is not a store, or contradicts what the caller asked for.
    #[error("{0}")]
    Store(String),

    /// The store's index (SQLite) reported an error.
    #[error("store index error: {0}")]
    Index(String),

    /// An earlier call panicked while it held this store's lock: the handle is unusable.
    #[error("an earlier call panicked while using this store")]
    Poisoned,
}

impl Error {
    /// What kind of failure this is ([`kompakt::ErrorKind`]): the format's errors keep theirs;
    /// a folder that is not a store, or a failing index, is [`ErrorKind::Store`]; a handle
    /// poisoned by an earlier panic is [`ErrorKind::Internal`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Format(e) => e.kind(),
            Error::Store(_) | Error::Index(_) => ErrorKind::Store,
            Error::Poisoned => ErrorKind::Internal,
        }
    }

    /// True when the error says stored data is damaged (an object file, or the index).
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Format(e) if e.is_corruption())
    }

    /// A damaged-store error.
    pub fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Error::Format(kompakt::Error::corrupt(what, offset, detail))
    }
}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Self {
        Error::Format(kompakt::Error::Io(err))
    }
}

impl From<Error> for io::Error {
    fn from(err: Error) -> io::Error {
        match err {
            Error::Format(e) => e.into(),
            other => io::Error::other(other),
        }
    }
}
