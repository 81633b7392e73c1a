//! Opening a table: its footer read and checked once (stream index, page index, schema), or
//! what an earlier open of the same bytes parsed, reused.

use super::TableReader;
use crate::meta::TableMeta;
use crate::schema::{from_json, ParsedSchema};
use arrow_data::ArrayData;
use kompakt::stream::{FileIndex, ReadAt, ReadOptions, Reader};
use kompakt::{Error, Result};
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What opening a table reads and parses (stream index, page index, schema), shared by the
/// readers of one unchanged file.
#[derive(Clone)]
pub(crate) struct TableIndex {
    file: Arc<FileIndex>,
    meta: Arc<TableMeta>,
    parsed: Arc<ParsedSchema>,
    /// Small dictionaries the readers of these bytes loaded, for the next reader.
    pub(crate) shared_dictionaries: SharedDictionaries,
}

/// Dictionaries of at most [`SHARED_DICTIONARY_MAX`] bytes (and [`SHARED_DICTIONARIES_TOTAL`]
/// together), by column, shared by every reader
/// opened from one [`TableIndex`]: a 1000-row read of a factor column otherwise read and decoded
/// its levels again on each open (a quarter of the read). Large ones stay each reader's own, so
/// that what a cached index holds stays small.
pub(crate) type SharedDictionaries = Arc<Mutex<HashMap<usize, ArrayData>>>;

/// The largest dictionary readers share, in bytes of Arrow memory.
pub(crate) const SHARED_DICTIONARY_MAX: usize = 64 << 10;
/// The most bytes of dictionaries one index shares: a cached index stays small.
pub(crate) const SHARED_DICTIONARIES_TOTAL: usize = 1 << 20;

impl TableIndex {
    /// Heap bytes the index holds, roughly.
    pub(crate) fn heap_size(&self) -> usize {
        // The parsed schema, counted as about the size of its JSON.
        self.file.heap_size() + self.meta.heap_size() + self.meta.schema_json.len()
    }
}

impl TableReader {
    /// Opens a table file (first undoing an append that a crash interrupted, if any).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        crate::journal::recover_if_needed(path.as_ref())?;
        Self::open_unrecovered(path)
    }

    pub(crate) fn open_unrecovered(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_file(File::open(path)?)
    }

    /// Opens a table from an open file.
    pub fn from_file(file: File) -> Result<Self> {
        Self::from_source(Arc::new(file))
    }

    /// Opens a table from any source of bytes read by position: a file, the bytes of a table
    /// in memory (`Arc::new(vec)`), or a source of the caller's ([`ReadAt`]).
    pub fn from_source(source: Arc<dyn ReadAt>) -> Result<Self> {
        let index = Reader::at(Arc::clone(&source), ReadOptions::default())?;
        let lens: Vec<u64> = index.streams().iter().map(|s| s.raw_len).collect();
        let meta = TableMeta::decode(index.metadata(), &lens)?;
        let parsed = from_json(&meta.schema_json, lens.len())?;
        if parsed.schema.fields().len() != meta.pages.len() {
            return Err(Error::corrupt(
                "table footer",
                0,
                format!(
                    "the schema has {} columns, the page index {}",
                    parsed.schema.fields().len(),
                    meta.pages.len()
                ),
            ));
        }
        Ok(TableReader {
            source,
            index,
            meta: Arc::new(meta),
            parsed: Arc::new(parsed),
            verify: true,
            dictionaries: Mutex::new(HashMap::new()),
            shared_dictionaries: SharedDictionaries::default(),
            column_dicts: Mutex::new(HashMap::new()),
            statistics: Mutex::new(None),
            read_limit: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
        .with_default_limit())
    }

    /// What opening read and parsed, for opening the same bytes again.
    pub(crate) fn shared_index(&self) -> TableIndex {
        TableIndex {
            file: self.index.index(),
            meta: Arc::clone(&self.meta),
            parsed: Arc::clone(&self.parsed),
            shared_dictionaries: Arc::clone(&self.shared_dictionaries),
        }
    }

    /// A table over `source`, which holds the bytes `index` was read from (the caller checks).
    pub(crate) fn with_index(source: Arc<dyn ReadAt>, index: TableIndex) -> Result<Self> {
        let reader = Reader::at_with_index(Arc::clone(&source), index.file, ReadOptions::default())?;
        Ok(TableReader {
            source,
            index: reader,
            meta: index.meta,
            parsed: index.parsed,
            verify: true,
            dictionaries: Mutex::new(HashMap::new()),
            shared_dictionaries: index.shared_dictionaries,
            column_dicts: Mutex::new(HashMap::new()),
            statistics: Mutex::new(None),
            read_limit: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
        .with_default_limit())
    }

    fn with_default_limit(self) -> Self {
        self.set_read_limit(crate::budget::default_read_limit(self.file_len()));
        self
    }
}
