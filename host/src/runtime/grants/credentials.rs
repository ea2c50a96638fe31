//! Credentials the operator attaches to a plugin's outgoing requests (`[[plugin.NAME.credentials]]`,
//! docs/credentials.md): which origin, where in the request, and a value made of text and named
//! secrets. Values only: the network room (`effects/credentials.rs`) sets them on a request after
//! its checks; the config layer reads the secrets and keeps them current. A secret's bytes are
//! wiped when dropped and never printed: `Debug` and [`Credential::describe`] name secrets, never
//! their values.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, RwLock};

use anyhow::{Result, anyhow, bail};
use zeroize::Zeroizing;

use super::address::split_host_port;

/// One secret the operator named in `[secrets.NAME]`, current as its source last read.
pub struct Secret {
    name: String,
    value: RwLock<Zeroizing<Vec<u8>>>,
}

impl Secret {
    /// A secret named `name` holding `value`.
    pub fn new(name: &str, value: Zeroizing<Vec<u8>>) -> Arc<Secret> {
        Arc::new(Secret { name: name.to_owned(), value: RwLock::new(value) })
    }

    /// Its name in `[secrets.NAME]`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Takes a new value (a rotated file); the old one is wiped.
    pub fn replace(&self, value: Zeroizing<Vec<u8>>) {
        *self.value.write().unwrap_or_else(std::sync::PoisonError::into_inner) = value;
    }

    /// A copy of the value, wiped when the caller drops it.
    pub(crate) fn value(&self) -> Zeroizing<Vec<u8>> {
        self.value.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secret `{}`", self.name)
    }
}

/// Exactly one scheme, host and port: where a credential may go. No wildcard: a credential
/// for "any subdomain" would go to hosts the operator never looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl FromStr for Origin {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Origin> {
        let one_origin = || anyhow!("`{text}` must be one origin, scheme://host[:port], without wildcards or path");
        let (scheme, authority) = text.split_once("://").ok_or_else(one_origin)?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => bail!("`{text}`: only http and https are supported"),
        };
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        if authority.is_empty() || authority.contains(['/', '?', '#', '@', '*']) {
            return Err(one_origin());
        }
        let (host, port) = split_host_port(authority).ok_or_else(one_origin)?;
        let host = host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
        Ok(Origin { scheme, host, port: port.unwrap_or(default_port) })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        write!(f, "{}://{host}:{}", self.scheme, self.port)
    }
}

/// Text with `{secrets.NAME}` placeholders, each bound to its secret when the config is read.
pub struct Template {
    parts: Vec<Part>,
}

enum Part {
    Text(String),
    Secret(Arc<Secret>),
    /// The access token of the caller's own account at this OAuth client (a token vault).
    Linked(String),
}

/// The access tokens of the caller's linked accounts a request needs, by OAuth client.
pub(crate) type LinkedTokens = HashMap<String, Zeroizing<Vec<u8>>>;

/// The caller's accounts at third parties (`[oauth_clients.NAME]`), as the token vault keeps
/// them: handed to a call by the protocol layer, bound to the call's principal.
pub trait LinkedAccounts: Send + Sync {
    /// The current access token of the caller's account at `client` (refreshed first when it
    /// is about to expire), or why there is none, naming the client and never a value.
    fn access_token<'a>(&'a self, client: &'a str) -> TokenFuture<'a>;
}

/// What [`LinkedAccounts::access_token`] returns.
pub type TokenFuture<'a> = Pin<Box<dyn Future<Output = Result<Zeroizing<Vec<u8>>, String>> + Send + 'a>>;

impl Template {
    /// Parses `text`, looking each `{secrets.NAME}` up; an unknown name is an error naming it.
    /// `{{` and `}}` stand for braces.
    pub fn parse(text: &str, lookup: impl Fn(&str) -> Option<Arc<Secret>>) -> Result<Template> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find(['{', '}']) {
            literal.push_str(&rest[..at]);
            let tail = &rest[at..];
            if let Some(after) = tail.strip_prefix("{{").or_else(|| tail.strip_prefix("}}")) {
                literal.push_str(&tail[..1]);
                rest = after;
                continue;
            }
            let close = tail.find('}').filter(|_| tail.starts_with('{'));
            let Some(close) = close else {
                bail!("an unmatched `{}` (write `{{{{` or `}}}}` for a brace)", &tail[..1])
            };
            let name = tail[1..close]
                .strip_prefix("secrets.")
                .ok_or_else(|| anyhow!("`{}` is not a placeholder: only {{secrets.NAME}} is", &tail[..=close]))?;
            let secret = lookup(name).ok_or_else(|| anyhow!("no [secrets.{name}] is configured"))?;
            if !literal.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut literal)));
            }
            parts.push(Part::Secret(secret));
            rest = &tail[close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(Template { parts })
    }

    /// `Bearer ` and the caller's access token at `client`.
    pub fn bearer_of_linked(client: &str) -> Template {
        Template { parts: vec![Part::Text("Bearer ".into()), Part::Linked(client.to_owned())] }
    }

    /// The value with each secret's current bytes and the caller's tokens in `linked`, wiped
    /// when dropped; a linked token not in `linked` renders as nothing (the request is not
    /// sent: `effects/credentials.rs` fetches every one first).
    pub(crate) fn render(&self, linked: &LinkedTokens) -> Zeroizing<Vec<u8>> {
        let mut value = Zeroizing::new(Vec::new());
        for part in &self.parts {
            match part {
                Part::Text(text) => value.extend_from_slice(text.as_bytes()),
                Part::Secret(secret) => value.extend_from_slice(&secret.value()),
                Part::Linked(client) => value.extend_from_slice(linked.get(client).map_or(&[][..], |t| &t[..])),
            }
        }
        value
    }

    /// The OAuth clients whose linked tokens it holds.
    pub fn linked_clients(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Linked(client) => Some(client.as_str()),
            _ => None,
        })
    }

    /// The secrets it holds.
    pub fn secrets(&self) -> impl Iterator<Item = &Arc<Secret>> {
        self.parts.iter().filter_map(|part| match part {
            Part::Secret(secret) => Some(secret),
            Part::Text(_) | Part::Linked(_) => None,
        })
    }
}

/// Where in a request a credential goes.
pub enum Placement {
    /// This header, replacing any value the plugin set.
    Header(http::HeaderName),
    /// This query parameter, replacing any the plugin set.
    Query(String),
    /// `Authorization: Basic` with this user name; the credential's value is the password.
    Basic { username: Template },
}

/// One `[[plugin.NAME.credentials]]` entry.
pub struct Credential {
    pub origin: Origin,
    pub placement: Placement,
    pub value: Template,
}

impl Credential {
    /// Whether a request to `scheme://host:port` gets it: exactly its origin (host compared
    /// as the allow-list compares it: without case, without a trailing dot).
    pub(crate) fn applies_to(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.origin.scheme.eq_ignore_ascii_case(scheme)
            && self.origin.port == port
            && self.origin.host == host.trim_end_matches('.').to_ascii_lowercase()
    }

    /// Every secret it sends.
    pub fn secrets(&self) -> impl Iterator<Item = &Arc<Secret>> {
        let username = match &self.placement {
            Placement::Basic { username } => Some(username.secrets()),
            _ => None,
        };
        self.value.secrets().chain(username.into_iter().flatten())
    }

    /// What it is, for logs, `check` and `inspect`: where it goes and which secrets, never a value.
    pub fn describe(&self) -> String {
        let place = match &self.placement {
            Placement::Header(name) => format!("header `{name}`"),
            Placement::Query(name) => format!("query parameter `{name}`"),
            Placement::Basic { .. } => "HTTP basic auth".to_owned(),
        };
        let mut secrets: Vec<String> = self.secrets().map(|s| format!("`{}`", s.name())).collect();
        secrets.dedup();
        let linked: Vec<String> = self.value.linked_clients().map(|c| format!("`{c}`")).collect();
        let from = match (secrets.is_empty(), linked.is_empty()) {
            (_, false) => format!("each caller's own account at {}", linked.join(", ")),
            (true, true) => "no secret".to_owned(),
            (false, true) => format!("secrets {}", secrets.join(", ")),
        };
        format!("{place} for {} ({from})", self.origin)
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Arc<Secret> {
        Secret::new(name, Zeroizing::new(value.as_bytes().to_vec()))
    }

    #[test]
    fn templates_bind_secrets_and_render_their_current_values() {
        let github = secret("github", "ghp_first");
        let lookup = |name: &str| (name == "github").then(|| github.clone());
        let template = Template::parse("Bearer {secrets.github} {{x}}", lookup).unwrap();
        assert_eq!(&**template.render(&LinkedTokens::new()), b"Bearer ghp_first {x}");
        github.replace(Zeroizing::new(b"ghp_second".to_vec()));
        assert_eq!(&**template.render(&LinkedTokens::new()), b"Bearer ghp_second {x}");
        for bad in ["{secrets.jira}", "{env.HOME}", "Bearer {secrets.github", "}"] {
            assert!(Template::parse(bad, lookup).is_err(), "{bad}");
        }
    }

    #[test]
    fn nothing_prints_a_value() {
        let github = secret("github", "ghp_value");
        let credential = Credential {
            origin: "https://api.github.com".parse().unwrap(),
            placement: Placement::Header(http::header::AUTHORIZATION),
            value: Template::parse("Bearer {secrets.github}", |_| Some(github.clone())).unwrap(),
        };
        let shown = format!("{credential:?} {github:?} {}", credential.describe());
        assert!(!shown.contains("ghp_value"), "{shown}");
        assert!(shown.contains("https://api.github.com:443") && shown.contains("`github`"), "{shown}");
    }

    #[test]
    fn an_origin_is_exactly_one_scheme_host_and_port() {
        let origin: Origin = "https://API.example.com".parse().unwrap();
        assert_eq!(origin.to_string(), "https://api.example.com:443");
        for bad in ["https://*.example.com", "*", "https://example.com:*", "example.com", "ftp://example.com"] {
            assert!(bad.parse::<Origin>().is_err(), "{bad}");
        }
        let credential = Credential {
            origin,
            placement: Placement::Query("key".into()),
            value: Template::parse("x", |_| None).unwrap(),
        };
        assert!(credential.applies_to("https", "api.EXAMPLE.com.", 443));
        assert!(!credential.applies_to("http", "api.example.com", 443));
        assert!(!credential.applies_to("https", "api.example.com", 8443));
        assert!(!credential.applies_to("https", "evil.api.example.com", 443));
    }
}
