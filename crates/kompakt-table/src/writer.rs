//! Writing table files: record batches in, pages out, every page of a round of row groups
//! encoded and compressed in parallel.

use crate::dict::DictState;
use crate::meta::{PageEntry, TableMeta, MAX_ROWS_PER_GROUP};
use crate::page::{
    encode_coded_values, encode_column_page, encode_only_page, encode_symbol_page, SymbolTable, Verdicts,
};
use crate::schema::{check_supported, to_json, ColumnLayout};
use crate::shared_values::{Coded, Draft, SharedValues};
use crate::sort::{SortCheck, SortKey};
use crate::stats::{encode_section, page_stats, PageStats, StatisticsLocation};
use crate::threads::overlap;
use arrow_array::RecordBatch;
use arrow_data::ArrayData;
use arrow_schema::{DataType, SchemaRef};
use kompakt::stream::{BlockEncoder, BlockSettings, Payload, StreamId, StreamOptions};
use kompakt::{CodecSpec, Error, FilterSpec, Result, WriteOptions, Writer};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Rows per row group when the caller does not choose: small enough that a 1000-row read
/// decodes little, large enough that each page compresses well (not measured against other
/// sizes yet). With it, a table of up to twice as many rows is one row group
/// ([`TableWriter::finish`]).
pub const DEFAULT_ROWS_PER_GROUP: u32 = 16 * 1024;
/// Most bytes of data (as Arrow holds them) of a table written as one row group of up to twice
/// the default rows (see [`TableWriter::finish`]): one core decodes this much in a few
/// milliseconds; larger tables keep two groups, which read on two cores (crates.io's index
/// records, 17.6 MB in 17,567 rows: 8.4 ms in one group, 5.2 ms in two, 1.2 % larger).
const ONE_GROUP_MAX_BYTES: usize = 8 << 20;

/// Row groups encoded per parallel round: enough pages to keep every core busy, few enough
/// to bound memory (about twice this many groups of compressed pages are held at once: one
/// round being written while the next is encoded).
const GROUPS_PER_ROUND: usize = 16;

/// Pages larger than this are cut into several blocks (a block holds at most 64 MiB), which a
/// reader decodes in parallel (long text: a page of 16,384 changelog entries is 5.4 MB). Each
/// block starts without history: Debian's changelogs took 0.866x Parquet-zstd's bytes in one
/// block a page, 0.888x in 2 MiB blocks, 0.904x in 1 MiB ones, and read in 0.79x Parquet's
/// time, 0.57-0.66x and 0.56-0.82x.
const PAGE_BLOCK: usize = 2 << 20;

/// Codec of plain string and binary pages by default. Their bytes reach the codec as they are
/// (no page encoding shrinks them first), so on reads they are where the codec's time goes:
/// zstd decoded URLs at 1.1-1.3 GB/s on the project's machine, LZ4 at 2.0 GB/s (1.5-1.8x
/// faster), and zstd without entropy-coded literals (1.5-1.8 GB/s) still made a
/// 10-million-row string table slower to read than Feather-LZ4. The price: that table's file
/// is 1.68x larger than with zstd level 2. Numbers, dictionary codes and short dictionaries
/// gain far more from zstd and cost it little, since their pages are small after encoding.
/// A plain string page takes the column's zstd instead where that stores it in under
/// 0.8x LZ4's bytes (text: source lines, URLs, logs).
pub const DEFAULT_STRING_CODEC: CodecSpec = CodecSpec::Fixed(kompakt::Codec::Lz4 { acceleration: 1 });

/// The stream options of every column, and the block settings of plain string pages.
fn stream_options(opts: &TableOptions) -> Result<(StreamOptions, BlockSettings)> {
    let column = |codec| {
        StreamOptions::default()
            .codec(codec)
            .filter(FilterSpec::None)
            .typesize(1)
    };
    let stream_opts = column(opts.codec);
    stream_opts.validate()?;
    let strings = column(opts.string_codec.unwrap_or(opts.codec));
    strings.validate()?;
    Ok((stream_opts, strings.block_settings()))
}

/// How a table is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableOptions {
    /// Codec of every page (after the page's own encoding) but those [`string_codec`] takes.
    /// Default: zstd level 2 (level 1 stores pages that gain under 20 % raw, which leaves
    /// narrow integers uncompressed).
    ///
    /// [`string_codec`]: Self::string_codec
    pub codec: CodecSpec,
    /// Codec of the pages of top-level string and binary columns that are not
    /// dictionary-encoded; `None`: the same as [`codec`](Self::codec). Default: LZ4
    /// ([`DEFAULT_STRING_CODEC`]). Strings inside lists and structs take `codec`.
    pub string_codec: Option<CodecSpec>,
    /// Whether plain string and binary pages whose codec is LZ4 (or none) may be coded with a
    /// symbol table instead, where a trial on the page says that stores them in at most 0.9x
    /// LZ4's bytes at 2 or more bytes a code. Default: no. On the benchmark's URLs it gives
    /// 0.89x the file, but reads take 1.3x as long and writes 1.6x (docs/DESIGN.md): a point
    /// between LZ4 and zstd, not a better LZ4. [`with_codec`](Self::with_codec) turns it off.
    pub symbol_tables: bool,
    /// Rows per row group: the unit of random access (default [`DEFAULT_ROWS_PER_GROUP`],
    /// with which a table of up to twice as many rows is one group).
    pub rows_per_group: u32,
    /// Encoding threads; 0 = all cores. The bytes written do not depend on it.
    pub threads: usize,
    /// User key-value metadata stored with the schema.
    pub metadata: HashMap<String, String>,
    /// Columns the rows are sorted by, most significant first: recorded in the file, and every
    /// row written is checked to follow this order (an append keeps the table's keys).
    pub sorted_by: Vec<SortKey>,
    /// Whether to write row-group statistics (null counts, bounds, NaN counts) that let
    /// filtered reads skip row groups. Default: yes. An append keeps a table's statistics
    /// current if it has them and adds none if it has not.
    pub statistics: bool,
    /// Whether [`write_table_file`] fsyncs the file it writes (the rename into place is
    /// atomic either way). Default: the process's ([`kompakt_fs::Durability::process_default`]).
    pub sync: kompakt_fs::Durability,
}

impl TableOptions {
    /// These options with `codec` for every page, strings included: what naming a codec does
    /// in the Python package.
    pub fn with_codec(mut self, codec: CodecSpec) -> Self {
        self.codec = codec;
        self.string_codec = None;
        self.symbol_tables = false;
        self
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            codec: CodecSpec::Fixed(kompakt::Codec::Zstd { level: 2 }),
            string_codec: Some(DEFAULT_STRING_CODEC),
            symbol_tables: false,
            rows_per_group: DEFAULT_ROWS_PER_GROUP,
            threads: 0,
            metadata: HashMap::new(),
            sorted_by: Vec::new(),
            statistics: true,
            sync: kompakt_fs::Durability::process_default(),
        }
    }
}

struct OwnedBlock {
    header: [u8; kompakt::stream::format::BLOCK_HEADER_LEN],
    fields: kompakt::stream::BlockHeader,
    bytes: Vec<u8>,
}

struct Pending {
    columns: Vec<ArrayData>,
    taken: usize,
    rows: usize,
}

struct EncodedPage {
    blocks: Vec<OwnedBlock>,
    raw_len: u64,
    summary: u8,
    /// Table layout its encodings need.
    layout: u16,
    /// The page's statistics, when the table keeps them.
    stats: Option<PageStats>,
}

thread_local! {
    static ENCODER: RefCell<BlockEncoder> = RefCell::new(BlockEncoder::default());
}

/// How much smaller than LZ4's a plain string page's zstd blocks must be for zstd to store it:
/// zstd decodes text at 1.1-1.3 GB/s on the project's machine, LZ4 at about 2.0 (see
/// [`DEFAULT_STRING_CODEC`]), so a page pays up to 1.8x the decoding time for at least a fifth
/// fewer bytes. Source code lines and URLs of a 10,000-word vocabulary take zstd (0.59x LZ4's
/// bytes for the URLs), so do random letters (LZ4 finds nothing, zstd's entropy coder a third);
/// random printable characters keep LZ4, which stores them as they are (zstd saves under a
/// fifth).
const ZSTD_STRINGS_BELOW: f64 = 0.8;

/// A plain string page compressed with the string codec (LZ4) or the column's (zstd),
/// whichever [`ZSTD_STRINGS_BELOW`] chooses, and whether that is zstd; `None` when the codecs
/// are not those two.
///
/// The round's first page of a column weighs the two and records the verdict with the page's
/// order-0 entropy ([`Verdicts`]); the round's other pages that look the same take it. zstd
/// is measured on the whole page (an 8 KiB sample, as this used to weigh, saw too little of
/// it: URLs whose words repeat tens of KiB apart came out 0.85x LZ4's there, 0.59x whole), and
/// its blocks are kept when it wins, as it does on most text. So is LZ4 on a page of up to
/// [`LZ4_WHOLE_UP_TO`]; a longer one's LZ4 bytes are estimated ([`lz4_estimate`]).
fn compress_string_page(
    stream: u32,
    strings: &BlockSettings,
    column: &BlockSettings,
    page: &[u8],
    verdicts: &Verdicts,
) -> Option<Result<(bool, Vec<OwnedBlock>)>> {
    use crate::page::{Question, Site};
    use kompakt::codec::{entropy_saving_bound, SAMPLES};
    use kompakt::Codec;
    let (CodecSpec::Fixed(lz4 @ Codec::Lz4 { .. }), CodecSpec::Fixed(Codec::Zstd { .. })) =
        (strings.codec, column.codec)
    else {
        return None;
    };
    let entropy = 8.0 * (1.0 - entropy_saving_bound(page, SAMPLES));
    let question = Question::new(Site::StringCodec, 0, 0, entropy);
    // What the trial compressed, kept for the page, or the error it met.
    let (mut zstd_blocks, mut lz4_blocks, mut failed) = (None, None, None);
    let zstd = verdicts.decide(question, || {
        let lz4_bytes = if page.len() <= LZ4_WHOLE_UP_TO {
            match compress_page(stream, strings, page) {
                Ok(blocks) => stored_len(lz4_blocks.insert(blocks)) as f64,
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
            }
        } else {
            lz4_estimate(lz4, page)
        };
        match compress_page(stream, column, page) {
            Ok(blocks) => (stored_len(zstd_blocks.insert(blocks)) as f64) < ZSTD_STRINGS_BELOW * lz4_bytes,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    });
    let blocks = match (failed, zstd_blocks, lz4_blocks) {
        (Some(e), ..) => Err(e),
        (_, Some(blocks), _) if zstd => Ok(blocks),
        (_, _, Some(blocks)) if !zstd => Ok(blocks),
        _ => compress_page(stream, if zstd { column } else { strings }, page),
    };
    Some(blocks.map(|b| (zstd, b)))
}

/// Plain string pages up to this size are compressed whole with LZ4 to weigh it (and keep its
/// blocks when it wins); longer ones estimate it ([`lz4_estimate`]).
const LZ4_WHOLE_UP_TO: usize = 256 << 10;

/// Bytes LZ4 is expected to store a long plain string page in, as [`compress_page`] would:
/// each block's header, and its payload compressed or raw as the block encoder decides (raw
/// when its 8 KiB probe says LZ4 saves too little, or when the compressed block saves under
/// 1/64; a last block of 64 KiB or less is not probed and must save a fifth). The compressed
/// size is from spans of 64 KiB, LZ4's window, so that each finds what the whole page would
/// nearby: two to eight of them, an eighth of a page of 1-4 MiB. Spans start without
/// history, so the estimate errs high (by 15 % on short words that repeat within a few
/// hundred bytes), which tilts only pages near [`ZSTD_STRINGS_BELOW`] towards zstd. Source
/// lines differ enough from page to page that nearly every page was weighed anew, and
/// compressing each whole with LZ4 only to drop it was a fifth of writing them.
fn lz4_estimate(lz4: kompakt::Codec, page: &[u8]) -> f64 {
    use kompakt::stream::{worthwhile_limit, SMALL_BLOCK};
    const SPAN: usize = 64 << 10;
    let fraction = crate::page::span_fraction(lz4, page, SPAN, (page.len() / (8 * SPAN)).clamp(2, 8)).unwrap_or(1.0);
    let bar = kompakt::codec::SavingBar::for_codec(lz4);
    let payload: f64 = page
        .chunks(PAGE_BLOCK)
        .map(|block| {
            let raw = block.len() as f64;
            let limit = if block.len() <= SMALL_BLOCK {
                raw * (1.0 - bar.repeats)
            } else if crate::page::looks_incompressible(lz4, block) {
                return raw;
            } else {
                worthwhile_limit(block.len()) as f64
            };
            let compressed = fraction * raw;
            if compressed <= limit {
                compressed
            } else {
                raw
            }
        })
        .sum();
    let headers = page.len().div_ceil(PAGE_BLOCK) * kompakt::stream::format::BLOCK_HEADER_LEN;
    payload + headers as f64
}

/// zstd level of text pages when the table's codecs are the defaults (top-level string pages
/// that chose zstd, and columns of lists or structs that hold strings): level 3 stores the
/// corpus's text and nested tables 5-9 % smaller than level 2 and decodes as fast; numbers and
/// codes keep level 2, where the extra level buys little.
const TEXT_ZSTD_LEVEL: i32 = 3;

/// The codec pages weigh their encodings against (`auto`: zstd level 1 stands in).
fn trial_codec(settings: &BlockSettings) -> Option<kompakt::Codec> {
    match settings.codec {
        CodecSpec::Fixed(c) => Some(c),
        CodecSpec::Auto => Some(kompakt::Codec::Zstd { level: 1 }),
    }
}

/// The settings of text pages: the column's, at [`TEXT_ZSTD_LEVEL`] when the table has a
/// string codec of its own (its defaults) and the column codec is a lower zstd level; a codec
/// the caller named for every page stays what every page gets.
fn text_settings(column: &BlockSettings, string_codec: bool) -> BlockSettings {
    let mut text = column.clone();
    if let CodecSpec::Fixed(kompakt::Codec::Zstd { level }) = column.codec {
        if string_codec && level < TEXT_ZSTD_LEVEL {
            text.codec = CodecSpec::Fixed(kompakt::Codec::Zstd { level: TEXT_ZSTD_LEVEL });
        }
    }
    text
}

/// Whether a column of `dt` is nested and holds strings or binary values somewhere inside.
fn nested_text(dt: &DataType) -> bool {
    fn holds(dt: &DataType) -> bool {
        match dt {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
                holds(f.data_type())
            }
            DataType::Struct(fields) => fields.iter().any(|f| holds(f.data_type())),
            other => crate::schema::is_byte_array(other),
        }
    }
    matches!(
        dt,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
            | DataType::Struct(_)
    ) && holds(dt)
}

/// Bytes a page's blocks take in the file, headers included.
fn stored_len(blocks: &[OwnedBlock]) -> usize {
    blocks.iter().map(|b| b.header.len() + b.bytes.len()).sum()
}

/// The string codec when it is one a symbol table may replace (LZ4, or none): one that leaves
/// text large for the sake of read speed, where symbols read as fast and store text smaller.
/// Entropy coders (zstd, gzip) store it smaller than symbols do.
fn fast_string_codec(strings: &BlockSettings) -> Option<kompakt::Codec> {
    use kompakt::Codec;
    match strings.codec {
        CodecSpec::Fixed(c @ (Codec::Lz4 { .. } | Codec::Lz4Hc { .. } | Codec::None)) => Some(c),
        _ => None,
    }
}

/// Compresses a page into blocks of `stream` (none for an empty page). A page of several
/// blocks, long text, compresses them on the pool's threads when it runs on one (tables of
/// long text have few pages to spread).
fn compress_page(stream: u32, settings: &BlockSettings, page: &[u8]) -> Result<Vec<OwnedBlock>> {
    use rayon::prelude::*;
    if page.len() > PAGE_BLOCK && rayon::current_thread_index().is_some() {
        return page
            .par_chunks(PAGE_BLOCK)
            .map(|chunk| compress_block(stream, settings, chunk))
            .collect();
    }
    page.chunks(PAGE_BLOCK)
        .map(|chunk| compress_block(stream, settings, chunk))
        .collect()
}

/// One block of a page, with this thread's encoder.
fn compress_block(stream: u32, settings: &BlockSettings, chunk: &[u8]) -> Result<OwnedBlock> {
    ENCODER.with(|enc| {
        let b = enc.borrow_mut().encode(stream, settings, chunk)?;
        let bytes = match b.payload {
            Payload::Owned(mut v, n) => {
                v.truncate(n);
                v
            }
            Payload::Borrowed(s) => s.to_vec(),
        };
        Ok(OwnedBlock {
            header: b.header,
            fields: b.fields,
            bytes,
        })
    })
}

impl<W: Write> std::fmt::Debug for TableWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("schema", &self.schema)
            .field("rows", &self.rows_written())
            .finish()
    }
}

/// Writes a table to any `Write`, one record batch at a time; call [`finish`](Self::finish).
///
/// Memory stays bounded by the batches not yet written plus about twice [`GROUPS_PER_ROUND`]
/// row groups of pages, whatever the table's size.
pub struct TableWriter<W: Write> {
    out: Writer<W>,
    schema: SchemaRef,
    opts: TableOptions,
    settings: BlockSettings,
    /// Settings of plain string and binary pages ([`TableOptions::string_codec`]).
    string_settings: BlockSettings,
    /// Columns of the batches not yet in a page (dictionary columns as their keys), with the
    /// first row not yet taken and the row count.
    pending: std::collections::VecDeque<Pending>,
    pending_rows: usize,
    /// Pages of the last round encoded, written while the next round is encoded (so that the
    /// cores do not wait for the output), or by `finish`.
    encoded: Vec<EncodedPage>,
    num_rows: u64,
    pages: Vec<Vec<PageEntry>>,
    stream_pos: Vec<u64>,
    dicts: Vec<Option<DictState>>,
    /// Dictionaries shared by the pages of a column (strings, binary, 4- and 8-byte values).
    shared: Vec<Option<SharedValues>>,
    layouts: Vec<ColumnLayout>,
    /// Table layout of the footer: the newest any page needs (1 unless a page needs a later one).
    layout: u16,
    /// Appending to an existing table: unchanged dictionaries are not written again.
    resumed: bool,
    /// The table is one row group, encoded by `finish`: each column's page is its only one.
    only_group: bool,
    sort: SortCheck,
    /// Per column, the statistics of each row group written (`None`: the table keeps none).
    stats: Option<Vec<Vec<PageStats>>>,
    /// The stream of the statistics section, once the table has one.
    stats_stream: Option<u32>,
}

/// A table file's state at the point an append continues it: everything the writer needs,
/// taken from the old file by the append (the writer never reads tables itself).
pub(crate) struct Resume {
    pub schema: SchemaRef,
    pub rows_per_group: u32,
    pub user_metadata: HashMap<String, String>,
    pub sorted_by: Vec<SortKey>,
    /// Rows in the row groups that stay.
    pub kept_rows: u64,
    /// The sort-key columns of the last row that stays, as one-row arrays (sorted tables).
    pub last_sort_row: Option<Vec<arrow_array::ArrayRef>>,
    pub streams: Vec<kompakt::stream::StreamInfo>,
    pub blocks: Vec<kompakt::stream::BlockEntry>,
    pub layouts: Vec<ColumnLayout>,
    pub layout: u16,
    /// The values so far of each dictionary column, and of each column whose pages
    /// share a dictionary; `None` for other columns.
    pub dictionaries: Vec<Option<ArrayData>>,
    /// Per column, the pages of the row groups that stay.
    pub pages: Vec<Vec<PageEntry>>,
    /// The table's statistics stream and, per column, the statistics of the row groups that
    /// stay; `None` when the table has no statistics.
    pub statistics: Option<(u32, Vec<Vec<PageStats>>)>,
}

impl<W: Write> TableWriter<W> {
    /// Starts a table of `schema` (checked against the supported types) on `out`.
    pub fn new(out: W, schema: SchemaRef, opts: TableOptions) -> Result<Self> {
        if opts.rows_per_group == 0 || opts.rows_per_group > MAX_ROWS_PER_GROUP {
            return Err(Error::invalid(
                "rows per group",
                opts.rows_per_group.to_string(),
                format!("1..={MAX_ROWS_PER_GROUP}"),
            ));
        }
        for f in schema.fields() {
            check_supported(f)?;
        }
        let sort = SortCheck::new(&schema, &opts.sorted_by)?;
        let (stream_opts, string_settings) = stream_options(&opts)?;
        let mut out = Writer::new(out, WriteOptions::default().threads(1))?;
        let columns = schema.fields().len();
        for _ in 0..columns {
            out.add_stream(Some(stream_opts))?;
        }
        let mut layouts = vec![ColumnLayout::default(); columns];
        let mut dicts = Vec::with_capacity(columns);
        for (i, f) in schema.fields().iter().enumerate() {
            if let DataType::Dictionary(key, value) = f.data_type() {
                let s = out.add_stream(Some(stream_opts))?;
                layouts[i].dictionary_stream = Some(s.0);
                dicts.push(Some(DictState::new(key, value)));
            } else {
                dicts.push(None);
            }
        }
        let shared = schema.fields().iter().map(|f| shared_values(f.data_type())).collect();
        let opts_statistics = opts.statistics;
        Ok(TableWriter {
            out,
            shared,
            settings: stream_opts.block_settings(),
            string_settings,
            schema,
            opts,
            pending: Default::default(),
            pending_rows: 0,
            encoded: Vec::new(),
            num_rows: 0,
            pages: vec![Vec::new(); columns],
            stream_pos: vec![0; columns],
            dicts,
            layouts,
            layout: 1,
            resumed: false,
            only_group: false,
            sort,
            stats: opts_statistics.then(|| vec![Vec::new(); columns]),
            stats_stream: None,
        })
    }

    /// Continues a table on `out`, the same file cut just after its last block, from what
    /// `resume` says of it. Its `pages` are the row groups that stay; rows after them must be
    /// written again (a partial last group is rewritten whole, its old pages left unreferenced).
    pub(crate) fn resume(out: W, resume: Resume, mut opts: TableOptions) -> Result<Self> {
        opts.rows_per_group = resume.rows_per_group;
        let mut metadata = resume.user_metadata;
        metadata.extend(std::mem::take(&mut opts.metadata));
        opts.metadata = metadata;
        if !opts.sorted_by.is_empty() && opts.sorted_by != resume.sorted_by {
            return Err(Error::Usage(
                "an append keeps the table's sort keys; leave them out of the append's options".into(),
            ));
        }
        opts.sorted_by = resume.sorted_by;
        let mut sort = SortCheck::new(&resume.schema, &opts.sorted_by)?;
        if let Some(row) = resume.last_sort_row {
            // The rows written next (the partial group again, then the new ones) must not sort
            // before the last row that stays.
            sort.set_last(row);
        }
        let (stream_opts, string_settings) = stream_options(&opts)?;
        let keep_stats = opts.statistics;
        let out = Writer::resume(out, WriteOptions::default().threads(1), &resume.streams, &resume.blocks)?;
        let schema = resume.schema;
        let mut dicts = Vec::with_capacity(resume.layouts.len());
        let mut shared = Vec::with_capacity(resume.layouts.len());
        for (f, values) in schema.fields().iter().zip(resume.dictionaries) {
            shared.push(match &values {
                Some(values) if shared_values(f.data_type()).is_some() => Some(SharedValues::with_values(values)?),
                _ => shared_values(f.data_type()),
            });
            dicts.push(match (f.data_type(), values) {
                (DataType::Dictionary(key, value), Some(values)) => {
                    Some(DictState::with_values(key.as_ref(), value.as_ref(), values))
                }
                (DataType::Dictionary(..), None) => {
                    return Err(Error::Internal(format!("no dictionary given for column {}", f.name())))
                }
                _ => None,
            });
        }
        Ok(TableWriter {
            shared,
            settings: stream_opts.block_settings(),
            string_settings,
            stream_pos: resume
                .streams
                .iter()
                .take(schema.fields().len())
                .map(|s| s.raw_len)
                .collect(),
            num_rows: resume.kept_rows,
            out,
            schema,
            opts,
            pending: Default::default(),
            pending_rows: 0,
            encoded: Vec::new(),
            pages: resume.pages,
            dicts,
            layouts: resume.layouts,
            // The kept pages may need it (nothing tells which: keep it).
            layout: resume.layout,
            resumed: true,
            only_group: false,
            sort,
            // Statistics turned off drop the old ones (left stale, they would skip new rows).
            stats_stream: resume.statistics.as_ref().map(|(s, _)| *s),
            stats: resume.statistics.filter(|_| keep_stats).map(|(_, stats)| stats),
        })
    }

    /// The table's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows accepted so far.
    pub fn rows_written(&self) -> u64 {
        self.num_rows + self.pending_rows as u64
    }

    /// Bytes written to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.out.bytes_written()
    }

    /// Appends the rows of `batch`, whose columns must have the table's types.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let fields = self.schema.fields();
        if batch.num_columns() != fields.len() {
            return Err(Error::Usage(format!(
                "a batch of {} columns for a table of {}",
                batch.num_columns(),
                fields.len()
            )));
        }
        for (f, col) in fields.iter().zip(batch.columns()) {
            if col.data_type() != f.data_type() {
                return Err(Error::Usage(format!(
                    "column {:?} is {} in this batch but {} in the table",
                    f.name(),
                    col.data_type(),
                    f.data_type()
                )));
            }
        }
        // Before the dictionaries take in this batch's values: a refused batch leaves no trace.
        self.sort.check(batch, self.rows_written())?;
        let mut columns: Vec<ArrayData> = batch.columns().iter().map(|c| c.to_data()).collect();
        for (col, d) in columns.iter_mut().zip(&mut self.dicts) {
            if let Some(d) = d {
                *col = d.unify(col)?;
            }
        }
        if batch.num_rows() == 0 {
            // Its dictionaries still count: an empty table keeps its categories.
            return Ok(());
        }
        self.pending_rows += batch.num_rows();
        self.pending.push_back(Pending {
            columns,
            taken: 0,
            rows: batch.num_rows(),
        });
        let group = self.opts.rows_per_group as usize;
        while self.pending_rows >= group * GROUPS_PER_ROUND {
            self.flush_groups(GROUPS_PER_ROUND)?;
        }
        Ok(())
    }

    /// Encodes and writes the first `groups` row groups of the pending rows (the last may be
    /// partial).
    fn flush_groups(&mut self, groups: usize) -> Result<()> {
        let group = self.opts.rows_per_group as usize;
        let columns = self.schema.fields().len();
        // Cut the pending batches into groups of pieces (slices: no copy).
        let mut work: Vec<Vec<Vec<ArrayData>>> = Vec::with_capacity(groups);
        for _ in 0..groups {
            let mut want = group.min(self.pending_rows);
            if want == 0 {
                break;
            }
            let mut pieces = vec![Vec::new(); columns];
            while want > 0 {
                let first = self.pending.front_mut().expect("pending rows are in pending batches");
                let take = want.min(first.rows - first.taken);
                // Slices of the original arrays: slicing a slice again would recount its nulls
                // over every remaining row, once per group.
                for (c, col) in first.columns.iter().enumerate() {
                    pieces[c].push(crate::page::slice_data(col, first.taken, take));
                }
                first.taken += take;
                if first.taken == first.rows {
                    self.pending.pop_front();
                }
                want -= take;
                self.pending_rows -= take;
                self.num_rows += take as u64;
            }
            work.push(pieces);
        }
        let schema = self.schema.clone();
        let (settings, string_settings) = (self.settings.clone(), self.string_settings.clone());
        let text_settings = text_settings(&settings, self.opts.string_codec.is_some());
        let symbol_codec = fast_string_codec(&string_settings).filter(|_| self.opts.symbol_tables);
        let trial_codec = trial_codec(&settings);
        let raw_settings = StreamOptions::default()
            .codec(CodecSpec::Fixed(kompakt::Codec::None))
            .block_settings();
        let mut shared = std::mem::take(&mut self.shared);
        let with_stats = self.stats.is_some();
        let only_group = self.only_group;
        let encode = || -> Result<Vec<EncodedPage>> {
            // Codes into the shared dictionaries first: every page drafted in parallel against
            // the dictionary as the round found it, then committed in order (a page may use
            // values the pages before it added), each cheap: coded[group][column].
            let columns = shared.len();
            let drafts: Vec<Draft<'_>> = (0..work.len() * columns)
                .into_par_iter()
                .map(|i| match &shared[i % columns] {
                    Some(s) => s.draft(&work[i / columns][i % columns], trial_codec, i < columns),
                    None => Draft::Skipped,
                })
                .collect();
            let mut coded: Vec<Vec<Option<Coded>>> = Vec::with_capacity(work.len());
            let mut drafts = drafts.into_iter();
            for _ in 0..work.len() {
                let group = shared.iter_mut().zip(drafts.by_ref());
                coded.push(group.map(|(s, d)| s.as_mut().and_then(|s| s.commit(d))).collect());
            }
            // A symbol table per string column and round, trained on its first group's rows
            // when a page first asks (so the bytes do not depend on which page that is).
            let symbol_tables: Vec<std::sync::OnceLock<SymbolTable>> =
                (0..columns).map(|_| std::sync::OnceLock::new()).collect();
            let symbols_for = |c: usize| {
                symbol_tables[c].get_or_init(|| SymbolTable::train_on(schema.field(c).data_type(), &work[0][c]))
            };
            // One page: its statistics, its encoding, its codec, compressed.
            let encode_one = |c: usize, pieces: &Vec<ArrayData>, codes: Option<Coded>, verdicts: &Verdicts| {
                let stats = with_stats.then(|| page_stats(schema.field(c).data_type(), pieces));
                let mut page = Vec::new();
                // `body`: how the values are encoded; for codes, how the codes are.
                let (mut encoded, body, strings) = match codes {
                    Some(codes) => {
                        let codes = codes.into_codes();
                        let dt = schema.field(c).data_type();
                        let (e, codes) =
                            encode_coded_values(dt, pieces, &codes, &mut page, trial_codec, Some(verdicts))?;
                        (e, codes, false)
                    }
                    None => {
                        let dt = schema.field(c).data_type();
                        let e = match only_group {
                            true => encode_only_page(dt, pieces, &mut page, trial_codec, Some(verdicts))?,
                            false => encode_column_page(dt, pieces, &mut page, trial_codec, Some(verdicts))?,
                        };
                        (e, e.summary & 0x7f, crate::schema::is_byte_array(dt))
                    }
                };
                // Bit-packed codes have had their zero bits removed: what is left is the
                // values' own entropy, which the codec would spend time on for nothing,
                // unless some codes are much more frequent than others (airlines, airports:
                // a byte histogram shows it for the cost of a pass over samples).
                let mut blocks = None;
                let settings = match body {
                    crate::page::encoding::BITPACK => {
                        use kompakt::codec::{entropy_saving_bound, MIN_ENTROPY_SAVING, SAMPLES};
                        if entropy_saving_bound(&page, SAMPLES) >= MIN_ENTROPY_SAVING {
                            &settings
                        } else {
                            &raw_settings
                        }
                    }
                    crate::page::encoding::PLAIN if strings => {
                        let dt = schema.field(c).data_type();
                        // Symbols first where the caller asked for them: they decode as fast
                        // as LZ4, which zstd does not.
                        if let Some(table) = symbol_codec
                            .map(|codec| (codec, symbols_for(c)))
                            .filter(|(codec, table)| table.beats_codec_on(*codec, dt, pieces))
                            .map(|(_, table)| table)
                        {
                            page.clear();
                            encoded = encode_symbol_page(dt, pieces, table, &mut page)?;
                            &raw_settings
                        } else {
                            let chosen =
                                compress_string_page(c as u32, &string_settings, &text_settings, &page, verdicts);
                            let zstd_chosen = matches!(chosen, Some(Ok((true, _))));
                            blocks = chosen.map(|r| r.map(|(_, b)| b));
                            if zstd_chosen {
                                &text_settings
                            } else {
                                &string_settings
                            }
                        }
                    }
                    _ if nested_text(schema.field(c).data_type()) => &text_settings,
                    _ => &settings,
                };
                let blocks = match blocks {
                    Some(blocks) => blocks?,
                    None => compress_page(c as u32, settings, &page)?,
                };
                Ok(EncodedPage {
                    blocks,
                    raw_len: page.len() as u64,
                    summary: encoded.summary,
                    layout: encoded.layout,
                    stats,
                })
            };
            // The round's first group first: its pages' trial verdicts are then shared with
            // the other groups' pages of their column (page::Verdicts), which look alike.
            let verdicts: Vec<Verdicts> = (0..columns).map(|_| Verdicts::learning()).collect();
            let mut coded = coded.into_iter();
            let first_codes = coded.next().unwrap_or_default();
            let mut pages: Vec<EncodedPage> = work
                .first()
                .map(|pieces| {
                    pieces
                        .par_iter()
                        .zip(first_codes.into_par_iter())
                        .enumerate()
                        .map(|(c, (pieces, codes))| encode_one(c, pieces, codes, &verdicts[c]))
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()?
                .unwrap_or_default();
            verdicts.iter().for_each(Verdicts::freeze);
            let rest: Vec<Vec<Option<Coded>>> = coded.collect();
            let later: Vec<EncodedPage> = work
                .get(1..)
                .unwrap_or_default()
                .par_iter()
                .zip(rest.into_par_iter())
                .flat_map_iter(|(pieces, codes)| pieces.iter().zip(codes).enumerate())
                .map(|(c, (pieces, codes))| encode_one(c, pieces, codes, &verdicts[c]))
                .collect::<Result<Vec<_>>>()?;
            pages.extend(later);
            Ok(pages)
        };
        let previous = std::mem::take(&mut self.encoded);
        let (written, encoded) = overlap(self.opts.threads, || self.write_pages(previous), encode)?;
        self.shared = shared;
        written?;
        self.encoded = encoded?;
        Ok(())
    }

    /// Writes the pages of one round (row group by row group, each group's columns in order).
    fn write_pages(&mut self, pages: Vec<EncodedPage>) -> Result<()> {
        let columns = self.schema.fields().len();
        for (i, mut page) in pages.into_iter().enumerate() {
            let c = i % columns;
            self.write_page(c, &page)?;
            if let (Some(stats), Some(s)) = (&mut self.stats, page.stats.take()) {
                stats[c].push(s);
            }
            self.layout = self.layout.max(page.layout);
            let start = self.stream_pos[c];
            self.stream_pos[c] += page.raw_len;
            self.pages[c].push(PageEntry {
                start,
                end: self.stream_pos[c],
                summary: page.summary,
            });
        }
        Ok(())
    }

    fn write_page(&mut self, stream: usize, page: &EncodedPage) -> Result<()> {
        for b in &page.blocks {
            let block = kompakt::stream::EncodedBlock {
                header: b.header,
                fields: b.fields,
                payload: Payload::Borrowed(&b.bytes),
            };
            self.out.write_block(StreamId(stream as u32), &block)?;
        }
        Ok(())
    }

    /// Writes a dictionary at the end of `stream`; returns where it starts. A dictionary is one
    /// entry at the end of its stream; an append that grows it adds a newer, complete one
    /// after the old (whose codes keep their meaning).
    fn write_dictionary(&mut self, stream: u32, values: &ArrayData) -> Result<u64> {
        let mut page = (values.len() as u64).to_le_bytes().to_vec();
        let encoded = crate::page::encode_dictionary_values(values, &mut page)?;
        self.layout = self.layout.max(encoded.layout);
        self.append_to_stream(stream, &page, encoded.layout)
    }

    /// Writes a dictionary a column's pages share at the end of `stream`, as
    /// [`write_dictionary`](Self::write_dictionary) does.
    fn write_shared_dictionary(&mut self, stream: u32, values: &ArrayData) -> Result<u64> {
        let mut page = (values.len() as u64).to_le_bytes().to_vec();
        let encoded = crate::page::encode_shared_dictionary(values, &mut page, trial_codec(&self.settings))?;
        self.layout = self.layout.max(encoded.layout);
        self.append_to_stream(stream, &page, encoded.layout)
    }

    /// Writes `bytes` (a dictionary, a statistics section) at the end of `stream`, compressed
    /// with the column codec; returns where they start in the stream.
    fn append_to_stream(&mut self, stream: u32, bytes: &[u8], layout: u16) -> Result<u64> {
        let offset = self.out.stream_len(StreamId(stream))?;
        let blocks = compress_page(stream, &self.settings, bytes)?;
        let page = EncodedPage {
            blocks,
            raw_len: bytes.len() as u64,
            summary: 0,
            layout,
            stats: None,
        };
        self.write_page(stream as usize, &page)?;
        Ok(offset)
    }

    /// Writes the statistics section at the end of the statistics stream (added the first
    /// time); an append writes a complete new one after the old.
    fn write_statistics(&mut self, stats: &[Vec<PageStats>]) -> Result<StatisticsLocation> {
        let stream = match self.stats_stream {
            Some(s) => s,
            None => {
                let (stream_opts, _) = stream_options(&self.opts)?;
                self.out.add_stream(Some(stream_opts))?.0
            }
        };
        let mut section = Vec::new();
        encode_section(&self.schema, stats, &mut section, self.layout)?;
        let offset = self.append_to_stream(stream, &section, self.layout)?;
        Ok(StatisticsLocation { stream, offset })
    }

    /// Bytes of the rows not encoded yet: their slices' buffers as Arrow counts them (a list's
    /// or struct's children and a dictionary's values whole, even when sliced).
    fn pending_bytes(&self) -> usize {
        let columns = self.pending.iter().flat_map(|p| &p.columns);
        columns
            .map(ArrayData::get_slice_memory_size)
            .map(|r| r.unwrap_or(usize::MAX))
            .fold(0, usize::saturating_add)
    }

    /// Writes the last rows, the dictionaries and the footer; returns the output.
    ///
    /// With the default rows per group, a new table of at most twice that many rows and
    /// [`ONE_GROUP_MAX_BYTES`] of data, none of them encoded yet, becomes one row group: a last
    /// group of a few thousand rows compresses worse alone and pays its pages' fixed costs (on
    /// bench/corpus.py's tables of 16,385 to 32,768 rows, one group stored 0-15 % fewer bytes),
    /// and reading twice the rows of a table that small costs microseconds.
    pub fn finish(mut self) -> Result<W> {
        let default_group = DEFAULT_ROWS_PER_GROUP as usize;
        if self.opts.rows_per_group == DEFAULT_ROWS_PER_GROUP
            && !self.resumed
            && self.num_rows == 0
            && self.encoded.is_empty()
            && (default_group + 1..=2 * default_group).contains(&self.pending_rows)
            && self.pending_bytes() <= ONE_GROUP_MAX_BYTES
        {
            self.opts.rows_per_group = self.pending_rows as u32;
        }
        let group = self.opts.rows_per_group as usize;
        if !self.resumed && self.num_rows == 0 && self.encoded.is_empty() && self.pending_rows <= group {
            self.only_group = true;
            self.shared.iter_mut().flatten().for_each(SharedValues::one_page_only);
        }
        while self.pending_rows > 0 {
            let groups = self.pending_rows.div_ceil(group).min(GROUPS_PER_ROUND);
            self.flush_groups(groups)?;
        }
        let last = std::mem::take(&mut self.encoded);
        self.write_pages(last)?;
        for c in 0..self.dicts.len() {
            let Some(d) = self.dicts[c].take() else { continue };
            if self.resumed && !d.grew() {
                continue;
            }
            let values = d.finish()?;
            let stream = self.layouts[c]
                .dictionary_stream
                .expect("every dictionary column has a stream");
            self.layouts[c].dictionary_offset = self.write_dictionary(stream, &values)?;
        }
        for c in 0..self.shared.len() {
            let Some(s) = self.shared[c].take() else { continue };
            if !s.grew() {
                continue;
            }
            let stream = match self.layouts[c].dictionary_stream {
                Some(s) => s,
                None => {
                    let (stream_opts, _) = stream_options(&self.opts)?;
                    let s = self.out.add_stream(Some(stream_opts))?.0;
                    self.layouts[c].dictionary_stream = Some(s);
                    s
                }
            };
            self.layouts[c].dictionary_offset = self.write_shared_dictionary(stream, &s.values()?)?;
        }
        let statistics = match self.stats.take() {
            Some(stats) => Some(self.write_statistics(&stats)?),
            None => None,
        };
        let meta = TableMeta {
            layout: self.layout,
            num_rows: self.num_rows,
            rows_per_group: self.opts.rows_per_group,
            schema_json: to_json(
                &self.schema,
                &self.layouts,
                &self.opts.metadata,
                &self.opts.sorted_by,
                statistics,
            ),
            pages: self.pages,
        };
        self.out.set_metadata(meta.encode())?;
        self.out.finish()
    }
}

/// A shared dictionary for a column of type `dt`, if its pages may share one: top-level
/// string and binary columns, and columns of 4- and 8-byte values.
fn shared_values(dt: &DataType) -> Option<SharedValues> {
    crate::schema::may_share_dictionary(dt).then(|| SharedValues::new(dt))
}

/// Writes `batches` (all of `schema`) to `path` atomically: a crash or an error leaves any
/// earlier file at `path` as it was. Returns the rows written.
pub fn write_table_file(
    path: impl AsRef<Path>,
    schema: SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: TableOptions,
) -> Result<u64> {
    let mut file = kompakt_fs::AtomicFile::create_with(path, opts.sync)?;
    let mut w = TableWriter::new(&mut file, schema, opts)?;
    for b in batches {
        w.write(&b?)?;
    }
    let rows = w.rows_written();
    w.finish()?;
    file.commit()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use std::sync::Arc;

    fn settings(codec: kompakt::Codec) -> BlockSettings {
        StreamOptions::default().codec(CodecSpec::Fixed(codec)).block_settings()
    }

    #[test]
    fn lz4_estimates_are_near_what_compressing_the_page_stores() {
        let lz4 = kompakt::Codec::Lz4 { acceleration: 1 };
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let words = [
            "return", "self", "value", "import", "for", "in", "if", "None", "def", "x",
        ];
        let text: Vec<u8> = (0..600_000)
            .flat_map(|_| format!("{} ", words[(next() % 10) as usize]).into_bytes())
            .collect();
        let printable: Vec<u8> = (0..700_000).map(|_| b' ' + (next() % 95) as u8).collect();
        // Records of 24 random printable bytes, each twice, 40 KiB apart: LZ4's window finds
        // the second copy, its 8 KiB probe does not (the block encoder stores such blocks
        // raw, and the estimate must say so).
        let record: Vec<Vec<u8>> = (0..1_700)
            .map(|_| (0..24).map(|_| b' ' + (next() % 95) as u8).collect())
            .collect();
        let far: Vec<u8> = (0..40)
            .flat_map(|round| {
                record
                    .iter()
                    .skip(round % 2)
                    .step_by(2)
                    .flatten()
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect();
        // Spans start without history, so the estimate errs high (15 % on these short words,
        // which repeat within a few hundred bytes); raw blocks are exact.
        for (name, page, within) in [
            ("text", &text[..700_000], 0.2),
            ("text of 2 blocks", &text[..], 0.2),
            ("printable noise", &printable[..], 0.0),
            ("repeats 40 KiB apart", &far[..], 0.0),
        ] {
            let stored = stored_len(&compress_page(0, &settings(lz4), page).unwrap()) as f64;
            let estimate = lz4_estimate(lz4, page);
            let error = estimate / stored - 1.0;
            assert!((0.0..=within).contains(&error), "{name}: {estimate} against {stored}");
        }
    }

    #[test]
    fn text_pages_take_zstd_3_only_under_the_default_codecs() {
        use kompakt::Codec::{Lz4, Zstd};
        let level = |s: BlockSettings| s.codec;
        let zstd = |level| CodecSpec::Fixed(Zstd { level });
        assert_eq!(level(text_settings(&settings(Zstd { level: 2 }), true)), zstd(3));
        // A codec named for every page (no string codec of the table's own) stays as named.
        assert_eq!(level(text_settings(&settings(Zstd { level: 2 }), false)), zstd(2));
        assert_eq!(level(text_settings(&settings(Zstd { level: 9 }), true)), zstd(9));
        let lz4 = settings(Lz4 { acceleration: 1 });
        assert_eq!(level(text_settings(&lz4, true)), lz4.codec);
    }

    #[test]
    fn nested_text_is_lists_and_structs_holding_strings() {
        let list = |dt: DataType| DataType::List(Arc::new(Field::new("item", dt, true)));
        let strukt = |fields: Vec<Field>| DataType::Struct(fields.into());
        assert!(nested_text(&list(DataType::Utf8)));
        assert!(nested_text(&list(strukt(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("lines", list(DataType::LargeUtf8), true),
        ]))));
        assert!(!nested_text(&list(DataType::Int64)));
        assert!(
            !nested_text(&DataType::Utf8),
            "top-level strings follow the string rule"
        );
        let dict = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
        assert!(!nested_text(&dict), "dictionary pages are keys");
    }
}
