//! A span per MCP request, after the OpenTelemetry semantic conventions for MCP: a server span
//! named `{mcp.method.name} {target}` (`tools/call chaos.echo`), with `mcp.method.name`,
//! `jsonrpc.request.id`, `mcp.protocol.version`, the target (`gen_ai.tool.name`,
//! `gen_ai.prompt.name`, `mcp.resource.uri`), and `error.type` when it fails; the parent is the
//! client's span when its `params._meta` carries a W3C `traceparent`. mcpbox adds
//! `mcpbox.plugin`, `mcpbox.principal` (the token's subject, never the token),
//! `mcpbox.outcome` and `mcpbox.duration_ms`. JSON log lines carry the same fields, and each
//! finished request is one line (target `mcpbox::request`). The guest call below is a child
//! span (`runtime/sandbox/call.rs`).

use std::future::Future;
use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, GetPromptResponse, ReadResourceResponse};
use tracing::Instrument;
use tracing::field::Empty;

use super::audited;
use super::request::Call;
use crate::access::Kind;
use crate::audit::OnFailure;
use crate::telemetry::{outcome, trace};

/// How a successful response ended, for `mcpbox.outcome`.
pub(crate) trait Outcome {
    fn outcome(&self) -> &'static str {
        "ok"
    }
}

impl Outcome for CallToolResponse {
    fn outcome(&self) -> &'static str {
        match self {
            CallToolResponse::Complete(result) if result.is_error == Some(true) => "tool_error",
            CallToolResponse::Complete(_) => "ok",
            CallToolResponse::InputRequired(_) => "input_required",
            CallToolResponse::Task(_) => "task",
            _ => "ok",
        }
    }
}

impl Outcome for GetPromptResponse {
    fn outcome(&self) -> &'static str {
        match self {
            GetPromptResponse::Complete(_) => "ok",
            GetPromptResponse::InputRequired(_) => "input_required",
            _ => "ok",
        }
    }
}

impl Outcome for ReadResourceResponse {
    fn outcome(&self) -> &'static str {
        match self {
            ReadResourceResponse::Complete(_) => "ok",
            ReadResourceResponse::InputRequired(_) => "input_required",
            _ => "ok",
        }
    }
}

impl Outcome for rmcp::model::CompleteResult {}

impl Call {
    /// Runs `work`, the handling of this request, in its span, and records how it ended.
    pub(crate) async fn traced<T: Outcome>(
        &self,
        work: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        let (method, name, context, plugin) = (self.method, &*self.name, &self.context, self.plugin.as_deref());
        // The audit (its line's head made before the work, its effects recorded during it):
        // refused here if it cannot be written and calls must stop; the line written after.
        let audit = self.audit.as_ref();
        if let Some(call) = audit
            && !call.sink.admits()
            && !crate::switched_off!("audit.fails-closed")
        {
            return Err(audited::unavailable(false));
        }
        // A root of its own unless the client's traceparent names one: never a child of
        // the connection's long-lived span. Its fields are computed only when some layer wants
        // the span (JSON logs, traces), not for every request.
        let span = tracing::info_span!(
            target: "mcpbox::request",
            parent: None,
            "request",
            "otel.name" = %format_args!("{method} {name}"),
            "otel.kind" = "server",
            "otel.status_code" = Empty,
            "mcp.method.name" = method,
            // A number or a string, without quotes (the conventions' form).
            "jsonrpc.request.id" = %context.id,
            "mcp.protocol.version" = context.protocol_version().as_ref().map(|v| v.as_str()),
            "gen_ai.operation.name" = Empty,
            "gen_ai.tool.name" = Empty,
            "gen_ai.prompt.name" = Empty,
            "mcp.resource.uri" = Empty,
            "mcpbox.plugin" = plugin,
            "mcpbox.principal" = self.principal.as_ref().map(|p| &*p.caller().subject),
            "mcpbox.outcome" = Empty,
            "mcpbox.duration_ms" = Empty,
            "error.type" = Empty,
        );
        match self.kind {
            Kind::Tool => {
                span.record("gen_ai.operation.name", "execute_tool");
                span.record("gen_ai.tool.name", name);
            }
            Kind::Prompt => {
                span.record("gen_ai.prompt.name", name);
            }
            Kind::Resource => {
                span.record("mcp.resource.uri", name);
            }
        }
        let meta = |key: &str| context.meta.get(key).and_then(serde_json::Value::as_str);
        trace::set_parent(&span, meta("traceparent"), meta("tracestate"));
        let started = Instant::now();
        let (result, counted) = outcome::scope(work.instrument(span.clone())).await;
        // What the metrics counted (a timeout, a crash, the memory limit: each an `isError`
        // result to the client), unless the response itself says more (a task, a question).
        let outcome = match &result {
            Ok(response) => match response.outcome() {
                said @ ("task" | "input_required") => said,
                said => counted.unwrap_or(said),
            },
            Err(error) => {
                span.record("error.type", error.code.0);
                span.record("otel.status_code", "error");
                counted.unwrap_or("error")
            }
        };
        let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        span.record("mcpbox.outcome", outcome);
        span.record("mcpbox.duration_ms", duration_ms);
        tracing::info!(target: "mcpbox::request", parent: &span, "request finished");
        if let Some(call) = audit {
            let line = audited::finish(call.head.clone(), &call.log, outcome, result.as_ref().err(), duration_ms);
            if call.sink.write(line).await.is_err()
                && call.sink.settings.on_failure == OnFailure::Closed
                && !crate::switched_off!("audit.fails-closed")
            {
                return Err(audited::unavailable(true));
            }
        }
        result
    }
}
