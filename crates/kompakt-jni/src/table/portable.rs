//! "Portable" reads: the columns of a table in the types every Arrow Java consumer takes
//! (Spark's `ArrowColumnVector` included), converted once here rather than in each of them.
//!
//! Dictionaries are decoded to their values; unsigned integers widen to the next signed type
//! (uint64 to decimal(20, 0), which holds all of them); float16 becomes float32, date64 date32;
//! timestamps and durations are in microseconds (Spark's unit: nanoseconds are truncated toward
//! negative infinity, as Spark's own casts do); fixed-size binary becomes binary and large lists
//! lists (inside maps and structs too). Times of day have no such type and are refused, naming the column.

use crate::error::Failure;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BinaryArray, ListArray, MapArray, PrimitiveArray, RecordBatch, StructArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, TimeUnit};
use std::sync::Arc;

/// The portable type of `dt`, or why it has none.
pub(crate) fn portable_type(dt: &DataType) -> Result<DataType, String> {
    use DataType::*;
    Ok(match dt {
        Dictionary(_, values) => portable_type(values)?,
        UInt8 => Int16,
        UInt16 => Int32,
        UInt32 => Int64,
        UInt64 => Decimal128(20, 0),
        Float16 => Float32,
        Date64 => Date32,
        Timestamp(_, tz) => Timestamp(TimeUnit::Microsecond, tz.clone()),
        Duration(_) => Duration(TimeUnit::Microsecond),
        FixedSizeBinary(_) => Binary,
        List(item) | LargeList(item) => List(portable_field(item)?),
        Struct(fields) => Struct(fields.iter().map(portable_field).collect::<Result<Fields, _>>()?),
        Map(entries, sorted) => Map(portable_field(entries)?, *sorted),
        Time32(_) | Time64(_) => return Err(format!("{dt} (a time of day) has no portable type")),
        other => other.clone(),
    })
}

fn portable_field(f: &FieldRef) -> Result<FieldRef, String> {
    Ok(Arc::new(
        Field::new(f.name(), portable_type(f.data_type())?, f.is_nullable()).with_metadata(f.metadata().clone()),
    ))
}

/// The portable schema of `schema`, or an option error naming the first refused column.
pub(crate) fn portable_schema(schema: &Schema, name: &str) -> Result<Schema, Failure> {
    let fields = schema
        .fields()
        .iter()
        .map(|f| portable_field(f).map_err(|why| refused(name, f.name(), &why)))
        .collect::<Result<Fields, _>>()?;
    Ok(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn refused(name: &str, column: &str, why: &str) -> Failure {
    Failure::option(format!(
        "{name}: column {column:?}: {why}; read it with its stored types, or leave it out"
    ))
}

/// `batch` with every column converted to its portable type (a column already portable is
/// kept as it is, without a copy).
pub(crate) fn portable_batch(batch: RecordBatch, name: &str) -> Result<RecordBatch, Failure> {
    let schema = portable_schema(&batch.schema(), name)?;
    if schema.fields() == batch.schema().fields() {
        return Ok(batch);
    }
    let rows = batch.num_rows();
    let columns = batch
        .columns()
        .iter()
        .zip(batch.schema().fields())
        .map(|(c, f)| portable_array(c).map_err(|why| refused(name, f.name(), &why)))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(schema), columns, &opts)
        .map_err(|e| Failure::new(kompakt::ErrorKind::Internal, e.to_string()))
}

/// One array in its portable type.
pub(crate) fn portable_array(a: &ArrayRef) -> Result<ArrayRef, String> {
    use DataType::*;
    let target = portable_type(a.data_type())?;
    if &target == a.data_type() {
        return Ok(a.clone());
    }
    let fail = |e: arrow_schema::ArrowError| e.to_string();
    Ok(match a.data_type() {
        Dictionary(..) => {
            let d = a.as_any_dictionary();
            let plain = arrow_select::take::take(d.values().as_ref(), d.keys(), None).map_err(fail)?;
            portable_array(&plain)?
        }
        UInt8 => widen::<UInt8Type, Int16Type>(a, |v| v.into()),
        UInt16 => widen::<UInt16Type, Int32Type>(a, |v| v.into()),
        UInt32 => widen::<UInt32Type, Int64Type>(a, |v| v.into()),
        UInt64 => Arc::new(
            a.as_primitive::<UInt64Type>()
                .unary::<_, Decimal128Type>(i128::from)
                .with_precision_and_scale(20, 0)
                .map_err(fail)?,
        ),
        Float16 => widen::<Float16Type, Float32Type>(a, |v| v.to_f32()),
        Date64 => widen::<Date64Type, Date32Type>(a, |ms| ms.div_euclid(86_400_000) as i32),
        Timestamp(unit, tz) => {
            let micros = to_micros(a, unit)?;
            Arc::new(
                PrimitiveArray::<TimestampMicrosecondType>::new(micros, a.nulls().cloned())
                    .with_timezone_opt(tz.clone()),
            )
        }
        Duration(unit) => Arc::new(PrimitiveArray::<DurationMicrosecondType>::new(
            to_micros(a, unit)?,
            a.nulls().cloned(),
        )),
        FixedSizeBinary(_) => Arc::new(a.as_fixed_size_binary().iter().collect::<BinaryArray>()),
        List(_) => {
            let l = a.as_list::<i32>();
            list(l.offsets().clone(), l.values(), l.nulls().cloned(), &target)?
        }
        LargeList(_) => {
            let l = a.as_list::<i64>();
            // A batch's values fit i32 offsets unless the list holds over 2^31 values.
            let offsets = l
                .offsets()
                .iter()
                .map(|&o| i32::try_from(o).map_err(|_| format!("a list of more than {} values", i32::MAX)))
                .collect::<Result<Vec<i32>, _>>()?;
            list(
                OffsetBuffer::new(offsets.into()),
                l.values(),
                l.nulls().cloned(),
                &target,
            )?
        }
        Struct(_) => {
            let s = a.as_struct();
            let DataType::Struct(fields) = &target else {
                unreachable!("a struct's portable type is a struct")
            };
            let columns = s.columns().iter().map(portable_array).collect::<Result<Vec<_>, _>>()?;
            Arc::new(
                StructArray::try_new_with_length(fields.clone(), columns, s.nulls().cloned(), s.len()).map_err(fail)?,
            )
        }
        Map(..) => {
            let m = a.as_map();
            let DataType::Map(entries, sorted) = &target else {
                unreachable!("a map's portable type is a map")
            };
            let converted = portable_array(&(Arc::new(m.entries().clone()) as ArrayRef))?;
            Arc::new(
                MapArray::try_new(
                    entries.clone(),
                    m.offsets().clone(),
                    converted.as_struct().clone(),
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(fail)?,
            )
        }
        other => return Err(format!("{other} has no conversion")),
    })
}

fn list(
    offsets: OffsetBuffer<i32>,
    values: &ArrayRef,
    nulls: Option<arrow_buffer::NullBuffer>,
    target: &DataType,
) -> Result<ArrayRef, String> {
    let DataType::List(item) = target else {
        unreachable!("a list's portable type is a list")
    };
    let values = portable_array(values)?;
    Ok(Arc::new(
        ListArray::try_new(item.clone(), offsets, values, nulls).map_err(|e| e.to_string())?,
    ))
}

fn widen<F: ArrowPrimitiveType, T: ArrowPrimitiveType>(a: &ArrayRef, f: impl Fn(F::Native) -> T::Native) -> ArrayRef {
    Arc::new(a.as_primitive::<F>().unary::<_, T>(f))
}

/// The values of a timestamp or duration array (all of them int64) in microseconds; a value
/// out of range in microseconds (seconds past year 294,000) is an error, never a wrapped value.
fn to_micros(a: &ArrayRef, unit: &TimeUnit) -> Result<ScalarBuffer<i64>, String> {
    let data = a.to_data();
    let values: &[i64] = &data.buffer::<i64>(0)[..a.len()];
    let scaled: Vec<i64> = match unit {
        TimeUnit::Microsecond => values.to_vec(),
        TimeUnit::Nanosecond => values.iter().map(|v| v.div_euclid(1000)).collect(),
        TimeUnit::Millisecond | TimeUnit::Second => {
            let k = if *unit == TimeUnit::Second { 1_000_000 } else { 1000 };
            let valid = |i: usize| a.is_valid(i);
            values
                .iter()
                .enumerate()
                .map(|(i, v)| match v.checked_mul(k) {
                    Some(m) => Ok(m),
                    // A null row's value is whatever the writer left: not checked.
                    None if !valid(i) => Ok(0),
                    None => Err(format!("{v} {unit:?}s do not fit in microseconds")),
                })
                .collect::<Result<_, _>>()?
        }
    };
    Ok(scaled.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        Date64Array, DictionaryArray, DurationNanosecondArray, FixedSizeBinaryArray, Float16Array, Int32Array,
        LargeListArray, StringArray, Time32SecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray, UInt64Array, UInt8Array,
    };

    fn arc(a: impl Array + 'static) -> ArrayRef {
        Arc::new(a)
    }

    #[test]
    fn each_conversion_keeps_values_and_nulls() {
        let d: DictionaryArray<Int32Type> = vec![Some("a"), None, Some("b"), Some("a")].into_iter().collect();
        let got = portable_array(&arc(d)).unwrap();
        assert_eq!(
            got.as_string::<i32>(),
            &StringArray::from(vec![Some("a"), None, Some("b"), Some("a")])
        );

        let got = portable_array(&arc(UInt8Array::from(vec![Some(255), None]))).unwrap();
        assert_eq!(
            got.as_primitive::<Int16Type>(),
            &PrimitiveArray::<Int16Type>::from(vec![Some(255), None])
        );
        let got = portable_array(&arc(UInt64Array::from(vec![u64::MAX]))).unwrap();
        assert_eq!(got.data_type(), &DataType::Decimal128(20, 0));
        assert_eq!(got.as_primitive::<Decimal128Type>().value(0), u64::MAX as i128);

        let got = portable_array(&arc(Float16Array::from(vec![
            <Float16Type as ArrowPrimitiveType>::Native::from_f32(1.5),
        ])))
        .unwrap();
        assert_eq!(got.as_primitive::<Float32Type>().value(0), 1.5);
        let got = portable_array(&arc(Date64Array::from(vec![-1, 86_400_000]))).unwrap();
        assert_eq!(got.as_primitive::<Date32Type>().values(), &[-1, 1]);

        let ts = TimestampNanosecondArray::from(vec![Some(-1), Some(1_999), None]).with_timezone("UTC");
        let got = portable_array(&arc(ts)).unwrap();
        assert_eq!(
            got.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        let got = got.as_primitive::<TimestampMicrosecondType>();
        assert_eq!((got.value(0), got.value(1), got.is_null(2)), (-1, 1, true));
        let got = portable_array(&arc(TimestampMillisecondArray::from(vec![3]))).unwrap();
        assert_eq!(got.as_primitive::<TimestampMicrosecondType>().value(0), 3000);
        let got = portable_array(&arc(DurationNanosecondArray::from(vec![5_000]))).unwrap();
        assert_eq!(got.as_primitive::<DurationMicrosecondType>().value(0), 5);
        let e = portable_array(&arc(TimestampSecondArray::from(vec![i64::MAX]))).unwrap_err();
        assert!(e.contains("microseconds"), "{e}");

        let fsb = FixedSizeBinaryArray::try_from_sparse_iter_with_size(vec![Some(b"ab"), None].into_iter(), 2).unwrap();
        let got = portable_array(&arc(fsb)).unwrap();
        assert_eq!(got.as_binary::<i32>(), &BinaryArray::from(vec![Some(&b"ab"[..]), None]));

        let ll =
            LargeListArray::from_iter_primitive::<UInt8Type, _, _>(vec![Some(vec![Some(1), None]), None, Some(vec![])]);
        let got = portable_array(&arc(ll)).unwrap();
        let l = got.as_list::<i32>();
        assert_eq!(l.value_offsets(), &[0, 2, 2, 2]);
        assert!(l.is_null(1));
        assert_eq!(l.values().data_type(), &DataType::Int16);

        let mut m = arrow_array::builder::MapBuilder::new(
            None,
            arrow_array::builder::StringBuilder::new(),
            arrow_array::builder::UInt8Builder::new(),
        );
        m.keys().append_value("a");
        m.values().append_value(200);
        m.append(true).unwrap();
        m.append(false).unwrap();
        let got = portable_array(&arc(m.finish())).unwrap();
        let got = got.as_map();
        assert!(got.is_null(1));
        assert_eq!(got.values().as_primitive::<Int16Type>().value(0), 200);

        let plain = arc(Int32Array::from(vec![1, 2]));
        assert!(
            Arc::ptr_eq(&portable_array(&plain).unwrap(), &plain),
            "a portable column is not copied"
        );
    }

    #[test]
    fn times_of_day_are_refused_naming_the_column() {
        let t = arc(Time32SecondArray::from(vec![1]));
        let batch = RecordBatch::try_from_iter([("at", t)]).unwrap();
        let e = portable_batch(batch, "t.kpk").unwrap_err();
        assert!(
            matches!(&e, Failure::Kompakt { kind: kompakt::ErrorKind::Option, message } if message.contains("\"at\"") && message.contains("t.kpk")),
            "{e:?}"
        );
    }
}
