//! kompakt's front door: what every front end (the `kompakt` command line, the C API, the
//! Python and R packages, the JVM) does with what a user hands it, written once.
//!
//! A front end converts its own types (a clap argument, a C string, a Python keyword, an R
//! value) into plain Rust values and calls this crate; it never re-derives a rule. Then the same
//! bad option gives the same error, with the same message, through every door:
//!
//! - [`options`]: codec, level, threads, block size, element size, filter and the dictionary
//!   rule, validated into the format's [`WriteOptions`](kompakt::WriteOptions);
//! - [`location`]: a path or a URL, opened for reading or refused for writing;
//! - [`store`]: a folder or an `s3://` URL opened as one
//!   [`ContentStore`](kompakt_store::ContentStore), with the options of both kinds checked;
//! - [`FileKind`]: what a file holds (plain data, a table, a Python or an R object), read from
//!   its metadata;
//! - errors: every library's error has a [`kompakt::ErrorKind`]; each front end maps the kinds
//!   with one table (a C status, an exit code, an exception class).
//!
//! The test table `tests/bad_options.tsv` lists bad options with the kind and message each
//! gives; the tests of every front end read it ([`testing::bad_options`] in Rust).

mod kind;
pub mod location;
pub mod options;
pub mod store;
pub mod table;
#[doc(hidden)]
pub mod testing;

pub use kind::FileKind;
pub use kompakt::{Error, ErrorKind, Result};
