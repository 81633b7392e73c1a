//! Row-group statistics: the section read and checked whole on first use, then kept.

use super::TableReader;
use crate::stats::{decode_section, ColumnStatistics};
use kompakt::{Error, Result};
use std::sync::Arc;

impl TableReader {
    /// Whether the file has row-group statistics (of a version this build reads).
    pub fn has_statistics(&self) -> bool {
        self.parsed.statistics.is_some()
    }

    /// The row-group statistics of column `c`: `None` when the file has none for it (written
    /// without them, by an older kompakt, or a type without any). The section is read and
    /// checked whole on the first call (one read), then kept.
    pub fn statistics(&self, c: usize) -> Result<Option<ColumnStatistics>> {
        if c >= self.parsed.schema.fields().len() {
            return Err(Error::Usage(format!(
                "no column {c} in a table of {}",
                self.parsed.schema.fields().len()
            )));
        }
        Ok(self.all_statistics()?.and_then(|all| all[c].clone()))
    }

    pub(super) fn all_statistics(&self) -> Result<Option<Arc<Vec<Option<ColumnStatistics>>>>> {
        let Some(at) = self.parsed.statistics else {
            return Ok(None);
        };
        let mut cached = self.statistics.lock().expect("statistics cache");
        if let Some(all) = cached.as_ref() {
            return Ok(Some(all.clone()));
        }
        let len = self.index.stream_len(at.stream)?;
        if at.offset > len {
            return Err(Error::corrupt("table statistics", 0, "starts past its stream"));
        }
        let group_rows: Vec<u64> = (0..self.num_groups()).map(|g| self.group_rows(g) as u64).collect();
        let all = self.with_raw(at.stream, at.offset, len, |raw| {
            decode_section(&self.parsed.schema, &group_rows, raw)
        })?;
        let all = Arc::new(all);
        *cached = Some(all.clone());
        Ok(Some(all))
    }
}
