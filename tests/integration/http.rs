//! Streamable HTTP over real sockets: both eras, every status code and header rule, SSE
//! ordering, cancellation on disconnect, graceful shutdown, the official conformance suite,
//! and the official Python SDK client with per-session roots.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::common::*;

const SESSION: &str = "mcp-session-id";

fn initialize_body() -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "http-tests", "version": "1" } } })
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
    }
    map
}

/// POSTs `body` with the headers a compliant client sends, plus `extra`.
pub(crate) async fn post(url: &str, body: &Value, extra: &[(&str, &str)]) -> reqwest::Response {
    http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .headers(headers(extra))
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// The JSON-RPC messages of a response, whether it came as JSON or as an SSE stream.
pub(crate) async fn messages(response: reqwest::Response) -> Vec<Value> {
    let is_sse =
        response.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    if !is_sse {
        return vec![serde_json::from_str(&text).unwrap()];
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// A legacy session: returns its id.
async fn open_session(url: &str) -> String {
    let response = post(url, &initialize_body(), &[]).await;
    assert_eq!(response.status(), 200);
    let session = response.headers().get(SESSION).expect("no Mcp-Session-Id").to_str().unwrap().to_owned();
    let _ = messages(response).await;
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = post(url, &initialized, &[(SESSION, &session), ("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!(response.status(), 202);
    session
}

fn session_headers(session: &str) -> [(&'static str, &str); 2] {
    [(SESSION, session), ("mcp-protocol-version", "2025-11-25")]
}

#[tokio::test]
async fn legacy_sessions_and_every_status_code() {
    let (_server, url) = Server::start_http(&[fixture("conformance")]);
    let session = open_session(&url).await;
    assert!(session.len() >= 32, "session ids are long random tokens: {session}");
    let other = open_session(&url).await;
    assert_ne!(session, other);

    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let ok = post(&url, &list, &session_headers(&session)).await;
    assert_eq!(ok.status(), 200);
    assert!(messages(ok).await[0]["result"]["tools"].as_array().unwrap().len() > 5);

    assert_eq!(post(&url, &list, &[("mcp-protocol-version", "2025-11-25")]).await.status(), 400, "missing session");
    let unknown = [(SESSION, "00000000000000000000000000000000"), ("mcp-protocol-version", "2025-11-25")];
    assert_eq!(post(&url, &list, &unknown).await.status(), 404, "unknown session");
    let bad_version = [(SESSION, session.as_str()), ("mcp-protocol-version", "1999-01-01")];
    assert_eq!(post(&url, &list, &bad_version).await.status(), 400, "unsupported protocol version header");

    let client = http_client();
    assert_eq!(client.put(&url).send().await.unwrap().status(), 405);
    let no_type = client.post(&url).header("accept", "application/json, text/event-stream").body(list.to_string());
    assert_eq!(no_type.headers(headers(&session_headers(&session))).send().await.unwrap().status(), 415);
    let no_accept = client.post(&url).header("content-type", "application/json").body(list.to_string());
    assert_eq!(no_accept.headers(headers(&session_headers(&session))).send().await.unwrap().status(), 406);

    let ended = client.delete(&url).headers(headers(&session_headers(&session))).send().await.unwrap();
    assert_eq!(ended.status(), 204);
    assert_eq!(post(&url, &list, &session_headers(&session)).await.status(), 404, "ended session");
    assert_eq!(post(&url, &list, &session_headers(&other)).await.status(), 200, "other sessions go on");
}

#[tokio::test]
async fn foreign_origins_hosts_and_oversized_bodies_are_refused() {
    let (_server, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--max-message-bytes".into(), "4096".into()]);
    let client = http_client();
    let health = client.get(url.replace("/mcp", "/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);

    assert_eq!(post(&url, &initialize_body(), &[("origin", "http://evil.example.com")]).await.status(), 403);
    assert_eq!(post(&url, &initialize_body(), &[("host", "evil.example.com")]).await.status(), 403);
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    let local = format!("http://localhost:{port}");
    assert_eq!(post(&url, &initialize_body(), &[("origin", &local)]).await.status(), 200);

    let mut big = initialize_body();
    big["params"]["padding"] = json!("x".repeat(10_000));
    assert_eq!(post(&url, &big, &[]).await.status(), 413);
}

#[tokio::test]
async fn an_allowed_origin_is_accepted() {
    let (_server, url) = Server::start_http(&[
        fixture("conformance").into_os_string(),
        "--allow-origin".into(),
        "https://app.example.com:443".into(),
    ]);
    assert_eq!(post(&url, &initialize_body(), &[("origin", "https://app.example.com")]).await.status(), 200);
    assert_eq!(post(&url, &initialize_body(), &[("origin", "https://evil.example.com")]).await.status(), 403);
}

#[tokio::test]
async fn bearer_auth_guards_the_endpoint_in_constant_time() {
    let dir = temp_dir();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let (_server, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--auth-token-file".into(), token_file.into()]);
    let missing = post(&url, &initialize_body(), &[]).await;
    assert_eq!(missing.status(), 401);
    assert!(missing.headers().get("www-authenticate").unwrap().to_str().unwrap().starts_with("Bearer"));
    assert_eq!(post(&url, &initialize_body(), &[("authorization", "Bearer s3cret-tokeX")]).await.status(), 401);
    assert_eq!(post(&url, &initialize_body(), &[("authorization", "Bearer s3cret-token")]).await.status(), 200);
    let health = http_client().get(url.replace("/mcp", "/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "liveness needs no token");
}

#[tokio::test]
async fn notifications_stream_before_the_result() {
    let (_server, url) = Server::start_http(&[fixture("conformance")]);
    let session = open_session(&url).await;
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "conformance.test_tool_with_progress", "_meta": { "progressToken": "p" } } });
    let response = post(&url, &call, &session_headers(&session)).await;
    assert_eq!(response.status(), 200);
    let events = messages(response).await;
    let methods: Vec<&str> = events.iter().map(|m| m["method"].as_str().unwrap_or("result")).collect();
    assert_eq!(methods, ["notifications/progress", "notifications/progress", "notifications/progress", "result"]);
    assert_eq!(events[3]["id"], 7);
    for event in &events {
        let name = if event.get("method").is_some() { "ProgressNotification" } else { "JSONRPCResponse" };
        assert_schema("2025-11-25", name, event);
    }
}

#[tokio::test]
async fn modern_requests_are_stateless_and_headers_must_match_the_body() {
    let (_server, url) = Server::start_http(&[fixture("conformance")]);
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": modern_meta() } });
    let modern_headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let response = post(&url, &list, &modern_headers).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get(SESSION).is_none(), "2026-07-28 has no sessions");
    let answer = messages(response).await.pop().unwrap();
    assert_schema("2026-07-28", "ListToolsResultResponse", &answer);

    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "conformance.test_simple_text", "_meta": modern_meta() } });
    let named = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "conformance.test_simple_text"),
    ];
    let response = post(&url, &call, &named).await;
    assert_eq!(response.status(), 200);
    assert_eq!(text(&messages(response).await.pop().unwrap()["result"]), "This is a simple text response for testing.");

    let mismatch = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let response = post(&url, &call, &mismatch).await;
    assert_eq!(response.status(), 400);
    let error = messages(response).await.pop().unwrap();
    assert_schema("2026-07-28", "HeaderMismatchError", &error);

    let wrong_name = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "other")];
    assert_eq!(post(&url, &call, &wrong_name).await.status(), 400);

    let discover =
        json!({ "jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": { "_meta": modern_meta() } });
    let response =
        post(&url, &discover, &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "server/discover")]).await;
    assert_eq!(response.status(), 200);
    assert_schema("2026-07-28", "DiscoverResultResponse", &messages(response).await.pop().unwrap());
}

/// The stateless requests that need only their response take our lean path
/// (`transport/stateless.rs`); the others, and any request it is unsure of, rmcp's service.
/// Every answer is the same either way: each request is sent as a client sends it, then with a
/// weighted `Accept` (the same preference, which the lean path leaves to rmcp), and the status,
/// media type and messages must match (the sealed `requestState` of a question aside: it is
/// fresh each time).
#[tokio::test]
async fn the_lean_stateless_path_answers_as_rmcp_does() {
    let (server, url) =
        Server::start_http_with_env(&[fixture("conformance")], &[("MCPBOX_LOG", "info,mcpbox::mcp::transport=debug")]);
    // (method, params, Mcp-Name, whether the lean path serves it)
    let requests = [
        ("tools/list", json!({}), None, true),
        ("tools/call", json!({ "name": "conformance.test_simple_text" }), Some("conformance.test_simple_text"), true),
        (
            "tools/call",
            json!({ "name": "conformance.test_error_handling" }),
            Some("conformance.test_error_handling"),
            true,
        ),
        ("tools/call", json!({ "name": "conformance.nothing_here" }), Some("conformance.nothing_here"), true),
        (
            "tools/call",
            json!({ "name": "conformance.test_input_required_result_elicitation" }),
            Some("conformance.test_input_required_result_elicitation"),
            true,
        ),
        ("resources/list", json!({}), None, true),
        ("resources/templates/list", json!({}), None, true),
        ("resources/read", json!({ "uri": "test://static-text" }), Some("test://static-text"), true),
        ("prompts/list", json!({}), None, true),
        (
            "prompts/get",
            json!({ "name": "conformance.test_simple_prompt" }),
            Some("conformance.test_simple_prompt"),
            true,
        ),
        (
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "conformance.test_prompt_with_arguments" },
            "argument": { "name": "arg1", "value": "a" } }),
            None,
            true,
        ),
        // Parameters bound to headers are rmcp's to check (here: a missing Mcp-Param-Region).
        (
            "tools/call",
            json!({ "name": "conformance.test_custom_header", "arguments": { "region": "eu" } }),
            Some("conformance.test_custom_header"),
            false,
        ),
        // A progress token makes the response a stream of several messages: rmcp's.
        (
            "tools/call",
            json!({ "name": "conformance.test_tool_with_progress", "_meta": { "progressToken": 5 } }),
            Some("conformance.test_tool_with_progress"),
            false,
        ),
        // Not a request at all: a stray `result` (rmcp's error either way).
        ("tools/list", json!({ "result": {} }), None, false),
    ];
    let lean_taken = |server: &Server| server.stderr().matches("served on the lean stateless path").count();
    for (id, (method, params, name, takes_lean)) in requests.into_iter().enumerate() {
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut meta = modern_meta();
        if let Some(token) = params.pointer("/_meta/progressToken") {
            meta["progressToken"] = token.clone();
        }
        request["params"]["_meta"] = meta;
        if let Some(stray) = params.get("result") {
            request["params"].as_object_mut().unwrap().remove("result");
            request["result"] = stray.clone();
        }
        let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
        headers.extend(name.map(|name| ("mcp-name", name)));
        let before = lean_taken(&server);
        let expected = before + usize::from(takes_lean);
        let mut weighted = headers.clone();
        weighted.push(("accept", "application/json;q=1, text/event-stream;q=0.9"));
        let by_rmcp = answer(post(&url, &request, &weighted).await).await;
        let lean = answer(post(&url, &request, &headers).await).await;
        // The log is read by a thread of the test: wait for the lean request's line (a line of
        // the one before it would come first, and show as one too many).
        let end = Instant::now() + Duration::from_secs(5);
        while lean_taken(&server) < expected && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if !takes_lean {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(lean_taken(&server), expected, "{method} {params}: {}", server.stderr());
        assert_eq!(lean, by_rmcp, "{method} {params}");
        assert!(!lean.2.is_empty(), "{method} {params}");
    }
}

/// A response as its status, media type and messages, without `requestState` values.
async fn answer(response: reqwest::Response) -> (u16, String, Vec<Value>) {
    let status = response.status().as_u16();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    // A refusal before any JSON-RPC (a bad request) is plain text.
    let mut messages = if kind.starts_with("text/plain") || kind.is_empty() {
        vec![Value::String(response.text().await.unwrap())]
    } else {
        messages(response).await
    };
    fn forget_state(value: &mut Value) {
        match value {
            Value::Object(object) => {
                object.remove("requestState");
                object.values_mut().for_each(forget_state);
            }
            Value::Array(items) => items.iter_mut().for_each(forget_state),
            _ => {}
        }
    }
    messages.iter_mut().for_each(forget_state);
    (status, kind, messages)
}

/// 2026-07-28 Streamable HTTP §Cancellation: closing a request's stream cancels the request.
/// (Legacy sessions are different by design: 2025-11-25 says a disconnect SHOULD NOT be taken
/// as cancellation; those clients send `notifications/cancelled`.)
#[tokio::test]
async fn a_modern_client_that_disconnects_cancels_its_guest_and_slow_plugins_delay_nobody() {
    let (server, url) = Server::start_http(&[fixture("chaos"), fixture("conformance")]);
    let spin = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "chaos.spin", "arguments": { "ms": 120000, "announce": true }, "_meta": modern_meta() } });
    // A raw socket, so that "disconnect" means exactly closing the connection.
    let address = url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let mut socket = std::net::TcpStream::connect(&address).unwrap();
    let body = spin.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: chaos.spin\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    std::io::Write::write_all(&mut socket, request.as_bytes()).unwrap();
    assert!(server.wait_for_log("spin started", WAIT), "{}", server.stderr());
    // While it spins, another plugin answers at once.
    let started = Instant::now();
    let session = open_session(&url).await;
    let quick = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "conformance.test_simple_text" } });
    let answer = messages(post(&url, &quick, &session_headers(&session)).await).await;
    assert_eq!(text(&answer.last().unwrap()["result"]), "This is a simple text response for testing.");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(!server.stderr().contains("was cancelled"), "nothing cancelled it yet");
    drop(socket);
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );
}

#[tokio::test]
async fn many_sessions_and_calls_run_concurrently() {
    let (_server, url) = Server::start_http(&[fixture("chaos")]);
    let started = Instant::now();
    let mut calls = Vec::new();
    for _ in 0..4 {
        let session = open_session(&url).await;
        for id in 0..4 {
            let url = url.clone();
            let session = session.clone();
            calls.push(tokio::spawn(async move {
                let sleep = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": "chaos.sleep", "arguments": { "ms": 1000 } } });
                let answer = messages(post(&url, &sleep, &session_headers(&session)).await).await;
                text(&answer.last().unwrap()["result"])
            }));
        }
    }
    for call in calls {
        assert_eq!(call.await.unwrap(), "slept");
    }
    assert!(started.elapsed() < Duration::from_secs(8), "16 one-second calls overlap: {:?}", started.elapsed());
}

#[tokio::test]
async fn a_graceful_shutdown_finishes_in_flight_calls() {
    let (mut server, url) = Server::start_http(&[fixture("chaos")]);
    let session = open_session(&url).await;
    let sleep = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "chaos.sleep", "arguments": { "ms": 1500 } } });
    // The response's head comes when mcpbox has taken the call (its event stream opens): the
    // call is in flight when the signal comes, however slow the machine (a fixed 300 ms was
    // not always enough under load).
    let response = post(&url, &sleep, &session_headers(&session)).await;
    let in_flight = tokio::spawn(messages(response));
    let status = std::process::Command::new("kill").args(["-TERM", &server.pid().to_string()]).status().unwrap();
    assert!(status.success());
    let answer = in_flight.await.unwrap();
    assert_eq!(text(&answer.last().unwrap()["result"]), "slept", "the computed response is not lost");
    let exit = server.wait_exit(Duration::from_secs(30)).expect("mcpbox did not exit after SIGTERM");
    assert!(exit.success(), "{exit}");
    // New connections are refused once shutting down.
    assert!(http_client().get(url.replace("/mcp", "/healthz")).send().await.is_err());
}

/// The conformance plugin's tools that run as tasks (the suite's `tasks-*` fixtures): at once,
/// two of them only as tasks, and `test_tool_with_task` when it detaches itself.
const TASK_TOOLS: &str = "[plugin.conformance.tasks.slow_compute]\nafter_ms = 0\n\
    [plugin.conformance.tasks.failing_job]\nafter_ms = 0\nrequired = true\n\
    [plugin.conformance.tasks.protocol_error_job]\nafter_ms = 0\n\
    [plugin.conformance.tasks.confirm_delete]\nafter_ms = 0\n\
    [plugin.conformance.tasks.multi_input]\nafter_ms = 0\n\
    [plugin.conformance.tasks.test_tool_with_task]\nrequired = true\n";

/// Installs a version of the official conformance suite and starts mcpbox with the
/// `conformance` plugin unprefixed, as the suite expects; returns node, the suite, the server,
/// its URL, and what must live as long as the server (its config and plugin directories).
/// The plugin is served from a watched directory of its own, and may add a spare plugin
/// (`hello`) to a second watched directory (the suite's hooks that change the server's lists).
fn conformance_setup(version: &str) -> (String, String, Server, String, (ConfigFile, tempfile::TempDir)) {
    let setup = std::process::Command::new("bash")
        .arg(repo_root().join("scripts/setup-conformance.sh"))
        .arg(version)
        .output()
        .unwrap();
    assert!(
        setup.status.success(),
        "installing the conformance suite failed: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let tools = String::from_utf8(setup.stdout).unwrap();
    let (node, suite) = tools.trim().split_once(' ').unwrap();
    let dirs = temp_dir();
    let [source, spare, extra] = ["source", "spare", "extra"].map(|name| dirs.path().join(name));
    for dir in [&source, &spare, &extra] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::copy(fixture("conformance"), source.join("conformance.wasm")).unwrap();
    std::fs::copy(fixture("hello"), spare.join("hello.wasm")).unwrap();
    // The skills scenarios (extensions/skills) read the fixture skills.
    let skills = repo_root().join("tests/fixtures/skills");
    let config = ConfigFile::new(&format!(
        "plugins = [{source:?}, {extra:?}]\n\n[[skills]]\npath = {skills:?}\n\n[plugin.conformance]\nprefix = \"\"\n\n\
         [[plugin.conformance.dirs]]\npath = {spare:?}\nname = \"spare\"\n\n\
         [[plugin.conformance.dirs]]\npath = {extra:?}\nname = \"extra\"\nwritable = true\n\n\
         {TASK_TOOLS}"
    ));
    let (server, url) = Server::start_http(&config.args());
    (node.to_owned(), suite.to_owned(), server, url, (config, dirs))
}

/// Every active scenario of the conformance suite the issue names (0.1.16).
#[test]
fn the_official_conformance_suite_passes() {
    let (node, suite, _server, url, _dir) = conformance_setup("0.1.16");
    let output = std::process::Command::new(node).args([suite.as_str(), "server", "--url", &url]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let total = stdout.lines().find(|l| l.starts_with("Total: ")).unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    assert!(output.status.success() && total.ends_with(" 0 failed"), "{total}\n{stdout}");
    let passed: usize = total["Total: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= 40, "{total}");
}

/// The pre-release suite's 2026-07-28 requirements (the pending scenarios and the tasks
/// extension's included), with no expected failures: the suite fails the run on any failure
/// or warning.
#[test]
fn the_2026_conformance_requirements_all_pass() {
    let (node, suite, _server, url, _dir) = conformance_setup("0.2.0-alpha.12");
    let output = std::process::Command::new(&node)
        .args([suite.as_str(), "server", "--url", &url, "--requirements", "2026-07-28"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let total = stdout.lines().find(|l| l.starts_with("Total: ")).unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    assert!(output.status.success() && total.ends_with(" 0 failed"), "{total}\n{stdout}");
    // Every scenario ran and passed (how many checks some report depends on timing: a task may
    // finish before it is polled).
    assert!(!stdout.contains("✗ "), "{stdout}");
    for scenario in [
        "server-stateless",
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    ] {
        assert!(stdout.contains(&format!("✓ {scenario}: ")), "{scenario} did not run and pass:\n{stdout}");
    }
    // The skills extension's server scenarios, each run on its own (extensions are not part of
    // a revision's requirements): every check passes, none skipped, no warning.
    for scenario in ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"] {
        let output = std::process::Command::new(&node)
            .args([suite.as_str(), "server", "--url", &url, "--scenario", scenario])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let passed =
            stdout.lines().find(|l| l.starts_with("Passed: ")).unwrap_or_else(|| panic!("no summary:\n{stdout}"));
        let (count, total) = passed["Passed: ".len()..].split_once(',').unwrap().0.split_once('/').unwrap();
        assert!(
            output.status.success() && count == total && passed.ends_with(" 0 failed, 0 warnings"),
            "{scenario}: {passed}\n{stdout}"
        );
        assert!(!stdout.contains("SKIPPED"), "{scenario} skipped checks:\n{stdout}");
    }
}

#[test]
fn python_sdk_over_http_in_both_eras_with_per_session_roots() {
    let python = python_sdk();
    let allowed = temp_dir();
    for name in ["alpha", "beta"] {
        std::fs::create_dir_all(allowed.path().join(name)).unwrap();
        std::fs::write(allowed.path().join(name).join("notes.txt"), "one two two\n").unwrap();
    }
    std::fs::write(allowed.path().join("notes.txt"), "one two two\n").unwrap();
    let (_server, url) = Server::start_http(&[test_set().into_os_string(), "--root".into(), allowed.path().into()]);
    let script = repo_root().join("tests/clients/python_sdk_client.py");
    let root_name = allowed.path().file_name().unwrap().to_str().unwrap().to_owned();
    let run = |args: &[&str]| {
        std::process::Command::new(&python)
            .arg(&script)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for era in ["legacy", "modern"] {
        let output = run(&["http", &url, &root_name, era]).wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!("(http, {era}): ok")),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // Two sessions at once, each with its own roots, each blind to the other's.
    let alpha = allowed.path().join("alpha").display().to_string();
    let beta = allowed.path().join("beta").display().to_string();
    let first = run(&["http-roots", &url, &alpha, "beta"]);
    let second = run(&["http-roots", &url, &beta, "alpha"]);
    for child in [first, second] {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(": ok"), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    }
}

/// Legacy SSE resumption (2025-11-25 transports §Resumability): a client that loses a POST
/// stream mid-call reconnects with `Last-Event-ID` and gets the rest, result included.
#[tokio::test]
async fn a_lost_stream_resumes_from_last_event_id() {
    // The call lasts until the test creates `go`: the stream is lost and resumed while it runs,
    // whatever the machine's speed. (rmcp 3.9 keeps a request's stream for resuming only while
    // the request runs: after its response, a resume gets an empty stream, modelcontextprotocol/
    // rust-sdk#791; docs/transports.md.)
    let dir = temp_dir();
    let go = dir.path().join("go");
    let (_server, url) = Server::start_http(&[fixture("chaos").into_os_string(), "--root".into(), dir.path().into()]);
    let session = open_session(&url).await;
    let guest_go = format!("/roots/{}/go", dir.path().file_name().unwrap().to_str().unwrap());
    let call = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": { "name": "chaos.wait_for", "arguments": { "path": guest_go }, "_meta": { "progressToken": "r" } } });
    let mut response = post(&url, &call, &session_headers(&session)).await;
    // Read up to the progress the call reports (an event that carries an id), then drop the
    // connection.
    let mut seen = String::new();
    let last_id = loop {
        let chunk = response.chunk().await.unwrap().expect("the stream ended before the call's progress");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains("waiting")
            && let Some(id) =
                seen.lines().filter_map(|l| l.strip_prefix("id:")).map(|id| id.trim().to_owned()).next_back()
        {
            break id;
        }
    };
    drop(response);
    let resumed = http_client()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("last-event-id", &last_id)
        .headers(headers(&session_headers(&session)))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    std::fs::write(&go, b"").unwrap();
    let mut text = String::new();
    let mut resumed = resumed;
    while !text.contains("\"id\":9") {
        match tokio::time::timeout(WAIT, resumed.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("the resumed stream ended: {other:?}; got {text}\n{}", _server.stderr()),
        }
    }
    assert!(text.contains("released"), "{text}");
}

/// A replica the operator names starts its legacy session ids with its name, so that a load
/// balancer can route by them, with or without a shared store; unnamed and alone, the ids are
/// plain random ones.
#[tokio::test]
async fn a_named_replica_starts_its_session_ids_with_its_name() {
    let (_named, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--replica".into(), "edge-7".into()]);
    let id = open_session(&url).await;
    let random = id.strip_prefix("edge-7.").unwrap_or_else(|| panic!("{id}"));
    assert_eq!(random.len(), 32, "{id}");
    let (_plain, url) = Server::start_http(&[fixture("conformance")]);
    let id = open_session(&url).await;
    assert!(!id.contains('.'), "{id}");
}
