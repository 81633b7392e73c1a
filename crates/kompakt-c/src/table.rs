//! Table files through the C API: columns cross as Arrow's C data interface (`ArrowSchema`,
//! `ArrowArray`), the ABI every Arrow implementation shares; fixed-width columns may also be
//! decoded straight into the caller's memory (`kpk_table_read_into`).

use crate::{about, guard, io_failure, location_arg, path_arg, put, text, threads, Failure, Lent};
use crate::{kpk_bytes, kpk_status, KPK_ERROR_OPTION, KPK_LEVEL_DEFAULT};
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Field};
use kompakt::stream::ReadAt;
use kompakt::CodecSpec;
use kompakt_remote::Location;
use kompakt_table::{append_table_file, write_table_file, SortKey, StringLayout, TableOptions, TableReader};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::path::PathBuf;
use std::sync::Arc;

/// How a table is written (`kpk_table_options` in the header).
#[repr(C)]
pub struct kpk_table_options {
    /// A codec name (`"zstd"`, `"lz4:3"`, ...), or NULL for the table's defaults.
    pub codec: *const c_char,
    /// A level, or `KPK_LEVEL_DEFAULT`.
    pub level: i32,
    /// Encoding threads; 0 = all cores.
    pub threads: i32,
    /// Rows per row group; 0 = the default (16384).
    pub rows_per_group: u32,
    /// Names of the columns the rows are sorted by, most significant first.
    pub sort_columns: *const *const c_char,
    /// Per sort column: nonzero = descending.
    pub sort_descending: *const u8,
    /// Per sort column: nonzero = nulls first.
    pub sort_nulls_first: *const u8,
    /// How many sort columns.
    pub n_sort: usize,
    /// Keys of the user metadata stored with the table.
    pub metadata_keys: *const *const c_char,
    /// Their values.
    pub metadata_values: *const *const c_char,
    /// How many metadata entries.
    pub n_metadata: usize,
    /// The codec of plain string and binary pages (a codec spec such as `"zstd:2"`), or NULL
    /// for what `codec` gives them.
    pub string_codec: *const c_char,
}

/// `n` elements at `p`, borrowed for the call; empty when `n` is 0.
fn array_arg<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::usage(format!("{what} is NULL with {n} entries")));
    }
    // SAFETY: the caller passes `n` readable elements at `p` that stay valid for the call
    // (the header's contract for arrays with a count); NULL was refused above.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The column positions a read asks for: `None` (all) when `columns` is NULL.
fn column_positions(columns: *const u32, ncolumns: usize) -> Result<Option<Vec<usize>>, Failure> {
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

fn required_text(s: *const c_char, what: &str) -> Result<String, Failure> {
    Ok(text(s, what)?
        .ok_or_else(|| Failure::usage(format!("{what} is NULL")))?
        .to_string())
}

fn table_options(opts: *const kpk_table_options) -> Result<TableOptions, Failure> {
    let mut out = TableOptions::default();
    // SAFETY: NULL (defaults) or a readable options struct for the call (the header's contract).
    let Some(o) = (unsafe { opts.as_ref() }) else {
        return Ok(out);
    };
    let codec = text(o.codec, "codec")?;
    if codec.is_some() || o.level != KPK_LEVEL_DEFAULT {
        // A codec named by the caller is used for every page, strings included (as in Python).
        let level = (o.level != KPK_LEVEL_DEFAULT).then_some(i64::from(o.level));
        out = out.with_codec(CodecSpec::from_options(codec, level)?);
    }
    if let Some(spec) = text(o.string_codec, "string_codec")? {
        out.string_codec = Some(CodecSpec::parse(spec)?);
    }
    out.threads = threads(o.threads)?;
    if o.rows_per_group != 0 {
        out.rows_per_group = o.rows_per_group;
    }
    let names = array_arg(o.sort_columns, o.n_sort, "sort_columns")?;
    let descending = array_arg(o.sort_descending, o.n_sort, "sort_descending")?;
    let nulls_first = array_arg(o.sort_nulls_first, o.n_sort, "sort_nulls_first")?;
    for i in 0..o.n_sort {
        out.sorted_by.push(SortKey {
            column: required_text(names[i], "a sort column")?,
            descending: descending[i] != 0,
            nulls_first: nulls_first[i] != 0,
        });
    }
    let keys = array_arg(o.metadata_keys, o.n_metadata, "metadata_keys")?;
    let values = array_arg(o.metadata_values, o.n_metadata, "metadata_values")?;
    out.metadata = (0..o.n_metadata)
        .map(|i| {
            Ok((
                required_text(keys[i], "a metadata key")?,
                required_text(values[i], "a metadata value")?,
            ))
        })
        .collect::<Result<HashMap<_, _>, Failure>>()?;
    Ok(out)
}

/// Takes the caller's record batch: a struct array whose children are the columns, moved out
/// of `array` (which is left released, as Arrow's C data interface moves arrays) and checked.
fn import_batch(schema: *mut FFI_ArrowSchema, array: *mut FFI_ArrowArray) -> Result<RecordBatch, Failure> {
    if schema.is_null() || array.is_null() {
        return Err(Failure::usage("the ArrowSchema or ArrowArray is NULL"));
    }
    // SAFETY: both point at initialized C data interface structs (the header's contract); the
    // array is moved out (its release callback now belongs to us and runs when the imported
    // buffers are dropped), the schema only read and left to the caller.
    let (array, schema) = unsafe { (FFI_ArrowArray::from_raw(array), &*schema) };
    if array.is_released() {
        return Err(Failure::usage("the ArrowArray is released"));
    }
    // SAFETY: the caller's buffers match the schema's types and lengths (the header's contract,
    // that of every C data interface producer); validate_full below checks offsets, UTF-8,
    // dictionary keys and lengths before any of it is used, so a producer's mistake becomes an
    // error rather than an out-of-bounds read.
    let data = unsafe { from_ffi(array, schema) }.map_err(|e| Failure(KPK_ERROR_OPTION, e.to_string()))?;
    data.validate_full()
        .map_err(|e| Failure(KPK_ERROR_OPTION, format!("the columns are not valid Arrow data: {e}")))?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(Failure(
            KPK_ERROR_OPTION,
            format!(
                "a table is written from a struct array of its columns, got {}",
                data.data_type()
            ),
        ));
    }
    let columns = StructArray::from(data);
    if columns.null_count() > 0 {
        return Err(Failure(
            KPK_ERROR_OPTION,
            "the struct array of the columns has null rows".into(),
        ));
    }
    Ok(RecordBatch::from(columns))
}

/// Writes a table file at `path` atomically from one record batch.
///
/// # Safety
/// `path` is a NUL-terminated string; `schema` and `array` are initialized C data interface
/// structs (the array is moved: released whatever the result); `opts` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_write(
    path: *const c_char,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
    opts: *const kpk_table_options,
) -> kpk_status {
    guard(|| {
        let batch = import_batch(schema, array)?;
        let path = path_arg(path)?;
        let opts = table_options(opts)?;
        write_table_file(&path, batch.schema(), [Ok(batch)], opts).map_err(about(&Some(path)))?;
        Ok(())
    })
}

/// Appends one record batch to the table file at `path` in place; `rows` (may be NULL) gets
/// the rows appended.
///
/// # Safety
/// As `kpk_table_write`; `rows` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_append(
    path: *const c_char,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
    opts: *const kpk_table_options,
    rows: *mut u64,
) -> kpk_status {
    guard(|| {
        let batch = import_batch(schema, array)?;
        let path = path_arg(path)?;
        let opts = table_options(opts)?;
        let n = append_table_file(&path, [Ok(batch)], opts).map_err(about(&Some(path)))?;
        if !rows.is_null() {
            put(rows, n)?;
        }
        Ok(())
    })
}

/// A table file open for reading.
pub struct kpk_table {
    reader: TableReader,
    path: Option<PathBuf>,
    threads: usize,
}

fn table_ref<'a>(t: *const kpk_table) -> Result<&'a kpk_table, Failure> {
    // SAFETY: a non-NULL handle came from kpk_table_open_* and is not closed yet.
    unsafe { t.as_ref() }.ok_or_else(|| Failure::usage("the table is NULL"))
}

fn open_table(
    open: impl FnOnce() -> kompakt::Result<TableReader>,
    path: Option<PathBuf>,
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
        match location_arg(path)? {
            Location::Local(path) => {
                if let Err(e) = kompakt_fs::open_for_reading(&path) {
                    return Err(Failure::at(&path)(io_failure(e)));
                }
                let p = path.clone();
                open_table(|| TableReader::open_cached(&p), Some(path), threads, out)
            }
            Location::Remote(url) => {
                // Only the footer and the index are fetched now; pages when they are read.
                let file = kompakt_remote::open(&url).map_err(io_failure)?;
                let name = PathBuf::from(url.as_str());
                open_table(|| TableReader::from_source(file), Some(name), threads, out)
            }
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
        if data.is_null() && len > 0 {
            return Err(Failure::usage(format!("a NULL pointer for {len} bytes")));
        }
        let lent: Arc<dyn ReadAt> = Arc::new(Lent { data: data.cast(), len });
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
        let schema = FFI_ArrowSchema::try_from(t.reader.schema().as_ref())
            .map_err(|e| Failure(crate::KPK_ERROR_INTERNAL, e.to_string()))?;
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
        let key = required_text(key, "key")?;
        let v = t.reader.user_metadata().get(&key);
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
            .ok_or_else(|| Failure(KPK_ERROR_OPTION, format!("sort key {i} of a table with {}", keys.len())))?;
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
            return Err(Failure(
                KPK_ERROR_OPTION,
                format!("arrays for {ncolumns} columns, the table has {}", summary.len()),
            ));
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

fn row_range(from: u64, to: u64) -> Result<std::ops::Range<u64>, Failure> {
    if from > to {
        return Err(Failure(
            KPK_ERROR_OPTION,
            format!("rows {from}..{to}: the start is past the end"),
        ));
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
        if dst.is_null() && dst_len > 0 {
            return Err(Failure::usage(format!("a NULL buffer for {dst_len} bytes")));
        }
        let out: &mut [u8] = if dst_len == 0 {
            &mut []
        } else {
            // SAFETY: `dst` holds `dst_len` writable bytes nobody else uses during the call
            // (the header's contract); NULL was refused above.
            unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), dst_len) }
        };
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
        let (read_schema, parts) = t
            .reader
            .read_columns_as(picked.as_deref(), rows, t.threads, StringLayout::AsStored)
            .map_err(about(&t.path))?;
        let arrays = parts
            .into_iter()
            .zip(read_schema.fields())
            .map(|(chunks, field)| concat(chunks, field.data_type()))
            .collect::<Result<Vec<ArrayRef>, Failure>>()?;
        let fields: Vec<Field> = read_schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let len = (to - from) as usize;
        let batch = StructArray::try_new_with_length(fields.into(), arrays, None, len)
            .map_err(|e| Failure(crate::KPK_ERROR_INTERNAL, e.to_string()))?;
        let (ffi_array, ffi_schema) =
            to_ffi(&batch.to_data()).map_err(|e| Failure(crate::KPK_ERROR_INTERNAL, e.to_string()))?;
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
        if dst_len > 0 {
            // SAFETY: `dst` holds `dst_len` writable bytes nobody else uses during the call
            // (the header's contract); NULL was refused above.
            let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), dst_len) };
            out.copy_from_slice(values);
        }
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
        let (ffi_array, ffi_schema) =
            to_ffi(&batch.to_data()).map_err(|e| Failure(crate::KPK_ERROR_INTERNAL, e.to_string()))?;
        put(array, ffi_array)?;
        put(schema, ffi_schema)
    })
}

/// One column's chunks (one per row group for variable-width types) as one array.
fn concat(chunks: Vec<ArrayRef>, dt: &DataType) -> Result<ArrayRef, Failure> {
    match chunks.len() {
        0 => Ok(make_array(arrow_data::ArrayData::new_empty(dt))),
        1 => Ok(chunks.into_iter().next().expect("one chunk")),
        _ => {
            let refs: Vec<&dyn Array> = chunks.iter().map(|a| a.as_ref()).collect();
            arrow_select::concat::concat(&refs).map_err(|e| Failure(crate::KPK_ERROR_INTERNAL, e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KPK_ERROR_CORRUPT, KPK_ERROR_USAGE, KPK_OK};
    use arrow_array::{DictionaryArray, Float64Array, Int32Array, StringArray};
    use std::ffi::CString;
    use std::ptr::{null, null_mut};

    use crate::tests::last_error;

    /// Rows `start..start + n` of a table sorted by `x`.
    fn batch_at(start: usize, n: usize) -> RecordBatch {
        let rows = start..start + n;
        let ints = Int32Array::from_iter(rows.clone().map(|i| (i % 5 != 0).then_some(i as i32)));
        let reals = Float64Array::from_iter_values(rows.clone().map(|i| i as f64 / 8.0));
        let text = StringArray::from_iter(rows.clone().map(|i| (i % 3 != 0).then(|| format!("row {i}"))));
        let dict: DictionaryArray<arrow_array::types::Int32Type> = rows.map(|i| ["a", "b", "c"][i % 3]).collect();
        RecordBatch::try_from_iter([
            ("i", Arc::new(ints) as ArrayRef),
            ("x", Arc::new(reals) as ArrayRef),
            ("s", Arc::new(text) as ArrayRef),
            ("d", Arc::new(dict) as ArrayRef),
        ])
        .unwrap()
    }

    fn batch(n: usize) -> RecordBatch {
        batch_at(0, n)
    }

    /// Options that leave everything to the table's defaults.
    fn default_options() -> kpk_table_options {
        kpk_table_options {
            codec: null(),
            level: KPK_LEVEL_DEFAULT,
            threads: 0,
            rows_per_group: 0,
            sort_columns: null(),
            sort_descending: null(),
            sort_nulls_first: null(),
            n_sort: 0,
            metadata_keys: null(),
            metadata_values: null(),
            n_metadata: 0,
            string_codec: null(),
        }
    }

    /// The batch exported as a C caller would hand it over.
    fn exported(b: &RecordBatch) -> (FFI_ArrowSchema, FFI_ArrowArray) {
        let (array, schema) = to_ffi(&StructArray::from(b.clone()).to_data()).unwrap();
        (schema, array)
    }

    #[test]
    fn a_table_written_through_the_c_data_interface_reads_back_by_column_and_row_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
        let b = batch(50_000);
        let key = CString::new("r").unwrap();
        let value = CString::new("{\"x\": 1}").unwrap();
        let sort = CString::new("x").unwrap();
        let (keys, values, sorts) = ([key.as_ptr()], [value.as_ptr()], [sort.as_ptr()]);
        let zstd = CString::new("zstd:1").unwrap();
        let opts = kpk_table_options {
            codec: null(),
            level: KPK_LEVEL_DEFAULT,
            threads: 2,
            rows_per_group: 4096,
            sort_columns: sorts.as_ptr(),
            sort_descending: [0u8].as_ptr(),
            sort_nulls_first: [1u8].as_ptr(),
            n_sort: 1,
            metadata_keys: keys.as_ptr(),
            metadata_values: values.as_ptr(),
            n_metadata: 1,
            string_codec: zstd.as_ptr(),
        };
        unsafe {
            let (mut schema, mut array) = exported(&b);
            assert_eq!(
                kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts),
                KPK_OK,
                "{}",
                last_error()
            );
            assert!(array.is_released(), "the array is moved into the call");
            // An append keeps the sort key: rows before the last are refused, the rest taken.
            let (mut schema, mut array) = exported(&b.slice(0, 100));
            let mut rows = 0;
            assert_eq!(
                kpk_table_append(path.as_ptr(), &mut schema, &mut array, null(), &mut rows),
                KPK_ERROR_USAGE
            );
            assert!(last_error().contains("\"x\""), "{}", last_error());
            let (mut schema, mut array) = exported(&batch_at(50_000, 100));
            assert_eq!(
                kpk_table_append(path.as_ptr(), &mut schema, &mut array, null(), &mut rows),
                KPK_OK
            );
            assert_eq!(rows, 100);

            let mut t = null_mut();
            assert_eq!(
                kpk_table_open_file(path.as_ptr(), 2, &mut t),
                KPK_OK,
                "{}",
                last_error()
            );
            assert_eq!(kpk_table_num_rows(t), 50_100);
            // The plain strings took the string codec (the appended rows, the default).
            let codecs: Vec<Vec<String>> = TableReader::open(dir.path().join("t.kpk"))
                .unwrap()
                .summary()
                .into_iter()
                .map(|c| c.codecs.into_keys().collect())
                .collect();
            assert!(codecs[2].contains(&"zstd".to_string()), "{codecs:?}");
            assert_eq!(kpk_table_rows_per_group(t), 4096);
            assert_eq!(kpk_table_sort_key_count(t), 1);
            let (mut name, mut desc, mut nulls_first) = (kpk_bytes::from_vec(Vec::new()), 9, 9);
            assert_eq!(kpk_table_sort_key(t, 0, &mut name, &mut desc, &mut nulls_first), KPK_OK);
            assert_eq!(
                (std::slice::from_raw_parts(name.data, name.len), desc, nulls_first),
                (&b"x"[..], 0, 1)
            );
            crate::kpk_bytes_free(&mut name);
            let (mut meta, mut found) = (kpk_bytes::from_vec(Vec::new()), 0);
            assert_eq!(kpk_table_metadata(t, key.as_ptr(), &mut meta, &mut found), KPK_OK);
            assert_eq!(
                (std::slice::from_raw_parts(meta.data, meta.len), found),
                (&b"{\"x\": 1}"[..], 1)
            );
            crate::kpk_bytes_free(&mut meta);

            // Fixed width straight into caller memory, with the validity of every row.
            let mut ints = vec![0i32; 10_000];
            let mut validity = vec![0u8; 10_000 / 8];
            let mut has_nulls = 0;
            assert_eq!(
                kpk_table_read_into(
                    t,
                    0,
                    3000,
                    13_000,
                    ints.as_mut_ptr().cast(),
                    40_000,
                    validity.as_mut_ptr(),
                    &mut has_nulls
                ),
                KPK_OK
            );
            assert_eq!(has_nulls, 1);
            for (k, &v) in ints.iter().enumerate() {
                let i = 3000 + k as i32;
                let valid = validity[k / 8] >> (k % 8) & 1 == 1;
                assert_eq!(valid, i % 5 != 0, "row {i}");
                if valid {
                    assert_eq!(v, i);
                }
            }
            let mut reals = vec![0f64; 5];
            assert_eq!(
                kpk_table_read_into(
                    t,
                    1,
                    50_095,
                    50_100,
                    reals.as_mut_ptr().cast(),
                    40,
                    null_mut(),
                    &mut has_nulls
                ),
                KPK_OK
            );
            assert_eq!(
                (reals, has_nulls),
                ((50_095..50_100).map(|i| i as f64 / 8.0).collect(), 0)
            );
            // Strings and dictionaries through the C data interface: equal to slicing.
            let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
            let cols = [3u32, 2];
            assert_eq!(
                kpk_table_read(t, cols.as_ptr(), 2, 4000, 9000, &mut schema, &mut array),
                KPK_OK
            );
            let data = from_ffi(array, &schema).unwrap();
            let got = StructArray::from(data);
            assert_eq!(got.column(0).to_data(), b.column(3).slice(4000, 5000).to_data());
            assert_eq!(got.column(1).to_data(), b.column(2).slice(4000, 5000).to_data());
            kpk_table_close(t);
        }
    }

    #[test]
    fn rows_by_number_through_the_c_api() {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
        let b = batch(20_000);
        let opts = kpk_table_options {
            threads: 2,
            rows_per_group: 1000,
            ..default_options()
        };
        let rows = [19_999u64, 5, 12_345, 5, 0, 10];
        unsafe {
            let (mut schema, mut array) = exported(&b);
            assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts), KPK_OK);
            let mut t = null_mut();
            assert_eq!(kpk_table_open_file(path.as_ptr(), 2, &mut t), KPK_OK);
            // Fixed width into caller memory, in the order asked, with validity.
            let mut ints = [0i32; 6];
            let mut validity = [0u8; 1];
            let mut has_nulls = 0;
            assert_eq!(
                kpk_table_take_into(
                    t,
                    0,
                    rows.as_ptr(),
                    rows.len(),
                    ints.as_mut_ptr().cast(),
                    24,
                    validity.as_mut_ptr(),
                    &mut has_nulls
                ),
                KPK_OK,
                "{}",
                last_error()
            );
            assert_eq!(has_nulls, 1);
            for (k, &r) in rows.iter().enumerate() {
                let valid = validity[0] >> k & 1 == 1;
                assert_eq!(valid, r % 5 != 0, "row {r}");
                if valid {
                    assert_eq!(ints[k], r as i32);
                }
            }
            // Every type as a struct array: equal to taking from the batch.
            let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
            assert_eq!(
                kpk_table_take(t, null(), 0, rows.as_ptr(), rows.len(), &mut schema, &mut array),
                KPK_OK
            );
            let got = StructArray::from(from_ffi(array, &schema).unwrap());
            let indices = arrow_array::UInt64Array::from(rows.to_vec());
            for c in 0..4 {
                let want = arrow_select::take::take(b.column(c).as_ref(), &indices, None).unwrap();
                assert_eq!(got.column(c).as_ref(), want.as_ref(), "column {c}");
            }
            // No rows; a row past the end; a column that is not fixed-width; a short buffer.
            let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
            assert_eq!(
                kpk_table_take(t, [2u32].as_ptr(), 1, null(), 0, &mut schema, &mut array),
                KPK_OK
            );
            assert_eq!(StructArray::from(from_ffi(array, &schema).unwrap()).len(), 0);
            let past = [20_000u64];
            assert_eq!(
                kpk_table_take_into(
                    t,
                    0,
                    past.as_ptr(),
                    1,
                    ints.as_mut_ptr().cast(),
                    4,
                    null_mut(),
                    &mut has_nulls
                ),
                KPK_ERROR_OPTION
            );
            for (column, len) in [(2u32, 4usize), (3, 4), (0, 8), (9, 4)] {
                assert_eq!(
                    kpk_table_take_into(
                        t,
                        column,
                        rows.as_ptr(),
                        1,
                        ints.as_mut_ptr().cast(),
                        len,
                        null_mut(),
                        &mut has_nulls
                    ),
                    KPK_ERROR_USAGE,
                    "column {column}, {len} bytes"
                );
            }
            kpk_table_close(t);
        }
    }

    #[test]
    fn bad_batches_handles_and_ranges_are_errors_with_messages() {
        let dir = tempfile::tempdir().unwrap();
        let path = CString::new(dir.path().join("t.kpk").to_str().unwrap()).unwrap();
        unsafe {
            assert_eq!(
                kpk_table_write(path.as_ptr(), null_mut(), null_mut(), null()),
                KPK_ERROR_USAGE
            );
            // A plain array is not a batch of columns.
            let (mut array, mut schema) = to_ffi(&Int32Array::from(vec![1, 2]).to_data()).unwrap();
            assert_eq!(
                kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()),
                KPK_ERROR_OPTION
            );
            assert!(last_error().contains("struct array"), "{}", last_error());
            // A released array (moved already).
            let (mut schema, mut array) = exported(&batch(10));
            assert_eq!(kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()), KPK_OK);
            assert_eq!(
                kpk_table_write(path.as_ptr(), &mut schema, &mut array, null()),
                KPK_ERROR_USAGE
            );
            // A codec that does not exist names the valid ones.
            let bad = CString::new("zip").unwrap();
            let opts = kpk_table_options {
                codec: bad.as_ptr(),
                ..default_options()
            };
            let (mut schema, mut array) = exported(&batch(10));
            assert_eq!(
                kpk_table_write(path.as_ptr(), &mut schema, &mut array, &opts),
                KPK_ERROR_OPTION
            );
            assert!(last_error().contains("zstd"), "{}", last_error());

            let mut t = null_mut();
            assert_eq!(kpk_table_open_file(path.as_ptr(), 0, &mut t), KPK_OK);
            let mut v = [0i32; 4];
            let mut has_nulls = 0;
            assert_eq!(
                kpk_table_read_into(t, 0, 5, 4, v.as_mut_ptr().cast(), 0, null_mut(), &mut has_nulls),
                KPK_ERROR_OPTION
            );
            assert_eq!(
                kpk_table_read_into(t, 0, 0, 4, v.as_mut_ptr().cast(), 8, null_mut(), &mut has_nulls),
                KPK_ERROR_OPTION
            );
            assert_eq!(
                kpk_table_read_into(t, 2, 0, 4, v.as_mut_ptr().cast(), 16, null_mut(), &mut has_nulls),
                KPK_ERROR_OPTION
            );
            assert!(last_error().contains("fixed-width"), "{}", last_error());
            // A prefetch hint is checked as a read is; on a file it does nothing else.
            assert_eq!(kpk_table_prefetch(t, null(), 0, 0, 4), KPK_OK);
            assert_eq!(kpk_table_prefetch(t, [9u32].as_ptr(), 1, 0, 4), KPK_ERROR_OPTION);
            assert_eq!(kpk_table_prefetch(t, null(), 0, 3, 99), KPK_ERROR_OPTION);
            assert_eq!(
                kpk_table_read_into(t, 0, 0, 11, v.as_mut_ptr().cast(), 44, null_mut(), &mut has_nulls),
                KPK_ERROR_OPTION
            );
            assert_eq!(kpk_table_num_columns(t), 4);
            let (mut stored, mut encoded) = ([0u64; 4], [0u64; 4]);
            assert_eq!(
                kpk_table_column_sizes(t, stored.as_mut_ptr(), encoded.as_mut_ptr(), 3),
                KPK_ERROR_OPTION
            );
            assert_eq!(
                kpk_table_column_sizes(t, stored.as_mut_ptr(), encoded.as_mut_ptr(), 4),
                KPK_OK
            );
            assert!(stored.iter().chain(&encoded).all(|&b| b > 0), "{stored:?} {encoded:?}");
            kpk_table_close(t);
            kpk_table_close(null_mut());
            assert_eq!(kpk_table_num_rows(null()), 0);

            // A damaged file in memory is refused, not read.
            let mut bytes = std::fs::read(dir.path().join("t.kpk")).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x10;
            let mut t = null_mut();
            let status = kpk_table_open_memory(bytes.as_ptr().cast(), bytes.len(), 1, &mut t);
            if status == KPK_OK {
                let (mut schema, mut array) = (FFI_ArrowSchema::empty(), FFI_ArrowArray::empty());
                assert_eq!(
                    kpk_table_read(t, null(), 0, 0, 10, &mut schema, &mut array),
                    KPK_ERROR_CORRUPT
                );
                kpk_table_close(t);
            } else {
                assert_eq!(status, KPK_ERROR_CORRUPT);
            }
        }
    }
}
