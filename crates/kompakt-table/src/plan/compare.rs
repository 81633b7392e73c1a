//! Comparing a column's values (or its statistics' bounds) with a filter's values: floats as
//! IEEE 754 says (NaN compares with nothing, -0.0 equals 0.0), every other type by arrow-ord.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{make_array, Array, ArrayRef};
use arrow_ord::ord::make_comparator;
use arrow_schema::{DataType, SortOptions};
use kompakt::{Error, Result};
use std::cmp::Ordering;

/// The order of row `i` of a left array against row `j` of a right one: `None` when either is
/// null or NaN (they compare with nothing).
pub(crate) type Cmp<'a> = Box<dyn Fn(usize, usize) -> Option<Ordering> + 'a>;

/// The type a column's values have: a dictionary's value type, any other type itself.
pub(crate) fn plain_type(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(_, value) => value,
        dt => dt,
    }
}

/// Whether `dt` is a float type (whose NaN and signed zeros need care).
pub(crate) fn is_float(dt: &DataType) -> bool {
    matches!(dt, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// `array` with a dictionary's keys resolved to its values (other arrays as they are).
pub(crate) fn plain(array: &ArrayRef) -> Result<ArrayRef> {
    if !matches!(array.data_type(), DataType::Dictionary(..)) {
        return Ok(array.clone());
    }
    let d = array.as_any_dictionary();
    arrow_select::take::take(d.values().as_ref(), d.keys(), None)
        .map_err(|e| Error::Internal(format!("resolving a dictionary: {e}")))
}

/// A filter's `values` as an array of `column`'s plain type ([`plain_type`]): dictionaries
/// resolved, and a timestamp in another time zone (the same instants) given the column's.
/// `None` when they have another type.
pub(crate) fn values_for(column: &DataType, values: &ArrayRef) -> Result<Option<ArrayRef>> {
    let want = plain_type(column);
    let values = plain(values)?;
    if values.data_type() == want {
        return Ok(Some(values));
    }
    match (values.data_type(), want) {
        (DataType::Timestamp(unit, _), DataType::Timestamp(want_unit, _)) if unit == want_unit => {
            let data = values
                .to_data()
                .into_builder()
                .data_type(want.clone())
                .build()
                .map_err(|e| Error::Internal(format!("retyping a timestamp: {e}")))?;
            Ok(Some(make_array(data)))
        }
        _ => Ok(None),
    }
}

/// Row `i` of a float array as an f64 (any float width).
pub(crate) fn float_values(a: &dyn Array) -> Option<Box<dyn Fn(usize) -> f64 + '_>> {
    match a.data_type() {
        DataType::Float16 => {
            let v = a.as_primitive::<Float16Type>();
            Some(Box::new(move |i| v.value(i).to_f64()))
        }
        DataType::Float32 => {
            let v = a.as_primitive::<Float32Type>();
            Some(Box::new(move |i| f64::from(v.value(i))))
        }
        DataType::Float64 => {
            let v = a.as_primitive::<Float64Type>();
            Some(Box::new(move |i| v.value(i)))
        }
        _ => None,
    }
}

/// A comparison of `left`'s rows with `right`'s, which have the same plain type. With
/// `nan_high`, a NaN on the left is greater than every number on the right, +inf included
/// (where a sorted column puts it), and still compares with no NaN.
pub(crate) fn comparator<'a>(left: &'a dyn Array, right: &'a dyn Array, nan_high: bool) -> Result<Cmp<'a>> {
    if left.data_type() != right.data_type() {
        return Err(Error::Internal(format!(
            "comparing {} with {}",
            left.data_type(),
            right.data_type()
        )));
    }
    let (l_nulls, r_nulls) = (left.logical_nulls(), right.logical_nulls());
    let null = move |i: usize, j: usize| {
        l_nulls.as_ref().is_some_and(|n| n.is_null(i)) || r_nulls.as_ref().is_some_and(|n| n.is_null(j))
    };
    if let (Some(l), Some(r)) = (float_values(left), float_values(right)) {
        return Ok(Box::new(move |i, j| {
            if null(i, j) {
                return None;
            }
            let (x, y) = (l(i), r(j));
            if nan_high && x.is_nan() && !y.is_nan() {
                return Some(Ordering::Greater);
            }
            x.partial_cmp(&y)
        }));
    }
    let cmp = make_comparator(left, right, SortOptions::default())
        .map_err(|e| Error::Internal(format!("comparing {}: {e}", left.data_type())))?;
    Ok(Box::new(move |i, j| if null(i, j) { None } else { Some(cmp(i, j)) }))
}

/// Whether a filter can compare a column of type `dt`: a type with an order (numbers,
/// decimals, booleans, strings, binary, dates, times, timestamps, durations, intervals), or
/// a dictionary of one. Not nested types.
pub(crate) fn comparable(dt: &DataType) -> bool {
    let plain = plain_type(dt);
    if plain.is_nested()
        || matches!(
            plain,
            DataType::Null | DataType::Dictionary(..) | DataType::RunEndEncoded(..)
        )
    {
        return false;
    }
    let empty = arrow_array::new_empty_array(plain);
    comparator(empty.as_ref(), empty.as_ref(), false).is_ok()
        && arrow_ord::cmp::eq(&empty, &arrow_array::Scalar::new(arrow_array::new_null_array(plain, 1))).is_ok()
}
