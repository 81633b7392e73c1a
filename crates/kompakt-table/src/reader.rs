//! Reading table files: only the pages a column subset and row range cover are read, each
//! with a positional read, and decoded in parallel.

use crate::budget::Budget;
use crate::meta::{group_count, TableMeta};
use crate::page::{decode_page_into_within, decode_page_rows_within, ColumnDict, WindowBits};
use crate::schema::{from_json, ParsedSchema};
use crate::stats::{decode_section, ColumnStatistics};
use crate::string_layout::StringLayout;
use crate::threads::with_threads;
use crate::zeroed::ZeroedBuffer;
use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::Buffer;
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::{DataType, Schema, SchemaRef};
use kompakt::stream::{BlockDecoder, BlockEntry, FileIndex, ReadAt, ReadOptions, Reader, SourceCursor, StreamSummary};
use kompakt::{Error, Result};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

thread_local! {
    static DECODER: RefCell<BlockDecoder> = RefCell::new(BlockDecoder::default());
    /// A page's stored blocks and its decoded bytes, reused from page to page: fresh buffers
    /// cost an allocation and a zero fill each.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Scratch buffers larger than this are freed after use rather than kept by the thread.
const SCRATCH_KEEP: usize = 8 << 20;

/// Reads whose pages hold at most this many encoded bytes run on the calling thread. Handing
/// work to a pool and taking it back costs several context switches (25 us a hand-off on the
/// benchmark VM, three per `read_columns`), more than decoding a few small pages takes: a
/// 1000-row slice of two columns spent three quarters of its time in the scheduler.
const SMALL_READ: u64 = 256 << 10;

/// `f` over `items`, results in order: on the calling thread when `threads` is 1, otherwise
/// on a pool of `threads` threads (0: all cores).
fn map_tasks<T: Send, R: Send>(threads: usize, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Result<Vec<R>> {
    if threads == 1 {
        return Ok(items.into_iter().map(f).collect());
    }
    with_threads(threads, || items.into_par_iter().map(f).collect())
}

/// Row groups `groups` of column `c` (the `k`th asked for), read into one array: into
/// `values` for fixed-width and boolean columns.
struct Part {
    k: usize,
    c: usize,
    groups: Range<u64>,
    values: Option<ZeroedBuffer>,
    /// Bytes of `values`, for the parts that have them.
    len: Option<usize>,
}

/// One decoded piece of a whole-column read.
enum Piece {
    /// A fixed-width or boolean window, its values already in the column's buffer.
    Bits(WindowBits),
    /// A page of another type, as its own array.
    Array(ArrayData),
}

/// Sets bits `offset..offset + len` of `bitmap`.
fn set_ones(bitmap: &mut [u8], offset: usize, len: usize) {
    let end = offset + len;
    let mut i = offset;
    while i < end && !i.is_multiple_of(8) {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
    let full = (end - i) / 8;
    bitmap[i / 8..i / 8 + full].fill(0xFF);
    i += full * 8;
    while i < end {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
}

/// Per column: where it is and how it was stored.
#[derive(Debug, Clone)]
pub struct ColumnSummary {
    /// Column name.
    pub name: String,
    /// Arrow type.
    pub data_type: DataType,
    /// Pages (one per row group) by body encoding name (`plain`, `for`, `dict`).
    pub encodings: std::collections::BTreeMap<&'static str, u64>,
    /// Pages with a validity bitmap.
    pub pages_with_nulls: u64,
    /// Bytes after page encoding, before the codec (dictionary included).
    pub encoded: u64,
    /// Bytes stored in the file (blocks' payloads and headers, dictionary included).
    pub stored: u64,
    /// Blocks by codec name.
    pub codecs: std::collections::BTreeMap<String, u64>,
}

/// What opening a table reads and parses (stream index, page index, schema), shared by the
/// readers of one unchanged file.
#[derive(Clone)]
pub(crate) struct TableIndex {
    file: Arc<FileIndex>,
    meta: Arc<TableMeta>,
    parsed: Arc<ParsedSchema>,
}

impl TableIndex {
    /// Heap bytes the index holds, roughly.
    pub(crate) fn heap_size(&self) -> usize {
        // The parsed schema, counted as about the size of its JSON.
        self.file.heap_size() + self.meta.heap_size() + self.meta.schema_json.len()
    }
}

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
    /// Shared dictionaries of string columns, ready for pages to gather from.
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
            column_dicts: Mutex::new(HashMap::new()),
            statistics: Mutex::new(None),
            read_limit: std::sync::atomic::AtomicU64::new(u64::MAX),
        }
        .with_default_limit())
    }

    /// Like [`TableReader::open`], but a file this process opened before and has not changed
    /// since (same device, inode, size, modification and change times) is opened without
    /// reading its footer again: what repeated small reads of one file cost most
    /// ([`crate::open_cache`] says when an index is kept).
    pub fn open_cached(path: impl AsRef<Path>) -> Result<Self> {
        crate::open_cache::open(path.as_ref())
    }

    /// What opening read and parsed, for opening the same bytes again.
    pub(crate) fn shared_index(&self) -> TableIndex {
        TableIndex {
            file: self.index.index(),
            meta: Arc::clone(&self.meta),
            parsed: Arc::clone(&self.parsed),
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

    /// Decodes every page of every column, a few row groups at a time (memory stays bounded),
    /// as a read would (each page checked as Arrow data, dictionary keys against their
    /// dictionary), and checks that the rows follow the table's sort keys and that the row-group
    /// statistics hold for them. `progress` gets the
    /// rows checked so far. Returns the row count; damage is a corruption error.
    pub fn verify_rows(&self, threads: usize, progress: &mut dyn FnMut(u64)) -> Result<u64> {
        const GROUPS_AT_ONCE: u64 = 16;
        let mut sort = crate::sort::SortCheck::new(&self.parsed.schema, &self.parsed.sorted_by)
            .map_err(|e| Error::corrupt("table schema", 0, e.to_string()))?;
        let r = u64::from(self.rows_per_group());
        let step = GROUPS_AT_ONCE * r;
        let stats = self.all_statistics()?;
        // One budget for the whole table: what verifying a small file costs is bounded by the
        // read limit, however many row groups it claims.
        let budget = self.budget();
        let mut start = 0;
        while start < self.num_rows() {
            let end = start.saturating_add(step).min(self.num_rows());
            let (_, batches) = self.read_within(None, start..end, threads, &budget)?;
            let mut row = start;
            // Per group of this round, per column: its rows, for checking the statistics.
            let mut pieces =
                vec![vec![Vec::new(); self.parsed.schema.fields().len()]; (end - start).div_ceil(r) as usize];
            for b in &batches {
                sort.check(b, row)
                    .map_err(|e| Error::corrupt("table", 0, format!("the file says it is sorted, but {e}")))?;
                if stats.is_some() {
                    let mut at = 0;
                    while at < b.num_rows() {
                        let g = (row + at as u64) / r;
                        let n = ((g + 1) * r - (row + at as u64)).min((b.num_rows() - at) as u64) as usize;
                        for (c, column) in b.columns().iter().enumerate() {
                            pieces[(g - start / r) as usize][c].push(column.slice(at, n).to_data());
                        }
                        at += n;
                    }
                }
                row += b.num_rows() as u64;
            }
            if let Some(stats) = &stats {
                for (i, group) in pieces.iter().enumerate() {
                    self.check_statistics(stats, start / r + i as u64, group)?;
                }
            }
            start = end;
            progress(start);
        }
        Ok(self.num_rows())
    }

    /// Checks that the statistics of group `g` hold for its rows (`pieces[c]`, per column):
    /// exact null and NaN counts, and bounds that bound its values.
    fn check_statistics(&self, stats: &[Option<ColumnStatistics>], g: u64, pieces: &[Vec<ArrayData>]) -> Result<()> {
        use arrow_ord::ord::make_comparator;
        let g_ = g as usize;
        for (c, s) in stats.iter().enumerate() {
            let Some(s) = s else { continue };
            let field = self.parsed.schema.field(c);
            let found = crate::stats::page_stats(field.data_type(), &pieces[c]);
            let wrong = |what: &str| {
                Error::corrupt(
                    "table statistics",
                    0,
                    format!(
                        "column {:?}, row group {g}: {what} does not hold for its rows",
                        field.name()
                    ),
                )
            };
            if s.null_counts[g_] != found.nulls {
                return Err(wrong("the null count"));
            }
            if s.nan_counts.as_ref().is_some_and(|n| n[g_] != found.nans) {
                return Err(wrong("the NaN count"));
            }
            for (stored, value, is_min) in [(&s.min, &found.min, true), (&s.max, &found.max, false)] {
                let (Some(stored), Some(value)) = (stored, value) else {
                    continue;
                };
                let value = make_array(value.clone());
                let holds = stored.is_valid(g_)
                    && make_comparator(stored.as_ref(), value.as_ref(), Default::default())
                        .map(|cmp| if is_min { cmp(g_, 0).is_le() } else { cmp(g_, 0).is_ge() })
                        .unwrap_or(false);
                if !holds {
                    return Err(wrong(if is_min { "the minimum" } else { "the maximum" }));
                }
            }
        }
        Ok(())
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.index.file_len()
    }

    /// The position of the column named `name`.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.parsed.schema.index_of(name).map_err(|_| {
            let names: Vec<&str> = self.parsed.schema.fields().iter().map(|f| f.name().as_str()).collect();
            Error::invalid("column", name, format!("one of {names:?}"))
        })
    }

    /// Per-column storage summary, from the index alone.
    pub fn summary(&self) -> Vec<ColumnSummary> {
        let streams: Vec<StreamSummary> = self.index.summary();
        self.parsed
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(c, f)| {
                let mut encodings = std::collections::BTreeMap::new();
                let mut nulls = 0;
                for p in &self.meta.pages[c] {
                    let name = match p.summary & 0x7f {
                        crate::page::encoding::PLAIN => "plain",
                        crate::page::encoding::FOR => "for",
                        crate::page::encoding::DICT => "dict",
                        crate::page::encoding::BITPACK => "bitpack",
                        crate::page::encoding::DELTA => "delta",
                        crate::page::encoding::RUNS => "runs",
                        crate::page::encoding::SCALED => "scaled",
                        crate::page::encoding::DECIMAL => "decimal",
                        crate::page::encoding::COLUMN_DICT => "column dict",
                        crate::page::encoding::SYMBOLS => "symbols",
                        _ => "other",
                    };
                    *encodings.entry(name).or_insert(0) += 1;
                    nulls += u64::from(p.summary & crate::page::SUMMARY_NULLS != 0);
                }
                let mut ids = vec![c];
                ids.extend(self.parsed.layouts[c].dictionary_stream.map(|s| s as usize));
                let mut codecs = std::collections::BTreeMap::new();
                let (mut encoded, mut stored) = (0, 0);
                for s in ids {
                    encoded += streams[s].raw;
                    stored += streams[s].stored + 24 * streams[s].blocks;
                    for (k, v) in &streams[s].codecs {
                        *codecs.entry(k.clone()).or_insert(0) += v;
                    }
                }
                ColumnSummary {
                    name: f.name().clone(),
                    data_type: f.data_type().clone(),
                    encodings,
                    pages_with_nulls: nulls,
                    encoded,
                    stored,
                    codecs,
                }
            })
            .collect()
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

    /// Whether any page of column `c` covering rows `rows` has a validity bitmap (may hold
    /// nulls), from the index alone.
    pub fn may_have_nulls(&self, c: usize, rows: Range<u64>) -> Result<bool> {
        self.request(Some(&[c]), &rows)?;
        if rows.is_empty() {
            return Ok(false);
        }
        let groups = self.groups_of(&rows);
        Ok(self.meta.pages[c][groups.start as usize..groups.end as usize]
            .iter()
            .any(|p| p.summary & crate::page::SUMMARY_NULLS != 0))
    }

    /// Decodes rows `rows` of fixed-width column `c` (not boolean, not a dictionary) straight
    /// into `dst`, `rows.len()` values of the column's width: memory the caller owns, such as
    /// a numpy array. Returns whether every row is valid; when some are null, their values in
    /// `dst` are unspecified and the caller needs the validity from [`read_columns`].
    ///
    /// [`read_columns`]: Self::read_columns
    pub fn read_column_into(&self, c: usize, rows: Range<u64>, dst: &mut [u8], threads: usize) -> Result<bool> {
        let pages = self.read_pages_into(c, rows, dst, threads)?;
        Ok(pages.into_iter().all(|(n, validity)| {
            validity.is_none_or(|v| arrow_buffer::BooleanBuffer::new(v, 0, n).count_set_bits() == n)
        }))
    }

    /// [`read_column_into`](Self::read_column_into), with the validity of the rows: `None`
    /// when no page of the range has a validity bitmap (every row valid), else one bit per row.
    pub fn read_column_into_with_validity(
        &self,
        c: usize,
        rows: Range<u64>,
        dst: &mut [u8],
        threads: usize,
    ) -> Result<Option<arrow_buffer::BooleanBuffer>> {
        let pages = self.read_pages_into(c, rows, dst, threads)?;
        if pages.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        let total = pages.iter().map(|(n, _)| n).sum();
        let mut bits = arrow_buffer::BooleanBufferBuilder::new(total);
        for (n, validity) in pages {
            match validity {
                Some(v) => bits.append_packed_range(0..n, v.as_slice()),
                None => bits.append_n(n, true),
            }
        }
        Ok(Some(bits.finish()))
    }

    /// Decodes rows `rows` of fixed-width column `c` into `dst`, page by page in parallel;
    /// returns each page's row count and validity bitmap, in row order.
    fn read_pages_into(
        &self,
        c: usize,
        rows: Range<u64>,
        dst: &mut [u8],
        threads: usize,
    ) -> Result<Vec<(usize, Option<arrow_buffer::Buffer>)>> {
        let (_, _) = self.request(Some(&[c]), &rows)?;
        let field = self.parsed.schema.field(c);
        let width = match (field.data_type(), crate::schema::fixed_width(field.data_type())) {
            (DataType::Boolean | DataType::Dictionary(..), _) | (_, None) => {
                return Err(Error::invalid(
                    "column",
                    field.name(),
                    "a column of fixed-width values (numbers, dates, times) to decode into memory",
                ))
            }
            (_, Some(w)) => w,
        };
        let m = usize::try_from(rows.end - rows.start)
            .ok()
            .filter(|m| m.checked_mul(width) == Some(dst.len()));
        if m.is_none() {
            return Err(Error::invalid(
                "output buffer",
                format!("{} bytes", dst.len()),
                format!("{} rows of {width} bytes", rows.end - rows.start),
            ));
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let budget = self.budget();
        budget.charge(dst.len() as u64, "the values read")?;
        let window = |g: u64| self.window(g, &rows);
        let mut tasks = Vec::new();
        let mut rest = dst;
        let groups = self.groups_of(&rows);
        for g in groups.clone() {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(width * window(g).len());
            rest = tail;
            tasks.push((g, part));
        }
        self.prefetch_pages(groups.clone().map(|g| (c, g)));
        let threads = self.threads_for(&[c], &groups, threads);
        map_tasks(threads, tasks, |(g, part)| {
            let rows = window(g);
            let bits = self.read_page_into(c, g, rows.clone(), part, &budget)?;
            Ok((rows.len(), bits.validity))
        })?
        .into_iter()
        .collect()
    }

    /// Reads rows `rows` of the columns `columns` (positions; `None`: all) column by column:
    /// fixed-width, boolean and dictionary columns as one array each, decoded in parallel
    /// straight into that array's buffer; other types as one array per row group. This is the
    /// fast way to read a table whole (no per-group arrays to concatenate afterwards).
    pub fn read_columns(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        self.read_columns_as(columns, rows, threads, StringLayout::AsStored)
    }

    /// [`read_columns`](Self::read_columns), with string and binary columns handed over as
    /// `strings` says.
    pub fn read_columns_as(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
        strings: StringLayout,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        let (columns, schema) = self.request(columns, &rows)?;
        let schema = strings.schema(schema);
        if rows.is_empty() || columns.is_empty() {
            let (_, batches) = self.read(Some(&columns), rows, threads)?;
            let cols = (0..columns.len())
                .map(|i| {
                    let dt = schema.field(i).data_type();
                    batches
                        .iter()
                        .map(|b| match b.column(i) {
                            // Empty: only its type changes.
                            a if a.data_type() != dt => arrow_array::new_empty_array(dt),
                            a => a.clone(),
                        })
                        .collect()
                })
                .collect();
            return Ok((schema, cols));
        }
        let m = usize::try_from(rows.end - rows.start).map_err(|_| Error::OutOfRange {
            detail: "more rows than this machine can address".into(),
        })?;
        let groups = self.groups_of(&rows);
        self.prefetch_pages(columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g))));
        let budget = self.budget();
        // The pool is entered once for the whole read; the steps inside run on it directly (a
        // hand-off per step cost about 25 us each on the benchmark VM).
        match self.threads_for(&columns, &groups, threads) {
            1 => self.decode_columns(&columns, schema, &rows, m, groups, 1, strings, &budget),
            threads => with_threads(threads, || {
                self.decode_columns(&columns, schema, &rows, m, groups, 0, strings, &budget)
            })?,
        }
    }

    /// The body of [`read_columns`](Self::read_columns) once the request is checked: its steps
    /// run on `threads` threads (1: the calling thread; 0: the pool the caller runs in).
    #[allow(clippy::too_many_arguments)]
    fn decode_columns(
        &self,
        columns: &[usize],
        schema: SchemaRef,
        rows: &Range<u64>,
        m: usize,
        groups: Range<u64>,
        threads: usize,
        strings: StringLayout,
        budget: &Budget,
    ) -> Result<(SchemaRef, Vec<Vec<ArrayRef>>)> {
        let window = |g: u64| self.window(g, rows);
        // A part is a run of row groups of one column that becomes one array. A fixed-width,
        // boolean or dictionary column is one part with one zeroed buffer, cut into a disjoint
        // slice per group; other columns are a part per group.
        let mut parts: Vec<Part> = Vec::new();
        for (k, &c) in columns.iter().enumerate() {
            let field = self.parsed.schema.field(c);
            let leaf = leaf_type(field.data_type());
            let width = match (leaf, crate::schema::fixed_width(leaf)) {
                (DataType::Boolean, _) => 0,
                (_, Some(w)) => w,
                (_, None) => {
                    parts.extend(groups.clone().map(|g| Part {
                        k,
                        c,
                        groups: g..g + 1,
                        values: None,
                        len: None,
                    }));
                    continue;
                }
            };
            let len = width.checked_mul(m).ok_or_else(|| Error::OutOfRange {
                detail: format!("{m} rows of {width} bytes"),
            })?;
            budget.charge(len as u64, &format!("column {:?}", field.name()))?;
            parts.push(Part {
                k,
                c,
                groups: groups.clone(),
                values: None,
                len: Some(len),
            });
        }
        // Zeroing a reused allocation is a pass over memory: one per thread, not all on one.
        map_tasks(threads, parts.iter_mut().collect(), |p: &mut Part| {
            if let Some(len) = p.len {
                let name = self.parsed.schema.field(p.c).name();
                p.values = Some(ZeroedBuffer::new(len, &format!("column {name:?}"))?);
            }
            Ok::<_, Error>(())
        })?
        .into_iter()
        .collect::<Result<()>>()?;
        let mut tasks: Vec<(usize, u64, Option<&mut [u8]>)> = Vec::new();
        for part in parts.iter_mut() {
            let c = part.c;
            match &mut part.values {
                Some(values) => {
                    let w = crate::schema::fixed_width(leaf_type(self.parsed.schema.field(c).data_type())).unwrap_or(0);
                    let mut rest = values.as_mut_slice();
                    for g in part.groups.clone() {
                        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(w * window(g).len());
                        rest = tail;
                        tasks.push((c, g, Some(dst)));
                    }
                }
                None => tasks.extend(part.groups.clone().map(|g| (c, g, None))),
            }
        }
        let pieces: Vec<Result<Piece>> = map_tasks(threads, tasks, |(c, g, dst)| match dst {
            Some(dst) => self.read_page_into(c, g, window(g), dst, budget).map(Piece::Bits),
            None => self.read_page_as(c, g, window(g), strings, budget).map(Piece::Array),
        })?;
        let mut pieces = pieces.into_iter();
        let parts: Vec<(Part, Vec<Result<Piece>>)> = parts
            .into_iter()
            .map(|p| {
                let n = (p.groups.end - p.groups.start) as usize;
                (p, pieces.by_ref().take(n).collect())
            })
            .collect();
        // Building an array validates it (a dictionary's keys against its values): in parallel.
        let arrays: Vec<Result<(usize, ArrayRef)>> = map_tasks(threads, parts, |(part, pieces)| {
            let pieces: Vec<Piece> = pieces.into_iter().collect::<Result<_>>()?;
            let array = match part.values {
                Some(values) => {
                    let lens: Vec<usize> = part.groups.clone().map(|g| window(g).len()).collect();
                    self.assemble(part.c, &lens, values, pieces, budget)?
                }
                None => match pieces.into_iter().next() {
                    Some(Piece::Array(a)) => make_array(a),
                    _ => unreachable!("a page of its own decodes to one array"),
                },
            };
            Ok((part.k, array))
        })?;
        let mut out: Vec<Vec<ArrayRef>> = vec![Vec::new(); columns.len()];
        for a in arrays {
            let (k, array) = a?;
            out[k].push(array);
        }
        Ok((schema, out))
    }

    /// Builds whole column `c` of `m` rows from its values and its pages' bitmaps.
    fn assemble(
        &self,
        c: usize,
        lens: &[usize],
        values: ZeroedBuffer,
        pieces: Vec<Piece>,
        budget: &Budget,
    ) -> Result<ArrayRef> {
        let m: usize = lens.iter().sum();
        let field = self.parsed.schema.field(c);
        let bits: Vec<WindowBits> = pieces
            .into_iter()
            .map(|p| match p {
                Piece::Bits(b) => b,
                Piece::Array(_) => unreachable!("whole columns decode into buffers"),
            })
            .collect();
        let stitch = |pick: &dyn Fn(&WindowBits) -> Option<&Buffer>, ones: bool| -> Result<Buffer> {
            let len = arrow_buffer::bit_util::ceil(m, 8);
            budget.charge(len as u64, "a column's bitmap")?;
            let mut bitmap = ZeroedBuffer::new(len, "a column's bitmap")?;
            let dst = bitmap.as_mut_slice();
            let mut at = 0;
            for (b, &len) in bits.iter().zip(lens) {
                match pick(b) {
                    Some(src) => {
                        set_bits(dst, src.as_slice(), at, 0, len);
                    }
                    None if ones => set_ones(dst, at, len),
                    None => {}
                }
                at += len;
            }
            Ok(bitmap.into_buffer())
        };
        let validity = if bits.iter().any(|b| b.validity.is_some()) {
            Some(stitch(&|b| b.validity.as_ref(), true)?)
        } else {
            None
        };
        let leaf = leaf_type(field.data_type());
        let values = if *leaf == DataType::Boolean {
            stitch(&|b| b.values.as_ref(), false)?
        } else {
            values.into_buffer()
        };
        let invalid = |e: String| {
            Error::corrupt(
                "table column",
                0,
                format!("column {:?}: invalid values: {e}", field.name()),
            )
        };
        let data = ArrayDataBuilder::new(leaf.clone())
            .len(m)
            .null_bit_buffer(validity)
            .add_buffer(values)
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        match field.data_type() {
            DataType::Dictionary(..) => dictionary_array(data, self.dictionary_within(c, budget)?).map_err(invalid),
            _ => Ok(make_array(data)),
        }
    }

    /// Reads rows `rows` of the columns `columns` (positions; `None`: all), one record batch
    /// per row group the range covers, on `threads` threads (0: all cores).
    pub fn read(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        self.read_within(columns, rows, threads, &self.budget())
    }

    /// [`read`](Self::read) within `budget`.
    fn read_within(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
        budget: &Budget,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let (columns, schema) = self.request(columns, &rows)?;
        let columns = &columns[..];
        let fields = self.parsed.schema.fields();
        if rows.is_empty() {
            // One empty batch, so that dictionary columns still carry their values.
            let arrays = columns
                .iter()
                .map(|&c| match fields[c].data_type() {
                    dt @ DataType::Dictionary(key, _) => {
                        let keys = ArrayData::new_empty(key);
                        ArrayDataBuilder::new(dt.clone())
                            .add_buffer(keys.buffers()[0].clone())
                            .add_child_data(self.dictionary_within(c, budget)?)
                            .build()
                            .map(make_array)
                            .map_err(|e| Error::corrupt("table dictionary", 0, e.to_string()))
                    }
                    dt => Ok(make_array(ArrayData::new_empty(dt))),
                })
                .collect::<Result<Vec<_>>>()?;
            let opts = RecordBatchOptions::new().with_row_count(Some(0));
            let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, vec![batch]));
        }
        if columns.is_empty() {
            // Rows without columns: one batch, whatever the row count says.
            let n = usize::try_from(rows.end - rows.start).map_err(|_| Error::OutOfRange {
                detail: "more rows than this machine can address".into(),
            })?;
            let opts = RecordBatchOptions::new().with_row_count(Some(n));
            let batch = RecordBatch::try_new_with_options(schema.clone(), Vec::new(), &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, vec![batch]));
        }
        let groups = self.groups_of(&rows);
        let tasks: Vec<(u64, usize)> = groups
            .clone()
            .flat_map(|g| columns.iter().map(move |&c| (g, c)))
            .collect();
        let window = |g: u64| self.window(g, &rows);
        self.prefetch_pages(tasks.iter().map(|&(g, c)| (c, g)));
        let threads = self.threads_for(columns, &groups, threads);
        let pages: Vec<Result<ArrayData>> =
            map_tasks(threads, tasks, |(g, c)| self.read_page(c, g, window(g), budget))?;
        let mut pages = pages.into_iter();
        let mut batches = Vec::with_capacity((groups.end - groups.start) as usize);
        for g in groups {
            let in_group = window(g);
            let mut arrays = Vec::with_capacity(columns.len());
            for _ in columns {
                arrays.push(make_array(pages.next().expect("one page per task")?));
            }
            let opts = RecordBatchOptions::new().with_row_count(Some(in_group.len()));
            let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                .map_err(|e| Error::corrupt("table page", 0, e.to_string()))?;
            batches.push(batch);
        }
        Ok((schema, batches))
    }

    /// Rows at positions `indices` (in the order given; repeats allowed) of the columns
    /// `columns` (positions; `None`: all), as one batch, on `threads` threads (0: all cores).
    /// Each row group holding any of the rows is read once, and only the window of its pages
    /// from the first of those rows to the last is decoded, however many rows it holds.
    pub fn take(&self, columns: Option<&[usize]>, indices: &[u64], threads: usize) -> Result<(SchemaRef, RecordBatch)> {
        let n = self.meta.num_rows;
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(Error::OutOfRange {
                detail: format!("row {bad} of a table of {n} rows"),
            });
        }
        let (columns, schema) = self.request(columns, &(0..n))?;
        if indices.is_empty() {
            // One empty batch, dictionaries included, as a read of no rows gives.
            let (schema, mut batches) = self.read(Some(&columns), 0..0, 1)?;
            return Ok((schema, batches.remove(0)));
        }
        if columns.is_empty() {
            let opts = RecordBatchOptions::new().with_row_count(Some(indices.len()));
            let batch = RecordBatch::try_new_with_options(schema.clone(), Vec::new(), &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, batch));
        }
        let r = u64::from(self.meta.rows_per_group);
        // The groups touched, in order, each with the window of its rows that the take needs.
        let mut windows: Vec<(u64, Range<usize>)> = Vec::new();
        {
            let mut sorted: Vec<u64> = indices.to_vec();
            sorted.sort_unstable();
            for &i in &sorted {
                let (g, at) = (i / r, (i % r) as usize);
                match windows.last_mut() {
                    Some((last, w)) if *last == g => w.end = at + 1,
                    _ => windows.push((g, at..at + 1)),
                }
            }
        }
        let tasks: Vec<(usize, usize)> = (0..windows.len())
            .flat_map(|w| columns.iter().map(move |&c| (w, c)))
            .collect();
        self.prefetch_pages(tasks.iter().map(|&(w, c)| (c, windows[w].0)));
        let threads = self.threads_for_pages(tasks.iter().map(|&(w, c)| (c, windows[w].0)), threads);
        let budget = self.budget();
        let pages = map_tasks(threads, tasks, |(w, c)| {
            let (g, rows) = &windows[w];
            self.read_page(c, *g, rows.clone(), &budget).map(make_array)
        })?
        .into_iter()
        .collect::<Result<Vec<ArrayRef>>>()?;
        // Where each requested row lies: (its window, its position in the window's pages).
        let place = |i: u64| {
            let g = i / r;
            let w = windows.partition_point(|(wg, _)| *wg < g);
            (w, (i % r) as usize - windows[w].1.start)
        };
        let places: Vec<(usize, usize)> = indices.iter().map(|&i| place(i)).collect();
        let arrays = (0..columns.len())
            .map(|k| {
                let parts: Vec<&dyn arrow_array::Array> = (0..windows.len())
                    .map(|w| pages[w * columns.len() + k].as_ref())
                    .collect();
                let interleave = |parts: &[&dyn arrow_array::Array]| {
                    arrow_select::interleave::interleave(parts, &places)
                        .map_err(|e| Error::corrupt("table page", 0, e.to_string()))
                };
                if !matches!(schema.field(k).data_type(), DataType::Dictionary(..)) {
                    return interleave(&parts);
                }
                // The keys, then the column's one dictionary: interleaving dictionary arrays
                // would append one copy of it per page, as values that differ.
                use arrow_array::cast::AsArray;
                let keys: Vec<&dyn arrow_array::Array> = parts.iter().map(|p| p.as_any_dictionary().keys()).collect();
                dictionary_array(
                    interleave(&keys)?.to_data(),
                    self.dictionary_within(columns[k], &budget)?,
                )
                .map_err(|e| Error::corrupt("table page", 0, format!("invalid dictionary keys: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let opts = RecordBatchOptions::new().with_row_count(Some(indices.len()));
        let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
            .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
        Ok((schema, batch))
    }

    /// The threads a read of `columns` over row groups `groups` should use: 1 (the calling
    /// thread) when its pages are small, `threads` otherwise.
    fn threads_for(&self, columns: &[usize], groups: &Range<u64>, threads: usize) -> usize {
        let pages = columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g)));
        self.threads_for_pages(pages, threads)
    }

    /// The threads a read of the pages `(column, group)` should use, as [`Self::threads_for`].
    fn threads_for_pages(&self, pages: impl IntoIterator<Item = (usize, u64)>, threads: usize) -> usize {
        let mut bytes = 0u64;
        for (c, g) in pages {
            let p = self.meta.pages[c][g as usize];
            bytes += p.end - p.start;
            if bytes > SMALL_READ {
                return threads;
            }
        }
        1
    }

    /// Tells the source that rows `rows` of `columns` (positions; `None`: all) are about to be
    /// read: a remote source fetches their pages in a few merged requests, in the background.
    /// For callers that read a range in several calls (a column at a time, or in chunks); one
    /// call of the read functions hints what it reads already. Files and memory ignore it.
    pub fn prefetch(&self, columns: Option<&[usize]>, rows: Range<u64>) -> Result<()> {
        let (columns, _) = self.request(columns, &rows)?;
        if !rows.is_empty() {
            let groups = self.groups_of(&rows);
            self.prefetch_pages(columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g))));
        }
        Ok(())
    }

    /// Tells the source which byte ranges the pages `(column, group)` (and the dictionaries
    /// of their columns, when not read yet) are about to be read from: a remote source fetches
    /// them in a few merged requests at once instead of a round trip per block. Files and
    /// memory ignore it.
    fn prefetch_pages(&self, pages: impl IntoIterator<Item = (usize, u64)>) {
        let mut ranges = Vec::new();
        let mut add = |stream: u32, start: u64, end: u64| {
            for b in self.index.covering_blocks(stream, start, end).unwrap_or_default() {
                let len = kompakt::stream::format::BLOCK_HEADER_LEN as u64 + u64::from(b.header.stored_len);
                ranges.push(b.file_offset..b.file_offset + len);
            }
        };
        let mut columns = Vec::new();
        for (c, g) in pages {
            let Some(page) = self.meta.pages.get(c).and_then(|p| p.get(g as usize)) else {
                continue;
            };
            add(c as u32, page.start, page.end);
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        for c in columns {
            let layout = self.parsed.layouts[c];
            let Some(stream) = layout.dictionary_stream else {
                continue;
            };
            let cached = self.dictionaries.lock().expect("dictionary cache").contains_key(&c)
                || self.column_dicts.lock().expect("dictionary cache").contains_key(&c);
            if let (false, Ok(len)) = (cached, self.index.stream_len(stream)) {
                add(stream, layout.dictionary_offset, len);
            }
        }
        if !ranges.is_empty() {
            ranges.sort_by_key(|r| r.start);
            ranges.dedup();
            self.source.prefetch(&ranges);
        }
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

    /// Reads page `g` of column `c` and decodes its rows `rows` (positions within the group).
    fn read_page(&self, c: usize, g: u64, rows: Range<usize>, budget: &Budget) -> Result<ArrayData> {
        self.read_page_as(c, g, rows, StringLayout::AsStored, budget)
    }

    /// [`read_page`](Self::read_page), a string or binary page as `strings` says.
    fn read_page_as(
        &self,
        c: usize,
        g: u64,
        rows: Range<usize>,
        strings: StringLayout,
        budget: &Budget,
    ) -> Result<ArrayData> {
        let page = self.meta.pages[c][g as usize];
        let field = self.parsed.schema.field(c);
        let n = self.group_rows(g);
        let context = |e: Error| self.in_page(e, c, g);
        let leaf = leaf_type(field.data_type());
        let dict = self.column_dict(c, budget)?;
        // The page's bytes after the codec are a working buffer, kept for the next page once
        // it is decoded: they must fit within the limit, but are not counted as kept.
        budget
            .check(page.end.saturating_sub(page.start), "a page's bytes")
            .map_err(context)?;
        let decoded = self
            .with_raw(c as u32, page.start, page.end, |raw| {
                decode_page_rows_within(leaf, strings, n, raw, rows, dict.as_deref(), budget)
            })
            .map_err(context)?;
        match field.data_type() {
            DataType::Dictionary(..) => Ok(dictionary_array(decoded, self.dictionary_within(c, budget)?)
                .map_err(|e| context(Error::corrupt("table page", 0, format!("invalid dictionary keys: {e}"))))?
                .to_data()),
            _ => Ok(decoded),
        }
    }

    /// Reads page `g` of fixed-width or boolean column `c` (for a dictionary column, its keys)
    /// and decodes its rows `rows` into `dst`.
    fn read_page_into(
        &self,
        c: usize,
        g: u64,
        rows: Range<usize>,
        dst: &mut [u8],
        budget: &Budget,
    ) -> Result<WindowBits> {
        let page = self.meta.pages[c][g as usize];
        let field = self.parsed.schema.field(c);
        let n = self.group_rows(g);
        budget
            .check(page.end.saturating_sub(page.start), "a page's bytes")
            .map_err(|e| self.in_page(e, c, g))?;
        self.with_raw(c as u32, page.start, page.end, |raw| {
            decode_page_into_within(leaf_type(field.data_type()), n, raw, rows, dst, budget)
        })
        .map_err(|e| self.in_page(e, c, g))
    }

    /// `e` with the column and rows of page `g` of column `c` in its detail.
    fn in_page(&self, e: Error, c: usize, g: u64) -> Error {
        match e {
            Error::Corrupt { what, detail, .. } => Error::Corrupt {
                what,
                offset: 0,
                detail: format!(
                    "column {:?}, rows {}..: {detail}",
                    self.parsed.schema.field(c).name(),
                    g * u64::from(self.meta.rows_per_group)
                ),
            },
            e => e,
        }
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

    /// The dictionary the pages of string column `c` share, if it has one (read once, then
    /// cached).
    fn column_dict(&self, c: usize, budget: &Budget) -> Result<Option<Arc<ColumnDict>>> {
        if self.parsed.layouts[c].dictionary_stream.is_none()
            || matches!(self.parsed.schema.field(c).data_type(), DataType::Dictionary(..))
        {
            return Ok(None);
        }
        if let Some(d) = self.column_dicts.lock().expect("dictionary cache").get(&c) {
            return Ok(Some(d.clone()));
        }
        // Not kept as an array too: the pages gather from this form only.
        let dict = Arc::new(ColumnDict::new(&self.load_dictionary(c, budget)?)?);
        self.column_dicts
            .lock()
            .expect("dictionary cache")
            .insert(c, dict.clone());
        Ok(Some(dict))
    }

    /// The dictionary of column `c`, a dictionary column or a string column whose pages share
    /// one (read once, then cached).
    pub(crate) fn dictionary(&self, c: usize) -> Result<ArrayData> {
        self.dictionary_within(c, &self.budget())
    }

    /// [`dictionary`](Self::dictionary), a load counted against `budget`.
    fn dictionary_within(&self, c: usize, budget: &Budget) -> Result<ArrayData> {
        if let Some(d) = self.dictionaries.lock().expect("dictionary cache").get(&c) {
            return Ok(d.clone());
        }
        let values = self.load_dictionary(c, budget)?;
        self.dictionaries
            .lock()
            .expect("dictionary cache")
            .insert(c, values.clone());
        Ok(values)
    }

    /// Reads and decodes the dictionary of column `c` (uncached).
    fn load_dictionary(&self, c: usize, budget: &Budget) -> Result<ArrayData> {
        let layout = self.parsed.layouts[c];
        let stream = layout.dictionary_stream.expect("checked when the schema was parsed");
        let len = self.index.stream_len(stream)?;
        if layout.dictionary_offset > len {
            return Err(Error::corrupt("table dictionary", 0, "starts past its stream"));
        }
        let value = match self.parsed.schema.field(c).data_type() {
            DataType::Dictionary(_, value) => value.as_ref(),
            strings => strings,
        };
        budget.check(len - layout.dictionary_offset, "a dictionary's bytes")?;
        self.with_raw(stream, layout.dictionary_offset, len, |raw| {
            let bad = || Error::corrupt("table dictionary", 0, "shorter than its 8-byte count");
            let count = u64::from_le_bytes(raw.get(..8).ok_or_else(bad)?.try_into().expect("8 bytes"));
            // Every value takes at least one bit, so a count beyond the bytes present is a lie.
            if count > 8 * raw.len() as u64 + 8 && *value != DataType::Null {
                return Err(Error::corrupt("table dictionary", 0, format!("claims {count} values")));
            }
            let count = usize::try_from(count).map_err(|_| bad())?;
            let strings = StringLayout::AsStored;
            decode_page_rows_within(value, strings, count, &raw[8..], 0..count, None, budget)
        })
    }

    /// Calls `f` with the raw (decoded) bytes `start..end` of a stream, read with positional
    /// reads into this thread's scratch buffers.
    fn with_raw<T>(&self, stream: u32, start: u64, end: u64, f: impl FnOnce(&[u8]) -> Result<T>) -> Result<T> {
        // Taken, not borrowed: `f` may read another stream (a dictionary) on this thread.
        let (mut stored, mut raw) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        let result = self
            .read_raw_into(stream, start, end, &mut stored, &mut raw)
            .and_then(|()| f(&raw));
        for buf in [&mut stored, &mut raw] {
            if buf.capacity() > SCRATCH_KEEP {
                *buf = Vec::new();
            }
        }
        SCRATCH.with(|s| *s.borrow_mut() = (stored, raw));
        result
    }

    /// Reads raw bytes `start..end` of a stream into `out` (resized), through `stored`.
    fn read_raw_into(&self, stream: u32, start: u64, end: u64, stored: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<()> {
        let len = usize::try_from(end.saturating_sub(start)).map_err(|_| Error::OutOfRange {
            detail: "a page larger than memory".into(),
        })?;
        // Only bytes beyond what the buffer held before are zero-filled: all are overwritten.
        fit(out, len)?;
        if len == 0 {
            return Ok(());
        }
        let blocks: Vec<BlockEntry> = self.index.covering_blocks(stream, start, end)?;
        for b in blocks {
            let lo = start.max(b.raw_offset);
            let hi = end.min(b.raw_offset + u64::from(b.header.raw_len));
            fit(
                stored,
                kompakt::stream::format::BLOCK_HEADER_LEN + b.header.stored_len as usize,
            )?;
            read_exact_at(self.source.as_ref(), stored, b.file_offset)?;
            let dst = &mut out[(lo - start) as usize..(hi - start) as usize];
            DECODER.with(|d| {
                d.borrow_mut()
                    .decode_entry(&b, stored, self.verify, (lo - b.raw_offset) as usize, dst)
            })?;
        }
        Ok(())
    }

    /// Whether the file has row-group statistics (of a version this build reads).
    pub fn has_statistics(&self) -> bool {
        self.parsed.statistics.is_some()
    }

    /// The row-group statistics of column `c`: `None` when the file has none for it (written
    /// without them, by an older kompakt, or a type without any). The section is read and
    /// checked whole on the first call (one read), then kept.
    pub fn statistics(&self, c: usize) -> Result<Option<ColumnStatistics>> {
        if c >= self.parsed.schema.fields().len() {
            return Err(Error::Usage(format!(
                "no column {c} in a table of {}",
                self.parsed.schema.fields().len()
            )));
        }
        Ok(self.all_statistics()?.and_then(|all| all[c].clone()))
    }

    fn all_statistics(&self) -> Result<Option<Arc<Vec<Option<ColumnStatistics>>>>> {
        let Some(at) = self.parsed.statistics else {
            return Ok(None);
        };
        let mut cached = self.statistics.lock().expect("statistics cache");
        if let Some(all) = cached.as_ref() {
            return Ok(Some(all.clone()));
        }
        let len = self.index.stream_len(at.stream)?;
        if at.offset > len {
            return Err(Error::corrupt("table statistics", 0, "starts past its stream"));
        }
        let group_rows: Vec<u64> = (0..self.num_groups()).map(|g| self.group_rows(g) as u64).collect();
        let all = self.with_raw(at.stream, at.offset, len, |raw| {
            decode_section(&self.parsed.schema, &group_rows, raw)
        })?;
        let all = Arc::new(all);
        *cached = Some(all.clone());
        Ok(Some(all))
    }

    /// Number of row groups.
    pub fn num_groups(&self) -> u64 {
        group_count(self.meta.num_rows, self.meta.rows_per_group)
    }
}

/// Sets `buf`'s length to `len`, failing (not aborting) when the memory is not there.
fn fit(buf: &mut Vec<u8>, len: usize) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve_exact(len - buf.len())
            .map_err(|_| Error::OverLimit(format!("a page of {len} bytes does not fit in memory")))?;
        buf.resize(len, 0);
    } else {
        buf.truncate(len);
    }
    Ok(())
}

/// A dictionary array of `keys` (an integer array) into `values`, every valid key checked to
/// be in range. (Building it as `ArrayData` checks the same, at several times the cost.)
fn dictionary_array(keys: ArrayData, values: ArrayData) -> std::result::Result<ArrayRef, String> {
    use arrow_array::types::*;
    use arrow_array::{DictionaryArray, PrimitiveArray};
    macro_rules! dict {
        ($($variant:ident => $t:ty),*) => {
            match keys.data_type() {
                $(DataType::$variant => {
                    let keys = PrimitiveArray::<$t>::from(keys);
                    let values = make_array(values);
                    // `try_new` looks at the keys one by one, with a branch each (7 % of reading
                    // the fst table); `keys_in_range` is a loop the compiler vectorizes.
                    if keys_in_range(keys.values(), values.len()) {
                        #[allow(unsafe_code)]
                        // SAFETY: `new_unchecked` is sound when `try_new` would succeed: the keys
                        // are a `PrimitiveArray` of the key type (so their data type is right),
                        // and every key, valid or not, indexes `values`.
                        // `dictionary_keys_checked_like_try_new` compares both paths.
                        let d = unsafe { DictionaryArray::<$t>::new_unchecked(keys, values) };
                        Ok(Arc::new(d) as ArrayRef)
                    } else {
                        DictionaryArray::<$t>::try_new(keys, values)
                            .map(|d| Arc::new(d) as ArrayRef)
                            .map_err(|e| e.to_string())
                    }
                })*
                other => Err(format!("{other} is not a dictionary key type")),
            }
        };
    }
    dict!(Int8 => Int8Type, Int16 => Int16Type, Int32 => Int32Type, Int64 => Int64Type,
          UInt8 => UInt8Type, UInt16 => UInt16Type, UInt32 => UInt32Type, UInt64 => UInt64Type)
}

/// Whether every key (null slots' too) indexes `len` values: the smallest and the largest key
/// are, taken with min and max, which the compiler vectorizes. A negative key becomes a huge
/// `usize` and fails.
fn keys_in_range<T: arrow_buffer::ArrowNativeType + Ord>(keys: &[T], len: usize) -> bool {
    let Some(&first) = keys.first() else {
        return true;
    };
    let (lo, hi) = keys.iter().fold((first, first), |(lo, hi), &k| (lo.min(k), hi.max(k)));
    lo.as_usize() < len && hi.as_usize() < len
}

/// The type a column's pages hold: a dictionary column's keys, otherwise the column's type.
fn leaf_type(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(key, _) => key,
        dt => dt,
    }
}

/// The block at `offset` from `source`; a source that ends first is a damaged (or changed)
/// file.
fn read_exact_at(source: &dyn ReadAt, buf: &mut [u8], offset: u64) -> Result<()> {
    source.read_exact_at(buf, offset).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::corrupt(
            "block",
            offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        ),
        _ => e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int8Array, StringArray, UInt16Array};

    #[test]
    fn verify_finds_statistics_that_do_not_hold() {
        use arrow_array::{Float64Array, Int32Array};
        let batch = RecordBatch::try_from_iter([
            (
                "n",
                Arc::new(Int32Array::from_iter((0..100).map(|i| (i % 9 != 0).then_some(i)))) as ArrayRef,
            ),
            (
                "x",
                Arc::new(Float64Array::from_iter_values((0..100).map(|i| i as f64 / 2.0))) as ArrayRef,
            ),
        ])
        .unwrap();
        let opts = crate::TableOptions {
            rows_per_group: 32,
            ..Default::default()
        };
        let mut w = crate::TableWriter::new(Vec::new(), batch.schema(), opts).unwrap();
        w.write(&batch).unwrap();
        let t = TableReader::from_source(Arc::new(w.finish().unwrap())).unwrap();
        assert_eq!(t.verify_rows(1, &mut |_| {}).unwrap(), 100);
        let good = t.all_statistics().unwrap().unwrap();
        let rows = |c: usize, g: usize| vec![batch.column(c).slice(g * 32, 32).to_data()];
        for g in 0..3 {
            let pieces = [rows(0, g), rows(1, g)];
            t.check_statistics(&good, g as u64, &pieces).unwrap();
            // A null count one off, a minimum above a value, a maximum below one.
            let mut bad = (*good).clone();
            bad[0].as_mut().unwrap().null_counts[g] += 1;
            assert!(t.check_statistics(&bad, g as u64, &pieces).is_err());
            let mut bad = (*good).clone();
            bad[1].as_mut().unwrap().min = Some(Arc::new(Float64Array::from(vec![1000.0; 4])));
            assert!(t.check_statistics(&bad, g as u64, &pieces).is_err());
            let mut bad = (*good).clone();
            bad[0].as_mut().unwrap().max = Some(Arc::new(Int32Array::from(vec![-5; 4])));
            let err = t.check_statistics(&bad, g as u64, &pieces).unwrap_err().to_string();
            assert!(err.contains("\"n\"") && err.contains("maximum"), "{err}");
        }
    }

    #[test]
    fn dictionary_keys_checked_like_try_new() {
        let values = StringArray::from(vec!["a", "b", "c"]).to_data();
        let check = |keys: ArrayData, ok: bool| {
            let ours = dictionary_array(keys.clone(), values.clone());
            let theirs = arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::try_new(
                arrow_array::PrimitiveArray::from(keys),
                make_array(values.clone()),
            );
            assert_eq!(ours.is_ok(), ok);
            assert_eq!(theirs.is_ok(), ok);
            if let Ok(d) = ours {
                d.to_data().validate_full().unwrap();
                assert_eq!(d.as_ref(), &theirs.unwrap() as &dyn Array);
            }
        };
        check(Int8Array::from(vec![0, 2, 1, 2]).to_data(), true);
        check(Int8Array::from(Vec::<i8>::new()).to_data(), true);
        check(Int8Array::from(vec![0, 3]).to_data(), false);
        check(Int8Array::from(vec![0, -1]).to_data(), false);
        check(Int8Array::from(vec![i8::MIN, 0]).to_data(), false);
        // A null slot may hold any key: the slow path accepts it, as try_new does.
        check(Int8Array::from(vec![Some(1), None]).to_data(), true);
        let null_slot_out_of_range = Int8Array::from(vec![Some(1), None])
            .to_data()
            .into_builder()
            .buffers(vec![Buffer::from_vec(vec![1i8, 9])])
            .build()
            .unwrap();
        check(null_slot_out_of_range, true);
        // Wider keys: out of range only above the dictionary.
        let wide = |k: Vec<u16>| dictionary_array(UInt16Array::from(k).to_data(), values.clone()).is_ok();
        assert!(wide(vec![2, 0, 1]));
        assert!(!wide(vec![2, 3]));
        assert!(!wide(vec![u16::MAX]));
    }
}
