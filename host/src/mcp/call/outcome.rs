//! What a call that ran answers the client's `tools/call` with, at once or stored in its task.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, MetaObject};

use crate::mcp::wire::convert;
use crate::mcp::wire::era::Dialect;
use crate::mcp::wire::errors::tool_failure;
use crate::runtime::CallError;
use crate::runtime::engine::bindings::tools::CallResult;
use crate::runtime::sandbox::MetaSink;

/// A finished call of tool `name` as `tools/call` answers it: its result in `dialect` with the
/// `_meta` the guest set, a failure the model should see as a result with `isError`, or the
/// JSON-RPC error of what the client got wrong (`errors.rs`).
pub(crate) fn call_outcome(
    name: &str,
    outcome: Result<CallResult, CallError>,
    dialect: Dialect,
    meta: &MetaSink,
) -> Result<CallToolResult, McpError> {
    match outcome {
        Ok(result) => {
            let mut result = convert::call_result(result, dialect)?;
            result.meta = meta.take_result().map(MetaObject);
            Ok(result)
        }
        Err(error) => tool_failure(name, error),
    }
}
