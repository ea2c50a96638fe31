//! Each call's audit line (docs/audit.md), built here because only the protocol layer knows the
//! call's principal, client, transport and outcome; the chain, the file and its failures are
//! `audit/`'s. A request that runs a plugin (`tools/call`, `prompts/get`, `resources/read`)
//! gets an [`EffectLog`] in its [`AuditCall`], held by its [`Call`](super::request::Call),
//! which its scope hands the runtime (`scope.rs`, the task path in `tasks/call.rs`), and the
//! person's approval questions (`checks/approval.rs`) are recorded beside the guest's own. `observe.rs` writes the line when the request ends, before
//! its response is sent; a request that became a task gets a second line when the task ends.
//!
//! What a line never holds: a token or a secret (the principal is its issuer and subject; the
//! request's headers are never read here; the HTTP record has no query), the requestState key,
//! and, unless `[audit] arguments = "full"`, any argument value (their SHA-256 only).

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::audit::{Arguments, AuditSink};
use crate::mcp::session::Session;
use crate::runtime::Catalog;
use crate::runtime::effects::record::EffectLog;

/// The audit of one request: where its line goes, its first fields, its effects.
pub(crate) struct AuditCall {
    pub(crate) sink: AuditSink,
    pub(crate) head: Map<String, Value>,
    pub(crate) log: Arc<EffectLog>,
}

impl AuditCall {
    /// The line of a task this request started, when it ended `outcome`: all of the call's
    /// effects, before and after it became a task.
    pub(crate) async fn task_ended(&self, task: &str, outcome: &str, started: std::time::Instant) {
        let mut head = self.head.clone();
        head.insert("kind".into(), json!("task"));
        head.insert("task".into(), json!(task));
        let line = finish(head, &self.log, outcome, None, started.elapsed().as_secs_f64() * 1000.0);
        // The task's result is stored either way: nobody waits for it to be withheld.
        let _ = self.sink.write(line).await;
    }
}

/// What a request names, for its line.
pub(crate) struct Subject<'a> {
    pub(crate) method: &'static str,
    pub(crate) target: &'a str,
    pub(crate) plugin: Option<&'a str>,
    pub(crate) arguments: Option<&'a Value>,
}

/// The error a call gets while the audit cannot be written and calls must stop.
pub(crate) fn unavailable(after_run: bool) -> McpError {
    let message = if after_run {
        "mcpbox ran the call but could not write its audit line, so its result is withheld ([audit] on_failure = \"closed\")"
    } else {
        "mcpbox refuses calls while its audit cannot be written ([audit] on_failure = \"closed\"); try again later"
    };
    McpError::internal_error(message, None)
}

impl Session {
    /// The first fields of `subject`'s line: who, through what, with which plugin (of
    /// `catalog`).
    pub(crate) fn audit_head(
        &self,
        sink: &AuditSink,
        subject: &Subject<'_>,
        context: &RequestContext<RoleServer>,
        catalog: &Catalog,
    ) -> Map<String, Value> {
        let principal = self.principal(context).map(|p| {
            let caller = p.caller();
            json!({"issuer": caller.issuer, "subject": caller.subject})
        });
        let client = self.client_info(context);
        let component = subject
            .plugin
            .and_then(|name| catalog.plugins().iter().find(|p| &*p.name == name).map(|p| p.digest.to_string()));
        let mut head = Map::new();
        head.insert("kind".into(), json!("call"));
        head.insert("method".into(), json!(subject.method));
        head.insert("target".into(), json!(subject.target));
        head.insert("plugin".into(), json!(subject.plugin));
        head.insert("component".into(), json!(component));
        head.insert("principal".into(), principal.unwrap_or(Value::Null));
        head.insert("client".into(), client);
        head.insert("transport".into(), json!(self.transport));
        if let Some(arguments) = subject.arguments {
            head.insert("arguments".into(), arguments_field(arguments, sink.settings.arguments));
        }
        head
    }

    /// The client's name and version, as its session or its 2026-07-28 request says.
    fn client_info(&self, context: &RequestContext<RoleServer>) -> Value {
        if let Some(info) = context.peer.peer_info() {
            return json!({"name": info.client_info.name, "version": info.client_info.version});
        }
        context
            .meta
            .get("io.modelcontextprotocol/clientInfo")
            .map(|info| json!({"name": info.get("name"), "version": info.get("version")}))
            .unwrap_or(Value::Null)
    }
}

impl Session {
    /// The audit of `subject`'s request (served from `catalog`), when the audit is kept: its
    /// line's head made now, before the request's work (`request.rs`, `Call::begin`).
    pub(crate) fn audit_call(
        &self,
        subject: &Subject<'_>,
        context: &RequestContext<RoleServer>,
        catalog: &Catalog,
    ) -> Option<Arc<AuditCall>> {
        let sink = self.state.audit.as_ref()?;
        let head = self.audit_head(sink, subject, context, catalog);
        Some(Arc::new(AuditCall { sink: sink.clone(), head, log: Arc::new(EffectLog::default()) }))
    }
}

impl AuditCall {
    /// Writes the line of a listing or completion if its plugins had effects. Such requests
    /// are not refused when the audit is down: the writer logs and counts the line it lost.
    pub(crate) async fn if_effects(&self, started: std::time::Instant) {
        if !self.log.is_empty() {
            let line = finish(self.head.clone(), &self.log, "ok", None, started.elapsed().as_secs_f64() * 1000.0);
            let _ = self.sink.write(line).await;
        }
    }
}

/// The line's `effects`, `grants` and end: what `log` saw, the outcome and how long it took.
pub(crate) fn finish(
    mut head: Map<String, Value>,
    log: &EffectLog,
    outcome: &str,
    error: Option<&McpError>,
    duration_ms: f64,
) -> Map<String, Value> {
    let (grants, network, effects) = log.parts();
    head.insert("grants".into(), json!(grants));
    head.insert("network".into(), json!(network));
    head.insert("effects".into(), serde_json::to_value(effects).unwrap_or(Value::Null));
    head.insert("outcome".into(), json!(outcome));
    if let Some(error) = error {
        head.insert("error".into(), json!({"code": error.code.0, "message": error.message}));
    }
    head.insert("duration_ms".into(), json!((duration_ms * 1000.0).round() / 1000.0));
    head
}

/// The arguments as a line holds them: their digest (over canonical JSON: keys sorted,
/// compact), and the arguments themselves only in `full`, cut past the bound.
fn arguments_field(arguments: &Value, mode: Arguments) -> Value {
    let canonical = arguments.to_string();
    let digest = format!("sha256:{}", crate::hex::hex(&Sha256::digest(canonical.as_bytes())));
    match mode {
        Arguments::Digest => json!({"sha256": digest}),
        Arguments::Full if canonical.len() <= crate::audit::FULL_ARGUMENTS_MAX => {
            json!({"sha256": digest, "full": arguments})
        }
        Arguments::Full => {
            let mut end = crate::audit::FULL_ARGUMENTS_MAX;
            while !canonical.is_char_boundary(end) {
                end -= 1;
            }
            json!({"sha256": digest, "cut": &canonical[..end]})
        }
    }
}
