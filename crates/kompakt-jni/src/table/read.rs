//! `KompaktTable`: a table file open for reading, its description, planned and filtered reads.

use super::ffi::{self, export_batch, jlong_of, longs, new_longs, new_strings, positions, rows, strings};
use super::portable::{portable_batch, portable_schema};
use crate::bytes::{direct, disjoint, view_mut};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, StructArray, UInt64Array};
use arrow_schema::{DataType, Field};
use jni::objects::{JByteBuffer, JClass, JIntArray, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jintArray, jlong, jlongArray, jobjectArray, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;
use kompakt_api::location::Location;
use kompakt_table::{Filter, Op, TableReader};
use std::sync::Arc;

pub(crate) struct OpenTable {
    reader: TableReader,
    /// The path or URL, for messages.
    name: String,
    threads: usize,
}

impl OpenTable {
    fn named(&self, e: kompakt::Error) -> Failure {
        Failure::from(e).named(&self.name)
    }

    /// The columns' bytes as read: stored types, or portable ones.
    fn finish(&self, batch: RecordBatch, portable: jboolean) -> Result<RecordBatch, Failure> {
        if portable == JNI_FALSE {
            return Ok(batch);
        }
        portable_batch(batch, &self.name)
    }

    /// Rows `rows` of `columns` as one batch (chunks of a column concatenated).
    fn read(&self, columns: Option<&[usize]>, rows: std::ops::Range<u64>) -> Result<RecordBatch, Failure> {
        kompakt_api::table::read_rows(&self.reader, columns, rows, self.threads).map_err(|e| self.named(e))
    }

    /// Filters from Java's parallel arrays, their values moved in (every value array is taken
    /// first, so that each is released whatever the call does).
    fn filters(
        &self,
        env: &mut JNIEnv<'_>,
        columns: &JObjectArray<'_>,
        ops: &JObjectArray<'_>,
        value_schemas: &JLongArray<'_>,
        value_arrays: &JLongArray<'_>,
    ) -> Result<Vec<Filter>, Failure> {
        let schemas = longs(env, value_schemas)?;
        let arrays = longs(env, value_arrays)?;
        if schemas.len() != arrays.len() {
            return Err(Failure::usage("a filter needs one ArrowSchema and one ArrowArray"));
        }
        let values: Vec<Result<ArrayRef, Failure>> = schemas
            .iter()
            .zip(&arrays)
            .map(|(&s, &a)| ffi::import_array(s, a))
            .collect();
        let columns = strings(env, columns, "filter column")?;
        let ops = strings(env, ops, "filter op")?;
        if columns.len() != values.len() || ops.len() != values.len() {
            return Err(Failure::usage(format!(
                "{} filter columns, {} ops and {} value arrays",
                columns.len(),
                ops.len(),
                values.len()
            )));
        }
        columns
            .into_iter()
            .zip(ops)
            .zip(values)
            .map(|((column, op), values)| {
                let op: Op = op.parse().map_err(|e: kompakt::Error| self.named(e))?;
                Ok(Filter::new(column, op, values?))
            })
            .collect()
    }
}

fn internal(e: arrow_schema::ArrowError) -> Failure {
    Failure::new(kompakt::ErrorKind::Internal, e.to_string())
}

fn table<'a>(handle: jlong) -> Result<&'a mut OpenTable, Failure> {
    handle::get::<OpenTable>(handle, "table")
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableList<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    location: JString<'l>,
) -> jobjectArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let text = crate::bytes::string(env, &location)?.ok_or_else(|| Failure::option("the location is null"))?;
        let found = kompakt_api::location::table_files(&text).map_err(|e| Failure::from(e).named(&text))?;
        Ok(new_strings(env, found.iter())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    threads: jlong,
) -> jlong {
    run(&mut env, 0, |env| {
        let text = crate::bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let threads = kompakt_api::options::threads(threads)?;
        let source = kompakt_api::location::open_for_reading(&text).map_err(|e| Failure::from(e).named(&text))?;
        let name = source.name.clone();
        let reader = match &source.location {
            // The index of a local file is cached between opens (until the file changes): each
            // Spark task opens its file again.
            Location::Local(path) => TableReader::open_cached(path),
            // Only the footer and the index are fetched now; pages when they are read.
            Location::Remote(_) => TableReader::from_source(source.file),
        }
        .map_err(|e| Failure::from(e).named(&name))?;
        Ok(into_handle(OpenTable { reader, name, threads }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableSizes<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
) -> jlongArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let t = table(t)?;
        let r = &t.reader;
        let sizes = [
            r.num_rows(),
            u64::from(r.rows_per_group()),
            r.num_groups(),
            r.file_len(),
        ]
        .map(jlong_of);
        Ok(new_longs(env, &sizes)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableSchema<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    portable: jboolean,
    schema_address: jlong,
) {
    run(&mut env, (), |_| {
        let t = table(t)?;
        let schema = t.reader.schema();
        if portable == JNI_FALSE {
            return ffi::export_schema(&schema, schema_address);
        }
        ffi::export_schema(&portable_schema(&schema, &t.name)?, schema_address)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableMetadata<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
) -> jobjectArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let t = table(t)?;
        let mut pairs: Vec<(&String, &String)> = t.reader.user_metadata().iter().collect();
        pairs.sort();
        let flat: Vec<&str> = pairs.into_iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]).collect();
        Ok(new_strings(env, flat.iter())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableSortColumns<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
) -> jobjectArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let keys = table(t)?.reader.sorted_by().to_vec();
        Ok(new_strings(env, keys.iter().map(|k| k.column.as_str()))?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableSortFlags<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
) -> jintArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let flags: Vec<jint> = table(t)?
            .reader
            .sorted_by()
            .iter()
            .map(|k| jint::from(k.descending) | (jint::from(k.nulls_first) << 1))
            .collect();
        let out = env.new_int_array(flags.len() as i32)?;
        env.set_int_array_region(&out, 0, &flags)?;
        Ok(out.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableColumnSizes<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
) -> jlongArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let sizes: Vec<jlong> = table(t)?
            .reader
            .summary()
            .iter()
            .flat_map(|c| [jlong_of(c.stored), jlong_of(c.encoded)])
            .collect();
        Ok(new_longs(env, &sizes)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableStatistics<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    column: jint,
    schema_address: jlong,
    array_address: jlong,
) -> jboolean {
    run(&mut env, JNI_FALSE, |_| {
        let t = table(t)?;
        let c = column_position(&t.reader, column)?;
        let Some(stats) = t.reader.statistics(c).map_err(|e| t.named(e))? else {
            return Ok(JNI_FALSE);
        };
        let groups = stats.null_counts.len();
        let bound = |b: Option<ArrayRef>| b.unwrap_or_else(|| new_null_array(&DataType::Null, groups));
        let (min, max) = (bound(stats.min), bound(stats.max));
        let fields = vec![
            Field::new("null_count", DataType::UInt64, false),
            Field::new("min", min.data_type().clone(), true),
            Field::new("max", max.data_type().clone(), true),
        ];
        let nulls: ArrayRef = Arc::new(UInt64Array::from(stats.null_counts));
        let array = StructArray::try_new(fields.into(), vec![nulls, min, max], None).map_err(internal)?;
        ffi::export_array(&array, schema_address, array_address)?;
        Ok(JNI_TRUE)
    })
}

fn column_position(reader: &TableReader, column: jint) -> Result<usize, Failure> {
    let n = reader.schema().fields().len();
    usize::try_from(column)
        .ok()
        .filter(|&c| c < n)
        .ok_or_else(|| Failure::option(format!("column {column} of a table of {n} columns")))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tablePlan<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    from: jlong,
    to: jlong,
    columns: JObjectArray<'l>,
    ops: JObjectArray<'l>,
    value_schemas: JLongArray<'l>,
    value_arrays: JLongArray<'l>,
) -> jlongArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let (t, filters) = table_and_filters(env, t, &columns, &ops, &value_schemas, &value_arrays)?;
        let planned = kompakt_table::plan::plan_rows(&t.reader, &filters, rows(from, to)?).map_err(|e| t.named(e))?;
        let flat: Vec<jlong> = planned
            .iter()
            .flat_map(|r| [jlong_of(r.start), jlong_of(r.end)])
            .collect();
        Ok(new_longs(env, &flat)?.into_raw())
    })
}

/// The table behind `handle` and the call's filters; the filters' values are moved in (and so
/// released) even when the handle is bad.
fn table_and_filters<'a>(
    env: &mut JNIEnv<'_>,
    handle: jlong,
    columns: &JObjectArray<'_>,
    ops: &JObjectArray<'_>,
    value_schemas: &JLongArray<'_>,
    value_arrays: &JLongArray<'_>,
) -> Result<(&'a mut OpenTable, Vec<Filter>), Failure> {
    let t = match table(handle) {
        Ok(t) => t,
        Err(e) => {
            release_all(env, value_schemas, value_arrays);
            return Err(e);
        }
    };
    let filters = t.filters(env, columns, ops, value_schemas, value_arrays)?;
    Ok((t, filters))
}

/// Moves in (and so releases) the filter values of a call that fails before reading them.
fn release_all(env: &mut JNIEnv<'_>, schemas: &JLongArray<'_>, arrays: &JLongArray<'_>) {
    if let (Ok(s), Ok(a)) = (longs(env, schemas), longs(env, arrays)) {
        for (s, a) in s.into_iter().zip(a) {
            let _ = ffi::import_array(s, a);
        }
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableRead<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    columns: JIntArray<'l>,
    from: jlong,
    to: jlong,
    portable: jboolean,
    schema_address: jlong,
    array_address: jlong,
) {
    run(&mut env, (), |env| {
        let t = table(t)?;
        let picked = positions(env, &columns)?;
        let batch = t.read(picked.as_deref(), rows(from, to)?)?;
        export_batch(t.finish(batch, portable)?, schema_address, array_address)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableReadWhere<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    columns: JIntArray<'l>,
    from: jlong,
    to: jlong,
    filter_columns: JObjectArray<'l>,
    ops: JObjectArray<'l>,
    value_schemas: JLongArray<'l>,
    value_arrays: JLongArray<'l>,
    portable: jboolean,
    schema_address: jlong,
    array_address: jlong,
) -> jlongArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let (t, filters) = table_and_filters(env, t, &filter_columns, &ops, &value_schemas, &value_arrays)?;
        let picked = positions(env, &columns)?;
        let (batch, stats) =
            kompakt_api::table::read_where(&t.reader, picked.as_deref(), rows(from, to)?, &filters, t.threads)
                .map_err(|e| t.named(e))?;
        export_batch(t.finish(batch, portable)?, schema_address, array_address)?;
        let figures = [stats.groups_read, stats.groups_total, stats.rows_scanned].map(jlong_of);
        Ok(new_longs(env, &figures)?.into_raw())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableTake<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    columns: JIntArray<'l>,
    row_numbers: JLongArray<'l>,
    portable: jboolean,
    schema_address: jlong,
    array_address: jlong,
) {
    run(&mut env, (), |env| {
        let t = table(t)?;
        let picked = positions(env, &columns)?;
        let wanted = longs(env, &row_numbers)?
            .into_iter()
            .map(|r| ffi::row(r, "row"))
            .collect::<Result<Vec<u64>, _>>()?;
        let (_, batch) = t
            .reader
            .take(picked.as_deref(), &wanted, t.threads)
            .map_err(|e| t.named(e))?;
        export_batch(t.finish(batch, portable)?, schema_address, array_address)
    })
}

/// Decodes rows of a fixed-width column into `dst`; the validity bitmap if some row is null.
/// A boolean column is one byte per row (0 or 1), as Spark's vectors keep booleans.
fn read_into(
    t: &OpenTable,
    column: jint,
    from: jlong,
    to: jlong,
    dst: &mut [u8],
) -> Result<Option<arrow_buffer::BooleanBuffer>, Failure> {
    let c = column_position(&t.reader, column)?;
    if t.reader.schema().field(c).data_type() == &DataType::Boolean {
        let range = rows(from, to)?;
        let n = (range.end - range.start) as usize;
        if dst.len() != n {
            return Err(Failure::usage(format!(
                "{n} rows of booleans need {n} bytes, not {}",
                dst.len()
            )));
        }
        let batch = t.read(Some(&[c]), range)?;
        let values = batch.column(0).as_boolean();
        for (d, v) in dst.iter_mut().zip(values.values().iter()) {
            *d = u8::from(v);
        }
        return Ok(values.nulls().map(|b| b.inner().clone()));
    }
    let bits = t
        .reader
        .read_column_into_with_validity(c, rows(from, to)?, dst, t.threads)
        .map_err(|e| t.named(e))?;
    Ok(bits.filter(|b| b.count_set_bits() < b.len()))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableReadInto<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    column: jint,
    from: jlong,
    to: jlong,
    dst: JByteBuffer<'l>,
    dst_pos: jint,
    dst_length: jint,
    validity: JByteBuffer<'l>,
    validity_pos: jint,
) -> jboolean {
    run(&mut env, JNI_FALSE, |env| {
        let t = table(t)?;
        let n = rows(from, to)?;
        let bitmap_len = ((n.end - n.start) as usize).div_ceil(8);
        let out = direct(env, &dst, dst_pos, dst_length)?;
        let bits = if validity.is_null() {
            None
        } else {
            let place = direct(env, &validity, validity_pos, crate::bytes::jint_of(bitmap_len)?)?;
            disjoint(out, place)?;
            Some(place)
        };
        // SAFETY: both places come from `direct` in this call and are disjoint (checked), so
        // these are the only views of their bytes.
        let (out, bits) = unsafe { (view_mut(out), bits.map(|b| view_mut(b))) };
        let nulls = read_into(t, column, from, to, out)?;
        if let Some(v) = bits {
            match &nulls {
                Some(b) => {
                    v.fill(0);
                    for (i, valid) in b.iter().enumerate() {
                        v[i / 8] |= u8::from(valid) << (i % 8);
                    }
                }
                None => v.fill(0xff),
            }
        }
        Ok(if nulls.is_some() { JNI_TRUE } else { JNI_FALSE })
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableReadIntoAddress<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    t: jlong,
    column: jint,
    from: jlong,
    to: jlong,
    dst_address: jlong,
    dst_length: jlong,
    nulls_address: jlong,
) -> jlong {
    run(&mut env, -1, |_| {
        let t = table(t)?;
        let n = rows(from, to)?;
        let count = (n.end - n.start) as usize;
        let len =
            usize::try_from(dst_length).map_err(|_| Failure::option(format!("a length of {dst_length} bytes")))?;
        if dst_address == 0 && len > 0 {
            return Err(Failure::usage("the destination address is 0"));
        }
        let apart = (dst_address as usize).checked_add(len).is_some()
            && (nulls_address == 0 || (nulls_address as usize).checked_add(count).is_some());
        if !apart {
            return Err(Failure::usage("the destination wraps around the address space"));
        }
        if nulls_address != 0 && count > 0 {
            disjoint((dst_address as *mut u8, len), (nulls_address as *mut u8, count))?;
        }
        let out: &mut [u8] = if len == 0 {
            &mut []
        } else {
            // SAFETY: Java passes `dst_length` bytes of writable memory at `dst_address` that
            // nothing else uses during the call (Native.java's contract: Spark's off-heap
            // vectors, Arrow buffers); not 0, not wrapping, and apart from the nulls (checked).
            unsafe { std::slice::from_raw_parts_mut(dst_address as *mut u8, len) }
        };
        let bits = read_into(t, column, from, to, out)?;
        if nulls_address != 0 && count > 0 {
            // SAFETY: as above, `count` bytes at `nulls_address` (one per row: the contract).
            let flags = unsafe { std::slice::from_raw_parts_mut(nulls_address as *mut u8, count) };
            match &bits {
                Some(b) => flags
                    .iter_mut()
                    .zip(b.iter())
                    .for_each(|(f, valid)| *f = u8::from(!valid)),
                None => flags.fill(0),
            }
        }
        Ok(bits.map_or(0, |b| jlong_of((b.len() - b.count_set_bits()) as u64)))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableClose<'l>(_env: JNIEnv<'l>, _: JClass<'l>, t: jlong) {
    handle::free::<OpenTable>(t);
}
