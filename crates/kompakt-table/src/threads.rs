//! Thread pools for the reader's and the writer's parallel work: one pool per thread count,
//! kept for the life of the process, and made again in a child made by `fork`.
//!
//! rayon's global pool is never used: a forked child (multiprocessing's fork pools, PyTorch's
//! data loaders, pre-forking web servers) inherits a pool whose threads do not exist in it, and
//! rayon cannot replace its global pool, so the child's first parallel read would wait forever.
//! Our own pools remember the process that started them; a child starts its own.

use kompakt::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Runs `f` on a pool of `threads` threads (0: rayon's global pool, all cores).
pub(crate) fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    Ok(pool(threads)?.install(f))
}

/// Runs `background` on a pool of `threads` threads (as [`with_threads`]) while `foreground`
/// runs on this thread, which need not be `Send`; returns both results.
pub(crate) fn overlap<A, B: Send>(
    threads: usize,
    foreground: impl FnOnce() -> A,
    background: impl FnOnce() -> B + Send,
) -> Result<(A, B)> {
    let mut b = None;
    let slot = &mut b;
    let a = pool(threads)?.in_place_scope(|s| {
        s.spawn(move |_| *slot = Some(background()));
        foreground()
    });
    Ok((a, b.expect("a scope ends after the work it spawned")))
}

/// The pools of one process, by size.
struct Pools {
    owner: u32,
    by_size: HashMap<usize, Arc<rayon::ThreadPool>>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The pool of `threads` threads. `threads` means what it means everywhere
/// ([`kompakt::stream::resolve_threads`]: 0 is all available cores, at most 256). Pools are kept
/// per size: starting threads for every small read would cost more than the read.
fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    let threads = kompakt::stream::resolve_threads(threads);
    // A lock that a thread of the parent held at the fork stays held in the child, which has no
    // such thread; our own hold it only to look a pool up, never while one runs.
    let mut slot = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if slot.as_ref().is_some_and(|p| p.owner != pid) {
        // The parent's pools: their threads are not in this process, and dropping them would
        // signal threads that are not there. Forgotten, at the cost of their memory.
        std::mem::forget(slot.take());
    }
    let pools = slot.get_or_insert_with(|| Pools {
        owner: pid,
        by_size: HashMap::new(),
    });
    if let Some(p) = pools.by_size.get(&threads) {
        return Ok(Arc::clone(p));
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("kompakt-table-{i}"))
            .build()
            .map_err(|e| Error::Usage(format!("cannot start {threads} threads: {e}")))?,
    );
    pools.by_size.insert(threads, Arc::clone(&p));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_per_size_runs_on_that_many_threads() {
        assert_eq!(with_threads(3, rayon::current_num_threads).unwrap(), 3);
        assert_eq!(with_threads(1, rayon::current_num_threads).unwrap(), 1);
        let (a, b) = overlap(2, || 1, rayon::current_num_threads).unwrap();
        assert_eq!((a, b), (1, 2));
        assert!(Arc::ptr_eq(&pool(3).unwrap(), &pool(3).unwrap()));
    }

    #[test]
    #[allow(unsafe_code)] // fork, waitpid and _exit: the test's own, not the crate's
    fn a_forked_child_makes_its_own_pools() {
        // The parent's pool has threads; the child's copy of it has none.
        with_threads(2, || ()).unwrap();
        // Other tests look pools up at the same time: hold the lock across the fork, so that
        // the child's copy is not taken by a thread it does not have.
        let registry = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the child calls only what this test means to check (our pools, rayon,
        // allocation) and then `_exit`s, never returning into the test harness; the parent only
        // waits for it.
        let child = unsafe { libc::fork() };
        drop(registry);
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let sum: u64 = with_threads(2, || {
                use rayon::prelude::*;
                (0..1000u64).into_par_iter().sum()
            })
            .unwrap_or(0);
            // SAFETY: ends the child at once, without running the parent's destructors.
            unsafe { libc::_exit(if sum == 499_500 { 0 } else { 1 }) };
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child, writing into a local.
            let done = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
            if done == child {
                break;
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: our own child, which hangs: kill it so that the test fails, not hangs.
                unsafe { libc::kill(child, libc::SIGKILL) };
                panic!("the forked child hung in a parallel read");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status}"
        );
    }
}
