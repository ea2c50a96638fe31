//! What the Streamable HTTP endpoint checks for an authenticated principal before a request
//! reaches the handler (MCP `basic/authorization` §Scope Challenge Handling, `basic/security_best_practices`
//! §Session Hijacking):
//!
//! - a legacy session belongs to the principal whose `initialize` opened it: the same
//!   `Mcp-Session-Id` with another principal's token is answered as an unknown session (404),
//!   so that a stolen or guessed id is worth nothing;
//! - a request that runs a plugin (`tools/call`, `prompts/get`, `resources/read`) and that the
//!   principal is not entitled to gets the spec's 403 with `error="insufficient_scope"` and
//!   the scope that would allow it, so that a client can step up;
//! - one over the principal's limits gets 429 with `Retry-After` and which limit; one within
//!   them is counted as running ([`Admitted`]) until its request is done.
//!
//! What this cannot decide from the body alone (a name hidden from the principal, a resource
//! whose owner is known only from a listing) the handler decides the same way (`mcp/call/checks/admission.rs`),
//! as a JSON-RPC error, which is also what WebSocket and HTTP+SSE requests get.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::SessionManager;

use super::sessions::ReplicaSessions;
use crate::access::{self, Admitted, Kind, Verdict};
use crate::access::{Principal, ResourceServer};
use crate::mcp::McpState;

/// Sessions bound before the ended ones are forgotten.
const PRUNE_AT: usize = 1024;

/// The principal-aware checks of one Streamable HTTP endpoint.
pub(crate) struct Precheck {
    state: Arc<McpState>,
    oauth: Arc<ResourceServer>,
    /// Which principal (its key) each legacy session belongs to.
    owners: Mutex<HashMap<String, String>>,
    sessions: Arc<ReplicaSessions>,
    max_body_bytes: usize,
}

impl Precheck {
    pub(crate) fn new(
        state: Arc<McpState>,
        oauth: Arc<ResourceServer>,
        sessions: Arc<ReplicaSessions>,
        max_body_bytes: usize,
    ) -> Precheck {
        Precheck { state, oauth, owners: Mutex::default(), sessions, max_body_bytes }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves `request` with `serve` if its principal may make it; binds a session it opens to
    /// that principal.
    pub(crate) async fn around<F: Future<Output = Response>>(
        &self,
        request: Request,
        serve: impl FnOnce(Request) -> F,
    ) -> Response {
        let Some(principal) = request.extensions().get::<Arc<Principal>>().cloned() else {
            return serve(request).await;
        };
        let session = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        if let Some(id) = &session
            && self.owners().get(id).is_some_and(|owner| *owner != principal.key())
            && !crate::switched_off!("sessions.opener-only")
        {
            tracing::warn!("refused a request for a session another principal opened");
            return (StatusCode::NOT_FOUND, "Not Found: Session not found\n").into_response();
        }
        let request = match self.entitled(request, &principal).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let response = serve(request).await;
        if session.is_none()
            && let Some(opened) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            self.bind(opened.to_owned(), principal.key().to_owned()).await;
        }
        response
    }

    async fn bind(&self, session: String, key: String) {
        let ended: Vec<String> = {
            let mut owners = self.owners();
            owners.insert(session, key);
            if owners.len() < PRUNE_AT || !owners.len().is_power_of_two() {
                return;
            }
            owners.keys().cloned().collect()
        };
        // Forget the sessions rmcp has ended (closed, or idle past its timeout).
        for id in ended {
            if !self.sessions.has_session(&Arc::from(id.as_str())).await.unwrap_or(true) {
                self.owners().remove(&id);
            }
        }
    }

    /// The request, its body read, if its principal is entitled to it and within its limits;
    /// or the refusal.
    async fn entitled(&self, request: Request, principal: &Principal) -> Result<Request, Response> {
        let Some(access) = self.state.access.as_ref().filter(|access| access.checks_calls()) else {
            return Ok(request);
        };
        if request.method() != Method::POST {
            return Ok(request);
        }
        let too_long = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .is_some_and(|length| length > self.max_body_bytes);
        if too_long {
            // rmcp answers 413.
            return Ok(request);
        }
        let (mut parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, self.max_body_bytes).await else {
            return Err((StatusCode::BAD_REQUEST, "Bad Request: cannot read the body\n").into_response());
        };
        let Some((kind, name)) = call_target(&bytes) else {
            return Ok(Request::from_parts(parts, Body::from(bytes)));
        };
        let catalog = self.state.catalog();
        let item = access::item(&catalog, kind, &name);
        if let Verdict::Refused { scope } = access.verdict_in(principal, &catalog, kind, &name) {
            access::refused_because("insufficient_scope");
            let description = access::refusal_description(item, scope.as_deref());
            tracing::info!("{description}");
            return Err(self.oauth.insufficient_scope(scope.as_deref(), &description));
        }
        match access.start_call(principal) {
            Ok(Some(running)) => {
                parts.extensions.insert(Admitted(Arc::new(running)));
            }
            Ok(None) => {}
            Err(refusal) => {
                tracing::info!("{refusal}");
                let mut response =
                    (StatusCode::TOO_MANY_REQUESTS, format!("Too Many Requests: {refusal}\n")).into_response();
                if let Ok(value) = HeaderValue::from_str(&refusal.retry_after_seconds().to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
                return Err(response);
            }
        }
        Ok(Request::from_parts(parts, Body::from(bytes)))
    }
}

/// What a single JSON-RPC request that runs a plugin names: its kind and name (or URI).
fn call_target(body: &[u8]) -> Option<(Kind, String)> {
    #[derive(serde::Deserialize)]
    struct Call {
        method: String,
        #[serde(default)]
        params: serde_json::Map<String, serde_json::Value>,
    }
    let call: Call = serde_json::from_slice(body).ok()?;
    let (kind, key) = match call.method.as_str() {
        "tools/call" => (Kind::Tool, "name"),
        "prompts/get" => (Kind::Prompt, "name"),
        "resources/read" => (Kind::Resource, "uri"),
        _ => return None,
    };
    Some((kind, call.params.get(key)?.as_str()?.to_owned()))
}
