//! Reading table files: only the pages a column subset and row range cover are read, each
//! with a positional read, and decoded in parallel.
//!
//! This file holds the reader itself: what it keeps, its settings and metadata, and what every
//! kind of read shares (checking a request, the row groups and windows it covers). Opening is in
//! `open.rs`; the reads are `range.rs` (record batches), `columns.rs` (whole columns),
//! `into.rs` (into the caller's memory) and `take.rs` (rows by position), all through `pages.rs`
//! (one page) and `raw.rs` (a stream's bytes); `tasks.rs` spreads them over threads,
//! `prefetch.rs` hints a source what they are about to read. `dictionary.rs`,
//! `statistics.rs`, `summary.rs` and `verify.rs` hold the rest of the reader's API.

mod columns;
mod dictionary;
mod into;
mod open;
mod pages;
mod prefetch;
mod range;
mod raw;
mod statistics;
mod summary;
mod take;
mod tasks;
mod verify;

pub(crate) use open::TableIndex;
pub use summary::ColumnSummary;

use crate::budget::Budget;
use crate::meta::{group_count, TableMeta};
use crate::page::ColumnDict;
use crate::schema::ParsedSchema;
use crate::stats::ColumnStatistics;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema, SchemaRef};
use kompakt::stream::{BlockEntry, ReadAt, Reader, SourceCursor};
use kompakt::{Error, Result};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A table file opened for reading: the footer is read and checked once; reads then touch
/// only the pages they need.
pub struct TableReader {
    /// Where the pages' bytes come from: every read of the table goes through it.
    source: Arc<dyn ReadAt>,
    index: Reader<SourceCursor<Arc<dyn ReadAt>>>,
    meta: Arc<TableMeta>,
    parsed: Arc<ParsedSchema>,
    verify: bool,
    dictionaries: Mutex<HashMap<usize, ArrayData>>,
    /// Small dictionaries shared with other readers of the same bytes ([`open::SharedDictionaries`]).
    shared_dictionaries: open::SharedDictionaries,
    /// Dictionaries that the pages of string and number columns share, ready for pages to
    /// gather from.
    column_dicts: Mutex<HashMap<usize, Arc<ColumnDict>>>,
    /// The statistics section, once read.
    statistics: Mutex<Option<Arc<Vec<Option<ColumnStatistics>>>>>,
    /// The most bytes one read may allocate ([`TableReader::set_read_limit`]).
    read_limit: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for TableReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableReader")
            .field("num_rows", &self.meta.num_rows)
            .field("schema", &self.parsed.schema)
            .finish()
    }
}

impl TableReader {
    /// Sets the most bytes one read may allocate: every buffer it makes (values, string data,
    /// offsets, views, validity, list children, a dictionary it loads) is counted before it is
    /// allocated, and a read that would go over fails with an [`Error::OverLimit`] naming the
    /// limit (kind [`kompakt::ErrorKind::Limit`]). Each call of [`read`], [`read_columns`],
    /// [`take`] and [`read_column_into`] has the whole limit; [`verify_rows`]
    /// has it once for the whole table, which also bounds its work. Default
    /// [`crate::default_read_limit`] of the file's size: 256 times it, at least 1 GiB.
    ///
    /// [`read`]: Self::read
    /// [`read_columns`]: Self::read_columns
    /// [`take`]: Self::take
    /// [`read_column_into`]: Self::read_column_into
    /// [`verify_rows`]: Self::verify_rows
    pub fn set_read_limit(&self, bytes: u64) {
        self.read_limit.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// The most bytes one read may allocate ([`set_read_limit`](Self::set_read_limit)).
    pub fn read_limit(&self) -> u64 {
        self.read_limit.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A fresh budget of one read.
    fn budget(&self) -> Budget {
        Budget::new(self.read_limit())
    }

    /// Whether block checksums are checked (default true).
    pub fn set_verify(&mut self, verify: bool) {
        self.verify = verify;
    }

    /// The table's schema (with its metadata, such as pandas').
    pub fn schema(&self) -> SchemaRef {
        self.parsed.schema.clone()
    }

    /// Number of rows.
    pub fn num_rows(&self) -> u64 {
        self.meta.num_rows
    }

    /// Rows per row group.
    pub fn rows_per_group(&self) -> u32 {
        self.meta.rows_per_group
    }

    /// Table layout of the file (docs/FORMAT.md): 1; 2 when it may hold run-length pages; 3
    /// when it may hold scaled or decimal pages; 4 when string pages may share their column's
    /// dictionary or pages store null rows by number.
    pub fn layout(&self) -> u16 {
        self.meta.layout
    }

    /// The user key-value metadata given when the table was written.
    pub fn user_metadata(&self) -> &HashMap<String, String> {
        &self.parsed.user_metadata
    }

    /// The columns the rows are sorted by, most significant first (empty if none were given).
    pub fn sorted_by(&self) -> &[crate::SortKey] {
        &self.parsed.sorted_by
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.index.file_len()
    }

    /// A fingerprint of the table's index ([`kompakt::stream::FileIndex::fingerprint`]): equal
    /// for two opens of an unchanged file, different after any write to it.
    pub fn fingerprint(&self) -> u64 {
        self.index.index().fingerprint()
    }

    /// The position of the column named `name`.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.parsed.schema.index_of(name).map_err(|_| {
            let names: Vec<&str> = self.parsed.schema.fields().iter().map(|f| f.name().as_str()).collect();
            Error::invalid("column", name, format!("one of {names:?}"))
        })
    }

    /// Number of row groups.
    pub fn num_groups(&self) -> u64 {
        group_count(self.meta.num_rows, self.meta.rows_per_group)
    }

    /// The column positions a read asks for (`None`: all) and its schema, once checked.
    fn request(&self, columns: Option<&[usize]>, rows: &Range<u64>) -> Result<(Vec<usize>, SchemaRef)> {
        let fields = self.parsed.schema.fields();
        let columns: Vec<usize> = match columns {
            Some(c) => c.to_vec(),
            None => (0..fields.len()).collect(),
        };
        if let Some(&bad) = columns.iter().find(|&&c| c >= fields.len()) {
            return Err(Error::invalid(
                "column",
                bad.to_string(),
                format!("a position below {}", fields.len()),
            ));
        }
        if rows.start > rows.end || rows.end > self.meta.num_rows {
            return Err(Error::OutOfRange {
                detail: format!(
                    "rows {}..{} of a table of {} rows",
                    rows.start, rows.end, self.meta.num_rows
                ),
            });
        }
        let schema = Arc::new(Schema::new_with_metadata(
            columns.iter().map(|&c| fields[c].clone()).collect::<Vec<_>>(),
            self.parsed.schema.metadata().clone(),
        ));
        Ok((columns, schema))
    }

    /// The row groups that rows `rows` touch.
    fn groups_of(&self, rows: &Range<u64>) -> Range<u64> {
        let r = u64::from(self.meta.rows_per_group);
        (rows.start / r)..rows.end.div_ceil(r)
    }

    /// The rows of `rows` in group `g`, as positions within the group.
    fn window(&self, g: u64, rows: &Range<u64>) -> Range<usize> {
        let r = u64::from(self.meta.rows_per_group);
        let first = g * r;
        (rows.start.max(first) - first) as usize..(rows.end.min(first + r) - first) as usize
    }

    fn group_rows(&self, g: u64) -> usize {
        let r = u64::from(self.meta.rows_per_group);
        (self.meta.num_rows.min((g + 1) * r) - g * r) as usize
    }

    /// The file's stream table and block index.
    pub(crate) fn stream_index(&self) -> (&[kompakt::stream::StreamInfo], &[BlockEntry]) {
        (self.index.streams(), self.index.blocks())
    }

    pub(crate) fn statistics_location(&self) -> Option<crate::stats::StatisticsLocation> {
        self.parsed.statistics
    }

    pub(crate) fn layouts(&self) -> &[crate::schema::ColumnLayout] {
        &self.parsed.layouts
    }

    pub(crate) fn pages(&self) -> &[Vec<crate::meta::PageEntry>] {
        &self.meta.pages
    }

    pub(crate) fn user_metadata_map(&self) -> HashMap<String, String> {
        self.parsed.user_metadata.clone()
    }
}

/// The type a column's pages hold: a dictionary column's keys, otherwise the column's type.
fn leaf_type(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(key, _) => key,
        dt => dt,
    }
}
