//! Decoding a node of a page: its validity, then its values by type (structs and lists
//! recursing into their children, strings and fixed-width values handed to their decoders).

use super::fixed::{decode_fixed, decode_fixed_rows, decode_fixed_rows_into, decode_valid_rows_into, Nest};
use super::offsets::decode_offsets;
use super::strings::{byte_array, decode_strings};
use super::views::{decode_string_views, view_array};
use super::{corrupt, Cursor, WindowBits};
use crate::page::validity::{BITMAP, NULL_ROWS, VALID, VALID_ONLY};
use crate::string_layout::StringLayout;
use crate::zeroed::try_vec;
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::{bit_util, Buffer, MutableBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::Result;

/// Rows `rows` of a fixed-width or boolean node of `n` rows.
pub(super) fn decode_window(
    dt: &DataType,
    n: usize,
    rows: std::ops::Range<usize>,
    c: &mut Cursor<'_>,
) -> Result<ArrayData> {
    let m = rows.len();
    let mut values = match crate::schema::fixed_width(dt) {
        Some(w) => c.alloc(w * m)?,
        None => MutableBuffer::new(0),
    };
    let bits = decode_window_bits(dt, n, rows, c, values.as_slice_mut())?;
    let builder = ArrayDataBuilder::new(dt.clone()).len(m).null_bit_buffer(bits.validity);
    build(builder.add_buffer(bits.values.unwrap_or_else(|| values.into())))
}

pub(super) fn decode_window_bits(
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
    let (bits, valid_only) = read_validity(n, c)?;
    let validity = match &bits {
        Some(bits) => Some(window_bits(bits, c)?),
        None => None,
    };
    if *dt == DataType::Boolean {
        if valid_only {
            return Err(not_valid_only(dt));
        }
        let bits = c.take(nbytes)?;
        let values = Some(window_bits(bits, c)?);
        return Ok(WindowBits { validity, values });
    }
    let w = crate::schema::fixed_width(dt).ok_or_else(|| corrupt(format!("no page layout for {dt}")))?;
    match bits {
        Some(bits) if valid_only => decode_valid_rows_into(w, n, &bits, rows, c, dst, Nest::top(dt))?,
        _ => decode_fixed_rows_into(w, n, rows, c, dst, Nest::top(dt))?,
    }
    Ok(WindowBits { validity, values: None })
}

fn not_valid_only(dt: &DataType) -> kompakt::Error {
    corrupt(format!("values of valid rows only, in a node of {dt}"))
}

/// The validity bitmap of a node of `n` rows (`None`: no nulls): stored as it is, or rebuilt
/// from the null rows' numbers (table layout 4); and whether the node's values are its valid
/// rows' only (table layout 7).
fn read_validity<'a>(n: usize, c: &mut Cursor<'a>) -> Result<(Option<std::borrow::Cow<'a, [u8]>>, bool)> {
    let nbytes = bit_util::ceil(n, 8);
    let bits = match c.u8()? {
        VALID => None,
        BITMAP => Some(std::borrow::Cow::Borrowed(c.take(nbytes)?)),
        VALID_ONLY => return Ok((Some(std::borrow::Cow::Borrowed(c.take(nbytes)?)), true)),
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
            Some(std::borrow::Cow::Owned(bits))
        }
        v => return Err(corrupt(format!("unknown validity kind {v}"))),
    };
    Ok((bits, false))
}

fn decode_node(dt: &DataType, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    decode_node_as(dt, StringLayout::AsStored, n, c)
}

/// A node of type `dt`, a `Utf8` or `Binary` one as `strings` says.
pub(super) fn decode_node_as(dt: &DataType, strings: StringLayout, n: usize, c: &mut Cursor<'_>) -> Result<ArrayData> {
    if *dt == DataType::Null {
        return build(ArrayDataBuilder::new(DataType::Null).len(n));
    }
    let nbytes = bit_util::ceil(n, 8);
    let (bits, valid_only) = read_validity(n, c)?;
    if valid_only && crate::schema::fixed_width(dt).is_none() {
        return Err(not_valid_only(dt));
    }
    let valid_rows = valid_only.then(|| bits.clone()).flatten();
    let validity = match bits {
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
        DataType::Map(entries, _) => {
            let (offsets, m) = decode_offsets::<4>(n, c)?;
            let dict = c.dict.take();
            let child = decode_node(entries.data_type(), m, c)?;
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
            let values = match valid_rows {
                Some(bits) => {
                    let mut values = c.alloc(w * n)?;
                    decode_valid_rows_into(w, n, &bits, 0..n, c, values.as_slice_mut(), Nest::top(dt))?;
                    values
                }
                None => decode_fixed_rows(w, n, 0..n, c, Nest::top(dt))?,
            };
            build(builder.add_buffer(values.into()))
        }
    }
}

fn build(b: ArrayDataBuilder) -> Result<ArrayData> {
    // Full validation: a page from a hostile file must never become an invalid Arrow array.
    b.build().map_err(|e| corrupt(format!("invalid array: {e}")))
}
