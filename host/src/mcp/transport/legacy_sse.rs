//! The HTTP+SSE transport of 2024-11-05 (`2024-11-05/basic/transports` §HTTP with SSE), for
//! clients that predate Streamable HTTP; deprecated by 2026-07-28 (its `basic/transports`
//! §HTTP+SSE Transport: "New implementations SHOULD NOT adopt it"), so mcpbox serves it only
//! when the operator turns it on.
//!
//! `GET /sse` opens a session and a stream whose first event, `endpoint`, names the URL the
//! client POSTs its messages to (`/sse/messages?sessionId=…`). Each POST answers 202 and what it
//! causes arrives on the stream as `message` events. What a client gets otherwise:
//!
//! - a POST without `sessionId`: 400; with an unknown or ended session: 404;
//! - a body over `--max-message-bytes`: 413;
//! - a body that is not a good JSON-RPC message: 400 with the JSON-RPC error stdio gives
//!   (`framing.rs`) as its body, and that error on the stream as well when it answers a request
//!   id, so that the client's pending request ends instead of waiting for its timeout;
//! - a 2026-07-28 request (one with `_meta` `io.modelcontextprotocol/protocolVersion`, or
//!   `server/discover`, `subscriptions/listen`): the era is stateless and per request, which
//!   this session-bound transport cannot carry; it gets `UnsupportedProtocolVersionError`
//!   (-32022, 2026-07-28 `basic/versioning`) naming the versions this transport serves, with
//!   400, like the framing errors.
//!
//! The stream's end (the client disconnects) ends the session and cancels its calls. Host,
//! Origin and the bearer token are checked first (`guard.rs`); the stream carries heartbeats
//! and anti-buffering headers like every SSE response of mcpbox.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use ring::rand::{SecureRandom, SystemRandom};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion, ServerJsonRpcMessage};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::channels::serve_on_channels;
use super::framing::{Framed, Framer};
use crate::access::Principal;
use crate::mcp::{McpState, Session};
use crate::telemetry::metrics::{Open, metrics};

/// `UnsupportedProtocolVersionError` (2026-07-28 schema).
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The legacy sessions of one listener.
pub(crate) struct LegacySse {
    pub(crate) state: Arc<McpState>,
    /// Where clients POST (the `endpoint` event's path).
    pub(crate) messages_path: String,
    /// How often an idle stream gets a comment; `None`: never.
    pub(crate) heartbeat: Option<Duration>,
    /// Cancelled when mcpbox shuts down, after the grace period: every stream ends.
    pub(crate) shutdown: CancellationToken,
    sessions: Mutex<HashMap<String, Arc<LegacySession>>>,
    random: SystemRandom,
}

struct LegacySession {
    /// Messages for the rmcp session.
    input: mpsc::Sender<ClientJsonRpcMessage>,
    /// JSON lines for the stream (the session's messages, and framing errors).
    output: mpsc::Sender<String>,
    framer: Mutex<Framer>,
    /// The principal that opened it (with `[auth]`), the only one whose POSTs it takes.
    opened_by: Option<String>,
}

impl LegacySse {
    pub(crate) fn new(
        state: Arc<McpState>,
        messages_path: String,
        heartbeat: Option<Duration>,
        shutdown: CancellationToken,
    ) -> LegacySse {
        LegacySse { state, messages_path, heartbeat, shutdown, sessions: Mutex::default(), random: SystemRandom::new() }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LegacySession>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Ends a session when its stream is dropped (the client went away, or mcpbox shuts down).
struct EndOnDrop {
    sse: Arc<LegacySse>,
    id: String,
    ended: CancellationToken,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if !crate::switched_off!("legacy-sse.stream-end-ends-session") {
            self.sse.sessions().remove(&self.id);
            self.ended.cancel();
        }
        tracing::debug!(session = %self.id, "legacy SSE session ended");
    }
}

/// `GET /sse`: a new session and its stream.
pub(crate) async fn open(State(sse): State<Arc<LegacySse>>, principal: Option<Extension<Arc<Principal>>>) -> Response {
    let principal = principal.map(|Extension(principal)| principal);
    let mut bytes = [0u8; 16];
    if sse.random.fill(&mut bytes).is_err() {
        return (StatusCode::INTERNAL_SERVER_ERROR, "cannot make a session id\n").into_response();
    }
    let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let (output, lines) = mpsc::channel::<String>(256);
    let (input, incoming) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let ended = CancellationToken::new();
    let opened_by = principal.as_ref().map(|p| p.key().to_owned());
    let session =
        Arc::new(LegacySession { input, output: output.clone(), framer: Mutex::new(Framer::new("sse")), opened_by });
    sse.sessions().insert(id.clone(), session);
    let to_text = |message: &ServerJsonRpcMessage| serde_json::to_string(message);
    let session = Session { transport: "sse", ..Session::for_principal(sse.state.clone(), principal) };
    tokio::spawn(serve_on_channels(session, incoming, output, to_text, ended.clone(), "sse"));

    let endpoint = Event::default().event("endpoint").data(format!("{}?sessionId={id}", sse.messages_path));
    let guard = (EndOnDrop { sse: sse.clone(), id, ended }, Open::count(&metrics().streams, "sse"));
    let messages = futures::stream::poll_fn({
        let mut lines = lines;
        move |cx| lines.poll_recv(cx)
    })
    .map(move |line| {
        let _session = &guard;
        Event::default().event("message").data(line)
    });
    let shutdown = sse.shutdown.clone();
    let stream = futures::stream::once(async move { endpoint })
        .chain(messages)
        .take_until(async move { shutdown.cancelled().await })
        .map(Ok::<_, Infallible>);
    let mut response = match sse.heartbeat {
        Some(period) => Sse::new(stream).keep_alive(KeepAlive::new().interval(period).text("")).into_response(),
        None => Sse::new(stream).into_response(),
    };
    // Proxies (nginx) must pass events on as they come, not buffer them.
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[derive(Deserialize)]
pub(crate) struct Target {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// `POST /sse/messages?sessionId=…`: one message for a session.
pub(crate) async fn post(
    State(sse): State<Arc<LegacySse>>,
    principal: Option<Extension<Arc<Principal>>>,
    Query(target): Query<Target>,
    body: Bytes,
) -> Response {
    let Some(id) = target.session_id else {
        return plain(StatusCode::BAD_REQUEST, "missing sessionId: POST to the URL of the stream's endpoint event");
    };
    let unknown = "unknown or ended session: open a new one with GET on the SSE endpoint";
    let Some(session) = sse.sessions().get(&id).cloned() else {
        return plain(StatusCode::NOT_FOUND, unknown);
    };
    // Another principal's session is as unknown as none (a stolen id is worth nothing).
    if session.opened_by.as_deref() != principal.as_ref().map(|Extension(p)| p.key()) {
        tracing::warn!("refused a message for a legacy SSE session another principal opened");
        return plain(StatusCode::NOT_FOUND, unknown);
    }
    let framed = session.framer.lock().unwrap_or_else(PoisonError::into_inner).frame(&body);
    match framed {
        Framed::Message(message) => {
            if let Some(refusal) = modern_request(&message) {
                return refuse(&session, refusal).await;
            }
            if session.input.send(*message).await.is_err() {
                return plain(StatusCode::NOT_FOUND, "the session has ended");
            }
            (StatusCode::ACCEPTED, "Accepted").into_response()
        }
        Framed::Reply(line) => refuse(&session, line).await,
        Framed::Skip => (StatusCode::ACCEPTED, "Accepted").into_response(),
    }
}

/// A JSON-RPC error for the POST's answer (400), and for the stream when it answers a request.
async fn refuse(session: &LegacySession, line: String) -> Response {
    let answers_request = serde_json::from_str::<Value>(&line).is_ok_and(|error| !error["id"].is_null());
    if answers_request {
        let _ = session.output.send(line.clone()).await;
    }
    let mut response = (StatusCode::BAD_REQUEST, Body::from(line)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn plain(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

/// The JSON-RPC error a 2026-07-28 request gets on this transport, if `message` is one.
fn modern_request(message: &ClientJsonRpcMessage) -> Option<String> {
    let ClientJsonRpcMessage::Request(request) = message else { return None };
    let requested = request.request.get_meta().protocol_version();
    let stateless_method =
        matches!(request.request, ClientRequest::DiscoverRequest(_) | ClientRequest::SubscriptionsListenRequest(_));
    if requested.is_none() && !stateless_method {
        return None;
    }
    let requested = requested.unwrap_or(ProtocolVersion::V_2026_07_28);
    let supported: Vec<&ProtocolVersion> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .filter(|version| version.as_str() < ProtocolVersion::V_2026_07_28.as_str())
        .collect();
    let error = json!({ "jsonrpc": "2.0", "id": request.id, "error": {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": "the 2024-11-05 HTTP+SSE transport serves the initialize-based versions only; \
                    use Streamable HTTP or WebSocket for 2026-07-28",
        "data": { "requested": requested, "supported": supported },
    } });
    Some(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modern_request(body: &[u8]) -> Option<String> {
        match (Framer { seen_request: true, transport: None }).frame(body) {
            Framed::Message(message) => super::modern_request(&message),
            other => panic!("not a message: {other:?}"),
        }
    }

    #[test]
    fn modern_requests_are_told_which_versions_this_transport_serves() {
        let discover = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#;
        let error: Value = serde_json::from_str(&modern_request(discover).unwrap()).unwrap();
        assert_eq!(error["error"]["code"], -32022);
        assert_eq!(error["error"]["data"]["requested"], "2026-07-28");
        let supported = error["error"]["data"]["supported"].as_array().unwrap();
        assert!(supported.contains(&json!("2024-11-05")) && supported.contains(&json!("2025-11-25")));
        assert!(!supported.contains(&json!("2026-07-28")));
        let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(serde_json::from_str::<Value>(&modern_request(call).unwrap()).unwrap()["id"], 2);
        let legacy = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#;
        assert!(modern_request(legacy).is_none());
        let notification = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(modern_request(notification).is_none());
    }
}
