//! Tool search for large catalogs (`--tool-search`, docs/composition.md): clients see
//! `search_tools` and `call_tool` instead of every tool; a search ranks by name, title and
//! description and never finds an app-only tool; `call_tool` is the client's own call of the
//! tool it names. (Entitlements filtering a search: `principals.rs`.)

use serde_json::{Value, json};

use crate::common::*;

fn names(found: &Value) -> Vec<String> {
    found["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_client_sees_two_tools_finds_by_words_and_calls_what_it_found() {
    let mut server = Server::start(&[
        plugin("time").into_os_string(),
        plugin("textstats").into_os_string(),
        fixture("composer").into_os_string(),
        "--tool-search".into(),
    ]);
    server.initialize("2025-11-25", json!({}));
    let listed = server.result("tools/list", json!({}));
    assert_schema("2025-11-25", "ListToolsResult", &listed);
    let listed: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(listed, ["search_tools", "call_tool"]);

    let found = call_tool(&mut server, "search_tools", json!({ "query": "current time in a time zone", "limit": 2 }));
    assert_schema("2025-11-25", "CallToolResult", &found);
    assert_eq!(names(&found)[0], "time.get_current_time", "{found}");
    assert_eq!(names(&found).len(), 2);
    assert_eq!(found["structuredContent"]["tools"][0]["inputSchema"]["required"], json!(["timezone"]));
    // An app-only tool is not the model's to find, nor to call.
    let app = call_tool(&mut server, "search_tools", json!({ "query": "app only tool" }));
    assert!(!names(&app).contains(&"composer.app_only".to_owned()), "{app}");

    let called = call_tool(
        &mut server,
        "call_tool",
        json!({ "name": "time.get_current_time", "arguments": { "timezone": "UTC" } }),
    );
    assert_eq!(called["isError"], false, "{called}");
    assert_eq!(called["structuredContent"]["timezone"], "UTC", "{called}");
    let refused =
        server.call("tools/call", json!({ "name": "call_tool", "arguments": { "name": "composer.app_only" } }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["message"], "unknown tool `composer.app_only`");
    // A client that knows a tool's name still calls it directly.
    assert_eq!(call_tool(&mut server, "time.get_current_time", json!({ "timezone": "UTC" }))["isError"], false);
}
