//! The HTTP side shared by the benchmarks: where a server serves, one POST, and a legacy
//! session.

use std::io::{BufRead, BufReader};
use std::process::Child;

use serde_json::json;

/// The URL a server started with `--http` and its stderr piped says it serves at, once it
/// does; its stderr is read on after that, so that its log never fills the pipe.
pub fn served_url(server: &mut Child) -> String {
    let mut lines = BufReader::new(server.stderr.take().expect("stderr piped")).lines();
    let url = loop {
        let line = lines.next().expect("the server exited").unwrap();
        if let Some(at) = line.find("serving MCP over ") {
            // Up to a space, or the quote that ends a JSON log line's message.
            break line[at + 17..].split(|c: char| c.is_whitespace() || c == '"').next().unwrap().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    url
}

/// The `_meta` of a stateless 2026-07-28 request.
pub const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// POSTs a JSON-RPC message; returns the status, the session id if any, and the body.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    body: String,
    headers: &[(&'static str, String)],
) -> (u16, Option<String>, String) {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    (status, session, response.text().await.unwrap())
}

/// Opens a legacy (2025-11-25) session and returns its id.
pub async fn open_session(client: &reqwest::Client, url: &str) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } } });
    let (_, session, _) = post(client, url, init.to_string(), &[]).await;
    let session = session.expect("a session id");
    let headers = [("mcp-session-id", session.clone()), ("mcp-protocol-version", "2025-11-25".to_owned())];
    post(client, url, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(), &headers).await;
    session
}
