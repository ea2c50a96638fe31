//! Plugins in Rust, Python and JavaScript, made by running the guides (docs/rust.md,
//! docs/python.md, docs/javascript.md) as written: `mcpbox new hello --lang ...`, the one build
//! command, `mcpbox inspect`, `mcpbox serve`; then served by mcpbox and called like any plugin.
//! The templates' code is `examples/hello`, `examples/python` and `examples/js`: one plugin in
//! three languages, shown whole in the guides.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

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
    let guide = crate::docs::run_document("docs/rust.md");
    let wasm = guide.cwd.join("target/wasm32-wasip2/release/hello.wasm");
    let mut server = Server::start(&[&wasm]);
    server.initialize("2025-06-18", json!({}));
    assert!(server.wait_for_log("instance memory: copied (the largest plugin", WAIT), "{}", server.stderr());
    assert_common_surface(&mut server, "hello", "rust://about", "Rust");
    // serde's errors reach the model with the field's path, not the parser's offsets.
    let wrong = call_tool(&mut server, "hello.greet", json!({ "name": "Ann", "style": "loud" }));
    assert_eq!(
        text(&wrong),
        "plugin `hello` rejected the arguments: `style`: unknown variant `loud`, expected `plain` or `excited`"
    );
    let quoted = text(&wrong).replace("plugin `hello`", "plugin `x`");
    let troubleshooting = std::fs::read_to_string(repo_root().join("docs/troubleshooting.md")).unwrap();
    assert!(troubleshooting.contains(&quoted), "docs/troubleshooting.md should quote `{quoted}`");

    let again = mcpbox("new").args(["hello", "--dir"]).arg(guide.dir.path()).output().unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists already"));
}

#[test]
fn a_python_plugin_made_from_the_template_builds_and_serves() {
    let guide = crate::docs::run_document("docs/python.md");
    let wasm = guide.cwd.join("hello.wasm");
    let granted = temp_dir();
    std::fs::write(granted.path().join("notes.txt"), "first\nsecond\nthird\n").unwrap();
    let secret = temp_dir();
    std::fs::write(secret.path().join("secret.txt"), "not for plugins").unwrap();

    let mut server = Server::start(&[wasm.as_os_str(), "--root".as_ref(), granted.path().as_os_str()]);
    server.initialize("2025-06-18", json!({}));
    // An interpreter plugin: instances map its memory image copy-on-write (engine.rs says why).
    assert!(server.wait_for_log("instance memory: copy-on-write (the largest plugin", WAIT), "{}", server.stderr());
    assert_common_surface(&mut server, "hello", "python://about", "Python");
    // The helper module's own check, as docs/troubleshooting.md quotes it (for a plugin `x`).
    let wrong = call_tool(&mut server, "hello.greet", json!({ "name": "Ann", "style": "loud" }));
    let quoted = text(&wrong).replace("plugin `hello`", "plugin `x`");
    let troubleshooting = std::fs::read_to_string(repo_root().join("docs/troubleshooting.md")).unwrap();
    assert!(troubleshooting.contains(&quoted), "docs/troubleshooting.md should quote `{quoted}`");

    // Python's own open() inside the sandbox: the granted directory only.
    let root = format!("/roots/{}", granted.path().file_name().unwrap().to_str().unwrap());
    let head = call_tool(&mut server, "hello.head", json!({ "path": format!("{root}/notes.txt"), "lines": 2 }));
    assert_eq!(text(&head), "first\nsecond\n", "{head}");
    let outside = secret.path().join("secret.txt");
    let escape = call_tool(&mut server, "hello.head", json!({ "path": outside.to_str().unwrap() }));
    assert_eq!(escape["isError"], true, "{escape}");
    assert!(!text(&escape).contains("not for plugins"));
    let escape = call_tool(&mut server, "hello.head", json!({ "path": format!("{root}/../{}", outside.display()) }));
    assert_eq!(escape["isError"], true, "{escape}");
    // A check in the function body (`raise InvalidArguments`) and a type mismatch.
    let zero = call_tool(&mut server, "hello.head", json!({ "path": format!("{root}/notes.txt"), "lines": 0 }));
    assert!(text(&zero).contains("`lines` must be at least 1"), "{zero}");
    let typed = call_tool(&mut server, "hello.head", json!({ "path": format!("{root}/notes.txt"), "lines": "2" }));
    assert!(text(&typed).contains("`lines` must be of type integer"), "{typed}");
}

#[test]
fn a_javascript_plugin_made_from_the_template_builds_and_serves() {
    let guide = crate::docs::run_document("docs/javascript.md");
    let wasm = guide.cwd.join("hello.wasm");

    // Built without the http and fetch-event features: it loads with no network grant.
    let inspected = mcpbox("inspect").arg(&wasm).output().unwrap();
    let report = String::from_utf8_lossy(&inspected.stdout);
    assert!(inspected.status.success() && !report.contains("wasi:http"), "{report}");

    let mut server = Server::start(&[&wasm]);
    server.initialize("2025-06-18", json!({}));
    assert_common_surface(&mut server, "hello", "js://about", "JavaScript");

    let repeated = call_tool(&mut server, "hello.repeat", json!({ "word": "la", "times": 3 }));
    assert_eq!(text(&repeated), "la la la");
    let thrown = call_tool(&mut server, "hello.repeat", json!({ "word": "la", "times": 0 }));
    assert_eq!(thrown["isError"], true);
    assert!(text(&thrown).contains("`times` must be between 1 and 100"), "{thrown}");
    let typed = call_tool(&mut server, "hello.repeat", json!({ "word": "la", "times": 1.5 }));
    assert!(text(&typed).contains("`times` must be an integer"), "{typed}");
    // The same plugin answers a stateless 2026-07-28 request.
    let modern_call =
        server.result("tools/call", modern(json!({ "name": "hello.greet", "arguments": { "name": "Zoe" } })));
    assert_eq!(text(&modern_call), "Hello, Zoe.");
}

/// Builds a helper-module fixture (`tests/fixtures/{python,js}-helper`) beside a copy of its
/// helper module, with the builders `scripts/setup-componentize.sh` installs once per machine.
fn build_helper_fixture(lang: &str) -> PathBuf {
    let root = repo_root();
    let setup = Command::new("bash").arg(root.join("scripts/setup-componentize.sh")).arg(lang).output().unwrap();
    assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    let tool = PathBuf::from(String::from_utf8(setup.stdout).unwrap().trim());
    let dir = own::scratch(&format!("helper-fixture-{lang}"));
    let (output, mut command) = if lang == "python" {
        std::fs::copy(root.join("tests/fixtures/python-helper/app.py"), dir.join("app.py")).unwrap();
        std::fs::copy(root.join("sdk/python/mcpbox.py"), dir.join("mcpbox.py")).unwrap();
        let mut command = Command::new(tool);
        command.arg("-d").arg(root.join("wit")).args([
            "-w",
            "described-plugin",
            "componentize",
            "app",
            "-o",
            "helper_py.wasm",
        ]);
        ("helper_py.wasm", command)
    } else {
        std::fs::copy(root.join("tests/fixtures/js-helper/app.js"), dir.join("app.js")).unwrap();
        std::fs::copy(root.join("sdk/js/mcpbox.js"), dir.join("mcpbox.js")).unwrap();
        std::fs::copy(root.join("examples/js/build.mjs"), dir.join("build.mjs")).unwrap();
        std::os::unix::fs::symlink(root.join("wit"), dir.join("wit")).unwrap();
        std::os::unix::fs::symlink(&tool, dir.join("node_modules")).unwrap();
        let mut command = Command::new("node");
        command.args(["build.mjs", "helper_js.wasm"]);
        ("helper_js.wasm", command)
    };
    // The builders keep caches of their own under HOME (wasmtime's): the test's, not the run's.
    let built = owned(&mut command).current_dir(&dir).output().unwrap();
    assert!(
        built.status.success(),
        "building the {lang} helper fixture failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    // Compiled ahead with `mcpbox compile`, as an operator would: a cold compile of 12 to
    // 19 MB takes about a minute in a debug build while other tests compile, longer than a
    // test waits for `initialize`.
    let compiled = mcpbox("compile").arg(dir.join(output)).output().unwrap();
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
    dir.join(output)
}

/// The helper modules' features beyond the examples, the same in Python and JavaScript.
fn assert_helper_surface(server: &mut Server, plugin: &str) {
    let v = "2025-06-18";
    let tools = server.result("tools/list", json!({}));
    assert_schema(v, "ListToolsResult", &tools);
    let measure = find(&tools["tools"], &format!("{plugin}.measure"));
    let route = &measure["inputSchema"]["properties"]["route"];
    assert_eq!(route["properties"]["points"]["items"]["properties"]["x"]["type"], "number", "{measure}");
    assert_eq!(route["required"], json!(["name", "points"]), "{measure}");
    assert_eq!(measure["inputSchema"]["required"], json!(["route"]));

    let route = json!({ "name": "walk", "points": [{ "x": 0, "y": 0 }, { "x": 3, "y": 4 }], "tags": ["short"] });
    let measured = call_tool(server, &format!("{plugin}.measure"), json!({ "route": route, "scale": 2 }));
    assert_schema(v, "CallToolResult", &measured);
    let structured = &measured["structuredContent"];
    // JavaScript has one number type: 10.0 comes out as 10.
    assert_eq!(structured["length"].as_f64(), Some(10.0), "{measured}");
    assert_eq!(structured["name"], "walk");
    assert_eq!(structured["tags"], json!(["short"]));
    assert_eq!(structured["note"], Value::Null);
    let bad_point = json!({ "name": "walk", "points": [{ "x": 0, "y": 0 }, { "x": "far", "y": 4 }] });
    let refused = call_tool(server, &format!("{plugin}.measure"), json!({ "route": bad_point }));
    assert_eq!(refused["isError"], true);
    assert!(text(&refused).contains("`route.points[1].x`"), "{refused}");

    // Host services through the helper: progress and a structured log message.
    server.result("logging/setLevel", json!({ "level": "info" }));
    let id = server.fresh_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": format!("{plugin}.busy"), "arguments": { "steps": 3 }, "_meta": { "progressToken": "p" } } }));
    let (mut progress, mut logs) = (Vec::new(), Vec::new());
    loop {
        let message = server.read(WAIT).expect("no message");
        if message["id"] == id {
            assert_eq!(text(&message["result"]), "done");
            break;
        }
        match message["method"].as_str() {
            Some("notifications/progress") => progress.push(message["params"]["progress"].as_f64().unwrap()),
            Some("notifications/message") => logs.push(message["params"].clone()),
            _ => panic!("unexpected {message}"),
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(logs, [json!({ "level": "info", "logger": "busy", "data": { "steps": 3 } })]);

    let failed = call_tool(server, &format!("{plugin}.fail"), json!({ "message": "boom" }));
    assert_eq!(failed["isError"], true);
    assert!(text(&failed).contains("boom"), "{failed}");

    // A host call that fails (this client offers no sampling) fails the tool with its message.
    let asked = call_tool(server, &format!("{plugin}.ask"), json!({ "question": "why?" }));
    assert_eq!(asked["isError"], true);
    assert_eq!(text(&asked), format!("plugin `{plugin}` failed: the client does not offer sampling/createMessage"));

    let pixel = call_tool(server, &format!("{plugin}.pixel"), json!({}));
    assert_schema(v, "CallToolResult", &pixel);
    assert_eq!(pixel["content"][0], json!({ "type": "image", "data": "iVBORw0K", "mimeType": "image/png" }));
    assert_eq!(pixel["content"][1]["text"], "a pixel");

    let blob = server.result("resources/read", json!({ "uri": "blob://abc" }));
    assert_eq!(
        blob["contents"][0],
        json!({ "uri": "blob://abc", "mimeType": "application/octet-stream", "blob": "YWJj" })
    );
    let missing = server.call("resources/read", json!({ "uri": "blob://missing" }));
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    let dialogue =
        server.result("prompts/get", json!({ "name": format!("{plugin}.dialogue"), "arguments": { "topic": "wasm" } }));
    assert_schema(v, "GetPromptResult", &dialogue);
    let roles: Vec<&str> =
        dialogue["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(dialogue["messages"][0]["content"]["text"], "Tell me about wasm.");

    let completed = server.result(
        "completion/complete",
        json!({ "ref": { "type": "ref/prompt", "name": format!("{plugin}.dialogue") }, "argument": { "name": "topic", "value": "py" } }),
    );
    assert_eq!(completed["completion"]["values"], json!(["python", "pytest"]));

    // WIT 0.1.3 through the helper: `_meta` and an icon, an app, instructions, a skill, and
    // the `_meta` of a result (a reserved key refused with the host's reason).
    assert_eq!(measure["_meta"], json!({ "com.example/unit": "m" }), "{measure}");
    assert_eq!(measure["icons"][0]["mimeType"], "image/svg+xml", "{measure}");
    let pixel_tool = find(&tools["tools"], &format!("{plugin}.pixel"));
    assert_eq!(pixel_tool["_meta"], json!({ "ui": { "resourceUri": "ui://helper/app" } }));
    let app = server.result("resources/read", json!({ "uri": "ui://helper/app" }));
    assert_eq!(app["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(app["contents"][0]["_meta"], json!({ "ui": { "prefersBorder": true } }));
    let skill = server.result("skills/get", json!({ "uri": format!("skill://{plugin}/routes/SKILL.md") }));
    assert_eq!(skill["skill"]["frontmatter"]["description"], "Measure routes");
    let traced = call_tool(server, &format!("{plugin}.traced"), json!({ "trace": "t1" }));
    assert_eq!(traced["_meta"], json!({ "com.example/trace": "t1" }), "{traced}");
    assert!(text(&traced).starts_with("refused: ") && text(&traced).contains("prefix MCP reserves"), "{traced}");
}

/// The helper modules' keyed questions and saved state (0.1.1), in 2026-07-28 requests: both
/// questions in one round under their keys, and the number picked in the first round is the one
/// kept in the second; a client that cannot answer is not asked.
fn assert_helper_rounds(wasm: &std::path::Path, plugin: &str) {
    let mut server = Server::start(&[wasm]);
    let mut params = modern(json!({ "name": format!("{plugin}.pick"), "arguments": {} }));
    let silent = server.result("tools/call", params.clone());
    assert!(text(&silent).starts_with("cannot ask about "), "{silent}");
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({ "elicitation": {}, "sampling": {} });
    let first = server.call("tools/call", params.clone());
    let questions = &first["result"]["inputRequests"];
    assert_eq!(questions.as_object().map(|q| q.len()), Some(2), "{first}");
    let message = questions["keep"]["params"]["message"].as_str().unwrap_or_else(|| panic!("{first}"));
    let number = message.trim_start_matches("Keep ").trim_end_matches('?');
    assert_eq!(questions["comment"]["method"], "sampling/createMessage", "{first}");
    params["requestState"] = first["result"]["requestState"].clone();
    params["inputResponses"] = json!({
        "keep": { "action": "accept", "content": { "keep": true } },
        "comment": { "role": "assistant", "content": { "type": "text", "text": "a fine number" }, "model": "m" },
    });
    let done = server.result("tools/call", params);
    assert_eq!(text(&done), format!("kept {number}: a fine number"));
}

#[test]
fn the_python_helper_module_maps_nested_types_content_and_host_services() {
    let wasm = build_helper_fixture("python");
    let dir = temp_dir();
    let mut server = Server::start(&[
        wasm.as_os_str(),
        "--root-rw".as_ref(),
        dir.path().as_os_str(),
        "--max-write-mib".as_ref(),
        "1".as_ref(),
    ]);
    server.initialize("2025-06-18", json!({}));
    assert_helper_surface(&mut server, "helper_py");
    // A Python plugin's open().write() past the call's write budget fails (EIO: wasi-libc's
    // write() does not ask the stream's error code, which says `quota`); the file holds what
    // was written before, up to the budget, and earlier files are intact.
    let root = format!("/roots/{}", dir.path().file_name().unwrap().to_string_lossy());
    let small = call_tool(&mut server, "helper_py.fill", json!({ "path": format!("{root}/small"), "nbytes": 1000 }));
    assert_eq!(text(&small), "wrote 1000 bytes");
    let big = call_tool(&mut server, "helper_py.fill", json!({ "path": format!("{root}/big"), "nbytes": 2 << 20 }));
    let held = std::fs::metadata(dir.path().join("big")).unwrap().len();
    assert!(held <= 1 << 20, "at most the budget was written: {held}");
    assert_eq!(text(&big), format!("error EIO; the file holds {held} bytes"), "{big}");
    assert_eq!(std::fs::metadata(dir.path().join("small")).unwrap().len(), 1000, "earlier data intact");
    assert!(server.wait_for_log("refused a write", LOGGED), "{}", server.stderr());
    assert_helper_rounds(&wasm, "helper_py");
    assert_helper_calls(&wasm, "helper_py");
}

#[test]
fn the_javascript_helper_module_maps_nested_types_content_and_host_services() {
    let wasm = build_helper_fixture("js");
    let mut server = Server::start(&[&wasm]);
    server.initialize("2025-06-18", json!({}));
    assert_helper_surface(&mut server, "helper_js");
    assert_helper_rounds(&wasm, "helper_js");
    assert_helper_calls(&wasm, "helper_js");
}

/// WIT 0.1.4 through the helper: `callable_tools`/`callableTools` and `call_tool`/`callTool`,
/// the refusal of a tool the operator did not list raised to the plugin.
fn assert_helper_calls(wasm: &Path, plugin: &str) {
    let config = ConfigFile::new(&format!(
        "plugins = [{wasm:?}, {:?}]\n[plugin.{plugin}]\nmay_call = [\"echo.*\"]\n",
        fixture("echo")
    ));
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    let relayed = call_tool(&mut server, &format!("{plugin}.relay"), json!({ "tool": "echo.echo", "text": "hi" }));
    assert_eq!(text(&relayed), "[echo.echo] hi", "{relayed}");
    let refused =
        call_tool(&mut server, &format!("{plugin}.relay"), json!({ "tool": format!("{plugin}.measure"), "text": "x" }));
    assert_eq!(
        text(&refused),
        format!(
            "[echo.echo] refused: plugin `{plugin}` may not call `{plugin}.measure`: the operator lists the tools \
             it may call in [plugin.{plugin}] may_call"
        )
    );
}
