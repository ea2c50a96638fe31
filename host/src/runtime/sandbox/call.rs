//! Running one call: a store armed for it, its deadline, its output captured, and how it ended.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::error::{CallError, Interrupt, classify};
use super::prepared::Ready;
use super::scope::CallScope;
use super::state::HostState;
use super::store::StoreBuilder;

use crate::runtime::grants::limits::{Limits, deadline_after};
use crate::runtime::grants::policy::Policy;
use crate::runtime::sandbox::budget::CallBudget;
use crate::runtime::sandbox::guest_io::{GuestOutput, StreamKind};
use crate::telemetry::metrics::{Open, metrics};

/// The work of one call, given the fresh store and instance.
pub type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// A call whose future is dropped before it ends (its caller went away without a cancellation
/// token's say: an HTTP request's future, dropped on disconnect) says so, as a cancelled call
/// that ends does; the guest stops with the future, its store and pool slot dropped with it.
struct Unfinished<'a>(&'a Arc<str>);

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if !crate::switched_off!("sandbox.cancellation-logged") {
            tracing::warn!("call to plugin `{}` was cancelled: its caller went away", self.0);
        }
    }
}

/// Runs `work` in a fresh instance of `pre` under `limits` and `policy`, and turns every way
/// it can fail into a [`CallError`] that names `plugin`. The instance is `ready`, made ahead
/// and never used, when the caller has one; otherwise it is instantiated here. Returns the
/// result and the call's budget, with everything the guest emitted during the call charged to
/// it.
pub(crate) async fn run_call<R: Send>(
    plugin: &Arc<str>,
    pre: &InstancePre<HostState>,
    limits: Limits,
    policy: &Policy,
    scope: CallScope,
    ready: Option<Ready>,
    work: impl for<'a> FnOnce(&'a mut Store<HostState>, Instance) -> CallFuture<'a, R> + Send,
) -> Result<(R, CallBudget), CallError> {
    let stdout = GuestOutput::new(plugin.clone(), StreamKind::Stdout);
    let stderr = GuestOutput::new(plugin.clone(), StreamKind::Stderr);
    let limits = Limits { timeout: scope.timeout.unwrap_or(limits.timeout), ..limits };
    let deadline = deadline_after(limits.timeout);
    let cancel = scope.cancel.clone();
    let builder = StoreBuilder { plugin, pre, limits, policy, deadline, stdout: &stdout, stderr: &stderr };
    // Counted until the call ends, a call's future dropped midway included.
    let _in_use = Open::gauge(&metrics().instances_in_use);
    let _busy = crate::runtime::engine::idle::busy();
    let (mut store, made) = match ready {
        Some(Ready { mut store, instance }) => {
            builder.arm(&mut store, scope)?;
            (store, Some(instance))
        }
        None => (builder.build(scope)?, None),
    };

    let outcome = {
        let unfinished = Unfinished(plugin);
        let run = async {
            let instance = match made {
                Some(instance) => instance,
                None => pre.instantiate_async(&mut store).await?,
            };
            work(&mut store, instance).await
        };
        // The epoch callback stops a guest that computes; these stop one that waits on the
        // host (a sleep, a poll), where no epoch check runs.
        let outcome = tokio::select! {
            result = run => result.map_err(Some),
            () = cancel.cancelled(), if !crate::switched_off!("sandbox.cancellation") => Err(None),
            () = tokio::time::sleep_until(deadline.into()), if !crate::switched_off!("sandbox.deadline") => {
                Err(Some(Interrupt::Deadline.into()))
            }
        };
        std::mem::forget(unfinished);
        outcome
    };
    stdout.finish();
    stderr.finish();
    let store_grows = store.data().limiter.grows;
    let budget = &store.data().budget;
    // On the guest call's span (`Plugin::invoke`), if it has one.
    tracing::Span::current().record("mcpbox.guest.memory_peak_bytes", store.data().limiter.peak as i64);
    let result = match outcome {
        _ if budget.exhausted() => {
            Err(CallError::OutputTooLarge { plugin: plugin.clone(), size: budget.used(), limit: budget.limit() })
        }
        Ok(value) => Ok((value, store.into_data().budget)),
        Err(error) => Err(classify(plugin, limits, &store, error, &stderr)),
    };
    if store_grows > 0 {
        metrics().memory_grows.with_label_values(&[plugin]).inc_by(u64::from(store_grows));
    }
    if let Err(error) = &result {
        let metrics = metrics();
        match error {
            CallError::Timeout { .. } => metrics.timeouts.with_label_values(&[plugin]).inc(),
            CallError::OutOfMemory { .. } => metrics.memory_limit_hits.with_label_values(&[plugin]).inc(),
            _ => {}
        }
    }
    result
}
