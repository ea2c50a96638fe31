//! Memory returned when the server goes idle. The pooling allocator gives a freed instance's
//! pages back to the kernel in batches of 64 per shard (one TLB flush per batch; the throughput
//! is measured in `knobs.rs`), so after a burst of calls with large memories up to 63 freed
//! slots per shard stay resident until more calls come: 24 results of 15 MiB left 405 MiB
//! where 43 MiB were before, for as long as nobody called. And slots reset in place (resident
//! resets, `resident.rs`) keep up to 3 MiB each for the next call. A client able to make calls
//! could leave a server holding that memory indefinitely.
//!
//! So when no call has run for [`IDLE`], this asks wasmtime to flush its queues and give the
//! resident pages of unused slots back: a call the patched wasmtime adds
//! (`host/vendor/PATCH.md`; wasmtime 48 has none). Before the patch this filled every shard's
//! batch with one-page instances on fresh threads. Under load the server is never idle and
//! nothing of this runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use wasmtime::Engine;

/// How long no call must run before the pool's freed slots are returned.
pub(crate) const IDLE: Duration = Duration::from_secs(1);

/// Calls in flight, and the idle return they schedule.
pub(crate) struct IdleReturn {
    engine: Engine,
    in_flight: AtomicUsize,
    /// Bumped by every call that starts: quiet since the watcher last looked, or not.
    generation: AtomicU64,
    /// A watcher is waiting for the server to stay idle (at most one at a time, so a call
    /// costs two atomic additions and, at its end, a swap).
    watching: AtomicBool,
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
        self.engine.pooling_allocator_release_idle_memory();
        tracing::debug!("returned the pool's freed memory after {} s idle", IDLE.as_secs());
    }
}
