//! What an authenticated principal may use and see (docs/authorization.md §Entitlements,
//! §Limits, §Isolation), against the real OpenID provider of `authorization.rs`: lists
//! filtered, a call outside the principal's entitlements refused with the scope that would
//! allow it (or as unknown when hidden), limits per principal hit and recovered, each user's
//! own directory invisible to the other, a session id worthless with another user's token, and
//! a WebSocket closed when its token expires.

use std::time::Duration;

use serde_json::{Value, json};

use super::authorization::{Provider, challenge};
use super::http::{messages, post};
use super::websocket::{self, closed_with, connect, ws_url};
use crate::common::*;

/// mcpbox over HTTP with `[auth]` naming the provider, `extra` config, and `plugins`.
fn serve(provider: &Provider, extra: &str, plugins: &[&str]) -> (Server, String, ConfigFile) {
    serve_files(provider, extra, plugins.iter().map(|name| fixture(name).into_os_string()).collect())
}

/// `serve` with the plugins' files.
fn serve_files(provider: &Provider, extra: &str, plugins: Vec<std::ffi::OsString>) -> (Server, String, ConfigFile) {
    let config = ConfigFile::new(&format!(
        "[auth]\nissuers = [\"{}\"]\nscopes_supported = [\"tools:read\", \"tools:call\", \"files\"]\n{extra}",
        provider.issuer
    ));
    let [flag, path] = config.args();
    let mut args = vec![flag.to_owned(), path.to_owned()];
    args.extend(plugins);
    let (server, url) = Server::start_http(&args);
    (server, url, config)
}

/// A stateless 2026-07-28 request with `token`.
async fn request(url: &str, token: &str, method: &str, params: Value) -> reqwest::Response {
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": modern(params) });
    let bearer = format!("Bearer {token}");
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method), ("authorization", &bearer)];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    post(url, &body, &headers).await
}

async fn call(url: &str, token: &str, tool: &str, arguments: Value) -> reqwest::Response {
    request(url, token, "tools/call", json!({ "name": tool, "arguments": arguments })).await
}

async fn answer(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), 200);
    messages(response).await.pop().unwrap()
}

async fn tool_names(url: &str, token: &str) -> Vec<String> {
    let listed = answer(request(url, token, "tools/list", json!({})).await).await;
    let tools = listed["result"]["tools"].as_array().unwrap_or_else(|| panic!("{listed}"));
    tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn lists_show_what_a_principal_may_use_and_a_call_beyond_it_names_the_scope_to_step_up_to() {
    let provider = Provider::start();
    let rules = "[[auth.entitlements]]\nscope = \"tools:read\"\ntools = [\"echo.*\"]\n\
                 [[auth.entitlements]]\nscope = \"files\"\nplugins = [\"fs\"]\n\
                 [[auth.entitlements]]\nscope = \"tools:call\"\ntools = [\"conformance.test_simple_text\"]\nhidden = true\n";
    let (_server, url, _config) = serve(&provider, rules, &["echo", "fs", "conformance"]);
    let origin = url.trim_end_matches("/mcp");
    let bob = provider.token("bob", "tools:read", Some(&url)).await;
    let ada = provider.token("ada", "tools:read tools:call files", Some(&url)).await;

    // Bob (tools:read) sees the echo tool only; Ada sees what her three scopes name.
    assert_eq!(tool_names(&url, &bob).await, ["echo.echo"]);
    let adas = tool_names(&url, &ada).await;
    assert!(adas.contains(&"echo.echo".to_owned()) && adas.contains(&"fs.read_file".to_owned()), "{adas:?}");
    assert!(adas.contains(&"conformance.test_simple_text".to_owned()), "{adas:?}");
    assert!(!adas.contains(&"conformance.test_error_handling".to_owned()), "{adas:?}");
    let listed = answer(request(&url, &bob, "tools/list", json!({})).await).await;
    assert_eq!(listed["result"]["cacheScope"], "private", "a filtered list is the principal's own: {listed}");

    // Bob calls a file tool: 403, naming the scope that would allow it (basic/authorization
    // §Scope Challenge Handling).
    let refused = call(&url, &bob, "fs.list_dir", json!({ "path": "/" })).await;
    assert_eq!(refused.status(), 403);
    let expected = format!(
        "Bearer error=\"insufficient_scope\", scope=\"files\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", error_description=\"insufficient_scope: the tool `fs.list_dir` needs the scope `files`\""
    );
    assert_eq!(challenge(&refused), expected);

    // A hidden tool, and one no entitlement names, are as unknown to him as a made-up one.
    for tool in ["conformance.test_simple_text", "conformance.test_error_handling", "made.up"] {
        let error = answer(call(&url, &bob, tool, json!({})).await).await;
        assert_eq!(error["error"]["code"], -32602, "{tool}: {error}");
        assert!(error["error"]["message"].as_str().unwrap().contains("unknown tool"), "{tool}: {error}");
    }
    // Ada may.
    let called = answer(call(&url, &ada, "conformance.test_simple_text", json!({})).await).await;
    assert!(called["result"]["content"].is_array(), "{called}");

    // Over a WebSocket the same refusal is a JSON-RPC error carrying the scope.
    let bearer = format!("Bearer {bob}");
    let mut socket = connect(&ws_url(&url), &[("authorization", &bearer)]).await.unwrap();
    websocket::initialize(&mut socket).await;
    let list_dir = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "fs.list_dir", "arguments": { "path": "/" } } });
    websocket::send(&mut socket, &list_dir).await;
    let error = websocket::response(&mut socket, 7).await;
    assert_eq!(error["error"]["code"], -32003, "{error}");
    assert_eq!(error["error"]["data"], json!({ "error": "insufficient_scope", "scope": "files" }), "{error}");
}

#[tokio::test]
async fn one_principal_over_its_limits_is_refused_with_which_limit_and_when_while_another_is_served() {
    let provider = Provider::start();
    let limits = "[auth.limits]\ncalls_per_minute = 60\nburst = 2\nconcurrent_calls = 1\n";
    let (_server, url, _config) = serve(&provider, limits, &["echo", "chaos"]);
    let ada = provider.token("ada", "tools:read", Some(&url)).await;
    let bob = provider.token("bob", "tools:read", Some(&url)).await;
    let echo = json!({ "text": "hi" });

    // A burst of two, then the rate (one a second): 429 with Retry-After.
    for _ in 0..2 {
        assert_eq!(call(&url, &ada, "echo.echo", echo.clone()).await.status(), 200);
    }
    let refused = call(&url, &ada, "echo.echo", echo.clone()).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    let why = refused.text().await.unwrap();
    assert!(why.contains("calls_per_minute") && why.contains("60 per minute"), "{why}");
    // Bob has a bucket of his own.
    assert_eq!(call(&url, &bob, "echo.echo", echo.clone()).await.status(), 200);
    // A second later Ada may call again.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(call(&url, &ada, "echo.echo", echo.clone()).await.status(), 200);

    // One call at a time: while Bob's slow call runs, his next is refused; Ada's is not.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let slow = tokio::spawn({
        let (url, bob) = (url.clone(), bob.clone());
        async move { call(&url, &bob, "chaos.sleep", json!({ "ms": 1500 })).await.status() }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let refused = call(&url, &bob, "echo.echo", echo.clone()).await;
    assert_eq!(refused.status(), 429);
    let why = refused.text().await.unwrap();
    assert!(why.contains("concurrent_calls"), "{why}");
    assert_eq!(call(&url, &ada, "echo.echo", echo.clone()).await.status(), 200);
    assert_eq!(slow.await.unwrap(), 200);
    // His call done, Bob may call again.
    assert_eq!(call(&url, &bob, "echo.echo", echo).await.status(), 200);
}

#[tokio::test]
async fn each_user_sees_only_their_own_directory_through_the_plugin() {
    let provider = Provider::start();
    let data = temp_dir();
    let users = data.path().join("users");
    std::fs::create_dir(&users).unwrap();
    let audit = data.path().join("audit.jsonl");
    let dirs = format!(
        "[[plugin.fs.dirs]]\npath = \"{}/{{sub}}\"\nname = \"home\"\nwritable = true\nmax_mib = 1\n\
         [audit]\npath = {audit:?}\n",
        users.display()
    );
    let (_server, url, _config) = serve(&provider, &dirs, &["fs"]);
    let ada = provider.token("ada", "tools:read", Some(&url)).await;
    let bob = provider.token("bob", "tools:read", Some(&url)).await;

    let wrote = answer(
        call(&url, &ada, "fs.write_file", json!({ "path": "/roots/home/note.txt", "content": "Ada's note" })).await,
    )
    .await;
    assert!(wrote["result"]["isError"] != true, "{wrote}");
    let read = answer(call(&url, &ada, "fs.read_file", json!({ "path": "/roots/home/note.txt" })).await).await;
    assert!(read.to_string().contains("Ada's note"), "{read}");

    // Bob's home is his own, empty; Ada's note is nowhere he can reach.
    let listed = answer(call(&url, &bob, "fs.list_dir", json!({ "path": "/roots/home" })).await).await;
    assert!(!listed.to_string().contains("note.txt"), "{listed}");
    let adas_dir = std::fs::read_dir(&users)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|name| name.ends_with("-ada"))
        .expect("Ada's directory under the base");
    for path in ["/roots/home/note.txt".to_owned(), format!("/roots/home/../{adas_dir}/note.txt")] {
        let read = answer(call(&url, &bob, "fs.read_file", json!({ "path": path })).await).await;
        assert!(!read.to_string().contains("Ada's note"), "{path}: {read}");
    }
    // On disk: one directory each, named from issuer and subject, the note in Ada's.
    assert_eq!(std::fs::read_to_string(users.join(&adas_dir).join("note.txt")).unwrap(), "Ada's note");
    assert_eq!(std::fs::read_dir(&users).unwrap().count(), 2);

    // Each user's directory has a write budget of its own: Ada's second 700 KiB passes her
    // 1 MiB, Bob's first does not touch it.
    let fill = |token: &str, name: &str| {
        let (url, token) = (url.clone(), token.to_owned());
        let path = format!("/roots/home/{name}");
        async move {
            let filled = answer(call(&url, &token, "fs.fill", json!({ "path": path, "bytes": 700 << 10 })).await).await;
            filled["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
        }
    };
    assert_eq!(fill(&ada, "one").await, "wrote 716800 bytes");
    assert!(fill(&ada, "two").await.starts_with("error"), "past Ada's budget");
    assert_eq!(fill(&bob, "one").await, "wrote 716800 bytes");
    // The audit names who called, through which transport.
    let lines: Vec<Value> =
        std::fs::read_to_string(&audit).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let calls: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "call").collect();
    assert!(!calls.is_empty());
    for line in &calls {
        assert_eq!(line["transport"], "streamable-http", "{line}");
        assert_eq!(line["principal"]["issuer"], provider.issuer.as_str(), "{line}");
    }
    let subjects: Vec<&str> = calls.iter().map(|l| l["principal"]["subject"].as_str().unwrap()).collect();
    assert!(subjects.contains(&"ada") && subjects.contains(&"bob"), "{subjects:?}");
    let refused = calls
        .iter()
        .find(|l| l["effects"]["files"].to_string().contains("max_mib"))
        .expect("the refusal is in the audit");
    assert_eq!(refused["principal"]["subject"], "ada");
}

#[tokio::test]
async fn a_session_is_its_openers_and_a_websocket_closes_when_its_token_expires() {
    let provider = Provider::start();
    let (_server, url, _config) = serve(&provider, "leeway_seconds = 0\n", &["echo"]);
    let ada = provider.token("ada", "tools:read", Some(&url)).await;
    let bob = provider.token("bob", "tools:read", Some(&url)).await;

    // Ada opens a legacy session.
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "principals", "version": "1" } } });
    let opened = post(&url, &initialize, &[("authorization", &format!("Bearer {ada}"))]).await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let in_session = |token: String| {
        let (url, session, list) = (url.clone(), session.clone(), list.clone());
        async move {
            let bearer = format!("Bearer {token}");
            let headers = [
                ("authorization", bearer.as_str()),
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ];
            post(&url, &list, &headers).await
        }
    };
    // Bob replays her session id with his token: as unknown as any session he never opened.
    assert_eq!(in_session(bob.clone()).await.status(), 404);
    // Ada goes on.
    let listed = in_session(ada.clone()).await;
    assert_eq!(listed.status(), 200);
    assert!(messages(listed).await.pop().unwrap()["result"]["tools"].is_array());

    // A socket opened with a token that lives a second closes, 1008, when it expires.
    let brief = provider.token("brief", "tools:read", Some(&url)).await;
    let bearer = format!("Bearer {brief}");
    let mut socket = connect(&ws_url(&url), &[("authorization", &bearer)]).await.unwrap();
    let (code, reason) = closed_with(&mut socket).await;
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("expired"), "{reason}");
}

#[tokio::test]
async fn a_plugin_learns_who_calls_only_where_the_operator_says_so() {
    let provider = Provider::start();
    let (_told, told_url, _config) = serve(&provider, "[plugin.chaos]\ncaller = true\n", &["chaos"]);
    let (_untold, untold_url, _config2) = serve(&provider, "", &["chaos"]);
    for (url, expected_subject) in [(&told_url, Some("ada")), (&untold_url, None)] {
        let token = provider.token("ada", "tools:read", Some(url)).await;
        let called = answer(call(url, &token, "chaos.caller", json!({})).await).await;
        let said: Value = serde_json::from_str(called["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        match expected_subject {
            Some(subject) => {
                assert_eq!(said["subject"], subject, "{said}");
                assert_eq!(said["issuer"], provider.issuer.as_str(), "{said}");
                assert_eq!(said["scopes"], json!(["tools:read"]), "{said}");
            }
            None => assert_eq!(said, Value::Null, "told without the operator's say-so"),
        }
        // The token itself never reaches the plugin.
        assert!(!called.to_string().contains(&token));
    }
}

/// MCP Apps: an app is part of its tool. A principal entitled to a tool reads the app its
/// `ui.resourceUri` links (listed and read), though no resource rule names `ui://`; one
/// entitled only to another tool of the plugin does not.
#[tokio::test]
async fn a_tool_entitles_the_app_it_links_and_nothing_more() {
    let provider = Provider::start();
    let rules = "[[auth.entitlements]]\nscope = \"tools:read\"\ntools = [\"meta.tag\"]\n\
                 [[auth.entitlements]]\nscope = \"files\"\ntools = [\"meta.ask\"]\n";
    let (_server, url, _config) = serve(&provider, rules, &["meta"]);
    let bob = provider.token("bob", "tools:read", Some(&url)).await;
    let ada = provider.token("ada", "files", Some(&url)).await;
    // `resources/read` names its URI in `Mcp-Name` (SEP-2243).
    let read = |token: String| {
        let url = url.clone();
        async move {
            let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read",
                "params": modern(json!({ "uri": "ui://meta/app" })) });
            let bearer = format!("Bearer {token}");
            let headers = [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "resources/read"),
                ("mcp-name", "ui://meta/app"),
                ("authorization", bearer.as_str()),
            ];
            answer(post(&url, &body, &headers).await).await
        }
    };
    let bobs = read(bob.clone()).await;
    assert!(bobs["result"]["contents"][0]["text"].as_str().unwrap_or_default().contains("meta's app"), "{bobs}");
    let listed = answer(request(&url, &bob, "resources/list", json!({})).await).await;
    let uris: Vec<&str> =
        listed["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["ui://meta/app"], "{listed}");
    let adas = read(ada.clone()).await;
    // As unknown as a URI nobody serves (2026-07-28: -32602).
    assert_eq!(adas["error"]["message"], "no plugin has a resource at `ui://meta/app`", "{adas}");
    let listed = answer(request(&url, &ada, "resources/list", json!({})).await).await;
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");
}

/// Tools that call tools (docs/composition.md): the inner call is made for the client's
/// principal (the callee learns who, where the operator lets it), only within that principal's
/// entitlements, and a composer lists only what the principal may use.
#[tokio::test]
async fn an_inner_call_is_made_for_the_same_principal_within_its_entitlements() {
    let provider = Provider::start();
    let rules = "[plugin.chaos]\ncaller = true\n[plugin.composer]\nmay_call = [\"chaos.*\"]\n\
                 [plugin.code]\nroots = false\nmay_call = [\"chaos.*\"]\n\
                 [[auth.entitlements]]\nscope = \"tools:read\"\ntools = [\"composer.*\", \"code.*\", \"chaos.caller\"]\n";
    let plugins = vec![fixture("composer").into(), fixture("chaos").into(), plugin("code").into()];
    let (_server, url, _config) = serve_files(&provider, rules, plugins);
    let ada = provider.token("ada", "tools:read", Some(&url)).await;
    let text_of = |answer: &Value| answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();

    let called = answer(call(&url, &ada, "composer.call", json!({ "tool": "chaos.caller" })).await).await;
    let inner: Value = serde_json::from_str(&text_of(&called)).unwrap_or_else(|_| panic!("{called}"));
    let said: Value = serde_json::from_str(inner["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(said["subject"], "ada", "{said}");
    assert!(!called.to_string().contains(&ada), "the token never reaches a plugin");

    // chaos.echo is served, not entitled to ada: as unknown to her composer as to her.
    let refused =
        answer(call(&url, &ada, "composer.call", json!({ "tool": "chaos.echo", "arguments": { "value": 1 } })).await)
            .await;
    assert_eq!(text_of(&refused), "refused: unknown tool `chaos.echo`", "{refused}");
    let listed = answer(call(&url, &ada, "composer.callable", json!({})).await).await;
    assert_eq!(text_of(&listed), "chaos.caller", "{listed}");

    // Code mode: `describe` shows her only what she may use; a script that calls more gets
    // the refusal as an exception.
    let described = answer(call(&url, &ada, "code.describe", json!({})).await).await;
    let names: Vec<&str> = described["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{described}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["chaos.caller"], "{described}");
    assert!(text_of(&described).contains("await tools.chaos.caller({})"), "{described}");
    let script = "const who = JSON.parse(await tools.chaos.caller({})).subject;\n\
                  try { await tools.chaos.echo({ value: 1 }); } catch (error) { return who + ': ' + error.message; }";
    let ran = answer(call(&url, &ada, "code.run", json!({ "script": script })).await).await;
    assert_eq!(ran["result"]["structuredContent"]["result"], "ada: unknown tool `chaos.echo`", "{ran}");
}

/// Tool search (`--tool-search`): a principal finds only the tools it may use.
#[tokio::test]
async fn a_search_finds_only_what_the_principal_may_use() {
    let provider = Provider::start();
    let rules = "[[auth.entitlements]]\nscope = \"tools:read\"\ntools = [\"chaos.caller\"]\n";
    let (_server, url, _config) = serve_files(&provider, rules, vec![fixture("chaos").into(), "--tool-search".into()]);
    let ada = provider.token("ada", "tools:read", Some(&url)).await;
    assert_eq!(tool_names(&url, &ada).await, ["search_tools", "call_tool"]);
    let query = json!({ "query": "says who the host echo panics", "limit": 50 });
    let found = answer(call(&url, &ada, "search_tools", query).await).await;
    let names: Vec<&str> = found["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["chaos.caller"], "{found}");
}
