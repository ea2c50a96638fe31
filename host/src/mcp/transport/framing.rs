//! JSON-RPC framing shared by the transports that carry one message at a time (a stdin line, a
//! WebSocket text frame, a 2024-11-05 HTTP+SSE POST body): bad input gets a JSON-RPC error and
//! the connection goes on. A message that is not JSON gets -32700 with id null, a wrong
//! `jsonrpc` version or a batch -32600, a standard request with params that don't fit its
//! schema -32602 with the reason; blank input and a trailing CR are fine; and the
//! `$/cancelRequest` spelling of cancellation some clients send becomes
//! `notifications/cancelled`.

#![expect(deprecated, reason = "logging/setLevel is still served to legacy clients")]

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

use crate::telemetry::metrics::metrics;

/// JSON-RPC 2.0 error codes used by the framing layer.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error response, as one line of JSON without its newline.
pub(crate) fn error_line(id: Value, code: i64, message: String) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

/// What one message (a line, a text frame, a POST body) turned into.
#[derive(Debug)]
pub(crate) enum Framed {
    /// A message for the session.
    Message(Box<ClientJsonRpcMessage>),
    /// The JSON-RPC error the sender gets instead (one line of JSON, no newline).
    Reply(String),
    /// Nothing to do (a blank line, a notification before the session began).
    Skip,
}

/// One connection's framing state.
#[derive(Debug, Default)]
pub(crate) struct Framer {
    /// Until the first request, notifications and responses are dropped: rmcp's session
    /// start-up only accepts requests, and a stray notification must not end the session.
    pub(crate) seen_request: bool,
    /// The transport whose messages `mcpbox_requests_total` counts (`None`: not counted).
    pub(crate) transport: Option<&'static str>,
}

impl Framer {
    /// A framer for one connection of `transport`.
    pub(crate) fn new(transport: &'static str) -> Framer {
        Framer { seen_request: false, transport: Some(transport) }
    }
}

impl Framer {
    /// Checks one message's bytes and turns them into what the session or the sender gets.
    pub(crate) fn frame(&mut self, line: &[u8]) -> Framed {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Framed::Skip;
        }
        if let Some(transport) = self.transport {
            metrics().requests.with_label_values(&[transport]).inc();
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => return Framed::Reply(error_line(Value::Null, PARSE_ERROR, format!("parse error: {e}"))),
        };
        let Value::Object(mut object) = value else {
            let message = if value.is_array() {
                "batch requests are not supported; send one JSON-RPC message per line"
            } else {
                "a JSON-RPC message must be a JSON object"
            };
            return Framed::Reply(error_line(Value::Null, INVALID_REQUEST, message.to_owned()));
        };
        let id = object.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Framed::Reply(error_line(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "invalid request: \"jsonrpc\" must be \"2.0\"".to_owned(),
            ));
        }
        if object.get("method").and_then(Value::as_str) == Some("$/cancelRequest") {
            let request_id = object.get("params").and_then(|p| p.get("id")).cloned().unwrap_or(Value::Null);
            object.insert("method".into(), "notifications/cancelled".into());
            object.insert("params".into(), json!({ "requestId": request_id, "reason": "$/cancelRequest" }));
        }
        let method = object.get("method").and_then(Value::as_str).map(str::to_owned);
        let is_request = method.is_some() && id.is_some();
        if !is_request && !self.seen_request {
            tracing::debug!(?method, "dropping a message that came before the first request");
            return Framed::Skip;
        }
        if is_request && object.contains_key("id") && id.is_none() {
            return Framed::Reply(error_line(
                Value::Null,
                INVALID_REQUEST,
                "invalid request: \"id\" must be a string or a number".into(),
            ));
        }
        if let (Some(method), Some(id)) = (&method, &id)
            && let Some(problem) = standard_params_problem(method, &object)
        {
            return Framed::Reply(error_line(
                id.clone(),
                INVALID_PARAMS,
                format!("invalid params for `{method}`: {problem}"),
            ));
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
            Ok(message) => {
                self.seen_request |= is_request;
                Framed::Message(Box::new(message))
            }
            Err(e) => match (method, id) {
                (Some(method), Some(id)) => {
                    Framed::Reply(error_line(id, INVALID_PARAMS, format!("invalid params for `{method}`: {e}")))
                }
                (Some(method), None) => {
                    tracing::warn!("dropping malformed `{method}` notification: {e}");
                    Framed::Skip
                }
                (None, id) => Framed::Reply(error_line(
                    id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    format!("invalid request: not a JSON-RPC request, notification or response: {e}"),
                )),
            },
        }
    }
}

/// Why the params of a standard MCP request do not fit its schema, if they don't. rmcp would
/// take such a request for a custom method and answer "method not found"; the client deserves
/// "invalid params" and the reason.
fn standard_params_problem(method: &str, message: &serde_json::Map<String, Value>) -> Option<String> {
    use rmcp::model::{
        CallToolRequest, CompleteRequest, GetPromptRequest, InitializeRequest, ListPromptsRequest,
        ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest, ReadResourceRequest, SetLevelRequest,
    };
    fn check<T: serde::de::DeserializeOwned>(message: &serde_json::Map<String, Value>) -> Option<String> {
        serde_json::from_value::<T>(Value::Object(message.clone())).err().map(|e| e.to_string())
    }
    match method {
        "initialize" => check::<InitializeRequest>(message),
        "tools/call" => check::<CallToolRequest>(message),
        "tools/list" => check::<ListToolsRequest>(message),
        "resources/list" => check::<ListResourcesRequest>(message),
        "resources/templates/list" => check::<ListResourceTemplatesRequest>(message),
        "resources/read" => check::<ReadResourceRequest>(message),
        "prompts/list" => check::<ListPromptsRequest>(message),
        "prompts/get" => check::<GetPromptRequest>(message),
        "completion/complete" => check::<CompleteRequest>(message),
        "logging/setLevel" => check::<SetLevelRequest>(message),
        _ => None,
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(framed: Framed) -> Value {
        match framed {
            Framed::Reply(line) => serde_json::from_str(&line).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn framing_errors() {
        let mut framer = Framer { seen_request: false, transport: None };
        let parse = reply(framer.frame(b"{not json"));
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        let version = reply(framer.frame(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#));
        assert_eq!(version["error"]["code"], -32600);
        assert_eq!(version["id"], 7);
        let batch = reply(framer.frame(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#));
        assert_eq!(batch["error"]["code"], -32600);
        assert!(matches!(framer.frame(b"  \r"), Framed::Skip));
        assert!(matches!(framer.frame(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Framed::Skip));
        assert!(matches!(framer.frame(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"), Framed::Message(_)));
        let bad_params =
            reply(framer.frame(br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"arguments":{}}}"#));
        assert_eq!(bad_params["error"]["code"], -32602);
        assert_eq!(bad_params["id"], "x");
    }

    #[test]
    fn cancel_request_spelling_becomes_notifications_cancelled() {
        let mut framer = Framer { seen_request: true, transport: None };
        let Framed::Message(message) =
            framer.frame(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#)
        else {
            panic!("not a message")
        };
        let value = serde_json::to_value(&*message).unwrap();
        assert_eq!(value["method"], "notifications/cancelled");
        assert_eq!(value["params"]["requestId"], 3);
    }
}
