//! Tools that call tools (WIT 0.1.4 `host.call-tool`, docs/composition.md): the `composer`
//! fixture uses `fs` and `textstats` through the host and gets none of their grants; only
//! what `[plugin.composer] may_call` lists; cycles, depth and fan-out refused by name; an
//! inner call cancelled with its caller; and a side effect made through another tool runs once
//! when a 2026-07-28 request's round is repeated. (The principal carried into inner calls is
//! in `principals.rs`, with the real OpenID provider.)

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// `composer`, `fs` and `textstats` over `root` (writable when `writable`), the composer
/// granted no directory and allowed to call `may_call`.
fn config(root: &Path, writable: bool, may_call: &str, extra: &str) -> ConfigFile {
    ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}, {:?}]\n[[roots]]\npath = {root:?}\nwritable = {writable}\n\
         [plugin.composer]\nroots = false\nmay_call = {may_call}\n{extra}",
        fixture("composer"),
        fixture("fs"),
        plugin("textstats"),
    ))
}

fn legacy(config: &ConfigFile) -> Server {
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    server
}

#[test]
fn a_composer_uses_other_plugins_tools_with_their_grants_never_its_own() {
    let root = temp_dir();
    std::fs::write(root.path().join("a.txt"), "tide ebb tide").unwrap();
    let audit = temp_dir();
    let audit = audit.path().join("audit.jsonl");
    let config =
        config(root.path(), false, r#"["fs.read_file", "textstats.*"]"#, &format!("[audit]\npath = {audit:?}\n"));
    let mut server = legacy(&config);

    let gathered = call_tool(&mut server, "composer.gather", json!({ "path": "a.txt" }));
    assert_eq!(gathered["isError"], false, "{gathered}");
    let said = &gathered["structuredContent"];
    assert!(said["own"].as_str().unwrap().starts_with("cannot read it itself"), "{said}");
    assert_eq!(said["text"], "tide ebb tide", "{said}");
    assert_eq!(said["words"], 3, "{said}");
    // The audit: the composer's line names each inner call, and holds what its callees did.
    let lines: Vec<Value> =
        std::fs::read_to_string(&audit).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let line = lines.iter().find(|line| line.to_string().contains("composer.gather")).expect("the composer's line");
    assert_eq!(
        line["effects"]["calls"],
        json!([{ "tool": "fs.read_file", "outcome": "ok" }, { "tool": "textstats.stats", "outcome": "ok" }]),
        "{line}"
    );
    assert!(line["effects"]["files"].to_string().contains("a.txt"), "{line}");

    // Only what may_call lists: fs.write_file is served, and refused to the composer by name.
    let refused = call_tool(
        &mut server,
        "composer.call",
        json!({ "tool": "fs.write_file", "arguments": { "path": "b.txt", "content": "x" } }),
    );
    assert_eq!(
        text(&refused),
        "refused: plugin `composer` may not call `fs.write_file`: the operator lists the tools it may call in \
         [plugin.composer] may_call"
    );
    assert!(!root.path().join("b.txt").exists());
    let listed = call_tool(&mut server, "composer.callable", json!({}));
    assert_eq!(text(&listed), "fs.read_file,textstats.sha256,textstats.stats");

    // What it reaches is its callees' reach too, and it is never vouched read-only (it claims
    // to be).
    let tools = server.result("tools/list", json!({}));
    let gather = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "composer.gather").unwrap();
    assert_eq!(gather["annotations"]["readOnlyHint"], false, "{gather}");
    assert_eq!(gather["annotations"]["openWorldHint"], false, "{gather}");
}

#[test]
fn cycles_depth_and_fan_out_are_refused_by_name() {
    let root = temp_dir();
    let config = config(root.path(), false, r#"["composer.*", "fs.*"]"#, "");
    let mut server = legacy(&config);

    let cycle = call_tool(
        &mut server,
        "composer.call",
        json!({ "tool": "composer.call", "arguments": { "tool": "composer.callable" } }),
    );
    assert_eq!(
        text(&cycle),
        "refused: calling `composer.call` from within its own call is a cycle (composer.call → composer.call)"
    );
    // hop_1 → hop_2 → ... : four calls below the client's, then refused.
    let deep = call_tool(&mut server, "composer.hop_1", json!({}));
    assert_eq!(text(&deep), "hop 5 refused: `composer.hop_6` would be called more than 4 calls deep");
    // A fan-out bomb: 32 calls in one call, then refused.
    let bomb = call_tool(&mut server, "composer.fan_out", json!({ "tool": "composer.callable", "times": 200 }));
    assert_eq!(text(&bomb), "ran 32; refused: too many calls of other tools in one call (at most 32)");
    assert_eq!(call_tool(&mut server, "composer.callable", json!({}))["isError"], false);

    // A tool only an MCP App may call is out of a composer's (and a model's code's) reach.
    let app_only = call_tool(&mut server, "composer.call", json!({ "tool": "composer.app_only" }));
    assert_eq!(text(&app_only), "refused: unknown tool `composer.app_only`");
    let listed = text(&call_tool(&mut server, "composer.callable", json!({})));
    assert!(listed.contains("composer.hop_1") && !listed.contains("app_only"), "{listed}");
    // An inner call cannot go on as a task (the caller can).
    let detached = call_tool(&mut server, "composer.call", json!({ "tool": "composer.detach_inside" }));
    let inner: Value = serde_json::from_str(&text(&detached)).unwrap();
    assert_eq!(
        inner["content"][0]["text"],
        "not detached: a call made by another tool cannot become a task (the calling tool can)"
    );
}

#[test]
fn cancelling_the_outer_call_stops_the_inner_one() {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.composer]\nmay_call = [\"chaos.spin\"]\n",
        fixture("composer"),
        fixture("chaos"),
    ));
    let mut server = legacy(&config);
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "composer.call",
        "arguments": { "tool": "chaos.spin", "arguments": { "ms": 120000, "announce": true } } } }));
    assert!(server.wait_for_log("spin started", WAIT), "{}", server.stderr());
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } }));
    assert!(
        server.wait_for_log("call to plugin `chaos` was cancelled", Duration::from_secs(10)),
        "{}",
        server.stderr()
    );
    assert_eq!(call_tool(&mut server, "composer.callable", json!({}))["isError"], false);
}

/// A 2026-07-28 `tools/call` by a client that can answer forms.
fn modern_call(name: &str, arguments: Value, answers: Option<Value>, state: Option<&Value>) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({ "elicitation": {} });
    let mut params = json!({ "name": name, "arguments": arguments, "_meta": meta });
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    if let Some(state) = state {
        params["requestState"] = state.clone();
    }
    params
}

#[test]
fn a_side_effect_made_through_another_tool_runs_once_when_the_round_is_repeated() {
    let root = temp_dir();
    let config = config(root.path(), true, r#"["fs.write_file"]"#, "");
    let mut server = config.serve();
    let arguments = json!({ "path": "log.txt" });

    // Round 1: the write happens, then the composer asks and the round ends.
    let first = server.result("tools/call", modern_call("composer.write_then_ask", arguments.clone(), None, None));
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_schema("2026-07-28", "InputRequiredResult", &first);
    assert_eq!(std::fs::read_to_string(root.path().join("log.txt")).unwrap(), "once\n");
    // Round 2 runs the composer again from the start: the write's result comes from the sealed
    // state, the write itself does not happen again.
    let answers = json!({ "go_on": { "action": "accept", "content": { "ok": true } } });
    let done = server.result(
        "tools/call",
        modern_call("composer.write_then_ask", arguments, Some(answers), Some(&first["requestState"])),
    );
    assert!(text(&done).ends_with("answer: \"accept\""), "{done}");
    assert_eq!(std::fs::read_to_string(root.path().join("log.txt")).unwrap(), "once\n", "written once");

    // Its callee writes: a composer's claim of no harm is replaced by what its callees reach.
    let tools = server.result("tools/list", json!({ "_meta": modern_meta() }));
    let claims = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "composer.claims_harmless").unwrap();
    assert_eq!(claims["annotations"]["destructiveHint"], true, "{claims}");
}

/// Round four: a plugin served without a prefix names a tool `time.exfil`. Beside the `time`
/// plugin it is in that plugin's namespace: not served, and named in the log. Without it, a
/// composer allowed `time.*` still may not call it: a pattern's part before its first dot names
/// the plugin, never a dot inside a tool's own name.
#[test]
fn a_tool_named_into_another_plugins_namespace_is_neither_served_nor_callable_as_its() {
    let serve = |with_time: bool| {
        let time = if with_time { format!("{:?}, ", plugin("time")) } else { String::new() };
        let config = ConfigFile::new(&format!(
            "plugins = [{time}{:?}, {:?}]\n[plugin.squatter]\nprefix = \"\"\nenv = {{ SQUAT_TOOL = \"time.exfil\" }}\n\
             [plugin.composer]\nmay_call = [\"time.*\"]\n",
            fixture("squatter"),
            fixture("composer"),
        ));
        let server = legacy(&config);
        (config, server)
    };
    let (_config, mut server) = serve(true);
    let names = server.result("tools/list", json!({}))["tools"].to_string();
    assert!(names.contains("time.get_current_time") && !names.contains("time.exfil"), "{names}");
    assert!(server.wait_for_log("is in the namespace of plugin `time`", LOGGED), "{}", server.stderr());
    let (_config, mut server) = serve(false);
    let names = server.result("tools/list", json!({}))["tools"].to_string();
    assert!(names.contains("time.exfil"), "served where no plugin owns the namespace: {names}");
    let listed = text(&call_tool(&mut server, "composer.callable", json!({})));
    assert!(!listed.contains("time.exfil"), "{listed}");
    let called = call_tool(&mut server, "composer.call", json!({ "tool": "time.exfil", "arguments": { "data": "x" } }));
    assert!(text(&called).contains("may not call `time.exfil`"), "{called}");
}
