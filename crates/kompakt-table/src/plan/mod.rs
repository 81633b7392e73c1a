//! Planning filtered reads: the row ranges of a table that can hold a row passing some
//! filters, found before any page of the rows is read. Every front end (Python, R, C, the
//! CLI) plans through here, so all of them skip the same rows.
//!
//! A filter on the table's first sort key, when it is ascending, narrows the rows by binary
//! search (a few single-row reads of that column, and one row group of it). Then the
//! row-group statistics ([`crate::stats`]: null and NaN counts, bounds) drop the row groups
//! no row of which can pass every filter. Skipping is only ever an optimisation: the caller
//! still applies the filters to the rows read ([`matches()`] does), and when in doubt a row
//! group is kept.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{ArrayRef, Int64Array, RecordBatch};
//! use kompakt_table::plan::{matches, plan_rows, Filter, Op};
//! use kompakt_table::{SortKey, TableOptions, TableReader, TableWriter};
//!
//! let batch = RecordBatch::try_from_iter([("t", Arc::new(Int64Array::from_iter_values(0..1000)) as ArrayRef)])?;
//! let options = TableOptions { rows_per_group: 100, sorted_by: vec![SortKey::ascending("t")], ..Default::default() };
//! let mut w = TableWriter::new(Vec::new(), batch.schema(), options)?;
//! w.write(&batch)?;
//! let table = TableReader::from_source(Arc::new(w.finish()?))?;
//!
//! let filters = [
//!     Filter::new("t", Op::Ge, Arc::new(Int64Array::from(vec![250]))),
//!     Filter::new("t", "<".parse()?, Arc::new(Int64Array::from(vec![420]))),
//! ];
//! assert_eq!(plan_rows(&table, &filters, 0..1000)?, vec![250..420]);
//! let (_, batches) = table.read(None, 250..420, 1)?;
//! assert_eq!(matches(&batches[0], &filters)?.true_count(), 50);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compare;
mod matches;
#[cfg(test)]
mod proptests;
mod prune;
mod search;
#[cfg(test)]
mod tests;

use crate::TableReader;
use arrow_array::{Array, ArrayRef};
use arrow_schema::Schema;
use kompakt::{Error, Result};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

pub use matches::matches;

/// How a filter compares a column with its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `==` (also written `=`): equal to the one value.
    Eq,
    /// `!=`: not equal to the one value.
    Ne,
    /// `<`: less than the one value.
    Lt,
    /// `<=`: at most the one value.
    Le,
    /// `>`: greater than the one value.
    Gt,
    /// `>=`: at least the one value.
    Ge,
    /// `in`: equal to one of the values (a list, maybe empty).
    In,
    /// `not in`: equal to none of the values (a list, maybe empty).
    NotIn,
}

/// The spellings of the ops [`Op::from_str`] reads, as pyarrow's filters spell them.
pub const OP_NAMES: [&str; 9] = ["==", "=", "!=", "<", "<=", ">", ">=", "in", "not in"];

impl Op {
    /// The op's usual spelling (`==` for [`Op::Eq`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::In => "in",
            Op::NotIn => "not in",
        }
    }

    /// Whether the op takes a list of values (`in`, `not in`) rather than one value.
    pub fn takes_list(self) -> bool {
        matches!(self, Op::In | Op::NotIn)
    }
}

impl FromStr for Op {
    type Err = Error;

    /// One of [`OP_NAMES`]; anything else is an [`Error::InvalidOption`] naming them.
    fn from_str(s: &str) -> Result<Op> {
        Ok(match s {
            "==" | "=" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "in" => Op::In,
            "not in" => Op::NotIn,
            _ => {
                return Err(Error::invalid(
                    "filter op",
                    s,
                    format!("one of {}", OP_NAMES.join(", ")),
                ))
            }
        })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One condition on a column's rows: `column op values`. A read with several keeps the rows
/// that pass all of them.
///
/// Rows compare as Arrow's compute functions compare them, with floats as IEEE 754 says
/// ([`matches()`] has the details): a null row passes no comparison, NaN is neither less
/// than, equal to nor greater than any value, and -0.0 equals 0.0.
#[derive(Debug, Clone)]
pub struct Filter {
    /// The column's name.
    pub column: String,
    /// The comparison.
    pub op: Op,
    /// One value, or for [`Op::In`] and [`Op::NotIn`] the list (any length), in the column's
    /// type: for a dictionary column, its value type (or the dictionary type itself); a
    /// timestamp may carry another time zone. A null value compares with nothing, but a null
    /// in an `in` list matches the null rows.
    pub values: ArrayRef,
}

impl Filter {
    /// `column op values`.
    pub fn new(column: impl Into<String>, op: Op, values: ArrayRef) -> Filter {
        Filter {
            column: column.into(),
            op,
            values,
        }
    }
}

/// A filter checked against a table's schema.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The column's position.
    pub column: usize,
    pub op: Op,
    /// The values, of the column's plain type ([`compare::plain_type`]).
    pub values: ArrayRef,
}

/// Checks `filters` against a table's `schema`, as [`plan_rows`] and [`matches()`] do: each
/// names a column of a type with an order (numbers, decimals, booleans, strings, binary,
/// dates, times, timestamps, durations, or a dictionary of one), has one value (a list for
/// `in` and `not in`), and its values have the column's type. Anything else is an
/// [`Error::InvalidOption`] that says what would be valid.
pub fn check_filters(schema: &Schema, filters: &[Filter]) -> Result<()> {
    resolve(schema, filters).map(|_| ())
}

pub(crate) fn resolve(schema: &Schema, filters: &[Filter]) -> Result<Vec<Resolved>> {
    filters.iter().map(|f| resolve_one(schema, f)).collect()
}

fn resolve_one(schema: &Schema, f: &Filter) -> Result<Resolved> {
    let column = schema.index_of(&f.column).map_err(|_| {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        Error::invalid("filter column", f.column.clone(), format!("one of {names:?}"))
    })?;
    let dt = schema.field(column).data_type();
    if !compare::comparable(dt) {
        return Err(Error::invalid(
            "filter column",
            f.column.clone(),
            format!(
                "a column of a type with an order (numbers, decimals, booleans, strings, binary, dates, \
                 times, timestamps, durations, or a dictionary of one); it is {dt}"
            ),
        ));
    }
    if !f.op.takes_list() && f.values.len() != 1 {
        return Err(Error::invalid(
            "filter values",
            format!("{} values for {:?} {}", f.values.len(), f.column, f.op),
            "one value for ==, =, !=, <, <=, >, >=; a list of any length for in and not in",
        ));
    }
    let values = compare::values_for(dt, &f.values)?.ok_or_else(|| {
        Error::invalid(
            "filter value type",
            format!("{} for {:?} {}", f.values.data_type(), f.column, f.op),
            format!("values of type {} (the column's type)", compare::plain_type(dt)),
        )
    })?;
    Ok(Resolved {
        column,
        op: f.op,
        values,
    })
}

/// The row ranges of `rows` (in order, adjacent ones merged) that can hold a row passing
/// every filter in `filters`; rows outside them pass at least one filter not.
///
/// When the table's first sort key is ascending and filters compare it (`==`, `<`, `<=`, `>`,
/// `>=`), the rows are first narrowed by binary search over that column (a few single-row
/// reads and one row group of it per filter, nothing else); then the row groups whose
/// statistics rule out a filter are dropped (tables written without statistics keep them
/// all). The caller still applies the filters to the rows it reads ([`matches()`]).
///
/// Errors: a filter that [`check_filters`] refuses (an [`Error::InvalidOption`]), `rows`
/// past the end of the table ([`Error::OutOfRange`]), and errors reading the table.
#[allow(clippy::single_range_in_vec_init)] // one range of rows, not the rows
pub fn plan_rows(reader: &TableReader, filters: &[Filter], rows: Range<u64>) -> Result<Vec<Range<u64>>> {
    let resolved = resolve(&reader.schema(), filters)?;
    if rows.start > rows.end || rows.end > reader.num_rows() {
        return Err(Error::OutOfRange {
            detail: format!(
                "rows {}..{} of a table of {} rows",
                rows.start,
                rows.end,
                reader.num_rows()
            ),
        });
    }
    let (mut lo, mut hi) = (rows.start, rows.end);
    if let Some(key) = reader.sorted_by().first().filter(|k| !k.descending) {
        let on_key: Vec<&Resolved> = resolved
            .iter()
            .filter(|f| reader.schema().field(f.column).name() == &key.column)
            .collect();
        if !on_key.is_empty() {
            (lo, hi) = search::row_range(reader, on_key[0].column, key.nulls_first, &on_key, lo..hi)?;
        }
    }
    if lo >= hi {
        return Ok(Vec::new());
    }
    if resolved.is_empty() {
        return Ok(vec![lo..hi]);
    }
    prune::unskipped(reader, &resolved, lo..hi)
}
