//! The hook through which an output that knows its disk steers a [`Writer`](super::Writer),
//! block by block. The format crate only asks; the policy (how fast the disk is, how much
//! waits for it) lives with the files, in `kompakt-fs`.

use std::fmt::Debug;
use std::time::Duration;

/// Decides, block by block, whether a writer compresses a block or stores it raw
/// ([`Writer::adapt_to`](super::Writer::adapt_to)).
///
/// A writer hands its data to the compressor in batches (a large write, or a full staging
/// buffer) and asks before encoding each block, from whichever thread encodes it.
pub trait Pace: Send + Sync + Debug {
    /// How many of the first blocks of a batch of `batch_len` bytes, cut into blocks of
    /// `block_size` and encoded on `threads` threads, are *probes*: blocks for which
    /// [`compress_next`](Pace::compress_next) is asked with `probe` set.
    fn probe_blocks(&self, batch_len: usize, block_size: usize, threads: usize) -> usize;

    /// Whether the next block is compressed (`true`) or stored raw, asked as its encoding
    /// starts; `threads`: how many threads encode the current batch.
    fn compress_next(&self, probe: bool, threads: usize) -> bool;

    /// Compressing a block of `raw_len` bytes took one thread `took`.
    fn compressed(&self, raw_len: usize, took: Duration);
}
