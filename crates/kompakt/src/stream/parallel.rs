//! An ordered, bounded parallel map: the one engine behind parallel writing and reading.
//!
//! The calling thread produces jobs and consumes results in job order; it and `threads - 1`
//! worker threads run the jobs. At most `window` jobs are in flight, so memory is bounded by
//! the window, not by the input. Scoped threads let jobs borrow the caller's buffers (no copy of the input, and
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
        // The calling thread is one of the `threads`: it works on queued jobs while the next
        // result in order is not ready, instead of sleeping on a core a worker could use and
        // waking that worker's core up for every result.
        for _ in 1..threads {
            let (job_rx, res_tx) = (job_rx.clone(), res_tx.clone());
            let (init, work, done) = (&init, &work, &done);
            scope.spawn(move || {
                let mut state = init();
                for (seq, job) in job_rx {
                    match run_caught(&work, &mut state, job) {
                        Ok(result) => {
                            if res_tx.send((seq, result)).is_err() {
                                break;
                            }
                        }
                        Err(panicked) => {
                            let _ = res_tx.send((seq, Err(panicked)));
                            return;
                        }
                    }
                }
                done(state);
            });
        }
        drop(res_tx);
        let ended = || Error::Internal("worker threads ended early".into());
        let mut own: Option<S> = None;
        let (mut sent, mut next, mut exhausted) = (0u64, 0u64, false);
        let mut ready = BTreeMap::new();
        let result = (|| loop {
            while !exhausted && sent - next < window as u64 {
                match produce()? {
                    Some(job) => {
                        // Never blocks: the queue holds at most the `window` jobs in flight.
                        job_tx.send((sent, job)).map_err(|_| ended())?;
                        sent += 1;
                    }
                    None => exhausted = true,
                }
            }
            if next == sent {
                return Ok(());
            }
            while let Ok((seq, result)) = res_rx.try_recv() {
                ready.insert(seq, result);
            }
            if !ready.contains_key(&next) {
                match job_rx.try_recv() {
                    Ok((seq, job)) => {
                        let state = own.get_or_insert_with(&init);
                        let result = run_caught(&work, state, job).unwrap_or_else(|panicked| {
                            // Its state may be broken after a panic: not pooled again.
                            own = None;
                            Err(panicked)
                        });
                        ready.insert(seq, result);
                    }
                    Err(_) => {
                        let (seq, result) = res_rx.recv().map_err(|_| ended())?;
                        ready.insert(seq, result);
                    }
                }
            }
            while let Some(out) = ready.remove(&next) {
                consume(out?)?;
                next += 1;
            }
        })();
        drop(job_tx);
        if let Some(state) = own {
            done(state);
        }
        result
    })
}

/// Runs one job, turning a panic in it into an error: a panic in a codec must not leave the
/// caller waiting forever for its result.
fn run_caught<S, J, O>(
    work: &impl Fn(&mut S, J) -> Result<O>,
    state: &mut S,
    job: J,
) -> std::result::Result<Result<O>, Error> {
    catch_unwind(AssertUnwindSafe(|| work(state, job))).map_err(|_| Error::Internal("a worker thread panicked".into()))
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
    fn the_caller_is_one_of_the_threads_that_run_jobs() {
        // Job 0 waits until three other jobs are done. Whichever thread runs it, the other
        // jobs need another thread; with `threads` 2 that is the caller or the one worker, so
        // the caller runs a job either way, and no third thread ever does.
        let caller = std::thread::current().id();
        let ran_on = std::sync::Mutex::new(std::collections::HashSet::new());
        let done = AtomicUsize::new(0);
        let mut n = 0;
        ordered_map(
            2,
            4,
            || {
                n += 1;
                Ok((n <= 40).then_some(n - 1))
            },
            || (),
            |_, j: usize| {
                ran_on.lock().unwrap().insert(std::thread::current().id());
                if j == 0 {
                    let waited = std::time::Instant::now();
                    while done.load(Ordering::SeqCst) < 3 {
                        assert!(
                            waited.elapsed().as_secs() < 30,
                            "no other thread ran the jobs after job 0"
                        );
                        std::thread::yield_now();
                    }
                }
                done.fetch_add(1, Ordering::SeqCst);
                Ok(j)
            },
            |_| (),
            |_| Ok(()),
        )
        .unwrap();
        let ran_on = ran_on.into_inner().unwrap();
        assert!(ran_on.contains(&caller), "the caller ran no job");
        assert_eq!(ran_on.len(), 2);
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
