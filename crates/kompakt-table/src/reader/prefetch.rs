//! Prefetch hints: telling the source which byte ranges a read is about to need, so that a
//! remote one fetches them in a few merged requests.

use super::TableReader;
use kompakt::Result;
use std::ops::Range;

impl TableReader {
    /// Tells the source that rows `rows` of `columns` (positions; `None`: all) are about to be
    /// read: a remote source fetches their pages in a few merged requests, in the background.
    /// For callers that read a range in several calls (a column at a time, or in chunks); one
    /// call of the read functions hints what it reads already. Files and memory ignore it.
    pub fn prefetch(&self, columns: Option<&[usize]>, rows: Range<u64>) -> Result<()> {
        let (columns, _) = self.request(columns, &rows)?;
        if !rows.is_empty() {
            let groups = self.groups_of(&rows);
            self.prefetch_pages(columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g))));
        }
        Ok(())
    }

    /// Tells the source which byte ranges the pages `(column, group)` (and the dictionaries
    /// of their columns, when not read yet) are about to be read from: a remote source fetches
    /// them in a few merged requests at once instead of a round trip per block. Files and
    /// memory ignore it.
    pub(super) fn prefetch_pages(&self, pages: impl IntoIterator<Item = (usize, u64)>) {
        let mut ranges = Vec::new();
        let mut add = |stream: u32, start: u64, end: u64| {
            for b in self.index.covering_blocks(stream, start, end).unwrap_or_default() {
                let len = kompakt::stream::format::BLOCK_HEADER_LEN as u64 + u64::from(b.header.stored_len);
                ranges.push(b.file_offset..b.file_offset + len);
            }
        };
        let mut columns = Vec::new();
        for (c, g) in pages {
            let Some(page) = self.meta.pages.get(c).and_then(|p| p.get(g as usize)) else {
                continue;
            };
            add(c as u32, page.start, page.end);
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        for c in columns {
            let layout = self.parsed.layouts[c];
            let Some(stream) = layout.dictionary_stream else {
                continue;
            };
            let cached = self.dictionaries.lock().expect("dictionary cache").contains_key(&c)
                || self.column_dicts.lock().expect("dictionary cache").contains_key(&c);
            if let (false, Ok(len)) = (cached, self.index.stream_len(stream)) {
                add(stream, layout.dictionary_offset, len);
            }
        }
        if !ranges.is_empty() {
            ranges.sort_by_key(|r| r.start);
            ranges.dedup();
            self.source.prefetch(&ranges);
        }
    }
}
