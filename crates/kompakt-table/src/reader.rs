//! Reading table files: only the pages a column subset and row range cover are read, each
//! with a positional read, and decoded in parallel.

use crate::meta::{group_count, TableMeta};
use crate::page::{decode_page, decode_page_rows};
use crate::schema::{from_json, ParsedSchema};
use crate::writer::with_threads;
use arrow_array::{make_array, RecordBatch, RecordBatchOptions};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::{DataType, Schema, SchemaRef};
use kompakt::stream::{BlockDecoder, BlockEntry, ReadOptions, Reader, StreamSummary};
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

/// A table file opened for reading: the footer is read and checked once; reads then touch
/// only the pages they need.
pub struct TableReader {
    file: File,
    index: Reader<File>,
    meta: TableMeta,
    parsed: ParsedSchema,
    verify: bool,
    dictionaries: Mutex<HashMap<usize, ArrayData>>,
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
        crate::append::recover_if_needed(path.as_ref())?;
        Self::open_unrecovered(path)
    }

    pub(crate) fn open_unrecovered(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_file(File::open(path)?)
    }

    /// Opens a table from an open file.
    pub fn from_file(file: File) -> Result<Self> {
        let index = Reader::new(file.try_clone()?, ReadOptions::default())?;
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
            file,
            index,
            meta,
            parsed,
            verify: true,
            dictionaries: Mutex::new(HashMap::new()),
        })
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

    /// The user key-value metadata given when the table was written.
    pub fn user_metadata(&self) -> &HashMap<String, String> {
        &self.parsed.user_metadata
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

    /// Reads rows `rows` of the columns `columns` (positions; `None`: all), one record batch
    /// per row group the range covers, on `threads` threads (0: all cores).
    pub fn read(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let all: Vec<usize>;
        let columns = match columns {
            Some(c) => c,
            None => {
                all = (0..self.parsed.schema.fields().len()).collect();
                &all
            }
        };
        let fields = self.parsed.schema.fields();
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
        if rows.is_empty() {
            // One empty batch, so that dictionary columns still carry their values.
            let arrays = columns
                .iter()
                .map(|&c| match fields[c].data_type() {
                    dt @ DataType::Dictionary(key, _) => {
                        let keys = ArrayData::new_empty(key);
                        ArrayDataBuilder::new(dt.clone())
                            .add_buffer(keys.buffers()[0].clone())
                            .add_child_data(self.dictionary(c)?)
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
        let r = u64::from(self.meta.rows_per_group);
        let groups = (rows.start / r)..rows.end.div_ceil(r);
        let tasks: Vec<(u64, usize)> = groups
            .clone()
            .flat_map(|g| columns.iter().map(move |&c| (g, c)))
            .collect();
        let window = |g: u64| {
            let first = g * r;
            (rows.start.max(first) - first) as usize..(rows.end.min(first + r) - first) as usize
        };
        let pages: Vec<Result<ArrayData>> = with_threads(threads, || {
            tasks
                .par_iter()
                .map(|&(g, c)| self.read_page(c, g, window(g)))
                .collect()
        })?;
        let mut pages = pages.into_iter();
        let mut batches = Vec::with_capacity((groups.end - groups.start) as usize);
        for g in groups {
            let first = g * r;
            let lo = rows.start.max(first) - first;
            let hi = rows.end.min(first + r) - first;
            let mut arrays = Vec::with_capacity(columns.len());
            for _ in columns {
                arrays.push(make_array(pages.next().expect("one page per task")?));
            }
            let opts = RecordBatchOptions::new().with_row_count(Some((hi - lo) as usize));
            let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                .map_err(|e| Error::corrupt("table page", 0, e.to_string()))?;
            batches.push(batch);
        }
        Ok((schema, batches))
    }

    fn group_rows(&self, g: u64) -> usize {
        let r = u64::from(self.meta.rows_per_group);
        (self.meta.num_rows.min((g + 1) * r) - g * r) as usize
    }

    /// Reads and decodes page `g` of column `c`.
    /// Reads page `g` of column `c` and decodes its rows `rows` (positions within the group).
    fn read_page(&self, c: usize, g: u64, rows: Range<usize>) -> Result<ArrayData> {
        let page = self.meta.pages[c][g as usize];
        let raw = self.read_raw(c as u32, page.start, page.end)?;
        let field = self.parsed.schema.field(c);
        let n = self.group_rows(g);
        let context = |e: Error| match e {
            Error::Corrupt { what, detail, .. } => Error::Corrupt {
                what,
                offset: 0,
                detail: format!(
                    "column {:?}, rows {}..: {detail}",
                    field.name(),
                    g * u64::from(self.meta.rows_per_group)
                ),
            },
            e => e,
        };
        match field.data_type() {
            DataType::Dictionary(key, _) => {
                let keys = decode_page_rows(key, n, &raw, rows).map_err(context)?;
                let values = self.dictionary(c)?;
                let keys_nulls = keys.nulls().map(|b| b.inner().sliced());
                ArrayDataBuilder::new(field.data_type().clone())
                    .len(keys.len())
                    .null_bit_buffer(keys_nulls)
                    .add_buffer(keys.buffers()[0].clone())
                    .add_child_data(values)
                    .build()
                    .map_err(|e| context(Error::corrupt("table page", 0, format!("invalid dictionary keys: {e}"))))
            }
            dt => decode_page_rows(dt, n, &raw, rows).map_err(context),
        }
    }

    /// The file's stream table and block index.
    pub(crate) fn stream_index(&self) -> (&[kompakt::stream::StreamInfo], &[BlockEntry]) {
        (self.index.streams(), self.index.blocks())
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

    /// The dictionary of dictionary column `c` (read once, then cached).
    pub(crate) fn dictionary(&self, c: usize) -> Result<ArrayData> {
        if let Some(d) = self.dictionaries.lock().expect("dictionary cache").get(&c) {
            return Ok(d.clone());
        }
        let layout = self.parsed.layouts[c];
        let stream = layout.dictionary_stream.expect("checked when the schema was parsed");
        let len = self.index.stream_len(stream)?;
        if layout.dictionary_offset > len {
            return Err(Error::corrupt("table dictionary", 0, "starts past its stream"));
        }
        let raw = self.read_raw(stream, layout.dictionary_offset, len)?;
        let DataType::Dictionary(_, value) = self.parsed.schema.field(c).data_type() else {
            unreachable!("a dictionary stream belongs to a dictionary column")
        };
        let bad = || Error::corrupt("table dictionary", 0, "shorter than its 8-byte count");
        let count = u64::from_le_bytes(raw.get(..8).ok_or_else(bad)?.try_into().expect("8 bytes"));
        // Every value takes at least one bit, so a count beyond the bytes present is a lie.
        if count > 8 * raw.len() as u64 + 8 && **value != DataType::Null {
            return Err(Error::corrupt("table dictionary", 0, format!("claims {count} values")));
        }
        let count = usize::try_from(count).map_err(|_| bad())?;
        let values = decode_page(value, count, &raw[8..])?;
        self.dictionaries
            .lock()
            .expect("dictionary cache")
            .insert(c, values.clone());
        Ok(values)
    }

    /// Raw (decoded) bytes `start..end` of a stream, read with positional reads.
    fn read_raw(&self, stream: u32, start: u64, end: u64) -> Result<Vec<u8>> {
        if start == end {
            return Ok(Vec::new());
        }
        let len = usize::try_from(end - start).map_err(|_| Error::OutOfRange {
            detail: "a page larger than memory".into(),
        })?;
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| Error::OutOfRange {
            detail: format!("a page of {len} bytes does not fit in memory"),
        })?;
        out.resize(len, 0);
        let blocks: Vec<BlockEntry> = self.index.covering_blocks(stream, start, end)?;
        let mut bytes = Vec::new();
        for b in blocks {
            let lo = start.max(b.raw_offset);
            let hi = end.min(b.raw_offset + u64::from(b.header.raw_len));
            bytes.resize(
                kompakt::stream::format::BLOCK_HEADER_LEN + b.header.stored_len as usize,
                0,
            );
            read_exact_at(&self.file, &mut bytes, b.file_offset)?;
            let dst = &mut out[(lo - start) as usize..(hi - start) as usize];
            DECODER.with(|d| {
                d.borrow_mut()
                    .decode_entry(&b, &bytes, self.verify, (lo - b.raw_offset) as usize, dst)
            })?;
        }
        Ok(out)
    }

    /// Number of row groups.
    pub fn num_groups(&self) -> u64 {
        group_count(self.meta.num_rows, self.meta.rows_per_group)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::corrupt(
            "block",
            offset,
            "the file ends inside the block (was it truncated or changed while open?)",
        ),
        _ => e.into(),
    })
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(Error::corrupt("block", offset, "the file ends inside the block")),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}
