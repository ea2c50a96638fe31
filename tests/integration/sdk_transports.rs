//! The official SDKs' clients over the transports beside Streamable HTTP: the TypeScript SDK's
//! `Client` over `WebSocketClientTransport` and over `SSEClientTransport`, and the Python SDK's
//! `sse_client`, each listing and calling tools, reading a resource, getting a prompt,
//! receiving progress and answering a plugin's sampling request.

use std::process::{Command, Stdio};

use crate::common::*;

/// A granted directory with `notes.txt`, and mcpbox serving the bundled plugins on every
/// transport.
fn serve() -> (tempfile::TempDir, Server, String) {
    let root = temp_dir();
    std::fs::write(root.path().join("notes.txt"), "one two two\n").unwrap();
    let (server, url) =
        Server::start_http(&[test_set().into_os_string(), "--root".into(), root.path().into(), "--legacy-sse".into()]);
    (root, server, url)
}

fn assert_ok(mut command: Command, expected: &str) {
    let output = command.stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(expected), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn the_typescript_sdk_over_websocket_and_http_sse() {
    let (node, sdk) = ts_sdk();
    let (root, _server, url) = serve();
    let root_name = root.path().file_name().unwrap().to_str().unwrap();
    let script = repo_root().join("tests/clients/ts_sdk_client.cjs");
    let ws = url.replacen("http://", "ws://", 1).replace("/mcp", "/ws");
    let sse = url.replace("/mcp", "/sse");
    for (transport, url) in [("ws", ws), ("sse", sse)] {
        let mut command = Command::new(&node);
        command.arg(&script).args([sdk.as_str(), transport, url.as_str(), root_name]);
        assert_ok(command, &format!("ts sdk client ({transport}): ok"));
    }
}

#[test]
fn the_python_sdk_over_http_sse() {
    let python = python_sdk();
    let (root, _server, url) = serve();
    let root_name = root.path().file_name().unwrap().to_str().unwrap();
    let mut command = Command::new(python);
    command.arg(repo_root().join("tests/clients/python_sdk_client.py")).args([
        "sse",
        &url.replace("/mcp", "/sse"),
        root_name,
    ]);
    assert_ok(command, "python sdk client (sse): ok");
}
