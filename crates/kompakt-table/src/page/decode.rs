//! Decoding pages (docs/FORMAT.md, "Pages"): whole pages, windows of rows, and fixed-width
//! windows straight into a caller's buffer. Every length and count a page claims is checked
//! against the bytes it holds and against one budget for all it may expand to.

use super::column_dict::{ColumnDict, SLACK};
use super::symbols::Symbols;
use super::validity::{BITMAP, NULL_ROWS, VALID};
use super::{
    decimal_value, encoding, load, slice_data, store, MAX_DECIMAL_EXP_F32, MAX_DECIMAL_EXP_F64, MAX_FIXED_DICT,
    MAX_PAGE_DATA, MAX_STRING_DICT, MAX_WIDE_DICT,
};
use crate::budget::Budget;
use crate::string_layout::StringLayout;
use crate::zeroed::{try_copy, try_vec, ZeroedBuffer};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::{bit_util, Buffer, MutableBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::filter::unshuffle;
use kompakt::{Error, Result};

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Bytes the page may still decode to: one bound for all its parts (a struct's fields, a
    /// list's levels), so that nesting cannot multiply what a hostile page makes us allocate.
    budget: u64,
    /// The column's shared dictionary, for top-level string pages coded against it.
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

/// [`decode_page_rows_as`] for a page of a string or binary column whose pages share `dict`
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
    decode_page_into_budgeted(dt, n, bytes, rows, dst, None)
}

/// [`decode_page_into`] as part of a read: the bitmaps it makes are counted against `read`
/// (the caller counted `dst`).
pub(crate) fn decode_page_into_within(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
    read: &Budget,
) -> Result<WindowBits> {
    decode_page_into_budgeted(dt, n, bytes, rows, dst, Some(read))
}

fn decode_page_into_budgeted(
    dt: &DataType,
    n: usize,
    bytes: &[u8],
    rows: std::ops::Range<usize>,
    dst: &mut [u8],
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
    c.read = read;
    let bits = decode_window_bits(dt, n, rows, &mut c, dst)?;
    if c.pos != bytes.len() {
        return Err(corrupt(format!("{} bytes after the page's data", bytes.len() - c.pos)));
    }
    Ok(bits)
}

/// Rows `rows` of a fixed-width or boolean node of `n` rows.
fn decode_window(dt: &DataType, n: usize, rows: std::ops::Range<usize>, c: &mut Cursor<'_>) -> Result<ArrayData> {
    let m = rows.len();
    let mut values = match crate::schema::fixed_width(dt) {
        Some(w) => c.alloc(w * m)?,
        None => MutableBuffer::new(0),
    };
    let bits = decode_window_bits(dt, n, rows, c, values.as_slice_mut())?;
    let builder = ArrayDataBuilder::new(dt.clone()).len(m).null_bit_buffer(bits.validity);
    build(builder.add_buffer(bits.values.unwrap_or_else(|| values.into())))
}

fn decode_window_bits(
    dt: &DataType,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
) -> Result<WindowBits> {
    let nbytes = bit_util::ceil(n, 8);
    let m = rows.len();
    let window_bits = |bits: &[u8], c: &mut Cursor<'_>| -> Result<Buffer> {
        if rows.start == 0 && m == n {
            return c.copy(bits);
        }
        c.charge_copy(bit_util::ceil(m, 8))?;
        let mut out = try_vec(bit_util::ceil(m, 8), 0u8, "a page's bitmap")?;
        set_bits(&mut out, bits, 0, rows.start, m);
        Ok(Buffer::from_vec(out))
    };
    let validity = match read_validity(n, c)? {
        Some(bits) => Some(window_bits(&bits, c)?),
        None => None,
    };
    if *dt == DataType::Boolean {
        let bits = c.take(nbytes)?;
        let values = Some(window_bits(bits, c)?);
        return Ok(WindowBits { validity, values });
    }
    let w = crate::schema::fixed_width(dt).ok_or_else(|| corrupt(format!("no page layout for {dt}")))?;
    decode_fixed_rows_into(w, n, rows, c, dst, Nest::top(dt))?;
    Ok(WindowBits { validity, values: None })
}

/// The validity bitmap of a node of `n` rows (`None`: no nulls): stored as it is, or rebuilt
/// from the null rows' numbers (table layout 4).
fn read_validity<'a>(n: usize, c: &mut Cursor<'a>) -> Result<Option<std::borrow::Cow<'a, [u8]>>> {
    let nbytes = bit_util::ceil(n, 8);
    match c.u8()? {
        VALID => Ok(None),
        BITMAP => Ok(Some(std::borrow::Cow::Borrowed(c.take(nbytes)?))),
        NULL_ROWS => {
            let k = c.u32()? as usize;
            if k == 0 || k > n {
                return Err(corrupt(format!("{k} null rows in a page of {n}")));
            }
            c.charge(nbytes)?;
            let rows = decode_fixed(4, k, c)?;
            let mut bits = try_vec(nbytes, 0xffu8, "a page's validity")?;
            let mut next = 0usize;
            for r in rows.as_slice().as_chunks::<4>().0 {
                let r = u32::from_le_bytes(*r) as usize;
                if r < next || r >= n {
                    return Err(corrupt("null rows not increasing, or past the page"));
                }
                bit_util::unset_bit(&mut bits, r);
                next = r + 1;
            }
            Ok(Some(std::borrow::Cow::Owned(bits)))
        }
        v => Err(corrupt(format!("unknown validity kind {v}"))),
    }
}

fn decode_node(dt: &DataType, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    decode_node_as(dt, StringLayout::AsStored, n, c)
}

/// A node of type `dt`, a `Utf8` or `Binary` one as `strings` says.
fn decode_node_as(dt: &DataType, strings: StringLayout, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    if *dt == DataType::Null {
        return build(ArrayDataBuilder::new(DataType::Null).len(n));
    }
    let nbytes = bit_util::ceil(n, 8);
    let validity = match read_validity(n, c)? {
        Some(std::borrow::Cow::Borrowed(b)) => Some(c.copy(b)?),
        Some(std::borrow::Cow::Owned(v)) => Some(Buffer::from_vec(v)),
        None => None,
    };
    let builder = ArrayDataBuilder::new(dt.clone())
        .len(n)
        .null_bit_buffer(validity.clone());
    match dt {
        DataType::Boolean => {
            let bits = c.take(nbytes)?;
            build(builder.add_buffer(c.copy(bits)?))
        }
        // Only top-level columns share a dictionary: strings inside are on their own.
        DataType::Struct(fields) => {
            let dict = c.dict.take();
            let children = fields
                .iter()
                .map(|f| decode_node(f.data_type(), n, c))
                .collect::<Result<Vec<_>>>()?;
            c.dict = dict;
            build(builder.child_data(children))
        }
        DataType::List(item) => {
            let (offsets, m) = decode_offsets::<4>(n, c)?;
            let dict = c.dict.take();
            let child = decode_node(item.data_type(), m, c)?;
            c.dict = dict;
            build(builder.add_buffer(offsets).add_child_data(child))
        }
        DataType::LargeList(item) => {
            let (offsets, m) = decode_offsets::<8>(n, c)?;
            let dict = c.dict.take();
            let child = decode_node(item.data_type(), m, c)?;
            c.dict = dict;
            build(builder.add_buffer(offsets).add_child_data(child))
        }
        DataType::Utf8 | DataType::Binary if strings == StringLayout::View => {
            let utf8 = *dt == DataType::Utf8;
            let (views, data) = decode_string_views(n, c, utf8)?;
            view_array(utf8, n, views, data, validity)
        }
        DataType::Utf8 if strings == StringLayout::Large => {
            let (offsets, data) = decode_strings::<4, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeUtf8Type>(n, offsets, data, validity)
        }
        DataType::Binary if strings == StringLayout::Large => {
            let (offsets, data) = decode_strings::<4, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeBinaryType>(n, offsets, data, validity)
        }
        DataType::Utf8 => {
            let (offsets, data) = decode_strings::<4, 4>(n, c)?;
            byte_array::<arrow_array::types::Utf8Type>(n, offsets, data, validity)
        }
        DataType::Binary => {
            let (offsets, data) = decode_strings::<4, 4>(n, c)?;
            byte_array::<arrow_array::types::BinaryType>(n, offsets, data, validity)
        }
        DataType::LargeUtf8 => {
            let (offsets, data) = decode_strings::<8, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeUtf8Type>(n, offsets, data, validity)
        }
        DataType::LargeBinary => {
            let (offsets, data) = decode_strings::<8, 8>(n, c)?;
            byte_array::<arrow_array::types::LargeBinaryType>(n, offsets, data, validity)
        }
        DataType::FixedSizeBinary(w) => {
            let len = (*w as usize).checked_mul(n).ok_or_else(|| corrupt("page too large"))?;
            let values = c.take(len)?;
            build(builder.add_buffer(c.copy(values)?))
        }
        _ => {
            let w = crate::schema::fixed_width(dt).ok_or_else(|| corrupt(format!("no page layout for {dt}")))?;
            let values = decode_fixed_rows(w, n, 0..n, c, Nest::top(dt))?;
            build(builder.add_buffer(values.into()))
        }
    }
}

/// A string or binary array of `n` rows, checked as `GenericByteArray::try_new` checks it:
/// UTF-8 over the whole data at once, then each offset on a character boundary (`ArrayData`
/// validation goes string by string, several times slower).
pub(super) fn byte_array<T: arrow_array::types::ByteArrayType>(
    n: usize,
    offsets: Buffer,
    data: Buffer,
    validity: Option<Buffer>,
) -> Result<ArrayData> {
    use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
    // `decode_strings` makes n + 1 offsets as running sums from 0 whose total is checked
    // against the offset type's maximum, so none is negative and none is smaller than the one
    // before: what `OffsetBuffer::new` asserts, one offset at a time (two thirds of this
    // function's time). The buffer is freshly allocated, so aligned.
    let offsets = ScalarBuffer::<T::Offset>::new(offsets, 0, n + 1);
    #[allow(unsafe_code)]
    // SAFETY: `new_unchecked` needs a non-empty buffer of non-negative, non-decreasing
    // offsets. There are n + 1 >= 1 of them. Both makers of string offsets
    // (`offsets_from_lengths`, `rebuild_strings`) start at 0 and add unsigned lengths, and fail
    // the page unless the final sum, the largest, fits the offset type as a non-negative value.
    // `string_offsets_never_decrease` checks what they make on any lengths, hostile ones too.
    let offsets = unsafe { OffsetBuffer::new_unchecked(offsets) };
    let nulls = validity.map(|b| NullBuffer::new(BooleanBuffer::new(b, 0, n)));
    let within = offsets
        .last()
        .is_some_and(|&end| arrow_buffer::ArrowNativeType::as_usize(end) <= data.len());
    let utf8 = matches!(T::DATA_TYPE, DataType::Utf8 | DataType::LargeUtf8);
    if utf8 && within && data.as_slice().is_ascii() {
        // Most string data is ASCII, which is UTF-8 with a character boundary at every byte:
        // `try_new` would check each of the n + 1 offsets for one (about 6 % of reading a
        // string table) and find nothing.
        #[allow(unsafe_code)]
        // SAFETY: `new_unchecked` is sound when `try_new` would succeed. `try_new` checks
        // (a) that the data is UTF-8: ASCII is; (b) that every offset is at most the data's
        // length and on a character boundary: the offsets never decrease (see the SAFETY
        // note above), so none exceeds the last, which `within` bounds, and in
        // ASCII every position up to the length is a boundary; (c) that the validity bitmap
        // has n bits: it was made with n. `byte_array_checks_like_try_new` tests both paths.
        let array = unsafe { arrow_array::GenericByteArray::<T>::new_unchecked(offsets, data, nulls) };
        return Ok(array.into());
    }
    arrow_array::GenericByteArray::<T>::try_new(offsets, data, nulls)
        .map(ArrayData::from)
        .map_err(|e| corrupt(format!("invalid array: {e}")))
}

fn build(b: ArrayDataBuilder) -> Result<ArrayData> {
    // Full validation: a page from a hostile file must never become an invalid Arrow array.
    b.build().map_err(|e| corrupt(format!("invalid array: {e}")))
}

/// `n` integers of `w` bytes (string and list lengths).
fn decode_fixed(w: usize, n: usize, c: &mut Cursor<'_>) -> Result<MutableBuffer> {
    decode_fixed_rows(w, n, 0..n, c, Nest::INTEGERS)
}

/// Which of the nesting encodings a page of values may use: a scaled page holds a page of
/// neither, a decimal page one that may be scaled, so that pages nest at most three deep.
#[derive(Debug, Clone, Copy)]
struct Nest {
    scaled: bool,
    decimal: bool,
}

impl Nest {
    const INTEGERS: Nest = Nest {
        scaled: true,
        decimal: false,
    };
    const NONE: Nest = Nest {
        scaled: false,
        decimal: false,
    };

    /// The values of a column of type `dt`: decimal pages only for float32 and float64.
    fn top(dt: &DataType) -> Nest {
        Nest {
            scaled: true,
            decimal: matches!(dt, DataType::Float32 | DataType::Float64),
        }
    }
}

/// Rows `rows` of `n` fixed-width values of `w` bytes (the cursor moves past all `n`).
fn decode_fixed_rows(
    w: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    nest: Nest,
) -> Result<MutableBuffer> {
    let mut out = c.alloc(w * rows.len())?;
    decode_fixed_rows_into(w, n, rows, c, out.as_slice_mut(), nest)?;
    Ok(out)
}

/// [`decode_fixed_rows`] into `dst` (`w * rows.len()` bytes).
fn decode_fixed_rows_into(
    w: usize,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
    nest: Nest,
) -> Result<()> {
    let len = w.checked_mul(n).ok_or_else(|| corrupt("page too large"))?;
    debug_assert_eq!(dst.len(), w * rows.len());
    let enc = c.u8()?;
    if enc == encoding::PLAIN {
        let src = c.take(len)?;
        unshuffle_rows(w, n, src, rows, dst);
        return Ok(());
    }
    match w {
        1 => decode_words::<1>(enc, n, rows, c, dst, nest)?,
        2 => decode_words::<2>(enc, n, rows, c, dst, nest)?,
        4 => decode_words::<4>(enc, n, rows, c, dst, nest)?,
        8 => decode_words::<8>(enc, n, rows, c, dst, nest)?,
        _ => return Err(corrupt(format!("encoding {enc} is not defined for {w}-byte values"))),
    }
    Ok(())
}

/// Elements `rows` of `n` byte-shuffled elements of `w` bytes, unshuffled into `dst`.
fn unshuffle_rows(w: usize, n: usize, src: &[u8], rows: std::ops::Range<usize>, dst: &mut [u8]) {
    if rows.start == 0 && rows.end == n {
        if w > 1 {
            unshuffle(w, src, dst);
        } else {
            dst.copy_from_slice(src);
        }
        return;
    }
    for j in 0..w {
        let plane = &src[j * n + rows.start..j * n + rows.end];
        for (t, &b) in plane.iter().enumerate() {
            dst[t * w + j] = b;
        }
    }
}

fn decode_words<const W: usize>(
    enc: u8,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
    dst: &mut [u8],
    nest: Nest,
) -> Result<()> {
    let (lo, hi) = (rows.start, rows.end);
    match enc {
        encoding::SCALED if nest.scaled => {
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let factor = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            if factor < 2 {
                return Err(corrupt(format!("a scaled page with factor {factor} (2 or more)")));
            }
            decode_fixed_rows_into(W, n, rows, c, dst, Nest::NONE)?;
            for v in dst.as_chunks_mut::<W>().0 {
                store::<W>(base.wrapping_add(factor.wrapping_mul(load::<W>(v))), v);
            }
            return Ok(());
        }
        encoding::DECIMAL if nest.decimal && (W == 4 || W == 8) => {
            let e = c.u8()?;
            let most = if W == 8 {
                MAX_DECIMAL_EXP_F64
            } else {
                MAX_DECIMAL_EXP_F32
            };
            if e > most {
                return Err(corrupt(format!("a decimal page of 10^{e} (at most 10^{most})")));
            }
            decode_fixed_rows_into(W, n, rows, c, dst, Nest::INTEGERS)?;
            for v in dst.as_chunks_mut::<W>().0 {
                store::<W>(decimal_value::<W>(load::<W>(v), e), v);
            }
            let x = c.u32()? as usize;
            if x > n {
                return Err(corrupt(format!("{x} exceptions in a page of {n} rows")));
            }
            let positions = c.take(x * 4)?;
            let values = c.take(x * W)?;
            let mut next = 0usize;
            for (p, v) in positions.as_chunks::<4>().0.iter().zip(values.as_chunks::<W>().0) {
                let p = u32::from_le_bytes(*p) as usize;
                if p < next || p >= n {
                    return Err(corrupt("decimal page exceptions out of order or past the page"));
                }
                next = p + 1;
                if (lo..hi).contains(&p) {
                    dst[(p - lo) * W..(p - lo + 1) * W].copy_from_slice(v);
                }
            }
            return Ok(());
        }
        _ => {}
    }
    let (dst, _) = dst.as_chunks_mut::<W>();
    match enc {
        encoding::FOR => {
            let k = c.u8()? as usize;
            if k == 0 || k >= W {
                return Err(corrupt(format!(
                    "frame of reference of {k}-byte codes for {W}-byte values"
                )));
            }
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let raw = c.take(n * k)?;
            let unshuffled;
            let codes: &[u8] = if k == 1 {
                &raw[lo..hi]
            } else {
                let mut buf = try_vec((hi - lo) * k, 0u8, "a page's codes")?;
                unshuffle_rows(k, n, raw, rows, &mut buf);
                unshuffled = buf;
                &unshuffled
            };
            match k {
                1 => widen::<W, 1>(codes, base, dst),
                2 => widen::<W, 2>(codes, base, dst),
                3 => widen::<W, 3>(codes, base, dst),
                4 => widen::<W, 4>(codes, base, dst),
                5 => widen::<W, 5>(codes, base, dst),
                6 => widen::<W, 6>(codes, base, dst),
                _ => widen::<W, 7>(codes, base, dst),
            }
            Ok(())
        }
        encoding::BITPACK => {
            let bits = c.u8()? as usize;
            if bits > 8 * W {
                return Err(corrupt(format!("{bits}-bit codes for {W}-byte values")));
            }
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let packed = c.take((n * bits).div_ceil(8))?;
            crate::bits::unpack_offset::<W>(packed, lo..hi, bits, base, dst[..hi - lo].as_flattened_mut());
            Ok(())
        }
        encoding::DELTA => {
            let first = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let base = load::<W>(c.take(W)?.try_into().expect("W bytes"));
            let bits = c.u8()? as usize;
            if bits > 8 * W {
                return Err(corrupt(format!("{bits}-bit deltas for {W}-byte values")));
            }
            if n == 0 {
                return Err(corrupt("a delta-encoded page without rows"));
            }
            let packed = c.take(((n - 1) * bits).div_ceil(8))?;
            if lo == 0 && hi > 0 {
                store::<W>(first, &mut dst[0]);
            }
            // Each value needs the ones before it: run the sum up to the window's end.
            let mut prev = first;
            crate::bits::unpack(packed, 0..hi.saturating_sub(1), bits, |first, codes| {
                for (i, &code) in (first..).zip(codes) {
                    prev = prev.wrapping_add(base).wrapping_add(code);
                    if i + 1 >= lo {
                        store::<W>(prev, &mut dst[i + 1 - lo]);
                    }
                }
            });
            Ok(())
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_WIDE_DICT {
                return Err(corrupt(format!("dictionary of {d} values (1..=65536 allowed)")));
            }
            let raw = c.take(d * W)?;
            let width = c.u8()?;
            if d > MAX_FIXED_DICT && width != 2 {
                return Err(corrupt(format!("a dictionary of {d} values needs 2-byte codes")));
            }
            let too_big = || corrupt(format!("a dictionary code is not below the dictionary size {d}"));
            match width {
                1 => {
                    let mut table = [[0u8; W]; MAX_FIXED_DICT];
                    unshuffle_into(raw, &mut table[..d]);
                    let codes = &c.take(n)?[lo..hi];
                    if codes.iter().fold(0u8, |m, &x| m.max(x)) as usize >= d && !codes.is_empty() {
                        return Err(too_big());
                    }
                    for (o, &x) in dst.iter_mut().zip(codes) {
                        *o = table[x as usize];
                    }
                }
                2 => {
                    let mut table = try_vec(d, [0u8; W], "a page's dictionary")?;
                    unshuffle_into(raw, &mut table);
                    // Take the bytes before allocating: what a page claims is bounded by what it holds.
                    let len = n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?;
                    let src = c.take(len)?;
                    let mut codes = try_vec((hi - lo) * 2, 0u8, "a page's codes")?;
                    unshuffle_rows(2, n, src, rows, &mut codes);
                    let (codes, _) = codes.as_chunks::<2>();
                    if codes.iter().fold(0u16, |m, &x| m.max(u16::from_le_bytes(x))) as usize >= d {
                        return Err(too_big());
                    }
                    for (o, &x) in dst.iter_mut().zip(codes) {
                        *o = table[u16::from_le_bytes(x) as usize];
                    }
                }
                other => {
                    return Err(corrupt(format!(
                        "dictionary codes of fixed-width values of {other} bytes (1 or 2 allowed)"
                    )))
                }
            }
            Ok(())
        }
        encoding::RUNS => {
            let runs = c.u32()? as usize;
            if runs == 0 || runs > n {
                return Err(corrupt(format!("{runs} runs in a page of {n} rows")));
            }
            // Take the bytes before allocating: what a page claims is bounded by what it holds.
            let raw = c.take(runs * W)?;
            let bits = c.u8()? as usize;
            if bits > 63 {
                return Err(corrupt(format!("{bits}-bit run lengths")));
            }
            let packed = c.take((runs * bits).div_ceil(8))?;
            let mut values = try_vec(runs, [0u8; W], "a page's runs")?;
            unshuffle_into(raw, &mut values);
            let mut ends: Vec<u64> = try_vec(0, 0, "a page's runs")?;
            ends.try_reserve_exact(runs)
                .map_err(|_| no_memory(runs * 8, "a page's runs"))?;
            let mut end = 0u64;
            crate::bits::unpack(packed, 0..runs, bits, |_, codes| {
                for &code in codes {
                    end = end.saturating_add(code).saturating_add(1);
                    ends.push(end);
                }
            });
            if end != n as u64 {
                return Err(corrupt(format!("run lengths add up to {end}, not the page's {n} rows")));
            }
            // Every length is at least 1 and they add up to n: the ends rise strictly to n.
            // The first run that reaches into the window, then fill run by run.
            let mut k = ends.partition_point(|&e| e <= lo as u64);
            let mut at = lo;
            while at < hi {
                let end = (ends[k] as usize).min(hi);
                dst[at - lo..end - lo].fill(values[k]);
                at = end;
                k += 1;
            }
            Ok(())
        }
        other => Err(corrupt(format!("unknown encoding {other} of fixed-width values"))),
    }
}

/// Byte-shuffled values (`W`-byte elements) into `table`, which holds as many.
fn unshuffle_into<const W: usize>(raw: &[u8], table: &mut [[u8; W]]) {
    if W > 1 {
        unshuffle(W, raw, table.as_flattened_mut());
    } else {
        table.as_flattened_mut().copy_from_slice(raw);
    }
}

fn widen<const W: usize, const K: usize>(codes: &[u8], base: u64, dst: &mut [[u8; W]]) {
    for (o, code) in dst.iter_mut().zip(codes.as_chunks::<K>().0) {
        store::<W>(base.wrapping_add(load::<K>(code)), o);
    }
}

/// Offsets and data buffers of `n` strings with `OW`-byte offsets.
/// The offsets and data of a string or binary page of `n` rows whose lengths are stored `SW`
/// bytes wide (4 for `Utf8`/`Binary`, 8 for the large types), with offsets `OW >= SW` wide.
fn decode_strings<const SW: usize, const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, Buffer)> {
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN => {
            let (offsets, total) = offsets_from_lengths::<SW, OW>(n, c)?;
            let data_len = c.u64()?;
            if total != data_len {
                return Err(corrupt("string lengths do not add up to the data"));
            }
            // Counted against the read's budget only: a copy of bytes the page holds expands
            // nothing.
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            Ok((offsets, c.copy(data)?))
        }
        encoding::SYMBOLS => {
            let (offsets, total) = offsets_from_lengths::<SW, OW>(n, c)?;
            if total != c.u64()? {
                return Err(corrupt("string lengths do not add up to the data"));
            }
            let data = symbol_data(total, c)?;
            Ok((offsets, Buffer::from_vec(data)))
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_STRING_DICT {
                return Err(corrupt(format!("string dictionary of {d} values")));
            }
            let lengths = decode_fixed(SW, d, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            let mut starts = try_vec(0, 0usize, "a page's dictionary")?;
            starts
                .try_reserve_exact(d + 1)
                .map_err(|_| no_memory(d * 8, "a page's dictionary"))?;
            let mut pos = 0u64;
            starts.push(0usize);
            for l in lengths.as_slice().as_chunks::<SW>().0 {
                pos = pos.saturating_add(load::<SW>(l));
                starts.push(pos.min(u64::MAX >> 1) as usize);
            }
            if pos != data.len() as u64 {
                return Err(corrupt("dictionary lengths do not add up to its data"));
            }
            c.charge(n.saturating_mul(4))?;
            let mut codes: Vec<u32> = try_vec(0, 0, "a page's codes")?;
            match c.u8()? {
                1 => {
                    let src = c.take(n)?;
                    codes
                        .try_reserve_exact(n)
                        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
                    codes.extend(src.iter().map(|&x| u32::from(x)));
                }
                2 => {
                    let src = c.take(n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?)?;
                    let mut b = try_vec(src.len(), 0u8, "a page's codes")?;
                    unshuffle(2, src, &mut b);
                    codes
                        .try_reserve_exact(n)
                        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
                    codes.extend(b.as_chunks::<2>().0.iter().map(|x| u32::from(u16::from_le_bytes(*x))));
                }
                k => return Err(corrupt(format!("{k}-byte dictionary codes"))),
            }
            let total = coded_total::<SW>(&codes, &starts)?;
            c.charge(total.saturating_add((n + 1) * OW))?;
            c.charge_copy(data.len() + SLACK)?;
            let mut padded = try_vec(0, 0u8, "a page's dictionary")?;
            padded
                .try_reserve_exact(data.len() + SLACK)
                .map_err(|_| no_memory(data.len() + SLACK, "a page's dictionary"))?;
            padded.extend_from_slice(data);
            padded.resize(data.len() + SLACK, 0);
            let (offsets, data) = rebuild_strings::<OW>(&codes, &starts, &padded, total)?;
            Ok((offsets.into(), data.into()))
        }
        encoding::COLUMN_DICT => {
            let dict = c.dict.ok_or_else(no_column_dict)?;
            let codes = column_codes(n, c)?;
            let total = coded_total::<SW>(&codes, &dict.starts)?;
            c.charge(total.saturating_add((n + 1) * OW))?;
            let (offsets, data) = rebuild_strings::<OW>(&codes, &dict.starts, &dict.bytes, total)?;
            Ok((offsets.into(), data.into()))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
}

/// The views (16 bytes a row) and data of a `Utf8` (`utf8`) or `Binary` page of `n` rows: short
/// values inline, long ones pointing into the data, which for a dictionary page is its
/// dictionary. Every value is checked to be UTF-8 for `utf8` pages, as `byte_array` checks.
fn decode_string_views(n: usize, c: &mut Cursor<'_>, utf8: bool) -> Result<(Buffer, Buffer)> {
    use arrow_array::builder::make_view;
    let enc = c.u8()?;
    match enc {
        encoding::PLAIN | encoding::SYMBOLS => {
            let lengths = decode_fixed(4, n, c)?;
            let data_len = c.u64()?;
            let buffer = if enc == encoding::SYMBOLS {
                Buffer::from_vec(symbol_data(data_len, c)?)
            } else {
                let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
                c.copy(data)?
            };
            let data = buffer.as_slice();
            if data.len() > i32::MAX as usize {
                return Err(corrupt("lengths overflow the offsets"));
            }
            // Not UTF-8 as a whole: no value is. ASCII: every position is a boundary.
            let text = match utf8 && !data.is_ascii() {
                true => Some(std::str::from_utf8(data).map_err(|e| corrupt(format!("invalid array: {e}")))?),
                false => None,
            };
            let mut views = view_buffer(n, c)?;
            cut_values(
                lengths.as_slice(),
                data,
                "string lengths do not add up to the data",
                |pos, value| {
                    let end = pos + value.len();
                    if text.is_some_and(|t| !t.is_char_boundary(end)) {
                        return Err(corrupt(format!(
                            "invalid array: a string ends inside a character at {end}"
                        )));
                    }
                    views.push(make_view(value, 0, pos as u32));
                    Ok(())
                },
            )?;
            Ok((Buffer::from_vec(views), buffer))
        }
        encoding::DICT => {
            let d = c.u32()? as usize;
            if d == 0 || d > MAX_STRING_DICT {
                return Err(corrupt(format!("string dictionary of {d} values")));
            }
            let lengths = decode_fixed(4, d, c)?;
            let data_len = c.u64()?;
            let data = c.take(usize::try_from(data_len).map_err(|_| corrupt("string data too large"))?)?;
            if data.len() > i32::MAX as usize {
                return Err(corrupt("lengths overflow the offsets"));
            }
            c.charge(d * 16)?;
            let mut values = try_vec(0, 0u128, "a page's dictionary")?;
            values
                .try_reserve_exact(d)
                .map_err(|_| no_memory(d * 16, "a page's dictionary"))?;
            cut_values(
                lengths.as_slice(),
                data,
                "dictionary lengths do not add up to its data",
                |pos, value| {
                    if utf8 && std::str::from_utf8(value).is_err() {
                        return Err(corrupt("invalid array: a dictionary value is not UTF-8"));
                    }
                    values.push(make_view(value, 0, pos as u32));
                    Ok(())
                },
            )?;
            let mut views = view_buffer(n, c)?;
            let out_of_range = || corrupt(format!("a dictionary code is not below the dictionary size {d}"));
            match c.u8()? {
                1 => {
                    for &x in c.take(n)? {
                        views.push(*values.get(usize::from(x)).ok_or_else(out_of_range)?);
                    }
                }
                2 => {
                    let src = c.take(n.checked_mul(2).ok_or_else(|| corrupt("page too large"))?)?;
                    let mut codes = try_vec(src.len(), 0u8, "a page's codes")?;
                    unshuffle(2, src, &mut codes);
                    for x in codes.as_chunks::<2>().0 {
                        views.push(
                            *values
                                .get(usize::from(u16::from_le_bytes(*x)))
                                .ok_or_else(out_of_range)?,
                        );
                    }
                }
                k => return Err(corrupt(format!("{k}-byte dictionary codes"))),
            }
            check_view_total(&views)?;
            Ok((Buffer::from_vec(views), c.copy(data)?))
        }
        encoding::COLUMN_DICT => {
            let dict = c.dict.ok_or_else(no_column_dict)?;
            let values = dict
                .views
                .as_deref()
                .ok_or_else(|| corrupt("a column dictionary too large for string views"))?;
            let codes = column_codes(n, c)?;
            let mut views = view_buffer(n, c)?;
            // Codes were checked against the dictionary's size.
            views.extend(codes.iter().map(|&x| values[x as usize]));
            check_view_total(&views)?;
            // The rows point into the dictionary, shared by every page: nothing is copied.
            Ok((Buffer::from_vec(views), dict.bytes.clone()))
        }
        other => Err(corrupt(format!("unknown string encoding {other}"))),
    }
}

/// The `total` bytes of string data that a symbol table and its codes stand for (a
/// [`SYMBOLS`](encoding::SYMBOLS) page, after its lengths and data length).
fn symbol_data(total: u64, c: &mut Cursor<'_>) -> Result<Vec<u8>> {
    let count = usize::from(c.u8()?);
    let lens = c.take(count)?;
    let symbols = c.take(lens.iter().map(|&l| usize::from(l)).sum())?;
    let table = Symbols::new(lens, symbols).map_err(|e| corrupt(format!("symbol table: {e}")))?;
    let codes_len = c.u64()?;
    let codes = c.take(usize::try_from(codes_len).map_err(|_| corrupt("symbol codes too large"))?)?;
    let total = usize::try_from(total).map_err(|_| corrupt("string data too large"))?;
    // `expand` bounds `total` by the codes (8 bytes each at most) before it allocates.
    c.charge(total)?;
    match table.expand(codes, total) {
        Ok(data) => Ok(data),
        Err(super::symbols::ExpandError::NoMemory(len)) => Err(no_memory(len, "a page's strings")),
        Err(super::symbols::ExpandError::Corrupt(e)) => Err(corrupt(format!("symbol codes: {e}"))),
    }
}

/// The page as a file holds it must still fit 32-bit offsets once expanded (what a read as
/// stored checks), though views never expand it: the same pages are corrupt whichever way
/// they are read. A view's low 32 bits are its length.
fn check_view_total(views: &[u128]) -> Result<()> {
    let total: u64 = views.iter().map(|&v| u64::from(v as u32)).sum();
    if total > i32::MAX as u64 {
        return Err(corrupt(format!("page expands to {total} bytes of strings")));
    }
    Ok(())
}

fn no_column_dict() -> Error {
    corrupt("a page coded against a column dictionary, in a column without one")
}

/// The `n` codes of a page coded against its column's dictionary (a nested page of 4-byte
/// values), each checked to be below the dictionary's size.
fn column_codes(n: usize, c: &mut Cursor<'_>) -> Result<Vec<u32>> {
    let d = c.dict.map_or(0, ColumnDict::len);
    let raw = decode_fixed(4, n, c)?;
    let mut codes: Vec<u32> = try_vec(0, 0, "a page's codes")?;
    codes
        .try_reserve_exact(n)
        .map_err(|_| no_memory(n * 4, "a page's codes"))?;
    codes.extend(raw.as_slice().as_chunks::<4>().0.iter().map(|x| u32::from_le_bytes(*x)));
    if codes.iter().any(|&x| x as usize >= d) {
        return Err(corrupt(format!(
            "a dictionary code is not below the dictionary size {d}"
        )));
    }
    Ok(codes)
}

/// The bytes the strings of `codes` take (checked against the dictionary's size before
/// anything is allocated), within the stored type's offsets (`SW` bytes) and the page bound.
fn coded_total<const SW: usize>(codes: &[u32], starts: &[usize]) -> Result<usize> {
    let d = starts.len() - 1;
    let mut total = 0u64;
    for &x in codes {
        let x = x as usize;
        if x >= d {
            return Err(corrupt(format!(
                "a dictionary code is not below the dictionary size {d}"
            )));
        }
        total = total.saturating_add((starts[x + 1] - starts[x]) as u64);
    }
    // Bounded by the stored type, whatever width the offsets are read into.
    if total > MAX_PAGE_DATA || (SW == 4 && total > i32::MAX as u64) {
        return Err(corrupt(format!("page expands to {total} bytes of strings")));
    }
    usize::try_from(total).map_err(|_| corrupt(format!("page expands to {total} bytes of strings")))
}

/// Cuts `data` into consecutive values of the 4-byte `lengths`, handing each to `each` with its
/// position (at most `data.len()`, which callers keep within i32::MAX); an error (`mismatch`)
/// unless the lengths cover the data exactly.
fn cut_values<'d>(
    lengths: &[u8],
    data: &'d [u8],
    mismatch: &str,
    mut each: impl FnMut(usize, &'d [u8]) -> Result<()>,
) -> Result<()> {
    let mut pos = 0usize;
    for l in lengths.as_chunks::<4>().0 {
        let end = pos
            .checked_add(u32::from_le_bytes(*l) as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt(mismatch))?;
        each(pos, &data[pos..end])?;
        pos = end;
    }
    if pos != data.len() {
        return Err(corrupt(mismatch));
    }
    Ok(())
}

/// Room for `n` views, counted against the page's budget; not zeroed, since every view is
/// pushed (the views are most of what a string page decodes to, 16 bytes a row).
fn view_buffer(n: usize, c: &mut Cursor<'_>) -> Result<Vec<u128>> {
    c.charge(n.checked_mul(16).ok_or_else(|| corrupt("page too large"))?)?;
    let mut views = Vec::new();
    views
        .try_reserve_exact(n)
        .map_err(|_| no_memory(n * 16, "a page's string views"))?;
    Ok(views)
}

/// The error of an allocation of `len` bytes of `what` that the allocator refused.
fn no_memory(len: usize, what: &str) -> Error {
    Error::OutOfRange {
        detail: format!("{what} needs {len} bytes, more than this machine can allocate"),
    }
}

/// A `Utf8View` (`utf8`) or `BinaryView` array of `n` rows from what [`decode_string_views`]
/// made.
fn view_array(utf8: bool, n: usize, views: Buffer, data: Buffer, validity: Option<Buffer>) -> Result<ArrayData> {
    let dt = if utf8 { DataType::Utf8View } else { DataType::BinaryView };
    let builder = ArrayDataBuilder::new(dt)
        .len(n)
        .null_bit_buffer(validity)
        .add_buffer(views)
        .add_buffer(data);
    #[allow(unsafe_code)]
    // SAFETY: `build_unchecked` is sound when `build` plus full validation would succeed, which
    // for views checks (a) n views in the first buffer: `decode_string_views` pushed one per
    // row into a `Vec<u128>`, so aligned; (b) each view: made by arrow's own `make_view` from a slice
    // of the one data buffer (index 0) at that slice's offset, so inline padding, buffer
    // index, bounds and prefix are right by construction; (c) for `Utf8View`, each value is
    // UTF-8: checked above (ASCII data, or UTF-8 data cut on character boundaries, or each
    // dictionary value on its own); (d) a validity bitmap of n bits: it was read with n.
    // `string_views_pass_full_validation` checks all of it on hostile pages.
    Ok(unsafe { builder.build_unchecked() })
}

/// The strings of a dictionary page, one per code: offsets (`OW` bytes each, from 0) and data.
/// `starts` are the dictionary's `d + 1` offsets into `padded` (its values, then [`SLACK`]
/// bytes), every code is below `d`, and `total` is the sum of the coded strings' lengths (all
/// checked by the caller).
fn rebuild_strings<const OW: usize>(
    codes: &[u32],
    starts: &[usize],
    padded: &[u8],
    total: usize,
) -> Result<(MutableBuffer, MutableBuffer)> {
    // Strings are copied in whole 16-byte chunks, which compile to plain moves: a memcpy call
    // per string (these are short, often a few bytes) cost more than the copying. Both the
    // dictionary and the output carry 16 bytes of slack, so a last chunk stays in bounds, and
    // the next string overwrites what a chunk wrote past its string's end. Positions are kept
    // in locals, not in a growing vector's length, so the loop keeps them in registers.
    const CHUNK: usize = SLACK;
    debug_assert!(padded.len() >= starts[starts.len() - 1] + CHUNK);
    let mut out = ZeroedBuffer::new(total + CHUNK, "a page's strings")?.into_mutable();
    let mut offsets = ZeroedBuffer::new((codes.len() + 1) * OW, "a page's string offsets")?.into_mutable();
    let data = out.as_slice_mut();
    let mut at = 0usize;
    for (&x, offset) in codes.iter().zip(offsets.as_slice_mut()[OW..].as_chunks_mut::<OW>().0) {
        let (start, end) = (starts[x as usize], starts[x as usize + 1]);
        let mut k = start;
        let mut to = at;
        loop {
            data[to..to + CHUNK].copy_from_slice(&padded[k..k + CHUNK]);
            k += CHUNK;
            to += CHUNK;
            if k >= end {
                break;
            }
        }
        at += end - start;
        store::<OW>(at as u64, offset);
    }
    out.truncate(total);
    Ok((offsets, out))
}

/// List offsets from `n` encoded lengths, and the child's length (their sum).
fn decode_offsets<const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, usize)> {
    let (offsets, total) = offsets_from_lengths::<OW, OW>(n, c)?;
    // Lengths can claim many child rows in few bytes (runs, 0-bit packing): a hard bound.
    if total > MAX_PAGE_DATA {
        return Err(corrupt(format!("lists of {total} values in one page")));
    }
    Ok((offsets, total as usize))
}

/// `n` encoded lengths, `SW` bytes each, turned into `n + 1` offsets `OW >= SW` bytes wide
/// (running sums from 0), and their total; an error when the total does not fit the stored
/// offset type.
fn offsets_from_lengths<const SW: usize, const OW: usize>(n: usize, c: &mut Cursor<'_>) -> Result<(Buffer, u64)> {
    const { assert!(SW <= OW) };
    let len = n
        .checked_add(1)
        .and_then(|k| k.checked_mul(OW))
        .ok_or_else(|| corrupt("page too large"))?;
    let mut offsets = c.alloc(len)?;
    let (words, _) = offsets.as_slice_mut().as_chunks_mut::<OW>();
    let mut at = 0u64;
    if SW == OW {
        // In place: each length is replaced by the sum up to it.
        decode_fixed_rows_into(SW, n, 0..n, c, words[1..].as_flattened_mut(), Nest::INTEGERS)?;
        for w in &mut words[1..] {
            at = at.saturating_add(load::<OW>(w));
            store::<OW>(at, w);
        }
    } else {
        // n * SW <= (n + 1) * OW bytes, already counted against the budget above.
        let mut lengths = try_vec(n * SW, 0u8, "a page's lengths")?;
        decode_fixed_rows_into(SW, n, 0..n, c, &mut lengths, Nest::INTEGERS)?;
        for (l, w) in lengths.as_chunks::<SW>().0.iter().zip(&mut words[1..]) {
            at = at.saturating_add(load::<SW>(l));
            store::<OW>(at, w);
        }
    }
    // The sums only grow, so the last is the largest (and one too large fails the whole page).
    let limit = if SW == 4 { i32::MAX as u64 } else { i64::MAX as u64 };
    if at > limit {
        return Err(corrupt("lengths overflow the offsets"));
    }
    Ok((offsets.into(), at))
}
