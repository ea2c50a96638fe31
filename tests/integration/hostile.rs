//! The hostile-plugin suite: each test runs a misbehaving component through the real binary and
//! checks that the host stays up, the call gets an error naming the plugin and what stopped it,
//! another plugin still answers, and nothing outside the grants is touched. Network cases are
//! in `network.rs`.

use serde_json::{Value, json};

use crate::common::*;

fn assert_error(result: &Value, needles: &[&str]) {
    assert_eq!(result["isError"], true, "{result}");
    let message = text(result);
    for needle in needles {
        assert!(message.contains(needle), "`{needle}` not in: {message}");
    }
}

#[test]
fn unreachable_is_a_crash_naming_the_plugin() {
    let mut server = chaos(&[]);
    let result = call_tool(&mut server, "chaos.unreachable", json!({}));
    assert_error(&result, &["plugin `chaos` crashed", "unreachable"]);
    assert_still_serving(&mut server);
}

#[test]
fn memory_grow_to_the_maximum_at_once_is_refused() {
    // The plugin's own limit (64 MiB) is below the global one (256 MiB), which sizes the
    // instance pool's memory slots: the per-call limiter, not the pool, must refuse.
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.chaos]\nmemory_mib = 64\n",
        fixture("chaos"),
        fixture("conformance")
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    // 65,536 pages is the whole 4 GiB address space of a 32-bit memory; 1,024 pages is 64 MiB
    // on top of what the guest has, over its limit too.
    for pages in [65_536, 1_024] {
        let result = call_tool(&mut server, "chaos.memory_grow", json!({ "pages": pages }));
        assert!(text(&result).starts_with("refused at"), "memory.grow({pages}) was not refused: {result}");
    }
    let fits = call_tool(&mut server, "chaos.memory_grow", json!({ "pages": 16 }));
    assert_eq!(text(&fits), "grown");
    assert_still_serving(&mut server);
}

#[test]
fn a_one_gib_string_and_millions_of_blocks_stop_at_a_limit() {
    let mut server = chaos(&["--memory", "2048", "--max-output", "16"]);
    let huge = call_tool(&mut server, "chaos.big_output", json!({ "bytes": 1u64 << 30 }));
    assert_error(&huge, &["plugin `chaos`"]);
    let message = text(&huge);
    // Whichever bound is met first: wasmtime's cap on what one call may copy out of the
    // guest, the output limit, or the memory limit.
    assert!(
        ["too much data is being copied", "output limit of 16 MiB", "memory limit"].iter().any(|m| message.contains(m)),
        "{message}"
    );
    let blocks = call_tool(&mut server, "chaos.many_blocks", json!({ "bytes": 3_000_000 }));
    assert_error(&blocks, &["plugin `chaos`"]);
    assert_still_serving(&mut server);
}

#[test]
fn log_bytes_count_against_the_output_limit() {
    let mut server = chaos(&["--max-output", "1"]);
    // 25,000 progress reports of 64 bytes each: 1.6 MB of notifications, over 1 MiB.
    let result = call_tool(&mut server, "chaos.log_flood", json!({ "bytes": 25_000 }));
    assert_error(&result, &["plugin `chaos` sent", "over its output limit of 1 MiB"]);
    let fits = call_tool(&mut server, "chaos.log_flood", json!({ "bytes": 1_000 }));
    assert_eq!(text(&fits), "flooded");
    assert_still_serving(&mut server);
}

#[test]
fn the_host_environment_stays_out() {
    let mut server = Server::start_with_env(
        &[fixture("chaos").into_os_string(), fixture("conformance").into_os_string()],
        &[("MCPBOX_TEST_SECRET", "hunter2")],
    );
    server.initialize("2025-06-18", json!({}));
    let result = call_tool(&mut server, "chaos.environment", json!({}));
    assert_eq!(result["structuredContent"], json!({ "env": [], "args": [] }));
    let proc_environ = call_tool(&mut server, "chaos.read_path", json!({ "path": "/proc/self/environ" }));
    assert_eq!(proc_environ["isError"], true);
    assert!(!proc_environ.to_string().contains("hunter2"));
    assert_still_serving(&mut server);
}

/// A read-only and a read-write grant side by side, a secret beside them.
struct Grants {
    outer: tempfile::TempDir,
}

impl Grants {
    fn new() -> Grants {
        let outer = temp_dir();
        std::fs::create_dir_all(outer.path().join("ro")).unwrap();
        std::fs::create_dir_all(outer.path().join("rw/sub")).unwrap();
        std::fs::write(outer.path().join("ro/inside.txt"), "inside").unwrap();
        std::fs::write(outer.path().join("rw/mine.txt"), "mine").unwrap();
        std::fs::write(outer.path().join("secret.txt"), "TOP SECRET").unwrap();
        Grants { outer }
    }

    fn path(&self, relative: &str) -> std::path::PathBuf {
        self.outer.path().join(relative)
    }

    fn serve(&self) -> Server {
        chaos(&["--root", self.path("ro").to_str().unwrap(), "--root-rw", self.path("rw").to_str().unwrap()])
    }

    /// Everything under the outer directory, for "nothing else was written".
    fn listing(&self) -> Vec<String> {
        fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(base).unwrap().display().to_string());
                if path.is_dir() && !path.is_symlink() {
                    walk(&path, base, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.outer.path(), self.outer.path(), &mut out);
        out.sort();
        out
    }
}

#[test]
fn symlinks_made_inside_a_writable_grant_lead_nowhere() {
    let grants = Grants::new();
    let mut server = grants.serve();
    let secret = grants.path("secret.txt").display().to_string();
    // The deep link climbs to / and back down to the secret (never to a system file: if the
    // protection failed, this test must not damage the machine).
    let deep = format!("{}{secret}", "../".repeat(12));
    for (target, link) in [
        (secret.as_str(), "/roots/rw/abs-link"),
        ("../secret.txt", "/roots/rw/rel-link"),
        (deep.as_str(), "/roots/rw/deep-link"),
        ("../ro/inside.txt", "/roots/rw/sideways-link"),
        ("/roots/ro/inside.txt", "/roots/rw/guest-abs-link"),
    ] {
        let made = call_tool(&mut server, "chaos.symlink", json!({ "from": target, "to": link }));
        // Whether or not the link may be created, nothing is read through it...
        let read = call_tool(&mut server, "chaos.read_path", json!({ "path": link }));
        assert_eq!(read["isError"], true, "read through {link} -> {target} ({made}): {read}");
        assert!(!read.to_string().contains("TOP SECRET") && !read.to_string().contains("inside"), "{read}");
        // ...and nothing is written through it (a write may create a plain file in its place
        // if the link was refused; that is inside the grant).
        let _ = call_tool(&mut server, "chaos.write_path", json!({ "path": link, "content": "pwned" }));
        assert_eq!(std::fs::read_to_string(grants.path("secret.txt")).unwrap(), "TOP SECRET", "via {link}");
        assert_eq!(std::fs::read_to_string(grants.path("ro/inside.txt")).unwrap(), "inside", "via {link}");
    }
    assert_still_serving(&mut server);
}

#[test]
fn hard_links_cannot_reach_outside_or_into_a_read_only_grant() {
    let grants = Grants::new();
    let mut server = grants.serve();
    // A link to the read-only file from the writable grant would make it writable.
    let cross =
        call_tool(&mut server, "chaos.hard_link", json!({ "from": "/roots/ro/inside.txt", "to": "/roots/rw/hl" }));
    let _ = call_tool(&mut server, "chaos.write_path", json!({ "path": "/roots/rw/hl", "content": "pwned" }));
    assert_eq!(std::fs::read_to_string(grants.path("ro/inside.txt")).unwrap(), "inside", "{cross}");
    for from in ["/roots/rw/../secret.txt", "/roots/ro/../secret.txt", "/etc/passwd"] {
        let result = call_tool(&mut server, "chaos.hard_link", json!({ "from": from, "to": "/roots/rw/stolen" }));
        assert_eq!(result["isError"], true, "hard link of {from}: {result}");
    }
    assert!(!grants.path("rw/stolen").exists());
    assert_eq!(std::fs::read_to_string(grants.path("secret.txt")).unwrap(), "TOP SECRET");
    assert_still_serving(&mut server);
}

#[test]
fn renames_stay_inside_their_grant_and_grants_cannot_be_renamed() {
    let grants = Grants::new();
    let before = grants.listing();
    let mut server = grants.serve();
    for (from, to) in [
        ("/roots/rw", "/roots/rw2"),
        ("/roots/ro", "/roots/rw/ro"),
        ("/roots/rw/sub", "/roots/rw/../sub"),
        ("/roots/rw/mine.txt", "/roots/ro/mine.txt"),
        ("/roots/rw/mine.txt", "/roots/rw/../../mine.txt"),
        ("/roots/ro/inside.txt", "/roots/rw/inside.txt"),
    ] {
        let result = call_tool(&mut server, "chaos.rename", json!({ "from": from, "to": to }));
        assert_eq!(result["isError"], true, "rename {from} -> {to}: {result}");
    }
    assert_eq!(grants.listing(), before, "a rename changed the host's files");
    // Inside one writable grant, renames work.
    let ok =
        call_tool(&mut server, "chaos.rename", json!({ "from": "/roots/rw/mine.txt", "to": "/roots/rw/sub/m.txt" }));
    assert_eq!(ok["isError"], false, "{ok}");
    assert!(grants.path("rw/sub/m.txt").exists());
    assert_still_serving(&mut server);
}

#[test]
fn absolute_paths_and_proc_are_out_of_reach() {
    let grants = Grants::new();
    let mut server = grants.serve();
    let secret = grants.path("secret.txt").display().to_string();
    for path in [secret.as_str(), "/proc/self/maps", "/proc/1/cmdline", "/etc/hostname", "/", "/roots/.."] {
        let read = call_tool(&mut server, "chaos.read_path", json!({ "path": path }));
        assert_eq!(read["isError"], true, "read {path}: {read}");
        assert!(!read.to_string().contains("TOP SECRET"));
    }
    for dir in ["/", "/proc", "/roots/.."] {
        let listed = call_tool(&mut server, "chaos.list_dir", json!({ "path": dir }));
        assert!(listed["isError"] == true || !text(&listed).contains("secret"), "list {dir}: {listed}");
    }
    let write = call_tool(&mut server, "chaos.write_path", json!({ "path": "/tmp/escaped", "content": "x" }));
    assert_eq!(write["isError"], true, "{write}");
    assert_still_serving(&mut server);
}

#[test]
fn a_thousand_concurrent_calls_to_a_slow_plugin() {
    let mut server = chaos(&[]);
    // Each sleeps long enough to outlast the slowest machine's start of a thousand instances
    // and one more call (3 s did not, beside two busy cores): the bystander must come first
    // because the sleepers take nothing from it, not because the machine was quick.
    let ids: Vec<i64> = (0..1000)
        .map(|_| {
            let id = server.fresh_id();
            server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "chaos.sleep", "arguments": { "ms": 20000 } } }));
            id
        })
        .collect();
    // The bystander answers while all thousand are in flight: before the first of them ends.
    let bystander = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": bystander, "method": "tools/call",
        "params": { "name": "conformance.test_simple_text" } }));
    let first = server.read_until(|m| m["id"] == bystander || ids.contains(&m["id"].as_i64().unwrap_or(-1)));
    assert_eq!(first["id"], bystander, "a sleeper finished before the bystander was answered: {first}");
    for id in ids {
        let response = server.read_until(|m| m["id"] == id);
        assert_eq!(text(&response["result"]), "slept", "{response}");
    }
    assert_still_serving(&mut server);
}

#[test]
fn a_plugin_importing_an_unknown_interface_is_refused_unless_stubbed() {
    let mut server = Server::start(&[fixture("unknown_import"), fixture("conformance")]);
    server.initialize("2025-06-18", json!({}));
    assert!(server.wait_for_log("test:unknown-import/shell", LOGGED), "{}", server.stderr());
    assert!(server.stderr().contains("stub_ungranted = true"), "the error says how to link it anyway");
    let tools = server.result("tools/list", json!({}));
    assert!(!tools.to_string().contains("unknown_import."), "{tools}");
    assert_still_serving(&mut server);

    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.unknown_import]\nstub_ungranted = true\n",
        fixture("unknown_import"),
        fixture("conformance")
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    assert_eq!(text(&call_tool(&mut server, "unknown_import.ping", json!({}))), "pong");
    let shell = call_tool(&mut server, "unknown_import.shell", json!({}));
    assert_error(&shell, &["plugin `unknown_import` crashed", "test:unknown-import/shell#run", "does not offer"]);
    assert_still_serving(&mut server);
}

#[test]
fn no_request_can_change_a_policy() {
    // There is no MCP method that touches grants: unknown methods are refused, and tools of
    // one plugin see only their own grants, whatever the arguments say.
    let grants = Grants::new();
    let mut server = grants.serve();
    for method in ["policy/set", "mcpbox/grant", "roots/add"] {
        let response = server.call(method, json!({ "path": "/", "writable": true }));
        assert_eq!(response["error"]["code"], -32601, "{method}: {response}");
    }
    let write = call_tool(&mut server, "chaos.write_path", json!({ "path": "/roots/ro/x", "content": "x" }));
    assert_eq!(write["isError"], true);
    assert!(!grants.path("ro/x").exists());
}
