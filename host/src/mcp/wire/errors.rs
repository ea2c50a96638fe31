//! How a failed call reaches the client, in one place. A tool's failure is the model's to see
//! (a result with `isError`), except what the client itself got wrong (an unknown tool, a
//! missing capability); everything else fails the request with a JSON-RPC error. The refusals
//! of admission (a scope the token lacks, a limit reached) are JSON-RPC errors of their own.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode};
use serde_json::json;

use crate::access::{self, Item, LimitRefusal};
use crate::runtime::CallError;

/// MCP's MissingRequiredClientCapability error (-32021) for `capability`.
pub(crate) fn missing_capability(capability: &str) -> McpError {
    // `elicitation.url` is `{"elicitation": {"url": {}}}`.
    let needed = match capability.split_once('.') {
        Some((outer, inner)) => json!({ outer: { inner: {} } }),
        None => json!({ capability: {} }),
    };
    let required = serde_json::from_value(needed).unwrap_or_default();
    McpError::missing_required_client_capability(required)
}

/// The JSON-RPC error for a failed request.
pub(crate) fn request_error(error: CallError) -> McpError {
    match &error {
        CallError::MissingCapability { capability, .. } => missing_capability(capability),
        // SEP-2164: the error names the URI in `data` too.
        CallError::UnknownResource { uri } => {
            McpError::resource_not_found(error.to_string(), Some(json!({ "uri": uri })))
        }
        CallError::UnknownTool { .. }
        | CallError::UnknownPrompt { .. }
        | CallError::UnknownCompletionTarget
        | CallError::NotFound { .. }
        | CallError::InvalidArguments { .. } => McpError::invalid_params(error.to_string(), None),
        _ => McpError::internal_error(error.to_string(), None),
    }
}

/// A failed `tools/call`: the tool result with `isError: true` the model should see, or the
/// JSON-RPC error for what the client got wrong.
pub(crate) fn tool_failure(tool: &str, error: CallError) -> Result<CallToolResult, McpError> {
    match error {
        CallError::MissingCapability { .. } | CallError::UnknownTool { .. } | CallError::NotFound { .. } => {
            Err(request_error(error))
        }
        error => {
            tracing::warn!(tool, "{error}");
            Ok(CallToolResult::error(vec![ContentBlock::text(error.to_string())]))
        }
    }
}

/// The JSON-RPC error of a request the principal's token does not allow (an
/// implementation-defined server error, JSON-RPC 2.0 §5.1); `data` carries RFC 6750's words.
pub(crate) const INSUFFICIENT_SCOPE: ErrorCode = ErrorCode(-32003);
/// The JSON-RPC error of a call over the principal's limits.
pub(crate) const OVER_LIMIT: ErrorCode = ErrorCode(-32004);

/// The JSON-RPC error of a refused request, naming what and the scope that would allow it.
pub(crate) fn refused(item: Item<'_>, scope: Option<&str>) -> McpError {
    let message = access::refusal_description(item, scope);
    McpError::new(INSUFFICIENT_SCOPE, message, Some(json!({ "error": "insufficient_scope", "scope": scope })))
}

/// The JSON-RPC error of a call over a limit.
pub(crate) fn over_limit(refusal: &LimitRefusal) -> McpError {
    let which = match refusal {
        LimitRefusal::Concurrency { .. } => "concurrent_calls",
        LimitRefusal::Rate { .. } => "calls_per_minute",
    };
    McpError::new(
        OVER_LIMIT,
        refusal.to_string(),
        Some(json!({ "limit": which, "retryAfterSeconds": refusal.retry_after_seconds() })),
    )
}
