//! The HTTP listener: the Streamable HTTP transport (MCP `basic/transports` §Streamable HTTP,
//! 2025-11-25 and 2026-07-28) on axum, with rmcp's `StreamableHttpService` doing the protocol's
//! HTTP rules: legacy sessions (`Mcp-Session-Id`, DELETE, GET SSE streams, `Last-Event-ID`),
//! stateless 2026-07-28 requests (`Mcp-Method`/`Mcp-Name` checked against the body),
//! 405/406/415/400/404 and 413 on an oversized body; in front of it, the stateless requests
//! that need only their response take a lean path of ours (`stateless.rs`). Beside it, on the
//! same listener, the WebSocket transport (`websocket.rs`, at `/ws` unless turned off) and,
//! when the operator turns it on, the 2024-11-05 HTTP+SSE transport (`legacy_sse.rs`). Every endpoint but `/healthz` and `/readyz`
//! passes `guard.rs` first (Host, Origin, bearer token). We add the safety defaults (loopback,
//! same-machine origins only), heartbeats on every SSE stream (`--heartbeat-ms`; a response
//! slow to start becomes one, `early_stream.rs`),
//! `TCP_NODELAY`, and a graceful shutdown that lets in-flight calls finish.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::cors::{self, Cors};
use super::early_stream;
use super::guard::{self, Guard};
use super::legacy_sse::{self, LegacySse};
use super::precheck::Precheck;
use super::sessions::ReplicaSessions;
use super::stateless::Lean;
use super::tls::Tls;
use super::unread_body;
use super::websocket::{self, Sockets};
use crate::access::ResourceServer;
use crate::config::HttpOptions;
use crate::mcp::{McpState, Session};
use crate::telemetry::metrics::metrics;

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
    let tls = options.tls.as_ref().map(|files| Tls::load(&files.cert, &files.key)).transpose()?;
    let (scheme, ws_scheme) = if tls.is_some() { ("https", "wss") } else { ("http", "ws") };
    bound(local);

    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(local.ip().to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> =
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()];
    origins.extend(options.allowed_origins.iter().cloned());
    // Sessions and streams close when this token is cancelled, after the grace period.
    let sessions_done = CancellationToken::new();
    let oauth = match &options.oauth {
        Some(oauth) => Some(Arc::new(ResourceServer::new(oauth, &format!("{scheme}://{local}{}", options.path))?)),
        None => None,
    };
    if let (Some(vault), Some(oauth)) = (&state.vault, &oauth) {
        vault.serve_at(oauth.clone());
    }
    let door = Arc::new(Guard::new(&hosts, &origins, options.auth_token.clone(), oauth.clone()));
    // rmcp checks Host and Origin again behind `guard.rs`, with the same lists.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_sse_keep_alive(options.heartbeat.filter(|_| !crate::switched_off!("http.sse-heartbeats")))
        .with_cancellation_token(sessions_done.clone());
    // Each legacy SSE stream keeps its last 64 events for `Last-Event-ID` resumption (rmcp's
    // default is 16); idle sessions end after rmcp's 5 minutes.
    let mut in_memory = LocalSessionManager::default();
    in_memory.session_config.channel_capacity = SSE_RESUME_EVENTS;
    let sessions = Arc::new(ReplicaSessions::new(in_memory, options.session_prefix.clone()));
    metrics().sample_with({
        let sessions = sessions.clone();
        move |metrics| {
            if let Some(count) = sessions.count() {
                metrics.sessions.with_label_values(&["streamable_http"]).set(count as i64);
            }
        }
    });
    let service = {
        let state = state.clone();
        StreamableHttpService::new(move || Ok(Session::new(state.clone())), sessions.clone(), config)
    };
    let lean = Lean::new(state.clone(), options.max_body_bytes, sessions_done.clone());
    let precheck =
        oauth.clone().map(|oauth| Precheck::new(state.clone(), oauth, sessions.clone(), options.max_body_bytes));

    let mut mcp = Router::new()
        .route(
            &options.path,
            any(streamable_http).with_state(Arc::new(StreamableHttp { lean, rmcp: service, precheck })),
        )
        .layer(middleware::from_fn_with_state(options.heartbeat, early_stream::stream_early))
        .layer(middleware::from_fn(session_end_is_no_content));
    if let Some(path) = &options.ws_path {
        let sockets = Arc::new(Sockets {
            state: state.clone(),
            max_message_bytes: options.max_body_bytes,
            heartbeat: options.heartbeat,
            shutdown: sessions_done.clone(),
        });
        mcp = mcp.route(path, get(websocket::upgrade).with_state(sockets));
    }
    if let Some(paths) = &options.legacy_sse {
        let sse =
            Arc::new(LegacySse::new(state.clone(), paths.messages.clone(), options.heartbeat, sessions_done.clone()));
        mcp = mcp.route(&paths.stream, get(legacy_sse::open).with_state(sse.clone())).route(
            &paths.messages,
            post(legacy_sse::post).with_state(sse).layer(DefaultBodyLimit::max(options.max_body_bytes)),
        );
    }
    let mut mcp = mcp.route_layer(middleware::from_fn_with_state(door, guard::check));
    // Outside the guard: a preflight carries no token (browser-based hosts, docs/apps.md).
    if let Some(cors) = Cors::new(&options.allowed_origins) {
        mcp = mcp.route_layer(middleware::from_fn_with_state(cors, cors::cors));
    }
    let mut app =
        mcp.route("/healthz", get(|| async { "ok\n" })).route("/readyz", get(readyz).with_state(state.clone()));
    // The token vault's links are opened by a browser, without a bearer token; each checks
    // what it needs itself (access/vault/links.rs).
    if let Some(vault) = &state.vault {
        app = app.merge(crate::access::link_routes(vault.clone()));
    }
    // Protected Resource Metadata is public: a client reads it to learn where to get a token.
    if let Some(oauth) = oauth {
        let document = oauth.metadata().to_string();
        for path in oauth.metadata_paths(&options.path) {
            let document = document.clone();
            let json = [(axum::http::header::CONTENT_TYPE, "application/json")];
            app = app.route(&path, get(move || async move { (json, document.clone()) }));
        }
    }

    // Outermost: whatever refuses a request before its body is read says the connection closes.
    let app = app.layer(middleware::from_fn(unread_body::close_when_body_unread));

    // A stop signal fails readiness first; new requests are still taken for the drain delay
    // (a load balancer notices), then none, and in-flight calls have the grace period.
    let graceful = {
        let (shutdown, sessions_done, state) = (shutdown.clone(), sessions_done.clone(), state.clone());
        let (drain_delay, grace) = (options.drain_delay, options.shutdown_grace);
        async move {
            shutdown.cancelled().await;
            state.health.drain();
            if !drain_delay.is_zero() {
                tracing::info!("shutting down: not ready; taking requests for {drain_delay:?} more");
                tokio::time::sleep(drain_delay).await;
            }
            tracing::info!("shutting down: no new connections; in-flight calls have {grace:?}");
            // Subscriptions end with their completion result, not with the connection.
            state.health.end_listens();
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                sessions_done.cancel();
            });
        }
    };
    tracing::info!("serving MCP over {scheme}://{local}{}", options.path);
    if let Some(path) = &options.ws_path {
        tracing::info!("serving MCP over {ws_scheme}://{local}{path}");
    }
    if let Some(paths) = &options.legacy_sse {
        tracing::info!(
            "serving MCP over the 2024-11-05 HTTP+SSE transport at {scheme}://{local}{} (deprecated)",
            paths.stream
        );
    }
    match &tls {
        Some(tls) => {
            let _reloading = tls.watch()?;
            axum::serve(tls.listener(listener)?, app).with_graceful_shutdown(graceful).await
        }
        None => {
            // Without TCP_NODELAY, sequential requests stall on Nagle + delayed ACK (~44 ms each).
            let listener = listener.tap_io(|stream| {
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::warn!("cannot set TCP_NODELAY: {e}");
                }
            });
            axum::serve(listener, app).with_graceful_shutdown(graceful).await
        }
    }
    .context("http server failed")?;
    sessions_done.cancel();
    Ok(())
}

/// The Streamable HTTP endpoint: the stateless requests that need only their response on the
/// lean path (`stateless.rs`), everything else on rmcp's service.
struct StreamableHttp {
    lean: Lean,
    rmcp: StreamableHttpService<Session, ReplicaSessions>,
    /// With `[auth]`: sessions bound to principals, entitlements and limits (`precheck.rs`).
    precheck: Option<Precheck>,
}

/// One request at the endpoint. rmcp's service is called through an `Arc`, not as a tower
/// service: that is cloned for every request, twice (by axum's router, then by its own
/// `call`), with its config's host and origin lists; that was 4% of the server's CPU per call.
async fn streamable_http(State(endpoint): State<Arc<StreamableHttp>>, request: Request) -> Response {
    metrics().requests.with_label_values(&["streamable_http"]).inc();
    let serve = |request| async {
        match endpoint.lean.serve(request).await {
            Ok(response) => response,
            Err(request) => endpoint.rmcp.handle(request).await.map(axum::body::Body::new),
        }
    };
    match &endpoint.precheck {
        Some(precheck) => precheck.around(request, serve).await,
        None => serve(request).await,
    }
}

/// `/readyz`: 200 when this replica should get traffic, 503 with the reasons when not.
async fn readyz(State(state): State<Arc<McpState>>) -> Response {
    let (ready, body) = state.health.readiness().await;
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
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
