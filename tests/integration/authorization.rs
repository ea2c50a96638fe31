//! mcpbox as an OAuth 2.1 resource server (MCP `basic/authorization`) against a real,
//! certified OpenID provider (the npm package oidc-provider, `scripts/setup-oidc-provider.sh`)
//! started on loopback for each test: tokens it issues for this server pass, every other one is
//! refused with the spec's challenge, and the Protected Resource Metadata tells a client where
//! to go.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::http::{messages, post};
use crate::common::*;

/// The provider on a loopback port of its own; stopped when dropped.
pub(crate) struct Provider {
    child: Child,
    pub(crate) issuer: String,
}

impl Provider {
    pub(crate) fn start() -> Provider {
        let port = free_port();
        Provider::start_on(port, "first")
    }

    /// The provider with the token vault's clients, `link` and `thirdparty`, whose callbacks
    /// are at `bases` (mcpbox origins).
    pub(crate) fn start_for_links(bases: &[String]) -> Provider {
        Provider::start_with(free_port(), "first", &[("MCPBOX_LINK_BASES", &bases.join(","))])
    }

    /// The provider on `port`, signing with a new key named `kid`.
    fn start_on(port: u16, kid: &str) -> Provider {
        Provider::start_with(port, kid, &[])
    }

    fn start_with(port: u16, kid: &str, env: &[(&str, &str)]) -> Provider {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-oidc-provider.sh")).output().unwrap();
        assert!(setup.status.success(), "setting up the provider failed: {}", String::from_utf8_lossy(&setup.stderr));
        let printed = String::from_utf8(setup.stdout).unwrap();
        let (node, script) = printed.trim().split_once(' ').unwrap();
        let mut child = Command::new(node)
            .args([script, &port.to_string(), kid])
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut ready).unwrap();
        // Read on: the provider's notices (a revocation's) would otherwise hit a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let issuer =
            ready.trim().strip_prefix("ready ").unwrap_or_else(|| panic!("the provider said {ready:?}")).to_owned();
        Provider { child, issuer }
    }

    /// An access token for `client` by the client credentials grant, for `resource` if given.
    pub(crate) async fn token(&self, client: &str, scope: &str, resource: Option<&str>) -> String {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials").append_pair("scope", scope);
        if let Some(resource) = resource {
            form.append_pair("resource", resource);
        }
        let response = http_client()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.finish())
            .send()
            .await
            .unwrap();
        let answer: Value = response.json().await.unwrap();
        answer["access_token"].as_str().unwrap_or_else(|| panic!("no token: {answer}")).to_owned()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// mcpbox over HTTP with `[auth]` naming the provider; its URL is its resource identifier.
pub(crate) fn serve(provider: &Provider, extra: &str) -> (Server, String, ConfigFile) {
    let config = ConfigFile::new(&format!(
        "[auth]\nissuers = [\"{}\"]\nscopes_supported = [\"tools:read\"]\n{extra}",
        provider.issuer
    ));
    let [flag, path] = config.args();
    let (server, url) = Server::start_http(&[flag, path, fixture("conformance").as_os_str()]);
    (server, url, config)
}

async fn list_tools(url: &str, token: Option<&str>) -> reqwest::Response {
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": modern_meta() } });
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    post(url, &list, &headers).await
}

pub(crate) fn challenge(response: &reqwest::Response) -> String {
    response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

#[tokio::test]
async fn a_token_the_provider_issued_for_this_server_passes_and_the_challenge_says_where_to_get_one() {
    let provider = Provider::start();
    let (_server, url, _config) = serve(&provider, "");
    let origin = url.trim_end_matches("/mcp");

    // No token: 401, naming the metadata and the scopes (RFC 9728 §5.1, RFC 6750 §3).
    let refused = list_tools(&url, None).await;
    assert_eq!(refused.status(), 401);
    let expected =
        format!("Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"tools:read\"");
    assert_eq!(challenge(&refused), expected);

    // The metadata names this resource and the provider, at both well-known places.
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let metadata: Value = http_client().get(format!("{origin}{path}")).send().await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], url.as_str(), "{metadata}");
        assert_eq!(metadata["authorization_servers"], json!([provider.issuer]), "{metadata}");
        assert_eq!(metadata["scopes_supported"], json!(["tools:read"]), "{metadata}");
    }

    // A token the provider issued for this resource: served.
    let token = provider.token("ada", "tools:read", Some(&url)).await;
    let response = list_tools(&url, Some(&token)).await;
    assert_eq!(response.status(), 200);
    let answer = messages(response).await.pop().unwrap();
    assert_schema("2026-07-28", "ListToolsResultResponse", &answer);
}

#[tokio::test]
async fn the_python_sdk_goes_from_the_first_401_through_registration_login_and_consent_to_a_tool_call() {
    let provider = Provider::start();
    let config = ConfigFile::new(&format!(
        "[auth]\nissuers = [\"{}\"]\nscopes_supported = [\"tools:read\"]\n\
         [[auth.entitlements]]\nscope = \"tools:read\"\nplugins = [\"echo\"]\n",
        provider.issuer
    ));
    let [flag, path] = config.args();
    let (server, url) = Server::start_http(&[flag, path, fixture("echo").as_os_str()]);
    let flow = repo_root().join("tests/clients/oauth_flow.py");
    let output = std::process::Command::new(python_sdk())
        .arg(flow)
        .args([url.as_str(), "ada", "echo.echo", r#"{"text":"signed in"}"#])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && printed.trim() == "signed in",
        "{printed}\n{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.stderr()
    );
}

#[tokio::test]
async fn tokens_for_another_resource_from_another_issuer_expired_or_forged_are_refused() {
    let provider = Provider::start();
    let (server, url, _config) = serve(&provider, "leeway_seconds = 0\n");
    let refused = |response: &reqwest::Response, why: &str| {
        assert_eq!(response.status(), 401);
        let header = challenge(response);
        assert!(header.contains("error=\"invalid_token\"") && header.contains(why), "{header}");
    };

    // Issued for another server (RFC 8707 audience).
    let elsewhere = provider.token("ada", "tools:read", Some("http://127.0.0.1:1/mcp")).await;
    refused(&list_tools(&url, Some(&elsewhere)).await, "not issued for this server");

    // Opaque (no resource asked for): not a JWT this server can check.
    let opaque = provider.token("ada", "tools:read", None).await;
    refused(&list_tools(&url, Some(&opaque)).await, "not a JWT");

    // Expired: the brief client's tokens live one second.
    let brief = provider.token("brief", "tools:read", Some(&url)).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    refused(&list_tools(&url, Some(&brief)).await, "expired");

    // Not valid yet: the early client's tokens carry an `nbf` an hour ahead.
    let early = provider.token("early", "tools:read", Some(&url)).await;
    refused(&list_tools(&url, Some(&early)).await, "not valid yet");

    // A genuine token with its payload changed: the signature no longer verifies.
    let genuine = provider.token("bob", "tools:read", Some(&url)).await;
    let parts: Vec<&str> = genuine.split('.').collect();
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: Value = serde_json::from_slice(&engine.decode(parts[1]).unwrap()).unwrap();
    claims["sub"] = json!("ada");
    let forged = format!("{}.{}.{}", parts[0], engine.encode(claims.to_string()), parts[2]);
    refused(&list_tools(&url, Some(&forged)).await, "signature does not verify");

    // Unsigned (`alg: none`), and from an issuer this server does not trust.
    let none = format!("{}.{}.", engine.encode(r#"{"alg":"none","typ":"JWT"}"#), parts[1]);
    refused(&list_tools(&url, Some(&none)).await, "not a JWT");
    claims["iss"] = json!("http://127.0.0.1:1");
    let stranger = format!("{}.{}.{}", parts[0], engine.encode(claims.to_string()), parts[2]);
    refused(&list_tools(&url, Some(&stranger)).await, "is not one this server trusts");

    // The genuine token still passes, and no token ever reaches the log.
    assert_eq!(list_tools(&url, Some(&genuine)).await.status(), 200);
    let log = server.stderr();
    for token in [&elsewhere, &opaque, &brief, &genuine, &forged] {
        assert!(!log.contains(token.as_str()), "a token in the log:\n{log}");
    }
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_a_key_the_issuer_no_longer_has_or_never_had_is_refused() {
    let first = Provider::start();
    let (_server, url, _config) = serve(&first, "");
    let before = first.token("ada", "tools:read", Some(&url)).await;
    assert_eq!(list_tools(&url, Some(&before)).await.status(), 200);

    // The provider rotates: the same issuer, a new key (`second`), the old one gone.
    let port: u16 = first.issuer.rsplit(':').next().unwrap().parse().unwrap();
    drop(first);
    let rotated = Provider::start_on(port, "second");
    let after = rotated.token("ada", "tools:read", Some(&url)).await;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = serde_json::from_slice(&engine.decode(after.split('.').next().unwrap()).unwrap()).unwrap();
    assert_eq!(header["kid"], "second");
    assert_eq!(list_tools(&url, Some(&after)).await.status(), 200, "the new key was not fetched");

    // The retired key's tokens no longer pass, nor does a key id nobody issued; neither fetches
    // the set again within 30 s.
    let refused = list_tools(&url, Some(&before)).await;
    assert_eq!(refused.status(), 401);
    assert!(challenge(&refused).contains("no key `first`"), "{}", challenge(&refused));
    let parts: Vec<&str> = after.split('.').collect();
    let unknown = format!("{}.{}.{}", engine.encode(r#"{"alg":"ES256","kid":"forged"}"#), parts[1], parts[2]);
    assert!(challenge(&list_tools(&url, Some(&unknown)).await).contains("no key `forged`"));

    // An HMAC token whose secret is the provider's public key set (the RS/HS confusion): HS256
    // is not among the allowed algorithms, whatever the secret.
    let jwks = http_client().get(format!("{}/jwks", rotated.issuer)).send().await.unwrap().text().await.unwrap();
    let signed = format!("{}.{}", engine.encode(r#"{"alg":"HS256","kid":"second"}"#), parts[1]);
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, jwks.as_bytes());
    let confused = format!("{signed}.{}", engine.encode(ring::hmac::sign(&key, signed.as_bytes())));
    let refused = list_tools(&url, Some(&confused)).await;
    assert_eq!(refused.status(), 401);
    assert!(challenge(&refused).contains("HS256, which this server does not accept"), "{}", challenge(&refused));
}

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection_as_the_operators_client() {
    let provider = Provider::start();
    let secret = temp_dir();
    let secret_file = secret.path().join("introspection.secret");
    std::fs::write(&secret_file, "mcpbox-secret\n").unwrap();
    let extra = format!(
        "introspection_client = \"mcpbox\"\nintrospection_secret_file = \"{}\"\nintrospection_cache_seconds = 1\n",
        secret_file.display()
    );
    let (server, url, _config) = serve(&provider, &extra);

    // carol's tokens are opaque: introspected, active, for this server.
    let opaque = provider.token("carol", "tools:read", Some(&url)).await;
    assert!(!opaque.contains('.'), "not opaque: {opaque}");
    assert_eq!(list_tools(&url, Some(&opaque)).await.status(), 200);
    // Asked again: answered from the cache.
    assert_eq!(list_tools(&url, Some(&opaque)).await.status(), 200);

    // Revoked (RFC 7009): refused once its answer has left the cache (a second here).
    let revoked = http_client()
        .post(format!("{}/token/revocation", provider.issuer))
        .basic_auth("carol", Some("carol-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={opaque}"))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let response = list_tools(&url, Some(&opaque)).await;
    assert_eq!(response.status(), 401);
    assert!(challenge(&response).contains("not active"), "{}", challenge(&response));

    // Active, but for no resource in particular: not for this server.
    let unbound = provider.token("ada", "tools:read", None).await;
    let response = list_tools(&url, Some(&unbound)).await;
    assert_eq!(response.status(), 401);
    assert!(challenge(&response).contains("not issued for this server"), "{}", challenge(&response));

    // Made up: not active.
    let response = list_tools(&url, Some("made-up-token")).await;
    assert!(challenge(&response).contains("not active"), "{}", challenge(&response));
    let log = server.stderr();
    assert!(!log.contains(&opaque) && !log.contains("mcpbox-secret"), "a secret in the log:\n{log}");
}

#[test]
fn auth_settings_are_checked_with_file_and_key() {
    let cases = [
        ("[auth]\nresource = \"http://127.0.0.1:1/mcp\"\n", "[auth] needs `issuers`"),
        // Limits alone would limit nothing: refused rather than ignored.
        ("[auth.limits]\ncalls_per_minute = 10\n", "[auth] needs `issuers`"),
        ("[auth]\nissuers = [\"not a url\"]\n", "[auth] issuers `not a url`"),
        (
            "[auth]\nissuers = [\"http://127.0.0.1:1\"]\nalgorithms = [\"HS256\"]\n",
            "[auth] algorithms `HS256` is not one of",
        ),
        (
            "[auth]\nissuers = [\"http://127.0.0.1:1\"]\nleeway_seconds = 9999\n",
            "[auth] leeway_seconds must be at most 300",
        ),
    ];
    for (text, expected) in cases {
        let config = ConfigFile::new(text);
        let [flag, path] = config.args();
        let mut serve = mcpbox("serve");
        serve.args([flag, path]).args(["--http", "127.0.0.1:0"]);
        let error = refused_start(serve);
        assert!(error.contains(expected), "{text}: {error}");
    }
    // A listener off loopback needs the resource identifier spelled out.
    let config = ConfigFile::new("[auth]\nissuers = [\"http://127.0.0.1:1\"]\n");
    let [flag, path] = config.args();
    let mut serve = mcpbox("serve");
    serve.args([flag, path]).args(["--http", "0.0.0.0:0"]);
    let error = refused_start(serve);
    assert!(error.contains("[auth] resource is needed"), "{error}");
}
