//! What a decoding thread does with one block of a read: check its header against the index,
//! verify its checksum, and decode or copy it into place.

use super::blocks::read_block_at;
use crate::codec::CodecId;
use crate::error::{Error, Result};
use crate::filter::Stores;
use crate::stream::block::BlockDecoder;
use crate::stream::format::{verify_block, BlockEntry, BLOCK_HEADER_LEN};
use crate::stream::source::ReadAt;
use std::borrow::Cow;

pub(super) enum Job<'d, 's> {
    /// A compressed (or filtered) block to decode into `dst`, from `skip` bytes into the block.
    Decode {
        entry: BlockEntry,
        bytes: Cow<'s, [u8]>,
        skip: usize,
        dst: &'d mut [u8],
        stores: Stores,
    },
    /// A whole raw block of a file in memory, to copy into `dst`, a part of a read too large
    /// for the caches (see [`crate::copy`]).
    Copy {
        entry: BlockEntry,
        bytes: &'s [u8],
        dst: &'d mut [u8],
    },
    /// A raw block already read straight into `dst`; only its checksum is left to check.
    Check {
        entry: BlockEntry,
        header: [u8; BLOCK_HEADER_LEN],
        dst: &'d mut [u8],
    },
    /// A block for the worker to read from `source` itself, then decode as [`Job::Decode`]
    /// (or read straight into `dst` and check, when it is raw and wanted whole).
    Fetch {
        entry: BlockEntry,
        source: &'s dyn ReadAt,
        skip: usize,
        dst: &'d mut [u8],
        stores: Stores,
    },
}

pub(super) fn run_job(dec: &mut BlockDecoder, job: Job<'_, '_>, verify: bool) -> Result<()> {
    match job {
        Job::Copy { entry, bytes, dst } => {
            let (head, payload) = bytes.split_at(BLOCK_HEADER_LEN);
            let head: &[u8; BLOCK_HEADER_LEN] = head.try_into().expect("header length");
            check_header_matches(head, &entry)?;
            if verify {
                verify_block(head, payload, entry.file_offset)?;
            }
            if payload.len() != dst.len() {
                return Err(Error::corrupt(
                    "block",
                    entry.file_offset,
                    "raw block length differs from its declared size",
                ));
            }
            crate::copy::copy_uncached(dst, payload);
            Ok(())
        }
        Job::Check { entry, header, dst } => check_raw(&entry, &header, dst, verify),
        Job::Decode {
            entry,
            bytes,
            skip,
            dst,
            stores,
        } => decode_block(dec, &entry, &bytes, skip, dst, verify, stores),
        Job::Fetch {
            entry,
            source,
            skip,
            dst,
            stores,
        } => {
            if is_whole_raw(&entry, skip, dst.len()) {
                let mut header = [0u8; BLOCK_HEADER_LEN];
                read_block_at(source, &mut header, &entry, 0)?;
                read_block_at(source, dst, &entry, BLOCK_HEADER_LEN as u64)?;
                return check_raw(&entry, &header, dst, verify);
            }
            let mut bytes = dec.take_fetch_buffer();
            // Grows (and zero-fills) only past the largest block this thread has read.
            bytes.resize(BLOCK_HEADER_LEN + entry.header.stored_len as usize, 0);
            let result = read_block_at(source, &mut bytes, &entry, 0)
                .and_then(|()| decode_block(dec, &entry, &bytes, skip, dst, verify, stores));
            dec.give_fetch_buffer(bytes);
            result
        }
    }
}

/// Whether all of block `entry`, from `skip` on into `len` bytes, is wanted and stored raw:
/// it can then be read straight into place.
pub(super) fn is_whole_raw(entry: &BlockEntry, skip: usize, len: usize) -> bool {
    let header = &entry.header;
    skip == 0 && len == header.raw_len as usize && header.codec == CodecId::None && header.filters.is_none()
}

/// A raw block read into `dst`: its header must match the index, its checksum the bytes.
fn check_raw(entry: &BlockEntry, header: &[u8; BLOCK_HEADER_LEN], dst: &[u8], verify: bool) -> Result<()> {
    check_header_matches(header, entry)?;
    if verify {
        verify_block(header, dst, entry.file_offset)?;
    }
    Ok(())
}

/// Decodes block `entry` (`bytes`: its header and payload) into `dst`, from `skip` bytes in.
fn decode_block(
    dec: &mut BlockDecoder,
    entry: &BlockEntry,
    bytes: &[u8],
    skip: usize,
    dst: &mut [u8],
    verify: bool,
    stores: Stores,
) -> Result<()> {
    let (head, payload) = bytes.split_at(BLOCK_HEADER_LEN);
    let head: &[u8; BLOCK_HEADER_LEN] = head.try_into().expect("header length");
    check_header_matches(head, entry)?;
    if skip == 0 && dst.len() == entry.header.raw_len as usize {
        let offset = entry.file_offset;
        dec.decode_to(head, &entry.header, payload, offset, verify, dst, stores)
    } else {
        dec.decode_part(head, &entry.header, payload, entry.file_offset, verify, skip, dst)
    }
}

/// The block header in the file must say what the footer's index says about it.
fn check_header_matches(head: &[u8; BLOCK_HEADER_LEN], entry: &BlockEntry) -> Result<()> {
    let found = crate::stream::format::BlockHeader::decode(head, entry.file_offset)?;
    if found != entry.header {
        return Err(Error::corrupt(
            "block header",
            entry.file_offset,
            "disagrees with the footer's block index",
        ));
    }
    Ok(())
}
