//! The stdio framing: bad input gets the JSON-RPC error and the server goes on.

use std::time::Duration;

use serde_json::json;

use crate::common::*;

#[test]
fn malformed_lines_get_errors_and_the_server_goes_on() {
    let mut server = Server::start(&[fixture("conformance")]);
    server.initialize("2025-06-18", json!({}));

    server.send_raw(b"this is not json\n");
    let parse = server.read(WAIT).unwrap();
    assert_eq!(parse["error"]["code"], -32700);
    assert!(parse["id"].is_null());

    server.send_raw(br#"{"jsonrpc":"1.0","id":41,"method":"ping"}"#);
    server.send_raw(b"\n");
    let version = server.read(WAIT).unwrap();
    assert_eq!(version["error"]["code"], -32600);
    assert_eq!(version["id"], 41);

    server.send_raw(b"[1,2]\n");
    assert_eq!(server.read(WAIT).unwrap()["error"]["code"], -32600);

    let unknown = server.call("no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);

    let bad_params = server.call("tools/call", json!({ "arguments": 5 }));
    assert_eq!(bad_params["error"]["code"], -32602);

    // Blank lines and CRLF are fine; still serving.
    server.send_raw(b"\n\r\n   \n{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n");
    let pong = server.read_until(|m| m["id"] == "crlf");
    assert!(pong["result"].is_object());
}

#[test]
fn split_and_coalesced_messages_both_work() {
    let mut server = Server::start(&[fixture("conformance")]);
    server.initialize("2025-06-18", json!({}));
    let message =
        br#"{"jsonrpc":"2.0","id":"split","method":"tools/call","params":{"name":"conformance.test_simple_text"}}"#;
    for piece in message.chunks(7) {
        server.send_raw(piece);
        std::thread::sleep(Duration::from_millis(2));
    }
    server.send_raw(b"\n");
    assert_eq!(
        text(&server.read_until(|m| m["id"] == "split")["result"]),
        "This is a simple text response for testing."
    );

    let mut burst = Vec::new();
    for id in 0..20 {
        burst.extend_from_slice(
            json!({ "jsonrpc": "2.0", "id": format!("b{id}"), "method": "ping" }).to_string().as_bytes(),
        );
        burst.push(b'\n');
    }
    server.send_raw(&burst);
    for id in 0..20 {
        let wanted = format!("b{id}");
        assert!(server.read_until(|m| m["id"] == wanted.as_str())["result"].is_object());
    }
}

#[test]
fn an_oversized_line_gets_an_error_not_a_hang() {
    let mut server =
        Server::start(&[fixture("conformance").into_os_string(), "--max-message-bytes".into(), "4096".into()]);
    server.initialize("2025-06-18", json!({}));
    let huge = json!({ "jsonrpc": "2.0", "id": "big", "method": "tools/call",
        "params": { "name": "conformance.test_simple_text", "arguments": { "pad": "x".repeat(100_000) } } });
    server.send(&huge);
    let error = server.read(WAIT).unwrap();
    assert_eq!(error["error"]["code"], -32600);
    assert!(error["error"]["message"].as_str().unwrap().contains("4096"), "{error}");
    // The rest of that line was skipped; the next message is served.
    assert!(server.call("ping", json!({}))["result"].is_object());
    assert!(server.backlog.iter().all(|m| m["id"] != "big"), "the oversized request must not run");
}

#[test]
fn end_of_input_ends_the_process_cleanly() {
    let mut server = Server::start(&[fixture("conformance")]);
    server.initialize("2025-06-18", json!({}));
    server.close_stdin();
    let status = server.wait_exit(Duration::from_secs(20)).expect("mcpbox did not exit at end of input");
    assert!(status.success(), "{status}");
}
