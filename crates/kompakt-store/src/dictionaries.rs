//! zstd dictionaries per namespace: learned from the namespace's own small values, adopted
//! only when they pay.
//!
//! Small values of one namespace (storr's objects, a memoized function's results) repeat the
//! same structure: keys of a dict, a pickle's class names, a JSON record's field names. Alone,
//! a value of a few hundred bytes cannot refer back to any of it; with a dictionary trained on
//! its siblings it can. The store keeps a reservoir of the small values each namespace is
//! given, trains a dictionary once enough have come, and compresses values held out of the
//! training both ways: the dictionary is adopted only if it makes them at least
//! [`MIN_GAIN`] smaller without making writing and reading them slower. Adopted dictionaries
//! live in the index (`docs/FORMAT.md`, "Object store"), named by their id, and every value
//! compressed with one records which.

use crate::error::Result;
use kompakt::codec::{Codec, CodecSpec, Dictionaries, Dictionary, DictionaryId};
use kompakt::stream::{ReadOptions, Reader, WriteOptions, Writer};
use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Values of at most this many raw bytes are sampled, and compressed with their namespace's
/// dictionary once it has one. Past a few tens of KB a value carries its own context (a
/// dictionary gained 3 % at 32 KB on JSON, bench/RESULTS.md), and large values are streamed.
pub const DICTIONARY_VALUE_MAX: usize = 64 << 10;

/// A namespace's first trial comes after this many sampled values...
const TRAIN_AFTER_SAMPLES: u64 = 2000;
/// ...or once the samples hold this many bytes, whichever is first. zstd wants about 100x
/// the dictionary's size in samples: 4 MiB trains a dictionary of up to 40 KiB.
const TRAIN_AFTER_BYTES: usize = 4 << 20;
/// Dictionary size: the training bytes over this, within the bounds below.
const SAMPLE_BYTES_PER_DICTIONARY_BYTE: usize = 100;
const DICTIONARY_SIZE_MIN: usize = 1 << 10;
const DICTIONARY_SIZE_MAX: usize = 64 << 10;
/// One sample in this many is held out of training, to judge the dictionary on.
const HELD_OUT_EVERY: usize = 5;
/// A trial that fails is tried again once 4x as many samples were seen, at most this often
/// per process: values that do not share much stop costing training time.
const MAX_TRIALS: u32 = 4;
/// Values of a namespace after which a trial put off for another process's is due again.
const DEFERRED_TRIAL_AFTER: u64 = 256;
/// Namespaces sampled at once (each reservoir holds up to [`TRAIN_AFTER_BYTES`]).
const MAX_RESERVOIRS: usize = 16;

/// A dictionary must make the held-out values' stored bytes at least this much smaller...
pub const MIN_GAIN: f64 = 0.10;
/// ...and writing and reading them back no slower than without it, but for this fraction (the
/// best of [`TIMING_ROUNDS`] rounds each way: timings of sub-millisecond work are noisy). The
/// store's own trials use this; [`Store::train_dictionary`](crate::Store::train_dictionary)
/// may allow more, or not judge speed.
pub const MAX_SLOWDOWN: f64 = 0.05;
const TIMING_ROUNDS: usize = 3;

/// What a trial of a dictionary for a namespace found.
#[derive(Debug, Clone, PartialEq)]
pub struct DictionaryTrial {
    /// The namespace.
    pub namespace: String,
    /// The dictionary's id and size in bytes, if training succeeded.
    pub dictionary: Option<(DictionaryId, usize)>,
    /// Samples trained on, and their bytes.
    pub trained_samples: usize,
    pub trained_bytes: usize,
    /// Held-out samples judged, and their raw bytes.
    pub held_out_samples: usize,
    pub held_out_bytes: usize,
    /// Their stored bytes (each a kompakt file, as the store writes it) without and with.
    pub stored_without: u64,
    pub stored_with: u64,
    /// Best time to write and read them all back, without and with.
    pub seconds_without: f64,
    pub seconds_with: f64,
    /// What storing them costs beyond compressing them, added to both times before they are
    /// compared: the requests of a store on object storage
    /// ([`Store::observe_value_overhead`](crate::Store::observe_value_overhead)); 0 locally.
    pub overhead_seconds: f64,
    /// Time spent training.
    pub training_seconds: f64,
    /// Whether the namespace now uses this dictionary.
    pub adopted: bool,
    /// Why not, when it was not adopted.
    pub reason: Option<String>,
}

/// Samples of one namespace's small values.
#[derive(Debug)]
struct Reservoir {
    samples: Vec<Vec<u8>>,
    bytes: usize,
    /// Samples offered so far (those kept and those not).
    seen: u64,
    /// `seen` at which the next trial runs.
    train_at: u64,
    trials: u32,
    /// A trial of this namespace is running (in this process).
    busy: bool,
    /// A trial was put off (another process of the store was training): the next one is due
    /// at `train_at`, not as soon as the reservoir is full.
    deferred: bool,
    random: u64,
}

impl Default for Reservoir {
    fn default() -> Reservoir {
        Reservoir {
            samples: Vec::new(),
            bytes: 0,
            seen: 0,
            train_at: TRAIN_AFTER_SAMPLES,
            trials: 0,
            busy: false,
            deferred: false,
            random: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

impl Reservoir {
    /// Offers a value; returns whether a trial is due.
    fn offer(&mut self, value: &[u8]) -> bool {
        if self.busy || self.trials >= MAX_TRIALS || value.is_empty() {
            return false;
        }
        self.seen += 1;
        if self.bytes + value.len() <= TRAIN_AFTER_BYTES && (self.samples.len() as u64) < self.train_at {
            self.bytes += value.len();
            self.samples.push(value.to_vec());
        } else if !self.samples.is_empty() {
            // Reservoir sampling (algorithm R): every value seen has the same chance to be kept.
            self.random ^= self.random << 13;
            self.random ^= self.random >> 7;
            self.random ^= self.random << 17;
            let slot = self.random % self.seen;
            if let Some(old) = self.samples.get_mut(slot as usize) {
                if self.bytes - old.len() + value.len() <= TRAIN_AFTER_BYTES {
                    self.bytes = self.bytes - old.len() + value.len();
                    *old = value.to_vec();
                }
            }
        }
        let full = self.bytes + DICTIONARY_VALUE_MAX > TRAIN_AFTER_BYTES;
        self.seen >= self.train_at || (full && self.trials == 0 && !self.deferred)
    }
}

/// The dictionaries a store has loaded, and the reservoirs of namespaces without one.
#[derive(Debug, Default)]
pub(crate) struct DictionaryState {
    /// Namespace -> its adopted dictionary (None: it had none when last looked up).
    current: HashMap<String, Option<Dictionary>>,
    /// Every dictionary loaded, for reading values.
    loaded: HashMap<DictionaryId, Dictionary>,
    reservoirs: HashMap<String, Reservoir>,
}

/// The part of [`Store`](crate::Store) that handles dictionaries.
#[derive(Debug, Default)]
pub(crate) struct StoreDictionaries {
    /// Whether small values are sampled and compressed with dictionaries.
    pub enabled: bool,
    pub state: Mutex<DictionaryState>,
}

/// Whether values written with `opts` can use a dictionary: zstd, fixed.
pub(crate) fn codec_allows(opts: &WriteOptions) -> bool {
    matches!(opts.stream.codec, CodecSpec::Fixed(Codec::Zstd { .. }))
}

impl StoreDictionaries {
    pub fn new(enabled: bool) -> StoreDictionaries {
        StoreDictionaries {
            enabled,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DictionaryState> {
        // The state is a cache: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The namespace's dictionary as last looked up (None: never looked up).
    pub fn cached_current(&self, namespace: &str) -> Option<Option<Dictionary>> {
        self.lock().current.get(namespace).cloned()
    }

    pub fn set_current(&self, namespace: &str, dictionary: Option<Dictionary>) {
        let mut state = self.lock();
        if let Some(d) = &dictionary {
            state.loaded.insert(d.id(), d.clone());
            state.reservoirs.remove(namespace);
        }
        state.current.insert(namespace.to_owned(), dictionary);
    }

    pub fn loaded(&self, id: DictionaryId) -> Option<Dictionary> {
        self.lock().loaded.get(&id).cloned()
    }

    pub fn remember(&self, dictionary: &Dictionary) {
        self.lock().loaded.insert(dictionary.id(), dictionary.clone());
    }

    /// Offers a small value's streams to the namespace's reservoir; returns the samples to
    /// try a dictionary on when a trial is due (the reservoir is then marked busy).
    pub fn offer(&self, namespace: &str, streams: &[&[u8]]) -> Option<Vec<Vec<u8>>> {
        let mut state = self.lock();
        if !state.reservoirs.contains_key(namespace) && state.reservoirs.len() >= MAX_RESERVOIRS {
            return None;
        }
        let reservoir = state.reservoirs.entry(namespace.to_owned()).or_default();
        let mut due = false;
        for stream in streams {
            due |= reservoir.offer(stream);
        }
        if !due {
            return None;
        }
        reservoir.busy = true;
        reservoir.trials += 1;
        reservoir.train_at = reservoir.seen.saturating_mul(4);
        Some(reservoir.samples.clone())
    }

    /// Puts off a trial [`offer`](Self::offer) started, uncounted, because another process of
    /// the store is training: due again after [`DEFERRED_TRIAL_AFTER`] more values, by when the
    /// other may have adopted a dictionary this process then takes instead of training.
    pub fn trial_deferred(&self, namespace: &str) {
        if let Some(r) = self.lock().reservoirs.get_mut(namespace) {
            r.busy = false;
            r.deferred = true;
            r.trials = r.trials.saturating_sub(1);
            r.train_at = r.seen.saturating_add(DEFERRED_TRIAL_AFTER);
        }
    }

    /// Ends a trial started by [`offer`](Self::offer). After the last trial a namespace gets,
    /// its samples are freed (up to 4 MiB each).
    pub fn trial_done(&self, namespace: &str) {
        if let Some(r) = self.lock().reservoirs.get_mut(namespace) {
            r.busy = false;
            if r.trials >= MAX_TRIALS {
                r.samples = Vec::new();
                r.bytes = 0;
            }
        }
    }
}

/// Trains a dictionary on most of `samples` and judges it on the rest, written as the store
/// writes values (`opts`): it must make them [`MIN_GAIN`] smaller, and slow writing and
/// reading them by at most `max_slowdown` (None: speed is measured, not judged). Does not
/// adopt it: see [`DictionaryTrial::adopted`].
pub(crate) fn try_dictionary(
    namespace: &str,
    samples: &[Vec<u8>],
    opts: &WriteOptions,
    max_slowdown: Option<f64>,
    overhead_per_value: Duration,
) -> Result<(DictionaryTrial, Option<Dictionary>)> {
    let (mut train, mut held_out) = (Vec::new(), Vec::new());
    for (i, s) in samples.iter().enumerate() {
        if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 {
            held_out.push(&s[..]);
        } else {
            train.push(&s[..]);
        }
    }
    let trained_bytes: usize = train.iter().map(|s| s.len()).sum();
    let mut trial = DictionaryTrial {
        namespace: namespace.to_owned(),
        dictionary: None,
        trained_samples: train.len(),
        trained_bytes,
        held_out_samples: held_out.len(),
        held_out_bytes: held_out.iter().map(|s| s.len()).sum(),
        stored_without: 0,
        stored_with: 0,
        seconds_without: 0.0,
        seconds_with: 0.0,
        overhead_seconds: 0.0,
        training_seconds: 0.0,
        adopted: false,
        reason: None,
    };
    let size = (trained_bytes / SAMPLE_BYTES_PER_DICTIONARY_BYTE).clamp(DICTIONARY_SIZE_MIN, DICTIONARY_SIZE_MAX);
    let start = Instant::now();
    let trained = Dictionary::train(&train, size);
    trial.training_seconds = start.elapsed().as_secs_f64();
    let dictionary = match trained {
        Ok(d) => d,
        Err(e) => {
            trial.reason = Some(format!("training failed: {e}"));
            return Ok((trial, None));
        }
    };
    trial.dictionary = Some((dictionary.id(), dictionary.bytes().len()));
    if held_out.is_empty() {
        trial.reason = Some("no values were held out to judge it on".into());
        return Ok((trial, None));
    }
    let opts = opts.threads(1);
    let (mut best_without, mut best_with) = (Duration::MAX, Duration::MAX);
    for _ in 0..TIMING_ROUNDS {
        let (bytes, time) = round_trip(&held_out, &opts, None)?;
        trial.stored_without = bytes;
        best_without = best_without.min(time);
        let (bytes, time) = round_trip(&held_out, &opts, Some(&dictionary))?;
        trial.stored_with = bytes;
        best_with = best_with.min(time);
    }
    trial.seconds_without = best_without.as_secs_f64();
    trial.seconds_with = best_with.as_secs_f64();
    trial.overhead_seconds = overhead_per_value.as_secs_f64() * held_out.len() as f64;
    let (without, with) = (
        trial.seconds_without + trial.overhead_seconds,
        trial.seconds_with + trial.overhead_seconds,
    );
    let gain = 1.0 - trial.stored_with as f64 / trial.stored_without.max(1) as f64;
    if gain < MIN_GAIN {
        trial.reason = Some(format!(
            "held-out values only {:.1} % smaller, {:.0} % needed",
            gain * 100.0,
            MIN_GAIN * 100.0
        ));
    } else if max_slowdown.is_some_and(|allowed| with > without * (1.0 + allowed)) {
        trial.reason = Some(format!(
            "held-out values {:.0} % slower to write and read",
            (with / without - 1.0) * 100.0
        ));
    } else {
        return Ok((trial, Some(dictionary)));
    }
    Ok((trial, None))
}

/// Writes each value as a one-stream kompakt file and reads it back; returns the files'
/// total bytes and the time taken.
fn round_trip(values: &[&[u8]], opts: &WriteOptions, dictionary: Option<&Dictionary>) -> Result<(u64, Duration)> {
    let dictionaries = Dictionaries::from(dictionary.into_iter().cloned().collect::<Vec<_>>());
    let start = Instant::now();
    let mut total = 0u64;
    for value in values {
        let mut writer = Writer::with_parts(Vec::new(), *opts, None, dictionary.cloned())?;
        let id = writer.add_stream(Some(opts.stream_options()))?;
        writer.write(id, value)?;
        writer.finish_stream(id)?;
        let file = writer.finish()?;
        total += file.len() as u64;
        let mut reader = Reader::new(Cursor::new(file), ReadOptions::default().threads(1))?;
        reader.set_dictionaries(dictionaries.clone());
        let back = reader.read_stream(0)?;
        debug_assert_eq!(back.len(), value.len());
    }
    Ok((total, start.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservoir_is_due_after_enough_samples_then_backs_off() {
        let mut r = Reservoir::default();
        let value = vec![7u8; 100];
        let due = (0..TRAIN_AFTER_SAMPLES).filter(|_| r.offer(&value)).count();
        assert_eq!(due, 1, "due once, at the last sample");
        assert_eq!(r.samples.len() as u64, TRAIN_AFTER_SAMPLES);
        r.trials = 1;
        r.train_at = r.seen * 4;
        // The next trial waits for 4x the samples; meanwhile the reservoir grows to its
        // byte limit, then values replace samples.
        let big = vec![9u8; 40 << 10];
        assert!((0..200).all(|_| !r.offer(&big)));
        assert!(r.bytes <= TRAIN_AFTER_BYTES);
        assert!(r.samples.iter().any(|s| s.len() == big.len()));
        let due_at = r.train_at - r.seen;
        assert_eq!((0..due_at).filter(|_| r.offer(&value)).count(), 1);
    }

    #[test]
    fn after_the_last_trial_the_samples_are_freed_and_none_are_taken() {
        let state = StoreDictionaries::new(true);
        let value = vec![3u8; 100];
        let mut trials = 0;
        for _ in 0..200_000 {
            if state.offer("ns", &[&value]).is_some() {
                trials += 1;
                state.trial_done("ns");
            }
        }
        assert_eq!(trials, MAX_TRIALS);
        let locked = state.lock();
        let r = &locked.reservoirs["ns"];
        assert!(r.samples.is_empty() && r.bytes == 0);
    }

    #[test]
    fn reservoir_is_due_when_its_bytes_fill_first() {
        let mut r = Reservoir::default();
        let value = vec![1u8; 32 << 10];
        let n = (0..1000).position(|_| r.offer(&value)).expect("due") + 1;
        assert!(n < 200, "due after {n} values of 32 KiB");
        assert!(r.bytes <= TRAIN_AFTER_BYTES);
    }

    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    r#"{{"timestamp":"2026-11-28T19:{:02}:{:02}Z","level":"info","service":"checkout","user_id":{},"path":"/api/v2/orders/{}","status":200,"latency_ms":{}}}"#,
                    i % 60,
                    (i * 7) % 60,
                    1000 + i * 13,
                    i * 31,
                    i % 97
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn a_dictionary_for_structured_records_is_judged_worth_it() {
        let opts = WriteOptions::default().codec(CodecSpec::parse("zstd:1").unwrap());
        let (trial, dictionary) = try_dictionary("logs", &records(2000), &opts, None, Duration::ZERO).unwrap();
        assert!(dictionary.is_some(), "{trial:?}");
        assert!(
            trial.stored_with as f64 <= 0.9 * trial.stored_without as f64,
            "{trial:?}"
        );
        assert_eq!(trial.held_out_samples, 400);
    }

    #[test]
    fn a_dictionary_for_random_bytes_is_refused_with_a_reason() {
        let mut x = 1u64;
        let noise: Vec<Vec<u8>> = (0..500)
            .map(|_| {
                (0..200)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        (x >> 56) as u8
                    })
                    .collect()
            })
            .collect();
        let opts = WriteOptions::default().codec(CodecSpec::parse("zstd:1").unwrap());
        let (trial, dictionary) = try_dictionary("noise", &noise, &opts, None, Duration::ZERO).unwrap();
        assert!(dictionary.is_none());
        assert!(trial.reason.is_some(), "{trial:?}");
    }
}
