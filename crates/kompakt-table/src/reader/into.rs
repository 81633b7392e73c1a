//! Decoding rows of a fixed-width column straight into memory the caller owns (a numpy array),
//! with their validity when asked.

use super::tasks::map_tasks;
use super::TableReader;
use arrow_schema::DataType;
use kompakt::{Error, Result};
use std::ops::Range;

impl TableReader {
    /// Decodes rows `rows` of fixed-width column `c` (not boolean, not a dictionary) straight
    /// into `dst`, `rows.len()` values of the column's width: memory the caller owns, such as
    /// a numpy array. Returns whether every row is valid; when some are null, their values in
    /// `dst` are unspecified and the caller needs the validity from [`read_columns`].
    ///
    /// [`read_columns`]: Self::read_columns
    pub fn read_column_into(&self, c: usize, rows: Range<u64>, dst: &mut [u8], threads: usize) -> Result<bool> {
        let pages = self.read_pages_into(c, rows, dst, threads)?;
        Ok(pages.into_iter().all(|(n, validity)| {
            validity.is_none_or(|v| arrow_buffer::BooleanBuffer::new(v, 0, n).count_set_bits() == n)
        }))
    }

    /// [`read_column_into`](Self::read_column_into), with the validity of the rows: `None`
    /// when no page of the range has a validity bitmap (every row valid), else one bit per row.
    pub fn read_column_into_with_validity(
        &self,
        c: usize,
        rows: Range<u64>,
        dst: &mut [u8],
        threads: usize,
    ) -> Result<Option<arrow_buffer::BooleanBuffer>> {
        let pages = self.read_pages_into(c, rows, dst, threads)?;
        if pages.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        let total = pages.iter().map(|(n, _)| n).sum();
        let mut bits = arrow_buffer::BooleanBufferBuilder::new(total);
        for (n, validity) in pages {
            match validity {
                Some(v) => bits.append_packed_range(0..n, v.as_slice()),
                None => bits.append_n(n, true),
            }
        }
        Ok(Some(bits.finish()))
    }

    /// Decodes rows `rows` of fixed-width column `c` into `dst`, page by page in parallel;
    /// returns each page's row count and validity bitmap, in row order.
    fn read_pages_into(
        &self,
        c: usize,
        rows: Range<u64>,
        dst: &mut [u8],
        threads: usize,
    ) -> Result<Vec<(usize, Option<arrow_buffer::Buffer>)>> {
        let (_, _) = self.request(Some(&[c]), &rows)?;
        let field = self.parsed.schema.field(c);
        let width = match (field.data_type(), crate::schema::fixed_width(field.data_type())) {
            (DataType::Boolean | DataType::Dictionary(..), _) | (_, None) => {
                return Err(Error::invalid(
                    "column",
                    field.name(),
                    "a column of fixed-width values (numbers, dates, times) to decode into memory",
                ))
            }
            (_, Some(w)) => w,
        };
        let m = usize::try_from(rows.end - rows.start)
            .ok()
            .filter(|m| m.checked_mul(width) == Some(dst.len()));
        if m.is_none() {
            return Err(Error::invalid(
                "output buffer",
                format!("{} bytes", dst.len()),
                format!("{} rows of {width} bytes", rows.end - rows.start),
            ));
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let budget = self.budget();
        budget.charge(dst.len() as u64, "the values read")?;
        let window = |g: u64| self.window(g, &rows);
        let mut tasks = Vec::new();
        let mut rest = dst;
        let groups = self.groups_of(&rows);
        for g in groups.clone() {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(width * window(g).len());
            rest = tail;
            tasks.push((g, part));
        }
        self.prefetch_pages(groups.clone().map(|g| (c, g)));
        let threads = self.threads_for(&[c], &groups, threads);
        map_tasks(threads, tasks, |(g, part)| {
            let rows = window(g);
            let bits = self.read_page_into(c, g, rows.clone(), part, &budget)?;
            Ok((rows.len(), bits.validity))
        })?
        .into_iter()
        .collect()
    }
}
