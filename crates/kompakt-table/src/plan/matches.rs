//! Applying filters to rows read: which rows of a batch pass every filter.

use super::compare::{float_values, is_float, plain, plain_type};
use super::{resolve, Filter, Op, Resolved};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar};
use arrow_buffer::BooleanBuffer;
use kompakt::{Error, Result};

/// Which rows of `batch` pass every filter (true) and which do not (false; never null). The
/// batch holds the filters' columns by name (the others are not looked at), and the filters
/// are checked as [`super::check_filters`] checks them.
///
/// Rows compare as in Arrow's compute functions (and pyarrow's), with floats as IEEE 754 says:
/// - `==`, `!=`, `<`, `<=`, `>`, `>=`: a null row passes none, not even `!=`, and a null value
///   matches no row; NaN is neither less than, equal to nor greater than anything (so it
///   passes `!=` only), and -0.0 equals 0.0.
/// - `in`: the row equals one of the values, where a null value matches the null rows and a
///   NaN value the NaN rows; `not in`: the row passes `in` not (so a null row passes it,
///   unless the list holds a null).
pub fn matches(batch: &RecordBatch, filters: &[Filter]) -> Result<BooleanArray> {
    let resolved = resolve(batch.schema_ref(), filters)?;
    let mut keep = BooleanBuffer::new_set(batch.num_rows());
    for f in &resolved {
        keep = &keep & &mask(batch.column(f.column), f)?;
    }
    Ok(BooleanArray::new(keep, None))
}

fn kernel_error(e: arrow_schema::ArrowError) -> Error {
    Error::Internal(format!("comparing a column with a filter's value: {e}"))
}

/// True where a comparison is true, false where it is false or null.
fn definite(b: BooleanArray) -> BooleanBuffer {
    match b.nulls() {
        Some(n) => b.values() & n.inner(),
        None => b.values().clone(),
    }
}

/// The rows of `column` that pass `f`.
fn mask(column: &ArrayRef, f: &Resolved) -> Result<BooleanBuffer> {
    if is_float(plain_type(column.data_type())) {
        return Ok(float_mask(plain(column)?.as_ref(), f));
    }
    use arrow_ord::cmp;
    let value = |j: usize| Scalar::new(f.values.slice(j, 1));
    type Kernel = fn(
        &dyn arrow_array::Datum,
        &dyn arrow_array::Datum,
    ) -> std::result::Result<BooleanArray, arrow_schema::ArrowError>;
    let compare =
        |kernel: Kernel| -> Result<BooleanBuffer> { kernel(column, &value(0)).map(definite).map_err(kernel_error) };
    match f.op {
        Op::Eq => compare(cmp::eq),
        Op::Ne => compare(cmp::neq),
        Op::Lt => compare(cmp::lt),
        Op::Le => compare(cmp::lt_eq),
        Op::Gt => compare(cmp::gt),
        Op::Ge => compare(cmp::gt_eq),
        Op::In | Op::NotIn => {
            let mut hit = BooleanBuffer::new_unset(column.len());
            for j in 0..f.values.len() {
                let part = if f.values.is_null(j) {
                    match column.logical_nulls() {
                        Some(n) => !n.inner(),
                        None => continue,
                    }
                } else {
                    cmp::eq(column, &value(j)).map(definite).map_err(kernel_error)?
                };
                hit = &hit | &part;
            }
            Ok(if f.op == Op::In { hit } else { !&hit })
        }
    }
}

/// The rows of float `column` that pass `f`, compared as IEEE 754 says.
fn float_mask(column: &dyn Array, f: &Resolved) -> BooleanBuffer {
    let n = column.len();
    let (Some(x), Some(v)) = (float_values(column), float_values(f.values.as_ref())) else {
        unreachable!("float columns and values of their type")
    };
    let nulls = column.logical_nulls();
    let valid = |i: usize| nulls.as_ref().is_none_or(|b| b.is_valid(i));
    if !f.op.takes_list() {
        if f.values.is_null(0) {
            return BooleanBuffer::new_unset(n);
        }
        let v = v(0);
        let test: fn(f64, f64) -> bool = match f.op {
            Op::Eq => |a, b| a == b,
            Op::Ne => |a, b| a != b,
            Op::Lt => |a, b| a < b,
            Op::Le => |a, b| a <= b,
            Op::Gt => |a, b| a > b,
            Op::Ge => |a, b| a >= b,
            Op::In | Op::NotIn => unreachable!("lists are below"),
        };
        return BooleanBuffer::collect_bool(n, |i| valid(i) && test(x(i), v));
    }
    let list: Vec<f64> = (0..f.values.len()).filter(|&j| f.values.is_valid(j)).map(v).collect();
    let null_listed = f.values.null_count() > 0;
    let hit = |i: usize| {
        if !valid(i) {
            return null_listed;
        }
        let x = x(i);
        list.iter().any(|&v| x == v || (x.is_nan() && v.is_nan()))
    };
    BooleanBuffer::collect_bool(n, |i| hit(i) == (f.op == Op::In))
}
