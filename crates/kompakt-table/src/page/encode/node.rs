//! Encoding one node of a page by its type: booleans and fixed-size binaries as they are,
//! structs and lists through their children, strings and fixed-width values by their encoders.

use super::choose::{encode_fixed, encode_words};
use super::strings::encode_strings;
use super::validity::{fill_null_slots, gather_validity, keep_valid, push_validity, VALID_ONLY_NULLS};
use super::{kind_of, Ctx, Kind};
use crate::page::{encoding, load, slice_data, SUMMARY_NULLS};
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::bit_util;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use kompakt::{Error, Result};

/// Encodes one node of a page; raises `layout` to what its encodings need.
pub(super) fn encode_node(dt: &DataType, pieces: &[ArrayData], out: &mut Vec<u8>, cx: &mut Ctx) -> Result<u8> {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    if *dt == DataType::Null {
        return Ok(encoding::PLAIN);
    }
    let validity = gather_validity(pieces, n);
    let width = crate::schema::fixed_width(dt);
    let nulls: usize = pieces.iter().map(ArrayData::null_count).sum();
    let valid_only = cx.valid_only && width.is_some() && nulls * VALID_ONLY_NULLS >= n;
    let mut summary = 0;
    match &validity {
        None => out.push(crate::page::validity::VALID),
        Some(bits) if valid_only => {
            out.push(crate::page::validity::VALID_ONLY);
            out.extend_from_slice(bits);
            cx.layout = cx.layout.max(7);
            summary |= SUMMARY_NULLS;
        }
        Some(bits) => {
            push_validity(pieces, bits, out, cx);
            summary |= SUMMARY_NULLS;
        }
    }
    let body = match dt {
        DataType::Boolean => {
            let mut bits = vec![0u8; bit_util::ceil(n, 8)];
            let mut pos = 0;
            for p in pieces {
                set_bits(&mut bits, p.buffers()[0].as_slice(), pos, p.offset(), p.len());
                pos += p.len();
            }
            out.extend_from_slice(&bits);
            encoding::PLAIN
        }
        DataType::Struct(fields) => {
            // Arrow's StructArray knows how a struct's offset applies to its children.
            let structs: Vec<arrow_array::StructArray> = pieces
                .iter()
                .map(|p| arrow_array::StructArray::from(p.clone()))
                .collect();
            for (j, f) in fields.iter().enumerate() {
                let children: Vec<ArrayData> = structs.iter().map(|s| s.column(j).to_data()).collect();
                encode_node(f.data_type(), &children, out, cx)?;
            }
            encoding::PLAIN
        }
        DataType::List(item) => encode_list::<4>(item.data_type(), pieces, n, out, cx)?,
        DataType::LargeList(item) => encode_list::<8>(item.data_type(), pieces, n, out, cx)?,
        // A map is stored as a list of its entries (a struct of key and value).
        DataType::Map(entries, _) => encode_list::<4>(entries.data_type(), pieces, n, out, cx)?,
        DataType::Utf8 | DataType::Binary => encode_strings::<4>(pieces, n, out, cx),
        DataType::LargeUtf8 | DataType::LargeBinary => encode_strings::<8>(pieces, n, out, cx),
        DataType::FixedSizeBinary(w) => {
            let w = *w as usize;
            for p in pieces {
                out.extend_from_slice(&p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + p.len()) * w]);
            }
            encoding::PLAIN
        }
        _ => {
            let w =
                crate::schema::fixed_width(dt).ok_or_else(|| Error::Internal(format!("no page encoding for {dt}")))?;
            fn values(p: &ArrayData, w: usize) -> &[u8] {
                &p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + p.len()) * w]
            }
            match (pieces, &validity) {
                // The common case reads the column's memory in place.
                ([p], None) => encode_fixed(w, values(p, w), kind_of(dt), out, cx),
                _ => {
                    let mut vals = Vec::with_capacity(n * w);
                    for p in pieces {
                        vals.extend_from_slice(values(p, w));
                    }
                    match &validity {
                        Some(bits) if valid_only => keep_valid(&mut vals, w, bits),
                        Some(bits) => fill_null_slots(&mut vals, w, bits),
                        None => {}
                    }
                    encode_fixed(w, &vals, kind_of(dt), out, cx)
                }
            }
        }
    };
    Ok(summary | body)
}

/// Lists (offsets of `OW` bytes): the lengths, then the child values the rows cover.
fn encode_list<const OW: usize>(
    item: &DataType,
    pieces: &[ArrayData],
    n: usize,
    out: &mut Vec<u8>,
    cx: &mut Ctx,
) -> Result<u8> {
    let mut lengths = Vec::with_capacity(n * OW);
    let mut children = Vec::with_capacity(pieces.len());
    for p in pieces {
        let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
        let (offsets, _) = offsets.as_chunks::<OW>();
        let first = load::<OW>(&offsets[0]) as usize;
        let last = load::<OW>(&offsets[p.len()]) as usize;
        children.push(slice_data(&p.child_data()[0], first, last - first));
        for pair in offsets.windows(2) {
            let len = load::<OW>(&pair[1]) - load::<OW>(&pair[0]);
            lengths.extend_from_slice(&len.to_le_bytes()[..OW]);
        }
    }
    encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
    encode_node(item, &children, out, cx)?;
    Ok(encoding::PLAIN)
}
