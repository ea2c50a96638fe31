//! The HTTP listener's options: the flags (`--http`, `--ws-path`, `--legacy-sse`,
//! `--heartbeat-ms`, ...) over the file's `[http]` section, checked: paths start with `/` and
//! differ from each other, the heartbeat is 0 (off) or 100 ms to an hour.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use toml::Spanned;

use super::ServeArgs;
use super::auth::OAuthOptions;
use super::file::ConfigFile;
use super::problems::{Problems, flag_limit, pick, spanned_limit};
use super::store::seconds_within;

/// How often SSE streams and WebSockets get a heartbeat unless configured: rmcp's default
/// and below the 60 s idle timeout of nginx and most load balancers.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);
/// A heartbeat more often than every 100 ms is traffic, not a keep-alive; one rarer than an
/// hour keeps nothing alive.
const HEARTBEAT_MS: std::ops::RangeInclusive<u64> = 100..=3_600_000;

/// How long in-flight calls may finish after a stop signal unless configured (Kubernetes
/// waits 30 s before SIGKILL by default: room for a drain delay too).
const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The drain delay and the grace period: up to an hour each (0: none).
const SHUTDOWN_SECONDS: std::ops::RangeInclusive<u64> = 0..=3600;

/// Options of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on (port 0 picks one).
    pub addr: SocketAddr,
    /// The MCP endpoint, `/mcp` by default.
    pub path: String,
    /// `Host` values accepted besides the loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted besides `http://localhost`, `127.0.0.1` and `[::1]` (any
    /// port). Requests without `Origin` (non-browser clients) pass.
    pub allowed_origins: Vec<String>,
    /// If set, every MCP request needs `Authorization: Bearer <token>` (the simple mode).
    pub auth_token: Option<String>,
    /// If set, every MCP request needs an access token from one of these authorization servers.
    pub oauth: Option<OAuthOptions>,
    /// Serve HTTPS with this certificate chain and key (PEM files).
    pub tls: Option<TlsFiles>,
    /// The largest request body, and WebSocket message, accepted (`--max-message-bytes`).
    pub max_body_bytes: usize,
    /// The WebSocket endpoint, if served.
    pub ws_path: Option<String>,
    /// The 2024-11-05 HTTP+SSE transport's endpoints, if served.
    pub legacy_sse: Option<LegacySsePaths>,
    /// How often open SSE streams get a keep-alive comment and WebSockets a ping; `None`: never.
    pub heartbeat: Option<Duration>,
    /// After a stop signal: how long in-flight calls may finish.
    pub shutdown_grace: Duration,
    /// After a stop signal: how long new requests are still taken while readiness fails.
    pub drain_delay: Duration,
    /// What legacy session ids start with (`NAME.RANDOM`): the replica's name, when one is
    /// given (`--replica`) or the server shares a store (a fleet); else plain random ids.
    pub session_prefix: Option<String>,
}

/// The certificate chain and key of an HTTPS listener.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Where the 2024-11-05 HTTP+SSE transport is.
#[derive(Debug, Clone)]
pub struct LegacySsePaths {
    /// `GET` opens a session's stream (`/sse`).
    pub stream: String,
    /// Its `endpoint` event names this path, for the POSTs (`/sse/messages`).
    pub messages: String,
}

/// The listener's options, if `--http` asks for one; each bad value a problem.
pub(super) fn http_options(
    file: &ConfigFile,
    args: &ServeArgs,
    max_body_bytes: usize,
    problems: &mut Problems,
) -> Option<HttpOptions> {
    let addr = args.http?;
    let section = &file.config.http;
    let auth_token = problems.take(args.auth_token_file.as_deref().map(read_token).transpose()).flatten();
    let heartbeat = problems.take(heartbeat(file, args)).unwrap_or(Some(DEFAULT_HEARTBEAT));
    let path = problems.take(checked_path(&args.http_path, "--http-path")).unwrap_or_default();
    let oauth = problems.take(super::auth::oauth_options(file, addr.ip().is_loopback())).flatten();
    let tls = problems.take(tls_files(file, args)).flatten();
    let behind_proxy = args.behind_tls_proxy || section.behind_tls_proxy.unwrap_or(false);
    // Bearer tokens in the clear off this machine are anyone's on the path.
    if oauth.is_some()
        && tls.is_none()
        && !behind_proxy
        && !addr.ip().is_loopback()
        && !crate::switched_off!("config.auth-needs-tls-off-loopback")
    {
        problems.take::<()>(Err(anyhow!(
            "[auth] on a plain HTTP listener off loopback ({addr}) would take access tokens in the clear: serve HTTPS (--tls-cert and --tls-key, or [http] tls_cert and tls_key), or say a TLS-terminating proxy stands in front (--behind-tls-proxy, [http] behind_tls_proxy = true)"
        )));
    }
    if oauth.is_some() && auth_token.is_some() {
        problems.take::<()>(Err(anyhow!(
            "--auth-token-file and [auth] issuers are two ways to authorize: choose one (the static token is the simple mode)"
        )));
    }
    let serve_ws = !args.no_ws && (args.ws_path.is_some() || section.websocket.unwrap_or(true));
    let ws_path = serve_ws
        .then(|| {
            problems.take(path_setting(file, args.ws_path.as_deref(), "--ws-path", &section.ws_path, "ws_path", "/ws"))
        })
        .flatten();
    let serve_legacy = args.legacy_sse
        || args.legacy_sse_path.is_some()
        || section.legacy_sse.unwrap_or(crate::switched_off!("http.legacy-sse-off"));
    let legacy_sse_path = serve_legacy
        .then(|| {
            let path = args.legacy_sse_path.as_deref();
            problems.take(path_setting(
                file,
                path,
                "--legacy-sse-path",
                &section.legacy_sse_path,
                "legacy_sse_path",
                "/sse",
            ))
        })
        .flatten();
    // Two endpoints at one path: the later would silently take the other's requests.
    let mut taken = vec![("/healthz".to_owned(), "the health check"), (path.clone(), "--http-path")];
    let mut claim = |path: &Option<String>, what: &'static str| {
        let Some(path) = path else { return };
        if let Some((_, other)) = taken.iter().find(|(p, _)| p == path) {
            problems.take::<()>(Err(anyhow!("{what} {path} is already the path of {other}; give it one of its own")));
        }
        taken.push((path.clone(), what));
    };
    claim(&ws_path, "the WebSocket endpoint");
    claim(&legacy_sse_path, "the HTTP+SSE stream");

    let legacy_sse = legacy_sse_path
        .map(|stream| LegacySsePaths { messages: format!("{}/messages", stream.trim_end_matches('/')), stream });
    claim(&legacy_sse.as_ref().map(|paths| paths.messages.clone()), "the HTTP+SSE message endpoint");
    Some(HttpOptions {
        addr,
        path,
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        auth_token,
        oauth,
        tls,
        max_body_bytes,
        ws_path,
        legacy_sse,
        heartbeat,
        session_prefix: None,
        shutdown_grace: pick(
            problems,
            flag_limit(args.shutdown_grace, "--shutdown-grace", seconds_within(SHUTDOWN_SECONDS)),
            spanned_limit(
                file,
                &section.shutdown_grace_seconds,
                "[http] shutdown_grace_seconds",
                seconds_within(SHUTDOWN_SECONDS),
            ),
        )
        .unwrap_or(DEFAULT_SHUTDOWN_GRACE),
        drain_delay: pick(
            problems,
            flag_limit(args.drain_delay, "--drain-delay", seconds_within(SHUTDOWN_SECONDS)),
            spanned_limit(
                file,
                &section.drain_delay_seconds,
                "[http] drain_delay_seconds",
                seconds_within(SHUTDOWN_SECONDS),
            ),
        )
        .unwrap_or_default(),
    })
}

/// `--tls-cert`/`--tls-key` over `[http] tls_cert`/`tls_key`: both or neither.
fn tls_files(file: &ConfigFile, args: &ServeArgs) -> Result<Option<TlsFiles>> {
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        return Ok(Some(TlsFiles { cert: cert.clone(), key: key.clone() }));
    }
    let section = &file.config.http;
    match (&section.tls_cert, &section.tls_key) {
        (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert: file.resolve(cert), key: file.resolve(key) })),
        (None, None) => Ok(None),
        _ => Err(anyhow!("{}: [http] tls_cert and tls_key go together", file.path.display())),
    }
}

/// `--heartbeat-ms` over `[http] heartbeat_ms`; `None` is off.
fn heartbeat(file: &ConfigFile, args: &ServeArgs) -> Result<Option<Duration>> {
    let check = |ms: u64| -> Result<Option<Duration>, String> {
        match ms {
            0 => Ok(None),
            ms if HEARTBEAT_MS.contains(&ms) => Ok(Some(Duration::from_millis(ms))),
            ms => Err(format!("must be 0 (off) or {} to {} ms, not {ms}", HEARTBEAT_MS.start(), HEARTBEAT_MS.end())),
        }
    };
    if let Some(ms) = args.heartbeat_ms {
        return check(ms).map_err(|e| anyhow!("--heartbeat-ms {e}"));
    }
    match &file.config.http.heartbeat_ms {
        Some(ms) => check(*ms.get_ref()).map_err(|e| anyhow!("{}: [http] heartbeat_ms {e}", file.at(ms.span()))),
        None => Ok(Some(DEFAULT_HEARTBEAT)),
    }
}

/// A path from its flag, else the file's key, else `default`.
fn path_setting(
    file: &ConfigFile,
    flag_value: Option<&str>,
    flag: &str,
    key_value: &Option<Spanned<String>>,
    key: &str,
    default: &str,
) -> Result<String> {
    match (flag_value, key_value) {
        (Some(path), _) => checked_path(path, flag),
        (None, Some(path)) => checked_path(path.get_ref(), &format!("{}: [http] {key}", file.at(path.span()))),
        (None, None) => Ok(default.to_owned()),
    }
}

/// An endpoint path: `/` and then no query, fragment or space.
fn checked_path(path: &str, what: &str) -> Result<String> {
    let fits = path.starts_with('/') && !path.contains(['?', '#', ' ', '{', '}', '*']);
    if fits {
        Ok(path.to_owned())
    } else {
        Err(anyhow!("{what} must be a path starting with `/`, without `?`, `#`, spaces or braces, not `{path}`"))
    }
}

/// The static bearer token (`--auth-token-file`), trimmed; an empty file is an error.
fn read_token(path: &Path) -> Result<String> {
    let token =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the auth token file {}", path.display()))?;
    let token = token.trim().to_owned();
    if token.is_empty() {
        return Err(anyhow!("the auth token file {} is empty", path.display()));
    }
    Ok(token)
}
