//! What the protocol layer hands a call: its grants, its cancellation, where its guest's
//! events and questions go. The runtime defines these as plain types and traits, so that it
//! never depends on the protocol layer; `mcp` implements them for each era.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::runtime::effects::record::EffectLog;
use crate::runtime::engine::bindings::types;
use crate::runtime::grants::credentials::LinkedAccounts;
use crate::runtime::grants::roots::Grant;
use crate::runtime::sandbox::budget::OutputHold;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Log and progress reports of a running guest, for the protocol layer to forward.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestEvent {
    /// A log message (`host.log`), or a refusal the host reports beside the guest's logs.
    Log {
        /// Its severity.
        level: types::LogLevel,
        /// The logger's name, if the guest gave one.
        logger: Option<String>,
        /// The message: JSON if the guest sent JSON, else a string.
        data: serde_json::Value,
    },
    /// A progress report (`host.progress`).
    Progress {
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// What is happening.
        message: Option<String>,
    },
}

/// Requests a guest may make of the client, answered by the protocol layer.
pub trait ClientRequests: Send + Sync {
    /// Asks the client `questions` and returns one answer per question, in order: the
    /// client's JSON result or why there is none. The whole ask fails with
    /// [`ClientError::InputRequired`] when a stateless client must answer some of them first.
    fn ask(
        &self,
        questions: Vec<Question>,
    ) -> BoxFuture<'static, Result<Vec<Result<serde_json::Value, String>>, ClientError>>;

    /// Whether the client declared what `method` needs.
    fn offers(&self, method: ClientMethod) -> bool;

    /// Keeps a guest's state for the next round of a stateless request; dropped where calls
    /// are not run again (the default).
    fn save_state(&self, _state: Vec<u8>) {}

    /// What the previous round of this request kept, if any.
    fn saved_state(&self) -> Option<Vec<u8>> {
        None
    }

    /// Goes on with the call as a task, with this status message; refused with the reason
    /// where the request cannot (the default).
    fn detach(&self, _status_message: Option<String>) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(std::future::ready(Err("this request cannot become a task".to_owned())))
    }
}

/// A served tool a call may call (`host.callable-tools`, WIT 0.1.4), as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallableTool {
    /// Its served name.
    pub name: String,
    /// The prefix of the plugin that serves it (`""`: none): what a `may_call` pattern's part
    /// before its first dot must be.
    pub prefix: String,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: serde_json::Value,
    /// The JSON Schema of its structured result, if any.
    pub output_schema: Option<serde_json::Value>,
}

/// What is left of the calling call for one inner call: it runs within both.
#[derive(Debug, Clone, Copy)]
pub struct Within {
    /// Until the caller's deadline.
    pub time: std::time::Duration,
    /// Of the caller's output limit, in bytes.
    pub output: usize,
}

/// Why an inner call has no result for the guest.
#[derive(Debug, Clone)]
pub enum InnerCallError {
    /// Refused before the callee ran (or it could not run); the guest sees this message.
    Refused(String),
    /// The request must ask the client first (a 2026-07-28 round): the calling call stops too.
    InputRequired,
    /// A 2026-07-28 client did not declare what a question of the callee needs.
    MissingCapability(&'static str),
}

/// Other served tools a call may call (WIT 0.1.4 `host.call-tool`), answered by the protocol
/// layer, which checks each call as if the client had made it (`mcp/call/compose.rs`). The plugin's
/// own `may_call` is applied before, by the sandbox.
pub trait ToolCalls: Send + Sync {
    /// The tools the principal may use and a model may call (app-only tools never), by name.
    fn callable(&self) -> Vec<CallableTool>;

    /// The prefix of the plugin that serves `name`, if a plugin does.
    fn prefix_of(&self, name: &str) -> Option<String>;

    /// Calls the tool `name`: its `CallToolResult` as JSON, or why not.
    fn call(
        &self,
        name: String,
        arguments: serde_json::Value,
        within: Within,
    ) -> BoxFuture<'static, Result<serde_json::Value, InnerCallError>>;
}

/// One question of a guest for the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The key the guest chose, `None` for the next generated one.
    pub key: Option<String>,
    /// What it asks.
    pub method: ClientMethod,
    /// The request's params.
    pub params: serde_json::Value,
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
    /// The guest broke a rule of asking (a key used twice): the call fails.
    Misuse(String),
}

/// The client requests a guest can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientMethod {
    /// `sampling/createMessage`
    Sample,
    /// `elicitation/create`
    Elicit,
    /// `roots/list`
    ListRoots,
}

/// Whether the called plugin owns a URI, as the catalog answers it.
pub type OwnsUri = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Per-call context from the protocol layer.
#[derive(Clone, Default)]
pub struct CallScope {
    /// The shared roots this session grants (the operator's, narrowed by the client's roots).
    pub grants: Arc<[Grant]>,
    /// The client's roots (canonical paths) when it has told them; plugin directories the
    /// operator wants narrowed are intersected with these.
    pub client_roots: Option<Arc<[PathBuf]>>,
    /// Cancelled when the client cancels the request or goes away.
    pub cancel: CancellationToken,
    /// Replaces the plugin's time limit for this call (a call that may become a task runs
    /// under the task deadline; the protocol layer bounds its synchronous part).
    pub timeout: Option<std::time::Duration>,
    /// Where the guest's log and progress reports go; `None` drops them (after counting).
    pub events: Option<mpsc::UnboundedSender<GuestEvent>>,
    /// Where `sample` and `elicit` go; `None` refuses them.
    pub client: Option<Arc<dyn ClientRequests>>,
    /// Told when the guest reports that one of its resources changed (`resource-updated`).
    pub resource_updated: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// Whether the called plugin owns a URI (the catalog's answer, handed in by it: the
    /// sandbox knows no catalog): an announcement of any other URI is dropped.
    pub owned_uris: Option<OwnsUri>,
    /// Where the request keeps its results' shares of the output all calls may hold, until
    /// it has answered; `None` returns them when the call returns.
    pub output_hold: Option<OutputHold>,
    /// The directory name of the principal the call is made for, under per-principal
    /// directory grants (`runtime/grants/principal_dirs.rs`); `None`: no principal, no such grant.
    pub principal_dir: Option<Arc<str>>,
    /// Who the call is made for, if the request was authorized with an access token; the
    /// plugin learns it only where the operator allows (`Policy::caller`).
    pub caller: Option<Arc<Caller>>,
    /// The caller's linked accounts (the token vault, bound to its principal), for the
    /// credentials that use them; `None`: no vault or no principal.
    pub linked: Option<Arc<dyn LinkedAccounts>>,
    /// Where the call's effects are recorded, when someone keeps a record (the audit).
    pub effects: Option<Arc<EffectLog>>,
    /// Where the `_meta` the guest sets for its result and contents goes (WIT 0.1.3), checked;
    /// `None` drops it.
    pub meta: Option<Arc<MetaSink>>,
    /// The other served tools the guest may call (`host.call-tool`); `None` refuses them.
    pub tools: Option<Arc<dyn ToolCalls>>,
}

/// The `_meta` a call set (`host.result-meta`, `host.contents-meta`), each checked already.
#[derive(Debug, Default)]
pub struct MetaSink {
    result: std::sync::Mutex<Option<serde_json::Map<String, serde_json::Value>>>,
    contents: std::sync::Mutex<std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>>,
}

/// How many contents one call may give `_meta` (a read returns a handful).
pub(crate) const MAX_CONTENTS_META: usize = 64;

impl MetaSink {
    pub(crate) fn set_result(&self, meta: serde_json::Map<String, serde_json::Value>) {
        *self.result.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(meta);
    }

    /// False when the call set `_meta` for too many contents already.
    pub(crate) fn set_contents(&self, uri: String, meta: serde_json::Map<String, serde_json::Value>) -> bool {
        let mut contents = self.contents.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if contents.len() >= MAX_CONTENTS_META && !contents.contains_key(&uri) {
            return false;
        }
        contents.insert(uri, meta);
        true
    }

    /// The result's `_meta`, taken.
    pub fn take_result(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.result.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// The `_meta` of the contents at `uri`, taken.
    pub fn take_contents(&self, uri: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.contents.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri)
    }
}

/// An authenticated principal, as the protocol layer vouches for it (never its token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The authorization server that vouched for the subject.
    pub issuer: String,
    /// The subject, unique within its issuer.
    pub subject: String,
    /// The scopes its token grants.
    pub scopes: Vec<String>,
}

impl CallScope {
    /// This scope, with its results' shares of the shared output budget kept in `hold`
    /// (which the caller keeps until it has turned the results into its answer).
    pub fn holding(mut self, hold: &OutputHold) -> CallScope {
        self.output_hold = Some(hold.clone());
        self
    }
}
