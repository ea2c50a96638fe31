//! MCP roots narrow what the operator granted; they never widen it.

use serde_json::{Value, json};

use crate::common::*;

fn granted(server: &mut Server) -> Value {
    server.result("tools/call", json!({ "name": "chaos.granted" }))["structuredContent"]["dirs"].clone()
}

fn answer_roots(server: &mut Server, roots: Value) {
    let request = server.read_until(|m| m["method"] == "roots/list");
    server.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": roots } }));
}

#[test]
fn without_client_roots_the_operator_grants_apply() {
    let allowed = temp_dir();
    let mut server = Server::start(&[fixture("chaos").into_os_string(), "--root".into(), allowed.path().into()]);
    server.initialize("2025-06-18", json!({}));
    let dirs = granted(&mut server);
    let name = allowed.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(dirs, json!([{ "name": name, "guest_path": format!("/roots/{name}"), "writable": false }]));
}

#[test]
fn client_roots_select_inside_the_allowed_directories_and_follow_changes() {
    let allowed = temp_dir();
    let outside = temp_dir();
    let first = allowed.path().join("first");
    let second = allowed.path().join("second dir");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("f.txt"), "in second").unwrap();
    std::fs::write(first.join("g.txt"), "in first").unwrap();

    let mut server = Server::start(&[
        fixture("chaos").into_os_string(),
        fixture("fs").into_os_string(),
        "--root-rw".into(),
        allowed.path().into(),
    ]);
    server.initialize("2025-06-18", json!({ "roots": { "listChanged": true } }));
    answer_roots(
        &mut server,
        json!([
            { "uri": format!("file://{}", first.display()) },
            { "uri": format!("file://{}", outside.path().display()), "name": "outside" },
            { "uri": format!("file://{}/../..", first.display()), "name": "sneaky" },
        ]),
    );
    // A root that contains the allowed directory (`first/../..`) selects the allowed directory
    // itself: the intersection, never the wider root.
    let name = allowed.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(
        granted(&mut server),
        json!([
            { "name": "first", "guest_path": "/roots/first", "writable": true },
            { "name": name, "guest_path": format!("/roots/{name}"), "writable": true },
        ])
    );
    assert!(server.wait_for_log("outside every directory the operator allowed", WAIT), "{}", server.stderr());

    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }));
    answer_roots(
        &mut server,
        json!([{ "uri": format!("file://{}", second.display()).replace(' ', "%20"), "name": "second" }]),
    );
    // Calls after the change see the new roots only.
    let read =
        server.result("tools/call", json!({ "name": "fs.read_file", "arguments": { "path": "/roots/second/f.txt" } }));
    assert_eq!(text(&read), "in second");
    let gone =
        server.result("tools/call", json!({ "name": "fs.read_file", "arguments": { "path": "/roots/first/g.txt" } }));
    assert_eq!(gone["isError"], true);
    let resources = server.result("resources/list", json!({}));
    let files: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .filter(|uri| uri.starts_with("file://"))
        .collect();
    assert_eq!(files, ["file:///roots/second/f.txt"]);
}

#[test]
fn a_call_before_the_roots_answer_waits_for_it() {
    let allowed = temp_dir();
    let narrow = allowed.path().join("narrow");
    std::fs::create_dir_all(&narrow).unwrap();
    let mut server = Server::start(&[fixture("chaos").into_os_string(), "--root".into(), allowed.path().into()]);
    server.initialize("2025-11-25", json!({ "roots": {} }));
    // The call goes out before the client has answered roots/list...
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "chaos.granted" } }));
    answer_roots(&mut server, json!([{ "uri": format!("file://{}", narrow.display()) }]));
    // ...and still sees only what the client chose, never the wider operator grant.
    let result = server.read_until(|m| m["id"] == id);
    assert_eq!(
        result["result"]["structuredContent"]["dirs"],
        json!([{ "name": "narrow", "guest_path": "/roots/narrow", "writable": false }])
    );
}

#[test]
fn each_plugin_gets_the_directories_its_config_grants() {
    let shared = temp_dir();
    let data = temp_dir();
    std::fs::create_dir_all(data.path().join("inner")).unwrap();
    std::fs::write(data.path().join("inner/note.txt"), "plugin data").unwrap();
    std::fs::write(shared.path().join("shared.txt"), "shared").unwrap();
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n\n[plugin.chaos]\nroots = false\n\n[[plugin.chaos.dirs]]\npath = {:?}\nname = \"data\"\nwritable = true\nwithin_client_roots = true\n",
        fixture("chaos"),
        fixture("fs"),
        data.path()
    ));
    let mut args: Vec<std::ffi::OsString> = config.args().iter().map(Into::into).collect();
    args.extend(["--root".into(), shared.path().into()]);

    // No client roots: chaos sees its own directory only, fs the shared root only.
    let mut server = Server::start(&args);
    server.initialize("2025-06-18", json!({}));
    assert_eq!(granted(&mut server), json!([{ "name": "data", "guest_path": "/roots/data", "writable": true }]));
    let shared_name = shared.path().file_name().unwrap().to_str().unwrap();
    let read = server.result(
        "tools/call",
        json!({ "name": "fs.read_file", "arguments": { "path": format!("/roots/{shared_name}/shared.txt") } }),
    );
    assert_eq!(text(&read), "shared");
    let other = server.result("tools/call", json!({ "name": "fs.list_dir", "arguments": { "path": "/roots/data" } }));
    assert_eq!(other["isError"], true, "fs must not see chaos's directory: {other}");
    drop(server);

    // Client roots narrow chaos's directory to the part inside them.
    let mut server = Server::start(&args);
    server.initialize("2025-06-18", json!({ "roots": {} }));
    let inner = data.path().join("inner");
    answer_roots(&mut server, json!([{ "uri": format!("file://{}", inner.display()) }]));
    assert_eq!(granted(&mut server), json!([{ "name": "inner", "guest_path": "/roots/inner", "writable": true }]));
    let note = server
        .result("tools/call", json!({ "name": "chaos.read_path", "arguments": { "path": "/roots/inner/note.txt" } }));
    assert_eq!(text(&note), "plugin data");
}

#[test]
fn a_stateless_client_announcing_roots_changes_is_never_asked() {
    // 2026-07-28 removed notifications/roots/list_changed and server-to-client requests: a
    // stateless client that still sends it over stdio must not get a roots/list request, nor
    // make mcpbox log a failed one.
    let allowed = temp_dir();
    let mut server = Server::start(&[fixture("chaos").into_os_string(), "--root".into(), allowed.path().into()]);
    let before = server.call("tools/list", modern(json!({})));
    assert!(before["result"]["tools"].is_array(), "{before}");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": { "_meta": modern_meta() } }));
    let after = server.call("tools/call", modern(json!({ "name": "chaos.granted" })));
    let name = allowed.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(after["result"]["structuredContent"]["dirs"][0]["name"], name, "{after}");
    assert!(
        server.read(std::time::Duration::from_millis(500)).is_none(),
        "nothing more may come: {:?}",
        server.backlog
    );
    assert!(server.backlog.iter().all(|m| m["method"] != "roots/list"), "{:?}", server.backlog);
    assert!(!server.stderr().contains("roots/list failed"), "{}", server.stderr());
}
