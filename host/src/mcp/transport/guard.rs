//! Who may reach an MCP endpoint over HTTP, checked before anything else runs, the same way for
//! every endpoint on the listener (Streamable HTTP, the WebSocket upgrade, the 2024-11-05
//! HTTP+SSE stream and its message endpoint):
//!
//! - `Host` must name this server (MCP `basic/transports` §Security Warning: DNS rebinding):
//!   the loopback names, the bound address, and what the operator allowed (`--allow-host`);
//! - a browser's `Origin`, when there is one, must be a local origin or one the operator
//!   allowed (`--allow-origin`); a foreign page's WebSocket would otherwise ride the user's
//!   loopback server, since browsers send no CORS preflight for WebSockets;
//! - with `--auth-token-file`, `Authorization: Bearer <token>` (RFC 6750 §2.1), compared in
//!   constant time; with `[auth]`, an OAuth access token (`access/tokens/`), whose principal goes
//!   with the request. Never from the query string: the authorization spec forbids tokens in
//!   URIs.
//!
//! The matching follows rmcp's own checks for Streamable HTTP (which still run behind this one):
//! hosts compare without brackets and case, a port in an allowed host must match; an allowed
//! origin's `:*` matches any port.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header, uri::Authority};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::{Principal, ResourceServer};

/// The listener's guard: its rules (hosts, origins, the token or OAuth), parsed once.
pub(crate) struct Guard {
    /// Allowed `Host`s: a name, and the port it must come with, if any.
    hosts: Vec<(String, Option<u16>)>,
    /// Allowed `Origin`s.
    origins: Vec<AllowedOrigin>,
    /// The bearer token every request must carry, if any (the simple mode).
    token: Option<String>,
    /// The resource server whose access tokens every request must carry, if any.
    oauth: Option<Arc<ResourceServer>>,
}

impl Guard {
    /// `hosts` as `name` or `name:port`, `origins` as `scheme://host[:port|:*]`.
    pub(crate) fn new(
        hosts: &[String],
        origins: &[String],
        token: Option<String>,
        oauth: Option<Arc<ResourceServer>>,
    ) -> Guard {
        let hosts = hosts
            .iter()
            .map(|allowed| match Authority::try_from(allowed.trim()) {
                Ok(authority) => (normalize_host(authority.host()), authority.port_u16()),
                Err(_) => (normalize_host(allowed.trim()), None),
            })
            .collect();
        let origins = origins
            .iter()
            .filter_map(|allowed| {
                let parsed = AllowedOrigin::parse(allowed);
                if parsed.is_none() {
                    tracing::warn!("--allow-origin {allowed} is not an origin (scheme://host[:port]); ignored");
                }
                parsed
            })
            .collect();
        Guard { hosts, origins, token, oauth }
    }

    /// Why `request` may not pass, as the response it gets.
    fn refusal(&self, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
        let host = headers
            .get(header::HOST)
            .map(|value| value.to_str().ok().and_then(|text| Authority::try_from(text).ok()))
            .unwrap_or_else(|| uri.authority().cloned());
        let Some(host) = host else {
            return Some(refuse(StatusCode::BAD_REQUEST, "bad request: missing or invalid Host header"));
        };
        let (name, port) = (normalize_host(host.host()), host.port_u16());
        let known =
            self.hosts.iter().any(|(allowed, only_port)| *allowed == name && only_port.is_none_or(|p| port == Some(p)));
        if !known && !crate::switched_off!("http.host-checked") {
            tracing::warn!(host = %host, "refused a request for a host this server is not (DNS rebinding?)");
            return Some(refuse(StatusCode::FORBIDDEN, "forbidden: Host header is not allowed"));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed = origin
                .to_str()
                .ok()
                .and_then(Origin::parse)
                .is_some_and(|origin| self.origins.iter().any(|allowed| allowed.matches(&origin)));
            if !allowed && !crate::switched_off!("http.origin-checked") {
                tracing::warn!(origin = ?origin, "refused a request from a foreign origin");
                return Some(refuse(StatusCode::FORBIDDEN, "forbidden: Origin header is not allowed"));
            }
        }
        if let Some(token) = &self.token {
            let presented = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
                .unwrap_or("");
            if !constant_time_eq(presented.as_bytes(), token.as_bytes()) && !crate::switched_off!("http.bearer-token") {
                let mut response = refuse(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mcpbox\""));
                return Some(response);
            }
        }
        None
    }
}

/// The middleware: a request passes [`Guard`] or gets its refusal. With OAuth, the
/// token's [`Principal`] goes with the request, and a stream the response opens (SSE) ends
/// when the token expires: a token that no longer counts keeps nothing open.
pub(crate) async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    if let Some(refusal) = guard.refusal(request.uri(), request.headers()) {
        return refusal;
    }
    let Some(oauth) = guard.oauth.as_ref().filter(|_| !crate::switched_off!("auth.token-required")) else {
        return next.run(request).await;
    };
    let principal = match oauth.authenticate(request.headers()).await {
        Ok(principal) => principal,
        Err(refusal) => return refusal,
    };
    let expiry = principal.expiry();
    request.extensions_mut().insert::<Arc<Principal>>(principal);
    let response = next.run(request).await;
    // A stream is SSE of unknown length; a whole answer sent as one event (the stateless
    // path's) ends by itself.
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
        && axum::body::HttpBody::size_hint(response.body()).exact().is_none();
    if !is_stream {
        return response;
    }
    let left = expiry.duration_since(std::time::SystemTime::now()).unwrap_or_default();
    let (parts, body) = response.into_parts();
    let ends = tokio::time::sleep(left);
    Response::from_parts(parts, Body::from_stream(futures::StreamExt::take_until(body.into_data_stream(), ends)))
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, Body::from(format!("{message}\n"))).into_response()
}

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// A browser's `Origin` (RFC 6454): `null`, or scheme, host and port.
#[derive(Debug, PartialEq)]
pub(super) enum Origin {
    Null,
    Tuple { scheme: String, host: String, port: Option<u16> },
}

impl Origin {
    pub(super) fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let uri = Uri::try_from(text).ok()?;
        let authority = uri.authority()?;
        Some(Origin::Tuple {
            scheme: uri.scheme_str()?.to_ascii_lowercase(),
            host: normalize_host(authority.host()),
            port: authority.port_u16(),
        })
    }
}

/// An `--allow-origin` entry: an origin, with `:*` for any port.
#[derive(Debug)]
pub(super) struct AllowedOrigin {
    origin: Origin,
    any_port: bool,
}

impl AllowedOrigin {
    pub(super) fn parse(text: &str) -> Option<AllowedOrigin> {
        match text.trim().strip_suffix(":*") {
            Some(base) => Some(AllowedOrigin { origin: Origin::parse(base)?, any_port: true }),
            None => Some(AllowedOrigin { origin: Origin::parse(text)?, any_port: false }),
        }
    }

    pub(super) fn matches(&self, origin: &Origin) -> bool {
        match (&self.origin, origin) {
            (Origin::Null, Origin::Null) => true,
            (
                Origin::Tuple { scheme, host, port: allowed_port },
                Origin::Tuple { scheme: their_scheme, host: their_host, port },
            ) => {
                // RFC 6454 §6.2: a serialized origin omits its scheme's default port.
                let default = |scheme: &str| match scheme {
                    "http" | "ws" => Some(80),
                    "https" | "wss" => Some(443),
                    _ => None,
                };
                scheme == their_scheme
                    && host == their_host
                    && (self.any_port
                        || allowed_port.is_none()
                        || allowed_port.or_else(|| default(scheme)) == port.or_else(|| default(their_scheme)))
            }
            _ => false,
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // The length of the configured token is not a secret worth a padded comparison.
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(token: Option<&str>) -> Guard {
        Guard::new(
            &["localhost".into(), "127.0.0.1".into(), "::1".into(), "mcp.example.com:8443".into()],
            &["http://localhost:*".into(), "https://app.example.com".into()],
            token.map(str::to_owned),
            None,
        )
    }

    fn status(guard: &Guard, pairs: &[(&str, &str)]) -> u16 {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        guard.refusal(&Uri::from_static("/ws"), &headers).map_or(200, |r| r.status().as_u16())
    }

    #[test]
    fn hosts_origins_and_tokens() {
        let open = guard(None);
        assert_eq!(status(&open, &[("host", "localhost:9000")]), 200);
        assert_eq!(status(&open, &[("host", "[::1]:9000")]), 200);
        assert_eq!(status(&open, &[("host", "LOCALHOST")]), 200);
        assert_eq!(status(&open, &[("host", "evil.example:9000")]), 403);
        assert_eq!(status(&open, &[("host", "mcp.example.com:8443")]), 200);
        assert_eq!(status(&open, &[("host", "mcp.example.com:80")]), 403);
        assert_eq!(status(&open, &[]), 400);
        assert_eq!(status(&open, &[("host", "localhost"), ("origin", "http://localhost:5173")]), 200);
        assert_eq!(status(&open, &[("host", "localhost"), ("origin", "https://app.example.com:443")]), 200);
        assert_eq!(status(&open, &[("host", "localhost"), ("origin", "https://evil.example")]), 403);
        assert_eq!(status(&open, &[("host", "localhost"), ("origin", "null")]), 403);
        assert_eq!(status(&open, &[("host", "localhost"), ("origin", "not an origin")]), 403);
        let guarded = guard(Some("s3cret"));
        assert_eq!(status(&guarded, &[("host", "localhost")]), 401);
        assert_eq!(status(&guarded, &[("host", "localhost"), ("authorization", "Bearer s3creT")]), 401);
        assert_eq!(status(&guarded, &[("host", "localhost"), ("authorization", "Bearer s3cret")]), 200);
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
    }
}
