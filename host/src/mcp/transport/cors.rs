//! CORS for browser-based MCP hosts (a web page that is an MCP client, as the MCP Apps hosts
//! of the ext-apps SDK are): only for the origins the operator named (`--allow-origin`,
//! `[http] allowed_origins`), never for the local origins the guard accepts by default, so that
//! no page on the user's machine can read mcpbox's answers unless the operator said so.
//!
//! A preflight (`OPTIONS` with `Access-Control-Request-Method`) from such an origin is answered
//! here, before the guard (it carries no token, by the Fetch standard); every other request
//! still passes the guard, and its response names the origin and exposes MCP's headers
//! (`Mcp-Session-Id`, `Mcp-Protocol-Version`, `WWW-Authenticate`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::guard::{AllowedOrigin, Origin};

/// The request headers a page may send: MCP's own and the standard ones it needs.
const ALLOWED_HEADERS: &str = "authorization, content-type, accept, last-event-id, mcp-session-id, \
     mcp-protocol-version, mcp-method, mcp-name";
/// The response headers a page may read.
const EXPOSED_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// The origins that get CORS answers.
pub(crate) struct Cors {
    origins: Vec<AllowedOrigin>,
}

impl Cors {
    /// The operator's `--allow-origin` entries; `None` without any.
    pub(crate) fn new(origins: &[String]) -> Option<Arc<Cors>> {
        let origins: Vec<AllowedOrigin> = origins.iter().filter_map(|o| AllowedOrigin::parse(o)).collect();
        (!origins.is_empty()).then(|| Arc::new(Cors { origins }))
    }

    /// The request's `Origin`, if it is one of the operator's.
    fn allowed(&self, request: &Request) -> Option<HeaderValue> {
        let value = request.headers().get(header::ORIGIN)?;
        let origin = Origin::parse(value.to_str().ok()?)?;
        self.origins.iter().any(|allowed| allowed.matches(&origin)).then(|| value.clone())
    }
}

/// The middleware.
pub(crate) async fn cors(State(cors): State<Arc<Cors>>, request: Request, next: Next) -> Response {
    let origin = match cors.allowed(&request) {
        Some(origin) => origin,
        // Switched off, any origin the guard would accept gets CORS answers too.
        None if crate::switched_off!("http.cors-named-origins-only") => match request.headers().get(header::ORIGIN) {
            Some(origin) => origin.clone(),
            None => return next.run(request).await,
        },
        None => return next.run(request).await,
    };
    let preflight =
        request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOWED_HEADERS));
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        response
    } else {
        let mut response = next.run(request).await;
        response.headers_mut().insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    response
}
