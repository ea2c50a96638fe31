//! `[network]`: the operator's routes for every plugin's outgoing HTTP. `hosts` points a name
//! at an address (`"api.github.com" = "127.0.0.1:8443"`), `ca_file` adds certificate
//! authorities to the public web's roots. Read with the rest of the config; a bad entry names
//! the file, line and key.
//!
//! ```toml
//! [network]
//! hosts = { "api.github.com" = "10.0.0.7:443" }
//! ca_file = "internal-ca.pem"
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;

use anyhow::{Context, Result, anyhow, bail};
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use crate::config::file::ConfigFile;
use crate::runtime::grants::routes::Routes;

/// The routes `file` configures (none without a `[network]` section).
pub(crate) fn routes(file: &ConfigFile) -> Result<Routes> {
    let section = &file.config.network;
    let mut hosts = HashMap::new();
    for (name, address) in &section.hosts {
        let at = file.at(address.span());
        let host = name.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() || host.contains(['/', ':', '*', ' ']) {
            bail!("{at}: [network] hosts: `{name}` is not a host name");
        }
        let target: SocketAddr = address.get_ref().parse().map_err(|_| {
            anyhow!(
                "{at}: [network] hosts.\"{name}\": `{}` is not ADDRESS:PORT (e.g. 127.0.0.1:8443)",
                address.get_ref()
            )
        })?;
        hosts.insert(host, target);
    }
    let mut extra_roots = Vec::new();
    if let Some(ca_file) = &section.ca_file {
        let at = file.at(ca_file.span());
        let path = file.resolve(ca_file.get_ref());
        let pem =
            std::fs::read(&path).with_context(|| format!("{at}: [network] ca_file: cannot read {}", path.display()))?;
        for certificate in CertificateDer::pem_slice_iter(&pem) {
            let certificate =
                certificate.map_err(|e| anyhow!("{at}: [network] ca_file: {} is not PEM: {e}", path.display()))?;
            extra_roots.push(certificate.into_owned());
        }
        if extra_roots.is_empty() {
            bail!("{at}: [network] ca_file: {} holds no certificate", path.display());
        }
    }
    Ok(Routes { hosts, extra_roots, tls: Default::default() })
}
