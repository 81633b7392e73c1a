//! Pacing the compressor by the disk: a [`DiskPace`] tells a kompakt [`Writer`] to store a
//! block raw when the disk has caught up and would otherwise wait for the compressor
//! (`zstd --adapt`'s idea: compression never makes writing slower than the disk), and
//! [`writer`] builds a writer that adapts to its output whenever the output is a paced file.

use crate::atomic::AtomicFile;
use crate::writeback::{WritebackFile, WritebackProgress, PACED_FIRST_STEP};
use kompakt::stream::{InMemory, Pace, WriteOptions, Writer};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// An output a writer can adapt to: one that may be a paced file, reporting its write-back.
pub trait PacedOutput: Write {
    /// The write-back progress of the file behind this output, when it is paced.
    fn progress(&self) -> Option<Arc<WritebackProgress>>;
}

impl PacedOutput for WritebackFile {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        self.writeback.progress.clone()
    }
}

impl PacedOutput for AtomicFile {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        self.writeback_file().and_then(PacedOutput::progress)
    }
}

impl<W: PacedOutput + ?Sized> PacedOutput for &mut W {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        (**self).progress()
    }
}

/// The one way to build a kompakt writer into a file: a writer into `out` that adapts to the
/// disk when `out` is a paced file (made with `AtomicFile::with_pacing(path, true)`, a paced
/// [`WritebackFile`], or an output holding one), and writes as usual otherwise. `in_memory`:
/// see [`Writer::with_memory`].
pub fn writer<W: PacedOutput>(
    out: W,
    opts: WriteOptions,
    in_memory: Option<InMemory<W>>,
) -> kompakt::Result<Writer<W>> {
    writer_with_dictionary(out, opts, in_memory, None)
}

/// [`writer`], whose zstd blocks use `dictionary` when there is one
/// ([`Writer::with_dictionary`]).
pub fn writer_with_dictionary<W: PacedOutput>(
    out: W,
    opts: WriteOptions,
    in_memory: Option<InMemory<W>>,
    dictionary: Option<kompakt::codec::Dictionary>,
) -> kompakt::Result<Writer<W>> {
    let progress = out.progress();
    let mut writer = Writer::with_parts(out, opts, in_memory, dictionary)?;
    if let Some(progress) = progress {
        writer.adapt_to(Arc::new(DiskPace::new(progress)));
    }
    Ok(writer)
}

/// The pacing of one writer by the write-back of the file it writes to.
///
/// A block whose codec would compress it is stored raw when the file's write-back reports
/// that the disk has caught up (less than [`ADAPT_AHEAD`] of its work waiting), and
/// compressed as usual otherwise. Until the write-back starts (after the first
/// [`PACED_FIRST_STEP`] bytes) every block is compressed, except in a batch of 4 MiB or more
/// handed to the compressor (a large write, or a full staging buffer), which stores its first
/// blocks (those in flight, and the write-back's first step) raw until the write-back has
/// started. A disk slower than the writer's threads compress (both measured) gets every block
/// compressed, whatever its backlog.
///
/// On a fast disk with few cores more blocks are stored raw; on a slow disk nearly all are
/// compressed (the probe blocks, and up to [`ADAPT_MIN_BACKLOG`] while the disk is first
/// measured, go raw; a disk an earlier file in this process measured is known at once).
/// Only Linux reports progress; elsewhere the write-back never starts and every block is
/// compressed. A file system where `sync_file_range` does nothing (tmpfs) looks like an
/// infinitely fast disk: most blocks are then stored raw.
#[derive(Debug)]
pub struct DiskPace {
    progress: Arc<WritebackProgress>,
    /// How fast the writer's threads compress, measured on the blocks it compressed.
    compressor: CompressorSpeed,
}

impl DiskPace {
    /// Paces a writer by `progress`, which must be the one of the file the writer writes to.
    pub fn new(progress: Arc<WritebackProgress>) -> DiskPace {
        DiskPace {
            progress,
            compressor: CompressorSpeed::default(),
        }
    }
}

impl Pace for DiskPace {
    /// A large write to an adaptive writer that knows nothing of the disk yet stores its
    /// first blocks raw until the write-back has started: written at once, they start it,
    /// and its timed steps then steer the rest. Compressing blind would make a fast disk
    /// wait: in a fresh process the first two zstd:1 blocks took 14 ms on 2 cores, and the
    /// busy cores delayed the write-back thread's start by as much again. The probe ends
    /// once the blocks in flight and the write-back's first step have been handed out: by
    /// then a write-back that has still not started never will (it could not get a thread),
    /// and the rest is compressed. A disk an earlier file found slow needs no probe:
    /// compressing cannot make it wait.
    fn probe_blocks(&self, batch_len: usize, block_size: usize, threads: usize) -> usize {
        let probing = cfg!(target_os = "linux")
            && self.progress.backlog().is_none()
            && !known_slow(&self.progress)
            && batch_len >= ADAPT_PROBE_MIN;
        if !probing {
            return 0;
        }
        2 * threads + PACED_FIRST_STEP.div_ceil(block_size as u64) as usize
    }

    fn compress_next(&self, probe: bool, threads: usize) -> bool {
        compress_next(Some(&self.progress), probe, self.compressor.of(threads))
    }

    fn compressed(&self, raw_len: usize, took: Duration) {
        self.compressor.add(raw_len, took);
    }
}

/// An adaptive writer ([`DiskPace`]) compresses the next block while the bytes that
/// wait for the disk would keep it busy this long at its measured speed, and stores the block
/// raw otherwise.
///
/// Why a backlog: while the disk is busy with earlier bytes, compressing costs no time; once it
/// has caught up, it waits for the compressor, and a raw block (a copy) is what feeds it
/// fastest. Holding the backlog near this level keeps the disk busy and spends on compression
/// the CPU time the disk leaves. It must cover the pipeline's lag: a block chosen raw reaches
/// the disk only after the compressed blocks in flight before it, about 2 x threads blocks
/// (4-7 ms for zstd:1 on 1 MiB blocks on the 2-core development VM), with a margin, since
/// feeding the disk takes CPU time too (the copy into the page cache, the content hash).
/// Measured there, one 80 MB array set with zstd:1 in a fresh process: a fixed backlog of
/// 2 MiB took 112 ms, 8 MiB 60 ms, 16-32 MiB 54 ms; 10 ms of the measured speed (about
/// 2.5 GB/s) 46-62 ms, 20 ms 47-55 ms, against 45-47 ms with codec `none`.
pub const ADAPT_AHEAD: Duration = Duration::from_millis(20);

/// The backlog an adaptive writer keeps before it knows the disk's speed (the first
/// write-back step has not been timed, and no earlier file on the disk was).
pub const ADAPT_MIN_BACKLOG: u64 = 4 << 20;

/// The least backlog it keeps once the speed is known: one block. Why not
/// [`ADAPT_MIN_BACKLOG`]: on a disk of 20 MB/s, 4 MiB is 200 ms of its work, and an 8 MB value
/// never piled that much up, so it went almost all raw (380 ms a set, against 100 ms for
/// zstd:1, on a throttled loop device).
const ADAPT_LEAST_BACKLOG: u64 = 1 << 20;

/// Writes at least this large to an adaptive writer that has not started its write-back store
/// their first blocks raw until it starts (see [`DiskPace::probe_blocks`]). On the 2-core development VM
/// an 8 MB array's set took 17-25 ms with 8 MiB here (it compressed its first four blocks
/// blind), 9-16 ms with 4 MiB; `none` took 8-10 ms. On a slow disk the 4 MiB backlog floor
/// stores about as much of such a value raw either way.
const ADAPT_PROBE_MIN: usize = 4 << 20;

/// The most: a disk that seems infinitely fast (a RAM disk) must not hold back a whole file.
const ADAPT_MAX_BACKLOG: u64 = 64 << 20;

/// Whether an earlier paced file on this disk found it slow: [`ADAPT_AHEAD`] of its speed is
/// less than [`ADAPT_MIN_BACKLOG`].
fn known_slow(pace: &WritebackProgress) -> bool {
    pace.remembered_rate()
        .is_some_and(|rate| rate * ADAPT_AHEAD.as_secs_f64() < ADAPT_MIN_BACKLOG as f64)
}

/// The backlog below which an adaptive writer stores blocks raw: [`ADAPT_AHEAD`] of the disk's
/// speed, within [`ADAPT_LEAST_BACKLOG`]..=64 MiB; [`ADAPT_MIN_BACKLOG`] while it is unknown.
fn adapt_backlog(pace: Option<&WritebackProgress>) -> u64 {
    match pace.and_then(WritebackProgress::disk_rate) {
        None => ADAPT_MIN_BACKLOG,
        Some(rate) => ((rate * ADAPT_AHEAD.as_secs_f64()) as u64).clamp(ADAPT_LEAST_BACKLOG, ADAPT_MAX_BACKLOG),
    }
}

/// Raw bytes an adaptive writer compressed, and the time one thread took for them.
#[derive(Debug, Default)]
struct CompressorSpeed(std::sync::Mutex<(u64, u64)>);

impl CompressorSpeed {
    fn add(&self, bytes: usize, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1);
        let mut sums = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sums.0 = sums.0.saturating_add(bytes as u64);
        sums.1 = sums.1.saturating_add(nanos);
    }

    /// Raw bytes per second of `threads` threads compressing at once; `None` before the
    /// first compressed block.
    fn of(&self, threads: usize) -> Option<f64> {
        let (bytes, nanos) = *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        (nanos > 0).then(|| bytes as f64 * 1e9 / nanos as f64 * threads as f64)
    }
}

/// Whether an adaptive writer compresses its next block (see [`ADAPT_AHEAD`]); always, for
/// a writer that does not adapt. `compressor`: how fast the writer's threads compress
/// together, once measured.
fn compress_next(pace: Option<&WritebackProgress>, probe: bool, compressor: Option<f64>) -> bool {
    match pace.map(WritebackProgress::backlog) {
        None => true,
        // Before the write-back starts (a small file, or the first bytes of a large one)
        // nothing is known about the disk: compress, as a writer that does not adapt would,
        // unless the block is one of a large write's first, which start the write-back.
        Some(None) => !probe,
        // A disk slower than the compressor is the bottleneck even when it has caught up:
        // the block it waits for a little longer costs it a fraction of the raw block's time.
        // (On a 20 MB/s disk the backlog was often under one block, and an 8 MB value went
        // 30 % raw.)
        Some(Some(backlog)) => {
            let disk = pace.and_then(WritebackProgress::disk_rate);
            let outpaced = matches!((disk, compressor), (Some(d), Some(c)) if d < c);
            outpaced || backlog >= adapt_backlog(pace)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kompakt::codec::{Codec, CodecId, CodecSpec};
    use kompakt::stream::{ContentHash, ReadOptions, Reader};
    use std::io::Cursor;

    /// Writes 6 blocks of compressible data, adapting to `progress` when given; returns the
    /// file, its content hash and the codec of each block.
    fn write_paced(progress: Option<WritebackProgress>, threads: usize) -> (Vec<u8>, ContentHash, Vec<CodecId>, u64) {
        let data: Vec<u8> = (0..6u32 << 16).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let opts = WriteOptions::default()
            .codec(CodecSpec::Fixed(Codec::Zstd { level: 1 }))
            .block_size(1 << 20)
            .threads(threads);
        let mut w = Writer::new(Vec::new(), opts).unwrap();
        if let Some(p) = progress {
            w.adapt_to(Arc::new(DiskPace::new(Arc::new(p))));
        }
        w.hash_content().unwrap();
        let s = w.add_stream(None).unwrap();
        w.write(s, &data).unwrap();
        w.finish_stream(s).unwrap(); // small writes are staged: this encodes them
        let paced_raw = w.paced_raw_blocks();
        let (file, hash) = w.finish_hashed().unwrap();
        let mut r = Reader::new(Cursor::new(file.clone()), ReadOptions::default()).unwrap();
        assert_eq!(r.read_stream(0).unwrap(), data);
        let codecs = r.blocks().iter().map(|b| b.header.codec).collect();
        (file, hash.unwrap(), codecs, paced_raw)
    }

    #[test]
    fn an_adaptive_writer_stores_raw_only_while_the_disk_waits() {
        const MS: u64 = 1_000_000; // nanoseconds
        let (plain, hash, codecs, _) = write_paced(None, 2);
        assert!(codecs.iter().all(|&c| c == CodecId::Zstd), "{codecs:?}");
        for threads in [1, 2] {
            // Not started yet: nothing is known, so every block is compressed as usual.
            let (file, h, _, paced) = write_paced(Some(WritebackProgress::simulated(None)), threads);
            assert_eq!((file == plain, h, paced), (true, hash, 0), "{threads} threads");
            // Started, no step timed yet: the least backlog decides (4 MiB).
            let untimed = WritebackProgress::simulated(Some((8 << 20, 0, 0)));
            let (file, _, _, paced) = write_paced(Some(untimed), threads);
            assert_eq!((file == plain, paced), (true, 0));
            let untimed = WritebackProgress::simulated(Some((2 << 20, 0, 0)));
            let (_, _, codecs, paced) = write_paced(Some(untimed), threads);
            assert_eq!(paced, codecs.len() as u64);
            // The disk has caught up: it waits for us, so blocks go out raw.
            let idle = WritebackProgress::simulated(Some((64 << 20, 64 << 20, 64 * MS)));
            let (file, h, codecs, paced) = write_paced(Some(idle), threads);
            assert!(codecs.iter().all(|&c| c == CodecId::None), "{codecs:?}");
            assert_eq!(paced, codecs.len() as u64);
            assert!(file.len() > plain.len());
            assert_eq!(h, hash, "the content hash does not depend on the choice");
            // Far behind (1 GiB waiting at about 1 GB/s): compressing costs no time.
            let busy = WritebackProgress::simulated(Some((1 << 30, 1 << 20, MS)));
            let (file, h, _, paced) = write_paced(Some(busy), threads);
            assert_eq!((file == plain, h, paced), (true, hash, 0));
        }
    }

    #[test]
    fn a_large_first_write_stores_raw_until_the_write_back_starts() {
        let data: Vec<u8> = (0..10u32 << 18).flat_map(|i| (i / 7).to_le_bytes()).collect();
        for (threads, progress) in [
            (1, Some(WritebackProgress::simulated(None))),
            (2, Some(WritebackProgress::simulated(None))),
            (2, None),
        ] {
            let adapts = progress.is_some();
            let mut w = Writer::new(Vec::new(), WriteOptions::default().threads(threads)).unwrap();
            if let Some(p) = progress {
                w.adapt_to(Arc::new(DiskPace::new(Arc::new(p))));
            }
            let s = w.add_stream(None).unwrap();
            w.write(s, &data).unwrap();
            // A small write does not probe (in a real file the probe has started the
            // write-back by now; the simulated one never starts).
            w.write(s, &data[..1 << 20]).unwrap();
            // The simulated write-back never starts: the blocks in flight (2 per thread) and
            // the first write-back step (one 1 MiB block) probe, and the rest is compressed.
            // Elsewhere than on Linux nothing probes.
            let probes = if adapts && cfg!(target_os = "linux") {
                2 * threads + 1
            } else {
                0
            };
            assert_eq!(w.paced_raw_blocks(), probes as u64, "{threads} threads");
            let file = w.finish().unwrap();
            let r = Reader::new(Cursor::new(file), ReadOptions::default()).unwrap();
            let codecs: Vec<_> = r.blocks().iter().map(|b| b.header.codec).collect();
            assert!(codecs[..probes].iter().all(|&c| c == CodecId::None), "{codecs:?}");
            assert!(codecs[probes..].iter().all(|&c| c != CodecId::None), "{codecs:?}");
        }
    }

    #[test]
    fn a_disk_known_to_be_slow_is_not_probed() {
        let data: Vec<u8> = (0..10u32 << 18).flat_map(|i| (i / 7).to_le_bytes()).collect();
        for (rate, probes) in [(20e6, 0), (2e9, 5)] {
            let progress = WritebackProgress::simulated(None).remembering(rate);
            let mut w = Writer::new(Vec::new(), WriteOptions::default().threads(2)).unwrap();
            w.adapt_to(Arc::new(DiskPace::new(Arc::new(progress))));
            let s = w.add_stream(None).unwrap();
            w.write(s, &data).unwrap();
            let expected = if cfg!(target_os = "linux") { probes } else { 0 };
            assert_eq!(w.paced_raw_blocks(), expected, "remembered {rate} B/s");
        }
    }

    #[test]
    fn a_disk_slower_than_the_compressor_gets_every_block_compressed() {
        // 20 MB/s, caught up (nothing waiting): raw, unless the compressor is known to be faster.
        let caught_up = WritebackProgress::simulated(Some((20 << 20, 20 << 20, 1_000_000_000)));
        assert!(
            !compress_next(Some(&caught_up), false, None),
            "compressor not measured yet"
        );
        assert!(
            compress_next(Some(&caught_up), false, Some(400e6)),
            "zstd:1 on a thread or two"
        );
        assert!(
            !compress_next(Some(&caught_up), false, Some(10e6)),
            "zstd:19 does not keep up"
        );
        // A fast disk is not outpaced by zstd:1.
        let fast = WritebackProgress::simulated(Some((2000 << 20, 2000 << 20, 1_000_000_000)));
        assert!(!compress_next(Some(&fast), false, Some(800e6)));
        let speed = CompressorSpeed::default();
        assert_eq!(speed.of(2), None);
        speed.add(1 << 20, std::time::Duration::from_millis(2));
        speed.add(1 << 20, std::time::Duration::from_millis(2));
        let two = speed.of(2).unwrap();
        assert!((two - 2.0 * (1u64 << 20) as f64 / 0.002).abs() < 1.0, "{two}");
    }

    #[test]
    fn the_backlog_kept_follows_the_disk_speed_within_bounds() {
        let at = |bytes_per_s: u64| {
            let p = WritebackProgress::simulated(Some((0, bytes_per_s, 1_000_000_000)));
            adapt_backlog(Some(&p))
        };
        assert_eq!(adapt_backlog(None), ADAPT_MIN_BACKLOG, "unknown speed");
        assert_eq!(at(100 << 20), 2 << 20, "20 ms of 100 MiB/s");
        assert_eq!(at(20 << 20), ADAPT_LEAST_BACKLOG, "a very slow disk: one block");
        assert_eq!(at(1000 << 20), 20 << 20, "20 ms of 1000 MiB/s");
        assert_eq!(at(1 << 40), ADAPT_MAX_BACKLOG, "a RAM disk: the cap");
        // 6 MiB waiting: compress for a slow disk (2 MiB), not for a fast one (40 MiB).
        let slow = WritebackProgress::simulated(Some((106 << 20, 100 << 20, 1_000_000_000)));
        let fast = WritebackProgress::simulated(Some((2006 << 20, 2000 << 20, 1_000_000_000)));
        assert!(compress_next(Some(&slow), false, None));
        assert!(!compress_next(Some(&fast), false, None));
        assert!(compress_next(None, false, None));
        assert!(
            compress_next(None, true, None),
            "a writer that does not adapt always compresses"
        );
        assert!(
            compress_next(Some(&slow), true, None),
            "a started write-back decides, not the probe"
        );
        let not_started = WritebackProgress::simulated(None);
        assert!(compress_next(Some(&not_started), false, None));
        assert!(!compress_next(Some(&not_started), true, None));
    }
}
