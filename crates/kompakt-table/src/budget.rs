//! The memory budget of one read: every buffer a read makes (decoded values, string data,
//! offsets, views, validity, list children at every level, shared dictionaries it loads) is
//! counted against it *before* it is allocated, by all the threads decoding the read's pages
//! together. A page cannot make a read allocate more than the read's limit, whatever it claims:
//! a small hostile file gets an error naming the limit, not a multi-gigabyte allocation (or an
//! abort when the allocation fails). Counting what is decoded also bounds the work: no page
//! expands (runs, repeated strings) beyond what the budget has left.

use kompakt::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// How the detail of a read's limit error starts, so that callers can tell it from other
/// range errors ([`is_over_limit`]).
pub const OVER_LIMIT: &str = "over the read's memory limit";

/// The default limit of a table read: 256 times the file's size, and at least 1 GiB (what the
/// Python package's `read_table` allows without `max_size`).
pub fn default_read_limit(file_len: u64) -> u64 {
    (1u64 << 30).max(file_len.saturating_mul(256))
}

/// Whether `e` is the error of a read that would have allocated more than its limit (as
/// opposed to damage, or a bad request).
pub fn is_over_limit(e: &Error) -> bool {
    matches!(e, Error::OverLimit(_))
}

/// Bytes one read may still allocate.
#[derive(Debug)]
pub(crate) struct Budget {
    left: AtomicU64,
    limit: u64,
}

impl Budget {
    pub(crate) fn new(limit: u64) -> Self {
        Budget {
            left: AtomicU64::new(limit),
            limit,
        }
    }

    /// Counts `len` bytes of `what` against the budget; an error, with nothing counted, when
    /// fewer are left.
    pub(crate) fn charge(&self, len: u64, what: &str) -> Result<()> {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(len))
            .map(|_| ())
            .map_err(|left| self.over(len, left, what))
    }

    /// An error unless `len` bytes of a working buffer that the read does not keep (a page's
    /// bytes after the codec, reused for the next page) fit within the limit. Not counted:
    /// a read of exactly `max_size` bytes of values must not fail for the page it came from.
    pub(crate) fn check(&self, len: u64, what: &str) -> Result<()> {
        if len > self.limit {
            return Err(self.over(len, self.left(), what));
        }
        Ok(())
    }

    /// Bytes left.
    pub(crate) fn left(&self) -> u64 {
        self.left.load(Ordering::Relaxed)
    }

    fn over(&self, len: u64, left: u64, what: &str) -> Error {
        Error::OverLimit(format!(
            "{OVER_LIMIT} of {} bytes (max_size): {what} needs {len} bytes, and {left} are left",
            self.limit
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_the_limit_then_refuses_naming_it() {
        let b = Budget::new(100);
        b.charge(60, "a").unwrap();
        b.check(100, "b").unwrap();
        assert!(is_over_limit(&b.check(101, "b").unwrap_err()));
        let e = b.charge(41, "string data").unwrap_err();
        assert!(is_over_limit(&e), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("100 bytes") && msg.contains("41 bytes") && msg.contains("max_size"),
            "{msg}"
        );
        assert_eq!(b.left(), 40, "a refused charge counts nothing");
        b.charge(40, "c").unwrap();
        assert!(b.charge(1, "d").is_err());
        assert!(!is_over_limit(&Error::OutOfRange { detail: "rows".into() }));
        assert_eq!(default_read_limit(0), 1 << 30);
        assert_eq!(default_read_limit(8 << 20), 2 << 30);
        assert_eq!(default_read_limit(u64::MAX), u64::MAX);
    }
}
