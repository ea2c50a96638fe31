//! A server written with the TypeScript SDK's v2 package (`@modelcontextprotocol/server`, the
//! stable line for the 2026-07-28 spec) built by `mcpbox build`: its `serveStdio` keeps telling
//! the eras apart, with the bridge's transport under it (issue 40).

use serde_json::json;

use crate::common::repo_root;
use crate::existing_servers::build;

/// The fixture's tools (zod 4 schemas, structured output, a schema's bound refusing a call),
/// resource and prompt, as mcpbox serves them.
#[test]
fn a_server_written_with_sdk_v2_builds_and_serves_its_tools_resources_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join("tests/fixtures/existing/sdk-v2");
    let (ok, text, report) = build(source.to_str().unwrap(), dir.path(), "v2");
    assert!(ok, "{text}");
    assert_eq!(report["sdk"]["package"], "@modelcontextprotocol/server", "{report:#}");
    assert_eq!(report["sdk"]["version"], "2.4.0", "{report:#}");
    assert!(report["blockers"].as_array().is_some_and(Vec::is_empty), "{report:#}");

    let wasm = dir.path().join("v2.wasm");
    let config =
        crate::common::ConfigFile::new(&format!("plugins = [{wasm:?}]\n[plugin.v2]\nprefix = \"\"\nroots = false\n"));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let tools = server.result("tools/list", json!({}));
    let add = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "add").cloned().unwrap();
    assert_eq!(add["inputSchema"]["properties"]["a"]["description"], "the first", "{add}");
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number", "{add}");
    let sum = crate::common::call_tool(&mut server, "add", json!({"a": 2, "b": 3}));
    assert_eq!(sum["structuredContent"], json!({"sum": 5}), "{sum}");
    let shout = crate::common::call_tool(&mut server, "shout", json!({"text": "quiet"}));
    assert_eq!(crate::common::text(&shout), "QUIET", "{shout}");
    let refused = crate::common::call_tool(&mut server, "shout", json!({"text": ""}));
    assert_eq!(refused["isError"], true, "the schema's min(1) holds: {refused}");
    let motto = server.result("resources/read", json!({"uri": "v2://motto"}));
    assert_eq!(motto["contents"][0]["text"], "fresh per call", "{motto}");
    let prompt = server.result("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}}));
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada", "{prompt}");
}
