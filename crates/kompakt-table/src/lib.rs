//! Columnar table files on the kompakt block stream (docs/FORMAT.md, "Table files").
//!
//! A table is cut into row groups of a fixed number of rows; each column of each group is one
//! *page*, encoded from its data (frame of reference, dictionary, byte shuffle) and then
//! compressed as one block of the column's stream. The footer indexes every page, so reading a
//! row range of a few columns reads only the pages that cover it.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
//! use kompakt_table::{TableOptions, TableReader, TableWriter};
//!
//! let batch = RecordBatch::try_from_iter([
//!     ("n", Arc::new(Int32Array::from_iter_values(0..1000)) as ArrayRef),
//!     ("s", Arc::new(StringArray::from_iter_values((0..1000).map(|i| format!("row {i}")))) as ArrayRef),
//! ])?;
//! let mut w = TableWriter::new(Vec::new(), batch.schema(), TableOptions::default())?;
//! w.write(&batch)?;
//! let bytes = w.finish()?;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("t.kpk");
//! std::fs::write(&path, bytes)?;
//! let table = TableReader::open(&path)?;
//! let (_, batches) = table.read(Some(&[1]), 10..12, 0)?;
//! assert_eq!(batches[0].column(0).as_ref(), &StringArray::from(vec!["row 10", "row 11"]) as &dyn arrow_array::Array);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Four `unsafe` blocks skip Arrow's second check of what the decoder already guarantees:
// string offsets and ASCII string data (`page/decode/strings.rs`), string views made by
// Arrow's own `make_view` (`page/decode/views.rs`), and dictionary keys whose largest is in
// range (`reader/dictionary.rs`). Each is allowed where it stands, with its proof and a test
// comparing it with the checked constructor. The AVX2 bit-unpacking kernel (`bits.rs`, module `avx2`)
// loads and stores vectors through arrays of their exact size and runs only on CPUs with AVX2;
// a test compares it with the scalar kernel at every width. Everything else stays safe.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod append;
mod bits;
mod budget;
mod dict;
mod journal;
pub mod meta;
pub mod open_cache;
pub mod page;
pub mod plan;
mod reader;
pub mod schema;
mod shared_values;
mod sort;
pub mod stats;
mod string_layout;
mod threads;
mod validate;
mod writer;
mod zeroed;

pub use append::{append_journal_for_tests, append_table_file};
pub use budget::{default_read_limit, is_over_limit, OVER_LIMIT};
pub use journal::journal_path;
pub use plan::{plan_rows, Filter, Op};
pub use reader::{ColumnSummary, TableReader};
pub use sort::SortKey;
pub use stats::ColumnStatistics;
pub use string_layout::StringLayout;
pub use validate::validate_columns;
pub use writer::{write_table_file, TableOptions, TableWriter, DEFAULT_ROWS_PER_GROUP, DEFAULT_STRING_CODEC};

/// Whether a kompakt file's footer metadata marks it as a table file.
pub fn is_table_metadata(metadata: &[u8]) -> bool {
    metadata.starts_with(&meta::MAGIC)
}
