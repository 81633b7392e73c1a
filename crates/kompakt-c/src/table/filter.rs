//! Filtered reads: the rows of a table that pass some filters (`column op values`, the values
//! moved in through Arrow's C data interface), planned and read by the front door
//! (`kompakt_api::table::read_where`), as every front end reads them.

use super::read::{column_positions, kpk_table, row_range, table_ref};
use crate::ffi::{array_arg, put, required};
use crate::status::{about, guard, kpk_status, Failure};
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, StructArray};
use kompakt_table::{Filter, Op};
use std::ffi::c_char;

/// One filter of a filtered read (`kpk_filter` in the header): the rows where `column op
/// values` holds.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kpk_filter {
    /// The column's name (UTF-8).
    pub column: *const c_char,
    /// `"=="` (or `"="`), `"!="`, `"<"`, `"<="`, `">"`, `">="`, `"in"`, `"not in"`.
    pub op: *const c_char,
    /// The values' type; read, and left to the caller.
    pub values_schema: *mut FFI_ArrowSchema,
    /// The values: one for a comparison, any number for `in` and `not in`, of the column's
    /// type. Moved into the call (released whatever it returns).
    pub values: *mut FFI_ArrowArray,
}

/// Moves every filter's values out of the caller's structs first, so that each is released
/// whatever the call returns (as the C data interface moves arrays); then reads the filters.
fn import_filters(filters: *const kpk_filter, nfilters: usize) -> Result<Vec<Filter>, Failure> {
    let filters = array_arg(filters, nfilters, "filters")?;
    let moved: Vec<Option<FFI_ArrowArray>> = filters
        .iter()
        .map(|f| {
            if f.values.is_null() {
                return None;
            }
            // SAFETY: a non-NULL `values` points at an initialized ArrowArray (the header's
            // contract); it is moved out here, left released for the caller, and its release
            // callback runs when the imported buffers are dropped.
            Some(unsafe { FFI_ArrowArray::from_raw(f.values) })
        })
        .collect();
    filters
        .iter()
        .zip(moved)
        .enumerate()
        .map(|(i, (f, values))| {
            let what = |s: &str| format!("filter {i}: {s}");
            let column = required(f.column, &what("the column"))?;
            let op: Op = required(f.op, &what("the op"))?.parse()?;
            let values = values.ok_or_else(|| Failure::usage(what("the values are NULL")))?;
            if values.is_released() {
                return Err(Failure::usage(what("the values are released")));
            }
            if f.values_schema.is_null() {
                return Err(Failure::usage(what("the values' ArrowSchema is NULL")));
            }
            // SAFETY: `values_schema` points at an initialized ArrowSchema that stays the
            // caller's (the header's contract); it is only read.
            let schema = unsafe { &*f.values_schema };
            // SAFETY: the caller's buffers match the schema's type and length (the contract of
            // every C data interface producer); validate_full checks offsets, UTF-8,
            // dictionary keys and lengths before any of it is used.
            let data = unsafe { from_ffi(values, schema) }.map_err(|e| Failure::option(what(&e.to_string())))?;
            data.validate_full()
                .map_err(|e| Failure::option(what(&format!("the values are not valid Arrow data: {e}"))))?;
            Ok(Filter::new(column, op, make_array(data)))
        })
        .collect()
}

/// Reads the rows of `from..to` that pass every filter of `filters` (`nfilters` of them; none:
/// every row), of the columns `columns` (positions; all when `columns` is NULL), as one struct
/// array exported into `schema` and `array` for the caller to release, as [`kpk_table_read`]
/// exports a range.
///
/// # Safety
/// `table` is a live handle; `columns` is NULL or holds `ncolumns` readable positions;
/// `filters` holds `nfilters` readable filters whose strings are NUL-terminated and whose
/// values are initialized C data interface structs (each `values` is moved: released whatever
/// the result); `schema` and `array` point at writable memory for one struct each.
///
/// [`kpk_table_read`]: super::kpk_table_read
#[no_mangle]
pub unsafe extern "C" fn kpk_table_read_where(
    table: *const kpk_table,
    columns: *const u32,
    ncolumns: usize,
    from: u64,
    to: u64,
    filters: *const kpk_filter,
    nfilters: usize,
    schema: *mut FFI_ArrowSchema,
    array: *mut FFI_ArrowArray,
) -> kpk_status {
    guard(|| {
        let filters = import_filters(filters, nfilters);
        let t = table_ref(table)?;
        let filters = filters.map_err(about(&t.path))?;
        let rows = row_range(from, to)?;
        let picked = column_positions(columns, ncolumns)?;
        let (batch, _) = kompakt_api::table::read_where(&t.reader, picked.as_deref(), rows, &filters, t.threads)
            .map_err(about(&t.path))?;
        let batch = StructArray::from(batch);
        let (ffi_array, ffi_schema) = to_ffi(&batch.to_data()).map_err(Failure::internal)?;
        put(array, ffi_array)?;
        put(schema, ffi_schema)
    })
}
