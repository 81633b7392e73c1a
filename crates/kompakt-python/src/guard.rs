//! State shared between Python threads, locked with the GIL released.

use crate::errors::{closed, poisoned};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A `Mutex<Option<T>>` (None once closed) that Python threads share.
///
/// The lock is taken only after the GIL is released: a thread waiting for it never holds the
/// GIL that the holder may need (to call a Python file object). A call that comes back into
/// the same object from inside such a Python callback, on the thread that holds the lock,
/// raises instead of waiting for itself forever.
pub struct Shared<T> {
    state: Mutex<Option<T>>,
    /// Token of the thread inside `with`, 0 when none.
    owner: AtomicU64,
}

fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TOKEN: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    TOKEN.with(|t| *t)
}

/// Clears the owner when a call ends, also when it unwinds.
struct Owner<'a>(&'a AtomicU64);

impl Drop for Owner<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

impl<T: Send> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared {
            state: Mutex::new(Some(value)),
            owner: AtomicU64::new(0),
        }
    }

    fn check_reentry(&self) -> PyResult<u64> {
        let me = thread_token();
        if self.owner.load(Ordering::Acquire) == me {
            return Err(PyRuntimeError::new_err(
                "re-entrant call: a file object's method called back into the kompakt object that is using it",
            ));
        }
        Ok(me)
    }

    /// Runs `f` on the open state, with the GIL released; ValueError once closed.
    pub fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> PyResult<R> + Send) -> PyResult<R> {
        let me = self.check_reentry()?;
        py.detach(|| {
            let mut guard = self.state.lock().map_err(poisoned)?;
            self.owner.store(me, Ordering::Release);
            let _owner = Owner(&self.owner);
            f(guard.as_mut().ok_or_else(closed)?)
        })
    }

    /// Takes the state out (None if already closed).
    pub fn take(&self, py: Python<'_>) -> PyResult<Option<T>> {
        self.check_reentry()?;
        py.detach(|| Ok(self.state.lock().map_err(poisoned)?.take()))
    }

    pub fn is_closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.check_reentry()?;
        py.detach(|| Ok(self.state.lock().map_err(poisoned)?.is_none()))
    }
}
