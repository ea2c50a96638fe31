//! The data of every call's store, following wasmtime's `WasiView` pattern: the WASI context,
//! the resource table and the HTTP context behind their view traits, plus what the host counts
//! for this call (memory refused, and everything the guest emits, in its [`CallBudget`]).

use std::sync::Arc;
use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::scope::{CallScope, GuestEvent};
use crate::runtime::effects::file_door::FileDoor;
use crate::runtime::effects::filesystem::Files;
use crate::runtime::effects::network::NetworkAccess;
use crate::runtime::sandbox::budget::{CallBudget, Emission, Refusal};
use crate::runtime::sandbox::guest_io::GuestOutput;

/// Refuses memory growth past the call's limit, and remembers that it did.
pub(crate) struct MemoryLimiter {
    pub(crate) limit: usize,
    pub(crate) exceeded: bool,
    /// The most linear memory any of the call's memories grew to (for its trace span).
    pub(crate) peak: usize,
    /// `memory.grow`s that took memory beyond its size at instantiation (a guest whose heap
    /// grows in every call pays page faults on fresh zero pages each time: the benchmark's
    /// `mcpbox_guest_memory_grows_total` per call).
    pub(crate) grows: u32,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.limit && !crate::switched_off!("sandbox.memory-limit") {
            // Refuse the growth (memory.grow returns -1) and remember why: the guest usually
            // aborts next, and the error should say "memory limit", not "unreachable".
            self.exceeded = true;
            return Ok(false);
        }
        self.peak = self.peak.max(desired);
        if current > 0 {
            self.grows += 1;
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
    /// Everything the guest emits during the call, against its output limit.
    pub(crate) budget: CallBudget,
    /// The guest's stderr, whose log budget `host.log` shares on the way to the host's log.
    pub(crate) stderr: GuestOutput,
    /// The call's filesystem door: what its descriptors stand for, its write budgets.
    pub(crate) files: FileDoor,
    /// The browser permissions the plugin's MCP Apps may ask for (`_meta` it sets is checked
    /// against these and `network`'s policy).
    pub(crate) ui_permissions: Arc<[String]>,
    /// The served tools the plugin may call (`[plugin.NAME] may_call`).
    pub(crate) may_call: crate::runtime::grants::may_call::MayCall,
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
    /// The filesystem door's view of this store.
    pub(crate) fn files(&mut self) -> Files<'_> {
        Files { wasi: &mut self.wasi, table: &mut self.table, door: &mut self.files }
    }

    /// Charges one emission of `kind` of `bytes` (its JSON on the wire) to the call's budget;
    /// false if it must not go out. Past the output limit, the next epoch check (or the host
    /// import's caller) ends the call with the output-limit error; past a kind's cap, this one
    /// is dropped and the host log says so once a call.
    pub(crate) fn emit(&mut self, kind: Emission, bytes: usize) -> bool {
        match self.budget.charge(kind, bytes) {
            Ok(()) => true,
            Err(Refusal::OverLimit) => false,
            Err(Refusal::TooMany(kind)) => {
                if self.budget.first_too_many(kind) {
                    tracing::warn!(plugin = %self.plugin, "plugin sent more than {} {} in one call; dropping the rest", kind.cap(), kind.describe());
                }
                false
            }
        }
    }

    /// Sends `event` to the protocol layer if the budget admits its `bytes`.
    pub(crate) fn send(&mut self, event: GuestEvent, bytes: usize) {
        if self.emit(Emission::Event, bytes)
            && let Some(events) = &self.scope.events
        {
            let _ = events.send(event);
        }
    }

    /// Whether the guest asked for more memory than its limit.
    pub(crate) fn memory_exceeded(&self) -> bool {
        self.limiter.exceeded
    }
}
