//! Verifying a table's rows: every page decoded as a read would, the sort order and the
//! row-group statistics checked against them.

use super::TableReader;
use crate::stats::ColumnStatistics;
use arrow_array::make_array;
use arrow_data::ArrayData;
use kompakt::{Error, Result};

impl TableReader {
    /// Decodes every page of every column, a few row groups at a time (memory stays bounded),
    /// as a read would (each page checked as Arrow data, dictionary keys against their
    /// dictionary), and checks that the rows follow the table's sort keys and that the row-group
    /// statistics hold for them. `progress` gets the
    /// rows checked so far. Returns the row count; damage is a corruption error.
    pub fn verify_rows(&self, threads: usize, progress: &mut dyn FnMut(u64)) -> Result<u64> {
        const GROUPS_AT_ONCE: u64 = 16;
        let mut sort = crate::sort::SortCheck::new(&self.parsed.schema, &self.parsed.sorted_by)
            .map_err(|e| Error::corrupt("table schema", 0, e.to_string()))?;
        let r = u64::from(self.rows_per_group());
        let step = GROUPS_AT_ONCE * r;
        let stats = self.all_statistics()?;
        // One budget for the whole table: what verifying a small file costs is bounded by the
        // read limit, however many row groups it claims.
        let budget = self.budget();
        let mut start = 0;
        while start < self.num_rows() {
            let end = start.saturating_add(step).min(self.num_rows());
            let (_, batches) = self.read_within(None, start..end, threads, &budget)?;
            let mut row = start;
            // Per group of this round, per column: its rows, for checking the statistics.
            let mut pieces =
                vec![vec![Vec::new(); self.parsed.schema.fields().len()]; (end - start).div_ceil(r) as usize];
            for b in &batches {
                sort.check(b, row)
                    .map_err(|e| Error::corrupt("table", 0, format!("the file says it is sorted, but {e}")))?;
                if stats.is_some() {
                    let mut at = 0;
                    while at < b.num_rows() {
                        let g = (row + at as u64) / r;
                        let n = ((g + 1) * r - (row + at as u64)).min((b.num_rows() - at) as u64) as usize;
                        for (c, column) in b.columns().iter().enumerate() {
                            pieces[(g - start / r) as usize][c].push(column.slice(at, n).to_data());
                        }
                        at += n;
                    }
                }
                row += b.num_rows() as u64;
            }
            if let Some(stats) = &stats {
                for (i, group) in pieces.iter().enumerate() {
                    self.check_statistics(stats, start / r + i as u64, group)?;
                }
            }
            start = end;
            progress(start);
        }
        Ok(self.num_rows())
    }

    /// Checks that the statistics of group `g` hold for its rows (`pieces[c]`, per column):
    /// exact null and NaN counts, and bounds that bound its values.
    fn check_statistics(&self, stats: &[Option<ColumnStatistics>], g: u64, pieces: &[Vec<ArrayData>]) -> Result<()> {
        use arrow_ord::ord::make_comparator;
        let g_ = g as usize;
        for (c, s) in stats.iter().enumerate() {
            let Some(s) = s else { continue };
            let field = self.parsed.schema.field(c);
            let found = crate::stats::page_stats(field.data_type(), &pieces[c]);
            let wrong = |what: &str| {
                Error::corrupt(
                    "table statistics",
                    0,
                    format!(
                        "column {:?}, row group {g}: {what} does not hold for its rows",
                        field.name()
                    ),
                )
            };
            if s.null_counts[g_] != found.nulls {
                return Err(wrong("the null count"));
            }
            if s.nan_counts.as_ref().is_some_and(|n| n[g_] != found.nans) {
                return Err(wrong("the NaN count"));
            }
            for (stored, value, is_min) in [(&s.min, &found.min, true), (&s.max, &found.max, false)] {
                let (Some(stored), Some(value)) = (stored, value) else {
                    continue;
                };
                let value = make_array(value.clone());
                let holds = stored.is_valid(g_)
                    && make_comparator(stored.as_ref(), value.as_ref(), Default::default())
                        .map(|cmp| if is_min { cmp(g_, 0).is_le() } else { cmp(g_, 0).is_ge() })
                        .unwrap_or(false);
                if !holds {
                    return Err(wrong(if is_min { "the minimum" } else { "the maximum" }));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, RecordBatch};
    use std::sync::Arc;

    #[test]
    fn verify_finds_statistics_that_do_not_hold() {
        use arrow_array::{Float64Array, Int32Array};
        let batch = RecordBatch::try_from_iter([
            (
                "n",
                Arc::new(Int32Array::from_iter((0..100).map(|i| (i % 9 != 0).then_some(i)))) as ArrayRef,
            ),
            (
                "x",
                Arc::new(Float64Array::from_iter_values((0..100).map(|i| i as f64 / 2.0))) as ArrayRef,
            ),
        ])
        .unwrap();
        let opts = crate::TableOptions {
            rows_per_group: 32,
            ..Default::default()
        };
        let mut w = crate::TableWriter::new(Vec::new(), batch.schema(), opts).unwrap();
        w.write(&batch).unwrap();
        let t = TableReader::from_source(Arc::new(w.finish().unwrap())).unwrap();
        assert_eq!(t.verify_rows(1, &mut |_| {}).unwrap(), 100);
        let good = t.all_statistics().unwrap().unwrap();
        let rows = |c: usize, g: usize| vec![batch.column(c).slice(g * 32, 32).to_data()];
        for g in 0..3 {
            let pieces = [rows(0, g), rows(1, g)];
            t.check_statistics(&good, g as u64, &pieces).unwrap();
            // A null count one off, a minimum above a value, a maximum below one.
            let mut bad = (*good).clone();
            bad[0].as_mut().unwrap().null_counts[g] += 1;
            assert!(t.check_statistics(&bad, g as u64, &pieces).is_err());
            let mut bad = (*good).clone();
            bad[1].as_mut().unwrap().min = Some(Arc::new(Float64Array::from(vec![1000.0; 4])));
            assert!(t.check_statistics(&bad, g as u64, &pieces).is_err());
            let mut bad = (*good).clone();
            bad[0].as_mut().unwrap().max = Some(Arc::new(Int32Array::from(vec![-5; 4])));
            let err = t.check_statistics(&bad, g as u64, &pieces).unwrap_err().to_string();
            assert!(err.contains("\"n\"") && err.contains("maximum"), "{err}");
        }
    }
}
