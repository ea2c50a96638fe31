//! mcpbox as an OAuth 2.1 client: the authorization code flow with PKCE (RFC 7636, S256) and
//! `state`, the code and refresh token grants at a token endpoint (RFC 6749 §4.1.3, §6; client
//! secret by HTTP basic auth, §2.3.1), and an authorization server's endpoints from its metadata
//! (RFC 8414, or OpenID Connect Discovery). Errors name the endpoint and the server's `error`
//! code, never a token, code or secret.

use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// How long one request to an authorization server may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An authorization server's two endpoints.
#[derive(Debug, Clone)]
pub(crate) struct Endpoints {
    pub(crate) authorization: String,
    pub(crate) token: String,
}

/// The endpoints in `issuer`'s metadata.
pub(crate) async fn discover(http: &reqwest::Client, issuer: &str) -> Result<Endpoints, String> {
    #[derive(Deserialize)]
    struct Metadata {
        authorization_endpoint: String,
        token_endpoint: String,
    }
    let issuer = issuer.trim_end_matches('/');
    let mut last = String::new();
    for well_known in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
        let url = format!("{issuer}{well_known}");
        match http.get(&url).timeout(TIMEOUT).send().await {
            Ok(response) if response.status().is_success() => match response.json::<Metadata>().await {
                Ok(metadata) => {
                    return Ok(Endpoints {
                        authorization: metadata.authorization_endpoint,
                        token: metadata.token_endpoint,
                    });
                }
                Err(e) => last = format!("{url}: {e}"),
            },
            Ok(response) => last = format!("{url}: HTTP {}", response.status()),
            Err(e) => last = format!("{url}: {}", e.without_url()),
        }
    }
    Err(format!("no metadata of {issuer} ({last})"))
}

/// A PKCE verifier and its S256 challenge.
pub(crate) fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The URL that starts the authorization code flow.
pub(crate) fn authorization_url(
    endpoint: &str,
    client_id: &str,
    redirect_uri: &str,
    scopes: &[String],
    state: &str,
    verifier: &str,
    resource: Option<&str>,
) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("state", state)
        .append_pair("code_challenge", &challenge(verifier))
        .append_pair("code_challenge_method", "S256");
    if !scopes.is_empty() {
        query.append_pair("scope", &scopes.join(" "));
    }
    if let Some(resource) = resource {
        query.append_pair("resource", resource);
    }
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    format!("{endpoint}{separator}{}", query.finish())
}

/// What a token endpoint answered.
pub(crate) struct Tokens {
    pub(crate) access: Zeroizing<String>,
    pub(crate) refresh: Option<Zeroizing<String>>,
    pub(crate) expires_in: Option<u64>,
}

/// Why a token request gave no token.
pub(crate) enum Refusal {
    /// The endpoint did not answer (or not as a token endpoint): worth trying again later.
    Unreachable(String),
    /// It answered with an error (`invalid_grant`...): the grant is dead.
    Refused(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Unreachable(why) | Refusal::Refused(why) => f.write_str(why),
        }
    }
}

impl From<Refusal> for String {
    fn from(refusal: Refusal) -> String {
        refusal.to_string()
    }
}

/// A token request (`form`: the grant's parameters) as `client_id` with `secret`.
pub(crate) async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    client_id: &str,
    secret: Option<&[u8]>,
    form: &[(&str, &str)],
) -> Result<Tokens, Refusal> {
    #[derive(Deserialize)]
    struct Answer {
        access_token: Option<String>,
        refresh_token: Option<String>,
        expires_in: Option<u64>,
        error: Option<String>,
    }
    // The serializer is not `Send`: finished before the first await.
    let body = Zeroizing::new({
        let mut body = form_urlencoded::Serializer::new(String::new());
        for (name, value) in form {
            body.append_pair(name, value);
        }
        body.finish()
    });
    // RFC 6749 §2.3.1: the id and secret form-encoded, then basic auth.
    let encode = |bytes: &[u8]| form_urlencoded::byte_serialize(bytes).collect::<String>();
    let user = encode(client_id.as_bytes());
    let password = Zeroizing::new(secret.map(encode).unwrap_or_default());
    let response = http
        .post(endpoint)
        .timeout(TIMEOUT)
        .basic_auth(user, Some(&*password))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| {
            Refusal::Unreachable(format!("the token endpoint {endpoint} did not answer: {}", e.without_url()))
        })?;
    let status = response.status();
    let answer: Answer = response.json().await.map_err(|_| {
        Refusal::Unreachable(format!("the token endpoint {endpoint} answered HTTP {status} without a token response"))
    })?;
    match (answer.access_token, answer.error) {
        (Some(access), None) if status.is_success() => Ok(Tokens {
            access: Zeroizing::new(access),
            refresh: answer.refresh_token.map(Zeroizing::new),
            expires_in: answer.expires_in,
        }),
        (_, error) => Err(Refusal::Refused(format!(
            "the token endpoint {endpoint} refused: {} (HTTP {status})",
            error.as_deref().unwrap_or("no error code")
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_s256_challenge_is_rfc_7636s() {
        // RFC 7636 Appendix B.
        assert_eq!(
            super::challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
