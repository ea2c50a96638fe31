//! Tools that call tools (WIT 0.1.4 `host.call-tool`): the protocol layer's side of an inner
//! call. The sandbox has already applied the caller's `may_call`; here every call takes the
//! steps of the client's own (`call/steps.rs`: a tool served and meant for the model, the
//! principal's entitlements and limits, its linked accounts, the person's yes), for the same
//! principal, and what would ask the client is refused instead; then the callee runs in a fresh
//! instance of its own plugin with its own grants (the catalog's call, as for the client),
//! within what is left of the caller's time, cancelled with it, its logs and questions going
//! where the caller's go. What is this file's own: the bounds below and the record of results.
//!
//! Bounds (a hostile composer must not turn one request into a storm): at most [`MAX_DEPTH`]
//! calls deep, at most [`MAX_CALLS_PER_REQUEST`] inner calls under one client request (and
//! `MAX_TOOL_CALLS_PER_CALL` per call, `runtime/sandbox/budget.rs`), a tool never called from
//! within its own call (a cycle), and `detach` refused inside an inner call.
//!
//! No side effect twice: in a 2026-07-28 request that stops to ask the client, the client
//! repeats the request and the composer runs again from the start. Each completed inner call's
//! result is sealed into the `requestState` (`request_state.rs`, [`Recorded`]), and the next
//! round gets it back at the same place in the order of calls, for the same tool and arguments,
//! without running it. A composer that calls something else at that place (it is not
//! deterministic) runs that call for real, and the record from there on is dropped. The record
//! is bounded by the `requestState`'s size: a request whose results do not fit fails rather
//! than running a call twice.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::MetaObject;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::request::Call;
use super::{Caller, Stop};
use crate::access::Kind;
use crate::mcp::call::checks::admission;
use crate::mcp::call::rounds::client::InnerClient;
use crate::mcp::session::Session;
use crate::mcp::wire::convert;
use crate::mcp::wire::errors::tool_failure;
use crate::runtime::CallError;
use crate::runtime::sandbox::{BoxFuture, CallScope, CallableTool, InnerCallError, ToolCalls, Within};

/// One inner call a round of a 2026-07-28 request completed, as the request's sealed
/// `requestState` carries it (`request_state.rs`): the next round gets its result back instead
/// of running it again, where the same tool is called with the same arguments at the same
/// place in the order of calls.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Recorded {
    /// Its place among the request's inner calls, in the order they started.
    pub(crate) at: usize,
    /// How many places it and the calls it made took (a replayed call makes none).
    pub(crate) places: usize,
    /// A digest of the tool's name and its arguments.
    pub(crate) call: String,
    /// Its `CallToolResult`.
    pub(crate) result: serde_json::Value,
}

/// How deep inner calls may nest below the client's call.
pub(crate) const MAX_DEPTH: usize = 4;
/// Inner calls under one client request, at every depth.
pub(crate) const MAX_CALLS_PER_REQUEST: usize = 128;

/// What every inner call under one client request shares: the count, and the record of the
/// calls completed (in this round and, replayed, in earlier ones).
pub(crate) struct Tree {
    started: AtomicUsize,
    /// Places handed out, in the order calls started (a replayed call skips its subtree's).
    places: AtomicUsize,
    /// Completed calls: those of earlier rounds first, then this round's.
    record: Mutex<Vec<Recorded>>,
}

impl Tree {
    /// A request's tree, with the calls its earlier rounds completed.
    pub(crate) fn new(recorded: Vec<Recorded>) -> Arc<Tree> {
        Arc::new(Tree { started: AtomicUsize::new(0), places: AtomicUsize::new(0), record: Mutex::new(recorded) })
    }

    /// The calls completed so far, to seal into the next round's `requestState`.
    pub(crate) fn recorded(&self) -> Vec<Recorded> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The result recorded at `at` for `call`, if the record has one; a different call there
    /// drops the record from `at` on (the composer went another way).
    fn replay(&self, at: usize, call: &str) -> Option<Recorded> {
        if crate::switched_off!("compose.completed-calls-replayed") {
            return None;
        }
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        match record.iter().position(|r| r.at == at) {
            Some(index) if record[index].call == call => Some(record[index].clone()),
            Some(_) => {
                record.retain(|r| r.at < at);
                None
            }
            None => None,
        }
    }

    fn keep(&self, recorded: Recorded) {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        record.retain(|r| r.at != recorded.at);
        record.push(recorded);
    }
}

/// The inner calls one call may make: the session they act in, the calling call (its request,
/// principal, record of effects, and the tools on the stack, the client's call first), the
/// scope they derive theirs from, and the request's tree.
pub(crate) struct InnerCalls {
    session: Session,
    caller: Call,
    /// The calling call's scope, without its `tools`.
    base: CallScope,
    tree: Arc<Tree>,
}

impl InnerCalls {
    /// The inner calls of `caller`, whose scope is `scope`.
    pub(crate) fn new(session: Session, caller: Call, scope: &CallScope, tree: Arc<Tree>) -> InnerCalls {
        let base = CallScope { tools: None, ..scope.clone() };
        InnerCalls { session, caller, base, tree }
    }
}

/// Whether a tool listed with `meta` is one a model may call: MCP Apps' `visibility` lists who
/// may (default both); an app-only tool is for its app, never for a model's code.
pub(crate) fn for_the_model(meta: Option<&MetaObject>) -> bool {
    let visibility = meta.and_then(|meta| meta.0.get("ui")).and_then(|ui| ui.get("visibility"));
    match visibility.and_then(Value::as_array) {
        Some(who) => who.iter().any(|v| v == "model") || crate::switched_off!("compose.app-only-unreachable"),
        None => true,
    }
}

/// A digest of a tool's name and its arguments (canonical JSON: serde_json sorts members).
fn call_digest(name: &str, arguments: &Value) -> String {
    let mut hasher = Sha256::new();
    let arguments = arguments.to_string();
    for part in [name, arguments.as_str()] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    crate::hex::hex(&hasher.finalize())
}

impl ToolCalls for InnerCalls {
    fn callable(&self) -> Vec<CallableTool> {
        // What is served now, as each inner call is (`Call::inner`); never a request's older
        // catalog, which would stand in for the current one in the shared lists.
        let catalog = &self.session.state.catalog();
        let Ok(lists) = self.session.state.lists(catalog) else { return Vec::new() };
        let tools = match self.session.list_filter(&self.caller.context) {
            None => lists.tools.clone(),
            Some(filter) => {
                admission::visible(&filter, catalog, catalog.tools(), &lists.tools, Kind::Tool, |e| &e.name)
            }
        };
        // Only what a call from here could run: a tool on the stack would be a cycle.
        tools
            .into_iter()
            .filter(|tool| for_the_model(tool.meta.as_ref()) && !self.caller.chain.iter().any(|on| **on == *tool.name))
            .map(|tool| CallableTool {
                prefix: catalog
                    .tool(&tool.name)
                    .map(|entry| catalog.plugins()[entry.plugin].prefix.clone())
                    .unwrap_or_default(),
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()),
                input_schema: Value::Object((*tool.input_schema).clone()),
                output_schema: tool.output_schema.map(|schema| Value::Object((*schema).clone())),
            })
            .collect()
    }

    fn prefix_of(&self, name: &str) -> Option<String> {
        let catalog = self.session.state.catalog();
        catalog.tool(name).map(|entry| catalog.plugins()[entry.plugin].prefix.clone())
    }

    fn call(
        &self,
        name: String,
        arguments: Value,
        within: Within,
    ) -> BoxFuture<'static, Result<Value, InnerCallError>> {
        let (session, caller, base, tree) =
            (self.session.clone(), self.caller.clone(), self.base.clone(), self.tree.clone());
        Box::pin(async move {
            let (called_by, depth) = (caller.chain.last().cloned().unwrap_or_default(), caller.chain.len());
            let span = tracing::info_span!(
                target: "mcpbox::request",
                "inner call",
                "otel.name" = %format_args!("tools/call {name}"),
                "otel.kind" = "internal",
                "gen_ai.tool.name" = %name,
                "mcpbox.called_by" = %called_by,
                "mcpbox.depth" = depth,
            );
            let outcome = run(session, &caller, base, tree, name.clone(), arguments, within).instrument(span).await;
            if let Some(log) = &outcome.1 {
                log.tool_call(&name, outcome_word(&outcome.0));
            }
            outcome.0
        })
    }
}

/// How the audit names an inner call's end.
fn outcome_word(outcome: &Result<Value, InnerCallError>) -> String {
    match outcome {
        Ok(result) if result["isError"] == true => "error".to_owned(),
        Ok(_) => "ok".to_owned(),
        Err(InnerCallError::Refused(reason)) => format!("refused: {reason}"),
        Err(InnerCallError::InputRequired) => "pending: the client is asked first".to_owned(),
        Err(InnerCallError::MissingCapability(capability)) => format!("refused: the client lacks {capability}"),
    }
}

/// One inner call of `caller`'s, checked and run; with the log its effects went to.
async fn run(
    session: Session,
    caller: &Call,
    base: CallScope,
    tree: Arc<Tree>,
    name: String,
    arguments: Value,
    within: Within,
) -> (Result<Value, InnerCallError>, Option<Arc<crate::runtime::effects::record::EffectLog>>) {
    let (log, chain) = (base.effects.clone(), &caller.chain);
    let refuse = |reason: String| (Err(InnerCallError::Refused(reason)), log.clone());
    if chain.contains(&name) && !crate::switched_off!("compose.cycles-refused") {
        return refuse(format!(
            "calling `{name}` from within its own call is a cycle ({} → {name})",
            chain.join(" → ")
        ));
    }
    if chain.len() > MAX_DEPTH && !crate::switched_off!("compose.depth-bounded") {
        return refuse(format!("`{name}` would be called more than {MAX_DEPTH} calls deep"));
    }
    if tree.started.fetch_add(1, Ordering::Relaxed) >= MAX_CALLS_PER_REQUEST
        && !crate::switched_off!("compose.fan-out-bounded")
    {
        return refuse(format!("this request made {MAX_CALLS_PER_REQUEST} calls of other tools already"));
    }
    let call = caller.inner(&name, session.state.catalog());
    let catalog = &call.catalog;
    let arguments_text = arguments.to_string();
    // Known, admitted, linked, approved (`call/steps.rs`): the steps of the client's own call,
    // for the same principal. Whatever would ask the client is refused here instead.
    let ready = match session.tool_call_steps(Caller::Tool, &call, &arguments_text, None).await {
        Ok(ready) => ready,
        Err(Stop::Refused(result)) => return (Ok(json!(result)), log),
        Err(Stop::Error(error)) => return refuse(error.message.to_string()),
        Err(Stop::Ask(_)) => {
            return refuse(format!("`{name}` needs an answer from the client, which cannot be asked here"));
        }
    };
    let principal_carried = !crate::switched_off!("compose.principal-carried");
    let at = tree.places.fetch_add(1, Ordering::Relaxed);
    let digest = call_digest(&name, &arguments);
    if let Some(recorded) = tree.replay(at, &digest) {
        // Done in an earlier round of this request: its result, and its subtree's places.
        tree.places.fetch_add(recorded.places.saturating_sub(1), Ordering::Relaxed);
        return (Ok(recorded.result), log);
    }
    let timeout = catalog.tool_plugin(&name).map_or(within.time, |plugin| plugin.limits.timeout.min(within.time));
    let meta_sink = call.meta.clone().unwrap_or_default();
    let mut scope = CallScope {
        caller: base.caller.clone().filter(|_| principal_carried),
        cancel: base.cancel.child_token(),
        timeout: Some(timeout),
        client: base.client.clone().map(|outer| Arc::new(InnerClient::new(outer, at)) as _),
        owned_uris: None,
        output_hold: None,
        meta: Some(meta_sink.clone()),
        ..base.clone()
    };
    scope.tools = Some(Arc::new(InnerCalls::new(session.clone(), call.clone(), &scope, tree.clone())));
    let called = catalog.call_tool(&name, arguments_text, scope).await;
    if called.is_ok() {
        ready.ran(&session);
    }
    let result = match called {
        Ok(result) => match convert::call_result(result, call.era.dialect()) {
            Ok(mut result) => {
                result.meta = meta_sink.take_result().map(MetaObject);
                result
            }
            Err(error) => return refuse(error.message.to_string()),
        },
        Err(CallError::InputRequired { .. }) => return (Err(InnerCallError::InputRequired), log),
        Err(CallError::MissingCapability { capability, .. }) => {
            return (Err(InnerCallError::MissingCapability(capability)), log);
        }
        Err(error) => match tool_failure(&name, error) {
            Ok(result) => result,
            Err(error) => return refuse(error.message.to_string()),
        },
    };
    let result = json!(result);
    let places = tree.places.load(Ordering::Relaxed) - at;
    tree.keep(Recorded { at, places, call: digest, result: result.clone() });
    (Ok(result), log)
}
