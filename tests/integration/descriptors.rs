//! What a plugin describes is bounded and checked like its names: each way the `bad-schema`
//! fixture breaks the rules is refused at load, naming the plugin, the item and the limit. And
//! what a tool returns keeps to what it described: the `liar` fixture's structured content
//! breaking its output schema is a call error, never passed on to the client.

use serde_json::json;

use crate::common::*;

/// `mcpbox check` of the fixture as the plugin `x` with `BAD` set to `mode`; its output.
fn check_with(mode: &str) -> (bool, String) {
    let dir = temp_dir();
    std::fs::copy(fixture("bad_schema"), dir.path().join("x.wasm")).unwrap();
    let config = dir.path().join("mcpbox.toml");
    std::fs::write(&config, format!("plugins = [\"x.wasm\"]\n[plugin.x]\nenv = {{ BAD = \"{mode}\" }}\n")).unwrap();
    let output = mcpbox("check").arg("--config").arg(&config).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn descriptors_over_a_limit_or_with_control_characters_are_refused_at_load() {
    let (fine, output) = check_with("fine");
    assert!(fine, "the control case loads: {output}");
    for (mode, expected) in [
        ("control-title", "plugin `x` (...): the title of tool `echo` contains the control character U+001B"),
        ("long-description", "plugin `x` (...): the description of tool `echo` is 1048576 bytes; the limit is 65536"),
        ("many-tools", "plugin `x` (...): it describes 2000 tools; the limit is 1024"),
        ("bad-argument", "plugin `x` (...): argument name `the question` of prompt `ask` is invalid"),
        (
            "invisible-description",
            "plugin `x` (...): the description of tool `echo` contains the invisible character U+E0049",
        ),
        (
            "invisible-schema",
            "plugin `x` (...): the input schema of tool `echo` contains the invisible character U+E0049",
        ),
        ("tool-twice", "plugin `x` (...): it lists the tool `echo` twice"),
        ("prompt-twice", "plugin `x` (...): it lists the prompt `ask` twice"),
        ("template-twice", "plugin `x` (...): it lists the URI template `notes://{id}` twice"),
    ] {
        let (loaded, output) = check_with(mode);
        assert!(!loaded, "{mode}: {output}");
        let line = output.lines().find(|l| l.starts_with("x ")).unwrap_or_else(|| panic!("{mode}: {output}"));
        let (head, tail) = expected.split_once("(...)").unwrap();
        assert!(line.contains(head) && line.contains(tail), "{mode}: {line}");
    }
}

/// `liar` with the bystander, at `version`.
fn liar(version: &str) -> Server {
    let mut server = Server::start(&[fixture("liar"), fixture("conformance")]);
    server.initialize(version, json!({}));
    server
}

#[test]
fn structured_content_must_match_the_output_schema() {
    let mut server = liar("2025-06-18");
    let fine = call_tool(&mut server, "liar.count", json!({ "kind": "fine" }));
    assert_eq!(fine["structuredContent"], json!({ "count": 3 }), "{fine}");
    for (kind, problem) in [
        ("wrong", "does not match its output schema at `/count`"),
        ("none", "declares an output schema but returned no structured content"),
        ("garbage", "returned structured content that is not JSON"),
        ("array", "does not match its output schema"),
    ] {
        let result = call_tool(&mut server, "liar.count", json!({ "kind": kind }));
        assert_eq!(result["isError"], true, "{kind}: {result}");
        let message = text(&result);
        assert!(
            message.starts_with("plugin `liar` returned invalid structured content: tool `count` ")
                && message.contains(problem),
            "{kind}: {message}"
        );
        assert!(result.get("structuredContent").is_none(), "{kind}: {result}");
    }
    assert_still_serving(&mut server);
}

#[test]
fn a_legacy_client_gets_non_object_structured_content_as_text() {
    // 2026-07-28 allows any JSON value as structured content; up to 2025-11-25 it is an object.
    let mut legacy = liar("2025-11-25");
    let result = call_tool(&mut legacy, "liar.any", json!({ "kind": "[1,2]" }));
    assert_schema("2025-11-25", "CallToolResult", &result);
    assert!(result.get("structuredContent").is_none(), "{result}");
    assert_eq!(text(&result), "[1,2]");
    let object = call_tool(&mut legacy, "liar.any", json!({ "kind": "{\"a\":1}" }));
    assert_eq!(object["structuredContent"], json!({ "a": 1 }), "{object}");

    let mut stateless = Server::start(&[fixture("liar")]);
    let params = modern(json!({ "name": "liar.any", "arguments": { "kind": "[1,2]" } }));
    let result = stateless.result("tools/call", params);
    assert_eq!(result["structuredContent"], json!([1, 2]), "{result}");
}
