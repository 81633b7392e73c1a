//! Spreading a read's pages over threads, or keeping a small read on the calling thread.

use super::TableReader;
use crate::threads::with_threads;
use kompakt::Result;
use rayon::prelude::*;
use std::ops::Range;

/// Reads whose pages hold at most this many encoded bytes run on the calling thread. Handing
/// work to a pool and taking it back costs several context switches (25 us a hand-off on the
/// benchmark VM, three per `read_columns`), more than decoding a few small pages takes: a
/// 1000-row slice of two columns spent three quarters of its time in the scheduler.
const SMALL_READ: u64 = 256 << 10;

/// `f` over `items`, results in order: on the calling thread when `threads` is 1, otherwise
/// on a pool of `threads` threads (0: all cores).
pub(super) fn map_tasks<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    if threads == 1 {
        return Ok(items.into_iter().map(f).collect());
    }
    with_threads(threads, || items.into_par_iter().map(f).collect())
}

impl TableReader {
    /// The threads a read of `columns` over row groups `groups` should use: 1 (the calling
    /// thread) when its pages are small, `threads` otherwise.
    pub(super) fn threads_for(&self, columns: &[usize], groups: &Range<u64>, threads: usize) -> usize {
        let pages = columns.iter().flat_map(|&c| groups.clone().map(move |g| (c, g)));
        self.threads_for_pages(pages, threads)
    }

    /// The threads a read of the pages `(column, group)` should use, as [`Self::threads_for`].
    pub(super) fn threads_for_pages(&self, pages: impl IntoIterator<Item = (usize, u64)>, threads: usize) -> usize {
        let mut bytes = 0u64;
        for (c, g) in pages {
            let p = self.meta.pages[c][g as usize];
            bytes += p.end - p.start;
            if bytes > SMALL_READ {
                return threads;
            }
        }
        1
    }
}
