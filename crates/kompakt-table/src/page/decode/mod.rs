//! Decoding pages (docs/FORMAT.md, "Pages"): whole pages, windows of rows, and fixed-width
//! windows straight into a caller's buffer. Every length and count a page claims is checked
//! against the bytes it holds and against one budget for all it may expand to.
//!
//! This file holds the entry points and the cursor every part reads through (with its
//! budgets); `node.rs` decodes a node's validity and dispatches on its type, `fixed.rs`
//! decodes fixed-width values, `offsets.rs` lengths into offsets, `strings.rs` string pages
//! as offsets and data, `views.rs` as views.

mod fixed;
mod node;
mod offsets;
mod strings;
mod views;

#[cfg(test)]
pub(super) use strings::byte_array;

use super::column_dict::ColumnDict;
use super::{slice_data, MAX_PAGE_DATA};
use crate::budget::Budget;
use crate::string_layout::StringLayout;
use crate::zeroed::{try_copy, ZeroedBuffer};
use arrow_buffer::{Buffer, MutableBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::{Error, Result};
use node::{decode_node_as, decode_window, decode_window_bits};

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Bytes the page may still decode to: one bound for all its parts (a struct's fields, a
    /// list's levels), so that nesting cannot multiply what a hostile page makes us allocate.
    budget: u64,
    /// The column's shared dictionary, for top-level pages coded against it.
    dict: Option<&'a ColumnDict>,
    /// The budget of the read the page is part of: every buffer the page decodes to is counted
    /// against it before it is allocated, copies of the page's own bytes included.
    read: Option<&'a Budget>,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self::with_budget(bytes, MAX_PAGE_DATA)
    }

    fn with_budget(bytes: &'a [u8], budget: u64) -> Self {
        Cursor {
            bytes,
            pos: 0,
            budget,
            dict: None,
            read: None,
        }
    }

    /// Counts `len` decoded bytes against the page's budget (more than any valid page decodes
    /// to: damage), then against the read's (more than the caller allows: a limit error).
    fn charge(&mut self, len: usize) -> Result<()> {
        self.budget = self
            .budget
            .checked_sub(len as u64)
            .ok_or_else(|| corrupt(format!("the page decodes to more than {} GiB", MAX_PAGE_DATA >> 30)))?;
        self.charge_copy(len)
    }

    /// Counts `len` bytes copied from the page as they are (string data, bitmaps) against the
    /// read's budget only: a copy expands nothing, so the page's own bound leaves it out.
    fn charge_copy(&mut self, len: usize) -> Result<()> {
        match self.read {
            Some(read) => read.charge(len as u64, "a page's decoded data"),
            None => Ok(()),
        }
    }

    /// A copy of `bytes`, counted against the read's budget and allocated fallibly.
    fn copy(&mut self, bytes: &[u8]) -> Result<Buffer> {
        self.charge_copy(bytes.len())?;
        Ok(Buffer::from_vec(try_copy(bytes, "a page's data")?))
    }

    /// `len` zero bytes of decoded values, counted against the page's budget; an error, not an
    /// abort, when the memory is not there.
    fn alloc(&mut self, len: usize) -> Result<MutableBuffer> {
        self.charge(len)?;
        Ok(ZeroedBuffer::new(len, "a page's values")?.into_mutable())
    }

    /// `len` zero bytes of a working buffer the page's decoding drops before it returns (codes
    /// before they are looked up, valid values before they are spread to their rows): counted
    /// against the page's own bound, checked against the read's limit but not counted as kept
    /// (as a page's bytes after the codec are), so that a read of exactly its limit in values
    /// does not fail for the way its pages were stored.
    fn scratch(&mut self, len: usize) -> Result<MutableBuffer> {
        self.budget = self
            .budget
            .checked_sub(len as u64)
            .ok_or_else(|| corrupt(format!("the page decodes to more than {} GiB", MAX_PAGE_DATA >> 30)))?;
        if let Some(read) = self.read {
            read.check(len as u64, "a page's working buffer")?;
        }
        Ok(ZeroedBuffer::new(len, "a page's working buffer")?.into_mutable())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                corrupt(format!(
                    "page ends early: {n} bytes needed at {} of {}",
                    self.pos,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

fn corrupt(detail: impl Into<String>) -> Error {
    Error::corrupt("table page", 0, detail)
}

/// The error of an allocation of `len` bytes of `what` that the allocator refused.
fn no_memory(len: usize, what: &str) -> Error {
    Error::OutOfRange {
        detail: format!("{what} needs {len} bytes, more than this machine can allocate"),
    }
}

/// Decodes a page of `n` rows of type `dt` (a leaf type; for a dictionary column, its key type).
pub fn decode_page(dt: &DataType, n: usize, bytes: &[u8]) -> Result<ArrayData> {
    decode_page_rows(dt, n, bytes, 0..n)
}

/// Decodes rows `rows` of a page of `n` rows. Fixed-width and boolean pages decode only those
/// rows (after the codec, a 1000-row read of a 16384-row page widens 1000 values, not all);
/// other types decode the page and slice it.
pub fn decode_page_rows(dt: &DataType, n: usize, bytes: &[u8], rows: std::ops::Range<usize>) -> Result<ArrayData> {
    decode_rows_within(dt, StringLayout::AsStored, n, bytes, rows, MAX_PAGE_DATA, None)
}

/// [`decode_page_rows`], a `Utf8` or `Binary` page decoded to the type `strings` asks for
/// ([`StringLayout::read_type`]) as it decodes, instead of by a cast later.
pub fn decode_page_rows_as(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
) -> Result<ArrayData> {
    decode_rows_within(dt, strings, n, bytes, rows, MAX_PAGE_DATA, None)
}

/// [`decode_page_rows_as`] for a page of a column whose pages share `dict`
/// (the column's dictionary stream), which pages of encoding
/// [`COLUMN_DICT`](super::encoding::COLUMN_DICT) index. Without one such pages are corrupt.
pub fn decode_page_rows_with(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dict: Option<&ColumnDict>,
) -> Result<ArrayData> {
    decode_rows_within(dt, strings, n, bytes, rows, MAX_PAGE_DATA, dict)
}

/// [`decode_page_rows_with`] as part of a read: every buffer the page decodes to is counted
/// against `read` before it is allocated (a limit error when it does not fit).
pub(crate) fn decode_page_rows_within(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dict: Option<&ColumnDict>,
    read: &Budget,
) -> Result<ArrayData> {
    decode_rows_budgeted(dt, strings, n, bytes, rows, MAX_PAGE_DATA, dict, Some(read))
}

/// [`decode_page_rows_with`] with `budget` bytes for all the page decodes to.
pub(super) fn decode_rows_within(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    budget: u64,
    dict: Option<&ColumnDict>,
) -> Result<ArrayData> {
    decode_rows_budgeted(dt, strings, n, bytes, rows, budget, dict, None)
}

/// [`decode_rows_within`], counting against the read's budget `read` too. The page's own
/// budget is never more than what the read has left.
#[allow(clippy::too_many_arguments)]
fn decode_rows_budgeted(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    budget: u64,
    dict: Option<&ColumnDict>,
    read: Option<&Budget>,
) -> Result<ArrayData> {
    if rows.start > rows.end || rows.end > n {
        return Err(Error::OutOfRange {
            detail: format!("rows {}..{} of a page of {n}", rows.start, rows.end),
        });
    }
    let mut c = Cursor::with_budget(bytes, budget);
    c.dict = dict;
    c.read = read;
    let windowed = *dt == DataType::Boolean || crate::schema::fixed_width(dt).is_some();
    let data = if windowed {
        decode_window(dt, n, rows.clone(), &mut c)?
    } else {
        decode_node_as(dt, strings, n, &mut c)?
    };
    if c.pos != bytes.len() {
        return Err(corrupt(format!("{} bytes after the page's data", bytes.len() - c.pos)));
    }
    if windowed || rows == (0..n) {
        Ok(data)
    } else {
        Ok(slice_data(&data, rows.start, rows.len()))
    }
}

/// Bitmaps of a window of rows, starting at bit 0: validity (absent: no nulls) and, for
/// booleans, the values.
#[derive(Debug)]
pub struct WindowBits {
    /// Validity of the rows, if the page has a bitmap.
    pub validity: Option<Buffer>,
    /// Values of a boolean page; `None` for fixed-width pages, whose values went to `dst`.
    pub values: Option<Buffer>,
}

/// Decodes rows `rows` of a fixed-width or boolean page of `n` rows straight into `dst`:
/// `width * rows.len()` bytes for fixed-width types, empty for booleans (whose values come
/// back as bits). This is how a whole-column read fills one buffer from many pages.
pub fn decode_page_into(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
) -> Result<WindowBits> {
    decode_page_into_budgeted(dt, n, bytes, rows, dst, None, None)
}

/// [`decode_page_into`] as part of a read, for a page of a column whose pages may share
/// `dict`: the bitmaps it makes are counted against `read` (the caller counted `dst`).
pub(crate) fn decode_page_into_within(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
    dict: Option<&ColumnDict>,
    read: &Budget,
) -> Result<WindowBits> {
    decode_page_into_budgeted(dt, n, bytes, rows, dst, dict, Some(read))
}

fn decode_page_into_budgeted(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
    dict: Option<&ColumnDict>,
    read: Option<&Budget>,
) -> Result<WindowBits> {
    if rows.start > rows.end || rows.end > n {
        return Err(Error::OutOfRange {
            detail: format!("rows {}..{} of a page of {n}", rows.start, rows.end),
        });
    }
    let expected = crate::schema::fixed_width(dt).map_or(0, |w| w * rows.len());
    if dst.len() != expected || (*dt != DataType::Boolean && crate::schema::fixed_width(dt).is_none()) {
        return Err(Error::Usage(format!(
            "decode_page_into: {dt} pages need a {expected}-byte destination, got {}",
            dst.len()
        )));
    }
    let mut c = Cursor::new(bytes);
    c.dict = dict;
    c.read = read;
    let bits = decode_window_bits(dt, n, rows, &mut c, dst)?;
    if c.pos != bytes.len() {
        return Err(corrupt(format!("{} bytes after the page's data", bytes.len() - c.pos)));
    }
    Ok(bits)
}
