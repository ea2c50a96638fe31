//! Opaque access tokens checked by OAuth 2.0 Token Introspection (RFC 7662): the issuer's
//! `introspection_endpoint` asked, as the operator's client, whether a token is active. It must
//! be, and for this server (`aud`, RFC 8707), unexpired. Answers are cached briefly (30 s unless
//! `[auth] introspection_cache_seconds` says otherwise, never past the token's `exp`), keyed by
//! the token's SHA-256 so the cache holds no token, and refusals too, so a flood of made-up
//! tokens is not a flood of requests to the issuer. A revoked token passes until its answer
//! leaves the cache.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use super::cache::TokenCache;
use super::keys::{IssuerKeys, bounded};
use super::rules::TokenRules;
use crate::access::principal::{Principal, picked_claims, strings};
use crate::config::IntrospectionClient;

/// How long an active answer without `exp` stands for (and so is kept at most).
const NO_EXPIRY: Duration = Duration::from_secs(30);
/// The introspecting client and what it learnt.
pub(super) struct Introspector {
    client: IntrospectionClient,
    /// Answers, refusals too.
    cache: TokenCache<Result<Arc<Principal>, String>>,
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
        Introspector { client, cache: TokenCache::new() }
    }

    /// The principal of opaque `token`, from the cache or the first issuer that knows it.
    pub(super) async fn check(&self, rules: &TokenRules, token: &str) -> Result<Arc<Principal>, String> {
        let key = super::cache::digest(token);
        if let Some(answer) = self.cache.get(&key) {
            return answer;
        }
        let answer = self.ask(rules, token).await.map(Arc::new);
        let until = match &answer {
            Ok(principal) => {
                Instant::now()
                    + self.client.cache_for.min(Duration::from_secs(principal.expires_at.saturating_sub(now())))
            }
            Err(_) => Instant::now() + self.client.cache_for,
        };
        self.cache.insert(key, answer.clone(), until);
        answer
    }

    async fn ask(&self, rules: &TokenRules, token: &str) -> Result<Principal, String> {
        let mut unreachable = None;
        for issuer in &rules.issuers {
            let Some(endpoint) = issuer.introspection_endpoint().await? else { continue };
            match self.introspect(issuer, &endpoint, token).await {
                Ok(Some(answer)) => return judge(answer, issuer.issuer(), rules),
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
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
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

/// Whether an active token's introspection makes it one for this rules.
fn judge(answer: Answer, issuer: &str, rules: &TokenRules) -> Result<Principal, String> {
    if answer.iss.as_deref().is_some_and(|iss| iss != issuer) {
        return Err("the token's issuer does not match".to_owned());
    }
    if !strings(answer.aud.as_ref()).contains(&rules.audience.as_str())
        && !crate::switched_off!("auth.introspected-audience")
    {
        return Err(format!("the token was not issued for this server (aud must be {})", rules.audience));
    }
    let now = now();
    let leeway = rules.leeway_seconds;
    if answer.exp.is_some_and(|exp| exp + leeway <= now) {
        return Err("the token has expired".to_owned());
    }
    if answer.nbf.is_some_and(|nbf| nbf > now + leeway) {
        return Err("the token is not valid yet (nbf)".to_owned());
    }
    // A client credentials token has no user: the client is the subject.
    let subject = answer.sub.or(answer.client_id).ok_or_else(|| "the token has no subject".to_owned())?;
    let scopes = answer.scope.iter().flat_map(|s| s.split_whitespace()).map(str::to_owned).collect();
    let expires_at = answer.exp.unwrap_or_else(|| now + NO_EXPIRY.as_secs());
    let claims = picked_claims(&rules.claim_names, &answer.other);
    Ok(Principal::new(issuer.to_owned(), subject, scopes, expires_at, claims))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A client id or secret as RFC 6749 §2.3.1 wants it before Basic authentication:
/// `application/x-www-form-urlencoded`.
fn form_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
