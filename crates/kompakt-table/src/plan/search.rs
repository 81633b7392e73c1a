//! Narrowing rows by binary search over a table's first sort key, when it is ascending: the
//! first row at or past a filter's value, found with a few single-row reads (one per row
//! group boundary probed) and then one row group of the column, decoded once.
//!
//! A NaN row compares as greater than every number, +inf included (a sorted float column
//! puts NaN after every number), so the probes stay monotone and `>` and `>=` keep the NaN
//! rows (as Polars would). Null rows sit at one end of the column and never pass a
//! comparison.

use super::compare::{comparator, plain};
use super::{Op, Resolved};
use crate::TableReader;
use arrow_array::{Array, ArrayRef};
use kompakt::Result;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

/// The rows of `rows` (of a table sorted ascending by `column`, nulls first or last) that
/// the `filters` on `column` can select, as `(lo, hi)` with `lo <= hi`.
pub(crate) fn row_range(
    reader: &TableReader,
    column: usize,
    nulls_first: bool,
    filters: &[&Resolved],
    rows: Range<u64>,
) -> Result<(u64, u64)> {
    let mut probe = Probe {
        reader,
        column,
        nulls_first,
        rows_per_group: u64::from(reader.rows_per_group()).max(1),
        groups: HashMap::new(),
        single: HashMap::new(),
    };
    let (mut lo, mut hi) = (rows.start, rows.end);
    for f in filters {
        // A null compares with nothing: no order to search by (the statistics may still skip).
        if f.op.takes_list() || f.values.is_null(0) {
            continue;
        }
        let value = f.values.as_ref();
        match f.op {
            Op::Gt => lo = lo.max(probe.first(&rows, value, true)?),
            Op::Ge => lo = lo.max(probe.first(&rows, value, false)?),
            Op::Lt => hi = hi.min(probe.first(&rows, value, false)?),
            Op::Le => hi = hi.min(probe.first(&rows, value, true)?),
            Op::Eq => {
                lo = lo.max(probe.first(&rows, value, false)?);
                hi = hi.min(probe.first(&rows, value, true)?);
            }
            Op::Ne | Op::In | Op::NotIn => {}
        }
    }
    Ok((lo, hi.max(lo)))
}

/// Reads of the sort key, kept for the probes that follow.
struct Probe<'a> {
    reader: &'a TableReader,
    column: usize,
    nulls_first: bool,
    rows_per_group: u64,
    /// Whole row groups of the column read, by group number.
    groups: HashMap<u64, ArrayRef>,
    /// Single rows read, by row number.
    single: HashMap<u64, ArrayRef>,
}

impl Probe<'_> {
    /// Whether row `i` of `a` lies past `value` in the column's order: greater than it
    /// (`strict`) or at least it, a NaN after every number, a null at its end of the column.
    fn past(&self, a: &dyn Array, i: usize, value: &dyn Array, strict: bool) -> Result<bool> {
        if a.is_null(i) {
            return Ok(!self.nulls_first);
        }
        let cmp = comparator(a, value, true)?;
        Ok(match cmp(i, 0) {
            Some(Ordering::Greater) => true,
            Some(Ordering::Equal) => !strict,
            _ => false,
        })
    }

    /// Whether row `i` of the table lies past `value` ([`Probe::past`]).
    fn row_past(&mut self, i: u64, value: &dyn Array, strict: bool) -> Result<bool> {
        let g = i / self.rows_per_group;
        if let Some(group) = self.groups.get(&g) {
            return self.past(group.as_ref(), (i - g * self.rows_per_group) as usize, value, strict);
        }
        if !self.single.contains_key(&i) {
            let (_, batch) = self.reader.take(Some(&[self.column]), &[i], 1)?;
            self.single.insert(i, plain(batch.column(0))?);
        }
        let row = self.single[&i].clone();
        self.past(row.as_ref(), 0, value, strict)
    }

    /// Row group `g` of the column, read whole once.
    fn group(&mut self, g: u64) -> Result<ArrayRef> {
        if let Some(a) = self.groups.get(&g) {
            return Ok(a.clone());
        }
        let start = g * self.rows_per_group;
        let end = (start + self.rows_per_group).min(self.reader.num_rows());
        let (_, batches) = self.reader.read(Some(&[self.column]), start..end, 1)?;
        let a = plain(batches[0].column(0))?;
        self.groups.insert(g, a.clone());
        Ok(a)
    }

    /// The first row of `rows` past `value` ([`Probe::past`]; the predicate is monotone over a
    /// sorted column), or `rows.end` when none is: first over the row groups' first rows, then
    /// within the one row group left.
    fn first(&mut self, rows: &Range<u64>, value: &dyn Array, strict: bool) -> Result<u64> {
        let (a, b) = (rows.start, rows.end);
        if a >= b {
            return Ok(b);
        }
        let r = self.rows_per_group;
        // Probe points: `a`, then the first row of every later row group that starts before `b`.
        let points = (b - 1) / r - a / r + 1;
        let point = |k: u64| if k == 0 { a } else { (a / r + k) * r };
        let (mut lo, mut hi) = (0u64, points);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.row_past(point(mid), value, strict)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if lo == 0 {
            return Ok(a);
        }
        // The answer lies after probe point lo - 1, in its row group, or is the next point.
        let from = point(lo - 1) + 1;
        let to = if lo < points { point(lo) } else { b };
        if from >= to {
            return Ok(to);
        }
        let g = (from - 1) / r;
        let group = self.group(g)?;
        let base = g * r;
        let cmp = comparator(group.as_ref(), value, true)?;
        let past = |i: u64| {
            let i = (i - base) as usize;
            if group.is_null(i) {
                !self.nulls_first
            } else {
                match cmp(i, 0) {
                    Some(Ordering::Greater) => true,
                    Some(Ordering::Equal) => !strict,
                    _ => false,
                }
            }
        };
        let (mut lo, mut hi) = (from, to);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if past(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo)
    }
}
