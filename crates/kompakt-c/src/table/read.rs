//! Reading table files: open one (a path, a URL or lent memory), its schema, metadata, sort
//! keys and sizes, and rows of it by range or by number, as Arrow arrays or straight into the
//! caller's memory.

use crate::ffi::{array_arg, buffer, kpk_bytes, open_source, put, required, Lent};
use crate::options::threads;
use crate::status::{about, guard, kpk_status, Failure};
use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, StructArray};
use arrow_schema::DataType;
use kompakt::stream::ReadAt;
use kompakt_api::location::Location;
use kompakt_table::TableReader;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// The column positions a read asks for: `None` (all) when `columns` is NULL.
pub(super) fn column_positions(columns: *const u32, ncolumns: usize) -> Result<Option<Vec<usize>>, Failure> {
    if columns.is_null() {
        return Ok(None);
    }
    Ok(Some(
        array_arg(columns, ncolumns, "columns")?
            .iter()
            .map(|&c| c as usize)
            .collect(),
    ))
}

/// Copies `bits` (a validity bitmap) into the caller's `validity`, one bit per row, least
/// significant first; nothing when `validity` is NULL.
///
/// # Safety
/// `validity` is NULL or holds `(bits.len() + 7) / 8` writable bytes nobody else uses during
/// the call.
unsafe fn export_validity(validity: *mut u8, bits: &arrow_buffer::BooleanBuffer) {
    if validity.is_null() {
        return;
    }
    // SAFETY: the caller's contract above; NULL was checked just before.
    let dst = unsafe { std::slice::from_raw_parts_mut(validity, bits.len().div_ceil(8)) };
    dst.fill(0);
    for (i, valid) in bits.iter().enumerate() {
        if valid {
            dst[i / 8] |= 1 << (i % 8);
        }
    }
}

/// A table file open for reading.
pub struct kpk_table {
    pub(super) reader: TableReader,
    /// The path or URL, for messages (None in memory).
    pub(super) path: Option<String>,
    pub(super) threads: usize,
}

pub(super) fn table_ref<'a>(t: *const kpk_table) -> Result<&'a kpk_table, Failure> {
    // SAFETY: a non-NULL handle came from kpk_table_open_* and is not closed yet.
    unsafe { t.as_ref() }.ok_or_else(|| Failure::usage("the table is NULL"))
}

fn open_table(
    open: impl FnOnce() -> kompakt::Result<TableReader>,
    path: Option<String>,
    threads_: i32,
    out: *mut *mut kpk_table,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("the output pointer for the table is NULL"));
    }
    let threads = threads(threads_)?;
    let reader = open().map_err(about(&path))?;
    put(out, Box::into_raw(Box::new(kpk_table { reader, path, threads })))
}

/// Opens a table file (an interrupted append is undone first).
///
/// # Safety
/// `path` is a NUL-terminated string; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_open_file(
    path: *const c_char,
    threads: i32,
    out: *mut *mut kpk_table,
) -> kpk_status {
    guard(|| {
        // A missing file or a folder is refused here, naming the path.
        let source = open_source(path)?;
        match source.location {
            // The index of a local file is cached between opens (until the file changes).
            Location::Local(path) => open_table(|| TableReader::open_cached(&path), Some(source.name), threads, out),
            // Only the footer and the index are fetched now; pages when they are read.
            Location::Remote(_) => open_table(
                || TableReader::from_source(source.file),
                Some(source.name),
                threads,
                out,
            ),
        }
    })
}

/// Opens a table file held in memory, read where it lies.
///
/// # Safety
/// `data` holds `len` readable bytes that stay valid and unchanged until `kpk_table_close`;
/// `out` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_open_memory(
    data: *const c_void,
    len: usize,
    threads: i32,
    out: *mut *mut kpk_table,
) -> kpk_status {
    guard(|| {
        let lent: Arc<dyn ReadAt> = Arc::new(Lent::new(data, len)?);
        open_table(|| TableReader::from_source(lent), None, threads, out)
    })
}

/// Closes a table.
///
/// # Safety
/// `table` is NULL or a live handle, freed by this call.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_close(table: *mut kpk_table) {
    if table.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: a live handle, freed here once (the header's contract).
        drop(unsafe { Box::from_raw(table) });
        Ok(())
    });
}

/// Rows of the table (0 for a NULL handle).
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_num_rows(table: *const kpk_table) -> u64 {
    table_ref(table).map_or(0, |t| t.reader.num_rows())
}

/// Rows per row group (0 for a NULL handle).
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_rows_per_group(table: *const kpk_table) -> u32 {
    table_ref(table).map_or(0, |t| t.reader.rows_per_group())
}

/// The table's schema, exported into `out` (the caller releases it).
///
/// # Safety
/// `table` is a live handle; `out` points at writable memory for one `ArrowSchema`.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_schema(table: *const kpk_table, out: *mut FFI_ArrowSchema) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let schema = FFI_ArrowSchema::try_from(t.reader.schema().as_ref()).map_err(Failure::internal)?;
        put(out, schema)
    })
}

/// A value of the table's user metadata, copied into `value` (empty and `*found` 0 when the
/// key is absent).
///
/// # Safety
/// `table` is a live handle; `key` a NUL-terminated string; `value` and `found` writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_metadata(
    table: *const kpk_table,
    key: *const c_char,
    value: *mut kpk_bytes,
    found: *mut i32,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let key = required(key, "key")?;
        let v = t.reader.user_metadata().get(key);
        put(found, i32::from(v.is_some()))?;
        put(
            value,
            kpk_bytes::from_vec(v.map(|v| v.as_bytes().to_vec()).unwrap_or_default()),
        )
    })
}

/// How many sort keys the table records.
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_sort_key_count(table: *const kpk_table) -> usize {
    table_ref(table).map_or(0, |t| t.reader.sorted_by().len())
}

/// Sort key `i`: its column's name (copied into `column`), direction and null placement.
///
/// # Safety
/// `table` is a live handle; the output pointers are writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_sort_key(
    table: *const kpk_table,
    i: usize,
    column: *mut kpk_bytes,
    descending: *mut i32,
    nulls_first: *mut i32,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let keys = t.reader.sorted_by();
        let key = keys
            .get(i)
            .ok_or_else(|| Failure::option(format!("sort key {i} of a table with {}", keys.len())))?;
        put(descending, i32::from(key.descending))?;
        put(nulls_first, i32::from(key.nulls_first))?;
        put(column, kpk_bytes::from_vec(key.column.as_bytes().to_vec()))
    })
}

/// How many columns the table has (0 for a NULL handle).
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_num_columns(table: *const kpk_table) -> u32 {
    table_ref(table).map_or(0, |t| t.reader.schema().fields().len() as u32)
}

/// Bytes each column takes in the file (`stored`) and after decompression (`encoded`), from
/// the index alone: `ncolumns` (the table's column count) values into each array.
///
/// # Safety
/// `table` is a live handle; `stored` and `encoded` hold `ncolumns` writable values each.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_column_sizes(
    table: *const kpk_table,
    stored: *mut u64,
    encoded: *mut u64,
    ncolumns: usize,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let summary = t.reader.summary();
        if ncolumns != summary.len() {
            return Err(Failure::option(format!(
                "arrays for {ncolumns} columns, the table has {}",
                summary.len()
            )));
        }
        if summary.is_empty() {
            return Ok(());
        }
        if stored.is_null() || encoded.is_null() {
            return Err(Failure::usage("an output array is NULL"));
        }
        // SAFETY: the caller passes `ncolumns` writable values at each pointer (the header's
        // contract); NULL was refused above, and the count checked against the table's.
        let (s, e) = unsafe {
            (
                std::slice::from_raw_parts_mut(stored, ncolumns),
                std::slice::from_raw_parts_mut(encoded, ncolumns),
            )
        };
        for (i, c) in summary.iter().enumerate() {
            s[i] = c.stored;
            e[i] = c.encoded;
        }
        Ok(())
    })
}

/// The file's size in bytes (0 for a NULL handle).
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_file_size(table: *const kpk_table) -> u64 {
    table_ref(table).map_or(0, |t| t.reader.file_len())
}

/// A fingerprint of the table's index (the footer's checksum; 0 for a NULL handle): two opens
/// of an unchanged file give the same, any write to the file changes it. Front ends key what
/// they derive from a table's schema and metadata by it.
///
/// # Safety
/// `table` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_fingerprint(table: *const kpk_table) -> u64 {
    table_ref(table).map_or(0, |t| t.reader.fingerprint())
}

pub(super) fn row_range(from: u64, to: u64) -> Result<std::ops::Range<u64>, Failure> {
    if from > to {
        return Err(Failure::option(format!("rows {from}..{to}: the start is past the end")));
    }
    Ok(from..to)
}

/// Decodes rows `from..to` of fixed-width column `column` (numbers, dates, times, not booleans
/// or dictionaries) straight into `dst` (`dst_len` bytes: the rows times the type's width).
/// `*has_nulls` says whether some rows are null; if so and `validity` is not NULL, it gets one
/// bit per row (least significant first, set = valid: `(to - from + 7) / 8` bytes). The
/// values of null rows are unspecified.
///
/// # Safety
/// `table` is a live handle; `dst` holds `dst_len` writable bytes; `validity` is NULL or holds
/// `(to - from + 7) / 8` writable bytes; `has_nulls` is writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_read_into(
    table: *const kpk_table,
    column: u32,
    from: u64,
    to: u64,
    dst: *mut c_void,
    dst_len: usize,
    validity: *mut u8,
    has_nulls: *mut i32,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let rows = row_range(from, to)?;
        let out = buffer(dst, dst_len)?;
        let bits = t
            .reader
            .read_column_into_with_validity(column as usize, rows.clone(), out, t.threads)
            .map_err(about(&t.path))?;
        let nulls = bits.as_ref().is_some_and(|b| b.count_set_bits() < b.len());
        if let (true, Some(bits)) = (nulls, &bits) {
            // SAFETY: `validity` is NULL or holds (to - from + 7) / 8 writable bytes (the
            // header's contract), one bit for each of the bitmap's rows.
            unsafe { export_validity(validity, bits) };
        }
        put(has_nulls, i32::from(nulls))
    })
}

/// Hints that rows `from..to` of the columns `columns` (positions; all when NULL) are about to
/// be read in several calls: a table at a URL fetches their pages at once, in the background.
/// Files and memory ignore it.
///
/// # Safety
/// `table` is a live handle; `columns` is NULL or holds `ncolumns` readable positions.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_prefetch(
    table: *const kpk_table,
    columns: *const u32,
    ncolumns: usize,
    from: u64,
    to: u64,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let rows = row_range(from, to)?;
        let picked = column_positions(columns, ncolumns)?;
        t.reader.prefetch(picked.as_deref(), rows).map_err(about(&t.path))
    })
}

/// Reads rows `from..to` of the columns `columns` (positions; all when `columns` is NULL)
/// into one struct array (children: the columns; strings with their stored offsets), exported
/// into `schema` and `array` for the caller to release.
///
/// # Safety
/// `table` is a live handle; `columns` is NULL or holds `ncolumns` readable positions;
/// `schema` and `array` point at writable memory for one struct each.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_read(
    table: *const kpk_table,
    columns: *const u32,
    ncolumns: usize,
    from: u64,
    to: u64,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let rows = row_range(from, to)?;
        let picked = column_positions(columns, ncolumns)?;
        let batch =
            kompakt_api::table::read_rows(&t.reader, picked.as_deref(), rows, t.threads).map_err(about(&t.path))?;
        let batch = StructArray::from(batch);
        let (ffi_array, ffi_schema) = to_ffi(&batch.to_data()).map_err(Failure::internal)?;
        put(array, ffi_array)?;
        put(schema, ffi_schema)
    })
}

/// Takes rows `rows` (`nrows` positions, in the order given, repeats allowed) of fixed-width
/// column `column`, as [`kpk_table_read_into`] reads a range: values into `dst` (`dst_len` =
/// `nrows` times the type's width), `*has_nulls`, and the validity bits when asked. Each row
/// group holding any of the rows is decoded once.
///
/// # Safety
/// `table` is a live handle; `rows` holds `nrows` readable positions; `dst` holds `dst_len`
/// writable bytes; `validity` is NULL or holds `(nrows + 7) / 8` writable bytes; `has_nulls`
/// is writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_take_into(
    table: *const kpk_table,
    column: u32,
    rows: *const u64,
    nrows: usize,
    dst: *mut c_void,
    dst_len: usize,
    validity: *mut u8,
    has_nulls: *mut i32,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let rows = array_arg(rows, nrows, "rows")?;
        let c = column as usize;
        if c >= t.reader.schema().fields().len() {
            return Err(Failure::usage(format!(
                "column {column} of a table of {} columns",
                t.reader.schema().fields().len()
            )));
        }
        let dt = t.reader.schema().field(c).data_type().clone();
        let width = match (&dt, dt.primitive_width()) {
            (DataType::Dictionary(..) | DataType::Boolean, _) | (_, None) => {
                return Err(Failure::usage(format!("column {column} is {dt}, not fixed-width")))
            }
            (_, Some(w)) => w,
        };
        if dst_len != width * nrows || (dst.is_null() && dst_len > 0) {
            return Err(Failure::usage(format!(
                "{nrows} rows of {dt} need a buffer of {} bytes, not {dst_len}",
                width * nrows
            )));
        }
        let (_, batch) = t.reader.take(Some(&[c]), rows, t.threads).map_err(about(&t.path))?;
        let data = batch.column(0).to_data();
        let values = &data.buffers()[0].as_slice()[data.offset() * width..(data.offset() + nrows) * width];
        buffer(dst, dst_len)?.copy_from_slice(values);
        let nulls = data.null_count() > 0;
        if let (true, Some(bits)) = (nulls, data.nulls()) {
            // SAFETY: `validity` is NULL or holds (nrows + 7) / 8 writable bytes (the header's
            // contract), one bit for each of the nrows rows `bits` covers.
            unsafe { export_validity(validity, bits.inner()) };
        }
        put(has_nulls, i32::from(nulls))
    })
}

/// Takes rows `rows` (`nrows` positions, in the order given, repeats allowed) of the columns
/// `columns` (positions; all when `columns` is NULL) as one struct array, exported as
/// [`kpk_table_read`] exports a range.
///
/// # Safety
/// `table` is a live handle; `columns` is NULL or holds `ncolumns` readable positions; `rows`
/// holds `nrows` readable positions; `schema` and `array` point at writable memory for one
/// struct each.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_take(
    table: *const kpk_table,
    columns: *const u32,
    ncolumns: usize,
    rows: *const u64,
    nrows: usize,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
) -> kpk_status {
    guard(|| {
        let t = table_ref(table)?;
        let rows = array_arg(rows, nrows, "rows")?;
        let picked = column_positions(columns, ncolumns)?;
        let (_, batch) = t
            .reader
            .take(picked.as_deref(), rows, t.threads)
            .map_err(about(&t.path))?;
        let batch = StructArray::from(batch);
        let (ffi_array, ffi_schema) = to_ffi(&batch.to_data()).map_err(Failure::internal)?;
        put(array, ffi_array)?;
        put(schema, ffi_schema)
    })
}
