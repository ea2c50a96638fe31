//! What one plugin may touch. Deny by default: a plugin gets a directory, a host on the network
//! or an environment variable only if the operator's config names it. A plugin can *request*
//! grants in its own metadata ([`RequestedPolicy`](crate::runtime::grants::requested::RequestedPolicy)); requests are shown by `mcpbox inspect`
//! beside the grants, and never granted by themselves.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};

use super::allowed::AllowedDir;
use super::credentials::Credential;
use crate::runtime::grants::address::split_host_port;

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
    /// The command-line arguments its guest sees after its program name (`[plugin.NAME] args`):
    /// a server built from a command-line program reads its options there.
    pub args: Arc<[String]>,
    /// Link interfaces the plugin imports but was not granted as stubs that deny (`wasi:http`)
    /// or trap (interfaces mcpbox does not know), instead of refusing to load it.
    pub stub_ungranted: bool,
    /// Mount each granted directory at its own host path instead of `/roots/<name>`, so a
    /// plugin that stands in for a native server (the bundled `filesystem`) takes and returns
    /// the paths its users and their prompts already use. The same directories either way:
    /// only where they appear changes.
    pub host_paths: bool,
    /// Tell the plugin who a call is made for (`host.caller`): the operator's choice, off by
    /// default.
    pub caller: bool,
    /// The browser permissions its MCP Apps may ask the client for (`[plugin.NAME]
    /// ui_permissions`: camera, microphone, geolocation, clipboardWrite); none by default.
    pub ui_permissions: Vec<String>,
    /// The served tools it may call through the host (`[plugin.NAME] may_call`, WIT 0.1.4);
    /// none by default.
    pub may_call: super::may_call::MayCall,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            shared_roots: true,
            dirs: Vec::new(),
            network: None,
            env: Arc::from([]),
            args: Arc::from([]),
            stub_ungranted: false,
            host_paths: false,
            caller: false,
            ui_permissions: Vec::new(),
            may_call: super::may_call::MayCall::default(),
        }
    }
}

impl Policy {
    /// The OAuth clients whose linked accounts its credentials send (the token vault's).
    pub fn linked_clients(&self) -> Vec<String> {
        let mut clients: Vec<String> = self
            .network
            .iter()
            .flat_map(|network| network.credentials.iter())
            .flat_map(|credential| credential.value.linked_clients().map(str::to_owned).collect::<Vec<_>>())
            .collect();
        clients.sort();
        clients.dedup();
        clients
    }
}

/// A directory granted to one plugin.
#[derive(Debug, Clone)]
pub struct PluginDir {
    /// The directory.
    pub dir: AllowedDir,
    /// Grant only the parts of it inside the client's roots (when the client has roots).
    pub within_client_roots: bool,
}

/// Where a plugin may send HTTP requests.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    /// The hosts it may reach.
    pub allow: Vec<HostPattern>,
    /// Also reach loopback, private and link-local addresses (off: only public addresses,
    /// checked after DNS resolution, so a public name pointing at 127.0.0.1 is refused).
    pub allow_private: bool,
    /// Credentials set on requests to their origins, each within `allow` (checked when the
    /// config is read).
    pub credentials: Vec<Arc<Credential>>,
    /// The operator's `[network]` routes: names pointed at addresses, extra CAs.
    pub routes: Arc<crate::runtime::grants::routes::Routes>,
}

impl NetworkPolicy {
    /// The allow-list entry that admits `scheme://host:port`, if any.
    pub fn admits(&self, scheme: &str, host: &str, port: u16) -> Option<&HostPattern> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allow.iter().find(|pattern| pattern.matches(scheme, &host, port))
    }
}

/// One allow-list entry: `https://api.example.com`, `https://*.example.com:8443`,
/// `http://10.0.0.5:8080`, `https://*` (any public host). The port defaults to the scheme's;
/// `:*` is any port. `*` alone is any host on any port over either scheme, for a plugin such as
/// `fetch` whose user names the URL: every address must still be public (unless
/// `allow_private_network`), so "any host" never reaches loopback, the LAN or a cloud's
/// metadata service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// `http` or `https`; `None`: either.
    pub scheme: Option<String>,
    /// The host or hosts.
    pub host: HostMatch,
    /// The port (the scheme's unless given); `None`: any.
    pub port: Option<u16>,
}

/// Which hosts an allow-list entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostMatch {
    /// This host only (a name or an IP literal).
    Exact(String),
    /// Any name ending in `.suffix` (not `suffix` itself).
    Subdomains(String),
    /// Any host at all (`*`): names and IP literals, public addresses only unless the policy
    /// allows private ones.
    Any,
}

impl HostPattern {
    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        if self.scheme.as_deref().is_some_and(|s| !s.eq_ignore_ascii_case(scheme))
            || self.port.is_some_and(|p| p != port)
        {
            return false;
        }
        match &self.host {
            HostMatch::Any => true,
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
        if text.trim() == "*" {
            return Ok(HostPattern { scheme: None, host: HostMatch::Any, port: None });
        }
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
        let (authority, any_port) = match authority.strip_suffix(":*") {
            Some(host) => (host, true),
            None => (authority, false),
        };
        let (host, port) = split_host_port(authority).ok_or_else(|| anyhow!("`{text}` has an invalid port"))?;
        let port = if any_port { None } else { Some(port.unwrap_or(default_port)) };
        let host = host.to_ascii_lowercase();
        let host = match host.strip_prefix("*.") {
            _ if host == "*" => HostMatch::Any,
            Some(suffix) if !suffix.is_empty() && !suffix.contains('*') => HostMatch::Subdomains(suffix.to_owned()),
            _ if host.contains('*') => bail!("`{text}`: a wildcard may only be the first label, as in *.example.com"),
            _ => HostMatch::Exact(host.trim_start_matches('[').trim_end_matches(']').to_owned()),
        };
        Ok(HostPattern { scheme: Some(scheme), host, port })
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = match &self.host {
            HostMatch::Exact(host) if host.contains(':') => format!("[{host}]"),
            HostMatch::Exact(host) => host.clone(),
            HostMatch::Subdomains(suffix) => format!("*.{suffix}"),
            HostMatch::Any => "*".to_owned(),
        };
        let port = self.port.map_or_else(|| "*".to_owned(), |port| port.to_string());
        match &self.scheme {
            Some(scheme) => write!(f, "{scheme}://{host}:{port}"),
            None => write!(f, "*"),
        }
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
            credentials: Vec::new(),
            routes: Default::default(),
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
        let any: NetworkPolicy = NetworkPolicy {
            allow: vec!["https://*".parse().unwrap()],
            allow_private: false,
            credentials: Vec::new(),
            routes: Default::default(),
        };
        assert!(any.admits("https", "example.com", 443).is_some());
        assert!(any.admits("https", "192.0.2.1", 443).is_some(), "addresses are checked after resolution");
        assert!(any.admits("http", "example.com", 80).is_none(), "scheme must match");
        assert!(any.admits("https", "example.com", 8443).is_none(), "port must match");
        let everything: NetworkPolicy = NetworkPolicy {
            allow: vec!["*".parse().unwrap()],
            allow_private: false,
            credentials: Vec::new(),
            routes: Default::default(),
        };
        assert!(everything.admits("http", "example.com", 8080).is_some());
        assert_eq!(everything.allow[0].to_string(), "*");
        let any_port: HostPattern = "http://*:*".parse().unwrap();
        assert_eq!(any_port.to_string(), "http://*:*");
        for bad in [
            "example.com",
            "ftp://x",
            "https://a/b",
            "https://u@x",
            "https://a.*.com",
            "https://x:99999",
            "*://x",
            "https://*x",
        ] {
            assert!(bad.parse::<HostPattern>().is_err(), "{bad}");
        }
    }
}
