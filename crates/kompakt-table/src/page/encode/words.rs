//! Writing fixed-width values in the encodings that store the values themselves: runs, frame
//! of reference, bit packing, delta, and building dictionaries with one- or two-byte codes
//! (`choose.rs` writes them).

use super::{push_shuffled, BuildFx};
use crate::page::{encoding, load, store, MAX_FIXED_DICT, MAX_WIDE_DICT};

/// Number of runs of equal values, if at most `limit` (stops counting past it).
pub(super) fn count_runs<const W: usize>(words: &[[u8; W]], limit: usize) -> Option<usize> {
    if words.is_empty() || limit == 0 {
        return None;
    }
    let mut runs = 1;
    for pair in words.windows(2) {
        if pair[0] != pair[1] {
            runs += 1;
            if runs > limit {
                return None;
            }
        }
    }
    Some(runs)
}

/// `runs` runs: the count, each run's value (byte-shuffled), then each run's length minus one,
/// bit-packed.
pub(super) fn encode_runs<const W: usize>(words: &[[u8; W]], runs: usize, out: &mut Vec<u8>) {
    let mut values: Vec<u8> = Vec::with_capacity(runs * W);
    let mut lengths: Vec<u64> = Vec::with_capacity(runs);
    let mut start = 0;
    values.extend_from_slice(&words[0]);
    for (i, pair) in words.windows(2).enumerate() {
        if pair[0] != pair[1] {
            lengths.push((i + 1 - start) as u64);
            start = i + 1;
            values.extend_from_slice(&pair[1]);
        }
    }
    lengths.push((words.len() - start) as u64);
    debug_assert_eq!(lengths.len(), runs);
    let longest = lengths.iter().copied().max().unwrap_or(1);
    let bits = 64 - (longest - 1).leading_zeros() as usize;
    out.push(encoding::RUNS);
    out.extend_from_slice(&(runs as u32).to_le_bytes());
    push_shuffled(W, &values, out);
    out.push(bits as u8);
    crate::bits::pack(lengths.iter().map(|&l| l - 1), bits, out);
}

/// Smallest and largest value, sign bit flipped by `flip` (so that unsigned order is signed
/// order). Four independent minimums and maximums: one chain of compare-and-select per value is
/// what limits a plain loop.
pub(super) fn value_range<const W: usize>(words: &[[u8; W]], flip: u64) -> (u64, u64) {
    if W <= 4 {
        let (lo, hi) = narrow_value_range::<W>(words, flip as u32);
        return (u64::from(lo), u64::from(hi));
    }
    const LANES: usize = 4;
    let (mut lo, mut hi) = ([u64::MAX; LANES], [0u64; LANES]);
    let (chunks, tail) = words.as_chunks::<LANES>();
    for chunk in chunks {
        for (k, w) in chunk.iter().enumerate() {
            let v = load::<W>(w) ^ flip;
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
    }
    for w in tail {
        let v = load::<W>(w) ^ flip;
        lo[0] = lo[0].min(v);
        hi[0] = hi[0].max(v);
    }
    (
        lo.into_iter().min().expect("lanes"),
        hi.into_iter().max().expect("lanes"),
    )
}

/// [`value_range`] of values of at most 4 bytes, in 32 lanes of `i32`: x86-64's baseline
/// (SSE2) compares signed 32-bit lanes but no 64-bit or unsigned ones, so this loop runs in
/// vector registers where `u64` lanes stayed scalar (an int32 page of 16 Ki rows: 7.5 us
/// against 16). Values are mapped to signed order and back.
fn narrow_value_range<const W: usize>(words: &[[u8; W]], flip: u32) -> (u32, u32) {
    const LANES: usize = 32;
    const SIGN: u32 = 1 << 31;
    let load = |w: &[u8; W]| {
        let mut a = [0u8; 4];
        a[..W].copy_from_slice(w);
        (u32::from_le_bytes(a) ^ flip ^ SIGN) as i32
    };
    let (mut lo, mut hi) = ([i32::MAX; LANES], [i32::MIN; LANES]);
    let (chunks, tail) = words.as_chunks::<LANES>();
    for chunk in chunks {
        for k in 0..LANES {
            let v = load(&chunk[k]);
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
    }
    for w in tail {
        let v = load(w);
        lo[0] = lo[0].min(v);
        hi[0] = hi[0].max(v);
    }
    let back = |v: i32| (v as u32) ^ SIGN;
    (
        back(lo.into_iter().min().expect("lanes")),
        back(hi.into_iter().max().expect("lanes")),
    )
}

/// Bits needed by the differences of consecutive values (mod 2^(8W)) as a frame of reference.
pub(super) fn delta_width<const W: usize>(words: &[[u8; W]]) -> usize {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let sign = 1u64 << (8 * W - 1);
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for pair in words.windows(2) {
        let d = (load::<W>(&pair[1]).wrapping_sub(load::<W>(&pair[0])) & mask) ^ sign;
        lo = lo.min(d);
        hi = hi.max(d);
    }
    if lo > hi {
        return 0;
    }
    64 - (hi - lo).leading_zeros() as usize
}

/// The first value, then the differences (mod 2^(8W)) as a bit-packed frame of reference.
pub(super) fn encode_delta<const W: usize>(words: &[[u8; W]], out: &mut Vec<u8>) {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let sign = 1u64 << (8 * W - 1);
    let deltas: Vec<u64> = words
        .windows(2)
        .map(|p| load::<W>(&p[1]).wrapping_sub(load::<W>(&p[0])) & mask)
        .collect();
    let lo = deltas.iter().map(|&d| d ^ sign).min().unwrap_or(sign) ^ sign;
    let hi = deltas
        .iter()
        .map(|&d| (d ^ sign).wrapping_sub(lo ^ sign))
        .max()
        .unwrap_or(0);
    let bits = 64 - hi.leading_zeros() as usize;
    out.push(encoding::DELTA);
    out.extend_from_slice(&words[0]);
    out.extend_from_slice(&lo.to_le_bytes()[..W]);
    out.push(bits as u8);
    crate::bits::pack(deltas.iter().map(|&d| d.wrapping_sub(lo) & mask), bits, out);
}

pub(super) fn encode_bitpack<const W: usize>(words: &[[u8; W]], bits: usize, base: u64, out: &mut Vec<u8>) {
    out.push(encoding::BITPACK);
    out.push(bits as u8);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    // Codes are differences mod 2^(8W): a signed range across zero wraps in u64 arithmetic.
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    crate::bits::pack(words.iter().map(|w| load::<W>(w).wrapping_sub(base) & mask), bits, out);
}

pub(super) fn encode_for<const W: usize>(words: &[[u8; W]], k: usize, base: u64, out: &mut Vec<u8>) {
    out.push(encoding::FOR);
    out.push(k as u8);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    let mut codes = vec![0u8; words.len() * k];
    match k {
        1 => narrow::<W, 1>(words, base, &mut codes),
        2 => narrow::<W, 2>(words, base, &mut codes),
        3 => narrow::<W, 3>(words, base, &mut codes),
        4 => narrow::<W, 4>(words, base, &mut codes),
        5 => narrow::<W, 5>(words, base, &mut codes),
        6 => narrow::<W, 6>(words, base, &mut codes),
        _ => narrow::<W, 7>(words, base, &mut codes),
    }
    push_shuffled(k, &codes, out);
}

fn narrow<const W: usize, const K: usize>(words: &[[u8; W]], base: u64, codes: &mut [u8]) {
    let (codes, _) = codes.as_chunks_mut::<K>();
    for (c, w) in codes.iter_mut().zip(words) {
        store::<K>(load::<W>(w).wrapping_sub(base), c);
    }
}

/// A page's dictionary: its distinct values in the order they first appear, and a code a row.
pub(super) struct PageDict {
    /// The distinct values, each a `W`-byte word (the low bytes of the `u64`).
    pub values: Vec<u64>,
    /// The rows' codes, one byte each, or two (little-endian) when `wide`.
    pub codes: Vec<u8>,
    pub wide: bool,
}

impl PageDict {
    /// The values as `W`-byte words, one after another.
    pub fn value_bytes<const W: usize>(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; self.values.len() * W];
        for (d, v) in bytes.as_chunks_mut::<W>().0.iter_mut().zip(&self.values) {
            store::<W>(*v, d);
        }
        bytes
    }

    /// The codes as they are stored as bytes: two-byte codes byte-shuffled.
    pub fn code_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        if self.wide {
            let mut shuffled = Vec::with_capacity(self.codes.len());
            push_shuffled(2, &self.codes, &mut shuffled);
            shuffled.into()
        } else {
            (&self.codes[..]).into()
        }
    }

    /// The code of each row.
    pub fn code_values(&self) -> impl Iterator<Item = u64> + '_ {
        let wide = self.wide;
        let step = 1 + usize::from(wide);
        self.codes.chunks_exact(step).map(move |c| match wide {
            true => u64::from(u16::from_le_bytes([c[0], c[1]])),
            false => u64::from(c[0]),
        })
    }
}

/// Dictionary of at most 256 distinct values with one-byte codes, if the values allow it.
pub(super) fn build_dict<const W: usize>(words: &[[u8; W]]) -> Option<PageDict> {
    const SLOTS: usize = 1024;
    let mut keys = [0u64; SLOTS];
    let mut ids = [u16::MAX; SLOTS];
    let mut values: Vec<u64> = Vec::new();
    let mut codes = Vec::with_capacity(words.len());
    for w in words {
        let v = load::<W>(w);
        let mut slot = (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize;
        loop {
            if ids[slot] == u16::MAX {
                if values.len() == MAX_FIXED_DICT {
                    return None;
                }
                ids[slot] = values.len() as u16;
                keys[slot] = v;
                values.push(v);
                break;
            }
            if keys[slot] == v {
                break;
            }
            slot = (slot + 1) % SLOTS;
        }
        codes.push(ids[slot] as u8);
    }
    Some(PageDict {
        values,
        codes,
        wide: false,
    })
}

/// Dictionary of 257 to `min(65536, n / 4)` distinct values with two-byte codes, if the values
/// allow it and no prefix of 1024 rows or more is more than half distinct values (checked on
/// the first 1024 first, so that pages without repeats stop after about 512 values).
pub(super) fn build_wide_dict<const W: usize>(words: &[[u8; W]]) -> Option<PageDict> {
    let n = words.len();
    let limit = (n / 4).min(MAX_WIDE_DICT);
    if limit <= MAX_FIXED_DICT {
        return None;
    }
    let prefix = &words[..n.min(1024)];
    let mut distinct: std::collections::HashSet<u64, BuildFx> =
        std::collections::HashSet::with_capacity_and_hasher(prefix.len() / 2 + 1, BuildFx);
    for w in prefix {
        if distinct.insert(load::<W>(w)) && distinct.len() * 2 > prefix.len() {
            return None;
        }
    }
    collect_wide_dict::<W>(words, limit, distinct.len() * 4, true)
}

/// A dictionary of 257 to `min(65536, limit)` distinct values with two-byte codes, without
/// [`build_wide_dict`]'s cut-off for mostly distinct pages: for a trial that weighs it.
pub(super) fn wide_dict_for_trial<const W: usize>(words: &[[u8; W]], limit: usize) -> Option<PageDict> {
    let limit = limit.min(MAX_WIDE_DICT);
    (limit > MAX_FIXED_DICT)
        .then(|| collect_wide_dict::<W>(words, limit, limit, false))
        .flatten()
}

/// The dictionary of the two above: `None` past `limit` values, or, where
/// `mostly_distinct_stops`, once the page turns mostly distinct.
fn collect_wide_dict<const W: usize>(
    words: &[[u8; W]],
    limit: usize,
    capacity: usize,
    mostly_distinct_stops: bool,
) -> Option<PageDict> {
    use std::collections::HashMap;
    let n = words.len();
    let mut ids: HashMap<u64, u16, BuildFx> = HashMap::with_capacity_and_hasher(capacity.min(n), BuildFx);
    let mut values: Vec<u64> = Vec::new();
    let mut codes: Vec<u8> = Vec::with_capacity(2 * n);
    for (seen, w) in (1..).zip(words) {
        let v = load::<W>(w);
        let id = match ids.get(&v) {
            Some(&id) => id,
            None => {
                // Past the prefix too, a page that turns mostly distinct stops early.
                if values.len() == limit || (mostly_distinct_stops && seen > 1024 && values.len() * 2 >= seen) {
                    return None;
                }
                let id = values.len() as u16; // below limit <= 65536
                ids.insert(v, id);
                values.push(v);
                id
            }
        };
        codes.extend_from_slice(&id.to_le_bytes());
    }
    Some(PageDict {
        values,
        codes,
        wide: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `value_range` must give: the plain loop over loaded, flipped values.
    fn plain_range<const W: usize>(words: &[[u8; W]], flip: u64) -> (u64, u64) {
        let values = words.iter().map(|w| load::<W>(w) ^ flip);
        (values.clone().min().unwrap(), values.max().unwrap())
    }

    fn check<const W: usize>(bytes: &[u8]) {
        let (words, _) = bytes.as_chunks::<W>();
        if words.is_empty() {
            return;
        }
        for flip in [0, 1u64 << (8 * W - 1)] {
            assert_eq!(
                value_range::<W>(words, flip),
                plain_range::<W>(words, flip),
                "W {W} flip {flip:x}"
            );
        }
    }

    proptest! {
        #[test]
        fn value_range_is_the_least_and_greatest_value(bytes in prop::collection::vec(any::<u8>(), 1..600)) {
            check::<1>(&bytes);
            check::<2>(&bytes);
            check::<4>(&bytes);
            check::<8>(&bytes);
        }
    }

    #[test]
    fn value_range_sees_the_extremes_in_every_lane_and_the_tail() {
        for len in [1usize, 31, 32, 33, 64, 100] {
            for at in 0..len {
                for (lo, hi) in [(i32::MIN, i32::MAX), (-1, 0), (0, 1)] {
                    let mut values = vec![7i32; len];
                    values[at] = lo;
                    values[(at * 7 + 3) % len] = hi;
                    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                    check::<4>(&bytes);
                }
            }
        }
    }
}
