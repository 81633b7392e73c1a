//! Arrow data across the boundary (the C data interface, addresses of Java's `ArrowSchema` and
//! `ArrowArray` structs) and the Java arrays the table calls take and return.

use crate::error::Failure;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Schema};
use jni::objects::{JIntArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::JNIEnv;

/// A pointer to a C data interface struct Java allocated, checked not to be 0.
fn address<T>(address: jlong, what: &str) -> Result<*mut T, Failure> {
    if address == 0 {
        return Err(Failure::usage(format!("the {what} address is 0")));
    }
    Ok(address as *mut T)
}

/// Takes the schema Java exported at `schema_address`: moved (the struct is left released, as
/// the C data interface moves what a consumer imports).
pub(crate) fn import_schema(schema_address: jlong) -> Result<Schema, Failure> {
    let ptr = address::<FFI_ArrowSchema>(schema_address, "ArrowSchema")?;
    // SAFETY: Java passes the address of an ArrowSchema struct it exported into (Native.java's
    // contract); from_raw moves it out and marks the original released, so it is released once.
    let schema = unsafe { FFI_ArrowSchema::from_raw(ptr) };
    Schema::try_from(&schema).map_err(|e| Failure::option(format!("the Arrow schema: {e}")))
}

/// Takes an array Java exported (both structs moved) and checks every buffer before use.
pub(crate) fn import_array(schema_address: jlong, array_address: jlong) -> Result<ArrayRef, Failure> {
    let schema_ptr = address::<FFI_ArrowSchema>(schema_address, "ArrowSchema")?;
    let array_ptr = address::<FFI_ArrowArray>(array_address, "ArrowArray")?;
    // SAFETY: both addresses are of C data interface structs Java exported into (the contract);
    // from_raw moves each out, leaving the originals released; the array's release callback
    // runs when its imported buffers are dropped.
    let (schema, array) = unsafe {
        (
            FFI_ArrowSchema::from_raw(schema_ptr),
            FFI_ArrowArray::from_raw(array_ptr),
        )
    };
    if array.is_released() {
        return Err(Failure::usage("the ArrowArray is released"));
    }
    // SAFETY: the producer's buffers match the schema's types and lengths (the contract of every
    // C data interface producer); validate_full checks offsets, UTF-8, dictionary keys and
    // lengths before any of it is read, so a producer's mistake is an error, not a bad read.
    let data = unsafe { from_ffi(array, &schema) }.map_err(|e| Failure::option(format!("the Arrow array: {e}")))?;
    data.validate_full()
        .map_err(|e| Failure::option(format!("the columns are not valid Arrow data: {e}")))?;
    Ok(make_array(data))
}

/// A batch Java exported: a struct array whose children are the columns.
pub(crate) fn import_batch(schema_address: jlong, array_address: jlong) -> Result<RecordBatch, Failure> {
    let array = import_array(schema_address, array_address)?;
    if !matches!(array.data_type(), DataType::Struct(_)) {
        return Err(Failure::option(format!(
            "a batch is a struct array of its columns, got {}",
            array.data_type()
        )));
    }
    let columns = StructArray::from(array.to_data());
    if columns.null_count() > 0 {
        return Err(Failure::option("the struct array of the columns has null rows"));
    }
    Ok(RecordBatch::from(columns))
}

/// Exports `batch` as a struct array into the structs Java allocated (which Java then imports).
pub(crate) fn export_batch(batch: RecordBatch, schema_address: jlong, array_address: jlong) -> Result<(), Failure> {
    export_array(&StructArray::from(batch), schema_address, array_address)
}

pub(crate) fn export_array(array: &dyn Array, schema_address: jlong, array_address: jlong) -> Result<(), Failure> {
    let schema_ptr = address::<FFI_ArrowSchema>(schema_address, "ArrowSchema")?;
    let array_ptr = address::<FFI_ArrowArray>(array_address, "ArrowArray")?;
    let (ffi_array, ffi_schema) =
        to_ffi(&array.to_data()).map_err(|e| Failure::new(kompakt::ErrorKind::Internal, e.to_string()))?;
    // SAFETY: the addresses are of writable ArrowArray/ArrowSchema structs Java allocated for
    // this call and owns (the contract); whatever they held is not ours to drop, so the new
    // values are written over them without dropping.
    unsafe {
        array_ptr.write(ffi_array);
        schema_ptr.write(ffi_schema);
    }
    Ok(())
}

/// Exports a schema alone.
pub(crate) fn export_schema(schema: &Schema, schema_address: jlong) -> Result<(), Failure> {
    let ptr = address::<FFI_ArrowSchema>(schema_address, "ArrowSchema")?;
    let ffi =
        FFI_ArrowSchema::try_from(schema).map_err(|e| Failure::new(kompakt::ErrorKind::Internal, e.to_string()))?;
    // SAFETY: as in `export_array`.
    unsafe { ptr.write(ffi) };
    Ok(())
}

/// Column positions (null: all columns).
pub(crate) fn positions(env: &mut JNIEnv<'_>, columns: &JIntArray<'_>) -> Result<Option<Vec<usize>>, Failure> {
    if columns.is_null() {
        return Ok(None);
    }
    let n = env.get_array_length(columns)? as usize;
    let mut raw = vec![0; n];
    env.get_int_array_region(columns, 0, &mut raw)?;
    raw.into_iter()
        .map(|c| usize::try_from(c).map_err(|_| Failure::option(format!("column {c}: positions are not negative"))))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A `long[]` (null: empty).
pub(crate) fn longs(env: &mut JNIEnv<'_>, values: &JLongArray<'_>) -> Result<Vec<i64>, Failure> {
    if values.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(values)? as usize;
    let mut raw = vec![0; n];
    env.get_long_array_region(values, 0, &mut raw)?;
    Ok(raw)
}

/// A `String[]` (null: empty); a null element is an error naming `what`.
pub(crate) fn strings(env: &mut JNIEnv<'_>, values: &JObjectArray<'_>, what: &str) -> Result<Vec<String>, Failure> {
    if values.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(values)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s = JString::from(env.get_object_array_element(values, i)?);
        let text = crate::bytes::string(env, &s)?.ok_or_else(|| Failure::option(format!("{what} {i} is null")))?;
        env.delete_local_ref(s)?;
        out.push(text);
    }
    Ok(out)
}

/// A Java `String[]`.
pub(crate) fn new_strings<'l>(
    env: &mut JNIEnv<'l>,
    values: impl ExactSizeIterator<Item = impl AsRef<str>>,
) -> Result<JObjectArray<'l>, Failure> {
    let out = env.new_object_array(values.len() as i32, "java/lang/String", JObject::null())?;
    for (i, v) in values.enumerate() {
        let s = env.new_string(v.as_ref())?;
        env.set_object_array_element(&out, i as i32, &s)?;
        env.delete_local_ref(s)?;
    }
    Ok(out)
}

/// A Java `long[]`.
pub(crate) fn new_longs<'l>(env: &mut JNIEnv<'l>, values: &[i64]) -> Result<JLongArray<'l>, Failure> {
    let out = env.new_long_array(values.len() as i32)?;
    env.set_long_array_region(&out, 0, values)?;
    Ok(out)
}

/// A row count or position from Java: not negative.
pub(crate) fn row(n: jlong, what: &str) -> Result<u64, Failure> {
    u64::try_from(n).map_err(|_| Failure::option(format!("{what} {n}: rows are not negative")))
}

/// Rows `from..to`, checked in order.
pub(crate) fn rows(from: jlong, to: jlong) -> Result<std::ops::Range<u64>, Failure> {
    let (from, to) = (row(from, "row")?, row(to, "row")?);
    if from > to {
        return Err(Failure::option(format!("rows {from}..{to}: the start is past the end")));
    }
    Ok(from..to)
}

/// A count for Java's `long` (row and byte counts fit: they are far below 2^63).
pub(crate) fn jlong_of(n: u64) -> jlong {
    jlong::try_from(n).unwrap_or(jlong::MAX)
}
