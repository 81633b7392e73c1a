//! The writer's side of a dictionary shared by every page of a column (encoding
//! [`COLUMN_DICT`](crate::page::encoding::COLUMN_DICT)): string and binary columns, and columns
//! of 4- and 8-byte values. Values get codes in the order they are first seen, so a dictionary
//! that grows keeps the meaning of every code already written, and is stored once, at the end,
//! in the column's dictionary stream.
//!
//! A page of 16,384 flights holds about 3,000 of the 4,000 aircraft tail numbers: a
//! dictionary per page stores most of them again in each page, one per column stores each
//! once (docs/DESIGN.md, "What kompakt's table writer chooses"). The same holds for numbers
//! drawn from a few thousand values: hourly earnings, prices.

use crate::page::{BuildFx, ShortKey};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_data::{ArrayData, ArrayDataBuilder};
use arrow_schema::DataType;
use kompakt::{Error, Result};
use std::collections::HashMap;

/// Most values a shared dictionary takes (a reader decodes all of it for any page).
const MAX_VALUES: usize = 1 << 16;
/// Most bytes of values it takes: as Parquet's default dictionary page, 1 MiB, so that the
/// first read of a few rows decodes little beyond them.
const MAX_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Takes new values.
    Open,
    /// At its size limit: pages whose values are all in it still use it.
    Full,
    /// The column's values do not repeat across pages: no page is coded against it.
    Off,
}

/// A column's shared dictionary as it is being built.
pub(crate) struct SharedValues {
    data_type: DataType,
    /// The width of fixed-width values; `None` for strings and binary values.
    width: Option<usize>,
    lookup: Lookup,
    /// The values back to back, and where each ends.
    data: Vec<u8>,
    ends: Vec<usize>,
    /// Values the file already holds in its dictionary stream (an append's starting point).
    stored: usize,
    state: State,
    accepted: usize,
    rejected: usize,
}

impl SharedValues {
    /// An empty dictionary for a column of `data_type` (a string or binary type, or one of 4-
    /// or 8-byte values).
    pub fn new(data_type: &DataType) -> Self {
        SharedValues {
            data_type: data_type.clone(),
            width: crate::schema::fixed_width(data_type),
            lookup: match crate::schema::fixed_width(data_type) {
                Some(_) => Lookup::Words(HashMap::with_hasher(BuildFx)),
                None => Lookup::Bytes(hashbrown::HashMap::with_hasher(BuildFx)),
            },
            data: Vec::new(),
            ends: Vec::new(),
            stored: 0,
            state: State::Open,
            accepted: 0,
            rejected: 0,
        }
    }

    /// The dictionary of a table being appended to, whose values so far are `values`.
    pub fn with_values(values: &ArrayData) -> Result<Self> {
        let mut s = SharedValues::new(values.data_type());
        let width = s.width;
        let mut add = |v: &[u8]| s.push(v);
        match (values.data_type(), width) {
            (DataType::Utf8 | DataType::Binary, _) => for_each_value::<4>(values, &mut add),
            (DataType::LargeUtf8 | DataType::LargeBinary, _) => for_each_value::<8>(values, &mut add),
            (_, Some(w @ (4 | 8))) => {
                let raw = &values.buffers()[0].as_slice()[values.offset() * w..(values.offset() + values.len()) * w];
                raw.chunks_exact(w).for_each(|v| {
                    add(v);
                });
            }
            (other, _) => return Err(Error::Internal(format!("a shared dictionary of {other}"))),
        }
        s.stored = s.ends.len();
        s.accepted = 1;
        if s.ends.len() >= MAX_VALUES || s.data.len() >= MAX_BYTES {
            s.state = State::Full;
        }
        Ok(s)
    }

    /// Tells a dictionary that its column has one page only (a table of one row group). One of
    /// floats is then not tried: it would be that page's dictionary in a stream of its own,
    /// and its trial compressed the page three more times (56 % of writing a table of 18
    /// columns of 1,064 doubles); the page weighs a dictionary of its own instead
    /// ([`encode_only_page`](crate::page::encode_only_page)). Integers' pages weigh no
    /// dictionary of two-byte codes, so theirs is still tried (ids drawn from a few thousand
    /// values).
    pub fn one_page_only(&mut self) {
        if is_float(&self.data_type) && self.ends.is_empty() {
            self.state = State::Off;
        }
    }

    fn push(&mut self, value: &[u8]) -> u32 {
        let code = self.ends.len() as u32;
        self.data.extend_from_slice(value);
        self.ends.push(self.data.len());
        self.lookup.insert(value, code);
        code
    }

    /// Forgets the values from the `keep`-th on (a page that added them was not coded).
    fn truncate(&mut self, keep: usize) {
        let start = if keep == 0 { 0 } else { self.ends[keep - 1] };
        for i in keep..self.ends.len() {
            let begin = if i == 0 { 0 } else { self.ends[i - 1] };
            self.lookup.remove(&self.data[begin..self.ends[i]]);
        }
        self.ends.truncate(keep);
        self.data.truncate(start);
    }

    /// The codes of a page's rows (`pieces`, arrays of the column's type), adding its new
    /// values: [`draft`](Self::draft) then [`commit`](Self::commit).
    #[cfg(test)]
    pub fn code_page(&mut self, pieces: &[ArrayData]) -> Option<Vec<u32>> {
        let draft = self.draft(pieces, None, true);
        self.commit(draft).map(Coded::into_codes)
    }

    /// Phase one of coding a page (`pieces`, arrays of the column's type), read-only so that
    /// the pages of a round run in parallel: each row's code in the dictionary as it stands,
    /// or a mark and the index of a value new to it. Refused when more than three quarters of
    /// the rows are new values (or when the column has stopped trying); until a page has been accepted,
    /// every page of the round meets an empty dictionary, so [`commit`](Self::commit) judges
    /// them by what each adds after the pages before it. A column of numbers is coded only when
    /// a trial through `codec` (the one pages are weighed against) says its first page is
    /// smaller coded, dictionary included ([`column_dict_pays`](crate::page::column_dict_pays)):
    /// the trial runs on the round's `first` page only, and the others of a round that
    /// starts the dictionary follow its verdict at commit.
    pub fn draft<'a>(&self, pieces: &'a [ArrayData], codec: Option<kompakt::Codec>, first: bool) -> Draft<'a> {
        let n: usize = pieces.iter().map(ArrayData::len).sum();
        if self.state == State::Off || n == 0 {
            return Draft::Skipped;
        }
        let large = matches!(self.data_type, DataType::LargeUtf8 | DataType::LargeBinary);
        // While no page has used it, a sample says whether the values repeat at all (ids and
        // URLs do not): hashing and copying a page to find out would cost more.
        if self.accepted == 0 {
            let likely = match (pieces, self.width) {
                ([p], Some(w)) => numbers_worth_sharing(p, w, is_float(&self.data_type)),
                // A page of several pieces: only strings are tried without a sample.
                (_, Some(_)) => false,
                ([p], None) if large => sample_repeats::<8>(p),
                ([p], None) => sample_repeats::<4>(p),
                _ => true,
            };
            if !likely {
                return Draft::Refused;
            }
        }
        let max_new = if self.accepted == 0 { n } else { max_new_values(n) };
        let mut codes = Vec::with_capacity(n);
        let mut new: Vec<&'a [u8]> = Vec::new();
        // Sized for a vocabulary of a few thousand: growing from empty rehashed it 8 times.
        let mut local = Local::new(self.width.is_some(), n.min(4096));
        let mut first_valid = None;
        let full = self.state == State::Full;
        // The row before, which sorted and clustered columns repeat (hours, dates as text):
        // one comparison instead of a hash.
        let mut prev: Option<(&'a [u8], u32)> = None;
        let mut each = |i: usize, value: Option<&'a [u8]>| -> bool {
            let Some(value) = value else {
                codes.push(codes.last().copied().unwrap_or(0));
                return true;
            };
            if let Some((v, c)) = prev {
                if v == value {
                    codes.push(c);
                    return true;
                }
            }
            // (A first round finds the dictionary empty: no lookup.)
            let known = if self.ends.is_empty() {
                None
            } else {
                self.lookup.get(value)
            };
            let code = match known {
                Some(c) => c,
                None => {
                    let added = local.index_or_add(value, || {
                        if full || new.len() >= max_new {
                            return None;
                        }
                        new.push(value);
                        Some(new.len() as u32 - 1)
                    });
                    match added {
                        Some(index) => NEW | index,
                        None => return false,
                    }
                }
            };
            first_valid.get_or_insert(i);
            codes.push(code);
            prev = Some((value, code));
            true
        };
        let mut row = 0;
        for p in pieces {
            let ok = match self.width {
                Some(w) => visit_fixed(p, w, &mut row, &mut each),
                None if large => visit::<8>(p, &mut row, &mut each),
                None => visit::<4>(p, &mut row, &mut each),
            };
            if !ok {
                return Draft::Refused;
            }
        }
        let untried = self.width.is_some() && self.accepted == 0;
        if untried && first && !self.pays_on_its_own(pieces, &codes, &new, first_valid, codec) {
            return Draft::Refused;
        }
        Draft::Coded {
            codes,
            new,
            first_valid,
            untried: untried && !first,
        }
    }

    /// Whether a page of numbers drafted against an empty dictionary (so that every code is
    /// one of its `new` values) is smaller coded, dictionary included, than on its own.
    fn pays_on_its_own(
        &self,
        pieces: &[ArrayData],
        codes: &[u32],
        new: &[&[u8]],
        first_valid: Option<usize>,
        codec: Option<kompakt::Codec>,
    ) -> bool {
        let coded = Coded {
            codes: codes.to_vec(),
            map: (0..new.len() as u32).collect(),
            first_valid: first_valid.unwrap_or(0),
        };
        let values = ArrayDataBuilder::new(self.data_type.clone())
            .len(new.len())
            .add_buffer(Buffer::from(new.concat()))
            .build();
        match values {
            Ok(values) => crate::page::column_dict_pays(&self.data_type, pieces, &coded.into_codes(), &values, codec)
                .unwrap_or(false),
            Err(_) => false,
        }
    }

    /// Phase two, page by page in order: adds a drafted page's new values (some an earlier
    /// page of the round may have added already) and gives their codes; `None` (and nothing
    /// added) when the page is refused, here or by its draft.
    pub fn commit(&mut self, draft: Draft<'_>) -> Option<Coded> {
        let (codes, new, first_valid) = match draft {
            Draft::Skipped => return None,
            Draft::Refused => return self.refuse(self.ends.len()),
            Draft::Coded {
                codes,
                new,
                first_valid,
                untried,
            } => {
                // A page of numbers after a round's first, which no trial judged: coded only
                // when the first was.
                if untried && self.accepted == 0 {
                    return self.refuse(self.ends.len());
                }
                (codes, new, first_valid)
            }
        };
        let before = self.ends.len();
        // As the draft's rule, on the values the page really adds: a round's first pages were
        // drafted against the same dictionary, and the words of a 10,000-word vocabulary are
        // about half of any one page of 16,384 rows but a tenth of the next ones'.
        let max_new = max_new_values(codes.len());
        // Found or missing, before adding any: a refused page then adds and takes back
        // nothing (pages of text lines past the size limit added thousands to remove them).
        // A draft's new values are distinct (its `Local` map), so counting them is what
        // adding them one by one would have found.
        let mut map: Vec<Option<u32>> = Vec::with_capacity(new.len());
        let (mut missing, mut missing_bytes) = (0, 0);
        for value in &new {
            let known = self.lookup.get(value);
            if known.is_none() {
                if before + missing >= MAX_VALUES || self.data.len() + missing_bytes + value.len() > MAX_BYTES {
                    self.state = State::Full;
                    return self.refuse(before);
                }
                if missing >= max_new {
                    return self.refuse(before);
                }
                missing += 1;
                missing_bytes += value.len();
            }
            map.push(known);
        }
        let map = map
            .into_iter()
            .zip(new)
            .map(|(known, value)| known.unwrap_or_else(|| self.push(value)))
            .collect();
        // Nulls only: any code will do, if there is one.
        if first_valid.is_none() && self.ends.is_empty() {
            return self.refuse(before);
        }
        self.accepted += 1;
        Some(Coded {
            codes,
            map,
            first_valid: first_valid.unwrap_or(0),
        })
    }

    /// Refuses a page: forgets what it added, and stops trying once most pages were refused.
    fn refuse<T>(&mut self, before: usize) -> Option<T> {
        self.truncate(before);
        self.rejected += 1;
        if self.rejected >= 2 && self.rejected > self.accepted {
            self.state = State::Off;
        }
        None
    }

    /// Whether the dictionary holds values the file does not have yet.
    pub fn grew(&self) -> bool {
        self.ends.len() > self.stored
    }

    /// The dictionary's values, as an array of the column's type.
    pub fn values(&self) -> Result<ArrayData> {
        if self.width.is_some() {
            return ArrayDataBuilder::new(self.data_type.clone())
                .len(self.ends.len())
                .add_buffer(Buffer::from(self.data.as_slice()))
                .build()
                .map_err(|e| Error::Internal(format!("a shared dictionary: {e}")));
        }
        let offsets: Buffer = match self.data_type {
            DataType::LargeUtf8 | DataType::LargeBinary => {
                ScalarBuffer::from_iter(std::iter::once(0i64).chain(self.ends.iter().map(|&e| e as i64))).into_inner()
            }
            _ => {
                let last = self.ends.last().copied().unwrap_or(0);
                if last > i32::MAX as usize {
                    return Err(Error::Internal("a shared dictionary past 32-bit offsets".into()));
                }
                ScalarBuffer::from_iter(std::iter::once(0i32).chain(self.ends.iter().map(|&e| e as i32))).into_inner()
            }
        };
        ArrayDataBuilder::new(self.data_type.clone())
            .len(self.ends.len())
            .add_buffer(offsets)
            .add_buffer(Buffer::from(self.data.as_slice()))
            .build()
            .map_err(|e| Error::Internal(format!("a shared dictionary: {e}")))
    }
}

/// The most values new to the dictionary a page of `n` rows may add: three quarters. A value
/// is stored once in the dictionary instead of in the page, so what a page of many new values
/// costs is its codes; a column of values that never repeat fills the dictionary to its limit
/// and stops being tried.
fn max_new_values(n: usize) -> usize {
    n * 3 / 4
}

/// A value of at most 8 bytes as a number (the key of a dictionary of numbers).
fn word(value: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..value.len()].copy_from_slice(value);
    u64::from_le_bytes(a)
}

/// The codes of a dictionary's values: numbers are keys as numbers (hashing their bytes and
/// comparing slices took a sixth of writing AER's CPS tables).
/// Strings are looked up as [`ShortKey`]s: a few word compares where slices call `memcmp`.
enum Lookup {
    Bytes(hashbrown::HashMap<Box<[u8]>, u32, BuildFx>),
    Words(HashMap<u64, u32, BuildFx>),
}

impl Lookup {
    fn get(&self, value: &[u8]) -> Option<u32> {
        match self {
            Lookup::Bytes(m) => m.get(&ShortKey(value)).copied(),
            Lookup::Words(m) => m.get(&word(value)).copied(),
        }
    }
    fn insert(&mut self, value: &[u8], code: u32) {
        match self {
            Lookup::Bytes(m) => m.insert(value.into(), code),
            Lookup::Words(m) => m.insert(word(value), code),
        };
    }
    fn remove(&mut self, value: &[u8]) {
        match self {
            Lookup::Bytes(m) => m.remove(&ShortKey(value)),
            Lookup::Words(m) => m.remove(&word(value)),
        };
    }
    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Lookup::Bytes(m) => m.len(),
            Lookup::Words(m) => m.len(),
        }
    }
}

/// A draft's values new to the dictionary, by value: [`Lookup`] for the values of one page.
enum Local<'a> {
    Bytes(HashMap<ShortKey<'a>, u32, BuildFx>),
    Words(HashMap<u64, u32, BuildFx>),
}

impl<'a> Local<'a> {
    fn new(words: bool, capacity: usize) -> Self {
        match words {
            true => Local::Words(HashMap::with_capacity_and_hasher(capacity, BuildFx)),
            false => Local::Bytes(HashMap::with_capacity_and_hasher(capacity, BuildFx)),
        }
    }
    /// The index of `value` among the new values, or the one `add` gives it when it is not
    /// one yet (`None`: `add` refused it).
    fn index_or_add(&mut self, value: &'a [u8], add: impl FnOnce() -> Option<u32>) -> Option<u32> {
        use std::collections::hash_map::Entry;
        match self {
            Local::Bytes(m) => match m.entry(ShortKey(value)) {
                Entry::Occupied(e) => Some(*e.get()),
                Entry::Vacant(e) => add().map(|i| *e.insert(i)),
            },
            Local::Words(m) => match m.entry(word(value)) {
                Entry::Occupied(e) => Some(*e.get()),
                Entry::Vacant(e) => add().map(|i| *e.insert(i)),
            },
        }
    }
}

/// Marks a drafted code as the index of a value new to the dictionary (codes stay below 2^16).
const NEW: u32 = 1 << 31;

/// A page's codes after phase one ([`SharedValues::draft`]).
pub(crate) enum Draft<'a> {
    /// The column no longer tries (or the page is empty): not a refusal.
    Skipped,
    /// Better on its own.
    Refused,
    /// Codes, some marked [`NEW`] with the index of a value in `new`.
    Coded {
        codes: Vec<u32>,
        new: Vec<&'a [u8]>,
        first_valid: Option<usize>,
        /// Numbers drafted before any page used the dictionary, without a trial.
        untried: bool,
    },
}

/// A page's codes after phase two: the drafted codes and the codes of its new values.
pub(crate) struct Coded {
    codes: Vec<u32>,
    map: Vec<u32>,
    first_valid: usize,
}

impl Coded {
    /// The page's final codes (in parallel with other pages: a pass over the rows).
    pub fn into_codes(self) -> Vec<u32> {
        let Coded {
            mut codes,
            map,
            first_valid,
        } = self;
        if !map.is_empty() {
            for c in &mut codes {
                if *c & NEW != 0 {
                    *c = map[(*c & !NEW) as usize];
                }
            }
        }
        // Leading nulls took a placeholder: give them the first valid row's code (0 when every
        // row is null).
        let lead = codes.get(first_valid).copied().unwrap_or(0);
        codes[..first_valid].fill(lead);
        codes
    }
}

/// Calls `each` with the row number and value (`None` for a null) of every row of `p`, a
/// string array with `OW`-byte offsets; stops and returns false when `each` does.
fn visit<'a, const OW: usize>(
    p: &'a ArrayData,
    row: &mut usize,
    each: &mut impl FnMut(usize, Option<&'a [u8]>) -> bool,
) -> bool {
    let value_at = value_at::<OW>(p);
    let nulls = p.nulls();
    for i in 0..p.len() {
        let value = match nulls {
            Some(nb) if nb.is_null(i) => None,
            _ => Some(value_at(i)),
        };
        if !each(*row, value) {
            return false;
        }
        *row += 1;
    }
    true
}

/// [`visit`] for an array of fixed-width values of `w` bytes.
fn visit_fixed<'a>(
    p: &'a ArrayData,
    w: usize,
    row: &mut usize,
    each: &mut impl FnMut(usize, Option<&'a [u8]>) -> bool,
) -> bool {
    let raw = &p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + p.len()) * w];
    let nulls = p.nulls();
    for (i, value) in raw.chunks_exact(w).enumerate() {
        let value = match nulls {
            Some(nb) if nb.is_null(i) => None,
            _ => Some(value),
        };
        if !each(*row, value) {
            return false;
        }
        *row += 1;
    }
    true
}

fn is_float(dt: &DataType) -> bool {
    matches!(dt, DataType::Float32 | DataType::Float64)
}

/// Whether a page of numbers (`p`, of `w`-byte values) looks worth a trial of coding against
/// a column dictionary, from a sample of its valid rows spread over it: more distinct values
/// than a page's own dictionary codes in a byte (over a third of the sample), drawn from a
/// vocabulary a column dictionary holds (as [`sample_repeats`]); for integers, dates and
/// times, not sorted (sorted ones are small as differences) and spread over a range (over the
/// values' common factor) at least 16 times wider than the vocabulary (narrower ones are as
/// small as codes already, bit-packed from the page's least value). Small pages are left to
/// their own encodings: the dictionary's stream costs more than it saves there.
fn numbers_worth_sharing(p: &ArrayData, w: usize, float: bool) -> bool {
    const SAMPLE: usize = 384;
    const MIN_ROWS: usize = 1024;
    let n = p.len();
    if n < MIN_ROWS {
        return false;
    }
    let raw = &p.buffers()[0].as_slice()[p.offset() * w..(p.offset() + n) * w];
    let step = n / SAMPLE;
    let nulls = p.nulls();
    let sample: Vec<u64> = (0..SAMPLE)
        .map(|j| j * step)
        .filter(|&i| nulls.is_none_or(|nb| nb.is_valid(i)))
        .map(|i| word(&raw[i * w..(i + 1) * w]))
        .collect();
    let s = sample.len();
    if s < SAMPLE / 4 {
        return false;
    }
    let distinct: std::collections::HashSet<u64, BuildFx> = sample.iter().copied().collect();
    let repeats = s - distinct.len();
    if distinct.len() <= s / 3 || repeats * 2 * SAMPLED_VOCABULARY < s * s {
        return false;
    }
    if float {
        return true;
    }
    // s values drawn from d repeat about s²/(2d) times.
    let vocabulary = (s * s / (2 * repeats)).max(1);
    let code_bits = (usize::BITS - vocabulary.leading_zeros()) as usize;
    // Signed order as unsigned (the range of uint* values past 2^(8w-1) is overstated).
    let flip = 1u64 << (8 * w - 1);
    let mask = u64::MAX >> (64 - 8 * w);
    let values: Vec<u64> = sample.iter().map(|&v| (v ^ flip) & mask).collect();
    if values.is_sorted() {
        return false;
    }
    let lo = values.iter().copied().min().unwrap_or(0);
    let hi = values.iter().copied().max().unwrap_or(0);
    let factor = values.iter().fold(0, |g, &v| gcd(g, v - lo)).max(1);
    let range_bits = (u64::BITS - ((hi - lo) / factor).leading_zeros()) as usize;
    range_bits >= code_bits + 4
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn for_each_value<const OW: usize>(p: &ArrayData, add: &mut impl FnMut(&[u8]) -> u32) {
    let mut row = 0;
    visit::<OW>(p, &mut row, &mut |_, v| {
        add(v.unwrap_or_default());
        true
    });
}

/// Whether the values of `p` repeat enough to be worth a dictionary, from a sample.
/// Whether the values of `p`, one page, look like a vocabulary a shared dictionary can hold:
/// drawn from at most about [`SAMPLED_VOCABULARY`] values.
fn sample_repeats<const OW: usize>(p: &ArrayData) -> bool {
    crate::page::repeats_likely(p.len(), SAMPLED_VOCABULARY, value_at::<OW>(p))
}

/// The vocabulary a page's sample must look drawn from for a shared dictionary to be tried:
/// a page's own rows. Words of a 10,000-word vocabulary are half of a page's rows, too many
/// for a page's own dictionary (at most n/2 distinct), but a column's dictionary stores them
/// once for all its pages (a third of the plain pages' bytes with codes of 14 bits). Unique
/// values (ids, URLs) show no repeats in the sample at all.
const SAMPLED_VOCABULARY: usize = 16_384;

/// The bytes of row `i` of `p`, a string array with `OW`-byte offsets (whatever its validity).
fn value_at<'a, const OW: usize>(p: &'a ArrayData) -> impl Fn(usize) -> &'a [u8] {
    let raw = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
    let (offsets, _) = raw.as_chunks::<OW>();
    let data = p.buffers()[1].as_slice();
    move |i| &data[load::<OW>(&offsets[i])..load::<OW>(&offsets[i + 1])]
}

fn load<const OW: usize>(b: &[u8; OW]) -> usize {
    let mut a = [0u8; 8];
    a[..OW].copy_from_slice(b);
    u64::from_le_bytes(a) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, StringArray};

    fn data(values: &[Option<&str>]) -> ArrayData {
        StringArray::from(values.to_vec()).to_data()
    }

    #[test]
    fn codes_keep_their_meaning_as_the_dictionary_grows() {
        let mut s = SharedValues::new(&DataType::Utf8);
        let a = data(&[Some("x"), Some("y"), Some("x"), Some("x")]);
        assert_eq!(s.code_page(&[a]), Some(vec![0, 1, 0, 0]));
        let b = data(&[None, Some("z"), Some("y"), None, Some("y"), Some("y")]);
        assert_eq!(s.code_page(&[b]), Some(vec![2, 2, 1, 1, 1, 1]));
        let values = s.values().unwrap();
        assert_eq!(
            arrow_array::make_array(values).as_ref(),
            &StringArray::from(vec!["x", "y", "z"]) as &dyn Array
        );
        assert!(s.grew());
    }

    #[test]
    fn pages_of_new_values_are_refused_and_leave_nothing() {
        let mut s = SharedValues::new(&DataType::Utf8);
        assert!(s
            .code_page(&[data(&[Some("a"), Some("a"), Some("b"), Some("a")])])
            .is_some());
        let unique: Vec<String> = (0..100).map(|i| format!("u{i}")).collect();
        let page = StringArray::from_iter_values(&unique).to_data();
        assert_eq!(s.code_page(&[page]), None);
        assert_eq!(s.ends.len(), 2);
        assert_eq!(s.lookup.len(), 2);
        // Still open for pages that repeat.
        assert_eq!(
            s.code_page(&[data(&[Some("b"), Some("c"), Some("b"), Some("b")])]),
            Some(vec![1, 2, 1, 1])
        );
    }

    #[test]
    fn a_page_past_the_byte_limit_adds_nothing_and_fills_the_dictionary() {
        // Values of 1 KiB, 600 a page: the first page fits (600 KiB), the second page's 600
        // new ones would pass 1 MiB: refused whole, the dictionary full. A page of values it
        // already has is still coded.
        let values = |from: usize| -> ArrayData {
            let v: Vec<String> = (from..from + 600).map(|i| format!("{i:01024}")).collect();
            let mut rows = v.clone();
            rows.extend(v);
            StringArray::from_iter_values(&rows).to_data()
        };
        let mut s = SharedValues::new(&DataType::Utf8);
        assert!(s.code_page(&[values(0)]).is_some());
        let (ends, bytes) = (s.ends.len(), s.data.len());
        assert_eq!(s.code_page(&[values(600)]), None);
        assert_eq!((s.ends.len(), s.data.len(), s.lookup.len()), (ends, bytes, ends));
        assert_eq!(s.state, State::Full);
        let codes = s
            .code_page(&[values(300)].map(|d| d.slice(0, 300)))
            .expect("known values are coded");
        assert_eq!(codes, (300..600).collect::<Vec<u32>>());
    }

    #[test]
    fn a_first_round_is_judged_by_what_each_page_adds() {
        let page = |values: [&'static str; 8]| [data(&values.map(Some))];
        // Two pages drafted against the same empty dictionary, as a round's are: 7 of 8 rows
        // new (more than 3/4) is refused, and leaves nothing for the next page.
        let mut s = SharedValues::new(&DataType::Utf8);
        let (first, second) = (
            page(["a", "b", "c", "d", "e", "f", "g", "a"]),
            page(["a", "b", "c", "d", "e", "f", "h", "b"]),
        );
        let [d1, d2] = [s.draft(&first, None, true), s.draft(&second, None, false)];
        assert!(s.commit(d1).is_none(), "7 of 8 rows new: refused");
        assert!(s.ends.is_empty());
        assert!(s.commit(d2).is_none(), "7 of 8 new once the first page left nothing");
        // A page that shares most of its values with the one before it in the round.
        let mut s = SharedValues::new(&DataType::Utf8);
        let third = page(["a", "b", "c", "d", "e", "f", "a", "b"]);
        let fourth = page(["a", "b", "c", "d", "e", "g", "h", "h"]);
        let mut after_a_round = SharedValues::new(&DataType::Utf8);
        after_a_round.accepted = 1;
        assert!(
            matches!(after_a_round.draft(&fourth, None, true), Draft::Refused),
            "7 of 8 new against a dictionary without them, drafted after a round: refused"
        );
        let [d3, d4] = [s.draft(&third, None, true), s.draft(&fourth, None, false)];
        assert_eq!(s.commit(d3).map(Coded::into_codes), Some(vec![0, 1, 2, 3, 4, 5, 0, 1]));
        assert_eq!(
            s.commit(d4).map(Coded::into_codes),
            Some(vec![0, 1, 2, 3, 4, 6, 7, 7]),
            "2 of 8 new after the page before it"
        );
    }

    #[test]
    fn columns_without_repeats_stop_being_tried() {
        let mut s = SharedValues::new(&DataType::LargeUtf8);
        for k in 0..3 {
            let page = arrow_array::LargeStringArray::from_iter_values((0..64).map(|i| format!("{k}-{i}"))).to_data();
            assert_eq!(s.code_page(&[page]), None);
        }
        assert_eq!(s.state, State::Off);
    }

    #[test]
    fn an_append_continues_the_stored_dictionary() {
        let stored = data(&[Some("p"), Some("q")]);
        let mut s = SharedValues::with_values(&stored).unwrap();
        assert!(!s.grew());
        assert_eq!(
            s.code_page(&[data(&[Some("q"), Some("p"), Some("q")])]),
            Some(vec![1, 0, 1])
        );
        assert!(!s.grew());
        assert_eq!(
            s.code_page(&[data(&[Some("r"), Some("r"), Some("p")])]),
            Some(vec![2, 2, 0])
        );
        assert!(s.grew());
    }

    #[test]
    fn all_null_pages_need_a_value_to_point_at() {
        let mut s = SharedValues::new(&DataType::Utf8);
        assert_eq!(s.code_page(&[data(&[None, None])]), None);
        let mut s = SharedValues::new(&DataType::Utf8);
        assert!(s.code_page(&[data(&[Some("a"), Some("a")])]).is_some());
        assert_eq!(s.code_page(&[data(&[None, None])]), Some(vec![0, 0]));
    }
}
