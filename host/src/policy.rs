//! What one plugin may touch. Deny by default: a plugin gets a directory, a host on the network
//! or an environment variable only if the operator's config names it. A plugin can *request*
//! grants in its own metadata ([`RequestedPolicy`]); requests are shown by `mcpbox inspect`
//! beside the grants, and never granted by themselves.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::roots::AllowedDir;

/// Everything the operator grants one plugin beyond computing.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Whether the plugin sees the shared roots (`--root`, `[[roots]]`, narrowed by the
    /// client's roots).
    pub shared_roots: bool,
    /// Directories of this plugin alone.
    pub dirs: Vec<PluginDir>,
    /// Outgoing HTTP; `None`: the plugin may not import `wasi:http` (or gets the denying stub).
    pub network: Option<Arc<NetworkPolicy>>,
    /// Environment variables its guest sees, values resolved already.
    pub env: Arc<[(String, String)]>,
    /// Link interfaces the plugin imports but was not granted as stubs that deny (`wasi:http`)
    /// or trap (interfaces mcpbox does not know), instead of refusing to load it.
    pub stub_ungranted: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { shared_roots: true, dirs: Vec::new(), network: None, env: Arc::from([]), stub_ungranted: false }
    }
}

/// A directory granted to one plugin.
#[derive(Debug, Clone)]
pub struct PluginDir {
    pub dir: AllowedDir,
    /// Grant only the parts of it inside the client's roots (when the client has roots).
    pub within_client_roots: bool,
}

/// Where a plugin may send HTTP requests.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    pub allow: Vec<HostPattern>,
    /// Also reach loopback, private and link-local addresses (off: only public addresses,
    /// checked after DNS resolution, so a public name pointing at 127.0.0.1 is refused).
    pub allow_private: bool,
}

impl NetworkPolicy {
    /// The allow-list entry that admits `scheme://host:port`, if any.
    pub fn admits(&self, scheme: &str, host: &str, port: u16) -> Option<&HostPattern> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allow.iter().find(|pattern| pattern.matches(scheme, &host, port))
    }
}

/// One allow-list entry: `https://api.example.com`, `https://*.example.com:8443`,
/// `http://10.0.0.5:8080`. The port defaults to the scheme's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    pub scheme: String,
    pub host: HostMatch,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostMatch {
    /// This host only (a name or an IP literal).
    Exact(String),
    /// Any name ending in `.suffix` (not `suffix` itself).
    Subdomains(String),
}

impl HostPattern {
    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        if !self.scheme.eq_ignore_ascii_case(scheme) || self.port != port {
            return false;
        }
        match &self.host {
            HostMatch::Exact(exact) => exact == host,
            HostMatch::Subdomains(suffix) => {
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
                    && host.parse::<IpAddr>().is_err()
            }
        }
    }
}

impl FromStr for HostPattern {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Self> {
        let (scheme, rest) =
            text.split_once("://").ok_or_else(|| anyhow!("`{text}` needs a scheme: http:// or https://"))?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => bail!("`{text}`: only http and https are supported"),
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains(['/', '?', '#', '@']) || authority.is_empty() {
            bail!("`{text}` must be scheme://host[:port], without path or user");
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| anyhow!("`{text}` has an invalid port"))?;
        let port = port.unwrap_or(default_port);
        let host = host.to_ascii_lowercase();
        let host = match host.strip_prefix("*.") {
            Some(suffix) if !suffix.is_empty() && !suffix.contains('*') => HostMatch::Subdomains(suffix.to_owned()),
            _ if host.contains('*') => bail!("`{text}`: a wildcard may only be the first label, as in *.example.com"),
            _ => HostMatch::Exact(host.trim_start_matches('[').trim_end_matches(']').to_owned()),
        };
        Ok(HostPattern { scheme, host, port })
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = match &self.host {
            HostMatch::Exact(host) if host.contains(':') => format!("[{host}]"),
            HostMatch::Exact(host) => host.clone(),
            HostMatch::Subdomains(suffix) => format!("*.{suffix}"),
        };
        write!(f, "{}://{host}:{}", self.scheme, self.port)
    }
}

/// `host:port`, `[v6]:port`, `host` → host (brackets kept for v6) and port.
pub fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        return match rest.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if rest.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((authority, None)),
    }
}

/// Whether `ip` is a globally routable unicast address. Everything else (loopback, private,
/// link-local such as the 169.254.169.254 metadata service, shared, documentation,
/// multicast, reserved) is refused unless the operator allows private addresses.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let segments = v6.segments();
            // NAT64 (64:ff9b::/96) embeds an IPv4 address.
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = segments[6].to_be_bytes();
                let [c, d] = segments[7].to_be_bytes();
                return is_public_v4(Ipv4Addr::new(a, b, c, d));
            }
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (segments[0] & 0xfe00) == 0xfc00 // unique local
                || (segments[0] & 0xffc0) == 0xfe80 // link-local
                || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
                || segments[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // IETF protocol assignments, TEST-NET-1
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224) // multicast, reserved, broadcast
}

/// The grants a plugin asks for, from its own metadata: a `mcpbox-policy` custom section in the
/// component, or a `<plugin>.policy.toml` file next to it. Informational: only the operator's
/// config grants anything.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedPolicy {
    /// Why the plugin needs what it asks for, for the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Hosts it wants to reach, in allow-list syntax (`https://api.example.com`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// Environment variables it reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// `"none"`, `"read-only"` or `"read-write"`: access it wants to the roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<FsAccess>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsAccess {
    None,
    ReadOnly,
    ReadWrite,
}

/// The custom section a component may carry its [`RequestedPolicy`] in (TOML text).
pub const POLICY_SECTION: &str = "mcpbox-policy";

/// Reads the plugin's requested policy: the custom section of `bytes`, else the sidecar file
/// `<stem>.policy.toml` next to `path`. `Ok(None)` if it has neither.
pub fn read_requested(path: &Path, bytes: &[u8]) -> Result<Option<RequestedPolicy>> {
    let parse = |origin: &str, text: &str| -> Result<RequestedPolicy> {
        toml::from_str(text).map_err(|e| anyhow!("{origin}: invalid requested policy: {}", e.message().trim_end()))
    };
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        // A malformed binary is reported by the compiler with a better message.
        let Ok(payload) = payload else { break };
        if let wasmparser::Payload::CustomSection(section) = payload
            && section.name() == POLICY_SECTION
        {
            let text = std::str::from_utf8(section.data())
                .with_context(|| format!("{}: the {POLICY_SECTION} section is not UTF-8", path.display()))?;
            return parse(&format!("{} (section {POLICY_SECTION})", path.display()), text).map(Some);
        }
    }
    let sidecar = path.with_extension("policy.toml");
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => parse(&sidecar.display().to_string(), &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", sidecar.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let policy = NetworkPolicy {
            allow: ["https://api.example.com", "https://*.example.org:8443", "http://10.0.0.5:8080", "http://[::1]"]
                .iter()
                .map(|p| p.parse().unwrap())
                .collect(),
            allow_private: false,
        };
        assert!(policy.admits("https", "API.example.com.", 443).is_some());
        assert!(policy.admits("http", "api.example.com", 443).is_none(), "scheme must match");
        assert!(policy.admits("https", "api.example.com", 8443).is_none(), "port must match");
        assert!(policy.admits("https", "a.b.example.org", 8443).is_some());
        assert!(policy.admits("https", "example.org", 8443).is_none(), "the wildcard needs a label");
        assert!(policy.admits("https", "evilexample.org", 8443).is_none());
        assert!(policy.admits("http", "10.0.0.5", 8080).is_some());
        assert!(policy.admits("http", "::1", 80).is_some());
        assert_eq!(policy.allow[1].to_string(), "https://*.example.org:8443");
        for bad in ["example.com", "ftp://x", "https://a/b", "https://u@x", "https://a.*.com", "https://x:99999"] {
            assert!(bad.parse::<HostPattern>().is_err(), "{bad}");
        }
    }

    #[test]
    fn public_addresses() {
        for private in
            ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"]
        {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for private in ["::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "ff02::1"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }
}
