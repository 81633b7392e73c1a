//! Decoding a kompakt file front to back from a non-seekable input (a pipe), without its index.
//! Blocks are self-describing; the footer, once reached, is checked against what was seen.

use super::block::BlockDecoder;
use super::format::{
    BlockEntry, BlockHeader, FileHeader, Footer, Trailer, BLOCK_HEADER_LEN, BLOCK_TAG, FILE_HEADER_LEN,
    FOOTER_HEADER_LEN, FOOTER_TAG, TRAILER_LEN,
};
use super::parallel::ordered_map;
use super::parallel::resolve_threads;
use super::reader::ReadOptions;
use crate::codec::Dictionaries;
use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use std::collections::HashMap;
use std::io::{self, Read};

/// Reads a whole file from `input` in order, decoding blocks on several threads, and calls
/// `sink(stream, bytes)` for every block in file order. Returns the footer after checking it
/// against the blocks seen and checking that nothing follows the trailer.
///
/// Memory is bounded by the thread count times the block size, whatever the file size.
///
/// Each block is checksummed before `sink` sees it, but the stream ids and the order of blocks
/// are only checked against the footer at the end: a sink must not size anything by a stream
/// id, and must treat its output as unconfirmed until this function returns `Ok`.
pub fn decode_sequential<R: Read>(
    input: R,
    opts: &ReadOptions,
    sink: impl FnMut(u32, &[u8]) -> Result<()>,
) -> Result<Footer> {
    decode_sequential_with(input, opts, &Dictionaries::none(), sink)
}

/// [`decode_sequential`] with the dictionaries `zstd-dict` blocks may need.
pub fn decode_sequential_with<R: Read>(
    mut input: R,
    opts: &ReadOptions,
    dictionaries: &Dictionaries,
    mut sink: impl FnMut(u32, &[u8]) -> Result<()>,
) -> Result<Footer> {
    let mut head = [0u8; FILE_HEADER_LEN];
    read_exact(&mut input, &mut head, "file header")?;
    let file_header = FileHeader::decode(&head)?;
    let mut offset = FILE_HEADER_LEN as u64;
    let mut seen: Vec<BlockEntry> = Vec::new();
    let mut raw_offsets: HashMap<u32, u64> = HashMap::new();
    let mut footer_head: Option<[u8; FOOTER_HEADER_LEN]> = None;
    let threads = resolve_threads(opts.threads);
    let verify = opts.verify_checksums;
    ordered_map(
        threads,
        2 * threads,
        || {
            if footer_head.is_some() {
                return Ok(None);
            }
            let mut tag = [0u8; 1];
            read_exact(&mut input, &mut tag, "block or footer")?;
            match tag[0] {
                BLOCK_TAG => {
                    let mut h = [0u8; BLOCK_HEADER_LEN];
                    h[0] = BLOCK_TAG;
                    read_exact(&mut input, &mut h[1..], "block header")?;
                    let fields = BlockHeader::decode(&h, offset)?;
                    if !file_header.allows(fields.codec) {
                        return Err(Error::corrupt(
                            "block header",
                            offset,
                            "a zstd-dict block in a format 1 file (dictionaries came with format 2.0)",
                        ));
                    }
                    // The buffer grows with the bytes that arrive, so a header that merely
                    // claims 64 MiB in a short input costs nothing.
                    let stored = u64::from(fields.stored_len);
                    let mut payload = Vec::with_capacity(stored.min(1 << 20) as usize);
                    (&mut input).take(stored).read_to_end(&mut payload)?;
                    if payload.len() as u64 != stored {
                        return Err(Error::Truncated {
                            what: "block payload",
                            needed: stored,
                            available: payload.len() as u64,
                        });
                    }
                    let raw_offset = raw_offsets.entry(fields.stream).or_insert(0);
                    seen.push(BlockEntry {
                        file_offset: offset,
                        raw_offset: *raw_offset,
                        header: fields,
                    });
                    *raw_offset += u64::from(fields.raw_len);
                    let block_offset = offset;
                    offset += (BLOCK_HEADER_LEN + payload.len()) as u64;
                    Ok(Some((h, fields, payload, block_offset)))
                }
                FOOTER_TAG => {
                    let mut h = [0u8; FOOTER_HEADER_LEN];
                    h[0] = FOOTER_TAG;
                    read_exact(&mut input, &mut h[1..], "footer header")?;
                    footer_head = Some(h);
                    Ok(None)
                }
                other => Err(Error::corrupt(
                    "block header",
                    offset,
                    format!("tag is {other:#04x}, expected a block or the footer"),
                )),
            }
        },
        || {
            let mut dec = BlockDecoder::default();
            dec.set_dictionaries(dictionaries.clone());
            dec
        },
        |dec, (h, fields, payload, at): ([u8; BLOCK_HEADER_LEN], BlockHeader, Vec<u8>, u64)| {
            let mut out = vec![0u8; fields.raw_len as usize];
            dec.decode_into(&h, &fields, &payload, at, verify, &mut out)?;
            Ok((fields.stream, out))
        },
        |_| (),
        |(stream, out)| sink(stream, &out),
    )?;
    let head = footer_head.ok_or_else(|| Error::corrupt("file", offset, "no footer"))?;
    let footer_offset = offset;
    let body_len = Footer::body_len(&head, footer_offset)?;
    let mut footer = head.to_vec();
    // Grows with the bytes actually present, never to a size the input merely claims.
    let got = (&mut input).take(body_len).read_to_end(&mut footer)?;
    if got as u64 != body_len {
        return Err(Error::Truncated {
            what: "footer",
            needed: body_len,
            available: got as u64,
        });
    }
    let trailer_offset = footer_offset + footer.len() as u64;
    let mut tail = [0u8; TRAILER_LEN];
    read_exact(&mut input, &mut tail, "trailer")?;
    let trailer = Trailer::decode(&tail, trailer_offset)?;
    if trailer.footer_offset != footer_offset || xxh3_64(&footer) != trailer.footer_checksum {
        return Err(Error::ChecksumMismatch {
            what: "footer",
            offset: footer_offset,
        });
    }
    let footer = Footer::decode(&footer, footer_offset)?;
    if footer.blocks != seen {
        return Err(Error::corrupt(
            "footer",
            footer_offset,
            "block index disagrees with the blocks in the file",
        ));
    }
    let mut extra = [0u8; 1];
    if input.read(&mut extra)? != 0 {
        return Err(Error::corrupt(
            "file",
            trailer_offset + TRAILER_LEN as u64,
            "bytes after the trailer",
        ));
    }
    Ok(footer)
}

fn read_exact<R: Read>(input: &mut R, buf: &mut [u8], what: &'static str) -> Result<()> {
    let n = read_full(input, buf)?;
    if n < buf.len() {
        return Err(Error::Truncated {
            what,
            needed: buf.len() as u64,
            available: n as u64,
        });
    }
    Ok(())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
