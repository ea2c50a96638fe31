//! Memory returned when the server goes idle. The pooling allocator gives a freed instance's
//! pages back to the kernel in batches of 64 per shard (one TLB flush per batch; the throughput
//! is measured in `engine.rs`), so after a burst of calls with large memories up to 63 freed
//! slots per shard stay resident until more calls come: 24 results of 15 MiB left 405 MiB
//! where 43 MiB were before, for as long as nobody called. A client able to make calls could
//! leave a server holding that memory indefinitely.
//!
//! So when no call has run for [`IDLE`], this fills every shard's batch with instances of a
//! module of one memory page, and wasmtime returns the whole batch. wasmtime 48 offers no call
//! to flush its queues; a shard is a thread's, assigned round-robin when the thread first
//! frees or takes a slot, so the filling runs on fresh threads, twice as many as there are
//! shards. Under load the server is never idle and nothing of this runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::{Engine, Instance, Module, Store};

/// How long no call must run before the pool's freed slots are returned.
pub(crate) const IDLE: Duration = Duration::from_secs(1);

/// Instances a thread makes and drops: one batch of the pool's (`decommit_batch_size`).
const BATCH: usize = 64;

/// A module with one page of memory and nothing else (`(module (memory 1))`): each instance
/// dropped puts one region into its thread's batch.
const ONE_PAGE: &[u8] = b"\0asm\x01\0\0\0\x05\x03\x01\x00\x01";

/// Calls in flight, and the idle return they schedule.
pub(crate) struct IdleReturn {
    engine: Engine,
    in_flight: AtomicUsize,
    /// Bumped by every call that starts: quiet since the watcher last looked, or not.
    generation: AtomicU64,
    /// A watcher is waiting for the server to stay idle (at most one at a time, so a call
    /// costs two atomic additions and, at its end, a swap).
    watching: AtomicBool,
    module: OnceLock<Option<Module>>,
}

/// The server's idle return, once its engine (with the pooling allocator) exists.
static IDLE_RETURN: OnceLock<Arc<IdleReturn>> = OnceLock::new();

/// Watches the calls of `engine` (the process's pooling engine; the first one set wins).
pub(crate) fn watch(engine: &Engine) {
    let _ = IDLE_RETURN.set(Arc::new(IdleReturn {
        engine: engine.clone(),
        in_flight: AtomicUsize::new(0),
        generation: AtomicU64::new(0),
        watching: AtomicBool::new(false),
        module: OnceLock::new(),
    }));
}

/// Held by a call while it runs; the last one to end starts a watcher, unless one waits.
pub(crate) struct Busy(Option<Arc<IdleReturn>>);

/// A call starts (a no-op without the pooling allocator).
pub(crate) fn busy() -> Busy {
    let Some(idle) = IDLE_RETURN.get() else { return Busy(None) };
    idle.generation.fetch_add(1, Ordering::Relaxed);
    idle.in_flight.fetch_add(1, Ordering::AcqRel);
    Busy(Some(idle.clone()))
}

impl Drop for Busy {
    fn drop(&mut self) {
        let Some(idle) = self.0.take() else { return };
        if idle.in_flight.fetch_sub(1, Ordering::AcqRel) != 1 || crate::switched_off!("sandbox.idle-return") {
            return;
        }
        if idle.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            idle.watching.store(false, Ordering::Release);
            return;
        };
        runtime.spawn(idle.wait_for_quiet());
    }
}

impl IdleReturn {
    /// Waits until no call has started for [`IDLE`] and none runs, then returns the freed
    /// slots; stops watching (the next call to end watches again) as soon as calls run.
    async fn wait_for_quiet(self: Arc<Self>) {
        loop {
            let seen = self.generation.load(Ordering::Relaxed);
            tokio::time::sleep(IDLE).await;
            let quiet = self.generation.load(Ordering::Relaxed) == seen;
            if self.in_flight.load(Ordering::Acquire) == 0 {
                if !quiet {
                    continue;
                }
                let idle = self.clone();
                let _ = tokio::task::spawn_blocking(move || idle.return_freed_slots()).await;
            }
            self.watching.store(false, Ordering::Release);
            // A call that ended while this still watched did not start a watcher of its own.
            if self.in_flight.load(Ordering::Acquire) != 0
                || self.generation.load(Ordering::Relaxed) == seen && quiet
                || self.watching.swap(true, Ordering::AcqRel)
            {
                return;
            }
        }
    }

    fn return_freed_slots(&self) {
        let module = self.module.get_or_init(|| match Module::new(&self.engine, ONE_PAGE) {
            Ok(module) => Some(module),
            Err(e) => {
                tracing::warn!("cannot compile the module that returns idle memory: {e:#}");
                None
            }
        });
        let Some(module) = module else { return };
        let shards = std::thread::available_parallelism().map_or(1, |n| n.get()).min(16);
        let threads: Vec<_> = (0..2 * shards)
            .filter_map(|_| {
                let (engine, module) = (self.engine.clone(), module.clone());
                std::thread::Builder::new().name("mcpbox-idle".into()).spawn(move || fill_batch(&engine, &module)).ok()
            })
            .collect();
        for thread in threads {
            let _ = thread.join();
        }
        tracing::debug!("returned the pool's freed slots after {} s idle", IDLE.as_secs());
    }
}

/// Makes and drops a batch of one-page instances on this (fresh) thread.
fn fill_batch(engine: &Engine, module: &Module) {
    for _ in 0..BATCH {
        // The module has no code: nothing runs, no epoch deadline is ever checked.
        let mut store = Store::new(engine, ());
        if futures::executor::block_on(Instance::new_async(&mut store, module, &[])).is_err() {
            return;
        }
    }
}
