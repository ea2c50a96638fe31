//! One call, one sandbox: a fresh `Store` and WASI context per call, built from the call's
//! grants, with a deadline, a memory limit, captured output and cancellation. Following
//! wasmtime's `WasiView` pattern, the store's data holds the `WasiCtx`, the `ResourceTable`,
//! the limits and our per-call context.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use wasmtime::component::{Instance, InstancePre, ResourceTable};
use wasmtime::{ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::bindings::{host, types};
use crate::guest_io::{GuestOutput, StreamKind};
use crate::network::NetworkAccess;
use crate::policy::Policy;
use crate::roots::Grant;

/// Limits every call runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time from instantiation to result.
    pub timeout: Duration,
    /// Linear memory per instance, in bytes.
    pub memory_bytes: usize,
    /// What one call may send: its result (text, binary data, structured content) and its
    /// log and progress messages, in bytes. Bounds what reaches the protocol stream and the
    /// client, whatever the guest's memory allows.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { timeout: Duration::from_secs(30), memory_bytes: 256 << 20, output_bytes: 16 << 20 }
    }
}

/// Log and progress reports of a running guest, for the protocol layer to forward.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestEvent {
    Log { level: types::LogLevel, logger: Option<String>, data: serde_json::Value },
    Progress { progress: f64, total: Option<f64>, message: Option<String> },
}

/// A guest may send at most this many events per call; more are dropped (and counted in the
/// host log) so that a chatty plugin cannot grow the host's queues without bound.
const MAX_EVENTS_PER_CALL: usize = 10_000;

/// Requests a guest may make of the client, answered by the protocol layer.
pub trait ClientRequests: Send + Sync {
    /// Sends the MCP request `method` with JSON `params` to the client and returns its JSON
    /// result, or why there is none.
    fn request(
        &self,
        method: ClientMethod,
        params: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, ClientError>>;
}

/// Why a client request has no answer.
#[derive(Debug, Clone)]
pub enum ClientError {
    /// The client refused or cannot answer; the guest sees this message.
    Refused(String),
    /// A stateless (2026-07-28) client must be asked first: the call stops, the protocol
    /// layer returns the questions, and the client repeats the call with the answers.
    InputRequired,
    /// A stateless (2026-07-28) client did not declare the capability the question needs:
    /// the call stops with MCP's MissingRequiredClientCapability error.
    MissingCapability(&'static str),
}

/// The client requests a guest can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMethod {
    /// `sampling/createMessage`
    Sample,
    /// `elicitation/create`
    Elicit,
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Per-call context from the protocol layer.
#[derive(Clone, Default)]
pub struct CallScope {
    /// The shared roots this session grants (the operator's, narrowed by the client's roots).
    pub grants: Arc<[Grant]>,
    /// The client's roots (canonical paths) when it has told them; plugin directories the
    /// operator wants narrowed are intersected with these.
    pub client_roots: Option<Arc<[std::path::PathBuf]>>,
    pub cancel: CancellationToken,
    pub events: Option<mpsc::UnboundedSender<GuestEvent>>,
    /// Where `sample` and `elicit` go; `None` refuses them.
    pub client: Option<Arc<dyn ClientRequests>>,
    /// Told when the guest reports that one of its resources changed (`resource-updated`).
    pub resource_updated: Option<Arc<dyn Fn(String) + Send + Sync>>,
}

/// Why a call produced no result. Each variant names the plugin, and maps to one MCP outcome
/// in the protocol layer (invalid params, a tool result with `isError`, an internal error).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("plugin `{plugin}` has no {what} `{name}`")]
    NotFound { plugin: Arc<str>, what: &'static str, name: String },
    #[error("no plugin has a resource at `{uri}`")]
    UnknownResource { uri: String },
    #[error("plugin `{plugin}` rejected the arguments: {message}")]
    InvalidArguments { plugin: Arc<str>, message: String },
    #[error("plugin `{plugin}` failed: {message}")]
    Failed { plugin: Arc<str>, message: String },
    #[error("plugin `{plugin}` exceeded its time limit of {}", humanize(*limit))]
    Timeout { plugin: Arc<str>, limit: Duration },
    #[error("plugin `{plugin}` exceeded its memory limit of {} MiB", limit >> 20)]
    OutOfMemory { plugin: Arc<str>, limit: usize },
    #[error("plugin `{plugin}` sent {size} bytes (result, logs and progress), over its output limit of {}", mib(*limit))]
    OutputTooLarge { plugin: Arc<str>, size: usize, limit: usize },
    #[error("plugin `{plugin}` is at its limit of concurrent calls; no slot freed within {}", humanize(*waited))]
    Busy { plugin: Arc<str>, waited: Duration },
    #[error("plugin `{plugin}` could not start: the host runs its maximum number of instances at once; try again")]
    HostBusy { plugin: Arc<str> },
    #[error("plugin `{plugin}` crashed: {cause}")]
    Crashed { plugin: Arc<str>, cause: String },
    #[error("call to plugin `{plugin}` was cancelled")]
    Cancelled { plugin: Arc<str> },
    #[error("plugin `{plugin}` needs an answer from the client first")]
    InputRequired { plugin: Arc<str> },
    #[error("plugin `{plugin}` needs the client capability `{capability}`, which the request does not declare")]
    MissingCapability { plugin: Arc<str>, capability: &'static str },
    #[error("plugin `{plugin}` returned invalid {what}: {message}")]
    BadOutput { plugin: Arc<str>, what: &'static str, message: String },
}

fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{} s", d.as_secs()) } else { format!("{} ms", d.as_millis()) }
}

/// Why an epoch check stopped a guest.
#[derive(Debug, thiserror::Error)]
enum Interrupt {
    #[error("deadline reached")]
    Deadline,
    #[error("cancelled")]
    Cancelled,
    #[error("the client must be asked first")]
    InputRequired,
    #[error("the client lacks the capability `{0}`")]
    MissingCapability(&'static str),
    #[error("output limit reached")]
    OutputLimit,
}

struct MemoryLimiter {
    limit: usize,
    exceeded: bool,
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
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    network: NetworkAccess,
    limiter: MemoryLimiter,
    plugin: Arc<str>,
    scope: CallScope,
    deadline: Instant,
    events_sent: usize,
    /// Bytes of log and progress messages so far, counted against the output limit.
    event_bytes: usize,
    output_limit: usize,
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
    fn admit(&mut self, bytes: usize) -> bool {
        self.event_bytes = self.event_bytes.saturating_add(bytes);
        self.events_sent += 1;
        if self.events_sent == MAX_EVENTS_PER_CALL + 1 {
            tracing::warn!(plugin = %self.plugin, "plugin sent more than {MAX_EVENTS_PER_CALL} log/progress events in one call; dropping the rest");
        }
        self.event_bytes <= self.output_limit && self.events_sent <= MAX_EVENTS_PER_CALL
    }

    fn send(&mut self, event: GuestEvent, bytes: usize) {
        if self.admit(bytes)
            && let Some(events) = &self.scope.events
        {
            let _ = events.send(event);
        }
    }
}

impl HostState {
    async fn ask_client(&mut self, method: ClientMethod, request: String) -> wasmtime::Result<Result<String, String>> {
        let params: serde_json::Value = match serde_json::from_str(&request) {
            Ok(params) => params,
            Err(e) => return Ok(Err(format!("the request is not JSON: {e}"))),
        };
        let Some(client) = self.scope.client.clone() else {
            return Ok(Err("this call cannot reach the client".to_owned()));
        };
        tracing::debug!(plugin = %self.plugin, ?method, "guest asks the client");
        match client.request(method, params).await {
            Ok(result) => Ok(Ok(result.to_string())),
            Err(ClientError::Refused(reason)) => Ok(Err(reason)),
            Err(ClientError::InputRequired) => Err(Interrupt::InputRequired.into()),
            Err(ClientError::MissingCapability(capability)) => Err(Interrupt::MissingCapability(capability).into()),
        }
    }
}

impl types::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: types::LogLevel, logger: Option<String>, data: String) {
        let data = serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data));
        let plugin = &self.plugin;
        use types::LogLevel as L;
        match level {
            L::Debug => tracing::debug!(target: "mcpbox::guest", %plugin, logger, %data),
            L::Info | L::Notice => tracing::info!(target: "mcpbox::guest", %plugin, logger, %data),
            L::Warning => tracing::warn!(target: "mcpbox::guest", %plugin, logger, %data),
            _ => tracing::error!(target: "mcpbox::guest", %plugin, logger, %data),
        }
        let bytes = EVENT_OVERHEAD + logger.as_ref().map_or(0, String::len) + data.to_string().len();
        self.send(GuestEvent::Log { level, logger, data }, bytes);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        let bytes = EVENT_OVERHEAD + message.as_ref().map_or(0, String::len);
        self.send(GuestEvent::Progress { progress, total, message }, bytes);
    }

    fn cancelled(&mut self) -> bool {
        self.scope.cancel.is_cancelled()
    }

    async fn sample(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_client(ClientMethod::Sample, request).await
    }

    async fn elicit(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_client(ClientMethod::Elicit, request).await
    }

    fn resource_updated(&mut self, uri: String) {
        if self.admit(EVENT_OVERHEAD + uri.len())
            && let Some(notify) = &self.scope.resource_updated
        {
            notify(uri);
        }
    }

    fn granted_dirs(&mut self) -> Vec<host::GrantedDir> {
        self.scope
            .grants
            .iter()
            .map(|g| host::GrantedDir { name: g.name.clone(), guest_path: g.guest_path.clone(), writable: g.writable })
            .collect()
    }
}

/// What an event costs beyond its text on the wire (the notification's JSON-RPC envelope), so
/// that a flood of empty events counts against the output limit too.
const EVENT_OVERHEAD: usize = 64;

/// The work of one call, given the fresh store and instance.
pub type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

/// Runs `work` in a fresh instance of `pre` under `limits` and `policy`, and turns every way
/// it can fail into a [`CallError`] that names `plugin`. Returns the result and the bytes of
/// log and progress messages the guest sent, which count against the output limit.
pub async fn run_call<R: Send>(
    plugin: &Arc<str>,
    pre: &InstancePre<HostState>,
    limits: Limits,
    policy: &Policy,
    scope: CallScope,
    work: impl for<'a> FnOnce(&'a mut Store<HostState>, Instance) -> CallFuture<'a, R> + Send,
) -> Result<(R, usize), CallError> {
    let stdout = GuestOutput::new(plugin.clone(), StreamKind::Stdout);
    let stderr = GuestOutput::new(plugin.clone(), StreamKind::Stderr);
    let deadline = Instant::now() + limits.timeout;
    let cancel = scope.cancel.clone();
    let mut store = new_store(plugin, pre, limits, policy, scope, deadline, &stdout, &stderr)?;

    let outcome = {
        let run = async {
            let instance = pre.instantiate_async(&mut store).await?;
            work(&mut store, instance).await
        };
        // The epoch callback stops a guest that computes; these stop one that waits on the
        // host (a sleep, a poll), where no epoch check runs.
        tokio::select! {
            result = run => result.map_err(Some),
            () = cancel.cancelled() => Err(None),
            () = tokio::time::sleep_until(deadline.into()) => Err(Some(Interrupt::Deadline.into())),
        }
    };
    stdout.finish();
    stderr.finish();
    let event_bytes = store.data().event_bytes;
    match outcome {
        _ if event_bytes > limits.output_bytes => {
            Err(CallError::OutputTooLarge { plugin: plugin.clone(), size: event_bytes, limit: limits.output_bytes })
        }
        Ok(value) => Ok((value, event_bytes)),
        Err(error) => Err(classify(plugin, limits, &store, error, &stderr)),
    }
}

#[allow(clippy::too_many_arguments, reason = "one call's whole set-up, each piece distinct")]
fn new_store(
    plugin: &Arc<str>,
    pre: &InstancePre<HostState>,
    limits: Limits,
    policy: &Policy,
    scope: CallScope,
    deadline: Instant,
    stdout: &GuestOutput,
    stderr: &GuestOutput,
) -> Result<Store<HostState>, CallError> {
    let mut wasi = WasiCtxBuilder::new();
    // Deny by default: no arguments, no stdin, no sockets, no DNS; only the grants, and only
    // the environment variables the operator configured for this plugin. (Outgoing HTTP, if
    // granted, goes through `NetworkAccess`, not through sockets.)
    wasi.stdout(stdout.clone()).stderr(stderr.clone());
    wasi.envs(&policy.env);
    wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
    for grant in scope.grants.iter() {
        let perms = if grant.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
        wasi.preopened_dir(&grant.host_path, &grant.guest_path, perms).map_err(|e| CallError::Failed {
            plugin: plugin.clone(),
            message: format!("cannot open granted directory {}: {e}", grant.host_path.display()),
        })?;
    }
    let state = HostState {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        http: WasiHttpCtx::new(),
        network: NetworkAccess {
            plugin: plugin.clone(),
            policy: policy.network.clone(),
            events: scope.events.clone(),
            denials: Arc::default(),
        },
        limiter: MemoryLimiter { limit: limits.memory_bytes, exceeded: false },
        plugin: plugin.clone(),
        scope,
        deadline,
        events_sent: 0,
        event_bytes: 0,
        output_limit: limits.output_bytes,
    };
    let mut store = Store::new(pre.engine(), state);
    store.limiter(|state| &mut state.limiter);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|context| {
        let state = context.data();
        if state.scope.cancel.is_cancelled() {
            return Err(Interrupt::Cancelled.into());
        }
        if Instant::now() >= state.deadline {
            return Err(Interrupt::Deadline.into());
        }
        if state.event_bytes > state.output_limit {
            return Err(Interrupt::OutputLimit.into());
        }
        // Yield so that a guest that computes for long shares its tokio thread fairly.
        Ok(UpdateDeadline::Yield(1))
    });
    Ok(store)
}

fn classify(
    plugin: &Arc<str>,
    limits: Limits,
    store: &Store<HostState>,
    error: Option<wasmtime::Error>,
    stderr: &GuestOutput,
) -> CallError {
    let plugin = plugin.clone();
    let Some(error) = error else { return CallError::Cancelled { plugin } };
    if store.data().limiter.exceeded {
        return CallError::OutOfMemory { plugin, limit: limits.memory_bytes };
    }
    match error.downcast_ref::<Interrupt>() {
        Some(Interrupt::Deadline) => return CallError::Timeout { plugin, limit: limits.timeout },
        Some(Interrupt::Cancelled) => return CallError::Cancelled { plugin },
        Some(Interrupt::InputRequired) => return CallError::InputRequired { plugin },
        Some(Interrupt::MissingCapability(capability)) => {
            return CallError::MissingCapability { plugin, capability };
        }
        Some(Interrupt::OutputLimit) => {
            let size = store.data().event_bytes;
            return CallError::OutputTooLarge { plugin, size, limit: limits.output_bytes };
        }
        None => {}
    }
    if error.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some() {
        return CallError::HostBusy { plugin };
    }
    let cause = match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::StackOverflow) => "stack overflow (wasm stack limit reached)".to_owned(),
        Some(trap) => match panic_message(&stderr.tail()) {
            Some(panic) => format!("{panic} ({trap})"),
            None => format!("{trap}"),
        },
        None => format!("{error:#}"),
    };
    CallError::Crashed { plugin, cause }
}

/// The message of a Rust panic, from what the guest printed to stderr.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at")?;
    let mut lines = stderr[start..].lines();
    let location = lines.next()?.trim_end_matches(':');
    Some(match lines.next() {
        Some(message) => format!("{location}: {}", message.trim()),
        None => location.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn finds_the_panic_message() {
        let stderr = "noise\nthread '<unnamed>' panicked at src/lib.rs:5:9:\nboom\nnote: run with RUST_BACKTRACE";
        assert_eq!(panic_message(stderr).unwrap(), "panicked at src/lib.rs:5:9: boom");
        assert!(panic_message("all fine").is_none());
    }
}
