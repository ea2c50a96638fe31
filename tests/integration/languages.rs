//! Plugins in Rust, Python and JavaScript, made the way the guides (docs/rust.md,
//! docs/python.md, docs/javascript.md) say: `mcpbox new NAME --lang ...`, the template's one
//! build command, then served by mcpbox and called like any plugin. The templates' code is
//! `examples/hello`, `examples/python` and `examples/js`: one plugin in three languages.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// Creates a plugin from the template and runs its build commands; returns the component.
fn build_from_template(dir: &Path, name: &str, lang: &str, commands: &[&[&str]]) -> PathBuf {
    let created = mcpbox("new").args([name, "--lang", lang, "--dir"]).arg(dir).output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let project = dir.join(name);
    for command in commands {
        let output = Command::new(command[0]).args(&command[1..]).current_dir(&project).output().unwrap();
        assert!(
            output.status.success(),
            "`{}` failed in the {lang} template:\n{}\n{}",
            command.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let wasm = project.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "the {lang} template's build made no {}", wasm.display());
    wasm
}

/// What the examples in all three languages offer: a tool with an enum argument, a tool with
/// structured output, a resource, a resource template and a prompt. Error messages differ by
/// language (serde's, or the helper module's); each must name the offending argument.
fn assert_common_surface(server: &mut Server, plugin: &str, about_uri: &str, language: &str) {
    let v = "2025-06-18";
    let tools = server.result("tools/list", json!({}));
    assert_schema(v, "ListToolsResult", &tools);
    let greet = find(&tools["tools"], &format!("{plugin}.greet"));
    assert_eq!(greet["description"], "Greets someone by name.");
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    assert_eq!(greet["inputSchema"]["properties"]["name"]["description"], "Who to greet.");
    assert_eq!(greet["inputSchema"]["properties"]["style"]["enum"], json!(["plain", "excited"]));
    assert_eq!(greet["annotations"]["readOnlyHint"], true);

    let hello = call_tool(server, &format!("{plugin}.greet"), json!({ "name": "Ann", "style": "excited" }));
    assert_eq!(hello["isError"], false, "{hello}");
    assert_eq!(text(&hello), "Hello, Ann!");
    let wrong = call_tool(server, &format!("{plugin}.greet"), json!({ "name": "Ann", "style": "loud" }));
    assert_eq!(wrong["isError"], true);
    assert!(text(&wrong).contains("loud") || text(&wrong).contains("`style`"), "{wrong}");
    let missing = call_tool(server, &format!("{plugin}.greet"), json!({}));
    assert_eq!(missing["isError"], true);
    assert!(text(&missing).contains("`name`"), "{missing}");

    let count = find(&tools["tools"], &format!("{plugin}.count"));
    assert_eq!(count["outputSchema"]["properties"]["words"]["type"], "integer", "{count}");
    let counted = call_tool(server, &format!("{plugin}.count"), json!({ "text": "one two\nthree" }));
    assert_schema(v, "CallToolResult", &counted);
    assert_eq!(counted["structuredContent"], json!({ "lines": 2, "words": 3, "characters": 13 }));

    let resources = server.result("resources/list", json!({}));
    assert_schema(v, "ListResourcesResult", &resources);
    assert_eq!(resources["resources"][0]["uri"], about_uri);
    let about = server.result("resources/read", json!({ "uri": about_uri }));
    assert!(about["contents"][0]["text"].as_str().unwrap().contains(language), "{about}");
    let templates = server.result("resources/templates/list", json!({}));
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "greeting://{name}");
    let greeting = server.result("resources/read", json!({ "uri": "greeting://Bob" }));
    assert_eq!(greeting["contents"][0]["text"], "Hello, Bob.");

    let prompts = server.result("prompts/list", json!({}));
    assert_schema(v, "ListPromptsResult", &prompts);
    let review = &prompts["prompts"][0];
    assert_eq!(review["name"], format!("{plugin}.review"));
    assert_eq!(
        review["arguments"][0],
        json!({ "name": "code", "description": "The code to review.", "required": true })
    );
    assert_eq!(review["arguments"][1]["required"], false);
    let prompt =
        server.result("prompts/get", json!({ "name": format!("{plugin}.review"), "arguments": { "code": "x = 1" } }));
    assert_schema(v, "GetPromptResult", &prompt);
    assert_eq!(prompt["messages"][0]["content"]["text"], "Review this code, looking at correctness first:\n\nx = 1");
    let no_code = server.call("prompts/get", json!({ "name": format!("{plugin}.review"), "arguments": {} }));
    assert!(no_code["error"]["message"].as_str().unwrap().contains("`code`"), "{no_code}");
}

fn find<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no tool {name}: {tools}"))
}

#[test]
fn a_rust_plugin_made_from_the_template_builds_and_serves() {
    guests(); // the guest toolchain is set up, and the shared guest target dir holds the SDK's deps
    let dir = temp_dir();
    let created = mcpbox("new").args(["my-tool", "--dir"]).arg(dir.path()).output().unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let project = dir.path().join("my-tool");
    // The one command (through the wrapper that picks the installed wasm32-wasip2 toolchain),
    // with the repository's guest target dir so that the SDK's dependencies are not compiled
    // again.
    let target = repo_root().join("plugins/target");
    let built = Command::new("bash")
        .arg(repo_root().join("scripts/cargo-wasip2"))
        .args(["build", "--release", "--quiet"])
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(built.success(), "the template does not build");
    let wasm = dir.path().join("my_tool.wasm");
    std::fs::copy(target.join("wasm32-wasip2/release/my_tool.wasm"), &wasm).unwrap();
    let mut server = Server::start(&[&wasm]);
    server.initialize("2025-06-18", json!({}));
    assert_common_surface(&mut server, "my_tool", "rust://about", "Rust");

    let again = mcpbox("new").args(["my-tool", "--dir"]).arg(dir.path()).output().unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists already"));
}

#[test]
fn a_python_plugin_made_from_the_template_builds_and_serves() {
    let dir = temp_dir();
    let wasm = build_from_template(dir.path(), "pyhello", "python", &[&["./build.sh"]]);
    let granted = temp_dir();
    std::fs::write(granted.path().join("notes.txt"), "first\nsecond\nthird\n").unwrap();
    let secret = temp_dir();
    std::fs::write(secret.path().join("secret.txt"), "not for plugins").unwrap();

    let mut server = Server::start(&[wasm.as_os_str(), "--root".as_ref(), granted.path().as_os_str()]);
    server.initialize("2025-06-18", json!({}));
    assert_common_surface(&mut server, "pyhello", "python://about", "Python");

    // Python's own open() inside the sandbox: the granted directory only.
    let root = format!("/roots/{}", granted.path().file_name().unwrap().to_str().unwrap());
    let head = call_tool(&mut server, "pyhello.head", json!({ "path": format!("{root}/notes.txt"), "lines": 2 }));
    assert_eq!(text(&head), "first\nsecond\n", "{head}");
    let outside = secret.path().join("secret.txt");
    let escape = call_tool(&mut server, "pyhello.head", json!({ "path": outside.to_str().unwrap() }));
    assert_eq!(escape["isError"], true, "{escape}");
    assert!(!text(&escape).contains("not for plugins"));
    let escape = call_tool(&mut server, "pyhello.head", json!({ "path": format!("{root}/../{}", outside.display()) }));
    assert_eq!(escape["isError"], true, "{escape}");
    // A check in the function body (`raise InvalidArguments`) and a type mismatch.
    let zero = call_tool(&mut server, "pyhello.head", json!({ "path": format!("{root}/notes.txt"), "lines": 0 }));
    assert!(text(&zero).contains("`lines` must be at least 1"), "{zero}");
    let typed = call_tool(&mut server, "pyhello.head", json!({ "path": format!("{root}/notes.txt"), "lines": "2" }));
    assert!(text(&typed).contains("`lines` must be of type integer"), "{typed}");
}

#[test]
fn a_javascript_plugin_made_from_the_template_builds_and_serves() {
    let dir = temp_dir();
    let install: &[&str] = &["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"];
    let wasm = build_from_template(dir.path(), "jshello", "js", &[install, &["npm", "run", "build"]]);

    // Built without the http and fetch-event features: it loads with no network grant.
    let inspected = mcpbox("inspect").arg(&wasm).output().unwrap();
    let report = String::from_utf8_lossy(&inspected.stdout);
    assert!(inspected.status.success() && !report.contains("wasi:http"), "{report}");

    let mut server = Server::start(&[&wasm]);
    server.initialize("2025-06-18", json!({}));
    assert_common_surface(&mut server, "jshello", "js://about", "JavaScript");

    let repeated = call_tool(&mut server, "jshello.repeat", json!({ "word": "la", "times": 3 }));
    assert_eq!(text(&repeated), "la la la");
    let thrown = call_tool(&mut server, "jshello.repeat", json!({ "word": "la", "times": 0 }));
    assert_eq!(thrown["isError"], true);
    assert!(text(&thrown).contains("`times` must be between 1 and 100"), "{thrown}");
    let typed = call_tool(&mut server, "jshello.repeat", json!({ "word": "la", "times": 1.5 }));
    assert!(text(&typed).contains("`times` must be an integer"), "{typed}");
    // The same plugin answers a stateless 2026-07-28 request.
    let modern_call =
        server.result("tools/call", modern(json!({ "name": "jshello.greet", "arguments": { "name": "Zoe" } })));
    assert_eq!(text(&modern_call), "Hello, Zoe.");
}
