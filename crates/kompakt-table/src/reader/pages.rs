//! Reading one page: its bytes from the column's stream, then a window of its rows decoded to an
//! array or into a buffer; errors name the column and rows.

use super::dictionary::dictionary_array;
use super::{leaf_type, TableReader};
use crate::budget::Budget;
use crate::page::{decode_page_into_within, decode_page_rows_within, WindowBits};
use crate::string_layout::StringLayout;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::{Error, Result};
use std::ops::Range;

impl TableReader {
    /// Reads page `g` of column `c` and decodes its rows `rows` (positions within the group).
    pub(super) fn read_page(&self, c: usize, g: u64, rows: Range<usize>, budget: &Budget) -> Result<ArrayData> {
        self.read_page_as(c, g, rows, StringLayout::AsStored, budget)
    }

    /// [`read_page`](Self::read_page), a string or binary page as `strings` says.
    pub(super) fn read_page_as(
        &self,
        c: usize,
        g: u64,
        rows: Range<usize>,
        strings: StringLayout,
        budget: &Budget,
    ) -> Result<ArrayData> {
        let page = self.meta.pages[c][g as usize];
        let field = self.parsed.schema.field(c);
        let n = self.group_rows(g);
        let context = |e: Error| self.in_page(e, c, g);
        let leaf = leaf_type(field.data_type());
        let dict = self.column_dict(c, budget)?;
        // The page's bytes after the codec are a working buffer, kept for the next page once
        // it is decoded: they must fit within the limit, but are not counted as kept.
        budget
            .check(page.end.saturating_sub(page.start), "a page's bytes")
            .map_err(context)?;
        let decoded = self
            .with_raw(c as u32, page.start, page.end, |raw| {
                decode_page_rows_within(leaf, strings, n, raw, rows, dict.as_deref(), budget)
            })
            .map_err(context)?;
        match field.data_type() {
            DataType::Dictionary(..) => Ok(dictionary_array(decoded, self.dictionary_within(c, budget)?)
                .map_err(|e| context(Error::corrupt("table page", 0, format!("invalid dictionary keys: {e}"))))?
                .to_data()),
            _ => Ok(decoded),
        }
    }

    /// Reads page `g` of fixed-width or boolean column `c` (for a dictionary column, its keys)
    /// and decodes its rows `rows` into `dst`.
    pub(super) fn read_page_into(
        &self,
        c: usize,
        g: u64,
        rows: Range<usize>,
        dst: &mut [u8],
        budget: &Budget,
    ) -> Result<WindowBits> {
        let page = self.meta.pages[c][g as usize];
        let field = self.parsed.schema.field(c);
        let n = self.group_rows(g);
        let dict = self.column_dict(c, budget).map_err(|e| self.in_page(e, c, g))?;
        budget
            .check(page.end.saturating_sub(page.start), "a page's bytes")
            .map_err(|e| self.in_page(e, c, g))?;
        self.with_raw(c as u32, page.start, page.end, |raw| {
            decode_page_into_within(leaf_type(field.data_type()), n, raw, rows, dst, dict.as_deref(), budget)
        })
        .map_err(|e| self.in_page(e, c, g))
    }

    /// `e` with the column and rows of page `g` of column `c` in its detail.
    fn in_page(&self, e: Error, c: usize, g: u64) -> Error {
        match e {
            Error::Corrupt { what, detail, .. } => Error::Corrupt {
                what,
                offset: 0,
                detail: format!(
                    "column {:?}, rows {}..: {detail}",
                    self.parsed.schema.field(c).name(),
                    g * u64::from(self.meta.rows_per_group)
                ),
            },
            e => e,
        }
    }
}
