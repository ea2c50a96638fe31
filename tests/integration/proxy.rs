//! Heartbeats through a real reverse proxy: nginx (Debian's, `scripts/setup-proxy.sh`) on
//! loopback with a 2 s idle timeout and its default response buffering, in front of mcpbox.
//! A 4 s call completes on every transport that holds a stream open (a Streamable HTTP POST's
//! SSE response, in a legacy session and as a 2026-07-28 request, the 2024-11-05 HTTP+SSE
//! stream, a WebSocket) while mcpbox sends heartbeats,
//! and is cut off by the proxy without them. That the SSE streams arrive at all through a
//! buffering proxy shows the anti-buffering header works.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::common::*;
use crate::legacy_sse::Events;
use crate::websocket::{connect, send};

/// The proxy's idle timeout (`proxy_read_timeout`), and a call well beyond it.
const PROXY_IDLE: &str = "2s";
const SLOW_CALL_MS: u64 = 4000;

/// nginx in front of `upstream` (`host:port`), until dropped.
struct Proxy {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-proxy.sh")).output().unwrap();
        assert!(setup.status.success(), "setting up nginx failed: {}", String::from_utf8_lossy(&setup.stderr));
        let nginx = String::from_utf8(setup.stdout).unwrap().trim().to_owned();
        let dir = temp_dir();
        let port = free_port();
        let d = dir.path().display();
        let config = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log stderr notice;
            events {{ worker_connections 64; }}
            http {{
              access_log off;
              client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
              uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
              server {{
                listen 127.0.0.1:{port};
                proxy_read_timeout {PROXY_IDLE};
                proxy_http_version 1.1;
                location /ws {{
                  proxy_pass http://{upstream};
                  proxy_set_header Upgrade $http_upgrade;
                  proxy_set_header Connection upgrade;
                }}
                location / {{
                  proxy_pass http://{upstream};
                  proxy_set_header Connection \"\";
                }}
              }}
            }}"
        );
        std::fs::write(dir.path().join("nginx.conf"), config).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .arg("-e")
            .arg("stderr")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let proxy = Proxy { child, port, _dir: dir };
        let end = std::time::Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < end, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn slow_call(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "chaos.sleep", "arguments": { "ms": SLOW_CALL_MS } } })
}

/// The text of the slow call's result in an SSE body, if it is there (a cut stream has none).
fn slow_result(body: &str) -> Option<String> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 1)
        .map(|message| text(&message["result"]))
}

/// A call as a 2026-07-28 Streamable HTTP POST.
async fn post_call(base: &str, call: &Value) -> reqwest::Result<reqwest::Response> {
    http_client()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "chaos.sleep")
        .body(call.to_string())
        .send()
        .await
}

/// The slow call as a 2026-07-28 Streamable HTTP POST: its result's text, if it arrived.
async fn over_streamable_http(base: &str) -> Option<String> {
    let mut call = slow_call(1);
    call["params"]["_meta"] = modern_meta();
    let body = post_call(base, &call).await.ok()?.text().await.ok()?;
    slow_result(&body)
}

/// The slow call in a legacy Streamable HTTP session, whose POST stream starts at once.
async fn in_a_legacy_session(base: &str) -> Option<String> {
    let client = http_client();
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "proxy-tests", "version": "1" } } });
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let opened = post(initialize, None).await.ok()?;
    let session = opened.headers().get("mcp-session-id")?.to_str().ok()?.to_owned();
    opened.text().await.ok()?;
    post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), Some(session.clone())).await.ok()?;
    let body = post(slow_call(1), Some(session)).await.ok()?.text().await.ok()?;
    slow_result(&body)
}

/// The slow call on the 2024-11-05 HTTP+SSE stream.
async fn over_legacy_sse(base: &str) -> Option<String> {
    let client = http_client();
    let response = client.get(format!("{base}/sse")).send().await.ok()?;
    let mut events = Events::new(response);
    let (_, endpoint) = events.next().await;
    let endpoint = format!("{base}{endpoint}");
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": { "name": "proxy-tests", "version": "1" } } });
    for message in [initialize, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), slow_call(1)] {
        let sent = client.post(&endpoint).header("content-type", "application/json").body(message.to_string()).send();
        assert_eq!(sent.await.ok()?.status(), 202);
    }
    loop {
        let message = events.try_message().await?;
        if message["id"] == 1 {
            return Some(text(&message["result"]));
        }
    }
}

/// The slow call on a WebSocket.
async fn over_websocket(base: &str) -> Option<String> {
    let mut socket = connect(&format!("{}/ws", base.replacen("http://", "ws://", 1)), &[]).await.ok()?;
    send(&mut socket, &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "proxy-tests", "version": "1" } } }))
    .await;
    send(&mut socket, &slow_call(1)).await;
    while let Ok(Some(Ok(frame))) = tokio::time::timeout(WAIT, socket.next()).await {
        if let Message::Text(text_frame) = frame {
            let message: Value = serde_json::from_str(&text_frame).unwrap();
            if message["id"] == 1 {
                return Some(text(&message["result"]));
            }
        }
    }
    None
}

/// The slow call on every transport at once, through the proxy, with this heartbeat.
async fn through_the_proxy(heartbeat_ms: &str) -> [Option<String>; 4] {
    let (_server, url) = Server::start_http(&[
        fixture("chaos").into_os_string(),
        "--legacy-sse".into(),
        "--heartbeat-ms".into(),
        heartbeat_ms.into(),
    ]);
    let upstream = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    // mcpbox asks proxies not to buffer its SSE responses (nginx consumes the header, so it is
    // checked here, without the proxy in between).
    let quick = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "chaos.sleep", "arguments": { "ms": 1 }, "_meta": modern_meta() } });
    let direct = post_call(&format!("http://{upstream}"), &quick).await.unwrap();
    assert_eq!(direct.headers()["content-type"], "text/event-stream");
    assert_eq!(direct.headers()["x-accel-buffering"], "no");
    assert_eq!(direct.headers()["cache-control"], "no-cache");
    let proxy = Proxy::start(&upstream);
    let base = format!("http://127.0.0.1:{}", proxy.port);
    let (modern, legacy, sse, ws) = tokio::join!(
        over_streamable_http(&base),
        in_a_legacy_session(&base),
        over_legacy_sse(&base),
        over_websocket(&base)
    );
    [modern, legacy, sse, ws]
}

#[tokio::test]
async fn a_call_slower_than_the_proxy_idle_timeout_completes_with_heartbeats_and_not_without() {
    let slept = Some("slept".to_owned());
    let all = [slept.clone(), slept.clone(), slept.clone(), slept];
    assert_eq!(
        through_the_proxy("500").await,
        all,
        "with heartbeats (modern and legacy Streamable HTTP, HTTP+SSE, WebSocket)"
    );
    assert_eq!(
        through_the_proxy("0").await,
        [None, None, None, None],
        "without heartbeats the proxy cuts every stream"
    );
}
