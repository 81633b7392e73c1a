//! The primitives of the three encodings (integers, reals, strings, byte vectors), read as
//! R's `InInteger`, `InReal`, `InString` and `InWord` read them, counting every byte.

use crate::error::Error;
use crate::format::{CODESET_MAX, NA_INTEGER, WORD_MAX};
use std::io::{self, BufRead};

/// How a stream encodes its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `X`: binary, big-endian (`serialize()`'s default).
    Xdr,
    /// `B`: binary in the machine's byte order (`serialize(xdr = FALSE)`, `kpk_save()`).
    Native,
    /// `A`: text (`serialize(ascii = TRUE)`).
    Ascii,
}

/// The header of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub format: Format,
    pub version: i32,
    pub native_encoding: Option<String>,
}

/// C's `isspace` in the C locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

pub(crate) struct Input<R> {
    inner: R,
    offset: u64,
    format: Format,
}

impl<R: BufRead> Input<R> {
    pub fn new(inner: R) -> Self {
        Input {
            inner,
            offset: 0,
            format: Format::Xdr,
        }
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn buffered(&mut self) -> Result<&[u8], Error> {
        loop {
            match self.inner.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Io(e)),
            }
        }
        // Filled above; a second call returns the same buffer without reading.
        self.inner.fill_buf().map_err(Error::Io)
    }

    pub fn byte(&mut self) -> Result<u8, Error> {
        let offset = self.offset;
        let b = *self.buffered()?.first().ok_or(Error::Truncated { offset })?;
        self.inner.consume(1);
        self.offset += 1;
        Ok(b)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte()?;
        }
        Ok(out)
    }

    /// Passes over `n` bytes without keeping them.
    pub fn skip(&mut self, mut n: u64) -> Result<(), Error> {
        while n > 0 {
            let offset = self.offset;
            let available = self.buffered()?.len();
            if available == 0 {
                return Err(Error::Truncated { offset });
            }
            let take = available.min(usize::try_from(n).unwrap_or(usize::MAX));
            self.inner.consume(take);
            self.offset += take as u64;
            n -= take as u64;
        }
        Ok(())
    }

    /// `n` items of `size` bytes each.
    fn skip_items(&mut self, n: u64, size: u64) -> Result<(), Error> {
        let offset = self.offset;
        let total = n
            .checked_mul(size)
            .ok_or_else(|| Error::malformed("a vector longer than any stream", offset))?;
        self.skip(total)
    }

    /// An ascii word (R's `InWord`): leading white space skipped, then up to 127
    /// non-space characters and the white space that ends them. Bytes outside ASCII are
    /// refused: whether they are white space depends on R's locale.
    fn word<'b>(&mut self, buf: &'b mut [u8; WORD_MAX]) -> Result<&'b [u8], Error> {
        let mut c = loop {
            let offset = self.offset;
            let c = self.byte()?;
            if c >= 0x80 {
                return Err(Error::malformed(
                    "a byte outside ASCII between values of an ascii stream",
                    offset,
                ));
            }
            if !is_space(c) {
                break c;
            }
        };
        let start = self.offset - 1;
        let mut n = 0;
        loop {
            if n == WORD_MAX {
                return Err(Error::malformed(
                    "a word of more than 127 characters in an ascii stream",
                    start,
                ));
            }
            buf[n] = c;
            n += 1;
            let offset = self.offset;
            c = self.byte()?;
            if is_space(c) {
                return Ok(&buf[..n]);
            }
            if c >= 0x80 {
                return Err(Error::malformed(
                    "a byte outside ASCII in a number of an ascii stream",
                    offset,
                ));
            }
        }
    }

    pub fn int(&mut self) -> Result<i32, Error> {
        match self.format {
            Format::Xdr => Ok(i32::from_be_bytes(self.array()?)),
            Format::Native => Ok(i32::from_ne_bytes(self.array()?)),
            Format::Ascii => {
                let offset = self.offset;
                let mut buf = [0u8; WORD_MAX];
                let word = self.word(&mut buf)?;
                if word == b"NA" {
                    return Ok(NA_INTEGER);
                }
                std::str::from_utf8(word)
                    .ok()
                    .and_then(|w| w.parse::<i32>().ok())
                    .ok_or_else(|| Error::malformed("a word that is not an integer where R reads one", offset))
            }
        }
    }

    /// A real, as a value (`NA` is a NaN).
    pub fn real(&mut self) -> Result<f64, Error> {
        match self.format {
            Format::Xdr => Ok(f64::from_be_bytes(self.array()?)),
            Format::Native => Ok(f64::from_ne_bytes(self.array()?)),
            Format::Ascii => {
                let offset = self.offset;
                let mut buf = [0u8; WORD_MAX];
                let word = self.word(&mut buf)?;
                match word {
                    b"NA" | b"NaN" => Ok(f64::NAN),
                    b"Inf" => Ok(f64::INFINITY),
                    b"-Inf" => Ok(f64::NEG_INFINITY),
                    _ => std::str::from_utf8(word)
                        .ok()
                        .and_then(|w| w.parse::<f64>().ok())
                        .ok_or_else(|| Error::malformed("a word that is not a number where R reads one", offset)),
                }
            }
        }
    }

    pub fn ints(&mut self, n: u64) -> Result<(), Error> {
        match self.format {
            Format::Ascii => (0..n).try_for_each(|_| self.int().map(drop)),
            _ => self.skip_items(n, 4),
        }
    }

    pub fn reals(&mut self, n: u64) -> Result<(), Error> {
        match self.format {
            Format::Ascii => (0..n).try_for_each(|_| self.real().map(drop)),
            _ => self.skip_items(n, 8),
        }
    }

    pub fn complexes(&mut self, n: u64) -> Result<(), Error> {
        let offset = self.offset;
        let reals = n
            .checked_mul(2)
            .ok_or_else(|| Error::malformed("a vector longer than any stream", offset))?;
        self.reals(reals)
    }

    /// A raw vector's bytes: in ascii one word of one or two hex digits each.
    pub fn raw_bytes(&mut self, n: u64) -> Result<(), Error> {
        match self.format {
            Format::Ascii => (0..n).try_for_each(|_| {
                let offset = self.offset;
                let mut buf = [0u8; WORD_MAX];
                let word = self.word(&mut buf)?;
                if (1..=2).contains(&word.len()) && word.iter().all(u8::is_ascii_hexdigit) {
                    Ok(())
                } else {
                    Err(Error::malformed(
                        "a word that is not a hex byte in a raw vector",
                        offset,
                    ))
                }
            }),
            _ => self.skip(n),
        }
    }

    /// The `len` bytes of a string (R's `InString`); with `keep`, up to `max_keep` of them
    /// are appended to it.
    pub fn string(&mut self, len: usize, mut keep: Option<&mut Vec<u8>>, max_keep: usize) -> Result<(), Error> {
        if self.format != Format::Ascii {
            let kept = match keep.as_deref_mut() {
                Some(out) => {
                    let n = len.min(max_keep);
                    for _ in 0..n {
                        out.push(self.byte()?);
                    }
                    n
                }
                None => 0,
            };
            return self.skip((len - kept) as u64);
        }
        if len == 0 {
            return Ok(());
        }
        // R reads an ascii string through a one-character push-back buffer of its own: the
        // character after an octal escape is read and pushed back, and when the escape ends
        // the string that character is dropped with the buffer. So it is here.
        let mut pending = loop {
            let offset = self.offset;
            let c = self.byte()?;
            if c >= 0x80 {
                return Err(Error::malformed(
                    "a byte outside ASCII before a string of an ascii stream",
                    offset,
                ));
            }
            if !is_space(c) {
                break Some(c);
            }
        };
        let mut kept = 0;
        for _ in 0..len {
            let c = match pending.take() {
                Some(c) => c,
                None => self.byte()?,
            };
            let out = if c == b'\\' {
                let e = self.byte()?;
                match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'v' => 0x0b,
                    b'b' => 0x08,
                    b'r' => b'\r',
                    b'f' => 0x0c,
                    b'a' => 0x07,
                    b'\\' => b'\\',
                    b'?' => b'?',
                    b'\'' => b'\'',
                    b'"' => b'"',
                    b'0'..=b'7' => {
                        let (mut d, mut digits, mut c) = (0u32, 0, e);
                        while (b'0'..=b'7').contains(&c) && digits < 3 {
                            d = d * 8 + u32::from(c - b'0');
                            c = self.byte()?;
                            digits += 1;
                        }
                        pending = Some(c);
                        d as u8 // C's (char) cast: the low byte
                    }
                    other => other,
                }
            } else {
                c
            };
            if let Some(out_buf) = keep.as_deref_mut() {
                if kept < max_keep {
                    out_buf.push(out);
                    kept += 1;
                }
            }
        }
        Ok(())
    }

    /// The format line and header (R's `InFormat` and the start of `R_Unserialize`).
    pub fn header(&mut self) -> Result<Header, Error> {
        let [a, b] = self.array::<2>()?;
        self.format = match (a, b) {
            (b'A', _) => Format::Ascii,
            (b'B', _) => Format::Native,
            (b'X', _) => Format::Xdr,
            (b'\n', b'A') => {
                self.byte()?;
                Format::Ascii
            }
            _ => {
                return Err(Error::malformed(
                    format!("it starts with bytes {a:#04x} {b:#04x}, not a serialization format (X, B or A)"),
                    0,
                ))
            }
        };
        let offset = self.offset;
        let version = self.int()?;
        let _writer_version = self.int()?;
        let _min_reader_version = self.int()?;
        let native_encoding = match version {
            2 => None,
            3 => {
                let at = self.offset;
                let n = self.int()?;
                if !(0..=CODESET_MAX).contains(&n) {
                    return Err(Error::malformed(format!("an encoding name of {n} bytes"), at));
                }
                let mut name = Vec::new();
                self.string(n as usize, Some(&mut name), n as usize)?;
                Some(String::from_utf8_lossy(&name).into_owned())
            }
            v => {
                return Err(Error::malformed(
                    format!("format version {v} (R reads 2 and 3)"),
                    offset,
                ))
            }
        };
        Ok(Header {
            format: self.format,
            version,
            native_encoding,
        })
    }
}
