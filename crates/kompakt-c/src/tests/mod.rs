//! The API called as C calls it (raw pointers), from Rust; `tests/c/*.c` do the same from C.
//!
//! - `files`: writers and readers, in files and in memory;
//! - `store`: the object store;
//! - `v2`: what API version 2 added (options structs, file kinds, string lists, statuses);
//! - `bad_options`: the front door's table of bad options through every C entry point;
//! - `header`: `include/kompakt.h` against this crate (declarations, layouts, constants).

use crate::*;
use std::ffi::{CStr, CString};
use std::ptr::null_mut;

mod bad_options;
mod files;
mod header;
mod store;
mod v2;

/// The last error's message on this thread (shared by every test module of the crate).
pub(crate) fn last_error() -> String {
    // SAFETY: kpk_last_error returns a NUL-terminated string valid until the next call.
    unsafe { CStr::from_ptr(kpk_last_error()) }
        .to_string_lossy()
        .into_owned()
}

pub(crate) fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Options naming only a codec spec (`codec` must outlive their use).
pub(crate) fn codec_options(codec: &CString) -> kpk_write_options {
    kpk_write_options {
        codec: codec.as_ptr(),
        ..zero_options()
    }
}

/// All zero: every default.
pub(crate) fn zero_options() -> kpk_write_options {
    <kpk_write_options as crate::options::SizedStruct>::zeroed()
}

/// A file in memory of one stream holding `data`, written in `chunk`-byte writes with
/// `opts`, with metadata `meta`.
pub(crate) fn write_memory_with(data: &[u8], chunk: usize, opts: *const kpk_write_options, meta: &[u8]) -> Vec<u8> {
    let mut w = null_mut();
    // SAFETY: the pointers are live locals; the writer is finished once.
    unsafe {
        assert_eq!(kpk_writer_open_memory(opts, &mut w), KPK_OK, "{}", last_error());
        let mut s = u32::MAX;
        assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
        assert_eq!(s, 0);
        for part in data.chunks(chunk.max(1)) {
            assert_eq!(kpk_writer_write(w, s, part.as_ptr().cast(), part.len()), KPK_OK);
        }
        assert_eq!(kpk_writer_set_metadata(w, meta.as_ptr().cast(), meta.len()), KPK_OK);
        let mut file = kpk_bytes {
            data: null_mut(),
            len: 0,
        };
        assert_eq!(kpk_writer_finish(w, &mut file), KPK_OK);
        let out = std::slice::from_raw_parts(file.data, file.len).to_vec();
        kpk_bytes_free(&mut file);
        assert!(file.data.is_null() && file.len == 0);
        kpk_bytes_free(&mut file);
        out
    }
}

/// [`write_memory_with`] a codec spec and the metadata `meta`.
pub(crate) fn write_memory(data: &[u8], chunk: usize, codec: &str) -> Vec<u8> {
    let codec = c(codec);
    write_memory_with(data, chunk, &codec_options(&codec), b"meta")
}
