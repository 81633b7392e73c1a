//! An ordered, bounded parallel map: the one engine behind parallel writing and reading.
//!
//! The calling thread produces jobs and consumes results in job order; worker threads run the
//! jobs. At most `window` jobs are in flight, so memory is bounded by the window, not by the
//! input. Scoped threads let jobs borrow the caller's buffers (no copy of the input, and
//! decoding straight into the caller's output).

use crate::error::{Error, Result};
use crossbeam_channel::{bounded, unbounded};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Most threads kompakt starts for one operation, whatever it is asked for.
pub const MAX_THREADS: usize = 256;

/// The thread count to use for a request: 0 means all available cores; at most [`MAX_THREADS`].
pub fn resolve_threads(requested: usize) -> usize {
    // Asked once: on Linux the answer reads cgroup files, tens of microseconds per call.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let n = if requested == 0 {
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    } else {
        requested
    };
    n.clamp(1, MAX_THREADS)
}

/// Runs `work` over the jobs from `produce` on `threads` threads and hands each result to
/// `consume` in production order. Stops at the first error in job order (so the error reported
/// does not depend on thread timing), or at the first error of `produce` or `consume`.
///
/// Each worker builds its state with `init` and hands it back to `done` when it ends, so
/// expensive contexts can be pooled across calls.
pub(crate) fn ordered_map<J, O, S>(
    threads: usize,
    window: usize,
    mut produce: impl FnMut() -> Result<Option<J>>,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, J) -> Result<O> + Sync,
    done: impl Fn(S) + Sync,
    mut consume: impl FnMut(O) -> Result<()>,
) -> Result<()>
where
    J: Send,
    O: Send,
{
    if threads <= 1 {
        let mut state = init();
        let result = (|| {
            while let Some(job) = produce()? {
                consume(work(&mut state, job)?)?;
            }
            Ok(())
        })();
        done(state);
        return result;
    }
    let threads = threads.min(MAX_THREADS);
    let window = window.max(threads);
    std::thread::scope(|scope| {
        let (job_tx, job_rx) = bounded::<(u64, J)>(window);
        let (res_tx, res_rx) = unbounded::<(u64, Result<O>)>();
        for _ in 0..threads {
            let (job_rx, res_tx) = (job_rx.clone(), res_tx.clone());
            let (init, work, done) = (&init, &work, &done);
            scope.spawn(move || {
                let mut state = init();
                for (seq, job) in job_rx {
                    // A panic in a codec must not leave the producer waiting forever; the worker's
                    // state may be broken after one, so it is not pooled again.
                    match catch_unwind(AssertUnwindSafe(|| work(&mut state, job))) {
                        Ok(result) => {
                            if res_tx.send((seq, result)).is_err() {
                                break;
                            }
                        }
                        Err(_) => {
                            let panicked = Error::Usage("internal error: a worker thread panicked".into());
                            let _ = res_tx.send((seq, Err(panicked)));
                            return;
                        }
                    }
                }
                done(state);
            });
        }
        drop((job_rx, res_tx));
        let (mut sent, mut next, mut exhausted) = (0u64, 0u64, false);
        let mut ready = BTreeMap::new();
        let result = (|| loop {
            while !exhausted && sent - next < window as u64 {
                match produce()? {
                    Some(job) => {
                        job_tx
                            .send((sent, job))
                            .map_err(|_| Error::Usage("internal error: worker threads ended early".into()))?;
                        sent += 1;
                    }
                    None => exhausted = true,
                }
            }
            if next == sent {
                return Ok(());
            }
            let (seq, result) = res_rx
                .recv()
                .map_err(|_| Error::Usage("internal error: worker threads ended early".into()))?;
            ready.insert(seq, result);
            while let Some(out) = ready.remove(&next) {
                consume(out?)?;
                next += 1;
            }
        })();
        drop(job_tx);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_in_order_whatever_the_thread_count() {
        for threads in [1, 2, 3, 8] {
            let mut next = 0u64;
            let mut out = Vec::new();
            ordered_map(
                threads,
                4,
                || {
                    next += 1;
                    Ok((next <= 100).then_some(next))
                },
                || (),
                |_, j| {
                    std::thread::sleep(std::time::Duration::from_micros((j * 37) % 200));
                    Ok(j * 2)
                },
                |_| (),
                |o| {
                    out.push(o);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(out, (1..=100).map(|j| j * 2).collect::<Vec<_>>(), "threads {threads}");
        }
    }

    #[test]
    fn in_flight_jobs_are_bounded_and_errors_stop_the_run() {
        let live = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let mut n = 0;
        let r = ordered_map(
            2,
            4,
            || {
                n += 1;
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                Ok(Some(n))
            },
            || (),
            |_, j| {
                if j == 50 {
                    Err(Error::Usage("boom".into()))
                } else {
                    Ok(j)
                }
            },
            |_| (),
            |_| {
                live.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            },
        );
        assert!(r.is_err());
        assert!(peak.load(Ordering::SeqCst) <= 4);
    }

    #[test]
    fn a_panicking_worker_is_an_error_not_a_hang() {
        let mut n = 0;
        let r = ordered_map(
            2,
            4,
            || {
                n += 1;
                Ok((n < 10).then_some(n))
            },
            || (),
            |_, j: i32| if j == 3 { panic!("codec bug") } else { Ok(j) },
            |_| (),
            |_| Ok(()),
        );
        assert!(r.is_err());
    }
}
