//! Memory returned when the server goes idle. The pooling allocator gives a freed instance's
//! pages back to the kernel in batches of 64 per shard (one TLB flush per batch; the throughput
//! is measured in `knobs.rs`), so after a burst of calls with large memories up to 63 freed
//! slots per shard stay resident until more calls come: 24 results of 15 MiB left 405 MiB
//! where 43 MiB were before, for as long as nobody called. And slots reset in place (resident
//! resets, `resident.rs`) keep up to 3 MiB each for the next call. A client able to make calls
//! could leave a server holding that memory indefinitely.
//!
//! So when no call has run for [`IDLE`] (or, for a server that is never idle that long, at
//! least every [`RETURN_AT_LEAST_EVERY`] between two calls), this asks wasmtime to flush its
//! queues and give the resident pages of unused slots back: a call the patched wasmtime adds
//! (`host/vendor/PATCH.md`; wasmtime 48 has none). Before the patch this filled every shard's
//! batch with one-page instances on fresh threads. Under load the server is never idle and
//! nothing of this runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::time::Instant;
use wasmtime::Engine;

/// How long no call must run before the pool's freed slots are returned.
pub(crate) const IDLE: Duration = Duration::from_secs(1);

/// A server never idle that long (a client polling every half second) still gets its freed
/// slots returned this often, between two calls.
pub(crate) const RETURN_AT_LEAST_EVERY: Duration = Duration::from_secs(10);

/// Calls in flight, and the idle return they schedule.
pub(crate) struct IdleReturn {
    /// What returns the freed slots (the engine's pool; a counter in the tests).
    release: Box<dyn Fn() + Send + Sync>,
    in_flight: AtomicUsize,
    /// Bumped by every call that starts: quiet since the watcher last looked, or not.
    generation: AtomicU64,
    /// A watcher is waiting for the server to stay idle (at most one at a time, so a call
    /// costs two atomic additions and, at its end, a swap).
    watching: AtomicBool,
    /// When the freed slots were last returned.
    returned: Mutex<Option<Instant>>,
}

/// The server's idle return, once its engine (with the pooling allocator) exists.
static IDLE_RETURN: OnceLock<Arc<IdleReturn>> = OnceLock::new();

/// Watches the calls of `engine` (the process's pooling engine; the first one set wins).
pub(crate) fn watch(engine: &Engine) {
    let engine = engine.clone();
    let _ = IDLE_RETURN.set(IdleReturn::new(Box::new(move || {
        engine.pooling_allocator_release_idle_memory();
        tracing::debug!("returned the pool's freed memory");
    })));
}

/// Held by a call while it runs; the last one to end starts a watcher, unless one waits.
pub(crate) struct Busy(Option<Arc<IdleReturn>>);

/// A call starts (a no-op without the pooling allocator).
pub(crate) fn busy() -> Busy {
    match IDLE_RETURN.get() {
        Some(idle) => idle.busy(),
        None => Busy(None),
    }
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
    fn new(release: Box<dyn Fn() + Send + Sync>) -> Arc<IdleReturn> {
        Arc::new(IdleReturn {
            release,
            in_flight: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            returned: Mutex::new(None),
        })
    }

    fn busy(self: &Arc<Self>) -> Busy {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(Some(self.clone()))
    }

    /// Waits until no call has started for [`IDLE`] and none runs (or, between calls, until
    /// [`RETURN_AT_LEAST_EVERY`] has passed since the last return), then returns the freed
    /// slots. It stops watching only when calls run (the last one to end watches again) or
    /// after a return, and in both cases looks once more whether a call ended in between
    /// without watching (it saw this watcher and left the watch to it): round four found a
    /// call that started before the watcher's first look and ended after it, which left the
    /// slots unreturned until the next call.
    async fn wait_for_quiet(self: Arc<Self>) {
        loop {
            let seen = self.generation.load(Ordering::Relaxed);
            tokio::time::sleep(IDLE).await;
            let quiet = self.generation.load(Ordering::Relaxed) == seen;
            let running = self.in_flight.load(Ordering::Acquire) != 0;
            let overdue = self
                .returned
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_none_or(|at| at.elapsed() >= RETURN_AT_LEAST_EVERY)
                && !crate::switched_off!("sandbox.idle-return-bounded");
            if running {
                if self.stop_watching(None) {
                    return;
                }
                continue;
            }
            if !quiet && !overdue {
                continue;
            }
            let idle = self.clone();
            let _ = tokio::task::spawn_blocking(move || (idle.release)()).await;
            *self.returned.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            // Calls that started since the look are freed by the next return.
            if self.stop_watching(Some(seen)) {
                return;
            }
        }
    }

    /// Stops watching; false when a call may have ended meanwhile without watching (it saw
    /// this watcher), and then this watches on. `quiet_since`: the generation at a look that
    /// found no call running; if none started since, none can have ended unseen.
    fn stop_watching(&self, quiet_since: Option<u64>) -> bool {
        self.watching.store(false, Ordering::SeqCst);
        if quiet_since.is_some_and(|seen| self.generation.load(Ordering::SeqCst) == seen) {
            return true;
        }
        // A call that runs watches at its end; one that ended left the watch to this one,
        // unless another watcher has taken it since.
        self.in_flight.load(Ordering::SeqCst) != 0 || self.watching.swap(true, Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted() -> (Arc<IdleReturn>, Arc<AtomicUsize>) {
        let returns = Arc::new(AtomicUsize::new(0));
        let counter = returns.clone();
        (IdleReturn::new(Box::new(move || _ = counter.fetch_add(1, Ordering::SeqCst))), returns)
    }

    /// Round four: a call that starts before the watcher first looks and ends after it looked
    /// (while it still watched) left the freed slots unreturned; and a client calling every
    /// half second kept the server from ever being idle for a second.
    #[tokio::test(start_paused = true)]
    async fn freed_slots_are_returned_whatever_the_calls_timing() {
        let (idle, returns) = counted();
        // A call ends: a watcher starts. Another starts at once and runs past the watcher's
        // first look, ending while it still watches.
        drop(idle.busy());
        let long = idle.busy();
        tokio::time::sleep(IDLE + Duration::from_millis(10)).await;
        drop(long);
        tokio::time::sleep(IDLE * 3).await;
        assert_eq!(returns.load(Ordering::SeqCst), 1, "returned once the last call ended");
        // The race itself: a call ended while a watcher watched (its end left the watch to it):
        // the watcher that would stop goes on.
        idle.watching.store(true, Ordering::SeqCst);
        assert!(!idle.stop_watching(None), "no call runs and nobody else watches: this watcher goes on");
        idle.watching.store(false, Ordering::SeqCst);

        // A call every half second, for 30 s: returned between calls at least every 10 s.
        let before = returns.load(Ordering::SeqCst);
        for _ in 0..60 {
            drop(idle.busy());
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        assert!(returns.load(Ordering::SeqCst) - before >= 2, "{}", returns.load(Ordering::SeqCst) - before);
    }
}
