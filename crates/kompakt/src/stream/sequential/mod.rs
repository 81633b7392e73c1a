//! Decoding a kompakt file front to back from a non-seekable input (a pipe), without its index.
//! Blocks are self-describing; the footer, once reached, is checked against what was seen.
//!
//! Two shapes: [`decode_sequential`] pushes every block to a sink, decoding on several
//! threads; [`SequentialDecoder`] is pulled a block at a time, from an input passed to each
//! call (the JVM's input streams), and [`SequentialReader`] wraps it as a `Read`.

mod pull;
mod scan;

use super::block::BlockDecoder;
use super::format::{BlockHeader, Footer, BLOCK_HEADER_LEN};
use super::parallel::ordered_map;
use super::parallel::resolve_threads;
use super::reader::ReadOptions;
use crate::codec::Dictionaries;
use crate::error::{Error, Result};
use scan::{next_byte, BlockScanner};
use std::io::Read;

pub use pull::{SequentialDecoder, SequentialReader};
pub(crate) use scan::read_full;

/// Reads a whole file from `input` in order, decoding blocks on several threads, and calls
/// `sink(stream, bytes)` for every block in file order. Returns the footer after checking it
/// against the blocks seen and checking that nothing follows the trailer.
///
/// Memory is bounded by the thread count times the block size, plus the footer's check: 32
/// bytes per block seen (16 MB for a terabyte of 64 KiB blocks) and the footer itself.
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
    let mut scanner = BlockScanner::start(&mut input, None, true)?;
    let threads = resolve_threads(opts.threads);
    let verify = opts.verify_checksums;
    ordered_map(
        threads,
        2 * threads,
        || {
            let mut payload = Vec::new();
            Ok(scanner
                .next_block(&mut input, &mut payload)?
                .map(|b| (b.header, b.fields, payload, b.offset)))
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
    let (footer, end) = scanner.finish(&mut input)?;
    if next_byte(&mut input)?.is_some() {
        return Err(Error::corrupt("file", end, "bytes after the trailer"));
    }
    Ok(footer)
}
