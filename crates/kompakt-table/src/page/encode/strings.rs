//! Encoding string and binary pages: plain (lengths, then data), a page dictionary when values
//! repeat, or codes into a symbol table the writer gives.

use super::choose::encode_words;
use super::{push_shuffled, BuildFx, Ctx, Kind, ShortKey};
use crate::page::{encoding, load, MAX_STRING_DICT};
use arrow_data::ArrayData;

/// Strings and binaries (offsets of `OW` bytes): lengths then data, or a dictionary of
/// distinct strings then codes when few values repeat many times.
pub(super) fn encode_strings<const OW: usize>(pieces: &[ArrayData], n: usize, out: &mut Vec<u8>, cx: &mut Ctx) -> u8 {
    let mut lengths = Vec::with_capacity(n * OW);
    for p in pieces {
        let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
        for pair in offsets.as_chunks::<OW>().0.windows(2) {
            let len = load::<OW>(&pair[1]) - load::<OW>(&pair[0]);
            lengths.extend_from_slice(&len.to_le_bytes()[..OW]);
        }
    }
    // A page cut from one batch (the usual case) is read where it lies, not gathered into a
    // buffer first (a pass over every string byte); pieces of several batches are joined.
    let data = crate::page::symbols::string_bytes::<OW>(pieces);
    if let Some(table) = cx.symbols.take() {
        out.push(encoding::SYMBOLS);
        encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        table.write(out);
        let codes = table.compress(&data);
        out.extend_from_slice(&(codes.len() as u64).to_le_bytes());
        out.extend_from_slice(&codes);
        cx.layout = cx.layout.max(5);
        return encoding::SYMBOLS;
    }
    if let Some(()) = encode_string_dict::<OW>(&lengths, &data, n, out, cx) {
        return encoding::DICT;
    }
    out.push(encoding::PLAIN);
    encode_words::<OW>(&lengths, Kind::Int { signed: false }, out, cx);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&data);
    encoding::PLAIN
}

fn encode_string_dict<const OW: usize>(
    lengths: &[u8],
    data: &[u8],
    n: usize,
    out: &mut Vec<u8>,
    cx: &mut Ctx,
) -> Option<()> {
    use std::collections::HashMap;
    if n < 64 {
        return None;
    }
    let (lens, _) = lengths.as_chunks::<OW>();
    let mut starts = Vec::with_capacity(n + 1);
    let mut pos = 0usize;
    starts.push(0);
    for l in lens {
        pos += load::<OW>(l) as usize;
        starts.push(pos);
    }
    let value = |i: usize| &data[starts[i]..starts[i + 1]];
    // Values that repeat within the page, at most half of them distinct (aircraft tail
    // numbers: about 600 distinct in a day's 1,000 flights, 3,000 in a page's 16,384). Unique
    // values (URLs, ids) stop after PREFIX rows when over 3/4 of them are distinct (a shorter
    // prefix misses tail numbers: a morning's first 256 flights are nearly all different
    // aircraft), and values over half distinct after 4 * PREFIX.
    const PREFIX: usize = 1024;
    if !repeats_likely(n, n / 2, value) {
        return None;
    }
    let limit = MAX_STRING_DICT.min(n / 2);
    let mut ids: HashMap<ShortKey<'_>, u32, BuildFx> = HashMap::with_capacity_and_hasher(256, BuildFx);
    let mut order: Vec<usize> = Vec::new();
    let mut codes: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n {
        let next = ids.len() as u32;
        let id = *ids.entry(ShortKey(value(i))).or_insert_with(|| {
            order.push(i);
            next
        });
        let seen = i + 1;
        if ids.len() > limit
            || (ids.len() * 4 > seen * 3 && seen >= PREFIX.min(n / 4))
            || (ids.len() * 2 > seen && seen >= 4 * PREFIX)
        {
            return None;
        }
        codes.push(id);
    }
    out.push(encoding::DICT);
    out.extend_from_slice(&(order.len() as u32).to_le_bytes());
    let mut dict_lengths = Vec::with_capacity(order.len() * OW);
    let mut dict_data = Vec::new();
    for &i in &order {
        dict_lengths.extend_from_slice(&((starts[i + 1] - starts[i]) as u64).to_le_bytes()[..OW]);
        dict_data.extend_from_slice(value(i));
    }
    encode_words::<OW>(&dict_lengths, Kind::Int { signed: false }, out, cx);
    out.extend_from_slice(&(dict_data.len() as u64).to_le_bytes());
    out.extend_from_slice(&dict_data);
    if order.len() <= 256 {
        out.push(1);
        out.extend(codes.iter().map(|&c| c as u8));
    } else {
        out.push(2);
        let bytes: Vec<u8> = codes.iter().flat_map(|&c| (c as u16).to_le_bytes()).collect();
        push_shuffled(2, &bytes, out);
    }
    Some(())
}

/// Whether a page of `n` values (`value(i)`) may be drawn from at most about `distinct`
/// values, from the repeats in a sample of rows spread over the page: s values drawn from d
/// equally common ones repeat about s²/(2d) times, so at d = n/2, s²/n times (9 in a page of
/// 16,384 rows; tail numbers, d ≈ 3,000: 25); unique values (ids, URLs) about half that at
/// most. 384 hashes instead of the 1024 a prefix needs to tell them apart, on the pages where
/// it matters.
pub(crate) fn repeats_likely<'a>(n: usize, distinct: usize, value: impl Fn(usize) -> &'a [u8]) -> bool {
    const SAMPLE: usize = 384;
    // Small pages are hashed whole (the filter would be noisy there, and they cost little).
    if n < 8192 {
        return true;
    }
    let step = n / SAMPLE;
    let mut seen: std::collections::HashSet<ShortKey<'_>, BuildFx> =
        std::collections::HashSet::with_capacity_and_hasher(SAMPLE, BuildFx);
    let repeats = (0..SAMPLE).filter(|&j| !seen.insert(ShortKey(value(j * step)))).count();
    repeats * 2 * distinct >= SAMPLE * SAMPLE
}
