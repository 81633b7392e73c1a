//! Thread pools for the reader's and the writer's parallel work: one pool per thread count,
//! kept for the life of the process.

use kompakt::{Error, Result};
use std::collections::HashMap;

/// Runs `f` on a pool of `threads` threads (0: rayon's global pool, all cores).
pub(crate) fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    Ok(match pool(threads)? {
        Some(pool) => pool.install(f),
        None => f(),
    })
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
    let a = match pool(threads)? {
        Some(pool) => pool.in_place_scope(|s| {
            s.spawn(move |_| *slot = Some(background()));
            foreground()
        }),
        None => rayon::in_place_scope(|s| {
            s.spawn(move |_| *slot = Some(background()));
            foreground()
        }),
    };
    Ok((a, b.expect("a scope ends after the work it spawned")))
}

/// The pool of `threads` threads, `None` for rayon's global pool (when it has that many).
/// `threads` means what it means everywhere ([`kompakt::stream::resolve_threads`]: 0 is all
/// available cores, at most 256). Pools are kept per size: starting threads for every small
/// read would cost more than the read.
fn pool(threads: usize) -> Result<Option<std::sync::Arc<rayon::ThreadPool>>> {
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let threads = kompakt::stream::resolve_threads(threads);
    if threads == rayon::current_num_threads() {
        return Ok(None);
    }
    let pool = {
        let mut pools = POOLS
            .get_or_init(Default::default)
            .lock()
            .map_err(|_| Error::Internal("the thread pool registry is poisoned".into()))?;
        match pools.get(&threads) {
            Some(p) => p.clone(),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| Error::Usage(format!("cannot start {threads} threads: {e}")))?;
                pools.entry(threads).or_insert(Arc::new(p)).clone()
            }
        }
    };
    Ok(Some(pool))
}
