//! What the index alone tells of a table's columns: per-column storage summaries, and whether
//! the pages of a row range may hold nulls.

use super::TableReader;
use arrow_schema::DataType;
use kompakt::stream::StreamSummary;
use kompakt::Result;
use std::ops::Range;

/// Per column: where it is and how it was stored.
#[derive(Debug, Clone)]
pub struct ColumnSummary {
    /// Column name.
    pub name: String,
    /// Arrow type.
    pub data_type: DataType,
    /// Pages (one per row group) by body encoding name (`plain`, `for`, `dict`).
    pub encodings: std::collections::BTreeMap<&'static str, u64>,
    /// Pages with a validity bitmap.
    pub pages_with_nulls: u64,
    /// Bytes after page encoding, before the codec (dictionary included).
    pub encoded: u64,
    /// Bytes stored in the file (blocks' payloads and headers, dictionary included).
    pub stored: u64,
    /// Blocks by codec name.
    pub codecs: std::collections::BTreeMap<String, u64>,
}

impl TableReader {
    /// Per-column storage summary, from the index alone.
    pub fn summary(&self) -> Vec<ColumnSummary> {
        let streams: Vec<StreamSummary> = self.index.summary();
        self.parsed
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(c, f)| {
                let mut encodings = std::collections::BTreeMap::new();
                let mut nulls = 0;
                for p in &self.meta.pages[c] {
                    let name = match p.summary & 0x7f {
                        crate::page::encoding::PLAIN => "plain",
                        crate::page::encoding::FOR => "for",
                        crate::page::encoding::DICT => "dict",
                        crate::page::encoding::BITPACK => "bitpack",
                        crate::page::encoding::DELTA => "delta",
                        crate::page::encoding::RUNS => "runs",
                        crate::page::encoding::SCALED => "scaled",
                        crate::page::encoding::DECIMAL => "decimal",
                        crate::page::encoding::COLUMN_DICT => "column dict",
                        crate::page::encoding::SYMBOLS => "symbols",
                        crate::page::encoding::NESTED_DICT => "nested dict",
                        crate::page::encoding::UNSHUFFLED => "unshuffled",
                        _ => "other",
                    };
                    *encodings.entry(name).or_insert(0) += 1;
                    nulls += u64::from(p.summary & crate::page::SUMMARY_NULLS != 0);
                }
                let mut ids = vec![c];
                ids.extend(self.parsed.layouts[c].dictionary_stream.map(|s| s as usize));
                let mut codecs = std::collections::BTreeMap::new();
                let (mut encoded, mut stored) = (0, 0);
                for s in ids {
                    encoded += streams[s].raw;
                    stored += streams[s].stored + 24 * streams[s].blocks;
                    for (k, v) in &streams[s].codecs {
                        *codecs.entry(k.clone()).or_insert(0) += v;
                    }
                }
                ColumnSummary {
                    name: f.name().clone(),
                    data_type: f.data_type().clone(),
                    encodings,
                    pages_with_nulls: nulls,
                    encoded,
                    stored,
                    codecs,
                }
            })
            .collect()
    }

    /// Whether any page of column `c` covering rows `rows` has a validity bitmap (may hold
    /// nulls), from the index alone.
    pub fn may_have_nulls(&self, c: usize, rows: Range<u64>) -> Result<bool> {
        self.request(Some(&[c]), &rows)?;
        if rows.is_empty() {
            return Ok(false);
        }
        let groups = self.groups_of(&rows);
        Ok(self.meta.pages[c][groups.start as usize..groups.end as usize]
            .iter()
            .any(|p| p.summary & crate::page::SUMMARY_NULLS != 0))
    }
}
