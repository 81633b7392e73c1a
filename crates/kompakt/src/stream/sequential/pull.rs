//! A front-to-back decoder that is pulled one block at a time, and a `Read` over it.

use super::scan::{next_byte, BlockScanner};
use crate::codec::Dictionaries;
use crate::error::{Error, Result};
use crate::stream::block::BlockDecoder;
use crate::stream::format::verify_block;
use crate::stream::reader::ReadOptions;
use std::io::{self, Read};

enum State {
    /// Before the first file.
    Start,
    /// Inside a file, between blocks.
    InFile(BlockScanner),
    /// After a complete file's trailer.
    Between,
    /// The input ended after a complete file.
    Ended,
}

/// Decodes a single-stream kompakt file front to back, one block per call, from an input given
/// to each call (so the input may be something that exists only during a call, such as a JVM
/// stream reached through JNI). Every block is checksummed before its bytes are returned, and
/// the footer is checked against the blocks seen once it is reached.
///
/// With [`concatenated`](Self::concatenated), files that follow one another in the input are
/// decoded as one sequence of bytes (and an empty input as no bytes): what a shuffle's
/// concatenated segments need. Otherwise exactly one file is read, and bytes after its trailer
/// are an error.
///
/// Memory: one block's payload and one decoded block (at most 64 MiB each, and never more than
/// the bytes that arrived can decode to; with checksums verified, as by default, a block is
/// allocated for only after its checksum matched), reused from block to block, plus 32 bytes
/// per block of the file for the check against the footer (as [`decode_sequential`]'s).
/// Blocks are decoded on the calling thread.
///
/// [`decode_sequential`]: super::decode_sequential
///
/// ```
/// use kompakt::stream::{ReadOptions, SequentialDecoder};
/// let file = kompakt::compress(b"hello", &Default::default())?;
/// let mut decoder = SequentialDecoder::new(&ReadOptions::default(), Default::default());
/// let mut input = &file[..];
/// assert_eq!(decoder.next_block(&mut input)?, Some(&b"hello"[..]));
/// assert_eq!(decoder.next_block(&mut input)?, None);
/// # Ok::<(), kompakt::Error>(())
/// ```
pub struct SequentialDecoder {
    state: State,
    concatenated: bool,
    verify: bool,
    decoder: BlockDecoder,
    payload: Vec<u8>,
    block: Vec<u8>,
    failed: bool,
}

impl SequentialDecoder {
    /// A decoder with `opts`' checksum setting and the dictionaries `zstd-dict` blocks may need.
    pub fn new(opts: &ReadOptions, dictionaries: Dictionaries) -> Self {
        let mut decoder = BlockDecoder::default();
        decoder.set_dictionaries(dictionaries);
        SequentialDecoder {
            state: State::Start,
            concatenated: false,
            verify: opts.verify_checksums,
            decoder,
            payload: Vec::new(),
            block: Vec::new(),
            failed: false,
        }
    }

    /// Reads files that follow one another as one sequence of bytes.
    pub fn concatenated(mut self, yes: bool) -> Self {
        self.concatenated = yes;
        self
    }

    /// Decodes the next block of data and returns its bytes, or `None` once the input ended
    /// after a complete, checked file. After an error every call fails: the input's position
    /// is then unknown.
    pub fn next_block<R: Read + ?Sized>(&mut self, input: &mut R) -> Result<Option<&[u8]>> {
        if self.failed {
            return Err(Error::Usage(
                "this reader stopped at an error before; its input cannot be read further".into(),
            ));
        }
        match self.advance(input) {
            Ok(true) => Ok(Some(&self.block)),
            Ok(false) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// The bytes of the block the last [`next_block`](Self::next_block) returned.
    pub fn block(&self) -> &[u8] {
        &self.block
    }

    fn advance<R: Read + ?Sized>(&mut self, input: &mut R) -> Result<bool> {
        loop {
            match &mut self.state {
                State::Ended => return Ok(false),
                State::Start if self.concatenated => match next_byte(input)? {
                    None => self.state = State::Ended,
                    Some(first) => self.state = State::InFile(BlockScanner::start(input, Some(first), false)?),
                },
                State::Start => self.state = State::InFile(BlockScanner::start(input, None, true)?),
                State::Between => match next_byte(input)? {
                    None => self.state = State::Ended,
                    Some(first) if self.concatenated => {
                        self.state = State::InFile(BlockScanner::start(input, Some(first), false)?)
                    }
                    Some(_) => return Err(Error::corrupt("file", 0, "bytes after the trailer")),
                },
                State::InFile(scanner) => match scanner.next_block(input, &mut self.payload)? {
                    Some(b) => {
                        // The checksum first: a damaged header's raw_len allocates nothing.
                        if self.verify {
                            verify_block(&b.header, &self.payload, b.offset)?;
                        }
                        self.block.resize(b.fields.raw_len as usize, 0);
                        self.decoder.decode_into(
                            &b.header,
                            &b.fields,
                            &self.payload,
                            b.offset,
                            false,
                            &mut self.block,
                        )?;
                        // After decoding, so a damaged stream id is the checksum's error.
                        if b.fields.stream != 0 {
                            return Err(Error::Usage(
                                "this file has more than one stream (a saved object or a table?): read it by \
                                 random access (kompakt::Reader, KompaktFile)"
                                    .into(),
                            ));
                        }
                        return Ok(true);
                    }
                    None => {
                        let State::InFile(scanner) = std::mem::replace(&mut self.state, State::Between) else {
                            unreachable!("matched InFile above")
                        };
                        scanner.finish(input)?;
                    }
                },
            }
        }
    }
}

/// A [`SequentialDecoder`] over an input it owns, as a `Read` of the decoded bytes.
pub struct SequentialReader<R> {
    decoder: SequentialDecoder,
    input: R,
    pos: usize,
}

impl<R: Read> SequentialReader<R> {
    /// Reads the single-stream file (or with a concatenated decoder, files) in `input`.
    pub fn new(input: R, decoder: SequentialDecoder) -> Self {
        SequentialReader { decoder, input, pos: 0 }
    }

    /// The input, positioned where decoding stopped.
    pub fn into_inner(self) -> R {
        self.input
    }
}

impl<R: Read> Read for SequentialReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.pos == self.decoder.block().len() {
            self.pos = 0;
            if self
                .decoder
                .next_block(&mut self.input)
                .map_err(io::Error::from)?
                .is_none()
            {
                self.decoder.block.clear();
                return Ok(0);
            }
        }
        let block = self.decoder.block();
        let n = buf.len().min(block.len() - self.pos);
        buf[..n].copy_from_slice(&block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{WriteOptions, Writer};
    use crate::{CodecSpec, ErrorKind};

    fn file(data: &[u8], block_size: usize) -> Vec<u8> {
        let opts = WriteOptions::default()
            .codec("lz4".parse::<CodecSpec>().unwrap())
            .block_size(block_size);
        crate::compress(data, &opts).unwrap()
    }

    fn read_all(input: &[u8], concatenated: bool) -> Result<Vec<u8>> {
        let decoder = SequentialDecoder::new(&ReadOptions::default(), Dictionaries::none()).concatenated(concatenated);
        let mut out = Vec::new();
        SequentialReader::new(input, decoder).read_to_end(&mut out)?;
        Ok(out)
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8 ^ (i >> 12) as u8).collect()
    }

    #[test]
    fn reads_what_was_written_block_by_block() {
        let d = data(300_000);
        let f = file(&d, 64 << 10);
        let mut decoder = SequentialDecoder::new(&ReadOptions::default(), Dictionaries::none());
        let mut input = &f[..];
        let mut sizes = Vec::new();
        let mut out = Vec::new();
        while let Some(block) = decoder.next_block(&mut input).unwrap() {
            sizes.push(block.len());
            out.extend_from_slice(block);
        }
        assert_eq!(out, d);
        assert_eq!(sizes, [65536, 65536, 65536, 65536, 37856]);
        assert_eq!(decoder.next_block(&mut input).unwrap(), None);
    }

    #[test]
    fn concatenated_files_read_as_one_and_only_when_asked() {
        let (a, b) = (data(100_000), b"tail".to_vec());
        let mut both = file(&a, 64 << 10);
        both.extend_from_slice(&file(&b, 64 << 10));
        both.extend_from_slice(&file(b"", 64 << 10));
        assert_eq!(read_all(&both, true).unwrap(), [a.clone(), b].concat());
        let e = read_all(&both, false).unwrap_err();
        assert!(e.to_string().contains("bytes after the trailer"), "{e}");
        assert_eq!(read_all(b"", true).unwrap(), b"");
        assert!(read_all(b"", false).is_err());
    }

    #[test]
    fn every_truncation_and_a_flipped_bit_are_errors() {
        let f = file(&data(70_000), 64 << 10);
        for cut in 0..f.len() {
            for concatenated in [false, true] {
                if cut == 0 && concatenated {
                    continue;
                }
                let e = read_all(&f[..cut], concatenated).expect_err("a truncated file");
                assert_eq!(e.kind(), ErrorKind::Corrupt, "cut at {cut}: {e}");
            }
        }
        // A payload byte, and the first block's stream id (which must not pass for a second
        // stream: the checksum finds it first).
        for at in [40, 20, 23] {
            let mut bad = f.clone();
            bad[at] ^= 1;
            assert_eq!(
                read_all(&bad, false).unwrap_err().kind(),
                ErrorKind::Corrupt,
                "byte {at}"
            );
        }
    }

    #[test]
    fn a_second_stream_is_refused_and_errors_stick() {
        let mut w = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
        let s0 = w.add_stream(None).unwrap();
        let s1 = w.add_stream(None).unwrap();
        w.write(s0, b"zero").unwrap();
        w.write(s1, b"one").unwrap();
        let f = w.finish().unwrap();
        let mut decoder = SequentialDecoder::new(&ReadOptions::default(), Dictionaries::none());
        let mut input = &f[..];
        assert_eq!(decoder.next_block(&mut input).unwrap(), Some(&b"zero"[..]));
        let e = decoder.next_block(&mut input).unwrap_err();
        assert!(e.to_string().contains("more than one stream"), "{e}");
        let again = decoder.next_block(&mut input).unwrap_err();
        assert!(again.to_string().contains("stopped at an error"), "{again}");
    }
}
