//! The WebSocket transport over real sockets, with tungstenite as the client (it can send any
//! header and any frame): both eras, many calls in flight on one socket answered as they
//! finish, every refusal with its close code or HTTP status, bearer authentication before the
//! upgrade, and heartbeats that keep live clients and drop dead ones.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::common::*;

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The WebSocket URL of a server whose Streamable HTTP URL is `url`.
pub(crate) fn ws_url(url: &str) -> String {
    url.replacen("http://", "ws://", 1).replace("/mcp", "/ws")
}

/// Opens a socket with the `mcp` subprotocol and `headers`; the handshake's error if refused.
pub(crate) async fn connect(url: &str, headers: &[(&str, &str)]) -> Result<Socket, tungstenite::Error> {
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "mcp".parse().unwrap());
    for (name, value) in headers {
        request
            .headers_mut()
            .insert(tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
    }
    tokio_tungstenite::connect_async(request).await.map(|(socket, response)| {
        assert_eq!(response.headers()["sec-websocket-protocol"], "mcp");
        socket
    })
}

pub(crate) async fn send(socket: &mut Socket, message: &Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}

/// The next JSON-RPC message (pings are answered by tungstenite while it reads).
pub(crate) async fn next(socket: &mut Socket) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let frame = tokio::time::timeout_at(deadline, socket.next()).await.expect("no message in time");
        match frame.expect("the socket closed").unwrap() {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// Reads until the response to `id`, answering nothing else.
pub(crate) async fn response(socket: &mut Socket, id: i64) -> Value {
    loop {
        let message = next(socket).await;
        if message["id"] == id && message.get("method").is_none() {
            return message;
        }
    }
}

/// The close frame's code and reason; a message instead (an answer to what should have been
/// refused) fails at once.
pub(crate) async fn closed_with(socket: &mut Socket) -> (u16, String) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let frame = tokio::time::timeout_at(deadline, socket.next()).await.expect("no close in time");
        match frame {
            Some(Ok(Message::Close(Some(close)))) => return (close.code.into(), close.reason.to_string()),
            Some(Ok(Message::Close(None))) | None => panic!("closed without a code"),
            Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => {
                panic!("a message instead of a close: {message:?}")
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => panic!("socket failed before its close frame: {e}"),
        }
    }
}

pub(crate) async fn initialize(socket: &mut Socket) {
    send(
        socket,
        &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "ws-tests", "version": "1" } } }),
    )
    .await;
    let answer = response(socket, 0).await;
    assert_eq!(answer["result"]["serverInfo"]["name"], "mcpbox", "{answer}");
    send(socket, &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } })
}

#[tokio::test]
async fn sixty_four_calls_in_flight_on_one_socket_are_all_answered_as_they_finish_in_both_eras() {
    let (server, url) = Server::start_http(&[
        fixture("chaos").into_os_string(),
        fixture("conformance").into_os_string(),
        "--timeout".into(),
        "120".into(),
    ]);
    let mut socket = connect(&ws_url(&url), &[]).await.unwrap();
    initialize(&mut socket).await;
    for id in 100..164 {
        send(&mut socket, &call(id, "chaos.sleep", json!({ "ms": 200 }))).await;
    }
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 64 {
        let message = next(&mut socket).await;
        assert_eq!(text(&message["result"]), "slept", "{message}");
        assert!(answered.insert(message["id"].as_i64().unwrap()), "answered twice: {message}");
    }
    assert_eq!(answered, (100..164).collect());

    // A fast call sent after a slow one is answered first: calls run side by side.
    send(&mut socket, &call(1, "chaos.sleep", json!({ "ms": 3000 }))).await;
    send(&mut socket, &call(2, "conformance.test_simple_text", json!({}))).await;
    let first = next(&mut socket).await;
    assert_eq!(first["id"], 2, "{first}");
    assert_eq!(text(&first["result"]), "This is a simple text response for testing.");
    assert_eq!(text(&next(&mut socket).await["result"]), "slept");

    // Notifications of a call precede its result.
    send(
        &mut socket,
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "conformance.test_tool_with_progress", "arguments": {}, "_meta": { "progressToken": "p" } } }),
    )
    .await;
    let mut order = Vec::new();
    while order.last().is_none_or(|last| last != "result") {
        let message = next(&mut socket).await;
        order.push(message["method"].as_str().unwrap_or("result").to_owned());
    }
    assert_eq!(order, ["notifications/progress", "notifications/progress", "notifications/progress", "result"]);

    // Cancellation, as on stdio: the guest stops, the socket serves on.
    send(&mut socket, &call(4, "chaos.spin", json!({ "ms": 100_000, "announce": true }))).await;
    assert!(server.wait_for_log("spin started", WAIT), "{}", server.stderr());
    send(&mut socket, &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 4 } }))
        .await;
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );
    send(&mut socket, &json!({ "jsonrpc": "2.0", "id": 5, "method": "ping" })).await;
    assert_eq!(response(&mut socket, 5).await["result"], json!({}));

    // A 2026-07-28 client on a socket of its own: no initialize, `_meta` on every request.
    let mut modern_socket = connect(&ws_url(&url), &[]).await.unwrap();
    send(
        &mut modern_socket,
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern(json!({})) }),
    )
    .await;
    let discover = next(&mut modern_socket).await;
    assert_schema("2026-07-28", "DiscoverResultResponse", &discover);
    let params = modern(json!({ "name": "conformance.test_simple_text", "arguments": {} }));
    send(&mut modern_socket, &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params })).await;
    assert_eq!(text(&next(&mut modern_socket).await["result"]), "This is a simple text response for testing.");
}

#[tokio::test]
async fn hostile_websocket_input_gets_its_refusal_and_the_server_serves_on() {
    let (server, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--max-message-bytes".into(), "4096".into()]);
    let ws = ws_url(&url);
    let mut socket = connect(&ws, &[]).await.unwrap();
    initialize(&mut socket).await;

    // Malformed messages get stdio's JSON-RPC errors, and the socket stays open.
    socket.send(Message::text("{not json")).await.unwrap();
    let parse = next(&mut socket).await;
    assert_eq!((parse["error"]["code"].as_i64(), &parse["id"]), (Some(-32700), &Value::Null), "{parse}");
    socket.send(Message::text(r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#)).await.unwrap();
    assert_eq!(next(&mut socket).await["error"]["code"], -32600);
    send(&mut socket, &json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": { "arguments": {} } }))
        .await;
    let params = next(&mut socket).await;
    assert_eq!((params["error"]["code"].as_i64(), params["id"].as_i64()), (Some(-32602), Some(6)), "{params}");
    send(&mut socket, &json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" })).await;
    assert_eq!(response(&mut socket, 7).await["result"], json!({}));

    // A binary frame closes with 1003.
    socket.send(Message::binary(b"{}".to_vec())).await.unwrap();
    let (code, reason) = closed_with(&mut socket).await;
    assert_eq!(code, 1003, "{reason}");
    assert!(reason.contains("text frame"), "{reason}");

    // A message over --max-message-bytes closes with 1009.
    let mut big = connect(&ws, &[]).await.unwrap();
    big.send(Message::text(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8000)
    )))
    .await
    .unwrap();
    let (code, reason) = closed_with(&mut big).await;
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("4096"), "{reason}");

    // Without the `mcp` subprotocol: 1008, after the upgrade, where a browser can read it.
    let (mut plain, _) = tokio_tungstenite::connect_async(ws.as_str()).await.unwrap();
    let (code, reason) = closed_with(&mut plain).await;
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("`mcp`"), "{reason}");

    // A foreign Origin or Host is refused before the upgrade.
    for header in [("origin", "http://evil.example.com"), ("host", "evil.example.com")] {
        match connect(&ws, &[header]).await {
            Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 403, "{header:?}"),
            other => panic!("{header:?} was not refused: {:?}", other.map(|_| ())),
        }
    }
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    assert!(connect(&ws, &[("origin", &format!("http://localhost:{port}"))]).await.is_ok(), "a local page");

    // Everyone else is served on.
    let mut fresh = connect(&ws, &[]).await.unwrap();
    initialize(&mut fresh).await;
    send(&mut fresh, &call(1, "conformance.test_simple_text", json!({}))).await;
    assert_eq!(text(&response(&mut fresh, 1).await["result"]), "This is a simple text response for testing.");
    assert!(!server.stderr().contains("panicked"), "{}", server.stderr());
}

#[tokio::test]
async fn a_bearer_token_is_checked_before_the_upgrade_and_never_taken_from_the_query() {
    let dir = temp_dir();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let (_server, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--auth-token-file".into(), token_file.into()]);
    let ws = ws_url(&url);
    let refused = |result: Result<Socket, tungstenite::Error>| match result {
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("not an HTTP refusal: {other}"),
        Ok(_) => 101,
    };
    assert_eq!(refused(connect(&ws, &[]).await), 401);
    assert_eq!(refused(connect(&ws, &[("authorization", "Bearer s3cret-tokeX")]).await), 401);
    assert_eq!(refused(connect(&format!("{ws}?access_token=s3cret-token"), &[]).await), 401);
    let mut socket = connect(&ws, &[("authorization", "Bearer s3cret-token")]).await.unwrap();
    initialize(&mut socket).await;
}

#[tokio::test]
async fn pings_keep_a_live_client_and_drop_one_that_stops_answering_cancelling_its_calls() {
    let (server, url) = Server::start_http(&[
        fixture("chaos").into_os_string(),
        "--heartbeat-ms".into(),
        "300".into(),
        "--timeout".into(),
        "120".into(),
    ]);
    let ws = ws_url(&url);
    // A client that reads (and so answers pings) stays connected through many intervals.
    let mut live = connect(&ws, &[]).await.unwrap();
    initialize(&mut live).await;
    let mut pings = 0;
    let idle_until = tokio::time::Instant::now() + Duration::from_millis(1500);
    while let Ok(frame) = tokio::time::timeout_at(idle_until, live.next()).await {
        if let Some(Ok(Message::Ping(_))) = frame {
            pings += 1;
        }
    }
    assert!(pings >= 3, "{pings} pings in 1.5 s at 300 ms");
    send(&mut live, &call(1, "chaos.sleep", json!({ "ms": 10 }))).await;
    assert_eq!(text(&response(&mut live, 1).await["result"]), "slept");

    // A client that stops reading answers no ping: it is dropped and its call cancelled.
    let mut dead = connect(&ws, &[]).await.unwrap();
    initialize(&mut dead).await;
    send(&mut dead, &call(1, "chaos.spin", json!({ "ms": 100_000 }))).await;
    assert!(server.wait_for_log("did not answer a ping", Duration::from_secs(10)), "{}", server.stderr());
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );
    // (The live client, unread meanwhile, went the same way; a new one is served.)
    let mut next_client = connect(&ws, &[]).await.unwrap();
    initialize(&mut next_client).await;
    send(&mut next_client, &call(2, "chaos.sleep", json!({ "ms": 10 }))).await;
    assert_eq!(text(&response(&mut next_client, 2).await["result"]), "slept");
}
