//! A JWT access token checked as OAuth 2.1 §5.2 and MCP `basic/authorization` §Token Handling
//! ask: signed by a key of a configured issuer with an allowed algorithm (never `none`, never
//! an HMAC secret unless allowed), `iss` that issuer, `aud` this resource (RFC 8707), within
//! `exp` and `nbf` up to the leeway, with a subject. What is not a JWT is an opaque token, for
//! introspection if the operator configured it.

use base64::Engine;
use jsonwebtoken::{Validation, decode, decode_header};
use serde::Deserialize;

use super::{Principal, ResourceServer};

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
}

/// The principal `token` stands for, or why it does not count (words for the challenge's
/// `error_description` and the log, never the token itself).
pub(super) async fn validate(server: &ResourceServer, token: &str) -> Result<Principal, String> {
    let Ok(header) = decode_header(token) else {
        return match &server.introspector {
            Some(introspector) => introspector.check(server, token).await,
            None => Err("the token is not a JWT (and this server introspects no opaque tokens)".to_owned()),
        };
    };
    if !server.algorithms.contains(&header.alg) {
        return Err(format!("the token is signed with {:?}, which this server does not accept", header.alg));
    }
    // The issuer picks the keys; the signature check below then vouches for it.
    let claimed = unverified_issuer(token).ok_or_else(|| "the token names no issuer".to_owned())?;
    let issuer = server
        .issuers
        .iter()
        .find(|keys| keys.issuer() == claimed)
        .ok_or_else(|| format!("the token's issuer {claimed} is not one this server trusts"))?;
    let key = issuer.key(header.kid.as_deref()).await?;
    let mut validation = Validation::new(header.alg);
    validation.algorithms = vec![header.alg];
    validation.set_issuer(&[issuer.issuer()]);
    validation.set_audience(&[&server.audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = server.leeway_seconds;
    let claims = decode::<Claims>(token, &key, &validation).map_err(|e| refusal(&e, &server.audience))?.claims;
    Ok(Principal {
        issuer: claims.iss,
        subject: claims.sub,
        scopes: scopes(claims.scope, claims.scp),
        expires_at: claims.exp,
    })
}

/// The `iss` of a token's payload, before its signature is checked.
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value["iss"].as_str().map(str::to_owned)
}

fn scopes(scope: Option<String>, scp: Option<serde_json::Value>) -> Vec<String> {
    let mut found: Vec<String> = scope.iter().flat_map(|s| s.split_whitespace()).map(str::to_owned).collect();
    match scp {
        Some(serde_json::Value::String(s)) => found.extend(s.split_whitespace().map(str::to_owned)),
        Some(serde_json::Value::Array(items)) => {
            found.extend(items.iter().filter_map(|i| i.as_str()).map(str::to_owned))
        }
        _ => {}
    }
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
        let both = scopes(Some("b a".into()), Some(serde_json::json!(["c", "a"])));
        assert_eq!(both, ["a", "b", "c"]);
        assert_eq!(scopes(None, Some(serde_json::json!("x y"))), ["x", "y"]);
        assert!(scopes(None, None).is_empty());
    }
}
