//! Hot reload: a plugin folder changes while clients are connected. Added, changed and removed
//! files are served, re-served and dropped, clients are told (legacy `list_changed`
//! notifications, 2026-07-28 `subscriptions/listen`), a broken replacement keeps the old
//! version serving, and calls already running finish on the version they started with.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

fn tool_names(server: &mut Server, params: Value) -> Vec<String> {
    let listed = server.result("tools/list", params);
    listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Copies `from` over `to` the way a deploy does: write a temporary file, then rename it in,
/// so the watcher never sees half a file.
fn install(from: &Path, to: &Path) {
    let staging = to.with_extension("partial");
    std::fs::copy(from, &staging).unwrap();
    std::fs::rename(&staging, to).unwrap();
}

/// Waits for the notification `method`; returns how long it took.
fn wait_notification(server: &mut Server, method: &str) -> (Value, Duration) {
    let started = Instant::now();
    let notification = server.read_until(|m| m["method"] == method);
    (notification, started.elapsed())
}

#[test]
fn add_change_break_and_remove_while_a_legacy_client_is_connected() {
    let dir = temp_dir();
    std::fs::copy(fixture("hello"), dir.path().join("hello.wasm")).unwrap();
    // A development folder: another plugin under the same name serves at once (tests/pins.rs
    // has what happens to changed definitions otherwise).
    let mut server = Server::start(&[dir.path().as_os_str(), "--unpinned".as_ref()]);
    let init = server.initialize("2025-06-18", json!({}));
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    assert_eq!(tool_names(&mut server, json!({})), ["hello.count", "hello.greet"]);

    // Added: its tools appear and the client is told.
    install(&fixture("echo"), &dir.path().join("echo.wasm"));
    let (notification, took) = wait_notification(&mut server, "notifications/tools/list_changed");
    assert_schema("2025-06-18", "ToolListChangedNotification", &notification);
    eprintln!("add announced after {took:?}");
    assert_eq!(tool_names(&mut server, json!({})), ["echo.echo", "hello.count", "hello.greet"]);
    let echoed = server.result("tools/call", json!({ "name": "echo.echo", "arguments": { "text": "hi" } }));
    assert_eq!(text(&echoed), "hi");

    // Changed: the same file name now holds another plugin.
    install(&fixture("tools_only"), &dir.path().join("echo.wasm"));
    wait_notification(&mut server, "notifications/tools/list_changed");
    assert_eq!(tool_names(&mut server, json!({})), ["echo.ping", "hello.count", "hello.greet"]);

    // Broken: a file that does not compile keeps the previous version serving.
    std::fs::write(dir.path().join("echo.wasm"), b"not wasm at all").unwrap();
    assert!(server.wait_for_log("keeping the previous version", WAIT), "{}", server.stderr());
    assert!(server.stderr().contains("echo.wasm") && server.stderr().contains("not a valid WebAssembly component"));
    assert_eq!(text(&server.result("tools/call", json!({ "name": "echo.ping" }))), "pong");
    assert_eq!(tool_names(&mut server, json!({})), ["echo.ping", "hello.count", "hello.greet"]);
    // Tried once: a broken file is retried when it changes, not on every event (reading it to
    // compile it is one), which used to warn every 150 ms for as long as it stayed.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(server.stderr().matches("keeping the previous version").count(), 1, "{}", server.stderr());

    // Removed: its tools go, and the client is told.
    std::fs::remove_file(dir.path().join("echo.wasm")).unwrap();
    wait_notification(&mut server, "notifications/tools/list_changed");
    assert_eq!(tool_names(&mut server, json!({})), ["hello.count", "hello.greet"]);
    let gone = server.call("tools/call", json!({ "name": "echo.ping" }));
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[test]
fn a_modern_client_hears_of_changes_on_its_subscription() {
    let dir = temp_dir();
    std::fs::copy(fixture("hello"), dir.path().join("hello.wasm")).unwrap();
    let mut server = Server::start(&[dir.path()]);
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(), "notifications": { "toolsListChanged": true, "promptsListChanged": true } } }));
    let ack = server.read_until(|m| m["method"] == "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true, "{ack}");

    install(&fixture("echo"), &dir.path().join("echo.wasm"));
    let (notification, took) = wait_notification(&mut server, "notifications/tools/list_changed");
    eprintln!("add announced after {took:?}");
    assert_schema("2026-07-28", "ToolListChangedNotification", &notification);
    assert_eq!(notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id, "{notification}");
    assert_eq!(tool_names(&mut server, modern(json!({}))), ["echo.echo", "hello.count", "hello.greet"]);

    std::fs::write(dir.path().join("echo.wasm"), b"\0asm\x01\0\0\0").unwrap();
    assert!(server.wait_for_log("keeping the previous version", WAIT), "{}", server.stderr());
    std::fs::remove_file(dir.path().join("echo.wasm")).unwrap();
    wait_notification(&mut server, "notifications/tools/list_changed");
    assert_eq!(tool_names(&mut server, modern(json!({}))), ["hello.count", "hello.greet"]);
    // No prompts changed, so no prompts notification was sent.
    assert!(server.take_notifications("notifications/prompts/list_changed").is_empty());
}

#[test]
fn calls_in_flight_finish_on_the_version_they_started_with() {
    let dir = temp_dir();
    std::fs::copy(fixture("chaos"), dir.path().join("chaos.wasm")).unwrap();
    let mut server = Server::start(&[dir.path().as_os_str(), "--unpinned".as_ref()]);
    server.initialize("2025-06-18", json!({}));
    let sleeping = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": sleeping, "method": "tools/call",
        "params": { "name": "chaos.sleep", "arguments": { "ms": 3000 } } }));
    std::thread::sleep(Duration::from_millis(300));
    install(&fixture("tools_only"), &dir.path().join("chaos.wasm"));
    wait_notification(&mut server, "notifications/tools/list_changed");
    // New calls see the new version...
    assert_eq!(text(&server.result("tools/call", json!({ "name": "chaos.ping" }))), "pong");
    assert_eq!(
        server.call("tools/call", json!({ "name": "chaos.echo", "arguments": { "value": 1 } }))["error"]["code"],
        -32602
    );
    // ...and the call that started before the swap completes on the old one.
    let finished = server.read_until(|m| m["id"] == sleeping);
    assert_eq!(text(&finished["result"]), "slept", "{finished}");
}

#[test]
fn without_watching_nothing_changes_and_nothing_is_declared() {
    let dir = temp_dir();
    std::fs::copy(fixture("hello"), dir.path().join("hello.wasm")).unwrap();
    let mut server = Server::start(&[dir.path().as_os_str(), "--no-watch".as_ref()]);
    let init = server.initialize("2025-06-18", json!({}));
    assert!(init["capabilities"]["tools"].get("listChanged").is_none(), "{init}");
    install(&fixture("echo"), &dir.path().join("echo.wasm"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(tool_names(&mut server, json!({})), ["hello.count", "hello.greet"]);
    assert!(server.take_notifications("notifications/tools/list_changed").is_empty());
}

#[test]
fn subscribers_hear_when_a_plugin_changes_a_resource() {
    let dir = temp_dir();
    let name = dir.path().file_name().unwrap().to_str().unwrap().to_owned();
    let watched = format!("file:///roots/{name}/watched.txt");
    let mut server = Server::start(&[fixture("fs").as_os_str(), "--root-rw".as_ref(), dir.path().as_os_str()]);
    server.initialize("2025-06-18", json!({}));
    server.result("resources/subscribe", json!({ "uri": watched }));
    let write = |server: &mut Server, file: &str| {
        let path = format!("/roots/{name}/{file}");
        let result = server
            .result("tools/call", json!({ "name": "fs.write_file", "arguments": { "path": path, "content": "x" } }));
        assert_eq!(result["isError"], false, "{result}");
    };
    write(&mut server, "other.txt");
    write(&mut server, "watched.txt");
    let (updated, _) = wait_notification(&mut server, "notifications/resources/updated");
    assert_schema("2025-06-18", "ResourceUpdatedNotification", &updated);
    assert_eq!(updated["params"]["uri"], watched);
    assert!(server.take_notifications("notifications/resources/updated").is_empty(), "only the subscribed one");

    // 2026-07-28: the subscription is part of subscriptions/listen.
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(), "notifications": { "resourceSubscriptions": [watched] } } }));
    server.read_until(|m| m["method"] == "notifications/subscriptions/acknowledged");
    write(&mut server, "watched.txt");
    let modern_update = server.read_until(|m| {
        m["method"] == "notifications/resources/updated"
            && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
    });
    assert_eq!(modern_update["params"]["uri"], watched);
}
