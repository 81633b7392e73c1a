//! Python bindings of kompakt: the native module `kompakt._core`.
//!
//! This layer only converts: Python buffers, paths and file objects in, `bytes`, dicts and
//! exceptions out. Every format decision lives in the `kompakt` crate; the object protocol
//! (pickle 5 with out-of-band buffers) lives in the pure-Python package `kompakt`, which
//! calls the two classes here, [`FileWriter`](writer::FileWriter) and
//! [`FileReader`](reader::FileReader).
//!
//! The GIL is released around all compression, decompression and file I/O.

mod buffers;
mod dictionary;
mod errors;
mod guard;
mod lab;
mod oneshot;
mod options;
mod pyfile;
mod reader;
mod store;
mod table;
mod writer;

use pyo3::prelude::*;

// mimalloc, with huge pages for large buffers only (kompakt-alloc says why).
#[global_allocator]
static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Whether large buffers get huge pages (None: MIMALLOC_ALLOW_THP decided); for benchmarks.
    let huge_pages = kompakt_alloc::warm_up();
    let py = m.py();
    // `setattr`, not `add`: a private name stays out of `__all__`.
    m.setattr("_huge_pages", huge_pages)?;
    // Kept for code that names it here; the class lives in `kompakt._errors`.
    m.add("CorruptError", errors::Kind::Corrupt.class(py)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let header = kompakt::stream::format::FileHeader::CURRENT;
    let (major, minor) = (header.major, header.minor);
    m.add("FORMAT_VERSION", format!("{major}.{minor}"))?;
    m.add("DEFAULT_LEVEL", kompakt::codec::DEFAULT_LEVEL)?;
    m.add("DEFAULT_BLOCK_SIZE", kompakt::stream::DEFAULT_BLOCK_SIZE)?;
    // The ops of table filters, as pyarrow spells them ([`kompakt_table::plan::Op`]).
    m.add(
        "FILTER_OPS",
        pyo3::types::PyTuple::new(py, kompakt_table::plan::OP_NAMES)?,
    )?;
    m.add_class::<writer::FileWriter>()?;
    m.add_class::<reader::FileReader>()?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<store::Pending>()?;
    m.add_class::<store::Hasher>()?;
    m.add_class::<table::Table>()?;
    m.add_function(wrap_pyfunction!(store::is_plain, m)?)?;
    m.add_function(wrap_pyfunction!(table::write_table, m)?)?;
    m.add_function(wrap_pyfunction!(table::append_table, m)?)?;
    m.add_function(wrap_pyfunction!(table::list_objects, m)?)?;
    m.add_function(wrap_pyfunction!(table::table_files, m)?)?;
    m.add_function(wrap_pyfunction!(lab::bench, m)?)?;
    m.add_class::<dictionary::PyDictionary>()?;
    m.add_function(wrap_pyfunction!(dictionary::train_dictionary, m)?)?;
    m.add_function(wrap_pyfunction!(oneshot::compress, m)?)?;
    m.add_function(wrap_pyfunction!(oneshot::decompress, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_threads, m)?)?;
    m.add_function(wrap_pyfunction!(file_kind, m)?)?;
    Ok(())
}

/// The number of threads a `threads=` option means, by the one policy of every kompakt
/// operation: None or 0 for all available cores, at most 256.
#[pyfunction]
#[pyo3(signature = (threads=None))]
fn resolve_threads(threads: Option<i64>) -> PyResult<usize> {
    Ok(kompakt::stream::resolve_threads(options::threads(threads)?))
}

/// What a file with footer metadata `metadata` holds, as every front end tells it
/// ([`kompakt_api::FileKind`]): "plain", "table", "python-object" or "r-object".
#[pyfunction]
fn file_kind(metadata: &[u8]) -> &'static str {
    kompakt_api::FileKind::of_metadata(metadata).name()
}

/// Runs the `kompakt` command line on `args` (the program's name first) and returns its exit
/// code: the same program as the `kompakt` binary, for the command pip installs.
#[pyfunction]
fn run_cli(py: Python<'_>, args: Vec<std::ffi::OsString>) -> u8 {
    py.detach(|| kompakt_cli::run(args))
}
