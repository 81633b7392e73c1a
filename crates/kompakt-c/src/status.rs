//! Status codes, the one table from [`ErrorKind`] to them, the calling thread's last message,
//! and [`guard`], which every entry point runs its body in.

use kompakt::ErrorKind;
use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// `kpk_status`: 0 or one of the error codes below.
pub type kpk_status = i32;
/// Success.
pub const KPK_OK: kpk_status = 0;
/// The operating system or a server refused (a missing file, a full disk, a timeout).
pub const KPK_ERROR_IO: kpk_status = 1;
/// Not a kompakt file, damaged or truncated.
pub const KPK_ERROR_CORRUPT: kpk_status = 2;
/// An option or range that is not valid; the message names the valid ones.
pub const KPK_ERROR_OPTION: kpk_status = 3;
/// A call the object does not allow now (a NULL handle, a finished stream).
pub const KPK_ERROR_USAGE: kpk_status = 4;
/// A bug in kompakt.
pub const KPK_ERROR_INTERNAL: kpk_status = 5;
/// A folder that is not a store, or a store that refused (its index, its configuration).
pub const KPK_ERROR_STORE: kpk_status = 6;
/// The data holds what the call refuses to pass on (R code, in an untrusted read).
pub const KPK_ERROR_REFUSED: kpk_status = 7;
/// The data needs a zstd dictionary that was not given.
pub const KPK_ERROR_DICTIONARY: kpk_status = 8;
/// A read would allocate more than its limit (or this machine) allows.
pub const KPK_ERROR_LIMIT: kpk_status = 9;

/// The C API's version: it changes when a function's signature or meaning changes.
pub const KPK_API_VERSION: u32 = 2;

/// The C status of each kind of error: the binding's one table. Its codes follow
/// [`ErrorKind::ALL`] (`ALL[i]` is status `i + 1`), which a test checks.
pub(crate) fn status(kind: ErrorKind) -> kpk_status {
    match kind {
        ErrorKind::Io => KPK_ERROR_IO,
        ErrorKind::Corrupt => KPK_ERROR_CORRUPT,
        ErrorKind::Option => KPK_ERROR_OPTION,
        ErrorKind::Usage => KPK_ERROR_USAGE,
        ErrorKind::Internal => KPK_ERROR_INTERNAL,
        ErrorKind::Store => KPK_ERROR_STORE,
        ErrorKind::Refused => KPK_ERROR_REFUSED,
        ErrorKind::Dictionary => KPK_ERROR_DICTIONARY,
        ErrorKind::Limit => KPK_ERROR_LIMIT,
        // A kind added to the core before this table knows it: a bug here, said as one.
        _ => KPK_ERROR_INTERNAL,
    }
}

/// A failure: its status and the message `kpk_last_error` returns.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) kpk_status, pub(crate) String);

impl From<kompakt::Error> for Failure {
    fn from(e: kompakt::Error) -> Self {
        Failure(status(e.kind()), e.to_string())
    }
}

impl From<kompakt_store::Error> for Failure {
    fn from(e: kompakt_store::Error) -> Self {
        Failure(status(e.kind()), e.to_string())
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure(status(ErrorKind::of_io(&e)), e.to_string())
    }
}

impl Failure {
    /// A failure of `kind`.
    pub(crate) fn of(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure(status(kind), message.into())
    }

    /// A call the object does not allow now (a NULL handle or output pointer, ...).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure::of(ErrorKind::Usage, message)
    }

    /// An option or range that is not valid.
    pub(crate) fn option(message: impl Into<String>) -> Self {
        Failure::of(ErrorKind::Option, message)
    }

    /// A fault of kompakt (or of a library under it) that the caller cannot fix.
    pub(crate) fn internal(message: impl ToString) -> Self {
        Failure::of(ErrorKind::Internal, message.to_string())
    }

    /// The same failure, its message naming `name` (a file or a URL) unless it starts with it.
    pub(crate) fn named(self, name: &str) -> Self {
        if self.1.starts_with(name) {
            return self;
        }
        Failure(self.0, format!("{name}: {}", self.1))
    }
}

/// Errors about the file at `path` (when there is one: memory has no name): their messages
/// name it.
pub(crate) fn about<E: Into<Failure>>(path: &Option<String>) -> impl Fn(E) -> Failure + '_ {
    move |e| match path {
        Some(p) => e.into().named(p),
        None => e.into(),
    }
}

/// [`about`] a path on this machine.
pub(crate) fn at<E: Into<Failure>>(path: &Path) -> impl Fn(E) -> Failure + '_ {
    move |e| e.into().named(&path.display().to_string())
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static LAST_STATUS: std::cell::Cell<kpk_status> = const { std::cell::Cell::new(KPK_OK) };
}

fn set_last_error(status: kpk_status, message: &str) {
    // A message with a NUL byte in it (from a file name) is cut there rather than lost.
    let text = message.split('\0').next().unwrap_or_default();
    let text = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = text);
    LAST_STATUS.with(|slot| slot.set(status));
}

/// Runs an entry point's body: its failure or panic becomes a status and a message.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> kpk_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => KPK_OK,
        Ok(Err(Failure(status, message))) => {
            set_last_error(status, &message);
            status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(
                KPK_ERROR_INTERNAL,
                &format!("internal error in kompakt (please report it): {what}"),
            );
            KPK_ERROR_INTERNAL
        }
    }
}

/// The message of this thread's last error.
#[no_mangle]
pub extern "C" fn kpk_last_error() -> *const c_char {
    // The pointer stays valid until this thread's slot is replaced, at its next failure: the
    // header says "until the next call into kompakt on that thread".
    LAST_ERROR.with(|slot| slot.borrow().as_ptr())
}

/// The status of this thread's last error (`KPK_OK` if none): what a binding that reports
/// errors later (R's conditions) classes them by.
#[no_mangle]
pub extern "C" fn kpk_last_status() -> kpk_status {
    LAST_STATUS.with(|slot| slot.get())
}

/// kompakt's version, such as `"0.1.0"`.
#[no_mangle]
pub extern "C" fn kpk_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library's API version, to compare with the header's `KPK_API_VERSION`.
#[no_mangle]
pub extern "C" fn kpk_api_version() -> u32 {
    KPK_API_VERSION
}

/// A status's name: `"ok"`, or its error kind's (`"io"`, `"corrupt"`, `"option"`, ...);
/// `"unknown"` for any other number.
#[no_mangle]
pub extern "C" fn kpk_status_name(status: kpk_status) -> *const c_char {
    let name: &'static std::ffi::CStr = match status {
        KPK_OK => c"ok",
        KPK_ERROR_IO => c"io",
        KPK_ERROR_CORRUPT => c"corrupt",
        KPK_ERROR_OPTION => c"option",
        KPK_ERROR_USAGE => c"usage",
        KPK_ERROR_INTERNAL => c"internal",
        KPK_ERROR_STORE => c"store",
        KPK_ERROR_REFUSED => c"refused",
        KPK_ERROR_DICTIONARY => c"dictionary",
        KPK_ERROR_LIMIT => c"limit",
        _ => c"unknown",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn name(s: kpk_status) -> &'static str {
        // SAFETY: kpk_status_name returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(kpk_status_name(s)) }.to_str().unwrap()
    }

    #[test]
    fn statuses_follow_the_kinds_in_order_and_carry_their_names() {
        for (i, kind) in ErrorKind::ALL.into_iter().enumerate() {
            let code = i as kpk_status + 1;
            assert_eq!(status(kind), code, "{kind}");
            assert_eq!(name(code), kind.name());
        }
        assert_eq!(name(KPK_OK), "ok");
        for other in [-1, 10, 99, i32::MIN] {
            assert_eq!(name(other), "unknown");
        }
        assert_eq!(kpk_api_version(), KPK_API_VERSION);
    }

    #[test]
    fn errors_take_the_status_of_their_kind() {
        let dictionary = kompakt::Error::MissingDictionary {
            id: kompakt::codec::DictionaryId(7),
            given: Vec::new(),
        };
        assert_eq!(Failure::from(dictionary).0, KPK_ERROR_DICTIONARY);
        let limit = kompakt::Error::OverLimit("a read over its limit".into());
        assert_eq!(Failure::from(limit).0, KPK_ERROR_LIMIT);
        let io = io::Error::new(io::ErrorKind::InvalidData, kompakt::Error::corrupt("block", 0, "bad"));
        assert_eq!(Failure::from(io).0, KPK_ERROR_CORRUPT);
        let store = kompakt_store::Error::Store("not a store".into());
        assert_eq!(Failure::from(store).0, KPK_ERROR_STORE);
        let named = Failure::option("bad").named("x.kpk");
        assert_eq!((named.0, named.1.as_str()), (KPK_ERROR_OPTION, "x.kpk: bad"));
        assert_eq!(named.named("x.kpk").1, "x.kpk: bad", "named once");
    }
}
