//! Keep-alive connections and refusals, over a raw socket so that the test decides when each
//! byte leaves: a client that keeps its connection for its next request (every HTTP client
//! does: the OAuth flow's retry with a token goes out on the connection its 401 came on) is
//! never cut off by a refusal that was sent before its request's body arrived.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::common::*;

const TOKEN: &str = "s3cret-token";
const BODY: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"keep-alive","version":"1"}}}"#;

#[test]
fn a_refusal_sent_before_the_body_arrived_says_the_connection_closes_and_others_keep_it() {
    let dir = temp_dir();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let (_server, url) =
        Server::start_http(&[fixture("conformance").into_os_string(), "--auth-token-file".into(), token_file.into()]);
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let authorized = format!("authorization: Bearer {TOKEN}\r\n");
    let refusals = [
        ("/mcp", String::new(), 401),
        ("/mcp", format!("{authorized}origin: https://evil.example.com\r\n"), 403),
        ("/nowhere", authorized.clone(), 404),
    ];
    for (path, extra, status) in refusals {
        let mut socket = connect(&address);
        // The head alone, as httpx writes it; the refusal needs nothing more.
        write!(socket, "POST {path} HTTP/1.1\r\nhost: {address}\r\n{extra}{}", post_headers()).unwrap();
        let (head, _) = response(&mut socket);
        assert!(head.starts_with(&format!("HTTP/1.1 {status}")), "{path}: {head}");
        // The body arrives after the refusal, as it can from any client on a busy machine.
        let sent = socket.write_all(BODY.as_bytes());
        if closes(&head) {
            // The server keeps its word: the connection ends, and the client opens a new one.
            let mut rest = Vec::new();
            let _ = socket.read_to_end(&mut rest);
        } else {
            // Said to stay open: the next request on it must be answered.
            let next = sent
                .and_then(|()| write!(socket, "GET /healthz HTTP/1.1\r\nhost: {address}\r\n\r\n"))
                .map(|()| response(&mut socket).0);
            assert!(
                next.as_ref().is_ok_and(|next| next.starts_with("HTTP/1.1 200")),
                "{path}: the connection of a {status} was not said to close, yet the next request on it got {next:?}"
            );
        }
    }

    // A request whose body was read keeps its connection: the next request is answered on it.
    let mut socket = connect(&address);
    write!(socket, "POST /mcp HTTP/1.1\r\nhost: {address}\r\n{authorized}{}{BODY}", post_headers()).unwrap();
    let (head, _) = response(&mut socket);
    assert!(head.starts_with("HTTP/1.1 200") && !closes(&head), "{head}");
    write!(socket, "GET /healthz HTTP/1.1\r\nhost: {address}\r\n\r\n").unwrap();
    let (next, body) = response(&mut socket);
    assert!(next.starts_with("HTTP/1.1 200") && body == b"ok\n", "{next:?}");
}

fn connect(address: &str) -> TcpStream {
    let socket = TcpStream::connect(address).unwrap();
    socket.set_read_timeout(Some(WAIT)).unwrap();
    socket
}

fn post_headers() -> String {
    format!(
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n",
        BODY.len()
    )
}

fn closes(head: &str) -> bool {
    head.lines().any(|line| line.eq_ignore_ascii_case("connection: close"))
}

/// One response: its head (as far as it came before the connection ended) and its body, read
/// by its `content-length` or its chunks.
fn response(socket: &mut TcpStream) -> (String, Vec<u8>) {
    let Some(head) = line_until(socket, b"\r\n\r\n") else {
        return (String::new(), Vec::new());
    };
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim().to_ascii_lowercase())
        })
    };
    let mut body = Vec::new();
    if header("transfer-encoding").as_deref() == Some("chunked") {
        loop {
            let size = line_until(socket, b"\r\n").unwrap();
            let size = usize::from_str_radix(size.trim_end().split(';').next().unwrap(), 16).unwrap();
            let mut chunk = vec![0u8; size + 2];
            socket.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(header("content-length").map_or(0, |n| n.parse().unwrap()), 0);
        socket.read_exact(&mut body).unwrap();
    }
    (head, body)
}

/// The bytes up to and including `end`, or `None` if the connection ends first.
fn line_until(socket: &mut TcpStream, end: &[u8]) -> Option<String> {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(end) {
        match socket.read(&mut byte) {
            Ok(1) => bytes.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
