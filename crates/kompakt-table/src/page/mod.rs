//! Pages: the rows of one column in one row group, encoded before the codec
//! (docs/FORMAT.md, "Pages").
//!
//! A page is a validity byte (and bitmap) then a body whose layout the column type decides.
//! Fixed-width values choose per page between runs (long runs of equal values), plain
//! (byte-shuffled), frame of reference (narrow integer ranges as byte-wide or bit-packed
//! offsets from the minimum), delta (sorted or slowly changing integers) and a dictionary of up
//! to 256 values with one-byte codes: the codec then entropy-codes bytes, which is where
//! low-cardinality columns get small. Three encodings hold a page of values inside, so that
//! encodings cascade: scaled (integers with a common factor, as quotients), decimal (floats
//! that are integers over a power of ten, as those integers, plus the exceptions) and the
//! nested dictionary (its values as a page, its codes bit-packed up to 16 bits). Strings
//! choose between plain, a page dictionary, codes into the column's shared dictionary and
//! codes into a symbol table (`symbols.rs`).
//!
//! What both directions share is here: the encoding tags, the page summary, the format's
//! limits and little-endian word access. `encode/` holds [`encode_page`] and what it calls,
//! `decode/` [`decode_page`] and its relatives, `tests.rs` the tests of both.

mod column_dict;
mod decode;
mod encode;
mod symbols;
#[cfg(test)]
mod tests;

pub use column_dict::ColumnDict;
pub use decode::{
    decode_page, decode_page_into, decode_page_rows, decode_page_rows_as, decode_page_rows_with, WindowBits,
};
pub(crate) use decode::{decode_page_into_within, decode_page_rows_within};
pub(crate) use encode::{
    column_dict_pays, encode_only_page, encode_page_within, looks_incompressible, repeats_likely, span_fraction,
    BuildFx, Question, ShortKey, Site,
};
pub use encode::{
    encode_coded_values, encode_column_page, encode_dictionary_values, encode_page, encode_shared_dictionary,
    encode_symbol_page, Verdicts,
};
pub use symbols::SymbolTable;

use arrow_data::ArrayData;

/// Body encodings of fixed-width values and strings.
pub mod encoding {
    /// Values as they are (fixed-width types byte-shuffled).
    pub const PLAIN: u8 = 0;
    /// Frame of reference: a base value, then each value minus the base in 1, 2 or 4 bytes.
    pub const FOR: u8 = 1;
    /// A dictionary of distinct values, then a 1- or 2-byte code per value, or the codes
    /// bit-packed (code width [`DICT_PACKED_CODES`]).
    pub const DICT: u8 = 2;
    /// The code width byte of a dictionary of fixed-width values (encoding 2) whose codes
    /// follow bit-packed: a bit width, then the codes (table layout 8).
    pub const DICT_PACKED_CODES: u8 = 0;
    /// Frame of reference with codes packed in `b` bits each (ranges that waste bits in bytes).
    pub const BITPACK: u8 = 3;
    /// The first value, then each value minus the one before, as a frame of reference (sorted
    /// or slowly changing integers and timestamps).
    pub const DELTA: u8 = 4;
    /// Runs of equal values: each run's value, then where each run ends (table layout 2).
    pub const RUNS: u8 = 5;
    /// Integers with a common factor: a base, the factor, then the values' quotients as a
    /// nested page of values (timestamps of whole hours, prices in steps of 5; table layout 3).
    pub const SCALED: u8 = 6;
    /// Floats that are decimals: integers to be divided by a power of ten, as a nested page
    /// of values, then the values that are not (the ALP idea; table layout 3).
    pub const DECIMAL: u8 = 7;
    /// Strings as codes into a dictionary the column's pages share, stored once in the
    /// column's dictionary stream: a nested page of 4-byte codes (table layout 4).
    pub const COLUMN_DICT: u8 = 8;
    /// Strings as codes into a table of up to 255 symbols of 1-8 bytes, stored in the page (the
    /// FSST idea; table layout 5): lengths as plain pages have them, then the table and codes.
    pub const SYMBOLS: u8 = 9;
    /// A dictionary of fixed-width values whose values are a nested page of values (decimal
    /// floats as their codes, integers as a frame of reference, ...), then codes as
    /// [`DICT`]'s, bit-packed ones up to 16 bits (table layout 9).
    pub const NESTED_DICT: u8 = 10;
    /// Values as they are, not byte-shuffled (table layout 9): the bytes of a decimal
    /// fraction repeat within a value, which shuffling hides from the codec.
    pub const UNSHUFFLED: u8 = 11;
}

/// The validity byte that starts every page (but a null column's) and each nested node.
mod validity {
    /// Every row valid.
    pub const VALID: u8 = 0;
    /// A bitmap of `ceil(n/8)` bytes follows.
    pub const BITMAP: u8 = 1;
    /// The null rows' numbers follow: a u32 count, then a nested page of 4-byte values
    /// (table layout 4). Sparse nulls take a few bits each instead of a bit per row.
    pub const NULL_ROWS: u8 = 2;
    /// A bitmap as [`BITMAP`], and the values that follow are the valid rows' only (table
    /// layout 7; nodes of fixed-width values).
    pub const VALID_ONLY: u8 = 3;
}

/// Largest power of ten of a decimal page of float64 values: 10^18 keeps every quotient
/// below 2^63, and every power up to 10^22 is exact in a float64.
const MAX_DECIMAL_EXP_F64: u8 = 18;
/// Largest power of ten of a decimal page of float32 values (10^10 is exact in a float32).
const MAX_DECIMAL_EXP_F32: u8 = 10;
/// Powers of ten, each exactly representable, so that `code / 10^e` is one correctly rounded
/// division on every machine.
const POW10_F64: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
];
const POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

/// The value of a decimal page's code (a `W`-byte two's-complement integer) at power `e`.
#[inline]
fn decimal_value<const W: usize>(code: u64, e: u8) -> u64 {
    if W == 8 {
        ((code as i64) as f64 / POW10_F64[e as usize]).to_bits()
    } else {
        u64::from(((code as u32 as i32) as f32 / POW10_F32[e as usize]).to_bits())
    }
}

/// A page as the writer encoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// The page summary of the table index: body encoding, plus [`SUMMARY_NULLS`].
    pub summary: u8,
    /// The oldest table layout whose readers decode every part of the page (nested parts and
    /// string lengths included, which the summary does not show).
    pub layout: u16,
}

/// Bit of a page summary (in the table index) set when the page has a validity bitmap.
pub const SUMMARY_NULLS: u8 = 0x80;

/// Largest dictionary of fixed-width values (one-byte codes).
const MAX_FIXED_DICT: usize = 256;
/// Largest dictionary of fixed-width values with two-byte codes.
const MAX_WIDE_DICT: usize = 1 << 16;
/// Largest dictionary of strings (two-byte codes).
const MAX_STRING_DICT: usize = 1 << 16;
/// Most bytes a page may expand to beyond the bytes it holds, all its parts together: values
/// and offsets decoded from encodings that can stand for many values in few bytes (runs,
/// 0-bit codes, list lengths), and strings rebuilt from a dictionary. A bound on what a hostile
/// page can make us allocate; string data copied as it is does not count. Within a read, every
/// buffer (copies included) is also counted against the read's budget (`budget.rs`), which is
/// usually far smaller.
const MAX_PAGE_DATA: u64 = 1 << 34;

/// Rows `offset..offset + len` of `data`. Through Arrow's arrays, not `ArrayData::slice`:
/// that one slices a struct's children *and* moves the struct's offset, which
/// `StructArray::from` then applies a second time.
pub(crate) fn slice_data(data: &ArrayData, offset: usize, len: usize) -> ArrayData {
    arrow_array::make_array(data.clone()).slice(offset, len).to_data()
}

#[inline]
fn load<const W: usize>(b: &[u8; W]) -> u64 {
    let mut a = [0u8; 8];
    a[..W].copy_from_slice(b);
    u64::from_le_bytes(a)
}

#[inline]
fn store<const W: usize>(v: u64, dst: &mut [u8; W]) {
    dst.copy_from_slice(&v.to_le_bytes()[..W]);
}
