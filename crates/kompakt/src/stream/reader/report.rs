//! Reports about a file: per-stream summaries from the index alone, and verification of
//! every block.

use super::Reader;
use crate::error::Result;
use std::collections::BTreeMap;
use std::io::{self, Read, Seek};

/// Totals from [`Reader::verify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifyReport {
    /// Blocks checked and decoded.
    pub blocks: u64,
    /// Raw bytes they decoded to.
    pub raw_bytes: u64,
    /// Stored bytes read.
    pub stored_bytes: u64,
}

/// What one stream holds, as `kompakt inspect` shows it: sizes and how its blocks are encoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamSummary {
    /// Raw (decoded) bytes.
    pub raw: u64,
    /// Stored bytes: block payloads, without block headers.
    pub stored: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// Blocks per codec name.
    pub codecs: BTreeMap<String, u64>,
    /// Blocks per filter label (`none`, or `shuffle/8`: filters and element size).
    pub filters: BTreeMap<String, u64>,
}

impl StreamSummary {
    /// Raw over stored bytes (1.0 for an empty stream).
    pub fn ratio(&self) -> f64 {
        if self.stored == 0 {
            1.0
        } else {
            self.raw as f64 / self.stored as f64
        }
    }
}

/// A block's filters with its element size, for reports: `none` or e.g. `shuffle/8`.
pub fn filter_label(header: &crate::stream::format::BlockHeader) -> String {
    if header.filters.is_none() {
        "none".into()
    } else {
        format!("{}/{}", header.filters, header.typesize)
    }
}

impl<R: Read + Seek> Reader<R> {
    /// One summary per stream, from the index alone (no block is read).
    pub fn summary(&self) -> Vec<StreamSummary> {
        let mut out: Vec<StreamSummary> = self
            .index
            .footer
            .streams
            .iter()
            .map(|s| StreamSummary {
                raw: s.raw_len,
                ..Default::default()
            })
            .collect();
        for b in &self.index.footer.blocks {
            let s = &mut out[b.header.stream as usize];
            s.stored += u64::from(b.header.stored_len);
            s.blocks += 1;
            *s.codecs.entry(b.header.codec.name().to_string()).or_default() += 1;
            *s.filters.entry(filter_label(&b.header)).or_default() += 1;
        }
        out
    }

    /// Reads, checksums and decodes every block (in parallel), discarding the output.
    pub fn verify(&mut self, progress: &mut dyn FnMut(u64)) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        for s in 0..self.index.footer.streams.len() as u32 {
            let len = self.stream_len(s)?;
            let mut sink = io::sink();
            let base = report.raw_bytes;
            report.raw_bytes += self.copy_range_to(s, 0, len, &mut sink, &mut |n| progress(base + n))?;
        }
        report.blocks = self.index.footer.blocks.len() as u64;
        report.stored_bytes = self
            .index
            .footer
            .blocks
            .iter()
            .map(|b| u64::from(b.header.stored_len))
            .sum();
        Ok(report)
    }
}
