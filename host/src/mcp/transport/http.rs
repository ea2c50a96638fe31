//! The Streamable HTTP transport (MCP `basic/transports` §Streamable HTTP, 2025-11-25 and
//! 2026-07-28) on axum, with rmcp's `StreamableHttpService` doing the protocol's HTTP rules:
//! legacy sessions (`Mcp-Session-Id`, DELETE, GET SSE streams, `Last-Event-ID`), stateless
//! 2026-07-28 requests (`Mcp-Method`/`Mcp-Name` checked against the body), 405/406/415/400/404
//! and 413 on an oversized body, and `Host`/`Origin` validation against DNS rebinding. We add
//! the safety defaults (loopback, same-machine origins only), optional bearer auth,
//! `/healthz`, `TCP_NODELAY`, and a graceful shutdown that lets in-flight calls finish.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::config::HttpOptions;
use crate::mcp::{McpState, Session};

/// How long in-flight requests may run on after a shutdown signal before their streams and
/// sessions are closed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Events kept per legacy SSE stream for resumption.
const SSE_RESUME_EVENTS: usize = 64;

/// Serves MCP over HTTP until `shutdown` is cancelled. `bound` receives the address actually
/// bound (useful with port 0).
pub async fn serve(
    state: Arc<McpState>,
    options: HttpOptions,
    shutdown: CancellationToken,
    bound: impl FnOnce(SocketAddr),
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    let local = listener.local_addr()?;
    bound(local);

    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(local.ip().to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> =
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()];
    origins.extend(options.allowed_origins.iter().cloned());
    // Sessions and streams close when this token is cancelled, after the grace period.
    let sessions_done = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(sessions_done.clone());
    // Each legacy SSE stream keeps its last 64 events for `Last-Event-ID` resumption (rmcp's
    // default is 16); idle sessions end after rmcp's 5 minutes.
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.channel_capacity = SSE_RESUME_EVENTS;
    let service = StreamableHttpService::new(move || Ok(Session::new(state.clone())), Arc::new(sessions), config);

    let mut mcp =
        Router::new().nest_service(&options.path, service).layer(middleware::from_fn(session_end_is_no_content));
    if let Some(token) = options.auth_token.clone() {
        mcp = mcp.route_layer(middleware::from_fn_with_state(Arc::<str>::from(token), require_bearer));
    }
    let app = mcp.route("/healthz", get(|| async { "ok\n" }));

    // Without TCP_NODELAY, sequential requests stall on Nagle + delayed ACK (~44 ms each).
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
    });
    let graceful = {
        let shutdown = shutdown.clone();
        let sessions_done = sessions_done.clone();
        async move {
            shutdown.cancelled().await;
            tracing::info!("shutting down: no new connections; in-flight calls have {SHUTDOWN_GRACE:?}");
            tokio::spawn(async move {
                tokio::time::sleep(SHUTDOWN_GRACE).await;
                sessions_done.cancel();
            });
        }
    };
    tracing::info!("serving MCP over http://{local}{}", options.path);
    axum::serve(listener, app).with_graceful_shutdown(graceful).await.context("http server failed")?;
    sessions_done.cancel();
    Ok(())
}

/// A DELETE that ended a session answers 204 rather than rmcp's 202: nothing is pending, and
/// clients (the Python SDK among them) treat anything but 200/204 as a failed termination.
async fn session_end_is_no_content(request: Request, next: Next) -> Response {
    let is_delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if is_delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Bearer-token check (RFC 6750) in constant time, so the comparison leaks nothing about
/// how much of a guess was right.
async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    if constant_time_eq(presented.as_bytes(), token.as_bytes()) {
        return next.run(request).await;
    }
    let mut response = (StatusCode::UNAUTHORIZED, Body::from("missing or wrong bearer token\n")).into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mcpbox\""));
    response
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // The length of the configured token is not a secret worth a padded comparison.
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn constant_time_eq_compares() {
        assert!(super::constant_time_eq(b"secret", b"secret"));
        assert!(!super::constant_time_eq(b"secret", b"secreT"));
        assert!(!super::constant_time_eq(b"secret", b"secret2"));
    }
}
