//! Encoding pages (docs/FORMAT.md, "Pages"): a fixed-width page chooses from its data between
//! runs, plain, frame of reference, bit packing, delta, a dictionary, scaled integers and
//! decimal floats (the last two choose again for what they hold); a string page between plain
//! and a dictionary, or symbols when the writer asks for them.
//!
//! This file holds the entry points and what the encoders share (what a page may use, the kind
//! of its values, byte shuffling). `node.rs` encodes a node by type, `validity.rs` its
//! validity; `choose.rs` chooses an encoding for fixed-width values, written by `words.rs`
//! (runs, frame of reference, bit packing, delta, dictionaries) or `nested.rs` (scaled and
//! decimal pages), weighing the codec with `trials.rs`; `strings.rs` encodes string pages,
//! `hash.rs` is the hasher of the writer's dictionaries.

mod choose;
mod hash;
mod nested;
mod node;
mod strings;
mod trials;
mod validity;
mod verdicts;
mod words;

pub(crate) use hash::{BuildFx, ShortKey};
pub(crate) use strings::repeats_likely;
pub(crate) use trials::{looks_incompressible, span_fraction};
pub use verdicts::Verdicts;
pub(crate) use verdicts::{Question, Site};

use super::symbols::SymbolTable;
use super::{encoding, Encoded, SUMMARY_NULLS};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use choose::encode_words;
use kompakt::filter::shuffle;
use kompakt::{Error, Result};
use node::encode_node;
use validity::{gather_validity, push_validity};

fn kind_of(dt: &DataType) -> Kind {
    match dt {
        DataType::Float32 | DataType::Float64 => Kind::Float,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Kind::Int { signed: true },
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => Kind::Int { signed: false },
        DataType::Date32
        | DataType::Date64
        | DataType::Time32(_)
        | DataType::Time64(_)
        | DataType::Timestamp(_, _)
        | DataType::Duration(_) => Kind::Int { signed: true },
        _ => Kind::Other,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Int {
        signed: bool,
    },
    /// float32 and float64, which may be decimals.
    Float,
    Other,
}

/// What the encoders of one page may use, and the table layout what they used needs.
struct Ctx<'t> {
    /// Runs (layout 2).
    runs: bool,
    /// Scaled and decimal pages (layout 3).
    nest: bool,
    /// Validity as the null rows' numbers (layout 4).
    null_rows: bool,
    /// Values of the valid rows only, after a bitmap (layout 7).
    valid_only: bool,
    /// Plain values unshuffled where the codec stores them smaller (layout 9): for the values
    /// of a dictionary, which are few enough to try both.
    unshuffled: bool,
    /// A dictionary of the values (not for a dictionary's own, which are distinct).
    dict: bool,
    /// Floats weigh a dictionary of two-byte codes against their decimal or plain values by
    /// trial compressions (a column's only page, where no shared dictionary of the column
    /// weighs it); otherwise decimal codes win where they fit.
    weigh_dict: bool,
    /// The codec the page goes through, to weigh packed bits against bytes it compresses.
    codec: Option<kompakt::Codec>,
    /// The symbol table the page's strings are coded with (layout 5), taken by the string
    /// node that uses it.
    symbols: Option<&'t SymbolTable>,
    /// Trial verdicts shared with the column's other pages of the round.
    verdicts: Option<&'t Verdicts>,
    /// The newest table layout the page may need: what the flags above do not cover
    /// (dictionaries with 2-byte codes: 2; with bit-packed codes: 8; nested ones and
    /// unshuffled values: 9) is chosen within it.
    max_layout: u16,
    layout: u16,
}

/// What [`choose_words`](choose::choose_words) may choose from.
#[derive(Clone, Copy)]
struct Choice<'t> {
    runs: bool,
    scaled: bool,
    decimal: bool,
    codec: Option<kompakt::Codec>,
    verdicts: Option<&'t Verdicts>,
    max_layout: u16,
    /// A dictionary of the values (none for a dictionary's own values).
    dict: bool,
    /// A wide dictionary weighed against decimal or plain values (see [`Ctx`]).
    weigh_dict: bool,
    /// Plain values unshuffled where that is smaller (layout 9; see [`Ctx`]).
    unshuffled: bool,
}

/// Encodes `pieces` (arrays of type `dt`, `n` rows in all) as one page appended to `out`;
/// `codec` is the one the page will go through (`None`: stored raw), which some choices weigh.
pub fn encode_page(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
) -> Result<Encoded> {
    encode_column_page(dt, pieces, out, codec, None)
}

/// As [`encode_page`], taking the verdicts of trials from `verdicts` where they answer (and
/// recording them there while it learns), for a table writer's pages of one column.
pub fn encode_column_page(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
    verdicts: Option<&Verdicts>,
) -> Result<Encoded> {
    // A dictionary column's pages hold its keys (its values are stored once, on their own).
    let dt = match dt {
        DataType::Dictionary(key, _) => key.as_ref(),
        other => other,
    };
    encode_top(dt, pieces, out, codec, None, verdicts, false)
}

/// As [`encode_column_page`], for a column's only page (a table of one row group): floats
/// weigh a page dictionary of two-byte codes against their decimal or plain values, as a
/// dictionary the column's pages would share is weighed where there are several (the writer
/// tries none of numbers for a column of one page).
pub(crate) fn encode_only_page(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
    verdicts: Option<&Verdicts>,
) -> Result<Encoded> {
    if matches!(dt, DataType::Dictionary(..)) || crate::schema::fixed_width(dt).is_none() {
        return encode_column_page(dt, pieces, out, codec, verdicts);
    }
    encode_top(dt, pieces, out, codec, None, verdicts, true)
}

/// A page of `dt` with every encoding allowed, and `symbols` for its strings if given;
/// `weigh_dict` as [`Ctx::weigh_dict`] (for the page's top-level values only).
fn encode_top(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
    symbols: Option<&SymbolTable>,
    verdicts: Option<&Verdicts>,
    weigh_dict: bool,
) -> Result<Encoded> {
    let mut cx = Ctx {
        runs: true,
        nest: true,
        null_rows: true,
        valid_only: true,
        unshuffled: false,
        dict: true,
        weigh_dict,
        codec,
        symbols,
        verdicts,
        max_layout: crate::meta::LAYOUT,
        layout: 1,
    };
    let summary = encode_node(dt, pieces, out, &mut cx)?;
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Encodes a page of a top-level string or binary column (of type `dt`) with its bytes coded
/// by `table` (encoding [`SYMBOLS`](encoding::SYMBOLS), table layout 5); the page then goes
/// through no codec. [`SymbolTable::beats`] tells when that pays.
pub fn encode_symbol_page(
    dt: &DataType,
    pieces: &[ArrayData],
    table: &SymbolTable,
    out: &mut Vec<u8>,
) -> Result<Encoded> {
    if !crate::schema::is_byte_array(dt) {
        return Err(Error::Internal(format!("a symbol table for a column of {dt}")));
    }
    encode_top(dt, pieces, out, None, Some(table), None, false)
}

/// Encodes a page of a column of type `dt` as `codes` into the dictionary its pages share
/// (encoding [`COLUMN_DICT`](encoding::COLUMN_DICT); table layout 4 for strings and binary
/// values, 6 for 4- and 8-byte values): the validity of `pieces` (the page's rows), then the
/// codes as a nested page of 4-byte values, which chooses its own encoding (bit-packed when a
/// few values are common, runs, ...). Null rows' codes are the caller's choice; `verdicts` as
/// for [`encode_column_page`]. Returns the page's summary and layout, and the codes' encoding.
pub fn encode_coded_values(
    dt: &DataType,
    pieces: &[ArrayData],
    codes: &[u32],
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
    verdicts: Option<&Verdicts>,
) -> Result<(Encoded, u8)> {
    let n: usize = pieces.iter().map(ArrayData::len).sum();
    if n != codes.len() {
        return Err(Error::Internal(format!("{} codes for a page of {n} rows", codes.len())));
    }
    let layout = if crate::schema::is_byte_array(dt) {
        4
    } else if crate::schema::may_share_dictionary(dt) {
        6
    } else {
        return Err(Error::Internal(format!(
            "a page of {dt} coded against a column dictionary"
        )));
    };
    let mut cx = Ctx {
        runs: true,
        nest: true,
        null_rows: true,
        valid_only: false,
        unshuffled: false,
        dict: true,
        weigh_dict: false,
        codec,
        symbols: None,
        verdicts,
        max_layout: crate::meta::LAYOUT,
        layout,
    };
    let mut summary = encoding::COLUMN_DICT;
    if let Some(bits) = gather_validity(pieces, n) {
        push_validity(pieces, &bits, out, &mut cx);
        summary |= SUMMARY_NULLS;
    } else {
        out.push(super::validity::VALID);
    }
    out.push(encoding::COLUMN_DICT);
    let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
    let inner = encode_words::<4>(&bytes, Kind::Int { signed: false }, out, &mut cx);
    Ok((
        Encoded {
            summary,
            layout: cx.layout,
        },
        inner,
    ))
}

/// Encodes `pieces` (of type `dt`) as one page using only encodings of table layouts up to
/// `layout`: for pages a file's layout must not be raised for (its row-group statistics).
pub(crate) fn encode_page_within(
    dt: &DataType,
    pieces: &[ArrayData],
    out: &mut Vec<u8>,
    layout: u16,
) -> Result<Encoded> {
    let mut cx = Ctx {
        runs: layout >= 2,
        nest: layout >= 3,
        null_rows: layout >= 4,
        valid_only: layout >= 7,
        unshuffled: false,
        dict: true,
        weigh_dict: false,
        codec: None,
        symbols: None,
        verdicts: None,
        max_layout: layout,
        layout: 1,
    };
    let summary = encode_node(dt, pieces, out, &mut cx)?;
    if cx.layout > layout.max(1) {
        return Err(Error::Internal(format!(
            "a page kept within table layout {layout} needs layout {}",
            cx.layout
        )));
    }
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

/// Whether a column's first page (`pieces`, of type `dt`) is stored in fewer bytes as `codes`
/// into a new column dictionary of `values` (the page's distinct values), dictionary
/// included, than by its own encodings: a trial of both, compressed whole with `codec`'s fast
/// stand-in. Decided for a column of numbers before its pages share a dictionary:
/// where the page's own encodings are as small (decimal codes of a few digits, values of a
/// few hundred that a page's dictionary codes in a byte), the shared one would only cost a
/// lookup per value on every read. The shared dictionary must save a tenth.
pub(crate) fn column_dict_pays(
    dt: &DataType,
    pieces: &[ArrayData],
    codes: &[u32],
    values: &ArrayData,
    codec: Option<kompakt::Codec>,
) -> Result<bool> {
    let mut own = Vec::new();
    encode_column_page(dt, pieces, &mut own, codec, None)?;
    let mut coded = Vec::new();
    encode_coded_values(dt, pieces, codes, &mut coded, codec, None)?;
    let mut dictionary = Vec::new();
    encode_shared_dictionary(values, &mut dictionary, codec)?;
    let target = 0.9 * trials::compressed_size(codec, &own) as f64;
    // Clear wins need no compression of their own (hourly earnings: 48 KB of codes and values
    // against 70 KB of decimal codes compressed).
    if ((coded.len() + dictionary.len()) as f64) < target {
        return Ok(true);
    }
    let shared = trials::compressed_size(codec, &coded) + trials::compressed_size(codec, &dictionary);
    Ok((shared as f64) < target)
}

/// Encodes the values of a dictionary its column's pages share (`values`, strings or
/// numbers), as [`encode_dictionary_values`] does but that floats that are decimals may be
/// stored as their codes and numbers as multiples of a common factor (table layout 3; shared
/// dictionaries of numbers came with layout 6).
pub fn encode_shared_dictionary(
    values: &ArrayData,
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
) -> Result<Encoded> {
    let nest = !crate::schema::is_byte_array(values.data_type());
    encode_dictionary_page(values, nest, out, codec)
}

/// Encodes the values of a dictionary column as one page, without runs: a reader bounds the
/// count a dictionary claims by its bytes (every value at least a bit), which runs would break.
pub fn encode_dictionary_values(values: &ArrayData, out: &mut Vec<u8>) -> Result<Encoded> {
    // Nor scaled or decimal pages: dictionaries are small, and their rule stays simple.
    encode_dictionary_page(values, false, out, None)
}

/// A dictionary's values as one page without runs or nulls; scaled and decimal pages, and
/// values unshuffled where `codec` stores them smaller, when `nest`.
fn encode_dictionary_page(
    values: &ArrayData,
    nest: bool,
    out: &mut Vec<u8>,
    codec: Option<kompakt::Codec>,
) -> Result<Encoded> {
    let mut cx = Ctx {
        runs: false,
        nest,
        null_rows: false,
        valid_only: false,
        unshuffled: nest,
        dict: false,
        weigh_dict: false,
        codec,
        symbols: None,
        verdicts: None,
        max_layout: crate::meta::LAYOUT,
        layout: 1,
    };
    let summary = encode_node(values.data_type(), std::slice::from_ref(values), out, &mut cx)?;
    Ok(Encoded {
        summary,
        layout: cx.layout,
    })
}

pub(super) fn push_shuffled(w: usize, bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + bytes.len(), 0);
    if w > 1 {
        shuffle(w, bytes, &mut out[start..]);
    } else {
        out[start..].copy_from_slice(bytes);
    }
}
