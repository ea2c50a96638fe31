//! Loading plugin folders: prefixes, collisions, bad files, `inspect`, config errors.

use std::time::Duration;

use serde_json::json;

use crate::common::*;

#[test]
fn a_bad_plugin_is_reported_by_name_and_the_others_load() {
    let dir = temp_dir();
    std::fs::copy(fixture("fs"), dir.path().join("fs.wasm")).unwrap();
    std::fs::write(dir.path().join("garbage.wasm"), b"definitely not wasm").unwrap();
    // A minimal core module: magic and version only.
    std::fs::write(dir.path().join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let mut server = Server::start(&[dir.path()]);
    server.initialize("2025-06-18", json!({}));
    let tools = server.result("tools/list", json!({}));
    assert!(tools["tools"].as_array().unwrap().iter().all(|t| t["name"].as_str().unwrap().starts_with("fs.")));
    assert!(!tools["tools"].as_array().unwrap().is_empty());
    let log = server.stderr();
    assert!(log.contains("garbage.wasm") && log.contains("not a valid WebAssembly component"), "{log}");
    assert!(log.contains("core.wasm") && log.contains("core WebAssembly module, not a component"), "{log}");
}

#[test]
fn plugins_with_one_name_are_served_by_neither_and_both_are_named() {
    let a = temp_dir();
    let b = temp_dir();
    std::fs::copy(fixture("fs"), a.path().join("fs.wasm")).unwrap();
    std::fs::copy(fixture("fs"), b.path().join("fs.wasm")).unwrap();
    std::fs::copy(fixture("hello"), b.path().join("hello.wasm")).unwrap();
    let mut server = Server::start(&[a.path(), b.path()]);
    server.initialize("2025-06-18", json!({}));
    let names: Vec<String> = server.result("tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"hello.greet".to_owned()));
    // Neither wins by coming first in the command line (or by sorting first in a folder).
    assert!(!names.iter().any(|n| n.starts_with("fs.")), "{names:?}");
    let log = server.stderr();
    let first = a.path().join("fs.wasm").display().to_string();
    let second = b.path().join("fs.wasm").display().to_string();
    assert!(log.contains("same name") && log.contains(&first) && log.contains(&second), "{log}");
}

/// A plugin that lists one tool name twice is refused by name, and the others serve: no name is
/// ever listed twice. (Round four found it served with both: the tests of name collisions
/// only ever had two plugins of one name, refused as plugins before any tool name was
/// compared, so nothing had one plugin list a name twice.)
#[test]
fn a_plugin_listing_one_name_twice_is_refused_and_no_name_is_listed_twice() {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n\n[plugin.bad_schema]\nenv = {{ BAD = \"tool-twice\" }}\n",
        fixture("bad_schema"),
        fixture("hello")
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let names: Vec<String> = server.result("tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "a name listed twice: {names:?}");
    assert!(names.contains(&"hello.greet".to_owned()) && !names.iter().any(|n| n.starts_with("bad")), "{names:?}");
    assert!(server.wait_for_log("it lists the tool `echo` twice", LOGGED), "{}", server.stderr());
}

#[test]
fn a_config_file_sets_prefixes_and_limits() {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}]\n\n[limits]\ntimeout_ms = 500\n\n[plugin.chaos]\nprefix = \"\"\n",
        fixture("chaos").display().to_string()
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let echo = server.result("tools/call", json!({ "name": "echo", "arguments": { "value": 5 } }));
    assert_eq!(text(&echo), "5");
    let slow = server.result("tools/call", json!({ "name": "sleep", "arguments": { "ms": 5000 } }));
    assert_eq!(slow["isError"], true);
    assert!(text(&slow).contains("time limit of 500 ms"), "{slow}");
}

#[test]
fn a_bad_config_names_file_line_and_key() {
    let config = ConfigFile::new("plugins = []\n\n[limits]\ntimeout_ms = 5\nmemroy_mib = 3\n");
    let mut server = config.serve();
    let status = server.wait_exit(Duration::from_secs(20)).expect("mcpbox should refuse the config");
    assert!(!status.success());
    let log = server.stderr();
    assert!(log.contains(&format!("{}:5:1", config.path.display())) && log.contains("memroy_mib"), "{log}");
}

#[test]
fn inspect_shows_exports_imports_and_descriptors() {
    let output = mcpbox("inspect").args(["--json"]).arg(fixture("conformance")).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let description: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(description["exports"].as_array().unwrap().contains(&json!("mcpbox:plugin/tools@0.1.4")));
    assert!(description["imports"].as_array().unwrap().contains(&json!("mcpbox:plugin/host@0.1.4")));
    assert!(description["tools"].as_array().unwrap().iter().any(|t| t["name"] == "conformance.test_simple_text"));
    assert_eq!(description["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");
    assert!(
        description["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "conformance.test_prompt_with_arguments")
    );
    assert!(description["resources"].as_array().unwrap().iter().any(|r| r["uri"] == "test://static-text"));

    let text = mcpbox("inspect").arg(fixture("tools_only")).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("tools_only.ping: Answers pong"), "{text}");
    assert!(!text.contains("mcpbox:plugin/resources"), "{text}");
}

#[test]
fn check_prints_a_table_and_fails_on_any_problem() {
    let dir = temp_dir();
    std::fs::copy(fixture("fs"), dir.path().join("fs.wasm")).unwrap();
    let run = |args: &[&std::ffi::OsStr]| mcpbox("check").args(args).output().unwrap();
    let good = run(&[dir.path().as_os_str(), "--root".as_ref(), dir.path().as_os_str()]);
    let table = String::from_utf8_lossy(&good.stdout);
    assert!(good.status.success(), "{table}{}", String::from_utf8_lossy(&good.stderr));
    assert!(table.starts_with("plugin"), "{table}");
    let fs_row = table.lines().find(|l| l.starts_with("fs ")).unwrap_or_else(|| panic!("{table}"));
    assert!(fs_row.contains(" 7 ") && fs_row.contains("yes, 1 template ") && fs_row.contains("(ro)"), "{fs_row}");

    std::fs::write(dir.path().join("broken.wasm"), b"nope").unwrap();
    let bad = run(&[dir.path().as_os_str()]);
    let table = String::from_utf8_lossy(&bad.stdout);
    assert!(!bad.status.success());
    let broken = table.lines().find(|l| l.starts_with("broken ")).unwrap_or_else(|| panic!("{table}"));
    assert!(broken.contains("not a valid WebAssembly component"), "{broken}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("1 of 2 plugins have problems"));

    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "plugins = [\"fs.wasm\"]\nverbose = true\n").unwrap();
    let bad_config = run(&["--config".as_ref(), config.as_os_str()]);
    assert!(!bad_config.status.success());
    assert!(String::from_utf8_lossy(&bad_config.stderr).contains(&format!("{}:2:1", config.display())));

    // A good config with per-plugin grants shows them; the same plugin without its grant is a
    // problem that names the interface.
    std::fs::remove_file(dir.path().join("broken.wasm")).unwrap();
    std::fs::copy(fixture("net"), dir.path().join("net.wasm")).unwrap();
    std::fs::write(&config, "plugins = [\".\"]\n[plugin.net]\nnetwork = [\"https://example.com\"]\nroots = false\n")
        .unwrap();
    let granted = run(&["--config".as_ref(), config.as_os_str()]);
    let table = String::from_utf8_lossy(&granted.stdout);
    assert!(granted.status.success(), "{table}{}", String::from_utf8_lossy(&granted.stderr));
    let net_row = table.lines().find(|l| l.starts_with("net ")).unwrap_or_else(|| panic!("{table}"));
    assert!(net_row.contains("net https://example.com:443"), "{net_row}");
    std::fs::write(&config, "plugins = [\".\"]\n").unwrap();
    let ungranted = run(&["--config".as_ref(), config.as_os_str()]);
    let table = String::from_utf8_lossy(&ungranted.stdout);
    assert!(!ungranted.status.success());
    let net_row = table.lines().find(|l| l.starts_with("net ")).unwrap_or_else(|| panic!("{table}"));
    assert!(net_row.contains("imports `wasi:http/") && net_row.contains("no network grant"), "{net_row}");
}

#[test]
fn compile_fills_the_cache_ahead_of_time() {
    let dir = temp_dir();
    std::fs::copy(fixture("fs"), dir.path().join("fs.wasm")).unwrap();
    std::fs::copy(fixture("hello"), dir.path().join("hello.wasm")).unwrap();
    let cache = temp_dir();
    let compile = mcpbox("compile").arg(dir.path()).env("MCPBOX_CACHE_DIR", cache.path()).output().unwrap();
    let log = String::from_utf8_lossy(&compile.stderr);
    assert!(compile.status.success(), "{log}");
    assert!(log.contains("compiled 2 of 2 plugins"), "{log}");
    assert!(std::fs::read_dir(cache.path()).unwrap().next().is_some(), "the cache is empty");
    // A file that is not a component fails the command and is named.
    std::fs::write(dir.path().join("junk.wasm"), b"junk").unwrap();
    let failed = mcpbox("compile").arg(dir.path()).env("MCPBOX_CACHE_DIR", cache.path()).output().unwrap();
    let log = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success());
    assert!(log.contains("junk.wasm") && log.contains("not a valid WebAssembly component"), "{log}");
}

#[test]
fn the_config_selects_and_excludes_tools() {
    let fs = fixture("fs").display().to_string();
    let chaos = fixture("chaos").display().to_string();
    let config = ConfigFile::new(&format!(
        "plugins = [{fs:?}, {chaos:?}]\n\n[plugin.fs]\nexclude_tools = [\"write_file\"]\n\n\
         [plugin.chaos]\ntools = [\"echo\", \"granted\"]\n"
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let names: Vec<String> = server.result("tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["chaos.echo", "chaos.granted", "fs.fill", "fs.grow", "fs.list_dir", "fs.read_file", "fs.search", "fs.stat"]
    );
    let excluded =
        server.call("tools/call", json!({ "name": "fs.write_file", "arguments": { "path": "x", "content": "y" } }));
    assert_eq!(excluded["error"]["code"], -32602, "an excluded tool cannot be called: {excluded}");

    // A name the plugin does not offer is an error, not a silent no-op.
    config.rewrite(&format!("plugins = [{fs:?}]\n\n[plugin.fs]\nexclude_tools = [\"write_fille\"]\n"));
    let mut typo = config.serve();
    typo.initialize("2025-06-18", json!({}));
    assert!(typo.wait_for_log("names tool `write_fille`, which plugin `fs`", WAIT), "{}", typo.stderr());
    assert!(typo.result("tools/list", json!({}))["tools"].as_array().unwrap().is_empty());
}

#[test]
fn per_plugin_limits_and_concurrency_slots() {
    let chaos = fixture("chaos").display().to_string();
    let conformance = fixture("conformance").display().to_string();
    let config = ConfigFile::new(&format!(
        "plugins = [{chaos:?}, {conformance:?}]\n\n[plugin.chaos]\ntimeout_ms = 5000\nmemory_mib = 32\n\
         max_output_mib = 1\nmax_concurrency = 2\n"
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let oom = server.result("tools/call", json!({ "name": "chaos.alloc_forever" }));
    assert!(text(&oom).contains("memory limit of 32 MiB"), "{oom}");
    let big = server.result("tools/call", json!({ "name": "chaos.big_output", "arguments": { "bytes": 2_000_000 } }));
    assert!(text(&big).contains("output limit of 1 MiB"), "{big}");

    // Three 1.5 s calls through two slots take two rounds; another plugin is not held up.
    let started = std::time::Instant::now();
    let ids: Vec<i64> = (0..3)
        .map(|_| {
            let id = server.fresh_id();
            server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "chaos.sleep", "arguments": { "ms": 1500 } } }));
            id
        })
        .collect();
    let quick = server.result("tools/call", json!({ "name": "conformance.test_simple_text" }));
    assert_eq!(quick["isError"], false);
    assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());
    for id in ids {
        assert_eq!(text(&server.read_until(|m| m["id"] == id)["result"]), "slept");
    }
    assert!(
        started.elapsed() >= Duration::from_millis(3000),
        "the third call waited for a slot: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_plugin_sees_only_the_environment_the_operator_configured() {
    let chaos = fixture("chaos").display().to_string();
    let hello = fixture("hello").display().to_string();
    let config = ConfigFile::new(&format!(
        "plugins = [{chaos:?}, {hello:?}]\n\n[plugin.chaos]\nenv = {{ GREETING = \"hi\" }}\nenv_from_host = [\"PATH\"]\n"
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let result = server.result("tools/call", json!({ "name": "chaos.environment" }));
    let mut names: Vec<&str> =
        result["structuredContent"]["env"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["GREETING", "PATH"]);

    config.rewrite(&format!("plugins = [{chaos:?}]\n\n[plugin.chaos]\nenv_from_host = [\"MCPBOX_SURELY_UNSET\"]\n"));
    let mut unset = config.serve();
    let status = unset.wait_exit(Duration::from_secs(20)).expect("an unset host variable is a config error");
    assert!(!status.success());
    assert!(unset.stderr().contains("env_from_host names `MCPBOX_SURELY_UNSET`"), "{}", unset.stderr());
}
