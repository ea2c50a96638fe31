//! The lean path for stateless 2026-07-28 requests over Streamable HTTP (MCP 2026-07-28
//! `basic/transports` §Streamable HTTP, §Standard Headers; issue 17).
//!
//! rmcp's `StreamableHttpService` serves a stateless request by building a whole service loop
//! for it (a peer, channels, two spawned tasks, torn down after the one response) and by
//! re-serializing the parsed body to check its `Mcp-*` headers: about a fifth of the server's
//! CPU per call. A request that needs nothing but its one response is served here instead, by
//! our handler directly in the request's own task, with a peer shared by all of them (the
//! "hub", whose messages go nowhere: such a request sends none).
//!
//! Which requests: every condition below holds, or the request goes to rmcp untouched (with
//! its body put back), so every rule rmcp enforces still answers every request that could
//! break one:
//! - a POST without `Mcp-Session-Id`, `MCP-Protocol-Version: 2026-07-28` (one value), accepting
//!   both `application/json` and `text/event-stream` (no weights), `Content-Type:
//!   application/json`, a `Content-Length` within the body limit;
//! - a single JSON-RPC request whose method is one of [`LEAN_METHODS`] and equals the one
//!   `Mcp-Method` header, whose `_meta` names 2026-07-28 with every required key and asks for
//!   no progress and no log level (either would make the response a stream of several
//!   messages);
//! - `Mcp-Name`, for a method that names something, equal to the body's name or URI (plain, not
//!   Base64); no `Mcp-Param-*` header, and for `tools/call` a tool none of whose parameters is
//!   bound to one (`x-mcp-header`).
//!
//! The response is rmcp's: the status it maps a JSON-RPC error to (400 for a version or
//! capability error, 404 for an unknown method, as JSON), else one SSE event and the end of the
//! stream. A client that goes away cancels the call.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, ErrorCode, GetExtensions, GetMeta, Implementation,
    InitializeRequestParams, JsonRpcRequest, ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer, RunningService, Service};
use serde::Deserialize as _;
use tokio_util::sync::CancellationToken;

use crate::mcp::{McpState, Session};

/// The methods whose one answer is the whole response. (Not `subscriptions/listen`, a stream;
/// not `server/discover` or `initialize`, negotiated by rmcp; not the tasks methods, which
/// rmcp routes by `Mcp-Name`.)
const LEAN_METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "completion/complete",
];

/// The stateless requests served without rmcp's per-request service loop.
pub(crate) struct Lean {
    state: Arc<McpState>,
    /// The peer every lean request's context carries. It stands for a 2026-07-28 client (so
    /// it refuses server-to-client requests, as rmcp's per-request peer does); its session
    /// loop runs as long as this does, reading nothing and dropping what it is given.
    hub: Peer<RoleServer>,
    _hub_loop: RunningService<RoleServer, Session>,
    max_body_bytes: usize,
    /// Cancelled when the server's streams close after a shutdown's grace period.
    closing: CancellationToken,
}

impl Lean {
    pub(crate) fn new(state: Arc<McpState>, max_body_bytes: usize, closing: CancellationToken) -> Lean {
        // rmcp gives a stateless request's peer this identity (`peer_info_for_stateless_request`):
        // the header's version and default capabilities; the real ones are in each request's
        // `_meta`. (Named, since rmcp logs it once as its session starts.)
        let stands_for = Implementation::new("stateless 2026-07-28 requests", env!("CARGO_PKG_VERSION"));
        let peer_info = InitializeRequestParams::new(ClientCapabilities::default(), stands_for)
            .with_protocol_version(ProtocolVersion::V_2026_07_28);
        let nowhere = (
            Box::pin(futures::sink::drain::<ServerJsonRpcMessage>()),
            futures::stream::pending::<ClientJsonRpcMessage>(),
        );
        let hub_loop = rmcp::service::serve_directly(Session::new(state.clone()), nowhere, Some(peer_info));
        Lean { hub: hub_loop.peer().clone(), _hub_loop: hub_loop, state, max_body_bytes, closing }
    }

    /// Serves `request` if it is one this path serves exactly as rmcp would; gives it back
    /// otherwise.
    pub(crate) async fn serve(&self, request: Request) -> Result<Response, Request> {
        if !self.takes(request.method(), request.headers()) {
            return Err(request);
        }
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, self.max_body_bytes).await {
            Ok(bytes) => bytes,
            // The body was shorter or longer than its Content-Length, or the connection failed.
            Err(e) => return Ok(plain(StatusCode::BAD_REQUEST, format!("Bad Request: cannot read the body: {e}"))),
        };
        let request = match self.lean_request(&parts.headers, &bytes) {
            Some(request) => request,
            None => return Err(Request::from_parts(parts, Body::from(bytes))),
        };
        tracing::debug!(method = request.request.method(), "served on the lean stateless path");
        let JsonRpcRequest { id, mut request, .. } = request;
        // As rmcp's service loop does: the request's `_meta` and extensions move to its context.
        let mut context = RequestContext::new(id.clone(), self.hub.clone());
        context.meta = std::mem::take(request.get_meta_mut());
        context.extensions = std::mem::take(request.extensions_mut());
        context.extensions.insert(parts);
        let cancel = context.ct.clone();
        // The handler runs in this request's future (a task of its own was a measurable part
        // of a call). A client that goes away drops the future and with it the call, which
        // says so in the log (`runtime/sandbox`); the token tells whatever the call handed its
        // cancellation to.
        let _cancel_on_drop = cancel.clone().drop_guard();
        let session = Session::new(self.state.clone());
        let answer = tokio::select! {
            answer = session.handle_request(request, context) => answer,
            () = self.closing.cancelled() => {
                cancel.cancel();
                return Ok(plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error: the server is shutting down".into()));
            }
        };
        let message = match answer {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        Ok(respond(&message))
    }

    /// What the headers alone decide.
    fn takes(&self, method: &Method, headers: &HeaderMap) -> bool {
        method == Method::POST
            && !headers.contains_key("mcp-session-id")
            && only(headers, "mcp-protocol-version").is_some_and(|v| v == ProtocolVersion::V_2026_07_28.as_str())
            && only(headers, "mcp-method").is_some_and(|m| LEAN_METHODS.contains(&m))
            && headers.get_all("mcp-name").iter().count() <= 1
            && !headers.keys().any(|name| name.as_str().starts_with("mcp-param-"))
            && headers.get(header::CONTENT_TYPE).is_some_and(is_json)
            && accepts_json_and_sse(headers)
            && only(headers, header::CONTENT_LENGTH.as_str())
                .and_then(|length| length.parse::<usize>().ok())
                .is_some_and(|length| length <= self.max_body_bytes)
    }

    /// The body as a request this path serves, or `None` for rmcp.
    fn lean_request(&self, headers: &HeaderMap, bytes: &Bytes) -> Option<JsonRpcRequest<ClientRequest>> {
        // A request, parsed as one: not as rmcp's message enum, which buffers the whole body
        // into serde's generic content first to find which kind of message it is. Its one
        // check that a request's parsing skips, no stray `result` or `error`, made here.
        let keys: TopLevelKeys = serde_json::from_slice(bytes).ok()?;
        if keys.result || keys.error {
            return None;
        }
        let request: JsonRpcRequest<ClientRequest> = serde_json::from_slice(bytes).ok()?;
        let method = request.request.method();
        if only(headers, "mcp-method") != Some(method) {
            return None;
        }
        let meta = request.request.get_meta();
        let fields = &meta.0.0;
        if meta.protocol_version() != Some(ProtocolVersion::V_2026_07_28)
            || !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
            || fields.contains_key("progressToken")
            || fields.contains_key("io.modelcontextprotocol/logLevel")
        {
            return None;
        }
        // SEP-2243: the name a load balancer routes on is the one the body dispatches on.
        let named = match &request.request {
            ClientRequest::CallToolRequest(call) => Some(call.params.name.as_ref()),
            ClientRequest::GetPromptRequest(get) => Some(get.params.name.as_str()),
            ClientRequest::ReadResourceRequest(read) => Some(read.params.uri.as_str()),
            _ => None,
        };
        if let Some(name) = named {
            let header = only(headers, "mcp-name")?;
            if (header != name && !crate::switched_off!("stateless.mcp-name-checked"))
                || header.starts_with("=?base64?")
            {
                return None;
            }
        }
        if let ClientRequest::CallToolRequest(call) = &request.request {
            let lists = self.state.lists(&self.state.catalog()).ok()?;
            if lists.binds_headers(&call.params.name) && !crate::switched_off!("stateless.header-params-to-rmcp") {
                return None;
            }
        }
        Some(request)
    }
}

/// Which of the keys that make a message a response a body has (present, whatever their value).
#[derive(serde::Deserialize)]
struct TopLevelKeys {
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(value).map(|_| true)
}

/// The one value of header `name`, as text.
fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

fn is_json(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| {
        v.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Both media types a Streamable HTTP client must accept, without weights (a weighted list is
/// left to rmcp's own reading of it).
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        for range in value.split(',') {
            let mut pieces = range.split(';');
            let essence = pieces.next().unwrap_or("").trim();
            if pieces.next().is_some() {
                return false;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// rmcp's answer to a stateless request (`serve_negotiated_request_directly`): a JSON-RPC error
/// that the transport maps to an HTTP status as that status with the JSON message, anything
/// else as one SSE event.
fn respond(message: &ServerJsonRpcMessage) -> Response {
    let json = match serde_json::to_vec(message) {
        Ok(json) => json,
        Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("Internal Server Error: {e}")),
    };
    let status = status_of(message);
    let mut response = if status == StatusCode::OK {
        let mut event = Vec::with_capacity(json.len() + 8);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(&json);
        event.extend_from_slice(b"\n\n");
        let mut response = Response::new(Body::from(event));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    } else {
        let mut response = Response::new(Body::from(json));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    };
    *response.status_mut() = status;
    response
}

/// rmcp's `jsonrpc_http_status` for a request whose `_meta` is well formed (2026-07-28
/// `basic/transports` §Streamable HTTP: errors a client must see before any body).
fn status_of(message: &ServerJsonRpcMessage) -> StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else { return StatusCode::OK };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
