//! Where the operator sends the names plugins reach, and which extra certificate authorities
//! their TLS trusts (`[network] hosts`, `[network] ca_file`): an internal service behind a
//! public-looking name, a test stand-in for a public API on loopback, an internal CA. The
//! operator's alone (no plugin, model or client can set it) and never an allowance: a request
//! still needs its plugin's allow-list entry; a name pointed here skips only the public-address
//! rule, because the operator chose its address.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use tokio_rustls::rustls::ClientConfig;
use tokio_rustls::rustls::pki_types::CertificateDer;

/// The operator's routes, shared by every plugin's network policy.
#[derive(Debug, Default)]
pub struct Routes {
    /// Host name (lower case, no trailing dot) → the address connected to instead of its DNS
    /// answer.
    pub hosts: HashMap<String, SocketAddr>,
    /// Certificate authorities trusted beside the public web's roots.
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// The TLS client configuration with `extra_roots`, made at the first request.
    pub tls: OnceLock<Arc<ClientConfig>>,
}

impl Routes {
    /// The address the operator gave `host`, if any.
    pub fn address(&self, host: &str) -> Option<SocketAddr> {
        self.hosts.get(host.trim_end_matches('.').to_ascii_lowercase().as_str()).copied()
    }
}
