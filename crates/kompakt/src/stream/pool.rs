//! Process-wide pools of block encoders and decoders.
//!
//! A zstd context costs tens of microseconds to create and warm; a store writes and reads
//! thousands of tiny files a second. Writers and readers take encoders and decoders from
//! these pools and give them back after each batch, so contexts and scratch buffers are
//! made once per thread of work, not once per file.

use super::block::{BlockDecoder, BlockEncoder};
use std::sync::Mutex;

/// Pooled items beyond this count are dropped (more than any realistic thread count).
const MAX_POOLED: usize = 64;
/// Scratch buffers larger than this are not kept (files with huge blocks would pin them).
pub(crate) const MAX_KEPT_BUFFER: usize = 8 << 20;

static ENCODERS: Mutex<Vec<BlockEncoder>> = Mutex::new(Vec::new());
static DECODERS: Mutex<Vec<BlockDecoder>> = Mutex::new(Vec::new());

fn take<T: Default>(pool: &Mutex<Vec<T>>) -> T {
    pool.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default()
}

fn give<T>(pool: &Mutex<Vec<T>>, item: T) {
    if let Ok(mut p) = pool.lock() {
        if p.len() < MAX_POOLED {
            p.push(item);
        }
    }
}

pub(crate) fn take_encoder() -> BlockEncoder {
    take(&ENCODERS)
}

pub(crate) fn give_encoder(mut enc: BlockEncoder) {
    enc.trim(MAX_KEPT_BUFFER);
    give(&ENCODERS, enc);
}

pub(crate) fn take_decoder() -> BlockDecoder {
    take(&DECODERS)
}

/// A pooled decoder that may use `dictionaries`.
pub(crate) fn take_decoder_with(dictionaries: &crate::codec::Dictionaries) -> BlockDecoder {
    let mut dec = take_decoder();
    dec.set_dictionaries(dictionaries.clone());
    dec
}

pub(crate) fn give_decoder(mut dec: BlockDecoder) {
    dec.trim(MAX_KEPT_BUFFER);
    // The next reader may not use this one's dictionaries. (The decoder's zstd contexts keep
    // copies of the last three it loaded, so the next read with them starts warm.)
    dec.set_dictionaries(crate::codec::Dictionaries::none());
    give(&DECODERS, dec);
}

/// Drops the buffer's memory if it grew beyond `max` bytes.
pub(crate) fn trim_buffer(buf: &mut Vec<u8>, max: usize) {
    if buf.capacity() > max {
        *buf = Vec::new();
    }
}
