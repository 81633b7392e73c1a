//! Takes: rows at given positions, in any order, each row group they fall in read once.

use super::dictionary::dictionary_array;
use super::tasks::map_tasks;
use super::TableReader;
use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};
use kompakt::{Error, Result};
use std::ops::Range;

impl TableReader {
    /// Rows at positions `indices` (in the order given; repeats allowed) of the columns
    /// `columns` (positions; `None`: all), as one batch, on `threads` threads (0: all cores).
    /// Each row group holding any of the rows is read once, and only the window of its pages
    /// from the first of those rows to the last is decoded, however many rows it holds.
    pub fn take(&self, columns: Option<&[usize]>, indices: &[u64], threads: usize) -> Result<(SchemaRef, RecordBatch)> {
        let n = self.meta.num_rows;
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(Error::OutOfRange {
                detail: format!("row {bad} of a table of {n} rows"),
            });
        }
        let (columns, schema) = self.request(columns, &(0..n))?;
        if indices.is_empty() {
            // One empty batch, dictionaries included, as a read of no rows gives.
            let (schema, mut batches) = self.read(Some(&columns), 0..0, 1)?;
            return Ok((schema, batches.remove(0)));
        }
        if columns.is_empty() {
            let opts = RecordBatchOptions::new().with_row_count(Some(indices.len()));
            let batch = RecordBatch::try_new_with_options(schema.clone(), Vec::new(), &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, batch));
        }
        let r = u64::from(self.meta.rows_per_group);
        // The groups touched, in order, each with the window of its rows that the take needs.
        let mut windows: Vec<(u64, Range<usize>)> = Vec::new();
        {
            let mut sorted: Vec<u64> = indices.to_vec();
            sorted.sort_unstable();
            for &i in &sorted {
                let (g, at) = (i / r, (i % r) as usize);
                match windows.last_mut() {
                    Some((last, w)) if *last == g => w.end = at + 1,
                    _ => windows.push((g, at..at + 1)),
                }
            }
        }
        let tasks: Vec<(usize, usize)> = (0..windows.len())
            .flat_map(|w| columns.iter().map(move |&c| (w, c)))
            .collect();
        self.prefetch_pages(tasks.iter().map(|&(w, c)| (c, windows[w].0)));
        let threads = self.threads_for_pages(tasks.iter().map(|&(w, c)| (c, windows[w].0)), threads);
        let budget = self.budget();
        let pages = map_tasks(threads, tasks, |(w, c)| {
            let (g, rows) = &windows[w];
            self.read_page(c, *g, rows.clone(), &budget).map(make_array)
        })?
        .into_iter()
        .collect::<Result<Vec<ArrayRef>>>()?;
        // Where each requested row lies: (its window, its position in the window's pages).
        let place = |i: u64| {
            let g = i / r;
            let w = windows.partition_point(|(wg, _)| *wg < g);
            (w, (i % r) as usize - windows[w].1.start)
        };
        let places: Vec<(usize, usize)> = indices.iter().map(|&i| place(i)).collect();
        let arrays = (0..columns.len())
            .map(|k| {
                let parts: Vec<&dyn arrow_array::Array> = (0..windows.len())
                    .map(|w| pages[w * columns.len() + k].as_ref())
                    .collect();
                let interleave = |parts: &[&dyn arrow_array::Array]| {
                    arrow_select::interleave::interleave(parts, &places)
                        .map_err(|e| Error::corrupt("table page", 0, e.to_string()))
                };
                if !matches!(schema.field(k).data_type(), DataType::Dictionary(..)) {
                    return interleave(&parts);
                }
                // The keys, then the column's one dictionary: interleaving dictionary arrays
                // would append one copy of it per page, as values that differ.
                use arrow_array::cast::AsArray;
                let keys: Vec<&dyn arrow_array::Array> = parts.iter().map(|p| p.as_any_dictionary().keys()).collect();
                dictionary_array(
                    interleave(&keys)?.to_data(),
                    self.dictionary_within(columns[k], &budget)?,
                )
                .map_err(|e| Error::corrupt("table page", 0, format!("invalid dictionary keys: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let opts = RecordBatchOptions::new().with_row_count(Some(indices.len()));
        let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
            .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
        Ok((schema, batch))
    }
}
