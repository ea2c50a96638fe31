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

/// `aaa` (the squatter, sorting before `fs`) claiming `file:///{path}` and listing fs's `a.txt`,
/// beside `fs`, with `sections` added to the config.
fn squatter_first(sections: &str) -> (Guards, Server, String) {
    serve_beside_fs(
        &format!("[plugin.aaa]\nenv = {{ SQUAT_TEMPLATE = \"file:///{{path}}\", SQUAT_LIST = \"{{a}}\" }}\n{sections}")
            .replace("{a}", "file:///roots/a.txt"),
        &["aaa"],
    )
}

fn templates(server: &mut Server) -> Vec<String> {
    let listed = server.result("resources/templates/list", json!({}));
    listed["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap().to_owned())
        .collect()
}

/// Neither side of a contested template answers a read of its URIs, lists them, or announces
/// them; the log says who claims what.
fn assert_contested(server: &mut Server, uri: &str) {
    assert!(!templates(server).contains(&"file:///{path}".to_owned()), "{:?}", templates(server));
    let read = server.call("resources/read", json!({ "uri": uri }));
    assert_eq!(read["error"]["code"], -32002, "nobody owns a contested URI: {read}");
    let listed = server.result("resources/list", json!({}));
    assert!(!listed.to_string().contains("file:///"), "{listed}");
    server.result("resources/subscribe", json!({ "uri": uri }));
    let before = refusals(server);
    assert_eq!(call_tool(server, "aaa.announce", json!({ "uri": uri }))["isError"], false);
    assert!(refused_since(server, before), "the update was not refused: {}", server.stderr());
    assert!(server.take_notifications("notifications/resources/updated").is_empty());
}

/// What the host logs when it refuses a plugin's update of a URI it does not serve.
const REFUSED: &str = "refused a resource update for a URI the plugin does not serve";

fn refusals(server: &Server) -> usize {
    server.stderr().matches(REFUSED).count()
}

/// Waits for the refusal's own signal (a refusal logged after `before` of them): the host
/// refuses an update as the plugin makes it, before any notification could leave.
fn refused_since(server: &Server, before: usize) -> bool {
    let end = std::time::Instant::now() + LOGGED;
    while std::time::Instant::now() < end {
        if refusals(server) > before {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_squatter_that_loads_first_gets_nothing_of_another_plugins_namespace() {
    let (_guards, mut server, uri) = squatter_first("");
    assert!(
        server.wait_for_log(
            "resource template `file:///{path}` of plugin `aaa` can match the same URIs as `file:///{path}` of plugin `fs`",
            LOGGED
        ),
        "{}",
        server.stderr()
    );
    assert!(server.stderr().contains("resource template `file:///{path}` of plugin `fs` can match the same URIs"));
    assert_contested(&mut server, &uri);
    // The rest of both plugins serves.
    let path = uri.strip_prefix("file://").unwrap();
    assert_eq!(text(&call_tool(&mut server, "fs.read_file", json!({ "path": path }))), "the real a.txt");
}

#[test]
fn the_operator_gives_contested_uris_to_one_plugin_and_check_says_what_is_unsettled() {
    let (guards, mut server, uri) = squatter_first("[plugin.fs]\nowns = [\"file:///{path}\"]\n");
    assert_eq!(server.result("resources/read", json!({ "uri": uri }))["contents"][0]["text"], "the real a.txt");
    assert_eq!(templates(&mut server).iter().filter(|t| *t == "file:///{path}").count(), 1);
    assert!(server.stderr().contains("of plugin `aaa` is not served: the config gives the URIs it could match to"));
    let checked = mcpbox("check").args(guards.2.args()).output().unwrap();
    assert!(checked.status.success(), "settled: {}", String::from_utf8_lossy(&checked.stdout));

    // Unsettled, `check` fails and names the contest on both plugins' rows.
    guards.2.rewrite(&std::fs::read_to_string(&guards.2.path).unwrap().replace("owns", "# owns"));
    let checked = mcpbox("check").args(guards.2.args()).output().unwrap();
    let table = String::from_utf8_lossy(&checked.stdout);
    assert!(!checked.status.success(), "{table}");
    assert_eq!(table.matches("can match the same URIs as").count(), 2, "{table}");
}

#[test]
fn a_catch_all_template_is_named_and_takes_nothing() {
    let (_guards, mut server, uri) = serve_beside_fs(
        "[plugin.aaa]\nenv = { SQUAT_TEMPLATE = \"{+uri}\" }\n[plugin.zzz]\nenv = { SQUAT_TEMPLATE = \"zzz://{x}\" }\n",
        &["aaa", "zzz"],
    );
    assert!(
        server.wait_for_log(
            "resource template `{+uri}` of plugin `aaa` is a catch-all: it can match the URIs of 2 templates",
            LOGGED
        ),
        "{}",
        server.stderr()
    );
    let read = server.call("resources/read", json!({ "uri": uri }));
    assert_eq!(read["error"]["code"], -32002, "{read}");
    let other = server.call("resources/read", json!({ "uri": "zzz://1" }));
    assert_eq!(other["error"]["code"], -32002, "{other}");
    assert!(templates(&mut server).is_empty(), "{:?}", templates(&mut server));
}

#[test]
fn a_squatter_arriving_by_hot_reload_gets_nothing_either() {
    let (guards, mut server, uri) =
        serve_beside_fs("[plugin.aaa]\nenv = { SQUAT_TEMPLATE = \"file:///{path}\" }\n", &[]);
    assert_still_serving_fs(&mut server, &uri);
    let folder = guards.1.path();
    std::fs::copy(fixture("squatter"), folder.join("aaa.wasm")).unwrap();
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert_contested(&mut server, &uri);
    assert!(server.stderr().contains("resource template `file:///{path}` of plugin `fs` can match the same URIs"));
    // Gone again: fs serves its own.
    std::fs::remove_file(folder.join("aaa.wasm")).unwrap();
    server.read_until(|m| m["method"] == "notifications/tools/list_changed");
    assert_still_serving_fs(&mut server, &uri);
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
    let before = refusals(&server);
    let forged = call_tool(&mut server, "squatter.announce", json!({ "uri": uri }));
    assert_eq!(forged["isError"], false);
    assert!(refused_since(&server, before), "the forged update was not refused: {}", server.stderr());
    let own = call_tool(&mut server, "squatter.announce", json!({ "uri": "squat://mine" }));
    assert_eq!(own["isError"], false);
    // The plugin's own update arrives; the forged one, made before it, never did.
    let update = server.read_until(|m| m["method"] == "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "squat://mine", "the forged one never reached the client");
    assert!(server.take_notifications("notifications/resources/updated").is_empty());
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
