//! Pinned definitions (docs/approvals.md, "Pinned definitions"): what a plugin's tools say is
//! pinned on first use; a plugin replaced by one whose description changed keeps serving only
//! what is unchanged, the change is withheld, shown by `mcpbox check` and served once `mcpbox
//! accept` pins it; `--locked` refuses a plugin without pins. The changed plugin is the `echo`
//! fixture with the description in its data edited, as an update would ship it.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// `echo` with its tool's description changed (same length: the component stays valid).
fn reworded_echo(to: &Path) {
    let bytes = std::fs::read(fixture("echo")).unwrap();
    let (from, into) = (b"Returns its text".as_slice(), b"Returns its TEXT".as_slice());
    let at = bytes.windows(from.len()).position(|w| w == from).expect("the description in the component");
    let mut edited = bytes;
    edited[at..at + from.len()].copy_from_slice(into);
    let staging = to.with_extension("partial");
    std::fs::write(&staging, edited).unwrap();
    std::fs::rename(&staging, to).unwrap();
}

fn install(from: &Path, to: &Path) {
    let staging = to.with_extension("partial");
    std::fs::copy(from, &staging).unwrap();
    std::fs::rename(&staging, to).unwrap();
}

fn tools(server: &mut Server) -> Vec<Value> {
    server.result("tools/list", json!({}))["tools"].as_array().unwrap().clone()
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[test]
fn a_changed_description_is_withheld_until_the_operator_accepts_it() {
    let plugins = temp_dir();
    install(&fixture("echo"), &plugins.path().join("echo.wasm"));
    let config = ConfigFile::new(&format!("plugins = [{:?}]\n", plugins.path()));
    let pins = config.path.with_file_name("mcpbox.pins.json");
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let listed = tools(&mut server);
    assert_eq!(names(&listed), ["echo.echo"]);
    // Annotations the host vouches for: no writable directory, no network.
    assert_eq!(listed[0]["annotations"], json!({ "readOnlyHint": true, "openWorldHint": false }), "{listed:?}");
    // Pinned on first use, beside the config.
    let pinned: Value = serde_json::from_str(&std::fs::read_to_string(&pins).unwrap()).unwrap();
    assert!(pinned["plugins"]["echo"]["tools"]["echo"]["digest"].as_str().unwrap().starts_with("sha256:"), "{pinned}");

    // The rug pull: the same plugin, its description changed. Withheld, and the client told.
    reworded_echo(&plugins.path().join("echo.wasm"));
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert!(tools(&mut server).is_empty());
    let refused = server.call("tools/call", json!({ "name": "echo.echo", "arguments": { "text": "x" } }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(server.wait_for_log("withheld until accepted (`mcpbox accept echo`)", WAIT), "{}", server.stderr());
    let diff = "  - description: \"Returns its text\"\n  + description: \"Returns its TEXT\"";
    assert!(server.stderr().contains(diff), "{}", server.stderr());

    // `check` shows the diff and fails until it is accepted.
    let checked = mcpbox("check").args(config.args()).output().unwrap();
    let out = String::from_utf8_lossy(&checked.stdout);
    assert!(!checked.status.success() && out.contains(diff) && out.contains("mcpbox accept echo"), "{out}");

    // `accept` pins it; the running server serves it at once.
    let accepted = mcpbox("accept").arg("echo").args(config.args()).output().unwrap();
    let out = String::from_utf8_lossy(&accepted.stdout);
    assert!(
        accepted.status.success() && out.contains("accepted tool `echo` of plugin `echo`") && out.contains(diff),
        "{out}"
    );
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    let listed = tools(&mut server);
    assert_eq!(listed[0]["description"], "Returns its TEXT", "{listed:?}");
    assert!(mcpbox("check").args(config.args()).output().unwrap().status.success());

    // The same definitions reloaded change nothing: no notification.
    reworded_echo(&plugins.path().join("echo.wasm"));
    assert!(server.wait_for_log("plugin reloaded", WAIT), "{}", server.stderr());
    std::thread::sleep(Duration::from_millis(500));
    assert!(server.read(Duration::from_millis(300)).is_none());
    assert!(server.take_notifications("notifications/tools/list_changed").is_empty());
    assert_eq!(names(&tools(&mut server)), ["echo.echo"]);

    // A plugin never pinned: `--locked` refuses it, by name.
    install(&fixture("hello"), &plugins.path().join("hello.wasm"));
    let locked = mcpbox("check").args(config.args()).arg("--locked").output().unwrap();
    let out = String::from_utf8_lossy(&locked.stdout);
    assert!(!locked.status.success() && out.contains("plugin `hello` has no pinned definitions"), "{out}");
}

#[test]
fn a_development_folder_serves_changes_at_once() {
    let plugins = temp_dir();
    install(&fixture("echo"), &plugins.path().join("echo.wasm"));
    let config = ConfigFile::new(&format!("plugins = [{:?}]\n[plugin.echo]\npin = false\n", plugins.path()));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    reworded_echo(&plugins.path().join("echo.wasm"));
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(tools(&mut server)[0]["description"], "Returns its TEXT");
    assert!(!config.path.with_file_name("mcpbox.pins.json").exists());
}
