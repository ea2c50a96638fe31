//! Both protocol eras and every method, validated against the official schemas.

use serde_json::{Value, json};

use crate::common::*;

fn conformance_server() -> Server {
    Server::start(&[fixture("conformance")])
}

#[test]
fn legacy_handshake_negotiates_each_known_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = conformance_server();
        let result = server.initialize(version, json!({}));
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "mcpbox");
        // Only what the plugins offer is declared.
        let caps = &result["capabilities"];
        for capability in ["tools", "resources", "prompts", "logging", "completions"] {
            assert!(caps.get(capability).is_some(), "{version}: {capability} missing in {caps}");
        }
        if version >= "2025-06-18" {
            assert_schema(version, "InitializeResult", &result);
        }
        assert!(server.call("ping", json!({}))["result"].is_object());
    }
    // An unknown version gets the newest version that has a handshake.
    let mut server = conformance_server();
    let result = server.initialize("1999-01-01", json!({}));
    assert_eq!(result["protocolVersion"], "2025-11-25");
}

#[test]
fn capabilities_are_declared_honestly() {
    // Watched (the default): any list may change, so every list is declared with listChanged.
    let mut watched = Server::start(&[fixture("tools_only")]);
    let caps = watched.initialize("2025-06-18", json!({}))["capabilities"].clone();
    for list in ["tools", "resources", "prompts"] {
        assert_eq!(caps[list]["listChanged"], true, "{caps}");
    }
    // Not watched: exactly what the plugins offer, and no list changes.
    let mut server = Server::start(&[fixture("tools_only").as_os_str(), "--no-watch".as_ref()]);
    let caps = server.initialize("2025-06-18", json!({}))["capabilities"].clone();
    assert!(caps.get("tools").is_some());
    assert!(caps.get("resources").is_none(), "{caps}");
    assert!(caps.get("prompts").is_none(), "{caps}");
    assert!(caps.get("completions").is_none(), "{caps}");
    assert!(caps["tools"].get("listChanged").is_none(), "no list-change notifications are sent: {caps}");
    let tools = server.result("tools/list", json!({}));
    assert_eq!(tools["tools"][0]["name"], "tools_only.ping");
    let pong = server.result("tools/call", json!({ "name": "tools_only.ping" }));
    assert_eq!(text(&pong), "pong");
}

#[test]
fn legacy_methods_all_answer_schema_valid_results() {
    let mut server = conformance_server();
    server.initialize("2025-06-18", json!({}));
    let v = "2025-06-18";

    let tools = server.result("tools/list", json!({}));
    assert_schema(v, "ListToolsResult", &tools);
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "lists are in a deterministic order");
    assert!(names.contains(&"conformance.test_simple_text"));
    assert!(tools.get("resultType").is_none(), "legacy results carry no resultType");

    let simple = server.result("tools/call", json!({ "name": "conformance.test_simple_text", "arguments": {} }));
    assert_schema(v, "CallToolResult", &simple);
    assert_eq!(text(&simple), "This is a simple text response for testing.");
    assert!(simple.get("resultType").is_none(), "legacy results carry no resultType");

    let image = server.result("tools/call", json!({ "name": "conformance.test_image_content" }));
    assert_eq!(image["content"][0]["type"], "image");
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    assert!(image["content"][0]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"), "base64 PNG");

    let mixed = server.result("tools/call", json!({ "name": "conformance.test_multiple_content_types" }));
    assert_schema(v, "CallToolResult", &mixed);
    assert_eq!(mixed["content"][2]["resource"]["text"], r#"{"test":"data","value":123}"#);

    let failing = server.result("tools/call", json!({ "name": "conformance.test_error_handling" }));
    assert_eq!(failing["isError"], true);
    assert_eq!(text(&failing), "This tool intentionally returns an error for testing");

    let unknown = server.call("tools/call", json!({ "name": "conformance.nope" }));
    assert_eq!(unknown["error"]["code"], -32602);

    let resources = server.result("resources/list", json!({}));
    assert_schema(v, "ListResourcesResult", &resources);
    let uris: Vec<&str> =
        resources["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["test://static-binary", "test://static-text", "test://watched-resource"]);

    let templates = server.result("resources/templates/list", json!({}));
    assert_schema(v, "ListResourceTemplatesResult", &templates);
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");
    assert_eq!(templates["resourceTemplates"][0]["name"], "conformance.template");

    let text_resource = server.result("resources/read", json!({ "uri": "test://static-text" }));
    assert_schema(v, "ReadResourceResult", &text_resource);
    assert_eq!(text_resource["contents"][0]["text"], "This is the content of the static text resource.");
    let blob = server.result("resources/read", json!({ "uri": "test://static-binary" }));
    assert!(blob["contents"][0]["blob"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    let templated = server.result("resources/read", json!({ "uri": "test://template/123/data" }));
    let data: Value = serde_json::from_str(templated["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" }));
    let missing = server.call("resources/read", json!({ "uri": "test://nothing" }));
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    let prompts = server.result("prompts/list", json!({}));
    assert_schema(v, "ListPromptsResult", &prompts);
    let with_args = server.result(
        "prompts/get",
        json!({ "name": "conformance.test_prompt_with_arguments", "arguments": { "arg1": "hello", "arg2": "world" } }),
    );
    assert_schema(v, "GetPromptResult", &with_args);
    assert_eq!(with_args["messages"][0]["content"]["text"], "Prompt with arguments: arg1='hello', arg2='world'");
    let missing_arg = server
        .call("prompts/get", json!({ "name": "conformance.test_prompt_with_arguments", "arguments": { "arg1": "x" } }));
    assert_eq!(missing_arg["error"]["code"], -32602, "{missing_arg}");
    let embedded = server.result(
        "prompts/get",
        json!({ "name": "conformance.test_prompt_with_embedded_resource", "arguments": { "resourceUri": "test://x" } }),
    );
    assert_eq!(embedded["messages"][0]["content"]["resource"]["uri"], "test://x");

    let completion = server.result(
        "completion/complete",
        json!({ "ref": { "type": "ref/prompt", "name": "conformance.test_prompt_with_arguments" }, "argument": { "name": "arg1", "value": "test" } }),
    );
    assert_schema(v, "CompleteResult", &completion);
    assert_eq!(completion["completion"]["values"], json!(["test", "testing", "tested"]));

    assert!(server.result("logging/setLevel", json!({ "level": "debug" })).is_object());
}

#[test]
fn progress_and_log_notifications_precede_the_result() {
    let mut server = conformance_server();
    server.initialize("2025-11-25", json!({}));
    server.result("logging/setLevel", json!({ "level": "debug" }));
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "conformance.test_tool_with_progress", "_meta": { "progressToken": "tok-1" } } }));
    let mut progress = Vec::new();
    loop {
        let message = server.read(WAIT).expect("no message");
        if message["id"] == id {
            assert_eq!(text(&message["result"]), "Progress test completed");
            break;
        }
        assert_schema("2025-11-25", "ProgressNotification", &message);
        assert_eq!(message["params"]["progressToken"], "tok-1");
        progress.push(message["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(progress, [0.0, 50.0, 100.0]);

    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "conformance.test_tool_with_logging" } }));
    let mut logs = Vec::new();
    loop {
        let message = server.read(WAIT).expect("no message");
        if message["id"] == id {
            break;
        }
        assert_schema("2025-11-25", "LoggingMessageNotification", &message);
        logs.push(message["params"]["data"].as_str().unwrap().to_owned());
    }
    assert_eq!(logs, ["Tool execution started", "Tool processing data", "Tool execution completed"]);

    // Above the requested level, nothing is sent.
    server.result("logging/setLevel", json!({ "level": "error" }));
    let result = server.call("tools/call", json!({ "name": "conformance.test_tool_with_logging" }));
    assert!(result["result"].is_object());
    assert!(server.take_notifications("notifications/message").is_empty());
}

#[test]
fn modern_stateless_requests_work_without_initialize() {
    let mut server = conformance_server();
    let v = "2026-07-28";
    let discover = server.call("server/discover", json!({ "_meta": modern_meta() }));
    assert_schema(v, "DiscoverResultResponse", &discover);
    let versions = discover["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2024-11-05")), "{versions:?}");

    let tools = server.call("tools/list", modern(json!({})));
    assert_schema(v, "ListToolsResultResponse", &tools);
    assert_eq!(tools["result"]["resultType"], "complete");
    assert!(tools["result"]["ttlMs"].as_u64().is_some());
    assert_eq!(tools["result"]["cacheScope"], "public");

    let call = server.call("tools/call", modern(json!({ "name": "conformance.test_simple_text" })));
    assert_schema(v, "CallToolResultResponse", &call);
    assert_eq!(text(&call["result"]), "This is a simple text response for testing.");

    let resources = server.call("resources/list", modern(json!({})));
    assert_schema(v, "ListResourcesResultResponse", &resources);
    assert_eq!(resources["result"]["cacheScope"], "private");
    let read = server.call("resources/read", modern(json!({ "uri": "test://static-text" })));
    assert_schema(v, "ReadResourceResultResponse", &read);
    let prompt = server.call("prompts/get", modern(json!({ "name": "conformance.test_simple_prompt" })));
    assert_schema(v, "GetPromptResultResponse", &prompt);
    let templates = server.call("resources/templates/list", modern(json!({})));
    assert_schema(v, "ListResourceTemplatesResultResponse", &templates);
    let complete = server.call(
        "completion/complete",
        modern(json!({ "ref": { "type": "ref/prompt", "name": "conformance.test_prompt_with_arguments" }, "argument": { "name": "arg1", "value": "pa" } })),
    );
    assert_schema(v, "CompleteResultResponse", &complete);

    // Resource-not-found is invalid params in 2026-07-28.
    let missing = server.call("resources/read", modern(json!({ "uri": "test://nothing" })));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");

    // Per-request log level: logs only when the request asks for them.
    let quiet = server.call("tools/call", modern(json!({ "name": "conformance.test_tool_with_logging" })));
    assert!(quiet["result"].is_object());
    assert!(server.take_notifications("notifications/message").is_empty());
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    let loud = server.call("tools/call", json!({ "name": "conformance.test_tool_with_logging", "_meta": meta }));
    assert!(loud["result"].is_object());
    assert_eq!(server.take_notifications("notifications/message").len(), 3);

    // An unsupported version in _meta is refused with the supported list.
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2030-01-01");
    let refused = server.call("tools/list", json!({ "_meta": old }));
    assert_schema(v, "UnsupportedProtocolVersionError", &refused);
}

#[test]
fn pagination_is_stateless_and_survives_a_restart() {
    let args =
        [fixture("conformance").into_os_string(), fixture("chaos").into_os_string(), "--page-size".into(), "4".into()];
    let mut first = Server::start(&args);
    first.initialize("2025-06-18", json!({}));
    let all: Vec<Value> = {
        let mut unpaged = Server::start(&[fixture("conformance"), fixture("chaos")]);
        unpaged.initialize("2025-06-18", json!({}));
        unpaged.result("tools/list", json!({}))["tools"].as_array().unwrap().clone()
    };
    assert!(all.len() > 8);
    let page1 = first.result("tools/list", json!({}));
    assert_eq!(page1["tools"].as_array().unwrap().len(), 4);
    let cursor = page1["nextCursor"].as_str().unwrap().to_owned();

    // A different server process continues from the same cursor.
    let mut second = Server::start(&args);
    second.initialize("2025-06-18", json!({}));
    let mut collected = page1["tools"].as_array().unwrap().clone();
    let mut cursor = Some(cursor);
    while let Some(c) = cursor {
        let page = second.result("tools/list", json!({ "cursor": c }));
        collected.extend(page["tools"].as_array().unwrap().iter().cloned());
        cursor = page["nextCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(collected, all);

    let bad = second.call("tools/list", json!({ "cursor": "garbage!" }));
    assert_eq!(bad["error"]["code"], -32602);
}

fn modern_with(capabilities: Value, mut params: Value, answers: Option<Value>) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities;
    params["_meta"] = meta;
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    params
}

#[test]
fn legacy_sampling_and_elicitation_are_server_to_client_requests() {
    let mut server = conformance_server();
    server.initialize("2025-11-25", json!({ "sampling": {}, "elicitation": {} }));
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "conformance.test_sampling", "arguments": { "prompt": "Say hi" } } }));
    let question = server.read_until(|m| m["method"] == "sampling/createMessage");
    assert_eq!(question["params"]["messages"][0]["content"]["text"], "Say hi");
    assert_eq!(question["params"]["maxTokens"], 100);
    server.send(&json!({ "jsonrpc": "2.0", "id": question["id"], "result": {
        "role": "assistant", "content": { "type": "text", "text": "hi there" }, "model": "test-model" } }));
    let result = server.read_until(|m| m["id"] == id);
    assert_eq!(text(&result["result"]), "LLM response: hi there");

    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "conformance.test_elicitation", "arguments": { "message": "Who are you?" } } }));
    let question = server.read_until(|m| m["method"] == "elicitation/create");
    assert_eq!(question["params"]["requestedSchema"]["required"], json!(["username", "email"]));
    server.send(&json!({ "jsonrpc": "2.0", "id": question["id"], "result": {
        "action": "accept", "content": { "username": "ada", "email": "ada@example.com" } } }));
    let result = server.read_until(|m| m["id"] == id);
    assert!(text(&result["result"]).contains("ada@example.com"), "{result}");

    // A client without the capability is not asked; the tool reports why.
    let mut plain = conformance_server();
    plain.initialize("2025-11-25", json!({}));
    let refused =
        plain.result("tools/call", json!({ "name": "conformance.test_sampling", "arguments": { "prompt": "x" } }));
    assert_eq!(refused["isError"], true);
    assert!(text(&refused).contains("does not offer sampling/createMessage"), "{refused}");
}

#[test]
fn modern_requests_ask_the_client_by_multi_round_trip() {
    let mut server = conformance_server();
    let capabilities = json!({ "sampling": {} });
    let call = json!({ "name": "conformance.test_sampling", "arguments": { "prompt": "Say hi" } });
    let first = server.call("tools/call", modern_with(capabilities.clone(), call.clone(), None));
    assert_schema("2026-07-28", "JSONRPCResultResponse", &first);
    let questions = &first["result"];
    assert_eq!(questions["resultType"], "input_required", "{first}");
    assert_schema("2026-07-28", "InputRequiredResult", questions);
    assert_eq!(questions["inputRequests"]["sampling-0"]["method"], "sampling/createMessage");
    assert_eq!(questions["inputRequests"]["sampling-0"]["params"]["messages"][0]["content"]["text"], "Say hi");

    let answers =
        json!({ "sampling-0": { "role": "assistant", "content": { "type": "text", "text": "hello" }, "model": "m" } });
    // The retry echoes the requestState (basic/patterns/mrtr: the client MUST): the answers
    // count for the questions it says were asked.
    let mut retry = modern_with(capabilities, call, Some(answers));
    retry["requestState"] = questions["requestState"].clone();
    let second = server.call("tools/call", retry);
    assert_schema("2026-07-28", "CallToolResultResponse", &second);
    assert_eq!(text(&second["result"]), "LLM response: hello");

    // Without the capability declared, the request fails as 2026-07-28 prescribes.
    let missing = server
        .call("tools/call", modern_with(json!({}), json!({ "name": "conformance.test_missing_capability" }), None));
    assert_eq!(missing["error"]["code"], -32021, "{missing}");
    assert_schema("2026-07-28", "MissingRequiredClientCapabilityError", &missing);
}

#[test]
fn modern_roots_come_by_multi_round_trip_and_only_narrow() {
    let allowed = temp_dir();
    let narrow = allowed.path().join("narrow");
    std::fs::create_dir_all(&narrow).unwrap();
    let mut server = Server::start(&[fixture("chaos").into_os_string(), "--root".into(), allowed.path().into()]);
    let capabilities = json!({ "roots": {} });
    let call = json!({ "name": "chaos.granted" });
    let first = server.call("tools/call", modern_with(capabilities.clone(), call.clone(), None));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(first["result"]["inputRequests"]["roots"]["method"], "roots/list");

    let answers = json!({ "roots": { "roots": [
        { "uri": format!("file://{}", narrow.display()) },
        { "uri": "file:///etc" }
    ] } });
    let second = server.call("tools/call", modern_with(capabilities, call.clone(), Some(answers)));
    assert_eq!(
        second["result"]["structuredContent"]["dirs"],
        json!([{ "name": "narrow", "guest_path": "/roots/narrow", "writable": false }])
    );
    // A client that does not declare roots gets the operator's grants.
    let plain = server.call("tools/call", modern_with(json!({}), call, None));
    let name = allowed.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(plain["result"]["structuredContent"]["dirs"][0]["name"], name);
}

#[test]
fn subscriptions_listen_acknowledges_what_it_will_honor() {
    let mut server = conformance_server();
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(),
        "notifications": { "toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"] } } }));
    let ack = server.read_until(|m| m["method"] == "notifications/subscriptions/acknowledged");
    assert_schema("2026-07-28", "SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
    // The plugins are watched (the default), so list changes are honored, and the resource
    // subscription is.
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true, "{ack}");
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["test://watched-resource"]));
    // The stream stays open until the client cancels it; other requests go on meanwhile.
    assert!(server.call("tools/list", modern(json!({})))["result"].is_object());
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } }));
    assert!(server.call("tools/list", modern(json!({})))["result"].is_object());
}
