//! mcpbox as an OAuth 2.1 resource server (MCP `basic/authorization`, 2025-06-18 to
//! 2026-07-28): every request to an MCP endpoint carries an access token that one of the
//! operator's authorization servers issued for this server, or gets the spec's challenge.
//!
//! - this file: the resource server, the principal a token stands for, the challenges
//!   (RFC 6750 §3: 401 with `resource_metadata` and `scope`, `error="invalid_token"` when a
//!   token was presented), the Protected Resource Metadata document (RFC 9728 §2, §3);
//! - `keys.rs`: each issuer's signing keys, found through its metadata (RFC 8414, OpenID
//!   Connect Discovery), cached, fetched again for an unknown key id at most every 30 s;
//! - `token.rs`: a JWT access token checked (signature, algorithm allow-list, `iss`, `aud`,
//!   `exp`, `nbf`);
//! - `introspect.rs`: an opaque token checked by introspection (RFC 7662), cached briefly;
//! - `cache.rs`: what is remembered about tokens, by their digest.
//!
//! Tokens are read from the `Authorization` header only (never the query string, §Access Token
//! Usage), never logged, and never passed on: plugins and every other party see at most the
//! principal.

mod cache;
mod introspect;
mod keys;
mod token;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::config::{Grantee, OAuthOptions};
use crate::runtime::Caller;
use cache::TokenCache;
use keys::IssuerKeys;

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Who a valid access token stands for, with what requests need of it made once, when the
/// token is checked (a token's principal is remembered with it and shared by its requests).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The issuer, subject and scopes: what a plugin may be told (`host.caller`).
    identity: Arc<Caller>,
    /// When the token expires (`exp`, seconds since the epoch).
    pub expires_at: u64,
    /// The claims entitlements name (`[[auth.entitlements]] claim`), each as its string
    /// values: a string claim is one, a list of strings its strings.
    pub claims: BTreeMap<String, Vec<String>>,
    /// See [`Principal::key`].
    key: String,
    /// See [`Principal::dir_name`].
    dir_name: Arc<str>,
}

impl Principal {
    pub(crate) fn new(
        issuer: String,
        subject: String,
        scopes: Vec<String>,
        expires_at: u64,
        claims: BTreeMap<String, Vec<String>>,
    ) -> Principal {
        let key = serde_json::to_string(&[&issuer, &subject]).unwrap_or_default();
        let dir_name = dir_name(&issuer, &subject).into();
        Principal { identity: Arc::new(Caller { issuer, subject, scopes }), expires_at, claims, key, dir_name }
    }

    /// Who this is, as one string: the issuer and the subject, so that two issuers' equal
    /// subjects stay two principals (JSON, so that no pair of strings spells another's).
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The name of this principal's own directory under a per-principal base (see
    /// [`dir_name`]).
    pub(crate) fn dir_name(&self) -> &Arc<str> {
        &self.dir_name
    }

    /// This principal as the runtime tells a plugin that may know (`host.caller`).
    pub(crate) fn caller(&self) -> &Arc<Caller> {
        &self.identity
    }

    /// Whether the token grants `scope`.
    pub(crate) fn has_scope(&self, scope: &str) -> bool {
        self.identity.scopes.iter().any(|s| s == scope)
    }

    /// Whether the token's claim `name` is, or holds, `value`.
    pub(crate) fn has_claim(&self, name: &str, value: &str) -> bool {
        self.claims.get(name).is_some_and(|values| values.iter().any(|v| v == value))
    }

    /// The time the token expires at.
    pub(crate) fn expiry(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.expires_at)
    }
}

/// The name of a principal's own directory under a per-principal base
/// (`runtime/principal_dirs.rs`): the issuer as [`issuer_label`], `-`, then the subject with
/// every byte but ASCII letters, digits and `-` written `_XX` (hex). Two principals never share
/// one: the label is fixed-length and distinct per configured issuer (checked at start-up), and
/// the escaping is one-to-one; no name is `.`, `..` or holds a `/`.
fn dir_name(issuer: &str, subject: &str) -> String {
    let mut name = issuer_label(issuer);
    name.push('-');
    for byte in subject.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' => name.push(byte as char),
            _ => name.push_str(&format!("_{byte:02X}")),
        }
    }
    name
}

/// An issuer in directory names: the first 16 hex digits of its SHA-256.
fn issuer_label(issuer: &str) -> String {
    use sha2::Digest;
    crate::hex::hex(&sha2::Sha256::digest(issuer.as_bytes())[..8])
}

/// The claims of `all` named in `names`, as strings.
fn picked_claims(names: &[String], all: &serde_json::Map<String, Value>) -> BTreeMap<String, Vec<String>> {
    names
        .iter()
        .filter_map(|name| {
            let values = all.get(name).filter(|v| v.is_string() || v.is_array())?;
            Some((name.clone(), strings(Some(values)).into_iter().map(str::to_owned).collect()))
        })
        .collect()
}

/// A claim that is a string or a list of strings (`aud`, `scp`, `groups`), as its strings;
/// anything else as none.
fn strings(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Checks access tokens for one MCP endpoint.
pub(crate) struct ResourceServer {
    /// This server's resource identifier.
    resource: String,
    /// The `aud` a token must carry.
    audience: String,
    /// Where the metadata document is, as clients reach it.
    metadata_url: String,
    issuers: Vec<IssuerKeys>,
    algorithms: Vec<jsonwebtoken::Algorithm>,
    scopes_supported: Vec<String>,
    leeway_seconds: u64,
    /// Checks opaque tokens, if the operator gave a client to introspect them as.
    introspector: Option<introspect::Introspector>,
    /// The claims a principal keeps (those entitlements name).
    claim_names: Vec<String>,
    /// JWTs verified already, with the key sets' generation they were verified with
    /// (`token.rs`).
    verified: TokenCache<(Arc<Principal>, u64)>,
}

impl ResourceServer {
    /// The resource server for the endpoint the listener serves at `endpoint` (its URL, the
    /// resource identifier unless the operator gave one).
    pub(crate) fn new(options: &OAuthOptions, endpoint: &str) -> anyhow::Result<ResourceServer> {
        let resource = options.resource.clone().unwrap_or_else(|| endpoint.to_owned());
        let algorithms = options
            .algorithms
            .iter()
            .map(|name| name.parse().map_err(|_| anyhow::anyhow!("[auth] algorithms: `{name}` is not a JWS algorithm")))
            .collect::<anyhow::Result<_>>()?;
        let mut labels: Vec<String> = options.issuers.iter().map(|issuer| issuer_label(issuer)).collect();
        labels.sort();
        labels.dedup();
        if labels.len() != options.issuers.len() {
            anyhow::bail!("[auth] issuers: two issuers share a directory label; tell the mcpbox developers");
        }
        Ok(ResourceServer {
            audience: options.audience.clone().unwrap_or_else(|| resource.clone()),
            metadata_url: metadata_url(&resource),
            resource,
            issuers: options.issuers.iter().map(|issuer| IssuerKeys::new(issuer)).collect::<anyhow::Result<_>>()?,
            algorithms,
            scopes_supported: options.scopes_supported.clone(),
            leeway_seconds: options.leeway.as_secs(),
            introspector: options.introspection.clone().map(introspect::Introspector::new),
            claim_names: options
                .entitlements
                .iter()
                .filter_map(|e| match &e.grantee {
                    Grantee::Claim { name, .. } => Some(name.clone()),
                    Grantee::Scope(_) => None,
                })
                .collect(),
            verified: TokenCache::new(),
        })
    }

    /// The principal of the request's bearer token, or the response that refuses it.
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<Arc<Principal>, Response> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(self.challenge(None));
        };
        // The scheme is case-insensitive (RFC 9110 §11.1).
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(self.challenge(Some("the Authorization header is not `Bearer <token>`")));
        };
        match token::validate(self, token).await {
            Ok(principal) => Ok(principal),
            Err(why) => {
                // The reason, never the token.
                tracing::info!("refused an access token: {why}");
                Err(self.challenge(Some(&why)))
            }
        }
    }

    /// A number that changes whenever an issuer's key set is fetched again.
    fn key_generation(&self) -> u64 {
        self.issuers.iter().map(IssuerKeys::generation).fold(0, u64::wrapping_add)
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub(crate) fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.issuers.iter().map(IssuerKeys::issuer).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            document["scopes_supported"] = json!(self.scopes_supported);
        }
        document
    }

    /// The paths the metadata is served at on this listener: the root well-known path, and the
    /// path-inserted ones for the resource's path and the local endpoint's (RFC 9728 §3.1; MCP
    /// `authorization-server-discovery` §Protected Resource Metadata Discovery).
    pub(crate) fn metadata_paths(&self, local_path: &str) -> Vec<String> {
        let mut paths = vec![METADATA_PATH.to_owned()];
        for path in [resource_path(&self.resource), local_path.to_owned()] {
            let inserted = format!("{METADATA_PATH}{}", path.trim_end_matches('/'));
            if !paths.contains(&inserted) {
                paths.push(inserted);
            }
        }
        paths
    }

    /// 401 with `WWW-Authenticate: Bearer` naming the metadata and the scopes; with `error`
    /// when a token was presented and refused (RFC 6750 §3.1).
    fn challenge(&self, refused: Option<&str>) -> Response {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.scopes_supported.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", self.scopes_supported.join(" ")));
        }
        if let Some(why) = refused {
            value.push_str(&format!(", error=\"invalid_token\", error_description=\"{}\"", quoted(why)));
        }
        let message = match refused {
            Some(why) => format!("unauthorized: {why}\n"),
            None => "unauthorized: this server needs an access token (Authorization: Bearer)\n".to_owned(),
        };
        let mut response = (StatusCode::UNAUTHORIZED, Body::from(message)).into_response();
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

impl ResourceServer {
    /// 403 with `error="insufficient_scope"`, the scope that would allow the request (if a
    /// scope would), the metadata, and `description` (MCP `basic/authorization` §Scope
    /// Challenge Handling, RFC 6750 §3.1).
    pub(crate) fn insufficient_scope(&self, scope: Option<&str>, description: &str) -> Response {
        let mut value = "Bearer error=\"insufficient_scope\"".to_owned();
        if let Some(scope) = scope {
            value.push_str(&format!(", scope=\"{}\"", quoted(scope)));
        }
        value.push_str(&format!(
            ", resource_metadata=\"{}\", error_description=\"{}\"",
            self.metadata_url,
            quoted(description)
        ));
        let mut response = (StatusCode::FORBIDDEN, Body::from(format!("forbidden: {description}\n"))).into_response();
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The metadata URL of `resource`: the well-known path inserted between its host and path.
fn metadata_url(resource: &str) -> String {
    let path = resource_path(resource);
    let origin = resource.strip_suffix(&path).unwrap_or(resource).trim_end_matches('/');
    format!("{origin}{METADATA_PATH}{}", path.trim_end_matches('/'))
}

/// The path of `resource` (`/mcp` of `https://host/mcp`), without query.
fn resource_path(resource: &str) -> String {
    resource.parse::<axum::http::Uri>().map(|uri| uri.path().to_owned()).unwrap_or_default()
}

/// `text` fit for a quoted-string: no quotes, backslashes or control characters.
fn quoted(text: &str) -> String {
    text.chars().map(|c| if c == '"' || c == '\\' || c.is_control() { '\'' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_are_one_to_one_and_never_leave_the_base() {
        let names: Vec<String> = [
            ("https://a", "ada"),
            ("https://b", "ada"),
            ("https://a", "ad_61"),
            ("https://a", "ada_"),
            ("https://a", ".."),
            ("https://a", "../b"),
            ("https://a", "a/b"),
        ]
        .iter()
        .map(|(issuer, subject)| dir_name(issuer, subject))
        .collect();
        let mut distinct = names.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        for name in &names {
            assert!(!name.contains('/') && !name.contains('.') && name.len() > 17, "{name}");
        }
        assert!(names[0].ends_with("-ada"), "{}", names[0]);
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        assert_eq!(
            metadata_url("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://mcp.example.com"),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080/a/b/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b"
        );
    }
}
