//! The async runtime that drives object_store's requests for kompakt's blocking readers.

use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;

/// One runtime per process. A child made by `fork` (Python's multiprocessing, Dask workers)
/// inherits the parent's runtime without its threads, so the owner's pid is kept and a child
/// builds its own.
static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);

fn runtime() -> std::io::Result<Arc<Runtime>> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some((owner, rt)) = slot.as_ref() {
        if *owner == pid {
            return Ok(Arc::clone(rt));
        }
        // The parent's runtime: its worker threads do not exist here, and dropping it would
        // wait for them. Forgotten, at the cost of its memory.
        if let Some((_, inherited)) = slot.take() {
            std::mem::forget(inherited);
        }
    }
    // Two workers: the requests are I/O, and the callers' threads do the decoding.
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("kompakt-net")
            .enable_all()
            .build()?,
    );
    *slot = Some((pid, Arc::clone(&rt)));
    Ok(rt)
}

/// Runs `future` to completion from blocking code. From inside another tokio runtime (a caller
/// of ours that is itself async), where blocking its thread would panic, it runs on a thread
/// of its own.
pub(crate) fn block_on<F>(future: F) -> std::io::Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        return std::thread::scope(|s| {
            s.spawn(|| rt.block_on(future))
                .join()
                .map_err(|_| std::io::Error::other("a network request's thread panicked"))
        });
    }
    Ok(rt.block_on(future))
}

/// Runs `future` on the runtime's threads and returns at once: prefetches, which a later read
/// waits for.
pub(crate) fn spawn<F>(future: F) -> std::io::Result<tokio::task::JoinHandle<()>>
where
    F: Future<Output = ()> + Send + 'static,
{
    Ok(runtime()?.spawn(future))
}
