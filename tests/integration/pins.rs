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
    assert!(server.wait_for_log(diff, LOGGED), "{}", server.stderr());

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

    // The same definitions reloaded change nothing: no notification. (The catalog swapped in
    // says so in the log; a request after it is answered after any notification of it.)
    let serving = |server: &Server| server.stderr().matches("now serving").count();
    let swaps = serving(&server);
    reworded_echo(&plugins.path().join("echo.wasm"));
    let end = std::time::Instant::now() + WAIT;
    while serving(&server) == swaps {
        assert!(std::time::Instant::now() < end, "the reload was not served:\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(names(&tools(&mut server)), ["echo.echo"]);
    assert!(server.take_notifications("notifications/tools/list_changed").is_empty());

    // A plugin never pinned: `--locked` refuses it, by name. The server goes first: watching
    // the folder, it would load the new plugin and pin it on first sight, before or after the
    // check, as the machine's load decides (it did once beside two busy cores).
    drop(server);
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

/// The pins file and the compile cache are never where a plugin may write (a plugin could
/// delete or rewrite the pins, or plant machine code in the cache): the start is refused,
/// naming the file and the grant, whether the pins are beside the config or in the state
/// directory.
#[test]
fn the_pins_file_and_the_compile_cache_are_never_where_a_plugin_writes() {
    let dir = temp_dir();
    let serve = |args: &[&std::ffi::OsStr], state: Option<&Path>| {
        let mut command = mcpbox("serve");
        command.args(args).args(["--http", "127.0.0.1:0"]);
        if let Some(state) = state {
            command.env("MCPBOX_STATE_DIR", state);
        }
        refused_start(command)
    };
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}]\n[[roots]]\npath = {:?}\nwritable = true\n",
        fixture("echo"),
        dir.path()
    ));
    std::fs::copy(&config.path, dir.path().join("mcpbox.toml")).unwrap();
    let in_grant = dir.path().join("mcpbox.toml");
    let said = serve(&["--config".as_ref(), in_grant.as_os_str()], None);
    assert!(said.contains("the pins file") && said.contains("lets plugins write"), "{said}");
    let echo = fixture("echo");
    let said =
        serve(&[echo.as_os_str(), "--root-rw".as_ref(), dir.path().as_os_str()], Some(&dir.path().join("state")));
    let state = dir.path().join("state").display().to_string();
    assert!(said.contains("the pins file") && said.contains(&state) && said.contains("lets plugins write"), "{said}");
    let cache = dir.path().join("cache");
    let said = serve(
        &[echo.as_os_str(), "--root-rw".as_ref(), dir.path().as_os_str(), "--cache-dir".as_ref(), cache.as_os_str()],
        None,
    );
    assert!(said.contains("the compile cache") && said.contains("lets plugins write"), "{said}");
}

/// A pins file that existed and is gone is never "no pins" (which would pin every changed
/// definition anew on first use): everything pinned is withheld, and the log says why, until
/// `mcpbox accept` writes it again.
#[test]
fn a_removed_pins_file_withholds_everything_until_accepted() {
    let plugins = temp_dir();
    install(&fixture("echo"), &plugins.path().join("echo.wasm"));
    let config = ConfigFile::new(&format!("plugins = [{:?}]\n", plugins.path()));
    let pins = config.path.with_file_name("mcpbox.pins.json");
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    assert_eq!(names(&tools(&mut server)), ["echo.echo"]);
    // The catalog settled against the pins again says so in the log, whatever it decided.
    let serving = |server: &Server| server.stderr().matches("now serving").count();
    let swaps = serving(&server);
    std::fs::remove_file(&pins).unwrap();
    let end = std::time::Instant::now() + WAIT;
    while serving(&server) == swaps {
        assert!(std::time::Instant::now() < end, "the removal was not noticed:\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(tools(&mut server).is_empty(), "served without its pins");
    assert!(server.take_notifications("notifications/tools/list_changed").len() == 1, "the client is told");
    assert!(server.wait_for_log("the pins file was removed", LOGGED), "{}", server.stderr());
    // A changed definition meanwhile is not pinned on "first use" either.
    reworded_echo(&plugins.path().join("echo.wasm"));
    assert!(server.wait_for_log("plugin reloaded", WAIT), "{}", server.stderr());
    assert!(tools(&mut server).is_empty() && !pins.exists(), "pinned anew without accept");
    let accepted = mcpbox("accept").arg("echo").args(config.args()).output().unwrap();
    assert!(accepted.status.success(), "{}", String::from_utf8_lossy(&accepted.stderr));
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(tools(&mut server)[0]["description"], "Returns its TEXT");
}
