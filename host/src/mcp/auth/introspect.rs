//! Opaque access tokens checked by OAuth 2.0 Token Introspection (RFC 7662): the issuer's
//! `introspection_endpoint` asked, as the operator's client, whether a token is active. It must
//! be, and for this server (`aud`, RFC 8707), unexpired. Answers are cached briefly (30 s unless
//! `[auth] introspection_cache_seconds` says otherwise, never past the token's `exp`), keyed by
//! the token's SHA-256 so the cache holds no token, and refusals too, so a flood of made-up
//! tokens is not a flood of requests to the issuer. A revoked token passes until its answer
//! leaves the cache.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::keys::{IssuerKeys, bounded};
use super::{Principal, ResourceServer};
use crate::config::IntrospectionClient;

/// How long an active answer without `exp` stands for (and so is kept at most).
const NO_EXPIRY: Duration = Duration::from_secs(30);
/// The most answers kept; past it, expired ones go, and if none has, all.
const MAX_CACHED: usize = 10_000;

/// An introspection's verdict and until when it is kept, by the token's SHA-256.
type Answers = HashMap<[u8; 32], (Result<Principal, String>, Instant)>;

/// The introspecting client and what it learnt.
pub(super) struct Introspector {
    client: IntrospectionClient,
    cache: Mutex<Answers>,
}

/// RFC 7662 §2.2, the fields mcpbox reads.
#[derive(Deserialize)]
struct Answer {
    active: bool,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    aud: Option<serde_json::Value>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    nbf: Option<u64>,
    /// The others, for the claims entitlements name.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

impl Introspector {
    pub(super) fn new(client: IntrospectionClient) -> Introspector {
        Introspector { client, cache: Mutex::new(HashMap::new()) }
    }

    /// The principal of opaque `token`, from the cache or the first issuer that knows it.
    pub(super) async fn check(&self, server: &ResourceServer, token: &str) -> Result<Principal, String> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((answer, until)) = self.cache.lock().await.get(&key)
            && Instant::now() < *until
        {
            return answer.clone();
        }
        let answer = self.ask(server, token).await;
        let until = match &answer {
            Ok(principal) => {
                Instant::now()
                    + self.client.cache_for.min(Duration::from_secs(principal.expires_at.saturating_sub(now())))
            }
            Err(_) => Instant::now() + self.client.cache_for,
        };
        let mut cache = self.cache.lock().await;
        if cache.len() >= MAX_CACHED {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(key, (answer.clone(), until));
        answer
    }

    async fn ask(&self, server: &ResourceServer, token: &str) -> Result<Principal, String> {
        let mut unreachable = None;
        for issuer in &server.issuers {
            let Some(endpoint) = issuer.introspection_endpoint().await? else { continue };
            match self.introspect(issuer, &endpoint, token).await {
                Ok(Some(answer)) => return judge(answer, issuer.issuer(), server),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!("cannot introspect a token at {endpoint}: {e:#}");
                    unreachable = Some(format!("the token cannot be checked at {}", issuer.issuer()));
                }
            }
        }
        Err(unreachable.unwrap_or_else(|| "the token is not active".to_owned()))
    }

    /// The issuer's answer for `token`, or `None` if it is not active there.
    async fn introspect(&self, issuer: &IssuerKeys, endpoint: &str, token: &str) -> anyhow::Result<Option<Answer>> {
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let response = issuer
            .client()
            .post(endpoint)
            .basic_auth(form_encode(&self.client.client_id), Some(form_encode(&self.client.secret)))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await?
            .error_for_status()?;
        let answer: Answer = serde_json::from_slice(&bounded(response).await?)?;
        Ok(answer.active.then_some(answer))
    }
}

/// Whether an active token's introspection makes it one for this server.
fn judge(answer: Answer, issuer: &str, server: &ResourceServer) -> Result<Principal, String> {
    if answer.iss.as_deref().is_some_and(|iss| iss != issuer) {
        return Err("the token's issuer does not match".to_owned());
    }
    let audiences: Vec<&str> = match &answer.aud {
        Some(serde_json::Value::String(one)) => vec![one.as_str()],
        Some(serde_json::Value::Array(many)) => many.iter().filter_map(|a| a.as_str()).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&server.audience.as_str()) {
        return Err(format!("the token was not issued for this server (aud must be {})", server.audience));
    }
    let now = now();
    let leeway = server.leeway_seconds;
    if answer.exp.is_some_and(|exp| exp + leeway <= now) {
        return Err("the token has expired".to_owned());
    }
    if answer.nbf.is_some_and(|nbf| nbf > now + leeway) {
        return Err("the token is not valid yet (nbf)".to_owned());
    }
    // A client credentials token has no user: the client is the subject.
    let subject = answer.sub.or(answer.client_id).ok_or_else(|| "the token has no subject".to_owned())?;
    Ok(Principal {
        issuer: issuer.to_owned(),
        subject,
        scopes: answer.scope.iter().flat_map(|s| s.split_whitespace()).map(str::to_owned).collect(),
        expires_at: answer.exp.unwrap_or_else(|| now + NO_EXPIRY.as_secs()),
        claims: super::picked_claims(&server.claim_names, &answer.other),
    })
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `application/x-www-form-urlencoded` (and RFC 6749 §2.3.1 client credentials) encoding.
fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
