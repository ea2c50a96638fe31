//! An authorization server's signing keys: its metadata found at the well-known URLs (RFC 8414
//! §3.1 with the path inserted, then OpenID Connect Discovery), its `issuer` checked to be the
//! one configured (RFC 8414 §3.3: a mismatch is refused), its `jwks_uri` fetched and cached. A
//! token with a key id the cache does not have fetches the set again (a rotated key) at once,
//! then at most once every 30 s, so a flood of forged key ids cannot turn into a flood of
//! requests to the issuer; an issuer that cannot be reached is tried again at most as often.
//! Every response is bounded.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::JwkSet;
use tokio::sync::Mutex;

/// The least time between two fetches of one issuer's keys.
const MIN_REFRESH: Duration = Duration::from_secs(30);
/// The largest metadata or key set document accepted.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// One issuer and the keys it signs with.
pub(super) struct IssuerKeys {
    issuer: String,
    client: reqwest::Client,
    state: Mutex<Cached>,
    /// How many times the key set was fetched: what verified tokens are remembered against.
    generation: std::sync::atomic::AtomicU64,
}

struct Cached {
    /// The issuer's metadata, once found.
    endpoints: Option<Endpoints>,
    keys: JwkSet,
    /// Whether a key set was ever fetched.
    fetched: bool,
    /// The last fetch for a key id the cached set lacked, or that failed.
    last_try: Option<Instant>,
    /// Whether that last try failed.
    failed: bool,
}

impl IssuerKeys {
    pub(super) fn new(issuer: &str) -> Result<IssuerKeys> {
        // rustls with ring, the host's provider (installing it twice is harmless).
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("cannot make the HTTP client for the authorization server")?;
        let cached = Cached {
            endpoints: None,
            keys: JwkSet { keys: Vec::new() },
            fetched: false,
            last_try: None,
            failed: false,
        };
        Ok(IssuerKeys { issuer: issuer.to_owned(), client, state: Mutex::new(cached), generation: Default::default() })
    }

    /// Changes whenever the key set is fetched.
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(super) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The key `kid` names (or the only key, without a `kid`), fetching the key set if it is
    /// not cached and the last fetch is old enough.
    pub(super) async fn key(&self, kid: Option<&str>) -> Result<DecodingKey, String> {
        let mut cached = self.state.lock().await;
        if let Some(key) = find(&cached.keys, kid)? {
            return Ok(key);
        }
        let unreachable = format!("the keys of {} cannot be fetched", self.issuer);
        if cached.last_try.is_some_and(|at| at.elapsed() < MIN_REFRESH) {
            return Err(match cached.failed {
                true => unreachable,
                false => format!("no key `{}` among {}'s keys", kid.unwrap_or("-"), self.issuer),
            });
        }
        // The first fetch is free; each later one (a key id the set lacks) starts the clock.
        if cached.fetched || crate::switched_off!("auth.rotated-key-fetched") {
            cached.last_try = Some(Instant::now());
        }
        match self.fetch(&mut cached).await {
            Ok(()) => {
                cached.fetched = true;
                cached.failed = false;
            }
            Err(e) => {
                tracing::warn!("cannot fetch the signing keys of {}: {e:#}", self.issuer);
                cached.last_try = Some(Instant::now());
                cached.failed = true;
                return Err(unreachable);
            }
        }
        find(&cached.keys, kid)?.ok_or_else(|| format!("no key `{}` among {}'s keys", kid.unwrap_or("-"), self.issuer))
    }

    /// The issuer's RFC 7662 introspection endpoint, if its metadata names one.
    pub(super) async fn introspection_endpoint(&self) -> Result<Option<String>, String> {
        let mut cached = self.state.lock().await;
        let endpoints = self.endpoints(&mut cached).await.map_err(|e| {
            tracing::warn!("cannot read the metadata of {}: {e:#}", self.issuer);
            format!("the metadata of {} cannot be read", self.issuer)
        })?;
        Ok(endpoints.introspection.clone())
    }

    /// The issuer's metadata, found once.
    async fn endpoints<'c>(&self, cached: &'c mut Cached) -> Result<&'c Endpoints> {
        if cached.endpoints.is_none() {
            cached.endpoints = Some(self.discover().await?);
        }
        cached.endpoints.as_ref().ok_or_else(|| anyhow!("no metadata"))
    }

    /// Finds the key set's URL once, then fetches the set.
    async fn fetch(&self, cached: &mut Cached) -> Result<()> {
        let uri = self.endpoints(cached).await?.jwks.clone();
        let keys: JwkSet = serde_json::from_slice(&self.get(&uri).await?)
            .with_context(|| format!("{uri} is not a JSON Web Key Set"))?;
        tracing::info!(issuer = %self.issuer, keys = keys.keys.len(), "fetched the signing keys");
        cached.keys = keys;
        self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// The endpoints of the issuer's metadata, from the first well-known URL that has it.
    async fn discover(&self) -> Result<Endpoints> {
        let mut tried = Vec::new();
        for url in metadata_urls(&self.issuer) {
            let document: serde_json::Value = match self.get(&url).await.and_then(|b| Ok(serde_json::from_slice(&b)?)) {
                Ok(document) => document,
                Err(e) => {
                    tried.push(format!("{url}: {e:#}"));
                    continue;
                }
            };
            // RFC 8414 §3.3 / OpenID Discovery §4.3: the metadata must be the issuer's own.
            if document["issuer"].as_str() != Some(self.issuer.as_str()) {
                return Err(anyhow!("{url} names issuer {}, not {}", document["issuer"], self.issuer));
            }
            let jwks = document["jwks_uri"].as_str().ok_or_else(|| anyhow!("{url} has no jwks_uri"))?;
            let introspection = document["introspection_endpoint"].as_str().map(str::to_owned);
            return Ok(Endpoints { jwks: jwks.to_owned(), introspection });
        }
        Err(anyhow!("no authorization server metadata: {}", tried.join("; ")))
    }

    /// The body of `url`, at most [`MAX_DOCUMENT_BYTES`].
    async fn get(&self, url: &str) -> Result<Vec<u8>> {
        bounded(self.client.get(url).send().await?.error_for_status()?).await
    }

    /// The HTTP client to reach the issuer with.
    pub(super) fn client(&self) -> &reqwest::Client {
        &self.client
    }
}

/// What mcpbox uses of an issuer's metadata.
struct Endpoints {
    jwks: String,
    introspection: Option<String>,
}

/// A response's body, at most [`MAX_DOCUMENT_BYTES`].
pub(super) async fn bounded(mut response: reqwest::Response) -> Result<Vec<u8>> {
    let url = response.url().to_string();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(anyhow!("{url} is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The key `kid` names, or the only signing key when the token names none.
fn find(keys: &JwkSet, kid: Option<&str>) -> Result<Option<DecodingKey>, String> {
    let found = match kid {
        Some(kid) => keys.find(kid),
        None if keys.keys.len() == 1 => keys.keys.first(),
        None if keys.keys.is_empty() => None,
        None => return Err("the token names no key id and the issuer has several keys".to_owned()),
    };
    found.map(|jwk| DecodingKey::from_jwk(jwk).map_err(|e| format!("the issuer's key is unusable: {e}"))).transpose()
}

/// Where an issuer's metadata may be: RFC 8414 §3.1 (the well-known path inserted before the
/// issuer's path), then OpenID Connect Discovery (appended), as MCP clients try them.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let path =
        trimmed.parse::<axum::http::Uri>().map(|uri| uri.path().trim_end_matches('/').to_owned()).unwrap_or_default();
    let origin = trimmed.strip_suffix(&path).unwrap_or(trimmed);
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{trimmed}/.well-known/openid-configuration"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_put_it() {
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:5000"),
            [
                "http://127.0.0.1:5000/.well-known/oauth-authorization-server",
                "http://127.0.0.1:5000/.well-known/openid-configuration"
            ]
        );
    }
}
