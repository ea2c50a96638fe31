//! The resource server: every request's bearer token checked (a JWT by `token.rs`, an opaque
//! one by `introspect.rs`, either remembered by `cache.rs`), the challenges (RFC 6750 §3: 401
//! with `resource_metadata` and `scope`, `error="invalid_token"` when a token was presented),
//! and the Protected Resource Metadata document (RFC 9728 §2, §3).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::decode_header;

use super::cache::{self, TokenCache};
use super::introspect::Introspector;
use super::keys::IssuerKeys;
use super::rules::TokenRules;
use super::token;
use crate::access::principal::{Principal, issuer_label};
use crate::config::{Grantee, OAuthOptions};

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Checks access tokens for one MCP endpoint.
pub(crate) struct ResourceServer {
    /// This server's resource identifier.
    resource: String,
    /// Where the metadata document is, as clients reach it.
    metadata_url: String,
    scopes_supported: Vec<String>,
    /// What a token must satisfy.
    rules: TokenRules,
    /// Checks opaque tokens, if the operator gave a client to introspect them as.
    introspector: Option<Introspector>,
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
        let rules = TokenRules {
            audience: options.audience.clone().unwrap_or_else(|| resource.clone()),
            issuers: options.issuers.iter().map(|issuer| IssuerKeys::new(issuer)).collect::<anyhow::Result<_>>()?,
            algorithms,
            leeway_seconds: options.leeway.as_secs(),
            claim_names: options
                .entitlements
                .iter()
                .filter_map(|e| match &e.grantee {
                    Grantee::Claim { name, .. } => Some(name.clone()),
                    Grantee::Scope(_) => None,
                })
                .collect(),
        };
        Ok(ResourceServer {
            metadata_url: metadata_url(&resource),
            resource,
            rules,
            scopes_supported: options.scopes_supported.clone(),
            introspector: options.introspection.clone().map(Introspector::new),
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
        match self.validate(token).await {
            Ok(principal) => Ok(principal),
            Err(why) => {
                // The reason, never the token.
                tracing::info!("refused an access token: {why}");
                Err(self.challenge(Some(&why)))
            }
        }
    }

    /// The principal `token` stands for, or why it does not count (words for the challenge's
    /// `error_description` and the log, never the token itself).
    async fn validate(&self, token: &str) -> Result<Arc<Principal>, String> {
        let Ok(header) = decode_header(token) else {
            // Opaque: the introspection's own cache decides how long an answer stands.
            return match &self.introspector {
                Some(introspector) => introspector.check(&self.rules, token).await,
                None => Err("the token is not a JWT (and this server introspects no opaque tokens)".to_owned()),
            };
        };
        let digest = cache::digest(token);
        let keys = self.rules.key_generation();
        if let Some((principal, generation)) = self.verified.get(&digest)
            && (generation == keys || crate::switched_off!("auth.remembered-token-rechecked"))
        {
            return Ok(principal);
        }
        let principal = Arc::new(token::verify(&self.rules, token, header).await?);
        // Until `exp` (with the leeway); verified with the keys of now, or newer ones fetched
        // meanwhile: either way, current.
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let left = principal.expires_at.saturating_add(self.rules.leeway_seconds).saturating_sub(now);
        self.verified.insert(digest, (principal.clone(), keys), Instant::now() + Duration::from_secs(left));
        Ok(principal)
    }

    /// This server's resource identifier.
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes it announces.
    pub(crate) fn scopes_supported(&self) -> &[String] {
        &self.scopes_supported
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub(crate) fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.rules.issuers.iter().map(IssuerKeys::issuer).collect::<Vec<_>>(),
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
