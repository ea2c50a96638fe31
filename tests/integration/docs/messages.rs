//! Every message `docs/troubleshooting.md` quotes (the code spans of its tables' first column, of
//! three words or more) is produced here by the real binary and compared: `...` in the doc
//! matches any text, and the doc's placeholder names (`x`, `net`, `fs`, `a`) are the names the
//! scenarios give their plugins. A row marked `<!-- not mcpbox's -->` quotes another tool
//! (componentize-py, componentize-js) and is left out; the few messages produced elsewhere say
//! where in [`ELSEWHERE`].

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::runner::matches_output;
use crate::common::*;

/// Messages produced by another test, which compares them with the doc itself.
const ELSEWHERE: [(&str, &str); 3] = [
    (
        "plugin `x` rejected the arguments: `style`: unknown variant `loud`, expected `plain` or `excited`",
        "languages::a_rust_plugin_made_from_the_template_builds_and_serves (it builds the Rust guide's plugin)",
    ),
    (
        "plugin `x` could not start: the host runs its maximum number of instances at once; try again",
        "the unit test runtime::sandbox::error::tests::documented_messages (2,000 calls at once here would take minutes)",
    ),
    (
        "plugin `x` rejected the arguments: `style` must be one of \"plain\", \"excited\"",
        "languages::a_python_plugin_made_from_the_template_builds_and_serves (it builds the Python guide's plugin)",
    ),
];

/// The quoted messages of the tables' first column, with their line.
fn quoted_messages(doc: &str) -> Vec<(usize, String)> {
    let mut messages = Vec::new();
    for (number, line) in doc.lines().enumerate() {
        let Some(cell) = line.strip_prefix('|').and_then(|row| row.split(" | ").next()) else { continue };
        if line.contains("<!-- not mcpbox's -->") || line.starts_with("|---") {
            continue;
        }
        for span in code_spans(cell) {
            if span.split_whitespace().count() >= 3 {
                messages.push((number + 1, span));
            }
        }
    }
    messages
}

/// The code spans of Markdown `text`: `` `a` `` and ``` ``a `b` c`` ```.
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(ticks);
        let body = &rest[start + ticks..];
        let Some(end) = body.find(&fence) else { break };
        spans.push(body[..end].trim().to_owned());
        rest = &body[end + ticks..];
    }
    spans
}

/// `mcpbox check` on copies of plugins in a fresh folder, as `(name, file)`, with an optional
/// config; its stdout and stderr.
fn check(files: &[(&str, &Path)], config: Option<&str>) -> String {
    let dir = temp_dir();
    for (name, file) in files {
        let target = dir.path().join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(file, target).unwrap();
    }
    let mut command = mcpbox("check");
    match config {
        Some(text) => {
            std::fs::write(dir.path().join("mcpbox.toml"), text).unwrap();
            command.arg("--config").arg(dir.path().join("mcpbox.toml"));
        }
        None => {
            command.arg(dir.path());
        }
    }
    let output = command.output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// A file with these bytes, for the loading scenarios.
fn bytes_file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// What mcpbox says when plugins do not load.
fn loading_messages() -> Vec<String> {
    let scratch = temp_dir();
    let core = bytes_file(scratch.path(), "core", b"\0asm\x01\0\0\0");
    let garbage = bytes_file(scratch.path(), "garbage", b"nope");
    // An empty component: valid, and exports nothing.
    let empty = bytes_file(scratch.path(), "empty", b"\0asm\x0d\0\x01\0");
    let echo = fixture("echo");
    vec![
        check(&[("plugin.wasm", &core)], None),
        check(&[("garbage.wasm", &garbage)], None),
        check(&[("x.wasm", &empty)], None),
        check(&[("net.wasm", &fixture("net"))], None),
        check(&[("x.wasm", &fixture("net"))], None),
        check(&[("x.wasm", &fixture("unknown_import"))], None),
        check(&[("x.wasm", &echo)], Some("plugins = [\"x.wasm\"]\n[plugin.x]\nprefix = \"my tools.\"\n")),
        check(&[("x.wasm", &fixture("bad_schema"))], None),
        check(
            &[("x.wasm", &fixture("bad_schema"))],
            Some("plugins = [\"x.wasm\"]\n[plugin.x]\nenv = { BAD = \"control-title\" }\n"),
        ),
        check(
            &[("x.wasm", &fixture("bad_schema"))],
            Some("plugins = [\"x.wasm\"]\n[plugin.x]\nenv = { BAD = \"long-description\" }\n"),
        ),
        check(
            &[("fs.wasm", &fixture("fs"))],
            Some("plugins = [\"fs.wasm\"]\n[plugin.fs]\nexclude_tools = [\"wirte_file\"]\n"),
        ),
        check(&[("a.wasm", &echo), ("other/a.wasm", &echo)], Some("plugins = [\"a.wasm\", \"other/a.wasm\"]\n")),
        check(&[("x.wasm", &echo), ("y.wasm", &echo)], Some("plugins = [\".\"]\n[plugin.y]\nprefix = \"x.\"\n")),
        check(
            &[("fs.wasm", &fixture("fs")), ("squatter.wasm", &fixture("squatter"))],
            Some("plugins = [\".\"]\n[plugin.squatter]\nenv = { SQUAT_TEMPLATE = \"file:///{path}\" }\n"),
        ),
        check(
            &[("fs.wasm", &fixture("fs")), ("x.wasm", &fixture("squatter")), ("y.wasm", &fixture("squatter"))],
            Some(
                "plugins = [\".\"]\n[plugin.x]\nenv = { SQUAT_TEMPLATE = \"{+uri}\" }\n\
                 [plugin.y]\nenv = { SQUAT_TEMPLATE = \"y://{x}\" }\n",
            ),
        ),
        check(&[("x.wasm", &echo)], Some("plugins = [\"x.wasm\"]\n[plugin.x]\nowns = [\"x://{id}\"]\n")),
        check(&[], Some("plugins = [\"a\"]\n\n[limits]\ntimeout_ms = 5\nmemroy_mib = 3\n")),
        check(&[], Some("[plugin.web]\nnetwork = [\n  \"https://ok.example\",\n  \"api.example.com\",\n]\n")),
        check(&[("x.wasm", &echo)], Some("plugins = [\"x.wasm\"]\n[limits]\nmax_plugin_mib = 0\n")),
        check(
            &[("big.wasm", &bytes_file(scratch.path(), "big", &vec![0; 3 << 20]))],
            Some("plugins = [\"big.wasm\"]\n[limits]\nmax_plugin_mib = 2\n"),
        ),
        bounded_compile_message(),
    ]
}

/// A plugin that mcpbox has not compiled before, with a compile time limit it cannot meet.
fn bounded_compile_message() -> String {
    let cache = temp_dir();
    let output = mcpbox("check")
        .arg(fixture("fs"))
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--compile-timeout")
        .arg("0.01")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What mcpbox says when it cannot start as asked (and the one warning it starts with).
fn startup_messages() -> Vec<String> {
    let dir = temp_dir();
    std::fs::create_dir_all(dir.path().join("plugins")).unwrap();
    std::fs::write(dir.path().join("a-file"), "").unwrap();
    std::fs::write(
        dir.path().join("mcpbox.toml"),
        "[plugin.fs]\nenv_from_host = [\"TZ\"]\n[[plugin.fs.dirs]]\npath = \"missing\"\n",
    )
    .unwrap();
    let run = |args: &[&str], cache: Option<&Path>| {
        let mut command = mcpbox("serve");
        command.args(args).current_dir(dir.path()).env_remove("TZ").stdin(std::process::Stdio::null());
        if let Some(cache) = cache {
            command.env("MCPBOX_CACHE_DIR", cache);
        }
        String::from_utf8_lossy(&command.output().unwrap().stderr).into_owned()
    };
    vec![
        run(&["--timeout", "1e20"], None),
        run(&["--config", "mcpbox.toml"], None),
        run(&["--http", "plugins"], None),
        run(&["plugins"], Some(&dir.path().join("a-file/cache"))),
    ]
}

/// Sends `tools/call` without waiting for the answer; returns its id.
fn start_call(server: &mut Server, name: &str, arguments: Value) -> i64 {
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": name, "arguments": arguments } }));
    id
}

fn answer(server: &mut Server, id: i64) -> String {
    let response = server.read_until(|m| m["id"] == id);
    text(&response["result"])
}

/// A server of the chaos fixture as the plugin `x`, under `config` (its `[plugin.x]` section).
fn chaos_as_x(section: &str) -> (tempfile::TempDir, Server) {
    let dir = temp_dir();
    std::fs::copy(fixture("chaos"), dir.path().join("x.wasm")).unwrap();
    std::fs::create_dir_all(dir.path().join("granted")).unwrap();
    let config = format!("plugins = [\"x.wasm\"]\n[[roots]]\npath = \"granted\"\n[plugin.x]\n{section}\n");
    std::fs::write(dir.path().join("mcpbox.toml"), config).unwrap();
    let mut server = Server::start(&["--config".as_ref(), dir.path().join("mcpbox.toml").as_os_str()]);
    server.initialize("2025-06-18", json!({}));
    (dir, server)
}

/// A slot held past the default 30 s deadline, a second call queued for it, and a third that
/// finds no slot free within its own 30 s.
fn concurrency_messages() -> Vec<String> {
    let (_dir, mut server) = chaos_as_x("max_concurrency = 1");
    // Spaced out, so that each has its place in the queue before the next comes: the second
    // takes the slot when the first times out, and the third's 30 s run out while it waits.
    let holding = start_call(&mut server, "x.sleep", json!({ "ms": 120_000 }));
    std::thread::sleep(Duration::from_millis(300));
    let queued = start_call(&mut server, "x.sleep", json!({ "ms": 120_000 }));
    std::thread::sleep(Duration::from_millis(300));
    let refused = start_call(&mut server, "x.echo", json!({ "value": 1 }));
    // All three answers: on a loaded machine the second may be the one left without a slot
    // (and the third then runs); either way one call times out and one finds no slot.
    [holding, refused, queued].into_iter().map(|id| answer(&mut server, id)).collect()
}

/// What the client sees when calls of the plugin `x` (the chaos fixture) fail.
fn call_messages() -> Vec<String> {
    let (_dir, mut server) = chaos_as_x("max_output_mib = 4");
    let mut messages = Vec::new();
    for (tool, arguments) in [
        ("x.alloc_forever", json!({})),
        ("x.log_flood", json!({ "bytes": 100_000 })),
        ("x.recurse", json!({ "depth": 100_000_000 })),
        ("x.panic", json!({ "message": "boom" })),
        ("x.read_path", json!({ "path": "/roots/granted/../secret.txt" })),
        ("x.echo", json!({})),
    ] {
        messages.push(text(&call_tool(&mut server, tool, arguments)));
    }
    // The `liar` fixture as `x`: structured content that breaks its output schema.
    let dir = temp_dir();
    std::fs::copy(fixture("liar"), dir.path().join("x.wasm")).unwrap();
    let mut liar = Server::start(&[dir.path().join("x.wasm")]);
    liar.initialize("2025-06-18", json!({}));
    messages.push(text(&call_tool(&mut liar, "x.count", json!({ "kind": "wrong" }))));
    messages
}

/// What the client sees when the `net` fixture's requests are refused, and the warnings beside.
fn network_messages() -> Vec<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}]\n[plugin.net]\nnetwork = [\"https://api.example.com\", \"http://localhost:{port}\"]\n",
        fixture("net")
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let mut messages = Vec::new();
    for url in ["https://example.com/".to_owned(), format!("http://localhost:{port}/")] {
        messages.push(text(&call_tool(&mut server, "net.fetch", json!({ "url": url }))));
    }
    for notification in server.take_notifications("notifications/message") {
        messages.push(notification["params"]["data"].as_str().unwrap_or_default().to_owned());
    }
    messages
}

#[test]
fn every_message_the_troubleshooting_page_quotes_is_what_mcpbox_prints() {
    let doc = std::fs::read_to_string(repo_root().join("docs/troubleshooting.md")).unwrap();
    let produced: Vec<String> = std::thread::scope(|s| {
        let scenarios = [startup_messages, loading_messages, concurrency_messages, call_messages, network_messages]
            .map(|f| s.spawn(f));
        scenarios.into_iter().flat_map(|scenario| scenario.join().unwrap()).collect()
    });
    let everything = produced.join("\n");
    let mut missing = Vec::new();
    for (line, message) in quoted_messages(&doc) {
        if ELSEWHERE.iter().any(|(quoted, _)| *quoted == message) {
            continue;
        }
        if !matches_output(&message, &everything) {
            missing.push(format!("docs/troubleshooting.md:{line}: `{message}`"));
        }
    }
    assert!(
        missing.is_empty(),
        "quoted messages mcpbox does not print:\n{}\n\nwhat it printed:\n{everything}",
        missing.join("\n")
    );
    for (quoted, test) in ELSEWHERE {
        assert!(doc.contains(quoted), "`{quoted}` is no longer quoted; drop it from ELSEWHERE ({test})");
    }
}
