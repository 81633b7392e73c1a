//! Reads of a row range as record batches, one per row group the range covers.

use super::tasks::map_tasks;
use super::TableReader;
use crate::budget::Budget;
use arrow_array::{make_array, RecordBatch, RecordBatchOptions};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::{DataType, SchemaRef};
use kompakt::{Error, Result};
use std::ops::Range;

impl TableReader {
    /// Reads rows `rows` of the columns `columns` (positions; `None`: all), one record batch
    /// per row group the range covers, on `threads` threads (0: all cores).
    pub fn read(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        self.read_within(columns, rows, threads, &self.budget())
    }

    /// [`read`](Self::read) within `budget`.
    pub(super) fn read_within(
        &self,
        columns: Option<&[usize]>,
        rows: Range<u64>,
        threads: usize,
        budget: &Budget,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let (columns, schema) = self.request(columns, &rows)?;
        let columns = &columns[..];
        let fields = self.parsed.schema.fields();
        if rows.is_empty() {
            // One empty batch, so that dictionary columns still carry their values.
            let arrays = columns
                .iter()
                .map(|&c| match fields[c].data_type() {
                    dt @ DataType::Dictionary(key, _) => {
                        let keys = ArrayData::new_empty(key);
                        ArrayDataBuilder::new(dt.clone())
                            .add_buffer(keys.buffers()[0].clone())
                            .add_child_data(self.dictionary_within(c, budget)?)
                            .build()
                            .map(make_array)
                            .map_err(|e| Error::corrupt("table dictionary", 0, e.to_string()))
                    }
                    dt => Ok(make_array(ArrayData::new_empty(dt))),
                })
                .collect::<Result<Vec<_>>>()?;
            let opts = RecordBatchOptions::new().with_row_count(Some(0));
            let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, vec![batch]));
        }
        if columns.is_empty() {
            // Rows without columns: one batch, whatever the row count says.
            let n = usize::try_from(rows.end - rows.start).map_err(|_| Error::OutOfRange {
                detail: "more rows than this machine can address".into(),
            })?;
            let opts = RecordBatchOptions::new().with_row_count(Some(n));
            let batch = RecordBatch::try_new_with_options(schema.clone(), Vec::new(), &opts)
                .map_err(|e| Error::corrupt("table", 0, e.to_string()))?;
            return Ok((schema, vec![batch]));
        }
        let groups = self.groups_of(&rows);
        let tasks: Vec<(u64, usize)> = groups
            .clone()
            .flat_map(|g| columns.iter().map(move |&c| (g, c)))
            .collect();
        let window = |g: u64| self.window(g, &rows);
        self.prefetch_pages(tasks.iter().map(|&(g, c)| (c, g)));
        let threads = self.threads_for(columns, &groups, threads);
        let pages: Vec<Result<ArrayData>> =
            map_tasks(threads, tasks, |(g, c)| self.read_page(c, g, window(g), budget))?;
        let mut pages = pages.into_iter();
        let mut batches = Vec::with_capacity((groups.end - groups.start) as usize);
        for g in groups {
            let in_group = window(g);
            let mut arrays = Vec::with_capacity(columns.len());
            for _ in columns {
                arrays.push(make_array(pages.next().expect("one page per task")?));
            }
            let opts = RecordBatchOptions::new().with_row_count(Some(in_group.len()));
            let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &opts)
                .map_err(|e| Error::corrupt("table page", 0, e.to_string()))?;
            batches.push(batch);
        }
        Ok((schema, batches))
    }
}
