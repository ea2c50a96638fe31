//! The data of every call's store, following wasmtime's `WasiView` pattern: the WASI context,
//! the resource table and the HTTP context behind their view traits, plus what the host counts
//! for this call (memory refused, events and their bytes against the output limit).

use std::sync::Arc;
use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::scope::{CallScope, GuestEvent};
use crate::runtime::network::NetworkAccess;

/// A guest may send at most this many events per call; more are dropped (and counted in the
/// host log) so that a chatty plugin cannot grow the host's queues without bound.
const MAX_EVENTS_PER_CALL: usize = 10_000;

/// What an event costs beyond its text on the wire (the notification's JSON-RPC envelope), so
/// that a flood of empty events counts against the output limit too.
pub(crate) const EVENT_OVERHEAD: usize = 64;

/// Refuses memory growth past the call's limit, and remembers that it did.
pub(crate) struct MemoryLimiter {
    pub(crate) limit: usize,
    pub(crate) exceeded: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.limit {
            // Refuse the growth (memory.grow returns -1) and remember why: the guest usually
            // aborts next, and the error should say "memory limit", not "unreachable".
            self.exceeded = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// The data of every call's store.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) http: WasiHttpCtx,
    pub(crate) network: NetworkAccess,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) plugin: Arc<str>,
    pub(crate) scope: CallScope,
    pub(crate) deadline: Instant,
    pub(crate) events_sent: usize,
    /// Bytes of log and progress messages so far, counted against the output limit.
    pub(crate) event_bytes: usize,
    pub(crate) output_limit: usize,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.network }
    }
}

impl HostState {
    /// Counts an event of `bytes` (log, progress, resource update) against the call's output
    /// limit and event cap; false if it must be dropped. Over the output limit, the next epoch
    /// check ends the call with the output-limit error.
    pub(crate) fn admit(&mut self, bytes: usize) -> bool {
        self.event_bytes = self.event_bytes.saturating_add(bytes);
        self.events_sent += 1;
        if self.events_sent == MAX_EVENTS_PER_CALL + 1 {
            tracing::warn!(plugin = %self.plugin, "plugin sent more than {MAX_EVENTS_PER_CALL} log/progress events in one call; dropping the rest");
        }
        self.event_bytes <= self.output_limit && self.events_sent <= MAX_EVENTS_PER_CALL
    }

    /// Sends `event` to the protocol layer if it is admitted.
    pub(crate) fn send(&mut self, event: GuestEvent, bytes: usize) {
        if self.admit(bytes)
            && let Some(events) = &self.scope.events
        {
            let _ = events.send(event);
        }
    }

    /// Bytes of events so far.
    pub(crate) fn event_bytes(&self) -> usize {
        self.event_bytes
    }

    /// Whether the guest asked for more memory than its limit.
    pub(crate) fn memory_exceeded(&self) -> bool {
        self.limiter.exceeded
    }
}
