//! kompakt's C API: the functions `include/kompakt.h` declares, over the format crates, with
//! every rule about what users give (options, paths and URLs, what a file holds) taken from
//! the front door, `kompakt-api`, as the command line and the Python package take them.
//!
//! - [`status`](crate::kpk_status): status codes, one table from `kompakt::ErrorKind` to
//!   them, the per-thread last message, and the guard every entry point runs its body in (a
//!   Rust panic becomes `KPK_ERROR_INTERNAL` with a message, never an unwind into C);
//! - `ffi`: borrowed arguments, memory handed out (`kpk_bytes`, `kpk_strings`) or lent;
//! - `options`: the options structs (zero is the default in every field; a leading `size`
//!   lets them grow);
//! - `writer`, `reader`, `store`, `table`, `rserial`: the entry points.
//!
//! This crate is all foreign-function interface: every function takes raw pointers from C,
//! so `unsafe` is allowed here, and each block says why it is sound. The crate builds a static
//! library, a shared one (`libkompakt_c.so.2`: its SONAME carries the API version) and the
//! rlib the tests use; `tests/` holds C programs that use both libraries.
#![allow(unsafe_code)]
#![allow(non_camel_case_types)]

mod ffi;
mod options;
mod reader;
mod rserial;
mod status;
mod store;
mod table;
mod writer;

pub use ffi::{kpk_bytes, kpk_bytes_free, kpk_strings, kpk_strings_free};
pub use options::{kpk_write_options, KPK_LEVEL_DEFAULT, KPK_LEVEL_NONE};
pub use reader::*;
pub use rserial::*;
pub use status::{
    kpk_api_version, kpk_last_error, kpk_last_status, kpk_status, kpk_status_name, kpk_version, KPK_API_VERSION,
    KPK_ERROR_CORRUPT, KPK_ERROR_DICTIONARY, KPK_ERROR_INTERNAL, KPK_ERROR_IO, KPK_ERROR_LIMIT, KPK_ERROR_OPTION,
    KPK_ERROR_REFUSED, KPK_ERROR_STORE, KPK_ERROR_USAGE, KPK_OK,
};
pub use store::*;
pub use table::*;
pub use writer::{
    kpk_writer, kpk_writer_abort, kpk_writer_add_stream, kpk_writer_add_stream_typed, kpk_writer_finish,
    kpk_writer_open_file, kpk_writer_open_memory, kpk_writer_set_metadata, kpk_writer_write,
};

#[cfg(test)]
mod tests;
