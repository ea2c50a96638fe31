//! Secretless plugins (docs/credentials.md): a credential set on a plugin's requests to its
//! origin by mcpbox, never seen by the plugin. A real HTTP API on loopback checks the token and
//! echoes every request header back (in its body, its headers, base64- and percent-encoded,
//! gzip-compressed, in chunks of 5 bytes); the `net` fixture reads everything it can of the
//! response and tries to leak it (its result, a log line, a file). Neither the result, the
//! file, the client's log messages, mcpbox's own log at trace nor its traces hold the token in
//! any form; another origin and a redirect to it get nothing. The secret is kept as in a
//! Kubernetes secret volume, and rotated the way the kubelet rotates it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::common::*;
use crate::operations_support::Receiver;

/// What the API saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    authorization: Vec<String>,
}

/// The API: `/echo` answers 200 when the request carries the current token (as `Bearer`, or as
/// `?key=`), 401 otherwise, and echoes what it got; `?gzip` compresses the body (whatever the
/// request's `Accept-Encoding`); `/redirect?to=URL` redirects.
struct Api {
    port: u16,
    token: Arc<Mutex<String>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Api {
    fn start(token: &str) -> Api {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let token = Arc::new(Mutex::new(token.to_owned()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (current, log) = (token.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = answer(stream, &current.lock().unwrap().clone(), &log);
            }
        });
        Api { port, token, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn answer(mut stream: std::net::TcpStream, token: &str, log: &Mutex<Vec<Seen>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let target = line.split(' ').nth(1).unwrap_or("/").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end().to_owned();
        if header.is_empty() {
            break;
        }
        headers.push(header);
    }
    let value = |name: &str| -> Vec<String> {
        headers
            .iter()
            .filter_map(|h| h.split_once(':'))
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_owned())
            .collect()
    };
    let authorization = value("authorization");
    log.lock().unwrap().push(Seen { target: target.clone(), authorization: authorization.clone() });
    if let Some(to) = target.strip_prefix("/redirect?to=") {
        let response =
            format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return stream.write_all(response.as_bytes());
    }
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let keys: Vec<String> =
        form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == "key").map(|(_, v)| v.into_owned()).collect();
    let ok = authorization.iter().any(|a| a == &format!("Bearer {token}")) || keys.iter().any(|k| k == token);
    let auth = authorization.join(", ");
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let echo = json!({
        "headers": headers,
        "query": query,
        "authorizationB64": b64(&auth),
        "tokenB64": b64(auth.strip_prefix("Bearer ").unwrap_or(&auth)),
        "keyPercent": form_urlencoded::byte_serialize(keys.join("").as_bytes()).collect::<String>(),
        "nested": json!({ "authorization": auth }).to_string(),
    });
    // And as a JSON encoder that escapes `/` writes it.
    let echo = echo.to_string();
    let mut body =
        format!("{},\"slashEscaped\":\"{}\"}}", &echo[..echo.len() - 1], auth.replace('/', "\\/")).into_bytes();
    let flag = |name: &str| query.split('&').any(|p| p == name);
    // Round four: a second Content-Encoding line (`codings`), a transfer coding before the
    // chunking (`te`), a header named by the token (`name`).
    let (codings, te, named) = (flag("codings"), flag("te"), flag("name"));
    let gzip = flag("gzip") || codings || te;
    if gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&body)?;
        body = encoder.finish()?;
    }
    let status = if ok { "200 OK" } else { "401 Unauthorized" };
    let coding = match (codings, te, gzip) {
        (true, _, _) => "Content-Encoding: gzip\r\nContent-Encoding: identity\r\n",
        (_, true, _) => "",
        (_, _, true) => "Content-Encoding: gzip\r\n",
        _ => "",
    };
    let transfer = if te { "gzip, chunked" } else { "chunked" };
    let name = match named {
        true => format!(
            "{}: 1\r\n",
            form_urlencoded::byte_serialize(auth.trim_start_matches("Bearer ").as_bytes()).collect::<String>()
        ),
        false => String::new(),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{coding}X-Echo: {auth}\r\n{name}Transfer-Encoding: {transfer}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes())?;
    // Chunks of 5 bytes, each written on its own: the token spans many of them.
    for chunk in body.chunks(5) {
        stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
        stream.write_all(chunk)?;
        stream.write_all(b"\r\n")?;
        stream.flush()?;
    }
    stream.write_all(b"0\r\n\r\n")?;
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    Ok(())
}

/// Every form of `token` a leak could take: as it is, base64 alone and after `Bearer `,
/// percent-encoded, JSON-escaped (`/` too, and twice over).
fn forms(token: &str) -> Vec<String> {
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    vec![
        token.to_owned(),
        b64(token).trim_end_matches('=').to_owned(),
        b64(&format!("Bearer {token}")).trim_end_matches('=').to_owned(),
        form_urlencoded::byte_serialize(token.as_bytes()).collect(),
        token.replace('/', "\\/"),
        token.replace('/', "\\\\/"),
    ]
}

fn assert_no_token(what: &str, text: &str, token: &str) {
    for form in forms(token) {
        assert!(!text.contains(&form), "{what} holds the token (as {form}):\n{text}");
        // As a header name: lower-cased.
        let lower = form.to_ascii_lowercase();
        assert!(!text.to_ascii_lowercase().contains(&lower), "{what} holds the token (as {lower}):\n{text}");
    }
}

/// What the plugin read: status, headers, and the body as the plugin's bytes (decompressed
/// here if it still arrived compressed: a plugin can decompress too).
fn read(result: &Value) -> (u64, String, String) {
    assert_eq!(result["isError"], false, "{result}");
    let read: Value = serde_json::from_str(&text(result)).unwrap();
    let hex = read["bodyHex"].as_str().unwrap();
    let mut body: Vec<u8> =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let headers = read["headers"].to_string();
    // Whatever the headers say (the guest never sees Transfer-Encoding): gzip's magic is enough.
    while body.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut plain).unwrap();
        body = plain;
    }
    (read["status"].as_u64().unwrap(), headers, String::from_utf8_lossy(&body).into_owned())
}

fn fetch_with(server: &mut Server, url: &str, headers: Value, leak_to: Option<&str>) -> Value {
    call_tool(server, "net.fetch_with", json!({ "url": url, "headers": headers, "redirects": 3, "leak_to": leak_to }))
}

#[test]
fn a_credential_reaches_its_origin_only_and_never_the_plugin() {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let token = format!("tok-{}-{nanos}/Zq+9x", std::process::id());
    let (api, other, query_api) = (Api::start(&token), Api::start("not-this"), Api::start(&token));
    let dir = temp_dir();
    // Laid out as a Kubernetes secret volume: the file a symlink through `..data`, which a
    // rotation swaps for a new directory.
    let volume = dir.path().join("secret-volume");
    let version = |name: &str, value: &str| {
        std::fs::create_dir_all(volume.join(name)).unwrap();
        let file = volume.join(name).join("api-token");
        std::fs::write(&file, value).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(name, volume.join("..data_tmp")).unwrap();
        std::fs::rename(volume.join("..data_tmp"), volume.join("..data")).unwrap();
    };
    version("..2026_11_26_a", &format!("{token}\n"));
    let token_file = volume.join("api-token");
    std::os::unix::fs::symlink("..data/api-token", &token_file).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let config = ConfigFile::new(&format!(
        r#"plugins = [{net:?}, {conformance:?}]
[secrets.api]
file = {token_file:?}
[plugin.net]
network = ["{a}", "{b}", "{c}"]
allow_private_network = true
env = {{ API_TOKEN = "placeholder" }}
[[plugin.net.dirs]]
path = {data:?}
writable = true
[[plugin.net.credentials]]
host = "{a}"
header = "Authorization"
value = "Bearer {{secrets.api}}"
[[plugin.net.credentials]]
host = "{c}"
query = "key"
value = "{{secrets.api}}"
[[plugin.net.credentials]]
host = "{c}"
basic_username = "mcpbox"
value = "{{secrets.api}}"
[audit]
path = {audit:?}
arguments = "full"
"#,
        audit = dir.path().join("audit.jsonl"),
        net = fixture("net"),
        conformance = fixture("conformance"),
        a = api.origin(),
        b = other.origin(),
        c = query_api.origin(),
    ));
    let receiver = Receiver::start();
    let mut server = Server::start_with_env(
        &[config.args()[0], config.args()[1], "--otlp-endpoint".as_ref(), receiver.endpoint.as_ref()],
        &[("MCPBOX_LOG", "trace")],
    );
    server.initialize("2025-06-18", json!({ "logging": {} }));
    let _ = server.result("logging/setLevel", json!({ "level": "debug" }));

    // The API gets the token, in place of the plugin's own placeholder, once; the plugin
    // reads the echo with every form of it masked, in body and headers, plain and gzip.
    let placeholder =
        json!([["Authorization", "Bearer placeholder"], ["Accept-Encoding", "gzip"], ["Range", "bytes=0-30"]]);
    for (path, leak) in [("/echo", "plain.txt"), ("/echo?gzip", "gzip.txt")] {
        let result = fetch_with(&mut server, &api.url(path), placeholder.clone(), Some(leak));
        let (status, headers, body) = read(&result);
        assert_eq!(status, 200, "the API accepted the token: {body}");
        assert_no_token("the plugin's result", &result.to_string(), &token);
        assert_no_token("the body the plugin read", &body, &token);
        assert_no_token("the headers the plugin read", &headers, &token);
        assert!(body.contains("*****") && headers.contains("*****"), "masked in place: {body} {headers}");
        assert!(!body.contains("placeholder"), "the plugin's value was replaced: {body}");
        assert!(!body.to_ascii_lowercase().contains("range:"), "no range cuts an echo into pieces: {body}");
        let leaked = std::fs::read_to_string(data.join(leak)).unwrap();
        assert!(leaked.contains("*****"), "{leaked}");
        assert_no_token("the file the plugin wrote", &leaked, &token);
    }
    // Round four: a coding the scan cannot read is refused, never passed on (a second
    // Content-Encoding line once read as identity; a transfer coding before `chunked`, which
    // hyper leaves in the body); a header named by the token goes.
    for path in ["/echo?codings", "/echo?te"] {
        let result = fetch_with(&mut server, &api.url(path), placeholder.clone(), None);
        assert_eq!(result["isError"], true, "{path}: {result}");
        assert_no_token("a refused response", &result.to_string(), &token);
    }
    assert!(server.wait_for_log("cannot be scanned for the credential", LOGGED), "{}", server.stderr());
    let result = fetch_with(&mut server, &api.url("/echo?name"), placeholder.clone(), None);
    let (status, headers, _) = read(&result);
    assert_eq!(status, 200);
    assert_no_token("the header names the plugin read", &headers, &token);
    let seen = api.seen();
    assert_eq!(seen.len(), 5, "{seen:?}");
    for request in &seen {
        assert_eq!(request.authorization, [format!("Bearer {token}")], "exactly the credential: {seen:?}");
    }

    // A query parameter and HTTP basic auth: the plugin's own `key` replaced, its other
    // parameters kept.
    let result = fetch_with(&mut server, &query_api.url("/echo?key=guess&page=2"), json!([]), None);
    let (status, _, body) = read(&result);
    assert_eq!(status, 200, "{body}");
    assert_no_token("the echo of a query credential", &body, &token);
    let request = query_api.seen().pop().unwrap();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("mcpbox:{token}"));
    assert_eq!(request.authorization, [format!("Basic {basic}")], "{request:?}");
    let key: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    assert_eq!(request.target, format!("/echo?page=2&key={key}"), "{request:?}");
    assert!(!body.contains(&basic[..basic.len() - 2]), "{body}");

    // Another origin, directly or redirected to from the API, gets nothing.
    let result = fetch_with(&mut server, &other.url("/echo"), json!([]), None);
    assert_eq!(read(&result).0, 401);
    let via = api.url(&format!("/redirect?to={}", other.url("/echo")));
    assert_eq!(read(&fetch_with(&mut server, &via, json!([]), None)).0, 401);
    let seen = other.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|s| s.authorization.is_empty()), "no credential elsewhere: {seen:?}");
    assert_eq!(api.seen().last().unwrap().authorization, [format!("Bearer {token}")], "the redirecting hop had it");

    // `Host` is not the plugin's to set: no other virtual host at the API's address.
    let result = fetch_with(&mut server, &api.url("/echo"), json!([["Host", "internal.example"]]), None);
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("header refused"), "{result}");

    // A rotated secret is read again, without a restart.
    let rotated = format!("{token}-rotated");
    version("..2026_11_26_b", &rotated);
    *api.token.lock().unwrap() = rotated.clone();
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let result = fetch_with(&mut server, &api.url("/echo"), json!([]), None);
        if read(&result).0 == 200 {
            assert_no_token("the echo after rotation", &result.to_string(), &rotated);
            break;
        }
        assert!(Instant::now() < end, "the rotated secret was not read: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(server.wait_for_log("secret read again", Duration::from_secs(5)), "{}", server.stderr());

    // Logs to the client, mcpbox's own log at its most verbose (trace), and the traces: no
    // token anywhere.
    let messages = server.take_notifications("notifications/message");
    assert!(messages.iter().any(|m| m.to_string().contains("*****")), "the plugin logged its read: {messages:?}");
    assert_no_token("the client's log messages", &serde_json::to_string(&messages).unwrap(), &token);
    assert_still_serving(&mut server);
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(30)).is_some_and(|s| s.success()), "{}", server.stderr());
    let log = server.stderr();
    assert!(log.contains("HTTP request") && log.contains("masked a credential"), "logged at debug: {log}");
    for secret in [&token, &rotated] {
        assert_no_token("mcpbox's log", &log, secret);
    }
    let spans = serde_json::to_string(&receiver.spans(10)).unwrap();
    assert!(spans.contains("net.fetch_with"), "{spans}");
    assert_no_token("the traces", &spans, &token);
    // The audit, even with the arguments in full: every request recorded, no token.
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(audit.contains("\"fetch_with\"") || audit.contains("net.fetch_with"), "{audit}");
    assert!(audit.contains(&format!("127.0.0.1:{}", api.port)), "the requests are recorded: {audit}");
    for secret in [&token, &rotated] {
        assert_no_token("the audit", &audit, secret);
    }
}

fn serve_command(config: &ConfigFile) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    crate::common::owned(&mut command).args(config.args());
    command
}

/// The operator's mistakes are named with file, line and key, and stop the start: a secret
/// file others may read, an unknown secret, a credential for a host outside the grant or without
/// a place to go; `check` shows a granted credential without its value.
#[test]
fn credential_mistakes_are_refused_at_start_and_check_shows_no_value() {
    let dir = temp_dir();
    let secret = dir.path().join("token");
    std::fs::write(&secret, "s3cr3t-value\n").unwrap();
    let mode = |m| std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    let section = |credential: &str| {
        format!(
            "plugins = [{:?}]\n[secrets.api]\nfile = {secret:?}\n[plugin.net]\nnetwork = [\"https://api.example.com\"]\n[[plugin.net.credentials]]\n{credential}\n",
            fixture("net")
        )
    };
    let good = "host = \"https://api.example.com\"\nheader = \"Authorization\"\nvalue = \"Bearer {secrets.api}\"";
    mode(0o644);
    let config = ConfigFile::new(&section(good));
    let refused = refused_start(serve_command(&config));
    assert!(refused.contains("mcpbox.toml:") && refused.contains("[secrets.api]"), "{refused}");
    assert!(refused.contains("group or others") && refused.contains("chmod 600"), "{refused}");
    mode(0o600);
    for (credential, says, line) in [
        (good.replace("api.example.com", "api.example.org"), "not in the plugin's network allow-list", ":7:"),
        (good.replace("secrets.api", "secrets.jira"), "no [secrets.jira] is configured", ":9:"),
        (good.replace("header = \"Authorization\"", "header = \"Host\""), "`Host` cannot be set", ":8:"),
        (good.replace("header = \"Authorization\"\n", ""), "needs exactly one of `header`", ":7:"),
        (format!("{good}\noauth = \"github\""), "`oauth` sets `Authorization: Bearer` itself", ":10:"),
        ("host = \"https://api.example.com\"\noauth = \"github\"".to_owned(), "no [oauth_clients.github]", ":8:"),
        (
            "host = \"https://api.example.com\"\noauth = \"github\"\n[oauth_clients.github]\nissuer = \"https://github.com\"\nclient_id = \"x\"".to_owned(),
            "oauth needs [auth]",
            ":8:",
        ),
    ] {
        config.rewrite(&section(&credential));
        let refused = refused_start(serve_command(&config));
        assert!(refused.contains(says) && refused.contains(line), "{says} at {line}:\n{refused}");
        assert!(!refused.contains("s3cr3t-value"), "{refused}");
    }
    config.rewrite(&section(good));
    let output = mcpbox("check").args(config.args()).output().unwrap();
    let shown = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(shown.contains("header `authorization` for https://api.example.com:443 (secrets `api`)"), "{shown}");
    assert!(!shown.contains("s3cr3t-value"), "{shown}");
}
