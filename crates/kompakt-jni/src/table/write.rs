//! `KompaktTableWriter` and `TableWriteOptions`: table files written from Arrow batches,
//! atomically, with the options every front end checks the same way (kompakt-api's
//! `TableArgs`).

use super::ffi::{self, jlong_of, strings};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use crate::options::given;
use arrow_array::{make_array, RecordBatch, RecordBatchOptions};
use arrow_data::transform::MutableArrayData;
use jni::objects::{JClass, JIntArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::JNIEnv;
use kompakt_api::options::TableArgs;
use kompakt_fs::AtomicFile;
use kompakt_table::{append_table_file, SortKey, TableOptions, TableWriter};
use std::collections::HashMap;
use std::sync::Arc;

fn options_of(handle: jlong) -> Result<TableOptions, Failure> {
    if handle == 0 {
        return Ok(TableOptions::default());
    }
    Ok(handle::shared::<TableOptions>(handle, "table options")?.clone())
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_tableOptionsNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    codec: JString<'l>,
    level: jlong,
    string_codec: JString<'l>,
    threads: jlong,
    rows_per_group: jlong,
    sort_columns: JObjectArray<'l>,
    sort_flags: JIntArray<'l>,
    metadata: JObjectArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let codec = crate::bytes::string(env, &codec)?;
        let string_codec = crate::bytes::string(env, &string_codec)?;
        let columns = strings(env, &sort_columns, "sort column")?;
        let flags = match ffi::positions(env, &sort_flags)? {
            Some(f) => f,
            None => vec![0; columns.len()],
        };
        if flags.len() != columns.len() {
            return Err(Failure::usage(format!(
                "{} sort columns and {} sort flags",
                columns.len(),
                flags.len()
            )));
        }
        let pairs = strings(env, &metadata, "metadata entry")?;
        if pairs.len() % 2 != 0 {
            return Err(Failure::usage("metadata comes as key, value pairs"));
        }
        let args = TableArgs {
            codec: codec.as_deref(),
            level: given(level),
            string_codec: string_codec.as_deref(),
            threads: given(threads),
            rows_per_group: given(rows_per_group),
            sorted_by: columns
                .into_iter()
                .zip(flags)
                .map(|(column, f)| SortKey {
                    column,
                    descending: f & 1 != 0,
                    nulls_first: f & 2 != 0,
                })
                .collect(),
            metadata: pairs
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv[1].clone()))
                .collect::<HashMap<_, _>>(),
            // The process default ($KOMPAKT_SYNC, else none): the JVM takes no sync option yet.
            sync: None,
        };
        Ok(into_handle(args.build()?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableOptionsFree<'l>(_env: JNIEnv<'l>, _: JClass<'l>, options: jlong) {
    handle::free::<TableOptions>(options);
}

/// A table being written to a temporary file beside its target.
pub(crate) struct OpenWriter {
    /// None once finished.
    writer: Option<TableWriter<AtomicFile>>,
    name: String,
}

fn writer<'a>(handle: jlong) -> Result<&'a mut OpenWriter, Failure> {
    handle::get::<OpenWriter>(handle, "table writer")
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableWriterOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    schema_address: jlong,
    options: jlong,
) -> jlong {
    run(&mut env, 0, |env| {
        // The schema is moved in first, so that it is released whatever fails next.
        let schema = ffi::import_schema(schema_address);
        let text = crate::bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let schema = Arc::new(schema.map_err(|e| e.named(&text))?);
        let target = kompakt_api::location::for_writing(&text).map_err(|e| Failure::from(e).named(&text))?;
        let opts = options_of(options)?;
        let file = AtomicFile::create(&target).map_err(|e| Failure::from(e).named(&text))?;
        let writer = TableWriter::new(file, schema, opts).map_err(|e| Failure::from(e).named(&text))?;
        Ok(into_handle(OpenWriter {
            writer: Some(writer),
            name: text,
        }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableWriterWrite<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    w: jlong,
    schema_address: jlong,
    array_address: jlong,
) -> jlong {
    run(&mut env, -1, |_| {
        let batch = ffi::import_batch(schema_address, array_address);
        let w = writer(w)?;
        // The writer keeps the rows of unfinished row groups (up to a round of groups) between
        // calls, and Java reuses a batch's buffers as soon as the call returns (Spark's
        // ArrowWriter, any VectorSchemaRoot refilled in a loop): the rows are copied out first.
        let batch = owned(&batch.map_err(|e| e.named(&w.name))?)?;
        let name = w.name.clone();
        let tw = w
            .writer
            .as_mut()
            .ok_or_else(|| Failure::usage(format!("{name}: the table writer is finished")))?;
        tw.write(&batch).map_err(|e| Failure::from(e).named(&name))?;
        Ok(jlong_of(tw.rows_written()))
    })
}

/// A copy of `batch` in memory of its own (Rust's), nested children and dictionaries included.
fn owned(batch: &RecordBatch) -> Result<RecordBatch, Failure> {
    let internal = |e: arrow_schema::ArrowError| Failure::new(kompakt::ErrorKind::Internal, e.to_string());
    let columns = batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data();
            let mut copy = MutableArrayData::new(vec![&data], false, data.len());
            copy.try_extend(0, 0, data.len()).map_err(internal)?;
            Ok(make_array(copy.freeze()))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(batch.schema(), columns, &opts).map_err(internal)
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableWriterFinish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    w: jlong,
) -> jlong {
    run(&mut env, -1, |_| {
        let w = writer(w)?;
        let name = w.name.clone();
        let tw = w
            .writer
            .take()
            .ok_or_else(|| Failure::usage(format!("{name}: the table writer is finished")))?;
        let rows = tw.rows_written();
        let file = tw.finish().map_err(|e| Failure::from(e).named(&name))?;
        file.commit().map_err(|e| Failure::from(e).named(&name))?;
        Ok(jlong_of(rows))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableWriterFree<'l>(_env: JNIEnv<'l>, _: JClass<'l>, w: jlong) {
    // An unfinished writer's temporary file is removed when its AtomicFile drops.
    handle::free::<OpenWriter>(w);
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_tableAppend<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    schema_address: jlong,
    array_address: jlong,
    options: jlong,
) -> jlong {
    run(&mut env, -1, |env| {
        let batch = ffi::import_batch(schema_address, array_address);
        let text = crate::bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let batch = batch.map_err(|e| e.named(&text))?;
        let target = kompakt_api::location::for_writing(&text).map_err(|e| Failure::from(e).named(&text))?;
        let opts = options_of(options)?;
        let rows = append_table_file(&target, [Ok(batch)], opts).map_err(|e| Failure::from(e).named(&text))?;
        Ok(jlong_of(rows))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::{Array, ArrayRef, DictionaryArray, ListArray};
    use std::sync::Arc;

    #[test]
    fn an_owned_copy_shares_no_buffer_and_equals_the_original() {
        let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
        ]));
        let dict: ArrayRef = Arc::new(
            vec![Some("a"), None, Some("b")]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>(),
        );
        let batch = RecordBatch::try_from_iter([("l", list), ("d", dict)]).unwrap();
        let sliced = batch.slice(1, 2);
        let copy = owned(&sliced).unwrap();
        assert_eq!(copy, sliced);
        for (a, b) in copy.columns().iter().zip(sliced.columns()) {
            let (a, b) = (a.to_data(), b.to_data());
            for (x, y) in a.buffers().iter().zip(b.buffers()) {
                assert_ne!(x.as_ptr(), y.as_ptr(), "a buffer is shared");
            }
        }
        assert_eq!(copy.column(1).as_any_dictionary().values().len(), 2);
    }
}
