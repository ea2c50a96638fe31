//! The stdio transport (MCP `basic/transports` §stdio): newline-delimited JSON-RPC on
//! stdin/stdout. We own the framing in front of rmcp's message stream so that bad input gets
//! a JSON-RPC error and the server goes on: a line that is not JSON gets -32700 with id null,
//! a wrong `jsonrpc` version -32600, an oversized line an error (and is skipped, never
//! buffered without bound), blank lines and CRLF are fine, and the `$/cancelRequest`
//! spelling of cancellation some clients send becomes `notifications/cancelled`.

#![expect(deprecated, reason = "logging/setLevel is still served to legacy clients")]

use std::io::{self, Read, Write};

use anyhow::Result;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::mcp::Session;

/// JSON-RPC 2.0 error codes used by the framing layer.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// Serves one MCP session over `input`/`output` until `input` ends.
///
/// Input and output each get a dedicated OS thread doing plain blocking I/O. (tokio's own
/// stdin/stdout hand every read and write to its blocking pool, one more thread wake-up per
/// message each way; on 2 cores that was most of a trivial call's round trip.)
pub async fn serve<R, W>(server: Session, input: R, output: W, max_message_bytes: usize) -> Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(256);
    let writer = std::thread::Builder::new().name("mcpbox-stdout".into()).spawn(move || write_loop(output, out_rx))?;
    let (in_tx, mut in_rx) = mpsc::channel::<ClientJsonRpcMessage>(64);
    // Weak, so that the writer ends with the session even while the reader waits on input.
    let replies = out_tx.downgrade();
    std::thread::Builder::new()
        .name("mcpbox-stdin".into())
        .spawn(move || read_loop(input, in_tx, replies, max_message_bytes))?;

    let sink = futures::sink::unfold(out_tx, |tx, message: ServerJsonRpcMessage| async move {
        let mut bytes = serde_json::to_vec(&message).map_err(io::Error::other)?;
        bytes.push(b'\n');
        tx.send(bytes).await.map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))?;
        Ok::<_, io::Error>(tx)
    });
    let stream = futures::stream::poll_fn(move |cx| in_rx.poll_recv(cx));
    match rmcp::serve_server(server, (Box::pin(sink), stream)).await {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::debug!(?reason, "session ended");
        }
        // The input ended before a session began: nothing to serve.
        Err(e) => tracing::info!("no session: {e}"),
    }
    // The reader thread may still be blocked in a read; it ends with the process. The writer
    // ends once every sender (the session's sink, the reader's replies) is gone.
    tokio::task::spawn_blocking(move || writer.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the stdout writer panicked"))??;
    Ok(())
}

fn write_loop<W: Write>(mut output: W, mut messages: mpsc::Receiver<Vec<u8>>) -> io::Result<()> {
    while let Some(bytes) = messages.blocking_recv() {
        output.write_all(&bytes)?;
        // Flush once the queue is drained, not per message, when answers come in bursts.
        while let Ok(more) = messages.try_recv() {
            output.write_all(&more)?;
        }
        output.flush()?;
    }
    Ok(())
}

fn error_line(id: Value, code: i64, message: String) -> Vec<u8> {
    let mut bytes =
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// What one input line turned into.
#[derive(Debug)]
enum Framed {
    Message(Box<ClientJsonRpcMessage>),
    Reply(Vec<u8>),
    Skip,
}

struct Framer {
    /// Until the first request, notifications and responses are dropped: rmcp's session
    /// start-up only accepts requests, and a stray notification must not end the session.
    seen_request: bool,
}

impl Framer {
    fn frame(&mut self, line: &[u8]) -> Framed {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Framed::Skip;
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

fn read_loop<R: Read>(
    mut input: R,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    replies: mpsc::WeakSender<Vec<u8>>,
    max_message_bytes: usize,
) {
    let mut framer = Framer { seen_request: false };
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    // After an oversized line has been answered, the rest of it is skipped up to its newline.
    let mut skipping = false;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::error!("cannot read stdin: {e}");
                break;
            }
        };
        let mut data = &chunk[..n];
        loop {
            let newline = data.iter().position(|&b| b == b'\n');
            let piece = &data[..newline.unwrap_or(data.len())];
            if !skipping {
                if line.len() + piece.len() > max_message_bytes {
                    let message = format!("message too large: the limit is {max_message_bytes} bytes per line");
                    if !reply(&replies, error_line(Value::Null, INVALID_REQUEST, message)) {
                        return;
                    }
                    line.clear();
                    skipping = true;
                } else {
                    line.extend_from_slice(piece);
                }
            }
            let Some(newline) = newline else { break };
            if !skipping && !dispatch(&mut framer, &line, &messages, &replies) {
                return;
            }
            line.clear();
            skipping = false;
            data = &data[newline + 1..];
        }
    }
    if !skipping && !line.is_empty() {
        dispatch(&mut framer, &line, &messages, &replies);
    }
}

/// Sends an error line to the writer; false once the session is gone.
fn reply(replies: &mpsc::WeakSender<Vec<u8>>, bytes: Vec<u8>) -> bool {
    replies.upgrade().is_some_and(|sender| sender.blocking_send(bytes).is_ok())
}

/// Sends a framed line on; false once nobody listens any more.
fn dispatch(
    framer: &mut Framer,
    line: &[u8],
    messages: &mpsc::Sender<ClientJsonRpcMessage>,
    replies: &mpsc::WeakSender<Vec<u8>>,
) -> bool {
    match framer.frame(line) {
        Framed::Message(message) => messages.blocking_send(*message).is_ok(),
        Framed::Reply(bytes) => reply(replies, bytes),
        Framed::Skip => true,
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(framed: Framed) -> Value {
        match framed {
            Framed::Reply(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn framing_errors() {
        let mut framer = Framer { seen_request: false };
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
        let mut framer = Framer { seen_request: true };
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
