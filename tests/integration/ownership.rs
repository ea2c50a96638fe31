//! Every URI has one owner: a plugin cannot answer reads, list resources, or announce updates
//! for URIs another plugin serves (the `squatter` fixture tries each), and templates that could
//! match one URI across plugins are a load-time collision.

use std::time::Duration;

use serde_json::json;

use crate::common::*;

/// The temporary directories a test's server needs while it runs.
type Guards = (tempfile::TempDir, tempfile::TempDir, ConfigFile);

/// `fs` with a granted directory holding `a.txt`, beside squatters configured by `sections`;
/// returns what must outlive the server, the server, and `a.txt`'s URI.
fn serve_beside_fs(sections: &str, squatters: &[&str]) -> (Guards, Server, String) {
    let root = temp_dir();
    std::fs::write(root.path().join("a.txt"), "the real a.txt").unwrap();
    let name = root.path().file_name().unwrap().to_str().unwrap().to_owned();
    let dir = temp_dir();
    for squatter in squatters {
        std::fs::copy(fixture("squatter"), dir.path().join(format!("{squatter}.wasm"))).unwrap();
    }
    std::fs::copy(fixture("fs"), dir.path().join("fs.wasm")).unwrap();
    let config =
        ConfigFile::new(&format!("plugins = [{:?}]\n[[roots]]\npath = {:?}\n{sections}", dir.path(), root.path()));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let uri = format!("file:///roots/{name}/a.txt");
    ((root, dir, config), server, uri)
}

#[test]
fn a_template_overlapping_another_plugins_is_refused_at_load() {
    let (_guards, mut server, uri) =
        serve_beside_fs("[plugin.squatter]\nenv = { SQUAT_TEMPLATE = \"file:///{path}\" }\n", &["squatter"]);
    assert!(
        server.wait_for_log("resource template `file:///{path}` of plugin `squatter`", LOGGED),
        "{}",
        server.stderr()
    );
    assert!(server.stderr().contains("can match the same URIs as `file:///{path}` of plugin `fs`"));
    let read = server.result("resources/read", json!({ "uri": uri }));
    assert_eq!(read["contents"][0]["text"], "the real a.txt");
}

#[test]
fn reads_and_listings_of_another_plugins_uris_are_refused() {
    let (_guards, mut server, uri) = serve_beside_fs(
        &format!(
            "[plugin.squatter]\nenv = {{ SQUAT_LIST = \"{uri_placeholder},shared://x,squat-only://y\" }}\n\
             [plugin.squatter2]\nenv = {{ SQUAT_LIST = \"shared://x\", SQUAT_TEMPLATE = \"squat2://{{x}}\" }}\n",
            uri_placeholder = "file:///roots/a.txt"
        ),
        &["squatter", "squatter2"],
    );
    let listed = server.result("resources/list", json!({}));
    let uris: Vec<&str> = listed["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(uris.contains(&uri.as_str()), "fs lists its file: {uris:?}");
    assert!(uris.contains(&"squat-only://y"), "a URI one plugin lists alone is its own: {uris:?}");
    assert!(!uris.contains(&"file:///roots/a.txt"), "fs's template owns file:// URIs: {uris:?}");
    assert!(!uris.contains(&"shared://x"), "listed by two plugins, served by neither: {uris:?}");
    // Reads go to the owner only.
    assert_eq!(server.result("resources/read", json!({ "uri": uri }))["contents"][0]["text"], "the real a.txt");
    let missing = server.call("resources/read", json!({ "uri": "file:///roots/a.txt" }));
    assert_eq!(missing["error"]["code"], -32002, "fs answers for file://, and it has no such file: {missing}");
    let shared = server.call("resources/read", json!({ "uri": "shared://x" }));
    assert_eq!(shared["error"]["code"], -32002, "{shared}");
    let own = server.result("resources/read", json!({ "uri": "squat-only://y" }));
    assert_eq!(own["contents"][0]["text"], "forged by squatter", "its own resource it serves");
}

#[test]
fn a_plugin_announces_updates_only_for_its_own_uris() {
    let (_guards, mut server, uri) = serve_beside_fs("", &["squatter"]);
    server.result("resources/subscribe", json!({ "uri": uri }));
    server.result("resources/subscribe", json!({ "uri": "squat://mine" }));
    let forged = call_tool(&mut server, "squatter.announce", json!({ "uri": uri }));
    assert_eq!(forged["isError"], false);
    let own = call_tool(&mut server, "squatter.announce", json!({ "uri": "squat://mine" }));
    assert_eq!(own["isError"], false);
    let update = server.read_until(|m| m["method"] == "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "squat://mine", "the forged one never reached the client");
    std::thread::sleep(Duration::from_millis(300));
    assert!(server.take_notifications("notifications/resources/updated").is_empty());
    assert!(server.stderr().contains("refused a resource update for a URI the plugin does not serve"));
    assert_still_serving_fs(&mut server, &uri);
}

fn assert_still_serving_fs(server: &mut Server, uri: &str) {
    let read = server.result("resources/read", json!({ "uri": uri }));
    assert_eq!(read["contents"][0]["text"], "the real a.txt");
}

#[test]
fn a_plugin_earlier_in_file_order_cannot_answer_reads_of_another_plugins_resources() {
    // `aaa` (the squatter, answering every read with forged content) loads before `conformance`,
    // whose `test://static-text` it neither lists nor matches with its template.
    let dir = temp_dir();
    std::fs::copy(fixture("squatter"), dir.path().join("aaa.wasm")).unwrap();
    std::fs::copy(fixture("conformance"), dir.path().join("conformance.wasm")).unwrap();
    let mut server = Server::start(&[dir.path()]);
    server.initialize("2025-06-18", json!({}));
    let read = server.result("resources/read", json!({ "uri": "test://static-text" }));
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert_ne!(text, "forged by squatter", "{read}");
}
