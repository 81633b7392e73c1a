//! Strings as codes into a table of up to 255 symbols of 1-8 bytes (the FSST idea; encoding
//! [`SYMBOLS`](super::encoding::SYMBOLS), table layout 5): each code byte stands for a symbol,
//! and code 255 for the byte after it. A page's string bytes are coded as one run (symbols may
//! cross from one value into the next) and decoded whole, then cut by the lengths, as plain
//! pages are.
//!
//! fsst-rs trains tables and codes with them; decoding is here, in safe code, since a reader
//! must take hostile tables and codes.

use arrow_data::ArrayData;
use arrow_schema::DataType;
use std::borrow::Cow;

/// The code that stands for the byte after it.
const ESCAPE: u8 = 255;
/// Most symbols a table holds (codes 0 to 254).
pub(super) const MAX_SYMBOLS: usize = 255;
/// Longest symbol, in bytes.
const MAX_SYMBOL_LEN: usize = 8;
/// Bytes of a page's strings the writer's trial codes to weigh symbols against the codec.
const TRIAL_BYTES: usize = 64 << 10;
/// A symbol table must leave at most this fraction of the codec's bytes in the trial (URLs:
/// about 0.87 of LZ4's in a 64 KiB window, 0.83 over whole pages).
const MAX_FRACTION_OF_CODEC: f64 = 0.9;
/// And code at least this many bytes per code byte: decoding runs a code at a time, so tables
/// of one-byte symbols (random letters) decode slower than LZ4 does.
const MIN_BYTES_PER_CODE: f64 = 2.0;

/// A symbol table trained on a column's values, for the pages of the column it fits.
pub struct SymbolTable(fsst::Compressor);

impl SymbolTable {
    /// A table trained on `values` (fsst-rs trains on a sample of about 16 KiB of them).
    pub fn train(values: &[&[u8]]) -> Self {
        SymbolTable(fsst::Compressor::train(&values.to_vec()))
    }

    /// Appends the table as a page stores it: the symbol count, each symbol's length, then
    /// the symbols' bytes.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        let lens = self.0.symbol_lengths();
        out.push(lens.len() as u8);
        out.extend_from_slice(lens);
        for (symbol, &len) in self.0.symbol_table().iter().zip(lens) {
            out.extend_from_slice(&symbol.to_u64().to_le_bytes()[..usize::from(len)]);
        }
    }

    /// `data` as codes.
    pub(super) fn compress(&self, data: &[u8]) -> Vec<u8> {
        self.0.compress(data)
    }

    /// A table trained on the values of `pieces`, arrays of a string or binary type `dt`.
    pub fn train_on(dt: &DataType, pieces: &[ArrayData]) -> Self {
        fn values<const OW: usize>(pieces: &[ArrayData]) -> Vec<&[u8]> {
            let mut values = Vec::with_capacity(pieces.iter().map(ArrayData::len).sum());
            for p in pieces {
                let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
                let data = p.buffers()[1].as_slice();
                for pair in offsets.as_chunks::<OW>().0.windows(2) {
                    values.push(&data[super::load::<OW>(&pair[0]) as usize..super::load::<OW>(&pair[1]) as usize]);
                }
            }
            values
        }
        match large_offsets(dt) {
            Some(false) => Self::train(&values::<4>(pieces)),
            Some(true) => Self::train(&values::<8>(pieces)),
            None => Self::train(&[]),
        }
    }

    /// Whether this table stores the strings of `pieces` (of type `dt`) in clearly fewer bytes
    /// than `codec` does, decoding as fast: trial compressions of one window of their bytes.
    pub fn beats_codec_on(&self, codec: kompakt::Codec, dt: &DataType, pieces: &[ArrayData]) -> bool {
        match large_offsets(dt) {
            Some(false) => self.beats(codec, &string_bytes::<4>(pieces)),
            Some(true) => self.beats(codec, &string_bytes::<8>(pieces)),
            None => false,
        }
    }

    fn beats(&self, codec: kompakt::Codec, data: &[u8]) -> bool {
        let start = data.len().saturating_sub(TRIAL_BYTES) / 2;
        let window = &data[start..data.len().min(start + TRIAL_BYTES)];
        if window.is_empty() {
            return false;
        }
        let coded = self.compress(window).len() as f64;
        let Some(codec_fraction) = codec_fraction(codec, window) else {
            return false;
        };
        let n = window.len() as f64;
        coded <= MAX_FRACTION_OF_CODEC * codec_fraction * n && n >= MIN_BYTES_PER_CODE * coded
    }
}

/// Whether a string or binary type has 8-byte offsets; `None` for other types.
fn large_offsets(dt: &DataType) -> Option<bool> {
    match dt {
        DataType::Utf8 | DataType::Binary => Some(false),
        DataType::LargeUtf8 | DataType::LargeBinary => Some(true),
        _ => None,
    }
}

/// The fraction of `window` that `codec` leaves (1 when it does not shrink it), with this
/// thread's compressor.
fn codec_fraction(codec: kompakt::Codec, window: &[u8]) -> Option<f64> {
    use kompakt::codec::Compressor;
    if matches!(codec, kompakt::Codec::None) {
        return Some(1.0);
    }
    thread_local! {
        static TRIAL: std::cell::RefCell<(Compressor, Vec<u8>)> = std::cell::RefCell::new((Compressor::new(), Vec::new()));
    }
    TRIAL.with(|t| {
        let (compressor, scratch) = &mut *t.borrow_mut();
        scratch.clear();
        match compressor.compress_append(codec, window, scratch, window.len()).ok()? {
            Some(n) => Some(n as f64 / window.len() as f64),
            None => Some(1.0),
        }
    })
}

/// The string bytes of `pieces` (arrays with `OW`-byte offsets), borrowed when there is one.
pub(super) fn string_bytes<const OW: usize>(pieces: &[ArrayData]) -> Cow<'_, [u8]> {
    let spans: Vec<&[u8]> = pieces
        .iter()
        .map(|p| {
            let offsets = &p.buffers()[0].as_slice()[p.offset() * OW..(p.offset() + p.len() + 1) * OW];
            let (offsets, _) = offsets.as_chunks::<OW>();
            let first = super::load::<OW>(&offsets[0]) as usize;
            let last = super::load::<OW>(&offsets[p.len()]) as usize;
            &p.buffers()[1].as_slice()[first..last]
        })
        .collect();
    match spans.as_slice() {
        [one] => Cow::Borrowed(one),
        _ => Cow::Owned(spans.concat()),
    }
}

/// A table as a page stores it, ready to decode with: unused codes have length 0.
pub(super) struct Symbols {
    symbols: [[u8; MAX_SYMBOL_LEN]; 256],
    lens: [u8; 256],
}

impl Symbols {
    /// The table of `lens` (one per symbol, each 1-8) and `bytes` (the symbols, back to back).
    pub(super) fn new(lens: &[u8], bytes: &[u8]) -> Result<Self, String> {
        if lens.len() > MAX_SYMBOLS {
            return Err(format!("{} symbols (at most {MAX_SYMBOLS})", lens.len()));
        }
        let mut table = Symbols {
            symbols: [[0; MAX_SYMBOL_LEN]; 256],
            lens: [0; 256],
        };
        let mut at = 0usize;
        for (code, &len) in lens.iter().enumerate() {
            let len = usize::from(len);
            if !(1..=MAX_SYMBOL_LEN).contains(&len) {
                return Err(format!("a symbol of {len} bytes (1 to {MAX_SYMBOL_LEN})"));
            }
            let symbol = bytes
                .get(at..at + len)
                .ok_or("the symbols end before their lengths do")?;
            table.symbols[code][..len].copy_from_slice(symbol);
            table.lens[code] = len as u8;
            at += len;
        }
        if at != bytes.len() {
            return Err("symbol lengths do not add up to the symbols".into());
        }
        Ok(table)
    }

    /// The `total` bytes `codes` stand for; an error unless they stand for exactly that many
    /// (or when the memory for them is not there).
    pub(super) fn expand(&self, codes: &[u8], total: usize) -> Result<Vec<u8>, ExpandError> {
        // Every code stands for at most 8 bytes: what the codes can claim is bounded by them.
        if total > codes.len().saturating_mul(MAX_SYMBOL_LEN) {
            return Err(ExpandError::Corrupt(format!(
                "{} code bytes cannot stand for {total} bytes",
                codes.len()
            )));
        }
        // Each symbol is copied 8 bytes wide (one move) and the position moves by its length;
        // the slack past `total` takes the last symbols' spare bytes and is cut off at the end.
        let len = total + BLOCK * MAX_SYMBOL_LEN;
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| ExpandError::NoMemory(len))?;
        out.resize(len, 0u8);
        self.expand_into(codes, total, &mut out).map_err(ExpandError::Corrupt)?;
        Ok(out)
    }

    /// The body of [`expand`](Self::expand): `out` has room for `total` bytes and the slack.
    fn expand_into(&self, codes: &[u8], total: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let too_many = || format!("the codes stand for more than {total} bytes");
        let (mut pos, mut i) = (0usize, 0usize);
        let mut unused = false;
        // Blocks of 8 codes without an escape, with room for 8 whole symbols checked once:
        // about 20 % faster than a code at a time (URLs: 2.8 against 2.3 GB/s).
        while let Some(block) = codes.get(i..i + BLOCK) {
            let block: &[u8; BLOCK] = block.try_into().expect("a block of codes");
            let dst = out.get_mut(pos..pos + BLOCK * MAX_SYMBOL_LEN).ok_or_else(too_many)?;
            if has_escape(block) {
                // One code at a time up to the escape and past it.
                let (read, wrote) = self.step(&codes[i..], dst, &mut unused)?;
                i += read;
                pos += wrote;
                continue;
            }
            let mut at = 0usize;
            for &code in block {
                dst[at..at + MAX_SYMBOL_LEN].copy_from_slice(&self.symbols[usize::from(code)]);
                let len = self.lens[usize::from(code)];
                unused |= len == 0;
                at += usize::from(len);
            }
            pos += at;
            i += BLOCK;
        }
        while i < codes.len() {
            let dst = out.get_mut(pos..pos + 2 * MAX_SYMBOL_LEN).ok_or_else(too_many)?;
            let (read, wrote) = self.step(&codes[i..], dst, &mut unused)?;
            i += read;
            pos += wrote;
        }
        if unused {
            return Err("a code names no symbol".into());
        }
        if pos != total {
            return Err(format!("the codes stand for {pos} bytes, not {total}"));
        }
        out.truncate(total);
        Ok(())
    }

    /// Decodes the first code of `codes` (and the byte it escapes) into `dst`, which has room
    /// for a symbol; returns the code bytes read and the bytes written.
    fn step(&self, codes: &[u8], dst: &mut [u8], unused: &mut bool) -> Result<(usize, usize), String> {
        let code = codes[0];
        if code == ESCAPE {
            dst[0] = *codes.get(1).ok_or("the codes end in an escape")?;
            return Ok((2, 1));
        }
        dst[..MAX_SYMBOL_LEN].copy_from_slice(&self.symbols[usize::from(code)]);
        let len = self.lens[usize::from(code)];
        *unused |= len == 0;
        Ok((1, usize::from(len)))
    }
}

/// Why symbol codes could not be expanded.
#[derive(Debug)]
pub(super) enum ExpandError {
    /// The codes do not stand for the bytes the page says.
    Corrupt(String),
    /// The allocator refused this many bytes for them.
    NoMemory(usize),
}

/// Codes decoded 8 at a time.
const BLOCK: usize = 8;

/// Whether a block of codes holds an escape: a zero byte in its complement (the usual
/// test for a zero byte in a word, exact on whether there is one).
fn has_escape(block: &[u8; BLOCK]) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let x = !u64::from_le_bytes(*block);
    x.wrapping_sub(ONES) & !x & HIGHS != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_found_in_any_block() {
        for at in 0..BLOCK {
            for other in [0u8, 1, 0x7f, 0x80, 0xfe] {
                let mut block = [other; BLOCK];
                assert!(!has_escape(&block));
                block[at] = ESCAPE;
                assert!(has_escape(&block), "{block:?}");
            }
        }
    }
}
