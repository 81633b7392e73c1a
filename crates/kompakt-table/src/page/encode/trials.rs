//! Weighing the codec: whether byte-wide codes are better bit-packed, from their entropy and
//! trial compressions of samples.

/// Whether one-byte `codes` of `bits` significant bits are better bit-packed (and stored
/// raw) than left whole to the codec: when its entropy stage could save under
/// [`MIN_ENTROPY_SAVING`] over packing, and LZ4 finds no repeats, the codec would spend its
/// time (and the reader's: decoding entropy-coded bytes is several times slower than
/// unpacking bits) for next to nothing. Uniform codes of 1..100 in 7 bits: 5 % at most.
/// `entropy` is [`entropy_bits`] of `codes`, which the caller asks for anyway.
///
/// [`MIN_ENTROPY_SAVING`]: kompakt::codec::MIN_ENTROPY_SAVING
pub(super) fn pack_instead(codes: &[u8], bits: usize, entropy: f64) -> bool {
    use kompakt::codec::{MIN_ENTROPY_SAVING, MIN_SAVING, SAMPLES};
    if entropy < bits as f64 * (1.0 - MIN_ENTROPY_SAVING) {
        return false;
    }
    let lz4 = kompakt::Codec::Lz4 { acceleration: 1 };
    trial_fraction(lz4, codes, SAMPLES).is_some_and(|f| f > 1.0 - MIN_SAVING)
}

/// Bits of order-0 entropy a byte of `codes` holds, from samples' histograms.
pub(super) fn entropy_bits(codes: &[u8]) -> f64 {
    use kompakt::codec::{entropy_saving_bound, SAMPLES};
    8.0 * (1.0 - entropy_saving_bound(codes, SAMPLES))
}

/// The fraction of its size `codec` leaves of up to `samples` samples of `data` (trial
/// compressions, [`kompakt::codec::probe`]), with this thread's compressor; `None` when a trial
/// fails.
pub(crate) fn trial_fraction(codec: kompakt::Codec, data: &[u8], samples: usize) -> Option<f64> {
    span_fraction(codec, data, kompakt::codec::SAMPLE_LEN, samples)
}

/// [`trial_fraction`] on up to `samples` evenly spaced spans of `span` bytes each.
pub(crate) fn span_fraction(codec: kompakt::Codec, data: &[u8], span: usize, samples: usize) -> Option<f64> {
    use kompakt::codec::probe_spans;
    TRIAL.with(|t| {
        let (compressor, scratch) = &mut *t.borrow_mut();
        probe_spans(compressor, codec, data, span, samples, scratch)
            .ok()
            .map(|r| r.fraction())
    })
}

thread_local! {
    /// This thread's compressor and scratch for trials of samples.
    static TRIAL: std::cell::RefCell<(kompakt::codec::Compressor, Vec<u8>)> =
        std::cell::RefCell::new((kompakt::codec::Compressor::new(), Vec::new()));
}

/// Whether the block encoder's probe would store `data` raw under `codec` (an unfiltered
/// block of more than 64 KiB, its fast or thorough bar), with this thread's compressor.
pub(crate) fn looks_incompressible(codec: kompakt::Codec, data: &[u8]) -> bool {
    use kompakt::codec::SavingBar;
    TRIAL.with(|t| {
        let (compressor, scratch) = &mut *t.borrow_mut();
        let entropy_coded = !matches!(codec, kompakt::Codec::Lz4 { .. } | kompakt::Codec::Lz4Hc { .. });
        kompakt::codec::looks_incompressible(
            compressor,
            data,
            entropy_coded,
            false,
            SavingBar::for_codec(codec),
            scratch,
        )
        .unwrap_or(false)
    })
}

/// Whether `codec` is expected to store byte-wide `codes` in fewer bytes than the same codes
/// take bit-packed (`packed`), stored raw or through the codec, whichever is smaller: trial
/// compressions of samples of both. Both decode at about the same speed, so no margin. The
/// writer decides the same way whether a bit-packed page goes through the codec.
pub(super) fn bytes_beat_packed(codec: Option<kompakt::Codec>, codes: &[u8], packed: &[u8]) -> bool {
    // Two samples each: it runs on every page of narrow integers (hours, minutes, codes).
    const TRIALS: usize = 2;
    let Some(codec) = trial_stand_in(codec) else {
        return false;
    };
    // What the writer does with a bit-packed page: the codec only when its byte histogram
    // shows something to gain, else raw.
    use kompakt::codec::{entropy_saving_bound, MIN_ENTROPY_SAVING, SAMPLES};
    let through_codec = entropy_saving_bound(packed, SAMPLES) >= MIN_ENTROPY_SAVING;
    let packed_best = match through_codec {
        true => trial_fraction(codec, packed, TRIALS).map_or(1.0, |f| f.min(1.0)),
        false => 1.0,
    } * packed.len() as f64;
    trial_fraction(codec, codes, TRIALS).is_some_and(|f| f * (codes.len() as f64) < packed_best)
}

/// A fast stand-in of the same family as `codec` for trial compressions (`None`: no codec):
/// slow levels would cost their time on every trial, and estimate only a little better.
fn trial_stand_in(codec: Option<kompakt::Codec>) -> Option<kompakt::Codec> {
    use kompakt::Codec;
    Some(match codec {
        None | Some(Codec::None) => return None,
        Some(Codec::Zstd { level }) => Codec::Zstd { level: level.min(3) },
        Some(Codec::Lz4Hc { .. }) => Codec::Lz4 { acceleration: 1 },
        Some(Codec::Gzip { level }) => Codec::Gzip { level: level.min(3) },
        Some(Codec::Zlib { level }) => Codec::Zlib { level: level.min(3) },
        Some(c) => c,
    })
}

/// Whether `codec` is expected to store `codes` in under 90 % of `packed` bytes. Uniform
/// codes are ruled out cheaply (their byte histograms leave an entropy coder too little, and
/// LZ4 finds no repeats), the rest by trial compressions of samples with the codec.
pub(super) fn codec_beats(codec: Option<kompakt::Codec>, codes: &[u8], packed: usize) -> bool {
    use kompakt::codec::{entropy_saving_bound, MIN_SAVING, SAMPLES};
    use kompakt::Codec;
    const TRIALS: usize = 4;
    let Some(codec) = trial_stand_in(codec) else {
        return false;
    };
    let target = 0.9 * packed as f64;
    let entropy_floor = (1.0 - entropy_saving_bound(codes, SAMPLES)) * codes.len() as f64;
    if entropy_floor >= target {
        match trial_fraction(Codec::Lz4 { acceleration: 1 }, codes, SAMPLES) {
            Some(f) if f <= 1.0 - MIN_SAVING => {}
            _ => return false,
        }
    }
    trial_fraction(codec, codes, TRIALS).is_some_and(|f| f * (codes.len() as f64) < target)
}

/// Bytes `codec` stores `data` in, compressed whole with its fast stand-in (samples misjudge
/// pages of shuffled bytes and small dictionaries by several percent); `data`'s own size
/// without a codec or when compression fails.
pub(super) fn compressed_size(codec: Option<kompakt::Codec>, data: &[u8]) -> usize {
    let Some(codec) = trial_stand_in(codec) else {
        return data.len();
    };
    WHOLE.with(|t| {
        let (compressor, scratch) = &mut *t.borrow_mut();
        scratch.clear();
        let size = match compressor.compress_append(codec, data, scratch, data.len()) {
            Ok(Some(n)) => n.min(data.len()),
            _ => data.len(),
        };
        if scratch.capacity() > KEEP_SCRATCH {
            *scratch = Vec::new();
        }
        size
    })
}

/// The most scratch a thread keeps between whole-page trials: a one-group table's page of
/// 2^24 floats would otherwise keep its compress bound (~128 MB) on every thread of the pool
/// for the life of the process.
const KEEP_SCRATCH: usize = 1 << 20;

thread_local! {
    /// This thread's compressor and scratch for whole-page trials.
    static WHOLE: std::cell::RefCell<(kompakt::codec::Compressor, Vec<u8>)> =
        std::cell::RefCell::new((kompakt::codec::Compressor::new(), Vec::new()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_trials_keep_no_large_scratch() {
        let zstd = Some(kompakt::Codec::Zstd { level: 2 });
        let text = b"a trial weighs these bytes; ".repeat(1000);
        assert!(compressed_size(zstd, &text) < text.len() / 10);
        assert_eq!(compressed_size(Some(kompakt::Codec::None), &text), text.len());
        let large: Vec<u8> = (0..3u32 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        assert!(compressed_size(zstd, &large) <= large.len());
        WHOLE.with(|t| assert!(t.borrow().1.capacity() <= KEEP_SCRATCH));
    }
}
