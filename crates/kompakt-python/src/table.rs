//! Table files for `kompakt.write_table`, `kompakt.read_table` and `kompakt.TableFile`.
//!
//! Arrow data crosses the boundary through the Arrow C stream interface (no copy); the Python
//! layer (`kompakt/_table.py`) turns pandas and polars frames into Arrow and back.

use crate::buffers::WritableBuffer;
use crate::errors::{limit_error, option_error, os_error, to_py, to_py_at, IntoPy};
use crate::options;
use crate::pyfile::{local_path, location, open_remote};
use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{
    make_array, Array, ArrayRef, RecordBatch, RecordBatchIterator, RecordBatchOptions, RecordBatchReader,
};
use arrow_data::ArrayData;
use arrow_pyarrow::PyArrowType;
use arrow_schema::{Schema, SchemaRef};
use kompakt_api::options::TableArgs;
use kompakt_remote::Location;
use kompakt_table::plan::{plan_rows, Filter, Op};
use kompakt_table::{append_table_file, write_table_file, SortKey, StringLayout, TableOptions, TableReader};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

fn io_or(err: kompakt::Error, path: &std::path::Path) -> PyErr {
    match err {
        kompakt::Error::Io(e) => os_error(e, path),
        kompakt::Error::OverLimit(detail) if detail.starts_with(kompakt_table::OVER_LIMIT) => limit_error(format!(
            "{}: this read decodes to more than it may allocate, {detail}; pass a larger max_size= \
                 (to read_table or TableFile), or read fewer rows or columns",
            path.display()
        )),
        e => to_py_at(e, Some(path)),
    }
}

/// The keyword arguments `write_table` and `append_table` share (the table's own default
/// codecs unless one is named), checked by the front door as every front end's are.
fn table_options(args: TableArgs<'_>) -> PyResult<TableOptions> {
    args.build().py_err()
}

/// Writes an Arrow stream (anything with `__arrow_c_stream__`) to `path` as a table file,
/// atomically. Returns the number of rows written.
#[pyfunction]
#[pyo3(signature = (data, path, *, codec=None, level=None, threads=None, rows_per_group=None, metadata=None, sorted_by=None, statistics=true, sync=None))]
#[allow(clippy::too_many_arguments)]
pub fn write_table(
    py: Python<'_>,
    data: PyArrowType<ArrowArrayStreamReader>,
    path: Bound<'_, PyAny>,
    codec: Option<&str>,
    level: Option<i64>,
    threads: Option<i64>,
    rows_per_group: Option<i64>,
    metadata: Option<HashMap<String, String>>,
    sorted_by: Option<Vec<(String, bool, bool)>>,
    statistics: bool,
    sync: Option<&str>,
) -> PyResult<u64> {
    let path = local_path(&path)?;
    let sorted_by = sorted_by
        .unwrap_or_default()
        .into_iter()
        .map(|(column, descending, nulls_first)| SortKey {
            column,
            descending,
            nulls_first,
        })
        .collect();
    let mut opts = table_options(TableArgs {
        codec,
        level,
        threads,
        rows_per_group,
        sorted_by,
        metadata: metadata.unwrap_or_default(),
        sync,
        ..Default::default()
    })?;
    opts.statistics = statistics;
    let reader = data.0;
    let schema = reader.schema();
    let batches = reader.map(|b| b.map_err(|e| kompakt::Error::Usage(format!("reading the input: {e}"))));
    py.detach(|| write_table_file(&path, schema, batches, opts))
        .map_err(|e| io_or(e, &path))
}

/// Appends an Arrow stream to the table file at `path` in place (crash-safe: an interrupted
/// append is undone on the next open). Returns the number of rows appended.
#[pyfunction]
#[pyo3(signature = (data, path, *, codec=None, level=None, threads=None, metadata=None))]
pub fn append_table(
    py: Python<'_>,
    data: PyArrowType<ArrowArrayStreamReader>,
    path: Bound<'_, PyAny>,
    codec: Option<&str>,
    level: Option<i64>,
    threads: Option<i64>,
    metadata: Option<HashMap<String, String>>,
) -> PyResult<u64> {
    let path = local_path(&path)?;
    let opts = table_options(TableArgs {
        codec,
        level,
        threads,
        metadata: metadata.unwrap_or_default(),
        ..Default::default()
    })?;
    let batches = data
        .0
        .map(|b| b.map_err(|e| kompakt::Error::Usage(format!("reading the input: {e}"))));
    py.detach(|| append_table_file(&path, batches, opts))
        .map_err(|e| io_or(e, &path))
}

/// The objects under an `s3://` URL taken as a folder, at any depth, sorted: (URL, size)
/// pairs. `OSError`s name the URL (FileNotFoundError for a missing bucket).
#[pyfunction]
pub fn list_objects(py: Python<'_>, url: &str) -> PyResult<Vec<(String, u64)>> {
    let parsed = match kompakt_api::location::parse(url).py_err()? {
        Location::Remote(u) => u,
        Location::Local(_) => return Err(option_error(format!("{url}: not a URL"))),
    };
    if !parsed.scheme().starts_with("s3") {
        return Err(option_error(format!(
            "{url}: only s3:// URLs can be listed (HTTP servers have no listing); name the files"
        )));
    }
    let found = py
        .detach(|| kompakt_remote::list(&parsed))
        .map_err(|e| os_error(e, std::path::Path::new(url)))?;
    Ok(found.into_iter().map(|o| (o.url, o.size)).collect())
}

/// The table files a location names (a folder, a glob, a file or URL; `s3://` folders and globs
/// listed on the server), sorted: [`kompakt_api::location::table_files`], as every front end
/// lists them.
#[pyfunction]
pub fn table_files(py: Python<'_>, location: &str) -> PyResult<Vec<String>> {
    py.detach(|| kompakt_api::location::table_files(location))
        .map_err(to_py)
}

/// An open table file (the core of `kompakt.TableFile`).
#[pyclass(module = "kompakt._core", frozen)]
pub struct Table {
    inner: TableReader,
    path: PathBuf,
    /// The object behind a URL, for its traffic figures.
    remote: Option<Arc<kompakt_remote::RemoteFile>>,
}

#[pymethods]
impl Table {
    /// Opens the table at a path or URL (`s3://`, `https://`: read by byte ranges).
    #[new]
    fn new(py: Python<'_>, path: Bound<'_, PyAny>) -> PyResult<Self> {
        let (inner, path, remote) = match location(&path)? {
            Location::Local(path) => (
                py.detach(|| TableReader::open_cached(&path))
                    .map_err(|e| io_or(e, &path))?,
                path,
                None,
            ),
            Location::Remote(url) => {
                let file = open_remote(py, &url)?;
                let name = PathBuf::from(url.as_str());
                let inner = py
                    .detach(|| TableReader::from_source(file.clone()))
                    .map_err(|e| io_or(e, &name))?;
                (inner, name, Some(file))
            }
        };
        Ok(Table { inner, path, remote })
    }

    /// For a table behind a URL, the requests made and bytes received so far (opening
    /// included); None for a local file.
    fn traffic(&self) -> Option<(u64, u64)> {
        self.remote.as_ref().map(|r| {
            let t = r.traffic();
            (t.requests, t.bytes)
        })
    }

    /// The Arrow schema (a `pyarrow.Schema`).
    #[getter]
    fn schema(&self) -> PyArrowType<Schema> {
        PyArrowType(self.inner.schema().as_ref().clone())
    }

    #[getter]
    fn num_rows(&self) -> u64 {
        self.inner.num_rows()
    }

    #[getter]
    fn rows_per_group(&self) -> u32 {
        self.inner.rows_per_group()
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn file_size(&self) -> u64 {
        self.inner.file_len()
    }

    #[getter]
    fn metadata(&self) -> HashMap<String, String> {
        self.inner.user_metadata().clone()
    }

    /// Sets the most bytes one read (each call of `read`, `read_groups`, `take`, `read_into`;
    /// `verify_rows` as a whole) may allocate; more raises `kompakt.LimitError`.
    fn set_max_size(&self, max_size: u64) {
        self.inner.set_read_limit(max_size);
    }

    /// The most bytes one read may allocate.
    #[getter]
    fn max_size(&self) -> u64 {
        self.inner.read_limit()
    }

    /// Decodes every page and checks the rows against the sort keys; returns the row count.
    #[pyo3(signature = (threads=None))]
    fn verify_rows(&self, py: Python<'_>, threads: Option<i64>) -> PyResult<u64> {
        let threads = options::threads(threads)?;
        py.detach(|| self.inner.verify_rows(threads, &mut |_| {}))
            .map_err(|e| io_or(e, &self.path))
    }

    /// Sort keys as (column, descending, nulls_first), most significant first.
    #[getter]
    fn sorted_by(&self) -> Vec<(String, bool, bool)> {
        self.inner
            .sorted_by()
            .iter()
            .map(|k| (k.column.clone(), k.descending, k.nulls_first))
            .collect()
    }

    /// Positions of the named columns (ValueError naming the valid ones).
    fn column_indices(&self, names: Vec<String>) -> PyResult<Vec<usize>> {
        names.iter().map(|n| self.inner.column_index(n).py_err()).collect()
    }

    /// Reads rows `start..stop` of the columns at `columns` (None: all) as a
    /// `pyarrow.RecordBatchReader` over the decoded batches (one per row group).
    #[pyo3(signature = (columns=None, start=0, stop=None, threads=None))]
    fn read(
        &self,
        py: Python<'_>,
        columns: Option<Vec<usize>>,
        start: u64,
        stop: Option<u64>,
        threads: Option<i64>,
    ) -> PyResult<PyArrowType<Box<dyn RecordBatchReader + Send>>> {
        let (threads, stop) = self.read_options(threads, stop)?;
        let (schema, batches) = py
            .detach(|| self.inner.read(columns.as_deref(), start..stop, threads))
            .map_err(|e| io_or(e, &self.path))?;
        let reader: Box<dyn RecordBatchReader + Send> =
            Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), schema));
        Ok(PyArrowType(reader))
    }

    /// Rows at the positions `indices` (little-endian u64s, as numpy's `tobytes` gives them;
    /// in the order given) of the columns at `columns` (None: all), as a
    /// `pyarrow.RecordBatchReader` over one batch.
    #[pyo3(signature = (indices, columns=None, threads=None))]
    fn take(
        &self,
        py: Python<'_>,
        indices: &[u8],
        columns: Option<Vec<usize>>,
        threads: Option<i64>,
    ) -> PyResult<PyArrowType<Box<dyn RecordBatchReader + Send>>> {
        let threads = options::threads(threads)?;
        if !indices.len().is_multiple_of(8) {
            return Err(option_error("indices must be whole u64s (8 bytes each)"));
        }
        let indices: Vec<u64> = indices
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let (schema, batch) = py
            .detach(|| self.inner.take(columns.as_deref(), &indices, threads))
            .map_err(|e| io_or(e, &self.path))?;
        let reader: Box<dyn RecordBatchReader + Send> =
            Box::new(RecordBatchIterator::new(std::iter::once(Ok(batch)), schema));
        Ok(PyArrowType(reader))
    }

    /// The row-group statistics of the column at `column`, as a `pyarrow.RecordBatchReader`
    /// over one batch of a row per group: `null_count`, and where the file has them
    /// `nan_count` (floats), `min` and `max` (bounds: null where a group has no value); None
    /// when the file has no statistics for the column.
    fn statistics(
        &self,
        py: Python<'_>,
        column: usize,
    ) -> PyResult<Option<PyArrowType<Box<dyn RecordBatchReader + Send>>>> {
        use arrow_array::UInt64Array;
        let Some(s) = py
            .detach(|| self.inner.statistics(column))
            .map_err(|e| io_or(e, &self.path))?
        else {
            return Ok(None);
        };
        let mut columns: Vec<(&str, ArrayRef)> = vec![("null_count", Arc::new(UInt64Array::from(s.null_counts)))];
        if let Some(nans) = s.nan_counts {
            columns.push(("nan_count", Arc::new(UInt64Array::from(nans))));
        }
        columns.extend(s.min.map(|a| ("min", a)));
        columns.extend(s.max.map(|a| ("max", a)));
        let batch = RecordBatch::try_from_iter_with_nullable(columns.into_iter().map(|(n, a)| (n, a, true)))
            .map_err(|e| PyRuntimeError::new_err(format!("kompakt: the statistics do not make a batch: {e}")))?;
        let schema = batch.schema();
        let reader: Box<dyn RecordBatchReader + Send> =
            Box::new(RecordBatchIterator::new(std::iter::once(Ok(batch)), schema));
        Ok(Some(PyArrowType(reader)))
    }

    /// Whether a page of the column at `column` covering rows `start..stop` may hold nulls.
    fn may_have_nulls(&self, column: usize, start: u64, stop: u64) -> PyResult<bool> {
        self.inner.may_have_nulls(column, start..stop).map_err(to_py)
    }

    /// Decodes rows `start..stop` of the fixed-width column at `column` straight into `out`, a
    /// writable C-contiguous buffer of exactly their size (a numpy array the caller owns).
    /// Returns whether every row is valid (when not, the null rows' values are unspecified).
    /// Nothing else may use `out` until this returns: the GIL is released while it is written.
    #[pyo3(signature = (column, start, stop, out, threads=None))]
    fn read_into(
        &self,
        py: Python<'_>,
        column: usize,
        start: u64,
        stop: u64,
        out: &Bound<'_, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<bool> {
        let threads = options::threads(threads)?;
        let mut buf = WritableBuffer::get(out)?;
        let dst = buf.as_mut_slice();
        py.detach(|| self.inner.read_column_into(column, start..stop, dst, threads))
            .map_err(|e| io_or(e, &self.path))
    }

    /// Reads rows `start..stop` of the columns at `columns` (None: all) column by column:
    /// `(schema, [(positions, pyarrow.RecordBatchReader), ...])`, the schema `None` when there
    /// is one group (its stream then has it: making a `pyarrow.Schema` costs 28 us a call,
    /// a third of a warm 1000-row read). Fixed-width, boolean and
    /// dictionary columns come as one array each, other types as an array per row group; the
    /// columns that share chunk boundaries form one group and cross as one Arrow stream
    /// (`positions` are their places in the request). Importing each array on its own cost
    /// about 4 us per column, more than decoding a 10,000-row column.
    /// `strings`: how utf8 and binary columns come: `"stored"` (as stored), `"large"`
    /// (large_string and large_binary, which pandas' Arrow-backed strings take as they are) or
    /// `"view"` (string_view and binary_view, polars' own layout).
    #[pyo3(signature = (columns=None, start=0, stop=None, threads=None, strings="stored"))]
    #[allow(clippy::type_complexity)]
    fn read_groups(
        &self,
        py: Python<'_>,
        columns: Option<Vec<usize>>,
        start: u64,
        stop: Option<u64>,
        threads: Option<i64>,
        strings: &str,
    ) -> PyResult<(
        Option<PyArrowType<Schema>>,
        Vec<(Vec<usize>, PyArrowType<Box<dyn RecordBatchReader + Send>>)>,
    )> {
        let (threads, stop) = self.read_options(threads, stop)?;
        let strings = match strings {
            "stored" => StringLayout::AsStored,
            "large" => StringLayout::Large,
            "view" => StringLayout::View,
            other => {
                return Err(option_error(format!(
                    "strings must be 'stored', 'large' or 'view', got {other:?}"
                )))
            }
        };
        let (schema, groups) = py
            .detach(|| {
                let (schema, columns) =
                    self.inner
                        .read_columns_as(columns.as_deref(), start..stop, threads, strings)?;
                let groups = group_by_chunks(&schema, columns)?;
                Ok::<_, kompakt::Error>((schema, groups))
            })
            .map_err(|e| io_or(e, &self.path))?;
        let schema = (groups.len() != 1).then(|| PyArrowType(schema.as_ref().clone()));
        let groups = groups
            .into_iter()
            .map(|(positions, reader)| (positions, PyArrowType(reader)))
            .collect();
        Ok((schema, groups))
    }

    /// The row ranges of rows `start..stop` (`None`: to the end), in order, that can hold a
    /// row passing every filter: `(column, op, values)`, the values a `pyarrow.Array` of the
    /// column's type (one value; a list for `in` and `not in`). Found by binary search on an
    /// ascending first sort key and by the row-group statistics, before any page of the rows
    /// is read ([`kompakt_table::plan`]); the caller still applies the filters to the rows.
    /// A filter the planner refuses (column, op, value type) is a `kompakt.OptionError`.
    #[pyo3(signature = (filters, start=0, stop=None))]
    fn plan_rows(
        &self,
        py: Python<'_>,
        filters: Vec<(String, String, PyArrowType<ArrayData>)>,
        start: u64,
        stop: Option<u64>,
    ) -> PyResult<Vec<(u64, u64)>> {
        let filters = filters
            .into_iter()
            .map(|(column, op, values)| Ok(Filter::new(column, op.parse::<Op>()?, make_array(values.0))))
            .collect::<kompakt::Result<Vec<Filter>>>()
            .map_err(to_py)?;
        let stop = stop.unwrap_or(self.inner.num_rows());
        let ranges = py
            .detach(|| plan_rows(&self.inner, &filters, start..stop))
            .map_err(|e| io_or(e, &self.path))?;
        Ok(ranges.into_iter().map(|r| (r.start, r.end)).collect())
    }

    /// Per-column storage: encodings, encoded and stored bytes, codecs.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .summary()
            .into_iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("name", c.name)?;
                d.set_item("type", c.data_type.to_string())?;
                d.set_item("encodings", c.encodings.into_iter().collect::<HashMap<_, _>>())?;
                d.set_item("pages_with_nulls", c.pages_with_nulls)?;
                d.set_item("encoded_bytes", c.encoded)?;
                d.set_item("stored_bytes", c.stored)?;
                d.set_item("codecs", c.codecs.into_iter().collect::<HashMap<_, _>>())?;
                Ok(d)
            })
            .collect()
    }
}

impl Table {
    /// A read's thread count and end row (`None`: the last).
    fn read_options(&self, threads: Option<i64>, stop: Option<u64>) -> PyResult<(usize, u64)> {
        Ok((options::threads(threads)?, stop.unwrap_or(self.inner.num_rows())))
    }
}

/// A decoded column's chunks, grouped with the other columns cut at the same rows: each group's
/// positions (in `columns`' order) and its chunks as record batches (the schema's metadata kept).
#[allow(clippy::type_complexity)]
fn group_by_chunks(
    schema: &SchemaRef,
    columns: Vec<Vec<ArrayRef>>,
) -> kompakt::Result<Vec<(Vec<usize>, Box<dyn RecordBatchReader + Send>)>> {
    let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (k, chunks) in columns.iter().enumerate() {
        let lengths: Vec<usize> = chunks.iter().map(|a| a.len()).collect();
        match groups.iter_mut().find(|(l, _)| *l == lengths) {
            Some((_, members)) => members.push(k),
            None => groups.push((lengths, vec![k])),
        }
    }
    let mut columns: Vec<Option<Vec<ArrayRef>>> = columns.into_iter().map(Some).collect();
    groups
        .into_iter()
        .map(|(lengths, members)| {
            let fields: Vec<_> = members.iter().map(|&k| schema.field(k).clone()).collect();
            let group_schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
            let mut chunks: Vec<std::vec::IntoIter<ArrayRef>> = members
                .iter()
                .map(|&k| columns[k].take().unwrap_or_default().into_iter())
                .collect();
            let batches = lengths
                .iter()
                .map(|&rows| {
                    let arrays = chunks.iter_mut().filter_map(Iterator::next).collect();
                    RecordBatch::try_new_with_options(
                        group_schema.clone(),
                        arrays,
                        &RecordBatchOptions::new().with_row_count(Some(rows)),
                    )
                    .map_err(|e| kompakt::Error::corrupt("table", 0, e.to_string()))
                })
                .collect::<kompakt::Result<Vec<_>>>()?;
            let reader: Box<dyn RecordBatchReader + Send> =
                Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), group_schema));
            Ok((members, reader))
        })
        .collect()
}
