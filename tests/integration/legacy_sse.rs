//! The 2024-11-05 HTTP+SSE transport over real sockets: off unless the operator turns it on;
//! the `endpoint` event, 202 and the answer on the stream; every refusal (unknown or missing
//! session, malformed and oversized bodies, 2026-07-28 requests, foreign origins, missing
//! tokens); the stream's end ends the session and cancels its calls.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::common::*;

/// An SSE stream, read event by event.
pub(crate) struct Events {
    body: futures::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: String,
}

impl Events {
    pub(crate) fn new(response: reqwest::Response) -> Events {
        Events { body: response.bytes_stream().boxed(), buffer: String::new() }
    }

    /// The next event's name and data (comments skipped).
    pub(crate) async fn next(&mut self) -> (String, String) {
        self.try_next().await.expect("the stream ended")
    }

    /// The next event, or `None` once the stream ends or fails.
    pub(crate) async fn try_next(&mut self) -> Option<(String, String)> {
        // One deadline for the event, however many keep-alive comments come meanwhile.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.strip_prefix(' ').unwrap_or(value).to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((name, data.join("\n")));
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next()).await.expect("no event in time");
            let chunk = chunk?.ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// The next JSON-RPC message on the stream.
    pub(crate) async fn message(&mut self) -> Value {
        self.try_message().await.expect("the stream ended")
    }

    /// The next JSON-RPC message, or `None` once the stream ends or fails.
    pub(crate) async fn try_message(&mut self) -> Option<Value> {
        let (name, data) = self.try_next().await?;
        assert_eq!(name, "message", "{data}");
        Some(serde_json::from_str(&data).unwrap())
    }
}

/// `GET /sse`: the stream and the URL its `endpoint` event names.
async fn open(base: &str, extra: &[(&str, &str)]) -> (Events, String) {
    let mut request = http_client().get(format!("{base}/sse")).header("accept", "text/event-stream");
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let mut events = Events::new(response);
    let (name, endpoint) = events.next().await;
    assert_eq!(name, "endpoint");
    assert!(endpoint.starts_with("/sse/messages?sessionId="), "{endpoint}");
    (events, format!("{base}{endpoint}"))
}

async fn post(url: &str, body: impl Into<reqwest::Body>) -> reqwest::Response {
    http_client().post(url).header("content-type", "application/json").body(body).send().await.unwrap()
}

fn base(url: &str) -> String {
    url.trim_end_matches("/mcp").to_owned()
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": { "name": "sse-tests", "version": "1" } } })
}

#[tokio::test]
async fn the_legacy_transport_is_off_unless_turned_on() {
    let (_server, url) = Server::start_http(&[fixture("conformance")]);
    let response = http_client().get(format!("{}/sse", base(&url))).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn an_old_client_is_served_and_every_bad_post_gets_its_refusal() {
    let (server, url) = Server::start_http(&[
        fixture("conformance").into_os_string(),
        fixture("chaos").into_os_string(),
        "--legacy-sse".into(),
        "--max-message-bytes".into(),
        "4096".into(),
        "--timeout".into(),
        "120".into(),
    ]);
    let base = base(&url);
    let (mut events, endpoint) = open(&base, &[]).await;
    assert_eq!(post(&endpoint, initialize().to_string()).await.status(), 202);
    let answer = events.message().await;
    assert_eq!(answer["result"]["protocolVersion"], "2024-11-05", "{answer}");
    assert_eq!(
        post(&endpoint, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string()).await.status(),
        202
    );
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "conformance.test_simple_text", "arguments": {} } });
    assert_eq!(post(&endpoint, call.to_string()).await.status(), 202);
    assert_eq!(text(&events.message().await["result"]), "This is a simple text response for testing.");

    // Not JSON: 400 with the JSON-RPC error; nobody waits for it on the stream.
    let garbage = post(&endpoint, "{not json").await;
    assert_eq!(garbage.status(), 400);
    let error: Value = garbage.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32700);
    // Bad params of a request: 400, and the error on the stream for the waiting request.
    let bad = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "arguments": {} } });
    assert_eq!(post(&endpoint, bad.to_string()).await.status(), 400);
    let on_stream = events.message().await;
    assert_eq!((on_stream["id"].as_i64(), on_stream["error"]["code"].as_i64()), (Some(2), Some(-32602)));
    // A 2026-07-28 request: UnsupportedProtocolVersionError naming what this transport serves.
    let modern_request = json!({ "jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": modern(json!({})) });
    let refused = post(&endpoint, modern_request.to_string()).await;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32022);
    assert!(error["error"]["data"]["supported"].as_array().unwrap().contains(&json!("2024-11-05")), "{error}");
    assert_eq!(events.message().await["id"], 3);
    // Too big: 413. No session, or one that does not exist: 400, 404.
    assert_eq!(post(&endpoint, "x".repeat(8000)).await.status(), 413);
    assert_eq!(post(&format!("{base}/sse/messages"), initialize().to_string()).await.status(), 400);
    assert_eq!(post(&format!("{base}/sse/messages?sessionId=feed"), initialize().to_string()).await.status(), 404);
    // A foreign page may not open a session.
    let foreign = http_client().get(format!("{base}/sse")).header("origin", "http://evil.example.com").send();
    assert_eq!(foreign.await.unwrap().status(), 403);

    // A session on a raw socket, so that "the stream ends" means exactly closing the
    // connection: that ends the session and cancels its call.
    let address = base.trim_start_matches("http://").to_owned();
    let mut socket = std::net::TcpStream::connect(&address).unwrap();
    let request = format!("GET /sse HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n");
    std::io::Write::write_all(&mut socket, request.as_bytes()).unwrap();
    let mut head = String::new();
    let mut reader = std::io::BufReader::new(socket.try_clone().unwrap());
    while !head.contains("sessionId=") {
        std::io::BufRead::read_line(&mut reader, &mut head).unwrap();
    }
    let path = head.lines().find_map(|line| line.strip_prefix("data: ")).unwrap().trim().to_owned();
    let spun = format!("{base}{path}");
    assert_eq!(post(&spun, initialize().to_string()).await.status(), 202);
    let spin = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": { "name": "chaos.spin", "arguments": { "ms": 100_000, "announce": true } } });
    assert_eq!(post(&spun, spin.to_string()).await.status(), 202);
    assert!(server.wait_for_log("spin started", WAIT), "{}", server.stderr());
    assert!(!server.stderr().contains("was cancelled"), "nothing cancelled it yet");
    drop((reader, socket));
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );
    assert_eq!(post(&spun, call.to_string()).await.status(), 404, "an ended session");
    // The first session serves on.
    assert_eq!(post(&endpoint, call.to_string()).await.status(), 202);
    assert_eq!(text(&events.message().await["result"]), "This is a simple text response for testing.");
    // Another client is served on.
    let (mut other, other_endpoint) = open(&base, &[]).await;
    assert_eq!(post(&other_endpoint, initialize().to_string()).await.status(), 202);
    assert_eq!(other.message().await["id"], 0);
}

#[tokio::test]
async fn the_legacy_transport_needs_the_bearer_token() {
    let dir = temp_dir();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let (_server, url) = Server::start_http(&[
        fixture("conformance").into_os_string(),
        "--legacy-sse".into(),
        "--auth-token-file".into(),
        token_file.into(),
    ]);
    let base = base(&url);
    assert_eq!(http_client().get(format!("{base}/sse")).send().await.unwrap().status(), 401);
    let (_events, endpoint) = open(&base, &[("authorization", "Bearer s3cret-token")]).await;
    assert_eq!(post(&endpoint, initialize().to_string()).await.status(), 401, "each POST carries the token too");
}
