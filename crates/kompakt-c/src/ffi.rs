//! What crosses the C boundary: arguments borrowed from the caller (strings, byte ranges,
//! arrays, output pointers), memory handed to it (`kpk_bytes`, `kpk_strings`), memory it lends
//! ([`Lent`]), and paths and URLs, read through the front door (`kompakt_api::location`).

use crate::status::{guard, Failure};
use kompakt::stream::ReadAt;
use kompakt_api::location::{self, Location, Source};
use std::ffi::{c_char, c_void, CStr};
use std::io;
use std::path::PathBuf;

/// `*out = value`, for an output pointer the caller passed.
pub(crate) fn put<T>(out: *mut T, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("an output pointer is NULL"));
    }
    // SAFETY: the caller passes a pointer to writable memory for one T (the header's
    // contract for output arguments); NULL was refused above. `write` does not read or drop
    // what was there, which may be uninitialized.
    unsafe { out.write(value) };
    Ok(())
}

/// `*out = value` unless `out` is NULL (outputs the header calls optional).
pub(crate) fn put_optional<T>(out: *mut T, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Ok(());
    }
    put(out, value)
}

/// A UTF-8 C string argument; `None` for NULL.
pub(crate) fn text<'a>(s: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: a non-NULL string argument is a NUL-terminated string that stays valid for the
    // call (the header's contract); the borrow does not outlive the call.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map(Some)
        .map_err(|_| Failure::option(format!("{what} is not UTF-8")))
}

/// A required UTF-8 C string argument.
pub(crate) fn required<'a>(s: *const c_char, what: &str) -> Result<&'a str, Failure> {
    text(s, what)?.ok_or_else(|| Failure::usage(format!("{what} is NULL")))
}

/// `len` bytes at `data`, borrowed for the call.
pub(crate) fn bytes<'a>(data: *const c_void, len: usize) -> Result<&'a [u8], Failure> {
    array_arg(data.cast::<u8>(), len, "a buffer")
}

/// `n` elements at `p`, borrowed for the call; empty when `n` is 0.
pub(crate) fn array_arg<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::usage(format!("{what} is NULL with {n} entries")));
    }
    // SAFETY: the caller passes `n` readable elements at `p` that stay valid and unchanged for
    // the call (the header's contract for pointers with a count); NULL was refused above.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `len` writable bytes at `data`, borrowed for the call; empty when `len` is 0.
pub(crate) fn buffer<'a>(data: *mut c_void, len: usize) -> Result<&'a mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if data.is_null() {
        return Err(Failure::usage(format!("a NULL buffer for {len} bytes")));
    }
    // SAFETY: the caller passes `len` writable bytes at `data` that nothing else uses during
    // the call (the header's contract for output buffers); NULL was refused above.
    Ok(unsafe { std::slice::from_raw_parts_mut(data.cast::<u8>(), len) })
}

// ---- paths and URLs, through the front door ------------------------------------------------

/// A required path (or URL) argument.
fn path_text<'a>(path: *const c_char) -> Result<&'a str, Failure> {
    required(path, "path")
}

/// A path, or a URL of a scheme kompakt reads; another scheme is an option error.
pub(crate) fn location_arg(path: *const c_char) -> Result<Location, Failure> {
    Ok(location::parse(path_text(path)?)?)
}

/// A path to write to: kompakt reads URLs but writes files on this machine only.
pub(crate) fn path_arg(path: *const c_char) -> Result<PathBuf, Failure> {
    Ok(location::for_writing(path_text(path)?)?)
}

/// A file (or the object at a URL) opened for reading; errors about a local file name it (a
/// URL's client names the URL itself).
pub(crate) fn open_source(path: *const c_char) -> Result<Source, Failure> {
    let text = path_text(path)?;
    let local = matches!(location::parse(text)?, Location::Local(_));
    location::open_for_reading(text).map_err(|e| match local {
        true => Failure::from(e).named(text),
        false => e.into(),
    })
}

// ---- memory handed to the caller -----------------------------------------------------------

/// Bytes made by kompakt, handed to the caller (`kpk_bytes` in the header).
#[repr(C)]
pub struct kpk_bytes {
    /// The first byte (NULL when empty).
    pub data: *mut u8,
    /// How many.
    pub len: usize,
}

impl kpk_bytes {
    pub(crate) fn from_vec(v: Vec<u8>) -> kpk_bytes {
        let len = v.len();
        if len == 0 {
            return kpk_bytes {
                data: std::ptr::null_mut(),
                len,
            };
        }
        let data = Box::into_raw(v.into_boxed_slice()).cast::<u8>();
        kpk_bytes { data, len }
    }
}

/// Frees bytes kompakt returned, and empties the struct.
///
/// # Safety
/// `bytes` is NULL or points at a `kpk_bytes` filled by kompakt (or zeroed) and not freed
/// since.
#[no_mangle]
pub unsafe extern "C" fn kpk_bytes_free(bytes: *mut kpk_bytes) {
    // SAFETY: by the contract above, `bytes` is NULL or a valid kpk_bytes.
    let Some(b) = (unsafe { bytes.as_mut() }) else {
        return;
    };
    if !b.data.is_null() {
        // SAFETY: `data` and `len` came from `from_vec`, a boxed slice of exactly `len`
        // bytes given up there; it is rebuilt once and dropped (the fields are cleared, so
        // a second free does nothing).
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(b.data, b.len)) });
    }
    b.data = std::ptr::null_mut();
    b.len = 0;
}

/// A list of strings made by kompakt (`kpk_strings` in the header): `count` items, each
/// UTF-8 of `lens[i]` bytes followed by a NUL.
#[repr(C)]
pub struct kpk_strings {
    /// The items (NULL when there are none).
    pub items: *mut *mut c_char,
    /// Their lengths in bytes, without the NUL (NULL when there are none).
    pub lens: *mut usize,
    /// How many.
    pub count: usize,
}

impl kpk_strings {
    pub(crate) fn from_vec(list: Vec<String>) -> kpk_strings {
        if list.is_empty() {
            return kpk_strings {
                items: std::ptr::null_mut(),
                lens: std::ptr::null_mut(),
                count: 0,
            };
        }
        let lens: Box<[usize]> = list.iter().map(String::len).collect();
        let items: Box<[*mut c_char]> = list
            .into_iter()
            .map(|s| {
                let mut v = s.into_bytes();
                v.push(0);
                Box::into_raw(v.into_boxed_slice()).cast::<c_char>()
            })
            .collect();
        let count = items.len();
        kpk_strings {
            items: Box::into_raw(items).cast(),
            lens: Box::into_raw(lens).cast(),
            count,
        }
    }
}

/// Frees a list kompakt returned, and empties the struct.
///
/// # Safety
/// `list` is NULL or points at a `kpk_strings` filled by kompakt (or zeroed) and not freed
/// since.
#[no_mangle]
pub unsafe extern "C" fn kpk_strings_free(list: *mut kpk_strings) {
    // SAFETY: by the contract above, `list` is NULL or a valid kpk_strings.
    let Some(l) = (unsafe { list.as_mut() }) else {
        return;
    };
    if !l.items.is_null() && !l.lens.is_null() {
        let _ = guard(|| {
            // SAFETY: `items` and `lens` came from `from_vec`: boxed slices of `count`
            // entries, each item a boxed slice of `lens[i] + 1` bytes; each is rebuilt once
            // and dropped (the fields are cleared below, so a second free does nothing).
            unsafe {
                let lens = Box::from_raw(std::ptr::slice_from_raw_parts_mut(l.lens, l.count));
                let items = Box::from_raw(std::ptr::slice_from_raw_parts_mut(l.items, l.count));
                for (&item, &len) in items.iter().zip(lens.iter()) {
                    drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                        item.cast::<u8>(),
                        len + 1,
                    )));
                }
            }
            Ok(())
        });
    }
    l.items = std::ptr::null_mut();
    l.lens = std::ptr::null_mut();
    l.count = 0;
}

// ---- memory the caller lends ---------------------------------------------------------------

/// Memory the caller lends to a reader or a table until it is closed.
pub(crate) struct Lent {
    data: *const u8,
    len: usize,
}

// SAFETY: the bytes are only read, and the caller keeps them valid and unchanged until the
// reader is closed (the contract of the `_open_memory` functions), so sharing the pointer
// between the reader's threads is as sound as sharing a `&[u8]`.
unsafe impl Send for Lent {}
// SAFETY: as for Send: shared reads of memory nobody changes.
unsafe impl Sync for Lent {}

impl Lent {
    /// `len` bytes at `data`, which must stay valid and unchanged for as long as the value
    /// lives (the `_open_memory` functions' contract); NULL with a length is refused.
    pub(crate) fn new(data: *const c_void, len: usize) -> Result<Lent, Failure> {
        if data.is_null() && len > 0 {
            return Err(Failure::usage(format!("a NULL pointer for {len} bytes")));
        }
        Ok(Lent { data: data.cast(), len })
    }

    fn slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `data` holds `len` readable bytes for as long as this value lives, by the
        // `_open_memory` functions' contract; NULL with a length was refused in `new`.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl ReadAt for Lent {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.slice().read_exact_at(buf, offset)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self.slice())
    }
}
