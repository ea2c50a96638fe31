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

    // `mcpbox inspect` shows them before anyone serves the plugin: the app, with the digest of
    // the HTML that is pinned, the skill, the instructions, the tool's `_meta` and icons.
    let inspected = crate::common::mcpbox("inspect").arg("--json").arg(plugin("textstats")).output().unwrap();
    assert!(inspected.status.success(), "{}", String::from_utf8_lossy(&inspected.stderr));
    let described: Value = serde_json::from_slice(&inspected.stdout).unwrap();
    assert_eq!(described["apps"][0]["uri"], "ui://textstats/chart");
    assert_eq!(described["apps"][0]["tools"], json!(["textstats.stats"]));
    assert!(described["apps"][0]["html"].as_str().unwrap().starts_with("sha256:"), "{described}");
    assert_eq!(described["skills"], json!(["skill://textstats/text-survey/SKILL.md"]));
    assert!(described["instructions"].as_str().unwrap().starts_with("Survey a directory"), "{described}");
    let sha = described["tools"].as_array().unwrap().iter().find(|t| t["name"] == "textstats.sha256").unwrap();
    assert_eq!(sha["icons"][0]["mimeType"], "image/svg+xml", "{sha}");
}

fn text_of(read: &Value) -> String {
    read["contents"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// `[plugin.meta]` with `MODE`, beside `textstats`, not yet initialized.
fn start_meta(mode: &str, extra: &str) -> (Server, ConfigFile) {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n\n[plugin.meta]\nenv = {{ MODE = \"{mode}\" }}\n{extra}",
        plugin("textstats"),
        fixture("meta"),
    ));
    (config.serve(), config)
}

/// [`start_meta`], initialized as a legacy client without capabilities.
fn serve_meta(mode: &str, extra: &str) -> (Server, ConfigFile) {
    let (mut server, config) = start_meta(mode, extra);
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
    // Read as an app at load, as plain HTML later: the read is refused, naming the URI.
    let dir = crate::common::temp_dir();
    let (mut server, _config) = serve_meta("read-mime", &format!("\n[[roots]]\npath = {:?}\n", dir.path()));
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

/// A question goes only to a client that declared what it needs beyond the method (small
/// frontier items of the issue): URL-mode elicitation needs `elicitation.url`, form mode `form`
/// (or an empty `elicitation`), a sampling request with `tools` needs `sampling.tools`. A
/// 2026-07-28 request without it gets MissingRequiredClientCapability naming it; a legacy
/// session's question is not sent, and the plugin is told why.
#[test]
fn questions_go_only_to_clients_that_declared_exactly_what_they_need() {
    let (mut server, _config) = start_meta("ok", "");
    let url_mode =
        json!({ "mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1" })
            .to_string();
    let with_tools =
        json!({ "messages": [], "maxTokens": 5, "tools": [{ "name": "t", "inputSchema": { "type": "object" } }] })
            .to_string();
    let modern_call = |server: &mut Server, method: &str, params: &str, capabilities: Value| {
        let mut meta = crate::common::modern_meta();
        meta["io.modelcontextprotocol/clientCapabilities"] = capabilities;
        server.call(
            "tools/call",
            json!({ "name": "meta.ask", "arguments": { "method": method, "params": params }, "_meta": meta }),
        )
    };
    for (method, params, lacking, declared, needed) in [
        (
            "elicit",
            &url_mode,
            json!({ "elicitation": { "form": {} } }),
            json!({ "elicitation": { "form": {}, "url": {} } }),
            json!({ "elicitation": { "url": {} } }),
        ),
        (
            "elicit",
            &json!({ "message": "m", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } })
            .to_string(),
            json!({ "elicitation": { "url": {} } }),
            json!({ "elicitation": {} }),
            json!({ "elicitation": { "form": {} } }),
        ),
        (
            "sample",
            &with_tools,
            json!({ "sampling": {} }),
            json!({ "sampling": { "tools": {} } }),
            json!({ "sampling": { "tools": {} } }),
        ),
    ] {
        let refused = modern_call(&mut server, method, params, lacking);
        assert_eq!(refused["error"]["data"]["requiredCapabilities"], needed, "{refused}");
        let asked = modern_call(&mut server, method, params, declared);
        assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
        assert!(asked["result"]["inputRequests"]["q"].is_object(), "{asked}");
    }
    // A legacy session that declared form elicitation only: the URL-mode question is not sent.
    let (mut legacy, _config) = start_meta("ok", "");
    legacy.initialize("2025-11-25", json!({ "elicitation": {} }));
    let answered = call_tool(&mut legacy, "meta.ask", json!({ "method": "elicit", "params": url_mode }));
    assert_eq!(text(&answered), "no answer: the client does not offer elicitation/create with elicitation.url");
}

/// The HTML of an app runs in the user's client: pinned like a tool's definition. Changed
/// HTML is withheld until `mcpbox accept`; HTML other than what the plugin served at load is
/// refused on every read.
#[test]
fn an_apps_html_is_pinned_and_served_only_as_pinned() {
    let (mut server, config) = serve_meta("ok", "");
    let first = server.result("resources/read", json!({ "uri": "ui://meta/app" }));
    assert!(text_of(&first).contains("meta's app</p>"), "{first}");
    drop(server);
    // The same plugin, other HTML: withheld until accepted.
    let rewritten = std::fs::read_to_string(&config.path).unwrap().replace("MODE = \"ok\"", "MODE = \"other-html\"");
    config.rewrite(&rewritten);
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    let withheld = server.call("resources/read", json!({ "uri": "ui://meta/app" }));
    let message = withheld["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("changed since it was pinned: withheld until accepted (`mcpbox accept meta`)"),
        "{withheld}"
    );
    // Nor advertised: not listed, and its tool no longer links it.
    let advertised = |server: &mut Server| {
        let listed = server.result("resources/list", json!({}))["resources"].to_string().contains("ui://meta/app");
        let tools = server.result("tools/list", json!({}));
        let tag = tools["tools"].as_array().unwrap().iter().find(|t| t["name"] == "meta.tag").cloned().unwrap();
        (listed, tag["_meta"]["ui"]["resourceUri"] == "ui://meta/app")
    };
    assert_eq!(advertised(&mut server), (false, false), "a withheld app is advertised");
    drop(server);
    let accepted = crate::common::mcpbox("accept").arg("meta").args(config.args()).output().unwrap();
    assert!(accepted.status.success(), "{}", String::from_utf8_lossy(&accepted.stderr));
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    let second = server.result("resources/read", json!({ "uri": "ui://meta/app" }));
    assert!(text_of(&second).contains("meta's app, changed"), "{second}");
    assert_eq!(advertised(&mut server), (true, true), "an accepted app is advertised again");

    // A plugin that serves one HTML at load and another later: refused every time.
    let dir = crate::common::temp_dir();
    let flip = ConfigFile::new(&format!(
        "plugins = [{:?}]\n\n[[roots]]\npath = {:?}\n\n[plugin.meta]\nenv = {{ MODE = \"flip\" }}\n",
        fixture("meta"),
        dir.path()
    ));
    server = flip.serve();
    server.initialize("2025-11-25", json!({}));
    let refused = server.call("resources/read", json!({ "uri": "ui://meta/app" }));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("plugin `meta` served other HTML for `ui://meta/app` than when it loaded"), "{refused}");
}

/// A read of an app under way while the catalog is swapped (here the pins file changes, as
/// `mcpbox accept` or another server's first use changes it; a plugin reloaded does the same)
/// is answered with the app its plugin served, checked against the catalog that served it.
/// (The CI failure "is not an app its plugin listed when it loaded": the check took the
/// catalog swapped in meanwhile, which had not seen the listing that made `meta` the owner.)
#[test]
fn a_read_under_way_while_the_catalog_is_swapped_gets_its_app() {
    let dir = crate::common::temp_dir();
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}]\n\n[[roots]]\npath = {:?}\nwritable = true\n\n[plugin.meta]\nenv = {{ MODE = \"slow-read\" }}\n",
        fixture("meta"),
        dir.path()
    ));
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    let id = server.fresh_id();
    server
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "resources/read", "params": { "uri": "ui://meta/app" } }));
    // The plugin is reading (it waits for `go`).
    let reading = dir.path().join("reading");
    let end = std::time::Instant::now() + crate::common::WAIT;
    while !reading.exists() {
        assert!(std::time::Instant::now() < end, "the read never started:\n{}", server.stderr());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Another catalog is swapped in: the pins file is written again (the same pins).
    let serving = |server: &Server| server.stderr().matches("now serving").count();
    let swaps = serving(&server);
    let pins = config.path.with_file_name("mcpbox.pins.json");
    let pinned = std::fs::read(&pins).expect("the first use pinned the plugin");
    std::fs::write(&pins, pinned).unwrap();
    let end = std::time::Instant::now() + crate::common::WAIT;
    while serving(&server) == swaps {
        assert!(std::time::Instant::now() < end, "no catalog was swapped in:\n{}", server.stderr());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::write(dir.path().join("go"), b"").unwrap();
    let read = server.read_until(|m| m["id"] == id);
    assert!(text_of(&read["result"]).contains("meta's app</p>"), "{read}");
}

/// The `_meta` a guest sets reaches its result when the call goes on as a task too (stored
/// with the task, read by `tasks/get`).
#[test]
fn a_tasks_result_carries_the_meta_its_guest_set() {
    let (mut server, _config) = start_meta("ok", "\n[plugin.meta.tasks.tag]\nafter_ms = 0\nrequired = true\n");
    let mut meta = crate::common::modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let created = server.result(
        "tools/call",
        json!({ "name": "meta.tag", "arguments": { "meta": "{\"com.example/trace\": \"task\"}" }, "_meta": meta }),
    );
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let done = loop {
        let task = server.result("tasks/get", json!({ "taskId": id, "_meta": meta }));
        if task["status"] == "completed" || std::time::Instant::now() > end {
            break task;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "accepted", "{done}");
    assert_eq!(done["result"]["_meta"], json!({ "com.example/trace": "task" }), "{done}");
}
