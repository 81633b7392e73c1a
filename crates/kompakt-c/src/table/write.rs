//! Writing table files: a record batch (a struct array of the columns) moved in through the C
//! data interface, written to a new file or appended to one.

use crate::ffi::{array_arg, path_arg, put_optional, required, text};
use crate::options::{level_arg, read_sized, SizedStruct};
use crate::status::{at, guard, kpk_status, Failure};
use arrow_array::ffi::{from_ffi, from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema};
use kompakt_api::options as api;
use kompakt_table::{append_table_file, validate_columns, write_table_file, SortKey, TableOptions};
use std::collections::HashMap;
use std::ffi::c_char;
use std::ffi::CStr;
use std::mem::size_of;
use std::sync::Arc;

/// How a table is written (`kpk_table_options` in the header): zero is the default in every
/// field.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kpk_table_options {
    /// `sizeof(kpk_table_options)` as the caller's header has it, or 0 for the first version.
    pub size: u32,
    /// 0: the table's defaults; `KPK_LEVEL_NONE`: raw pages; else as `kpk_write_options`.
    pub level: i32,
    /// A codec spec (`"zstd"`, `"lz4:3"`, ...) for every page; NULL: the table's defaults.
    pub codec: *const c_char,
    /// The codec of plain string and binary pages (a spec such as `"zstd:2"`); NULL: what
    /// `codec` gives them.
    pub string_codec: *const c_char,
    /// Encoding threads; 0: all cores.
    pub threads: i32,
    /// Rows per row group; 0: the default (16384).
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
    /// `"always"` (fsync the file) or `"none"` (atomic rename, no fsync); NULL: the default
    /// (`KOMPAKT_SYNC`, else `"none"`). Added to API version 2 after its first release.
    pub sync: *const c_char,
}

/// The struct's size in API version 2's first release, before `sync`.
const TABLE_OPTIONS_V2: usize = std::mem::offset_of!(kpk_table_options, sync);

impl SizedStruct for kpk_table_options {
    const NAME: &'static str = "kpk_table_options";
    const SIZES: &'static [usize] = &[TABLE_OPTIONS_V2, size_of::<kpk_table_options>()];

    fn zeroed() -> Self {
        use std::ptr::null;
        kpk_table_options {
            size: 0,
            level: 0,
            codec: null(),
            string_codec: null(),
            threads: 0,
            rows_per_group: 0,
            sort_columns: null(),
            sort_descending: null(),
            sort_nulls_first: null(),
            n_sort: 0,
            metadata_keys: null(),
            metadata_values: null(),
            n_metadata: 0,
            sync: null(),
        }
    }
}

/// The table's options from the caller's struct (NULL: every default), checked by the front
/// door as every front end's are ([`api::TableArgs`]).
fn table_options(opts: *const kpk_table_options) -> Result<TableOptions, Failure> {
    let o = read_sized(opts)?;
    let names = array_arg(o.sort_columns, o.n_sort, "sort_columns")?;
    let descending = array_arg(o.sort_descending, o.n_sort, "sort_descending")?;
    let nulls_first = array_arg(o.sort_nulls_first, o.n_sort, "sort_nulls_first")?;
    let sorted_by = (0..o.n_sort)
        .map(|i| {
            Ok(SortKey {
                column: required(names[i], "a sort column")?.to_owned(),
                descending: descending[i] != 0,
                nulls_first: nulls_first[i] != 0,
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let keys = array_arg(o.metadata_keys, o.n_metadata, "metadata_keys")?;
    let values = array_arg(o.metadata_values, o.n_metadata, "metadata_values")?;
    let metadata = (0..o.n_metadata)
        .map(|i| {
            Ok((
                required(keys[i], "a metadata key")?.to_owned(),
                required(values[i], "a metadata value")?.to_owned(),
            ))
        })
        .collect::<Result<HashMap<_, _>, Failure>>()?;
    let args = api::TableArgs {
        codec: text(o.codec, "codec")?,
        level: level_arg(o.level)?,
        string_codec: text(o.string_codec, "string_codec")?,
        threads: Some(i64::from(o.threads)),
        rows_per_group: (o.rows_per_group != 0).then_some(i64::from(o.rows_per_group)),
        sorted_by,
        metadata,
        sync: text(o.sync, "sync")?,
    };
    Ok(args.build()?)
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
    // that of every C data interface producer); validate_columns below checks offsets, UTF-8,
    // dictionary keys and lengths (on every core) before any of it is used, so a producer's
    // mistake becomes an error rather than an out-of-bounds read.
    let data = unsafe { from_ffi(array, schema) }.map_err(|e| Failure::option(e.to_string()))?;
    checked_batch(data)
}

/// A batch imported through the C data interface, as a record batch once checked: a struct
/// array of the columns, valid Arrow data (offsets, UTF-8, dictionary keys, lengths; on every
/// core), without null rows.
fn checked_batch(data: ArrayData) -> Result<RecordBatch, Failure> {
    let DataType::Struct(fields) = data.data_type() else {
        return Err(Failure::option(format!(
            "a table is written from a struct array of its columns, got {}",
            data.data_type()
        )));
    };
    data.validate_data()
        .map_err(|e| Failure::option(format!("the columns are not valid Arrow data: {e}")))?;
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    validate_columns(data.child_data(), &names, 0).map_err(|e| match e {
        kompakt::Error::Usage(message) => Failure::option(message),
        e => e.into(),
    })?;
    let columns = StructArray::from(data);
    if columns.null_count() > 0 {
        return Err(Failure::option("the struct array of the columns has null rows"));
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
        let opts = table_options(opts).map_err(at(&path))?;
        write_table_file(&path, batch.schema(), [Ok(batch)], opts).map_err(at(&path))?;
        Ok(())
    })
}

/// Writes a table file at `path` atomically from the record batches of an Arrow C stream.
/// Each batch is imported and checked as `get_next` gives it, and every complete round of
/// row groups (16 groups) is encoded before the next batch is asked for: a producer that
/// prepares batch k + 1 meanwhile (the R package converts columns so, in batches of whole
/// rounds) overlaps the two. The bytes are those of one batch of all the rows. A failing
/// `get_next` is `KPK_ERROR_OPTION` with the producer's message.
///
/// # Safety
/// `path` is a NUL-terminated string; `stream` an initialized C stream interface struct, moved
/// in (released whatever the result); `opts` is NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn kpk_table_write_stream(
    path: *const c_char,
    stream: *mut FFI_ArrowArrayStream,
    opts: *const kpk_table_options,
) -> kpk_status {
    guard(|| {
        if stream.is_null() {
            return Err(Failure::usage("the ArrowArrayStream is NULL"));
        }
        // SAFETY: `stream` points at an initialized stream struct (the header's contract); it is
        // moved out, and dropping `stream` calls its release callback once.
        let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(stream) };
        let path = path_arg(path)?;
        let opts = table_options(opts).map_err(at(&path))?;
        let schema = stream_schema(&mut stream).map_err(at(&path))?;
        let fields = DataType::Struct(schema.fields().clone());
        let mut failure = None;
        let batches = std::iter::from_fn(|| {
            if failure.is_some() {
                return None;
            }
            match next_batch(&mut stream, &fields) {
                Ok(batch) => batch.map(Ok),
                Err(f) => {
                    let message = f.1.clone();
                    failure = Some(f);
                    Some(Err(kompakt::Error::Usage(message)))
                }
            }
        });
        let written = write_table_file(&path, schema, batches, opts);
        if let Some(f) = failure {
            return Err(f).map_err(at(&path));
        }
        written.map_err(at(&path))?;
        Ok(())
    })
}

/// The stream's schema: a struct of the columns, as `kpk_table_write`'s batch.
fn stream_schema(stream: &mut FFI_ArrowArrayStream) -> Result<Arc<Schema>, Failure> {
    let get_schema = stream
        .get_schema
        .ok_or_else(|| Failure::usage("the ArrowArrayStream has no get_schema"))?;
    if stream.release.is_none() {
        return Err(Failure::usage("the ArrowArrayStream is released"));
    }
    let mut schema = FFI_ArrowSchema::empty();
    // SAFETY: the producer's callback, called as the C stream interface says.
    let code = unsafe { get_schema(stream, &mut schema) };
    if code != 0 {
        return Err(stream_failure(stream, code, "get_schema"));
    }
    let schema = Schema::try_from(&schema).map_err(|e| Failure::option(e.to_string()))?;
    Ok(Arc::new(schema))
}

/// The stream's next batch, checked as `kpk_table_write`'s; `None` at its end.
fn next_batch(stream: &mut FFI_ArrowArrayStream, fields: &DataType) -> Result<Option<RecordBatch>, Failure> {
    let get_next = stream
        .get_next
        .ok_or_else(|| Failure::usage("the ArrowArrayStream has no get_next"))?;
    let mut array = FFI_ArrowArray::empty();
    // SAFETY: the producer's callback, called as the C stream interface says; it moves a batch
    // (or a released array at the end) into `array`.
    let code = unsafe { get_next(stream, &mut array) };
    if code != 0 {
        return Err(stream_failure(stream, code, "get_next"));
    }
    if array.is_released() {
        return Ok(None);
    }
    // A batch of other columns than the schema's would trip arrow's assertions on import.
    let DataType::Struct(columns) = fields else {
        unreachable!("the stream's type is a struct of its schema's fields")
    };
    if array.num_children() != columns.len() {
        return Err(Failure::option(format!(
            "a batch of the ArrowArrayStream has {} columns, its schema {}",
            array.num_children(),
            columns.len()
        )));
    }
    // SAFETY: as in `import_batch`: the buffers match the stream's schema (the producer's
    // contract), and `checked_batch` validates them before any is used.
    let data = unsafe { from_ffi_and_data_type(array, fields.clone()) }.map_err(|e| Failure::option(e.to_string()))?;
    checked_batch(data).map(Some)
}

/// The producer's error: its message when it gives one, else its errno-style code.
fn stream_failure(stream: &mut FFI_ArrowArrayStream, code: i32, call: &str) -> Failure {
    let message = stream.get_last_error.and_then(|last| {
        // SAFETY: the producer's callback; a non-NULL result is a NUL-terminated string valid
        // until the next call on the stream.
        let text = unsafe { last(stream) };
        (!text.is_null()).then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
    });
    Failure::option(message.unwrap_or_else(|| format!("the ArrowArrayStream's {call} failed (code {code})")))
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
        let opts = table_options(opts).map_err(at(&path))?;
        let n = append_table_file(&path, [Ok(batch)], opts).map_err(at(&path))?;
        put_optional(rows, n)
    })
}
