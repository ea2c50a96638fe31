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
//! - `introspect.rs`: an opaque token checked by introspection (RFC 7662), cached briefly.
//!
//! Tokens are read from the `Authorization` header only (never the query string, §Access Token
//! Usage), never logged, and never passed on: plugins and every other party see at most the
//! principal.

mod introspect;
mod keys;
mod token;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::config::OAuthOptions;
use keys::IssuerKeys;

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Who a valid access token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The issuer (`iss`) that vouched for the subject.
    pub issuer: String,
    /// The subject (`sub`), unique within its issuer.
    pub subject: String,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// When the token expires (`exp`, seconds since the epoch).
    pub expires_at: u64,
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
        Ok(ResourceServer {
            audience: options.audience.clone().unwrap_or_else(|| resource.clone()),
            metadata_url: metadata_url(&resource),
            resource,
            issuers: options.issuers.iter().map(|issuer| IssuerKeys::new(issuer)).collect::<anyhow::Result<_>>()?,
            algorithms,
            scopes_supported: options.scopes_supported.clone(),
            leeway_seconds: options.leeway.as_secs(),
            introspector: options.introspection.clone().map(introspect::Introspector::new),
        })
    }

    /// The principal of the request's bearer token, or the response that refuses it.
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Response> {
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
