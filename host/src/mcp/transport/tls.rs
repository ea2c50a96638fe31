//! TLS on the HTTP listener (rustls, on ring like the rest of the host), so mcpbox can face
//! clients directly: a certificate chain and key from PEM files, read again when either file
//! changes (a renewed certificate serves new connections; a file that does not load keeps the
//! previous pair serving, logged). Handshakes run in tasks of their own, each bounded in time,
//! so a client that never finishes one holds up nobody else's connection.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::server::TlsStream;

use crate::config::in_dir_of;

/// How long a client has to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections that finished their handshake and wait for the server to take them.
const READY_BACKLOG: usize = 128;

/// The certificate and key files, and the config made of them now.
pub(crate) struct Tls {
    cert: PathBuf,
    key: PathBuf,
    current: Arc<RwLock<Arc<ServerConfig>>>,
}

impl Tls {
    /// Loads `cert` (a PEM chain, leaf first) and `key` (PEM PKCS#8, PKCS#1 or SEC1).
    pub(crate) fn load(cert: &Path, key: &Path) -> Result<Tls> {
        let config = server_config(cert, key)?;
        Ok(Tls { cert: cert.to_owned(), key: key.to_owned(), current: Arc::new(RwLock::new(Arc::new(config))) })
    }

    /// Reloads the pair when either file changes, for as long as the returned watcher lives.
    pub(crate) fn watch(&self) -> Result<Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>> {
        let (cert, key, current) = (self.cert.clone(), self.key.clone(), self.current.clone());
        let watched = [cert.clone(), key.clone()];
        let mut loaded = pair_digest(&cert, &key);
        let mut debouncer = new_debouncer(Duration::from_millis(200), move |events: DebounceEventResult| {
            let Ok(events) = events else { return };
            // Any change beside the files (a Kubernetes secret volume swaps a `..data` symlink
            // there, and the files' own paths see no event); read again only if they changed.
            if !events.iter().any(|e| watched.iter().any(|w| in_dir_of(&e.path, w))) {
                return;
            }
            let now = pair_digest(&cert, &key);
            if now == loaded {
                return;
            }
            match server_config(&cert, &key) {
                Ok(config) => {
                    loaded = now;
                    if !crate::switched_off!("tls.renewed-certificate") {
                        *current.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(config);
                    }
                    tracing::info!(cert = %cert.display(), "TLS certificate reloaded");
                }
                Err(e) => tracing::warn!("keeping the TLS certificate serving: {e:#}"),
            }
        })
        .context("cannot watch the TLS certificate")?;
        for dir in [&self.cert, &self.key].into_iter().filter_map(|p| p.parent()).map(dir_or_here) {
            debouncer
                .watcher()
                .watch(&dir, RecursiveMode::NonRecursive)
                .with_context(|| format!("cannot watch {}", dir.display()))?;
        }
        Ok(debouncer)
    }

    /// Serves TLS on `tcp`: accepted connections are handshaken in tasks of their own.
    pub(crate) fn listener(&self, tcp: TcpListener) -> Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (ready, incoming) = mpsc::channel(READY_BACKLOG);
        tokio::spawn(accept_loop(tcp, self.current.clone(), ready));
        Ok(TlsListener { incoming, local })
    }
}

/// Accepts TCP connections and hands each to a handshake task.
async fn accept_loop(
    tcp: TcpListener,
    current: Arc<RwLock<Arc<ServerConfig>>>,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let (stream, peer) = match tcp.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if ready.is_closed() {
            return;
        }
        // Without TCP_NODELAY, sequential requests stall on Nagle + delayed ACK.
        let _ = stream.set_nodelay(true);
        let config = current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, TlsAcceptor::from(config).accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = ready.send((tls, peer)).await;
                }
                Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

/// The listener axum serves on: connections whose handshake finished.
pub(crate) struct TlsListener {
    incoming: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(connection) => connection,
            // The accept loop ended: nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}

/// A rustls server config of the pair, HTTP/1.1 by ALPN.
fn server_config(cert: &Path, key: &Path) -> Result<ServerConfig> {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let pem = std::fs::read(cert).with_context(|| format!("cannot read the TLS certificate {}", cert.display()))?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!("{}: not a PEM certificate chain: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(anyhow!("{} holds no certificate", cert.display()));
    }
    let pem = std::fs::read(key).with_context(|| format!("cannot read the TLS key {}", key.display()))?;
    let private =
        PrivateKeyDer::from_pem_slice(&pem).map_err(|e| anyhow!("{}: not a PEM private key: {e}", key.display()))?;
    let mut config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| anyhow!("{} and {} are not a certificate and its key: {e}", cert.display(), key.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

fn dir_or_here(dir: &Path) -> PathBuf {
    if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir.to_owned() }
}

/// A digest of the pair's bytes as they are now (`None`: unreadable), to tell a change.
fn pair_digest(cert: &Path, key: &Path) -> Option<[u8; 32]> {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(std::fs::read(cert).ok()?);
    digest.update(std::fs::read(key).ok()?);
    Some(digest.finalize().into())
}
