//! Dropping row groups by their statistics: a group whose null and NaN counts and bounds
//! show that no row of it can pass a filter is not read. When in doubt, a group is kept.

use super::compare::{comparator, float_values, is_float, Cmp};
use super::{Op, Resolved};
use crate::TableReader;
use arrow_array::Array;
use kompakt::Result;
use std::cmp::Ordering;
use std::ops::Range;

/// The row ranges of `rows` (cut at row-group boundaries, adjacent ones merged) left once
/// the row-group statistics rule out the groups no row of which can pass every filter.
pub(crate) fn unskipped(reader: &TableReader, filters: &[Resolved], rows: Range<u64>) -> Result<Vec<Range<u64>>> {
    let r = u64::from(reader.rows_per_group()).max(1);
    let n = reader.num_rows();
    let (first, last) = (rows.start / r, rows.end.div_ceil(r));
    let mut keep = vec![true; (last - first) as usize];
    let mut columns: Vec<usize> = filters.iter().map(|f| f.column).collect();
    columns.sort_unstable();
    columns.dedup();
    for c in columns {
        let Some(stats) = reader.statistics(c)? else {
            continue;
        };
        for f in filters.iter().filter(|f| f.column == c) {
            let groups = Groups::new(&stats, f)?;
            for (i, kept) in keep.iter_mut().enumerate() {
                if *kept {
                    let g = first as usize + i;
                    let group_rows = r.min(n - g as u64 * r);
                    *kept = groups.may_match(f, g, group_rows);
                }
            }
        }
    }
    let mut ranges: Vec<Range<u64>> = Vec::new();
    for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        let g = first + i as u64;
        let (a, b) = (rows.start.max(g * r), rows.end.min((g + 1) * r));
        match ranges.last_mut() {
            Some(last) if last.end == a => last.end = b,
            _ => ranges.push(a..b),
        }
    }
    Ok(ranges)
}

/// One column's statistics, set to judge one filter's row groups.
struct Groups<'a> {
    stats: &'a crate::ColumnStatistics,
    /// Group `g`'s minimum (maximum) against value `j`: `None` when either is unknown (null)
    /// or NaN.
    lo: Option<Cmp<'a>>,
    hi: Option<Cmp<'a>>,
    /// Group `g`'s minimum against its maximum.
    lo_hi: Option<Cmp<'a>>,
    /// Whether group `g`'s minimum is a zero (of either sign): a float column's zeros are
    /// bounded by -0.0 below and +0.0 above.
    lo_zero: Box<dyn Fn(usize) -> bool + 'a>,
    /// The bounds have a type the values do not (no file holds such): every group is kept.
    incomparable: bool,
}

impl<'a> Groups<'a> {
    fn new(stats: &'a crate::ColumnStatistics, f: &'a Resolved) -> Result<Self> {
        let values = f.values.as_ref();
        let mut incomparable = false;
        let (lo, hi, lo_hi, lo_zero): (_, _, _, Box<dyn Fn(usize) -> bool>) = match (&stats.min, &stats.max) {
            (Some(min), Some(max))
                if min.data_type() == values.data_type() && max.data_type() == values.data_type() =>
            {
                let zero: Box<dyn Fn(usize) -> bool> = match float_values(min.as_ref()) {
                    Some(v) if is_float(min.data_type()) => Box::new(move |g| min.is_valid(g) && v(g) == 0.0),
                    _ => Box::new(|_| false),
                };
                (
                    Some(comparator(min.as_ref(), values, false)?),
                    Some(comparator(max.as_ref(), values, false)?),
                    Some(comparator(min.as_ref(), max.as_ref(), false)?),
                    zero,
                )
            }
            (None, _) | (_, None) => (None, None, None, Box::new(|_| false)),
            _ => {
                incomparable = true;
                (None, None, None, Box::new(|_| false))
            }
        };
        Ok(Groups {
            stats,
            lo,
            hi,
            lo_hi,
            lo_zero,
            incomparable,
        })
    }

    /// Whether group `g` (of `rows` rows) may hold a row for which `f` holds.
    fn may_match(&self, f: &Resolved, g: usize, rows: u64) -> bool {
        if self.incomparable {
            return true;
        }
        let nulls = self.stats.null_counts[g];
        let nans = self.stats.nan_counts.as_ref().map_or(0, |n| n[g]);
        let bounded = |b: &Option<arrow_array::ArrayRef>| b.as_ref().is_some_and(|a| a.is_valid(g));
        let known = bounded(&self.stats.min) && bounded(&self.stats.max);
        let values = f.values.as_ref();
        let (lo, hi) = (self.lo.as_ref(), self.hi.as_ref());
        let at = |c: Option<&Cmp<'_>>, j: usize| c.and_then(|c| c(g, j));
        if matches!(f.op, Op::Ne | Op::NotIn) {
            // Null and NaN rows may pass these (pandas keeps them), so only a group of one
            // value, all of it excluded, is ruled out.
            if nulls > 0 || nans > 0 || !known || (self.lo_zero)(g) {
                // Zeros: bounds -0.0 and +0.0, and engines disagree on whether -0.0 is "in"
                // a list holding 0.0 (pyarrow's hashing says no).
                return true;
            }
            let one_value = at(self.lo_hi.as_ref(), g) == Some(Ordering::Equal);
            let excluded = (0..values.len()).any(|j| at(lo, j) == Some(Ordering::Equal));
            return !(one_value && excluded);
        }
        if f.op == Op::In && values.null_count() > 0 {
            // A null in the list matches the null rows, and any other row may match too.
            return true;
        }
        if nans > 0 {
            return true;
        }
        if !known {
            // No bounds: a group of nulls passes no comparison; otherwise nothing is known.
            return nulls < rows;
        }
        if values.null_count() > 0 {
            // A null value compares with nothing that is known here: keep.
            return true;
        }
        let le = |o: Option<Ordering>| matches!(o, Some(Ordering::Less | Ordering::Equal));
        let ge = |o: Option<Ordering>| matches!(o, Some(Ordering::Greater | Ordering::Equal));
        match f.op {
            Op::Eq => le(at(lo, 0)) && ge(at(hi, 0)),
            Op::Lt => at(lo, 0) == Some(Ordering::Less),
            Op::Le => le(at(lo, 0)),
            Op::Gt => at(hi, 0) == Some(Ordering::Greater),
            Op::Ge => ge(at(hi, 0)),
            Op::In => (0..values.len()).any(|j| le(at(lo, j)) && ge(at(hi, j))),
            Op::Ne | Op::NotIn => unreachable!("handled above"),
        }
    }
}
