//! Lies in the indexes of a valid table file: page ranges that alias, overlap, run backwards
//! or past their stream; row counts and rows per group that do not fit the pages; block-index
//! entries (and their block headers, kept in agreement) that declare sizes their bytes cannot
//! decode to. Every footer field is then re-encoded and every checksum repaired, so that only
//! the lies reach the readers.
//!
//! The input is a list of 10-byte edits: an op byte, a selector byte, and a u64 value.
//! The readers must refuse or read within bounds: no panic, no allocation beyond libFuzzer's
//! RSS limit, no hang (a verify that decodes one page's bytes once per alias would).
#![no_main]

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use kompakt::stream::format::{Footer, Trailer, TRAILER_LEN};
use kompakt::stream::ReadAt;
use kompakt_fuzz::repair;
use kompakt_table::meta::{PageEntry, TableMeta};
use kompakt_table::{TableOptions, TableReader, TableWriter};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

/// The table every input edits: three columns (runs, strings, floats), five row groups.
fn base() -> &'static Vec<u8> {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| {
        let n = 320;
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("runs", Arc::new(Int64Array::from_iter_values((0..n).map(|i| i / 100)))),
            (
                "text",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("value {}", i % 7)),
                )),
            ),
            (
                "x",
                Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64 * 0.25))),
            ),
        ];
        let batch = RecordBatch::try_from_iter(columns).expect("a batch");
        let opts = TableOptions {
            rows_per_group: 64,
            ..TableOptions::default()
        };
        let mut out = Vec::new();
        let mut w = TableWriter::new(&mut out, batch.schema(), opts).expect("a writer");
        w.write(&batch).expect("rows written");
        w.finish().expect("table finished");
        out
    })
}

/// The file with `footer` (and a fresh trailer) in place of its own.
fn with_footer(file: &[u8], footer_at: usize, footer: &Footer) -> Vec<u8> {
    let mut out = file[..footer_at].to_vec();
    let bytes = footer.encode();
    out.extend_from_slice(&bytes);
    let trailer = Trailer {
        footer_offset: footer_at as u64,
        footer_len: bytes.len() as u64,
        footer_checksum: kompakt::hash::xxh3_64(&bytes),
    };
    out.extend_from_slice(&trailer.encode());
    out
}

fn edited(data: &[u8]) -> Option<Vec<u8>> {
    let file = base();
    let trailer_at = file.len() - TRAILER_LEN;
    let trailer = Trailer::decode(file[trailer_at..].try_into().ok()?, trailer_at as u64).ok()?;
    let footer_at = trailer.footer_offset as usize;
    let mut footer = Footer::decode(&file[footer_at..file.len() - TRAILER_LEN], trailer.footer_offset).ok()?;
    let lens: Vec<u64> = footer.streams.iter().map(|s| s.raw_len).collect();
    let mut meta = TableMeta::decode(&footer.metadata, &lens).ok()?;
    let mut body = file[..footer_at].to_vec();
    for edit in data.chunks_exact(10) {
        let (op, which) = (edit[0], usize::from(edit[1]));
        let value = u64::from_le_bytes(edit[2..10].try_into().ok()?);
        let pages: usize = meta.pages.iter().map(Vec::len).sum();
        let column = which % meta.pages.len().max(1);
        match op % 8 {
            // A page becomes a copy of another (aliasing), or gets new bounds.
            0 if pages > 0 => {
                let col = &mut meta.pages[column];
                let (g, from) = (which % col.len().max(1), value as usize % col.len().max(1));
                if !col.is_empty() {
                    col[g] = col[from];
                }
            }
            1 if pages > 0 => {
                let col = &mut meta.pages[column];
                if let Some(p) = col.get_mut(which % 7) {
                    p.start = value % (lens[column] + 2);
                }
            }
            2 if pages > 0 => {
                let col = &mut meta.pages[column];
                if let Some(p) = col.get_mut(which % 7) {
                    p.end = value % (lens[column] + 2);
                }
            }
            // Rows and rows per group: the page index is re-encoded for the new group count,
            // its last entries repeated (aliasing) or dropped.
            3 | 4 => {
                if op % 8 == 3 {
                    meta.num_rows = value % (1 << 40);
                } else {
                    meta.rows_per_group = (value % (1 << 25)) as u32;
                }
                let groups = meta.num_rows.div_ceil(u64::from(meta.rows_per_group.max(1))).min(4096) as usize;
                for col in &mut meta.pages {
                    let last = col.last().copied();
                    col.resize(
                        groups,
                        last.unwrap_or(PageEntry {
                            start: 0,
                            end: 0,
                            summary: 0,
                        }),
                    );
                }
            }
            // A block declares another raw or stored length (in the index and its header alike).
            5 | 6 if !footer.blocks.is_empty() => {
                let i = which % footer.blocks.len();
                let b = &mut footer.blocks[i];
                let at = b.file_offset as usize;
                if op % 8 == 5 {
                    b.header.raw_len = (value % (1 << 27)) as u32;
                    body[at + 8..at + 12].copy_from_slice(&b.header.raw_len.to_le_bytes());
                } else {
                    // Only the claim changes: the bytes that follow stay where they are.
                    b.header.stored_len = (value % u64::from(b.header.stored_len + 1)) as u32;
                    body[at + 12..at + 16].copy_from_slice(&b.header.stored_len.to_le_bytes());
                }
                // Raw offsets and stream totals follow, so that only the claim is a lie.
                let mut raw = vec![0u64; footer.streams.len()];
                for b in &mut footer.blocks {
                    let s = b.header.stream as usize;
                    b.raw_offset = raw[s];
                    raw[s] += u64::from(b.header.raw_len);
                }
                for (s, r) in footer.streams.iter_mut().zip(raw) {
                    s.raw_len = r;
                }
            }
            7 if !footer.blocks.is_empty() => {
                // One index entry points at another's block.
                let (i, j) = (which % footer.blocks.len(), value as usize % footer.blocks.len());
                footer.blocks[i].file_offset = footer.blocks[j].file_offset;
            }
            _ => {}
        }
    }
    footer.metadata = meta.encode();
    repair(&with_footer(&body, footer_at, &footer))
}

fuzz_target!(|data: &[u8]| {
    let Some(file) = edited(data) else { return };
    let source: Arc<dyn ReadAt> = Arc::new(file);
    let Ok(t) = TableReader::from_source(source) else {
        return;
    };
    let n = t.num_rows();
    let _ = t.summary();
    let _ = t.verify_rows(1, &mut |_| {});
    // Whole reads allocate what the rows asked for need: keep the honest part of the claim
    // within libFuzzer's memory limit.
    if n <= 1 << 22 {
        if let Ok((_, batches)) = t.read(None, 0..n, 1) {
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            assert_eq!(rows as u64, n, "a read returns the rows the table declares");
        }
    }
    let _ = t.read(Some(&[1]), n / 2..n.min(n / 2 + 100), 1);
});
