//! Instances made ahead of calls: instantiation off a call's latency path, with every call
//! still in a fresh instance.
//!
//! A plugin that has been called keeps up to `target` never-used instances ready; a call takes
//! one (or, when none is ready, instantiates as before) and a background task makes the next.
//! What makes this as isolated as instantiating on arrival:
//! - an instance is taken out of the list by the one call that uses it, and dropped with that
//!   call's store: never returned, never used twice;
//! - it is made with no directories, no client, no events, and a budget and deadline of its own;
//!   the call's directories, client, deadline and budget replace all of that when it is taken
//!   ([`StoreBuilder::arm`](super::store::StoreBuilder::arm)), and WASI reaches them only
//!   through the store's data, at the time the guest asks;
//! - its making runs under the plugin's time and memory limits: a guest whose instantiation
//!   traps or hangs stops the making for that plugin (calls then instantiate on arrival and
//!   report the failure as before).
//!
//! The memory it costs is bounded: `target` per plugin (the operator's `prepared`), only for
//! plugins called since they were loaded, and at most [`MAX_PREPARED`] instances in the whole
//! process. A reload drops the plugin, and with it its made instances.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::error::classify;
use super::scope::CallScope;
use super::state::HostState;
use super::store::StoreBuilder;
use crate::runtime::grants::limits::{Limits, MAX_PREPARED_PER_PLUGIN, deadline_after};
use crate::runtime::grants::policy::Policy;
use crate::runtime::sandbox::guest_io::{GuestOutput, StreamKind};

/// The most instances made ahead in the whole process, whatever the plugins ask: each holds an
/// instance slot of the pool and its initial memory (a compiled guest's data, an interpreter
/// guest's page tables of its copy-on-write image).
pub const MAX_PREPARED: usize = 64;

/// Instances made ahead, now, in the whole process.
static MADE: AtomicUsize = AtomicUsize::new(0);

/// A never-used instance and its store.
pub(crate) struct Ready {
    pub(crate) store: Store<HostState>,
    pub(crate) instance: Instance,
}

/// One plugin's instances made ahead.
pub(crate) struct Prepared {
    plugin: Arc<str>,
    pre: InstancePre<HostState>,
    limits: Limits,
    policy: Arc<Policy>,
    target: usize,
    ready: Mutex<Vec<Ready>>,
    /// A task is making instances.
    filling: AtomicBool,
    /// Making one failed: this plugin instantiates on arrival from now on.
    stopped: AtomicBool,
}

impl Prepared {
    /// Keeps up to `target` instances of `pre` ready once the plugin is first called; none
    /// for a `target` of 0.
    pub(crate) fn new(
        plugin: Arc<str>,
        pre: InstancePre<HostState>,
        limits: Limits,
        policy: Arc<Policy>,
        target: usize,
    ) -> Arc<Prepared> {
        let target = target.min(MAX_PREPARED_PER_PLUGIN);
        Arc::new(Prepared {
            plugin,
            pre,
            limits,
            policy,
            target,
            ready: Mutex::new(Vec::new()),
            filling: AtomicBool::new(false),
            stopped: AtomicBool::new(target == 0 || crate::switched_off!("sandbox.prepared-instances")),
        })
    }

    /// A ready instance for one call, if there is one, and the making of its replacement: now
    /// when none is left for the next call, otherwise when this call ends (the guard), so that
    /// at low load the making does not run beside the call it follows (its page faults and
    /// TLB shootdowns reach the call's core, and the two share the machine's two cores).
    pub(crate) fn take(self: &Arc<Self>) -> (Option<Ready>, RefillWhenDone) {
        if self.stopped.load(Ordering::Relaxed) {
            return (None, RefillWhenDone(None));
        }
        let (ready, left) = {
            let mut list = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
            let ready = list.pop();
            (ready, list.len())
        };
        if ready.is_some() {
            MADE.fetch_sub(1, Ordering::Relaxed);
        }
        if left >= self.target {
            return (ready, RefillWhenDone(None));
        }
        if left == 0 {
            self.refill();
            return (ready, RefillWhenDone(None));
        }
        (ready, RefillWhenDone(Some(self.clone())))
    }

    /// Starts a task that makes instances until `target` are ready, unless one runs already.
    /// The task holds the plugin's instances only weakly: a reloaded plugin's stops.
    fn refill(self: &Arc<Self>) {
        if self.filling.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(fill(weak));
    }

    fn short(&self) -> bool {
        !self.stopped.load(Ordering::Relaxed)
            && self.ready.lock().unwrap_or_else(PoisonError::into_inner).len() < self.target
    }

    /// One instance, made under the plugin's limits with nothing granted.
    async fn make(&self) -> Result<Ready, String> {
        let stdout = GuestOutput::new(self.plugin.clone(), StreamKind::Stdout);
        let stderr = GuestOutput::new(self.plugin.clone(), StreamKind::Stderr);
        let deadline = deadline_after(self.limits.timeout);
        let builder = StoreBuilder {
            plugin: &self.plugin,
            pre: &self.pre,
            limits: self.limits,
            policy: &self.policy,
            deadline,
            stdout: &stdout,
            stderr: &stderr,
        };
        let mut store = builder.build(CallScope::default()).map_err(|e| e.to_string())?;
        let made = tokio::time::timeout_at(deadline.into(), self.pre.instantiate_async(&mut store)).await;
        stdout.finish();
        stderr.finish();
        match made {
            Ok(Ok(instance)) => Ok(Ready { store, instance }),
            Ok(Err(error)) => Err(classify(&self.plugin, self.limits, &store, Some(error), &stderr).to_string()),
            Err(_) => Err(format!("instantiating plugin `{}` took longer than its time limit", self.plugin)),
        }
    }
}

/// Starts the making of instances for a plugin when dropped, at the end of the call that took
/// one (if a tokio runtime is there to run it).
pub(crate) struct RefillWhenDone(Option<Arc<Prepared>>);

impl Drop for RefillWhenDone {
    fn drop(&mut self) {
        if let Some(prepared) = self.0.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            prepared.refill();
        }
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let ready = self.ready.get_mut().unwrap_or_else(PoisonError::into_inner);
        MADE.fetch_sub(ready.len(), Ordering::Relaxed);
    }
}

/// Makes instances for `prepared` until it has its target (or is gone, or the process has
/// [`MAX_PREPARED`]).
async fn fill(weak: Weak<Prepared>) {
    loop {
        let Some(prepared) = weak.upgrade() else { return };
        if prepared.short() && reserve() {
            match prepared.make().await {
                Ok(ready) => prepared.ready.lock().unwrap_or_else(PoisonError::into_inner).push(ready),
                Err(why) => {
                    release();
                    prepared.stopped.store(true, Ordering::Relaxed);
                    prepared.filling.store(false, Ordering::Release);
                    tracing::warn!(plugin = %prepared.plugin, "cannot make instances ahead of calls ({why}); each call instantiates its own");
                    return;
                }
            }
            continue;
        }
        prepared.filling.store(false, Ordering::Release);
        // A call that took one since the check found this task running and started none.
        let room = MADE.load(Ordering::Relaxed) < MAX_PREPARED;
        if !(room && prepared.short()) || prepared.filling.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// Counts one more instance made ahead, if the process may hold it.
fn reserve() -> bool {
    MADE.fetch_update(Ordering::AcqRel, Ordering::Relaxed, |made| (made < MAX_PREPARED).then_some(made + 1)).is_ok()
}

fn release() {
    MADE.fetch_sub(1, Ordering::Relaxed);
}
