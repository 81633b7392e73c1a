//! The table footer: what a table file keeps in the kompakt footer's metadata
//! (docs/FORMAT.md, "Table files").

use kompakt::{Error, Result};

/// First bytes of a table's footer metadata.
pub const MAGIC: [u8; 4] = *b"KTBL";
/// Newest table layout this version reads. It writes layout 1 unless a page uses an encoding
/// that came later (run-length pages: layout 2; scaled and decimal pages: layout 3; string
/// pages coded against a dictionary their column shares: layout 4; string pages coded with a
/// symbol table: layout 5; pages of 4- or 8-byte values coded against a dictionary their
/// column shares: layout 6; values of the valid rows only: layout 7; bit-packed codes of
/// dictionaries of fixed-width values: layout 8; dictionaries of fixed-width values whose
/// values are a nested page, and values stored unshuffled: layout 9), so that older readers
/// read what they can.
pub const LAYOUT: u16 = 9;
const HEADER_LEN: usize = 32;
/// Bytes per page in the index: start and end (u64 each) and the summary byte.
const PAGE_ENTRY_LEN: usize = 17;
/// Largest rows-per-group a file may declare.
pub const MAX_ROWS_PER_GROUP: u32 = 1 << 24;

/// Where one page is in its column's stream, and how it was encoded (for `inspect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageEntry {
    /// Raw offset of the page's first byte in the column's stream.
    pub start: u64,
    /// Raw offset just past the page.
    pub end: u64,
    /// Page summary: body encoding and [`crate::page::SUMMARY_NULLS`].
    pub summary: u8,
}

/// The decoded table footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMeta {
    /// Table layout (1 to 4).
    pub layout: u16,
    /// Rows in the table.
    pub num_rows: u64,
    /// Rows per row group (the last group may have fewer).
    pub rows_per_group: u32,
    /// The schema JSON (see [`crate::schema`]).
    pub schema_json: Vec<u8>,
    /// For each column, its pages in row order.
    pub pages: Vec<Vec<PageEntry>>,
}

/// Number of row groups of a table.
pub fn group_count(num_rows: u64, rows_per_group: u32) -> u64 {
    num_rows.div_ceil(u64::from(rows_per_group.max(1)))
}

impl TableMeta {
    /// Heap bytes the page index holds, roughly.
    pub fn heap_size(&self) -> usize {
        let pages: usize = self.pages.iter().map(Vec::len).sum();
        self.schema_json.len() + pages * std::mem::size_of::<PageEntry>()
    }

    /// The footer's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let pages: usize = self.pages.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(HEADER_LEN + self.schema_json.len() + PAGE_ENTRY_LEN * pages);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.layout.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.num_rows.to_le_bytes());
        out.extend_from_slice(&self.rows_per_group.to_le_bytes());
        out.extend_from_slice(&(self.pages.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.schema_json.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.schema_json);
        for col in &self.pages {
            for p in col {
                out.extend_from_slice(&p.start.to_le_bytes());
                out.extend_from_slice(&p.end.to_le_bytes());
            }
        }
        for col in &self.pages {
            out.extend(col.iter().map(|p| p.summary));
        }
        out
    }

    /// Parses and checks a table footer against the file's streams (their raw lengths).
    pub fn decode(bytes: &[u8], stream_lens: &[u64]) -> Result<TableMeta> {
        let bad = |detail: String| Error::corrupt("table footer", 0, detail);
        if bytes.len() < 4 || bytes[..4] != MAGIC {
            return Err(Error::Usage(
                "not a table file: this kompakt file holds a saved object or plain data, not a table".into(),
            ));
        }
        if bytes.len() < HEADER_LEN {
            return Err(bad(format!("{} bytes, less than its 32-byte header", bytes.len())));
        }
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let layout = u16_at(4);
        if !(1..=LAYOUT).contains(&layout) {
            // Damage as far as this reader can tell (a CorruptError in Python, not an option
            // error): the message says what else it may be.
            return Err(bad(format!(
                "table layout {layout}, and this kompakt reads layouts 1 to {LAYOUT}: a newer kompakt wrote \
                 this table (upgrade to read it), or the footer is damaged"
            )));
        }
        if u16_at(6) != 0 || u32_at(28) != 0 {
            return Err(bad("reserved fields are not zero".into()));
        }
        let num_rows = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        let rows_per_group = u32_at(16);
        let columns = u32_at(20) as usize;
        let schema_len = u32_at(24) as usize;
        if rows_per_group == 0 || rows_per_group > MAX_ROWS_PER_GROUP {
            return Err(bad(format!(
                "rows per group {rows_per_group} (1..={MAX_ROWS_PER_GROUP})"
            )));
        }
        if columns > stream_lens.len() {
            return Err(bad(format!("{columns} columns but {} streams", stream_lens.len())));
        }
        let rest = bytes.len() - HEADER_LEN;
        if schema_len > rest {
            return Err(bad("schema runs past the footer".into()));
        }
        let groups = group_count(num_rows, rows_per_group);
        let index_len = (columns as u64)
            .checked_mul(groups)
            .and_then(|p| p.checked_mul(PAGE_ENTRY_LEN as u64));
        if index_len != Some((rest - schema_len) as u64) {
            return Err(bad(format!(
                "page index of {} bytes does not match {columns} columns x {groups} row groups",
                rest - schema_len
            )));
        }
        let groups = groups as usize;
        let schema_json = bytes[HEADER_LEN..HEADER_LEN + schema_len].to_vec();
        let ranges = &bytes[HEADER_LEN + schema_len..];
        let summaries = &ranges[16 * columns * groups..];
        // Every open parses the whole index (a page per column and row group): fixed-size
        // entries, no per-field bounds checks.
        let (entries, _) = ranges[..16 * columns * groups].as_chunks::<16>();
        let mut pages = Vec::with_capacity(columns);
        for (c, &stream_len) in stream_lens.iter().enumerate().take(columns) {
            let span = c * groups..(c + 1) * groups;
            let mut col = Vec::with_capacity(groups);
            // Pages follow each other in the stream: one page's bytes cannot stand for several
            // (a few stored bytes decoded again and again), so what a table decodes to is
            // bounded by what its stream holds.
            let mut previous_end = 0;
            for (g, (e, &summary)) in entries[span.clone()].iter().zip(&summaries[span]).enumerate() {
                let (start, end) = e.split_at(8);
                let start = u64::from_le_bytes(start.try_into().expect("8 bytes"));
                let end = u64::from_le_bytes(end.try_into().expect("8 bytes"));
                if start > end || end > stream_len {
                    return Err(bad(format!(
                        "column {c}: page {g} at {start}..{end} of a stream of {stream_len} bytes"
                    )));
                }
                if start < previous_end {
                    return Err(bad(format!(
                        "column {c}: page {g} at {start}..{end} overlaps or precedes the page before it, which ends at {previous_end}"
                    )));
                }
                previous_end = end;
                col.push(PageEntry { start, end, summary });
            }
            pages.push(col);
        }
        Ok(TableMeta {
            layout,
            num_rows,
            rows_per_group,
            schema_json,
            pages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_truncation_fails() {
        let meta = TableMeta {
            layout: 1,
            num_rows: 10,
            rows_per_group: 4,
            schema_json: b"{}".to_vec(),
            pages: vec![
                vec![
                    PageEntry {
                        start: 0,
                        end: 5,
                        summary: 1,
                    },
                    PageEntry {
                        start: 7,
                        end: 9,
                        summary: 0,
                    },
                    PageEntry {
                        start: 9,
                        end: 12,
                        summary: 0x82,
                    },
                ],
                vec![
                    PageEntry {
                        start: 0,
                        end: 0,
                        summary: 0
                    };
                    3
                ],
            ],
        };
        let bytes = meta.encode();
        assert_eq!(TableMeta::decode(&bytes, &[12, 0, 7]).unwrap(), meta);
        assert!(TableMeta::decode(&bytes, &[11, 0]).is_err());
        // Aliased and out-of-order pages: one page's bytes standing for several row groups.
        for (g, start, end) in [(1, 0, 5), (1, 4, 9), (2, 0, 12)] {
            let mut forged = meta.clone();
            forged.pages[0][g] = PageEntry { start, end, summary: 0 };
            let err = TableMeta::decode(&forged.encode(), &[12, 0, 7])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("overlaps or precedes"),
                "page {g} at {start}..{end}: {err}"
            );
        }
        assert!(TableMeta::decode(&bytes, &[12]).is_err());
        for cut in 0..bytes.len() {
            assert!(TableMeta::decode(&bytes[..cut], &[12, 0]).is_err());
        }
    }

    #[test]
    fn an_unknown_layout_is_damage_that_mentions_upgrading() {
        let meta = TableMeta {
            layout: 1,
            num_rows: 0,
            rows_per_group: 4,
            schema_json: b"{}".to_vec(),
            pages: vec![],
        };
        let mut bytes = meta.encode();
        bytes[4] = 99;
        let err = TableMeta::decode(&bytes, &[]).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(err.to_string().contains("upgrade"), "{err}");
    }
}
