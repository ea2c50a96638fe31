//! Outgoing HTTP for plugins (`wasi:http/outgoing-handler`), under the plugin's
//! [`NetworkPolicy`]. Every request, including each hop of a redirect the guest follows (a
//! `wasi:http` guest follows redirects itself, so each hop is a new request), is checked here:
//! the URL against the allow-list, then every address its host resolves to. We connect to the
//! address we checked, never resolving again, so DNS rebinding cannot slip a private address in
//! between check and connect. Raw sockets are never granted: `wasi:sockets` stays denied by the
//! WASI context.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::credentials::{self, Unsendable};
use super::record::{EffectLog, HttpCounts};
use super::redaction::{Coding, Redacting, Reflections};
use crate::runtime::effects::special_purpose::refusal;
use crate::runtime::grants::address::split_host_port;
use crate::runtime::grants::credentials::LinkedAccounts;
use crate::runtime::grants::policy::NetworkPolicy;
use crate::runtime::grants::routes::Routes;

/// Connecting (DNS, TCP, TLS) gets this long unless the guest asks for less.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The client is told of at most this many refused requests per call (the host log gets as
/// many as the call's log budget holds).
const DENIALS_REPORTED: usize = 10;

/// The `wasi:http` hooks of one call: which plugin, and what its policy allows (`None`: the
/// denying stub, every request refused).
pub struct NetworkAccess {
    pub plugin: Arc<str>,
    pub policy: Option<Arc<NetworkPolicy>>,
    pub denials: Arc<AtomicUsize>,
    /// Where refusals are reported, as the call's sandbox hands it.
    pub reports: Arc<Reports>,
    /// The caller's linked accounts, for credentials that send its own token.
    pub linked: Option<Arc<dyn LinkedAccounts>>,
    /// Where the call's requests are recorded, when someone keeps a record.
    pub effects: Option<Arc<EffectLog>>,
}

/// How a refused request is reported, handed in by the call's sandbox (this room knows no
/// sandbox): the guest only gets an error code, and its author and the operator need to know
/// why.
pub struct Reports {
    /// Takes a host log line of about this many bytes from the call's log budget (its
    /// stderr's), or says it is spent: a guest that retries denied requests in a loop gets as
    /// many warnings in the host's log as fit in it, not one per request.
    pub log_line: Box<dyn Fn(usize) -> bool + Send + Sync>,
    /// Tells the client, as an `mcpbox` warning beside the guest's logs; `None`: nobody to tell.
    pub warn_client: Option<Box<dyn Fn(String) + Send + Sync>>,
}

type ResponseFuture = Box<
    dyn Future<
            Output = Result<
                (http::Response<WasiBody>, Box<dyn Future<Output = Result<(), HttpError>> + Send>),
                HttpError,
            >,
        > + Send,
>;

impl WasiHttpHooks for NetworkAccess {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _response_errors: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> ResponseFuture {
        let plugin = self.plugin.clone();
        let policy = self.policy.clone();
        let denials = self.denials.clone();
        let reports = self.reports.clone();
        let linked = self.linked.clone();
        let effects = self.effects.clone();
        Box::new(async move {
            let url = request.uri().to_string();
            // What the record says of it: never the query, where tokens travel.
            let (method, host, path) = {
                let uri = request.uri();
                // Host and port only: an authority may carry `user:password@`.
                let host = match (uri.host(), uri.port_u16()) {
                    (Some(host), Some(port)) => format!("{host}:{port}"),
                    (host, _) => host.unwrap_or_default().to_owned(),
                };
                (request.method().as_str().to_owned(), host, uri.path().to_owned())
            };
            let recorded =
                |refused: Option<String>| effects.as_ref().map(|log| log.http(&method, &host, &path, refused));
            let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(CONNECT_TIMEOUT);
            let target = match tokio::time::timeout(connect_timeout, check(policy.as_deref(), request.uri())).await {
                Ok(Ok(target)) => target,
                Ok(Err(denied)) => {
                    recorded(Some(denied.reason.clone()));
                    if (reports.log_line)(url.len() + denied.reason.len()) {
                        tracing::warn!(%plugin, %url, "denied an HTTP request: {}", denied.reason);
                    }
                    if let Some(warn_client) = &reports.warn_client
                        && denials.fetch_add(1, Ordering::Relaxed) < DENIALS_REPORTED
                    {
                        warn_client(format!("mcpbox denied plugin `{plugin}` a request to {url}: {}", denied.reason));
                    }
                    return Err(denied.code);
                }
                Err(_) => {
                    recorded(Some("no answer from DNS in time".to_owned()));
                    return Err(HttpError::DnsTimeout);
                }
            };
            tracing::debug!(%plugin, %url, address = %target.address, "HTTP request");
            // After the log line: the URL logged is the plugin's, without a credential.
            let mut request = request;
            let credentials = policy.as_deref().map_or(&[][..], |policy| &policy.credentials[..]);
            let injected = match credentials::linked_tokens(credentials, target.origin(), linked.as_deref()).await {
                Ok(tokens) => credentials::inject(credentials, target.origin(), &mut request, &tokens),
                Err(unsendable) => Err(unsendable),
            };
            let reflections = match injected {
                Ok(reflections) => reflections,
                Err(Unsendable(why)) => {
                    recorded(Some(why.clone()));
                    if (reports.log_line)(why.len()) {
                        tracing::warn!(%plugin, "did not send an HTTP request: {why}");
                    }
                    if let Some(warn_client) = &reports.warn_client {
                        warn_client(format!("mcpbox did not send plugin `{plugin}`'s request: {why}"));
                    }
                    return Err(HttpError::HttpRequestDenied);
                }
            };
            let counts = recorded(None);
            if let Some(counts) = &counts {
                let counts = counts.clone();
                request = request.map(|body| counted(body, counts, |c| &c.sent));
            }
            let (response, connection) = send(request, &target, connect_timeout).await?;
            let mut response = response.map(|body| body.map_err(HttpError::from).boxed_unsync());
            if let (Some(log), Some(counts)) = (&effects, counts) {
                log.http_status(&counts, response.status().as_u16());
                response = response.map(|body| counted(body, counts, |c| &c.received));
            }
            let response = match reflections {
                Some(reflections) => redacted(response, reflections, &plugin, &target, &reports)?,
                None => response,
            };
            Ok((response, Box::new(connection) as Box<_>))
        })
    }
}

/// `body`, its data bytes added to the counter `field` picks as they pass.
fn counted(body: WasiBody, counts: Arc<HttpCounts>, field: fn(&HttpCounts) -> &AtomicU64) -> WasiBody {
    body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            field(&counts).fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        frame
    })
    .boxed_unsync()
}

/// The response to a request that carried a credential, every reflection of it masked
/// (`redaction.rs`); a coding the scan cannot read refuses the response.
fn redacted(
    response: http::Response<WasiBody>,
    reflections: Reflections,
    plugin: &Arc<str>,
    target: &Target,
    reports: &Arc<Reports>,
) -> Result<http::Response<WasiBody>, HttpError> {
    if crate::switched_off!("credentials.redaction") {
        return Ok(response);
    }
    let (mut head, body) = response.into_parts();
    let coding = if crate::switched_off!("credentials.decoded-before-scan") {
        Coding::Identity
    } else {
        Coding::of(&head.headers).map_err(|coding| {
            if (reports.log_line)(coding.len()) {
                tracing::warn!(%plugin, origin = %target.origin_text(), "refused a response in `{coding}` coding to a request with a credential: it cannot be scanned for the credential");
            }
            HttpError::HttpResponseContentCoding(Some(coding))
        })?
    };
    if !matches!(coding, Coding::Identity) {
        head.headers.remove(http::header::CONTENT_ENCODING);
        head.headers.remove(http::header::CONTENT_LENGTH);
    }
    let (plugin, origin, reports) = (plugin.clone(), target.origin_text(), reports.clone());
    let on_masked = move |count: usize| {
        if (reports.log_line)(origin.len()) {
            tracing::warn!(%plugin, %origin, count, "masked a credential the response echoed");
        }
    };
    let masked = reflections.mask_headers(&mut head.headers);
    if masked > 0 {
        on_masked(masked);
    }
    let body = Redacting::new(body, Arc::new(reflections), coding, Box::new(on_masked));
    Ok(http::Response::from_parts(head, body.boxed_unsync()))
}

/// Why a request was refused: the code the guest gets, and the reason the host logs.
struct Denied {
    code: HttpError,
    reason: String,
}

/// Where a permitted request goes.
struct Target {
    host: String,
    port: u16,
    tls: bool,
    address: SocketAddr,
    /// The operator's routes: the CAs its TLS trusts.
    routes: Arc<Routes>,
}

impl Target {
    /// Scheme, host and port, as credentials name them.
    fn origin(&self) -> (&str, &str, u16) {
        (if self.tls { "https" } else { "http" }, &self.host, self.port)
    }

    fn origin_text(&self) -> String {
        let (scheme, host, port) = self.origin();
        format!("{scheme}://{host}:{port}")
    }
}

async fn check(policy: Option<&NetworkPolicy>, uri: &http::Uri) -> Result<Target, Denied> {
    let denied = |code, reason: String| Denied { code, reason };
    let Some(policy) = policy else {
        return Err(denied(HttpError::HttpRequestDenied, "the plugin has no network grant (denying stub)".into()));
    };
    let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let tls = match scheme.as_str() {
        "https" => true,
        "http" => false,
        other => return Err(denied(HttpError::HttpRequestDenied, format!("scheme `{other}` is not allowed"))),
    };
    let authority = uri.authority().ok_or_else(|| denied(HttpError::HttpRequestUriInvalid, "no host".into()))?;
    let (host, port) = split_host_port(authority.as_str())
        .ok_or_else(|| denied(HttpError::HttpRequestUriInvalid, "invalid port".into()))?;
    let port = port.unwrap_or(if tls { 443 } else { 80 });
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    // (A routed name is looked up after the allow-list: switched off, before it.)
    if crate::switched_off!("network.routes-within-allow-list")
        && let Some(address) = policy.routes.address(&host)
    {
        return Ok(Target { host, port, tls, address, routes: policy.routes.clone() });
    }
    if policy.admits(&scheme, &host, port).is_none() && !crate::switched_off!("network.allow-list") {
        return Err(denied(HttpError::HttpRequestDenied, format!("{scheme}://{host}:{port} is not in the allow-list")));
    }
    // A name the operator pointed at an address goes there (`[network] hosts`): still under the
    // allow-list above; the public-address rule below is the operator's to waive, and is.
    if let Some(address) = policy.routes.address(&host) {
        return Ok(Target { host, port, tls, address, routes: policy.routes.clone() });
    }
    let addresses: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| denied(HttpError::DnsError { rcode: Some(e.to_string()), info_code: None }, e.to_string()))?
            .collect(),
    };
    // One non-public address refuses the name: a host that resolves partly to a private
    // network is not one the operator meant to allow.
    if !policy.allow_private
        && !crate::switched_off!("network.public-addresses-only")
        && let Some((private, why)) = addresses.iter().find_map(|a| refusal(a.ip()).map(|why| (a.ip(), why)))
    {
        return Err(denied(
            HttpError::DestinationIpProhibited,
            format!("{host} resolves to {private}, which is not a public address: {why}"),
        ));
    }
    let address =
        *addresses.first().ok_or_else(|| denied(HttpError::DestinationNotFound, format!("{host} has no address")))?;
    Ok(Target { host, port, tls, address, routes: policy.routes.clone() })
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Sync + Unpin + 'static> Stream for T {}

async fn send(
    mut request: http::Request<WasiBody>,
    target: &Target,
    connect_timeout: Duration,
) -> Result<(http::Response<Incoming>, impl Future<Output = Result<(), HttpError>> + Send + use<>), HttpError> {
    let tcp = match tokio::time::timeout(connect_timeout, TcpStream::connect(target.address)).await {
        Ok(stream) => stream.map_err(HttpError::Connect)?,
        Err(_) => return Err(HttpError::ConnectionTimeout),
    };
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Stream> = if target.tls {
        let server_name = tokio_rustls::rustls::pki_types::ServerName::try_from(target.host.clone())
            .map_err(|_| HttpError::TlsCertificateError)?;
        let connector = tokio_rustls::TlsConnector::from(tls_config(&target.routes));
        let tls = tokio::time::timeout(connect_timeout, connector.connect(server_name, tcp))
            .await
            .map_err(|_| HttpError::ConnectionTimeout)?
            .map_err(HttpError::Tls)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The request line carries only the path: scheme and authority are for proxies.
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *request.uri_mut() =
        http::Uri::builder().path_and_query(path).build().map_err(|_| HttpError::HttpRequestUriInvalid)?;
    let connection = tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    Ok((response, async move {
        match connection.await {
            Ok(result) => result.map_err(HttpError::from),
            Err(_) => Err(HttpError::ConnectionTerminated),
        }
    }))
}

#[expect(clippy::expect_used, reason = "ring implements every TLS version rustls defaults to: a constant fact")]
fn tls_config(routes: &Routes) -> Arc<tokio_rustls::rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Arc<tokio_rustls::rustls::ClientConfig>> = std::sync::OnceLock::new();
    // The operator's extra CAs (`[network] ca_file`) beside the public roots, else the public
    // roots alone.
    let cell = if routes.extra_roots.is_empty() { &CONFIG } else { &routes.tls };
    cell.get_or_init(|| {
        let mut roots = tokio_rustls::rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        let _ = roots.add_parsable_certificates(routes.extra_roots.iter().cloned());
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports rustls' default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    })
    .clone()
}
