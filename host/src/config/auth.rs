//! `[auth]`: mcpbox as an OAuth 2.1 resource server (MCP `basic/authorization`, 2025-06-18
//! to 2026-07-28): the authorization servers whose access tokens it accepts, the resource
//! identifier tokens must be issued for, the signature algorithms it allows. Checked here,
//! used by `access/tokens/`.

use std::time::Duration;

use anyhow::{Result, anyhow};

use super::entitlements::{Entitlement, PrincipalLimits};
use super::file::{ConfigFile, FileAuth, FileAuthLimits};

/// Signature algorithms accepted unless the operator narrows them: asymmetric only (a shared
/// HMAC secret would let anyone who can verify also mint tokens).
const DEFAULT_ALGORITHMS: &[&str] = &["RS256", "ES256"];
/// The algorithms an operator may allow.
const KNOWN_ALGORITHMS: &[&str] = &["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];
/// Clock skew tolerated on `exp` and `nbf` unless configured.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// The most skew an operator may allow: more would keep expired tokens alive.
const MAX_LEEWAY_SECONDS: u64 = 300;
/// How long an introspection answer is kept unless configured: a revoked token may pass this
/// long; asking the provider on every request would make it every call's bottleneck.
const DEFAULT_INTROSPECTION_CACHE: Duration = Duration::from_secs(30);
/// The longest an operator may keep one.
const MAX_INTROSPECTION_CACHE_SECONDS: u64 = 300;

/// How access tokens are checked.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The authorization servers' issuer identifiers, as tokens' `iss` carries them.
    pub issuers: Vec<String>,
    /// This server's resource identifier (RFC 8707 / RFC 9728 `resource`): its canonical URI;
    /// `None`: the MCP endpoint's URL on the (loopback) listener, known once it is bound.
    pub resource: Option<String>,
    /// The `aud` a token must carry: the resource unless configured.
    pub audience: Option<String>,
    /// Allowed JWS algorithms.
    pub algorithms: Vec<String>,
    /// Scopes announced in the metadata and the 401 challenge.
    pub scopes_supported: Vec<String>,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway: Duration,
    /// The client credentials mcpbox introspects opaque tokens with (RFC 7662), if any.
    pub introspection: Option<IntrospectionClient>,
    /// What principals may use (`[[auth.entitlements]]`); empty: everything.
    pub entitlements: Vec<Entitlement>,
    /// Each principal's share of the server (`[auth.limits]`).
    pub limits: PrincipalLimits,
}

/// A client of the authorization server allowed to introspect tokens.
#[derive(Clone)]
pub struct IntrospectionClient {
    pub client_id: String,
    pub secret: String,
    /// How long an answer is kept (0: never).
    pub cache_for: Duration,
}

impl std::fmt::Debug for IntrospectionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret stays out of every log and debug print.
        f.debug_struct("IntrospectionClient").field("client_id", &self.client_id).finish_non_exhaustive()
    }
}

/// The file's `[auth]`, if it names an issuer. Without a `resource`, the listener must be on
/// loopback (`loopback`), where the endpoint's own URL is the resource.
pub(super) fn oauth_options(file: &ConfigFile, loopback: bool) -> Result<Option<OAuthOptions>> {
    let section = &file.config.auth;
    if section.issuers.is_empty() {
        // Every key, so that none is silently ignored (a new one must be named here).
        let FileAuth {
            issuers: _,
            resource,
            audience,
            algorithms,
            scopes_supported,
            leeway_seconds,
            introspection_client,
            introspection_secret_file,
            introspection_cache_seconds,
            entitlements,
            limits: FileAuthLimits { concurrent_calls, calls_per_minute, burst },
            // Reported by `vault.rs`, which names what needs [auth].
            link: _,
        } = section;
        let set = resource.is_some()
            || audience.is_some()
            || algorithms.is_some()
            || !scopes_supported.is_empty()
            || leeway_seconds.is_some()
            || introspection_client.is_some()
            || introspection_secret_file.is_some()
            || introspection_cache_seconds.is_some()
            || !entitlements.is_empty()
            || concurrent_calls.is_some()
            || calls_per_minute.is_some()
            || burst.is_some();
        return match set {
            true => Err(anyhow!(
                "{}: [auth] needs `issuers`, the authorization servers whose tokens count",
                file.path.display()
            )),
            false => Ok(None),
        };
    }
    let at = |key: &str| format!("{}: [auth] {key}", file.path.display());
    for issuer in &section.issuers {
        absolute_url(issuer).map_err(|e| anyhow!("{} `{issuer}` {e}", at("issuers")))?;
    }
    let resource = match (&section.resource, loopback) {
        (Some(resource), _) => {
            absolute_url(resource).map_err(|e| anyhow!("{} `{resource}` {e}", at("resource")))?;
            Some(resource.clone())
        }
        (None, true) => None,
        (None, false) => {
            return Err(anyhow!(
                "{} is needed on a listener that is not on loopback: the URL clients reach this server at (for example https://mcp.example.com/mcp)",
                at("resource")
            ));
        }
    };
    let algorithms = match &section.algorithms {
        Some(algorithms) if algorithms.is_empty() => {
            return Err(anyhow!("{} is empty: no token could pass", at("algorithms")));
        }
        Some(algorithms) => algorithms.clone(),
        None => DEFAULT_ALGORITHMS.iter().map(|a| (*a).to_owned()).collect(),
    };
    if let Some(unknown) = algorithms.iter().find(|a| !KNOWN_ALGORITHMS.contains(&a.as_str())) {
        return Err(anyhow!("{} `{unknown}` is not one of {}", at("algorithms"), KNOWN_ALGORITHMS.join(", ")));
    }
    let leeway = match section.leeway_seconds {
        Some(seconds) if seconds > MAX_LEEWAY_SECONDS => {
            return Err(anyhow!("{} must be at most {MAX_LEEWAY_SECONDS}, not {seconds}", at("leeway_seconds")));
        }
        Some(seconds) => Duration::from_secs(seconds),
        None => DEFAULT_LEEWAY,
    };
    let introspection = match (&section.introspection_client, &section.introspection_secret_file) {
        (None, None) => None,
        (Some(client_id), Some(file_path)) => {
            let path = file.resolve(file_path);
            let secret = std::fs::read_to_string(&path)
                .map_err(|e| anyhow!("{} {}: {e}", at("introspection_secret_file"), path.display()))?
                .trim()
                .to_owned();
            if secret.is_empty() {
                return Err(anyhow!("{} {} is empty", at("introspection_secret_file"), path.display()));
            }
            let cache_for = match section.introspection_cache_seconds {
                Some(seconds) if seconds > MAX_INTROSPECTION_CACHE_SECONDS => {
                    return Err(anyhow!(
                        "{} must be at most {MAX_INTROSPECTION_CACHE_SECONDS}, not {seconds}: a revoked token passes that long",
                        at("introspection_cache_seconds")
                    ));
                }
                Some(seconds) => Duration::from_secs(seconds),
                None => DEFAULT_INTROSPECTION_CACHE,
            };
            Some(IntrospectionClient { client_id: client_id.clone(), secret, cache_for })
        }
        _ => {
            return Err(anyhow!(
                "{} and introspection_secret_file go together: the client mcpbox introspects tokens as, and its secret",
                at("introspection_client")
            ));
        }
    };
    Ok(Some(OAuthOptions {
        entitlements: super::entitlements::entitlements(file)?,
        limits: super::entitlements::limits(file)?,
        introspection,
        issuers: section.issuers.clone(),
        audience: section.audience.clone(),
        resource,
        algorithms,
        scopes_supported: section.scopes_supported.clone(),
        leeway,
    }))
}

/// An `http(s)://` URL without a fragment.
fn absolute_url(text: &str) -> Result<()> {
    let uri: axum::http::Uri = text.parse().map_err(|e| anyhow!("is not a URL: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() || text.contains('#') {
        return Err(anyhow!("must be an absolute http(s) URL without a fragment"));
    }
    Ok(())
}
