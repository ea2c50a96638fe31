//! The token vault end to end (docs/credentials.md, "Each user's own account"): a real OpenID
//! provider (oidc-provider) is both the `[auth]` issuer of mcpbox's users and the third party
//! whose accounts they link (client `thirdparty`, tokens for its userinfo endpoint that live
//! 2 s); a loopback API answers with the subject of the token it gets (asking the provider's
//! userinfo). Two principals, each an official Python SDK client with its own mcpbox token,
//! link their accounts through mcpbox's link (a scripted person at the provider's pages):
//! each one's calls reach the API with that principal's token only; a link opened by a browser
//! signed in as the other user links nothing; an expired token is refreshed without the user; a
//! replayed callback is refused; unlinking works; and in a fleet, an account linked through one
//! replica serves calls through another.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::authorization::Provider;
use crate::common::*;

/// The third party's API: `/whoami` answers the subject of the bearer token, as the provider's
/// userinfo endpoint says, or 401; each answer is recorded.
struct Api {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Api {
    fn start(issuer: &str) -> Api {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (log, userinfo) = (seen.clone(), format!("{issuer}/me"));
        let whoami = move |headers: axum::http::HeaderMap| {
            let (log, userinfo) = (log.clone(), userinfo.clone());
            async move {
                let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                let answer = http_client().get(&userinfo).header("authorization", bearer).send().await.unwrap();
                let subject = match answer.status().is_success() {
                    true => answer.json::<Value>().await.unwrap()["sub"].as_str().unwrap_or_default().to_owned(),
                    false => "401".to_owned(),
                };
                log.lock().unwrap().push(subject.clone());
                let status = if subject == "401" { 401 } else { 200 };
                (axum::http::StatusCode::from_u16(status).unwrap(), format!("{{\"sub\":\"{subject}\"}}"))
            }
        };
        let app = axum::Router::new().route("/whoami", axum::routing::get(whoami));
        runtime.spawn(async move { axum::serve(listener, app).await });
        Api { port, seen, _runtime: runtime }
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// The config of a server whose `net` plugin calls the API with each caller's own token;
/// `extra` goes into `[auth]`, `link_extra` into `[auth.link]`.
fn config(provider: &Provider, api: &Api, extra: &str, link_extra: &str) -> ConfigFile {
    ConfigFile::new(&format!(
        r#"plugins = [{net:?}]
[auth]
issuers = ["{issuer}"]
scopes_supported = ["tools:read"]
{extra}
[auth.link]
client_id = "link"
client_secret = "{{secrets.link}}"
{link_extra}
[secrets.link]
env = "MCPBOX_TEST_LINK_SECRET"
[secrets.thirdparty]
env = "MCPBOX_TEST_THIRDPARTY_SECRET"
[oauth_clients.thirdparty]
issuer = "{issuer}"
client_id = "thirdparty"
client_secret = "{{secrets.thirdparty}}"
scopes = ["openid"]
[plugin.net]
network = ["{api}"]
allow_private_network = true
[[plugin.net.credentials]]
host = "{api}"
oauth = "thirdparty"
"#,
        net = fixture("net"),
        issuer = provider.issuer,
        api = api.origin(),
    ))
}

const SECRETS: [(&str, &str); 2] =
    [("MCPBOX_TEST_LINK_SECRET", "link-secret"), ("MCPBOX_TEST_THIRDPARTY_SECRET", "thirdparty-secret")];

/// `tests/clients/link_flow.py` with these arguments: its one JSON line.
fn link_flow(args: &[&str]) -> Value {
    let output =
        Command::new(python_sdk()).arg(repo_root().join("tests/clients/link_flow.py")).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "link_flow.py {args:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("{stdout}"))
}

/// `user`'s call of `net.fetch` of the API's `/whoami` through `url`.
fn whoami(url: &str, token: &str, api: &Api) -> Value {
    let arguments = json!({ "url": format!("{}/whoami", api.origin()) }).to_string();
    link_flow(&["call", url, token, "net.fetch", &arguments])
}

/// A stateless 2026-07-28 `tools/call` of `net.fetch` of `/whoami`, retrying `asked` (its
/// `requestState`, the link question accepted) if given: the JSON-RPC response.
async fn modern_whoami(url: &str, token: &str, api: &Api, asked: Option<&Value>) -> Value {
    let mut params = json!({ "name": "net.fetch", "arguments": { "url": format!("{}/whoami", api.origin()) },
        "_meta": modern_meta() });
    if let Some(asked) = asked {
        params["requestState"] = asked["requestState"].clone();
        params["inputResponses"] = json!({ "mcpbox.link.thirdparty": { "action": "accept" } });
    }
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params });
    let bearer = format!("Bearer {token}");
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "net.fetch"),
        ("authorization", bearer.as_str()),
    ];
    let response = super::http::post(url, &call, &headers).await;
    super::http::messages(response).await.pop().unwrap()
}

fn link_of(answer: &Value) -> String {
    answer["link"].as_str().unwrap_or_else(|| panic!("no link was asked for: {answer}")).to_owned()
}

#[test]
fn each_user_links_an_account_of_their_own_and_their_calls_carry_only_its_token() {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let provider = Provider::start_for_links(std::slice::from_ref(&base));
    let api = Api::start(&provider.issuer);
    let config = config(&provider, &api, "", "");
    let (mut server, url) = Server::start_http_at(&config.args(), &SECRETS, &format!("127.0.0.1:{port}"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let resource = Some(url.as_str());
    let (ada, bob) = runtime.block_on(async {
        (provider.token("ada", "tools:read", resource).await, provider.token("bob", "tools:read", resource).await)
    });

    // Not linked: the SDK client declares URL elicitation? Either way it is told the link,
    // and the plugin never ran.
    let asked = whoami(&url, &ada, &api);
    let link = link_of(&asked);
    assert!(link.starts_with(&format!("{base}/link/")), "{asked}");
    assert_eq!(asked["how"], "-32042", "the SDK declares URL elicitation: {asked}");
    // A client that cannot elicit gets the link in an error result, for its user to open.
    let arguments = json!({ "url": format!("{}/whoami", api.origin()) }).to_string();
    let plain = link_flow(&["call", &url, &ada, "net.fetch", &arguments, "plain"]);
    assert_eq!(plain["how"], "isError", "{plain}");
    assert_eq!(plain["link"], link.as_str(), "a link not opened yet is given again, not a new one per call");
    assert!(api.seen().is_empty(), "the plugin ran before the account was linked: {:?}", api.seen());

    // Ada's link opened by a browser signed in as Bob: refused, nothing linked, link used up.
    let opened = link_flow(&["browse", &link, "bob"]);
    assert_eq!(opened["status"], 403, "{opened}");
    assert!(opened["text"].as_str().unwrap().contains("made for another user"), "{opened}");
    let again = link_flow(&["browse", &link, "ada"]);
    assert_eq!(again["status"], 410, "a link is single-use: {again}");
    let link = link_of(&whoami(&url, &ada, &api));

    // Ada links her account, then Bob his.
    let linked = link_flow(&["browse", &link, "ada"]);
    assert_eq!(linked["status"], 200, "{linked}");
    let bob_link = link_of(&whoami(&url, &bob, &api));
    assert_eq!(link_flow(&["browse", &bob_link, "bob"])["status"], 200);

    // A replayed callback (its code and state) links nothing.
    let callback = linked["callback"].as_str().unwrap();
    let replayed = runtime.block_on(async { http_client().get(callback).send().await.unwrap() });
    assert_eq!(replayed.status(), 400, "a replayed callback");

    // Each call carries its caller's own token.
    assert_eq!(whoami(&url, &ada, &api)["text"], "200 {\"sub\":\"ada\"}");
    assert_eq!(whoami(&url, &bob, &api)["text"], "200 {\"sub\":\"bob\"}");
    assert_eq!(api.seen(), ["ada", "bob"]);

    // The thirdparty's tokens live 2 s: a call after that is refreshed, not refused.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(whoami(&url, &ada, &api)["text"], "200 {\"sub\":\"ada\"}");
    assert!(server.wait_for_log("refreshed a linked account's token", Duration::from_secs(5)), "{}", server.stderr());
    assert!(!api.seen().contains(&"401".to_owned()), "{:?}", api.seen());

    // Ada unlinks (DELETE with her own token): her next call asks again; Bob's goes on.
    let unlinked = runtime.block_on(async {
        http_client().delete(format!("{base}/link")).bearer_auth(&ada).send().await.unwrap().status()
    });
    assert_eq!(unlinked, 204);
    link_of(&whoami(&url, &ada, &api));
    assert_eq!(whoami(&url, &bob, &api)["text"], "200 {\"sub\":\"bob\"}");

    // A 2026-07-28 request: mcpbox's own question in an InputRequiredResult, sealed in its
    // requestState; once linked, the retry that accepts it runs the call.
    let (questions, answer) = runtime.block_on(async {
        let asked = modern_whoami(&url, &ada, &api, None).await;
        assert_schema("2026-07-28", "CallToolResultResponse", &asked);
        let result = &asked["result"];
        let question = &result["inputRequests"]["mcpbox.link.thirdparty"];
        assert_eq!(question["method"], "elicitation/create", "{asked}");
        assert_eq!(question["params"]["mode"], "url", "{asked}");
        (result.clone(), question["params"]["url"].as_str().unwrap().to_owned())
    });
    assert_eq!(link_flow(&["browse", &answer, "ada"])["status"], 200);
    let done = runtime.block_on(modern_whoami(&url, &ada, &api, Some(&questions)));
    assert_schema("2026-07-28", "CallToolResultResponse", &done);
    assert_eq!(done["result"]["content"][0]["text"], "200 {\"sub\":\"ada\"}", "{done}");

    // Nothing of a token in mcpbox's log.
    let log = server.stderr();
    assert!(!log.contains("thirdparty-secret") && !log.contains("link-secret"), "{log}");
    server.close_stdin();
}

/// A Redis of the test's own (`scripts/setup-fleet.sh`'s), on a loopback port; stopped when
/// dropped.
struct Redis {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    fn start() -> Redis {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-fleet.sh")).output().unwrap();
        assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
        let server = String::from_utf8(setup.stdout).unwrap().lines().next().unwrap().to_owned();
        let libs = repo_root().join(".tools/redis/root/usr/lib/x86_64-linux-gnu");
        let (port, dir) = (free_port(), temp_dir());
        let child = Command::new(server)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .env("LD_LIBRARY_PATH", libs)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let end = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < end, "redis did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Redis { child, port, _dir: dir }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two replicas sharing a Redis and the vault's key: an account linked through the first
/// serves calls through the second, and the store holds no token in the clear.
#[test]
fn in_a_fleet_an_account_linked_through_one_replica_serves_calls_through_another() {
    let (first, second) = (free_port(), free_port());
    let base = format!("http://127.0.0.1:{first}");
    let provider = Provider::start_for_links(std::slice::from_ref(&base));
    let api = Api::start(&provider.issuer);
    let redis = Redis::start();
    let dir = temp_dir();
    let key = dir.path().join("vault.key");
    std::fs::write(&key, "8Q0Yc1oJ8b3mK1vZtq5r0q6n9k2Wl8bq7yXo3hL4dF0=\n").unwrap();
    // The fleet's resource: the first replica's URL stands for the load balancer's.
    let resource = format!("{base}/mcp");
    let extra = format!("resource = \"{resource}\"\n[store]\nredis = \"redis://127.0.0.1:{}/\"\n", redis.port);
    let config = config(&provider, &api, &extra, &format!("key_file = {key:?}"));
    let state_keys = dir.path().join("state-keys");
    std::fs::write(&state_keys, "q7m2Yx0bE9c4uT1aR8wZ3nV6kP5sL2dH0fJ9gB7cA4E=\n").unwrap();
    let [flag, path] = config.args();
    let args = [flag, path, "--request-state-keys".as_ref(), state_keys.as_os_str()];
    let (_one, _) = Server::start_http_at(&args, &SECRETS, &format!("127.0.0.1:{first}"));
    let (_two, url_two) = Server::start_http_at(&args, &SECRETS, &format!("127.0.0.1:{second}"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ada = runtime.block_on(provider.token("ada", "tools:read", Some(&resource)));

    // Asked through the second replica; the link is the first's; linked there.
    let link = link_of(&whoami(&url_two, &ada, &api));
    assert!(link.starts_with(&format!("{base}/link/")), "{link}");
    assert_eq!(link_flow(&["browse", &link, "ada"])["status"], 200);
    assert_eq!(whoami(&url_two, &ada, &api)["text"], "200 {\"sub\":\"ada\"}");

    // The store holds sealed records only.
    let libs = repo_root().join(".tools/redis/root/usr/lib/x86_64-linux-gnu");
    let cli = repo_root().join(".tools/redis/root/usr/bin/redis-cli");
    let dump = Command::new(&cli)
        .env("LD_LIBRARY_PATH", &libs)
        .args(["-p", &redis.port.to_string(), "--scan", "--pattern", "mcpbox:vault:account:*"])
        .output()
        .unwrap();
    let keys = String::from_utf8_lossy(&dump.stdout).into_owned();
    assert_eq!(keys.lines().count(), 1, "one linked account: {keys}");
    assert!(!keys.contains("ada"), "no identity in the key: {keys}");
    let value = Command::new(&cli)
        .env("LD_LIBRARY_PATH", &libs)
        .args(["-p", &redis.port.to_string(), "--no-raw", "GET", keys.trim()])
        .output()
        .unwrap();
    let value = String::from_utf8_lossy(&value.stdout).into_owned();
    assert!(!value.contains("access") && !value.contains("refresh"), "sealed: {value}");

    // The operator unlinks her from the fleet's store: her next call asks again.
    let unlinked = mcpbox("unlink")
        .args(args)
        .args(["--http", "127.0.0.1:0", "--issuer", &provider.issuer, "--subject", "ada"])
        .envs(SECRETS)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&unlinked.stderr).into_owned();
    assert!(unlinked.status.success() && said.contains("removed 1 linked account"), "{said}");
    link_of(&whoami(&url_two, &ada, &api));
}
