//! Sort keys: the columns a table's rows are ordered by. They are recorded in the schema JSON
//! (docs/FORMAT.md, "Table schema (JSON)", `sorted_by`) and checked as rows are written, appends included, so a file
//! that names sort keys is sorted by them.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{new_empty_array, Array, ArrayRef, RecordBatch};
use arrow_ord::ord::{make_comparator, DynComparator};
use arrow_schema::{DataType, Schema, SortOptions};
use kompakt::{Error, Result};
use std::cmp::Ordering;
use std::fmt;

/// One sort key: a column, its direction, and where its nulls go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    /// Column name.
    pub column: String,
    /// Largest first.
    pub descending: bool,
    /// Nulls before every value (else after).
    pub nulls_first: bool,
}

impl SortKey {
    /// Ascending, nulls last (the default of pandas, pyarrow and SQL's `ASC`).
    pub fn ascending(column: impl Into<String>) -> Self {
        SortKey {
            column: column.into(),
            descending: false,
            nulls_first: false,
        }
    }

    /// Descending, nulls last.
    pub fn descending(column: impl Into<String>) -> Self {
        SortKey {
            descending: true,
            ..SortKey::ascending(column)
        }
    }

    fn options(&self) -> SortOptions {
        SortOptions {
            descending: self.descending,
            nulls_first: self.nulls_first,
        }
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {}, nulls {}",
            self.column,
            if self.descending { "descending" } else { "ascending" },
            if self.nulls_first { "first" } else { "last" }
        )
    }
}

/// Checks that rows arrive in the order of the sort keys, batch after batch.
#[derive(Debug, Default)]
pub(crate) struct SortCheck {
    keys: Vec<(usize, SortKey)>,
    /// The previous row's key values, as one-row slices.
    last: Option<Vec<ArrayRef>>,
}

impl SortCheck {
    /// Validates `keys` against `schema`: known, distinct columns of comparable types.
    pub fn new(schema: &Schema, keys: &[SortKey]) -> Result<Self> {
        let mut resolved: Vec<(usize, SortKey)> = Vec::with_capacity(keys.len());
        for key in keys {
            let index = schema.index_of(&key.column).map_err(|_| {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                Error::invalid(
                    "sort key",
                    key.column.clone(),
                    format!("a column of the table: {}", names.join(", ")),
                )
            })?;
            if resolved.iter().any(|(i, _)| *i == index) {
                return Err(Error::invalid(
                    "sort key",
                    key.column.clone(),
                    "each column once, but it is given twice",
                ));
            }
            let data_type = schema.field(index).data_type();
            let empty = new_empty_array(data_type);
            // Only whether a comparator exists matters here.
            let comparable = orderable(data_type) && comparator(&empty, &empty, key.options()).is_ok();
            if !comparable {
                return Err(Error::Usage(format!(
                    "column {:?} cannot be a sort key: its type {data_type} is not one of the orderable \
                     types (booleans, numbers, decimals, dates, times, timestamps, durations, strings, \
                     binary, and dictionaries of these but floats)",
                    key.column
                )));
            }
            resolved.push((index, key.clone()));
        }
        Ok(SortCheck {
            keys: resolved,
            last: None,
        })
    }

    /// The column indexes of the keys, in key order.
    pub fn columns(&self) -> Vec<usize> {
        self.keys.iter().map(|(i, _)| *i).collect()
    }

    /// Sets the row the next batch must not sort before (the key columns, one row each).
    pub fn set_last(&mut self, row: Vec<ArrayRef>) {
        self.last = Some(row);
    }

    /// Checks `batch` (whose first row is row `first_row` of the table) and remembers its last row.
    pub fn check(&mut self, batch: &RecordBatch, first_row: u64) -> Result<()> {
        let n = batch.num_rows();
        if self.keys.is_empty() || n == 0 {
            return Ok(());
        }
        let columns: Vec<&ArrayRef> = self.keys.iter().map(|(i, _)| batch.column(*i)).collect();
        if let Some(last) = &self.last {
            let across = self.comparators(last.iter(), columns.iter().copied())?;
            if let Some(k) = out_of_order(&across, 0, 0) {
                return Err(self.error(first_row.saturating_sub(1), first_row, k));
            }
        }
        let within = self.comparators(columns.iter().copied(), columns.iter().copied())?;
        for i in 1..n {
            if let Some(k) = out_of_order(&within, i - 1, i) {
                return Err(self.error(first_row + i as u64 - 1, first_row + i as u64, k));
            }
        }
        self.last = Some(columns.iter().map(|c| c.slice(n - 1, 1)).collect());
        Ok(())
    }

    fn comparators<'a>(
        &self,
        left: impl Iterator<Item = &'a ArrayRef>,
        right: impl Iterator<Item = &'a ArrayRef>,
    ) -> Result<Vec<DynComparator>> {
        left.zip(right)
            .zip(&self.keys)
            .map(|((l, r), (_, key))| {
                comparator(l.as_ref(), r.as_ref(), key.options())
                    .map_err(|e| Error::Usage(format!("cannot compare sort key {:?}: {e}", key.column)))
            })
            .collect()
    }

    fn error(&self, before: u64, after: u64, key: usize) -> Error {
        let keys: Vec<String> = self.keys.iter().map(|(_, k)| k.to_string()).collect();
        Error::Usage(format!(
            "rows are not sorted by the table's sort keys ({}): row {after} sorts before row {before} by column {:?}",
            keys.join("; "),
            self.keys[key].1.column
        ))
    }
}

/// Types whose order is plain enough to promise: not nested, and floats only where NaN and
/// signed zeros can be compared as [`float_order`] says.
fn orderable(data_type: &DataType) -> bool {
    match data_type {
        DataType::Null | DataType::List(_) | DataType::LargeList(_) | DataType::Struct(_) | DataType::Map(..) => false,
        DataType::Dictionary(_, value) => {
            !matches!(
                value.as_ref(),
                DataType::Float16 | DataType::Float32 | DataType::Float64
            ) && orderable(value)
        }
        _ => true,
    }
}

/// Floats in the order sorting tools agree on: -0.0 equals 0.0, and every NaN (whatever its
/// sign bit: `inf - inf` is a negative NaN on x86) equals every other and sorts after +inf.
/// IEEE total order, arrow-ord's, would put negative NaNs first and -0.0 before 0.0, and so
/// refuse data that numpy or pyarrow sorted.
fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// A comparator of row `i` of `left` with row `j` of `right`: floats by [`float_order`], the
/// rest by arrow-ord.
fn comparator(left: &dyn Array, right: &dyn Array, opts: SortOptions) -> std::result::Result<DynComparator, String> {
    let float_values = |a: &dyn Array| -> Option<Box<dyn Fn(usize) -> f64 + Send + Sync>> {
        match a.data_type() {
            DataType::Float16 => {
                let v = a.as_primitive::<Float16Type>().values().clone();
                Some(Box::new(move |i| v[i].to_f64()))
            }
            DataType::Float32 => {
                let v = a.as_primitive::<Float32Type>().values().clone();
                Some(Box::new(move |i| f64::from(v[i])))
            }
            DataType::Float64 => {
                let v = a.as_primitive::<Float64Type>().values().clone();
                Some(Box::new(move |i| v[i]))
            }
            _ => None,
        }
    };
    let (Some(l), Some(r)) = (float_values(left), float_values(right)) else {
        return make_comparator(left, right, opts).map_err(|e| e.to_string());
    };
    let (l_nulls, r_nulls) = (left.logical_nulls(), right.logical_nulls());
    Ok(Box::new(move |i, j| {
        let l_null = l_nulls.as_ref().is_some_and(|n| n.is_null(i));
        let r_null = r_nulls.as_ref().is_some_and(|n| n.is_null(j));
        match (l_null, r_null) {
            (true, true) => Ordering::Equal,
            (true, false) if opts.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if opts.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let o = float_order(l(i), r(j));
                if opts.descending {
                    o.reverse()
                } else {
                    o
                }
            }
        }
    }))
}

/// The first key by which row `i` of the left comparators' arrays sorts after row `j` of the
/// right ones (None when the rows are in order).
fn out_of_order(cmp: &[DynComparator], i: usize, j: usize) -> Option<usize> {
    for (k, c) in cmp.iter().enumerate() {
        match c(i, j) {
            Ordering::Less => return None,
            Ordering::Equal => continue,
            Ordering::Greater => return Some(k),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{DictionaryArray, Float64Array, Int32Array, StringArray};
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;

    fn batch(a: Vec<Option<i32>>, b: Vec<&str>) -> RecordBatch {
        RecordBatch::try_from_iter([
            ("a", Arc::new(Int32Array::from(a)) as ArrayRef),
            ("b", Arc::new(StringArray::from(b)) as ArrayRef),
        ])
        .unwrap()
    }

    #[test]
    fn rows_in_order_pass_across_batches_and_out_of_order_rows_are_named() {
        let b1 = batch(vec![Some(1), Some(1), Some(2)], vec!["x", "y", "a"]);
        let keys = [SortKey::ascending("a"), SortKey::ascending("b")];
        let mut c = SortCheck::new(&b1.schema(), &keys).unwrap();
        c.check(&b1, 0).unwrap();
        c.check(&batch(vec![Some(2), None], vec!["a", "a"]), 3).unwrap();
        // Nulls last: nothing but another null may follow one.
        let err = c.check(&batch(vec![Some(0)], vec!["a"]), 5).unwrap_err().to_string();
        assert!(
            err.contains("row 5 sorts before row 4") && err.contains("\"a\""),
            "{err}"
        );

        let mut c = SortCheck::new(&b1.schema(), &keys).unwrap();
        let err = c
            .check(&batch(vec![Some(1), Some(1)], vec!["y", "x"]), 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("row 11 sorts before row 10") && err.contains("\"b\""),
            "{err}"
        );

        let mut c = SortCheck::new(&b1.schema(), &[SortKey::descending("a")]).unwrap();
        c.check(&batch(vec![Some(3), Some(3), Some(1), None], vec!["", "", "", ""]), 0)
            .unwrap();
        let mut nulls_first = SortKey::descending("a");
        nulls_first.nulls_first = true;
        let mut c = SortCheck::new(&b1.schema(), &[nulls_first]).unwrap();
        c.check(&batch(vec![None, Some(3), Some(1)], vec!["", "", ""]), 0)
            .unwrap();
    }

    #[test]
    fn dictionaries_compare_by_value_and_floats_by_total_order() {
        let d1: DictionaryArray<arrow_array::types::Int8Type> = vec!["b", "a", "a"].into_iter().collect();
        // Keys are in order (0, 1, 1) but values are not: b > a.
        let schema = Schema::new(vec![Field::new(
            "d",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            true,
        )]);
        let mut c = SortCheck::new(&schema, &[SortKey::ascending("d")]).unwrap();
        let b = RecordBatch::try_new(Arc::new(schema.clone()), vec![Arc::new(d1)]).unwrap();
        assert!(c.check(&b, 0).is_err());

        // Signed zeros are equal, and NaNs of either sign are equal and last (as numpy and
        // pyarrow sort them), then nulls.
        let negative_nan = -f64::NAN;
        assert!(negative_nan.is_sign_negative());
        let floats = |v: Vec<Option<f64>>| {
            RecordBatch::try_from_iter([("f", Arc::new(Float64Array::from(v)) as ArrayRef)]).unwrap()
        };
        let sorted = floats(vec![
            Some(-1.0),
            Some(0.0),
            Some(-0.0),
            Some(0.0),
            Some(f64::INFINITY),
            Some(negative_nan),
            Some(f64::NAN),
            None,
        ]);
        let mut c = SortCheck::new(&sorted.schema(), &[SortKey::ascending("f")]).unwrap();
        c.check(&sorted, 0).unwrap();
        assert!(
            c.check(&floats(vec![Some(f64::NAN)]), 8).is_err(),
            "a value after a null"
        );
        let mut c = SortCheck::new(&sorted.schema(), &[SortKey::descending("f")]).unwrap();
        c.check(
            &floats(vec![Some(negative_nan), Some(3.0), Some(-0.0), Some(0.0), None]),
            0,
        )
        .unwrap();
        assert!(c.check(&floats(vec![Some(f64::NAN)]), 5).is_err());
    }

    #[test]
    fn bad_keys_are_refused() {
        let b = batch(vec![], vec![]);
        let err = SortCheck::new(&b.schema(), &[SortKey::ascending("zz")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("a column of the table: a, b"), "{err}");
        assert!(SortCheck::new(&b.schema(), &[SortKey::ascending("a"), SortKey::descending("a")]).is_err());
        let nested = Schema::new(vec![
            Field::new(
                "l",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
                true,
            ),
            Field::new(
                "d",
                DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Float64)),
                true,
            ),
        ]);
        for name in ["l", "d"] {
            let err = SortCheck::new(&nested, &[SortKey::ascending(name)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("orderable types"), "{err}");
        }
    }
}
