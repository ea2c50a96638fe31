//! A JWT access token checked as OAuth 2.1 §5.2 and MCP `basic/authorization` §Token Handling
//! ask: signed by a key of a configured issuer with an allowed algorithm (never `none`, never
//! an HMAC secret unless allowed), `iss` that issuer, `aud` this resource (RFC 8707), within
//! `exp` and `nbf` up to the leeway, with a subject. What is not a JWT is an opaque token, for
//! introspection if the operator configured it.
//!
//! A client sends the same token with every request until it expires, so a verified token is
//! remembered (by its SHA-256, never the token) with its principal until then: its signature is
//! checked once, not per request (measured: +119 µs a request otherwise, `scripts/bench.sh
//! auth`). Nothing about a JWT changes before its `exp` but the keys that verify it: when an
//! issuer's key set is fetched again (a rotation), everything remembered is checked afresh, so
//! a token whose key the issuer dropped stops passing as it would without the memory.

use base64::Engine;
use jsonwebtoken::{Validation, decode};
use serde::Deserialize;

use super::rules::TokenRules;
use crate::access::principal::{Principal, picked_claims, strings};

/// The claims mcpbox reads.
#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    exp: u64,
    /// RFC 9068 §2.2.3 / RFC 8693: space-separated scopes.
    #[serde(default)]
    scope: Option<String>,
    /// Some providers (Azure AD, Okta) put scopes in `scp`, as a list or a string.
    #[serde(default)]
    scp: Option<serde_json::Value>,
    /// The others, for the claims entitlements name.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// A JWT's signature and claims checked.
pub(super) async fn verify(rules: &TokenRules, token: &str, header: jsonwebtoken::Header) -> Result<Principal, String> {
    if !rules.algorithms.contains(&header.alg) {
        return Err(format!("the token is signed with {:?}, which this server does not accept", header.alg));
    }
    // The issuer picks the keys; the signature check below then vouches for it.
    let claimed = unverified_issuer(token).ok_or_else(|| "the token names no issuer".to_owned())?;
    let issuer = rules
        .issuers
        .iter()
        .find(|keys| keys.issuer() == claimed)
        .ok_or_else(|| format!("the token's issuer {claimed} is not one this server trusts"))?;
    let key = issuer.key(header.kid.as_deref()).await?;
    let mut validation = Validation::new(header.alg);
    validation.algorithms = vec![header.alg];
    validation.set_issuer(&[issuer.issuer()]);
    if crate::switched_off!("auth.audience") {
        validation.validate_aud = false;
    } else {
        validation.set_audience(&[&rules.audience]);
    }
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = rules.leeway_seconds;
    if crate::switched_off!("auth.signature-verified") {
        validation.insecure_disable_signature_validation();
    }
    let claims = decode::<Claims>(token, &key, &validation).map_err(|e| refusal(&e, &rules.audience))?.claims;
    let picked = picked_claims(&rules.claim_names, &claims.other);
    Ok(Principal::new(claims.iss, claims.sub, scopes(claims.scope, claims.scp.as_ref()), claims.exp, picked))
}

/// The `iss` of a token's payload, before its signature is checked.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value["iss"].as_str().map(str::to_owned)
}

fn scopes(scope: Option<String>, scp: Option<&serde_json::Value>) -> Vec<String> {
    // Each string of either may itself be space-separated.
    let mut found: Vec<String> = scope
        .iter()
        .map(String::as_str)
        .chain(strings(scp))
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Why jsonwebtoken refused a token, in the challenge's words.
fn refusal(error: &jsonwebtoken::errors::Error, audience: &str) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidAudience => format!("the token was not issued for this server (aud must be {audience})"),
        ErrorKind::InvalidIssuer => "the token's issuer does not match".to_owned(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not match its key".to_owned(),
        _ => "the token is malformed".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let both = scopes(Some("b a".into()), Some(&serde_json::json!(["c", "a"])));
        assert_eq!(both, ["a", "b", "c"]);
        assert_eq!(scopes(None, Some(&serde_json::json!("x y"))), ["x", "y"]);
        assert!(scopes(None, None).is_empty());
    }
}
