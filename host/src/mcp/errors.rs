//! How a failed call reaches the client, in one place. A tool's failure is the model's to see
//! (a result with `isError`), except what the client itself got wrong (an unknown tool, a
//! missing capability); everything else fails the request with a JSON-RPC error.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

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
