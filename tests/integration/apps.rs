//! MCP Apps and the rest of WIT 0.1.3 through the real host (no browser here; `browser.rs`
//! renders the app): the bundled `textstats` plugin's app, icon, instructions and skill; what a
//! plugin may not claim refused by name at load (the `meta` fixture, one claim per `MODE`)
//! while the others serve; `_meta` a call sets checked the same way; a 0.1.0 component unchanged.

use serde_json::{Value, json};

use crate::common::{ConfigFile, Server, call_tool, fixture, plugin, text};

fn find<'a>(list: &'a Value, key: &str, field: &str, value: &str) -> &'a Value {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item[field] == value)
        .unwrap_or_else(|| panic!("{value} in {list}"))
}

#[test]
fn a_plugin_ships_an_app_an_icon_instructions_and_a_skill() {
    let mut server = Server::start(&[plugin("textstats"), fixture("wit_0_1_0")]);
    let init = server.initialize("2025-11-25", json!({}));
    assert_eq!(
        init["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({ "mimeTypes": ["text/html;profile=mcp-app"] })
    );
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("From the textstats plugin:\nSurvey a directory"), "{instructions}");
    assert!(instructions.contains("skill://textstats/text-survey/SKILL.md"), "{instructions}");

    let tools = server.result("tools/list", json!({}));
    let stats = find(&tools, "tools", "name", "textstats.stats");
    assert_eq!(stats["_meta"], json!({ "ui": { "resourceUri": "ui://textstats/chart" } }));
    let sha = find(&tools, "tools", "name", "textstats.sha256");
    assert!(sha["icons"][0]["src"].as_str().unwrap().starts_with("data:image/svg+xml;base64,"), "{sha}");
    assert_eq!(sha["icons"][0]["sizes"], json!(["any"]));
    // The 0.1.0 component beside it: served as before, nothing added.
    let old = tools["tools"].as_array().unwrap().iter().find(|t| t["name"].as_str().unwrap().starts_with("wit_0_1_0."));
    let old = old.unwrap_or_else(|| panic!("{tools}"));
    assert!(old.get("_meta").is_none() && old.get("icons").is_none(), "{old}");

    let resources = server.result("resources/list", json!({}));
    let app = find(&resources, "resources", "uri", "ui://textstats/chart");
    assert_eq!(app["mimeType"], "text/html;profile=mcp-app");
    let read = server.result("resources/read", json!({ "uri": "ui://textstats/chart" }));
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["_meta"], json!({ "ui": { "prefersBorder": true } }));
    assert!(contents["text"].as_str().unwrap().contains("ui/initialize"), "{contents}");

    let skill = server.result("skills/get", json!({ "uri": "skill://textstats/text-survey/SKILL.md" }));
    assert_eq!(skill["skill"]["frontmatter"]["name"], "text-survey");
    let manifest = server.result("resources/read", json!({ "uri": "skill://textstats/text-survey/SKILL.md" }));
    assert!(text_of(&manifest).contains("Call `textstats.stats` on the directory first"), "{manifest}");
}

fn text_of(read: &Value) -> String {
    read["contents"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// `[plugin.meta]` with `MODE`, beside `textstats`.
fn serve_meta(mode: &str, extra: &str) -> (Server, ConfigFile) {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n\n[plugin.meta]\nenv = {{ MODE = \"{mode}\" }}\n{extra}",
        plugin("textstats"),
        fixture("meta"),
    ));
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    (server, config)
}

#[test]
fn what_a_plugin_may_not_claim_is_refused_by_name_and_the_others_serve() {
    for (mode, reason) in [
        ("reserved", "`io.modelcontextprotocol/related-task` is under a prefix MCP reserves"),
        ("huge", "_meta is 20971"),
        ("control", "control character U+0007"),
        ("foreign-app", "links the app `ui://textstats/chart`, which is not one of this plugin's ui:// resources"),
        ("csp", "names `https://collector.example`, outside the plugin's network grant"),
        ("permission", "`ui.permissions.camera` is not allowed for this plugin"),
        ("icon", "`https://tracker.example/pixel.png`) is neither a data: URI nor an https URL"),
        ("not-served", "metadata names prompt `nothing`, which the plugin does not serve"),
        ("mime", "`ui://meta/plain` is a ui:// resource (MCP Apps) but its MIME type is \"text/html\""),
    ] {
        let (mut server, _config) = serve_meta(mode, "");
        let tools = server.result("tools/list", json!({}));
        let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(
            names.contains(&"textstats.stats") && !names.iter().any(|n| n.starts_with("meta.")),
            "{mode}: {names:?}"
        );
        let stderr = server.stderr();
        assert!(stderr.contains("plugin `meta`") && stderr.contains(reason), "{mode}: no `{reason}` in\n{stderr}");
    }
    // Listed as an app, read as plain HTML: the read is refused, naming the URI.
    let (mut server, _config) = serve_meta("read-mime", "");
    let read = server.call("resources/read", json!({ "uri": "ui://meta/other" }));
    let message = read["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`ui://meta/other` is a ui:// resource but its contents are not"), "{read}");
    // Within the grants, the same claims load: a domain the network grant allows, a
    // permission the operator allows.
    let (mut server, _config) =
        serve_meta("csp", "network = [\"https://collector.example\"]\nui_permissions = [\"camera\"]\n");
    let resources = server.result("resources/list", json!({}));
    let app = find(&resources, "resources", "uri", "ui://meta/app");
    assert_eq!(app["_meta"]["ui"]["csp"]["connectDomains"], json!(["https://collector.example"]));
}

#[test]
fn meta_a_call_sets_is_checked_and_counted() {
    let (mut server, _config) = serve_meta("ok", "");
    let tools = server.result("tools/list", json!({}));
    assert_eq!(find(&tools, "tools", "name", "meta.tag")["_meta"]["com.example/owner"], "tests");
    let accepted = call_tool(&mut server, "meta.tag", json!({ "meta": "{\"com.example/trace\": \"abc\"}" }));
    assert_eq!(text(&accepted), "accepted");
    assert_eq!(accepted["_meta"], json!({ "com.example/trace": "abc" }));
    for (meta, uri, reason) in [
        ("{\"io.modelcontextprotocol/related-task\": {}}", None, "prefix MCP reserves"),
        (
            "{\"ui\": {\"csp\": {\"connectDomains\": [\"https://x.example\"]}}}",
            Some("ui://meta/app"),
            "outside the plugin's network grant",
        ),
        ("{\"ui\": {\"resourceUri\": \"ui://meta/app\"}}", None, "`ui.resourceUri` has no meaning here"),
        ("[1, 2]", None, "not a JSON object"),
    ] {
        let mut arguments = json!({ "meta": meta });
        if let Some(uri) = uri {
            arguments["uri"] = uri.into();
        }
        let refused = call_tool(&mut server, "meta.tag", arguments);
        assert!(text(&refused).starts_with("refused: ") && text(&refused).contains(reason), "{meta}: {refused}");
        assert!(refused.get("_meta").is_none(), "{refused}");
    }
    // 20 MiB of `_meta` from a call: over the call's output limit, the call fails.
    let huge = format!("{{\"com.example/blob\": \"{}\"}}", "x".repeat(20 << 20));
    let response = server.call("tools/call", json!({ "name": "meta.tag", "arguments": { "meta": huge } }));
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(text(&response["result"]).contains("over its output limit of 16 MiB"), "{response}");
}
