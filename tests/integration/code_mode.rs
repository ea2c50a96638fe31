//! Code mode (the bundled `code` plugin, docs/code-mode.md): a script the model writes calls
//! the other served tools through the host and returns only what matters, in one call; it is
//! stopped by the usual limits when it loops, allocates without bound or looks for the
//! network; and a tool it may not call is a refusal it can catch. Driven by the official Python
//! SDK client over Streamable HTTP, 2026-07-28 (the principal's `describe` is in
//! `principals.rs`).

use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;

/// `code` and `filesystem` over `project`, the code plugin allowed the filesystem's reading
/// tools only, within tight limits.
fn config(project: &Path) -> ConfigFile {
    ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[[roots]]\npath = {project:?}\n\
         [plugin.filesystem]\nhost_paths = true\n\
         [plugin.code]\nroots = false\nmay_call = [\"filesystem.list_*\", \"filesystem.read_*\"]\n\
         timeout_ms = 3000\nmemory_mib = 64\n",
        plugin("code"),
        plugin("filesystem"),
    ))
}

/// Asks `code.describe`, then runs each script with `code.run`, through the Python SDK; one
/// JSON line per call: `{"error": bool, "structured": ..., "text": ...}`.
fn run_scripts(url: &str, scripts: &[&str]) -> Vec<Value> {
    let program = format!(
        r#"
import asyncio, json, sys
from mcp import Client

async def main():
    async with Client({url:?}, mode="2026-07-28") as client:
        calls = [("code.describe", {{}})] + [("code.run", {{"script": s}}) for s in json.loads(sys.argv[1])]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = "\n".join(block.text for block in result.content if block.type == "text")
            print(json.dumps({{"error": result.is_error, "structured": result.structured_content, "text": text}}))

asyncio.run(main())
"#
    );
    let output = std::process::Command::new(python_sdk())
        .args(["-c", &program, &serde_json::to_string(scripts).unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn a_script_lists_reads_three_files_and_counts_their_words_in_one_call() {
    let project = temp_dir();
    for (name, text) in [("a.txt", "one two"), ("b.txt", "three four five"), ("c.txt", "six"), ("d.txt", "not read")] {
        std::fs::write(project.path().join(name), text).unwrap();
    }
    let config = config(project.path());
    let (_server, url) = Server::start_http(&config.args());
    let root = project.path().canonicalize().unwrap();
    let script = format!(
        r#"const root = {root:?};
const {{ content }} = await tools.filesystem.list_directory({{ path: root }});
const files = content.split('\n').filter((line) => line.startsWith('[FILE] ')).map((line) => line.slice(7)).sort().slice(0, 3);
let words = 0;
for (const file of files) {{
  const read = await tools.filesystem.read_text_file({{ path: `${{root}}/${{file}}` }});
  words += read.content.split(/\s+/).filter(Boolean).length;
}}
console.log(`read ${{files.length}} files`);
return {{ files, words }};"#
    );
    // `split` and a global `match` run natively (the engine's own are quadratic), with the
    // language's semantics.
    let strings = r"const fs = await tools.filesystem; if (typeof fs.list_directory !== 'function') throw new Error('no proxy');
        return ['a,b,,c'.split(','), 'a1b2c'.split(/(\d)/), 'abc'.split(''), 'abc'.split(/(?:)/),
        ''.split(','), 'a b'.split(' ', 1), 'x'.match(/y/g), 'aXbx'.split(/x/i), 'tide ebb '.repeat(50000).match(/\S+/g).length]";
    let ran = run_scripts(&url, &[&script, strings]);
    // What the model learns first: the tools a script may call, as code.
    let described = ran[0]["text"].as_str().unwrap();
    assert!(
        described.contains("await tools.filesystem.read_text_file({ head?: number, path: string, tail?: number })"),
        "{described}"
    );
    assert!(!described.contains("write_file"), "{described}");
    assert_eq!(ran[1]["error"], false, "{}", ran[1]);
    assert_eq!(
        ran[1]["structured"],
        json!({ "result": { "files": ["a.txt", "b.txt", "c.txt"], "words": 6 }, "logs": ["read 3 files"] })
    );
    assert_eq!(
        ran[2]["structured"]["result"],
        json!([
            ["a", "b", "", "c"],
            ["a", "1", "b", "2", "c"],
            ["a", "b", "c"],
            ["a", "b", "c"],
            [""],
            ["a"],
            null,
            ["a", "b", ""],
            100000
        ])
    );
}

#[test]
fn a_script_is_stopped_by_the_usual_limits_and_a_refused_tool_is_an_exception() {
    let project = temp_dir();
    std::fs::write(project.path().join("a.txt"), "x").unwrap();
    let config = config(project.path());
    let (server, url) = Server::start_http(&config.args());
    let root = project.path().canonicalize().unwrap();
    let refused = format!(
        r#"try {{
  await tools.filesystem.write_file({{ path: {:?}, content: "y" }});
  return "wrote";
}} catch (error) {{
  return "caught: " + error.message;
}}"#,
        root.join("a.txt")
    );
    let ran = run_scripts(
        &url,
        &[
            "while (true) {}",
            "const block = 'x'.repeat(1 << 20); const held = []; while (true) held.push(block + held.length);",
            "return await fetch('https://example.com/');",
            "return await tools.fetch.fetch({ url: 'https://example.com/' });",
            &refused,
            "throw new Error('no such thing')",
        ],
    );
    let [_, looped, allocated, fetched, fetch_tool, caught, thrown] = ran.as_slice() else { panic!("{ran:?}") };
    assert_eq!(looped["error"], true);
    assert_eq!(looped["text"], "plugin `code` exceeded its time limit of 3 s", "{looped}");
    assert_eq!(allocated["error"], true);
    assert!(allocated["text"].as_str().unwrap().contains("exceeded its memory limit of 64 MiB"), "{allocated}");
    assert_eq!(fetched["text"], "Uncaught ReferenceError: fetch is not defined", "{fetched}");
    assert_eq!(
        fetch_tool["text"],
        "Uncaught Error: plugin `code` may not call `fetch.fetch`: the operator lists the tools it may call in \
         [plugin.code] may_call",
        "{fetch_tool}"
    );
    assert_eq!(caught["error"], false, "{caught}");
    assert!(
        caught["structured"]["result"]
            .as_str()
            .unwrap()
            .starts_with("caught: plugin `code` may not call `filesystem.write_file`"),
        "{caught}"
    );
    assert_eq!(std::fs::read_to_string(project.path().join("a.txt")).unwrap(), "x");
    assert_eq!(thrown["text"], "Uncaught Error: no such thing", "{thrown}");
    // The host stayed up through all of it.
    assert!(server.stderr().contains("code"), "{}", server.stderr());
}

/// With every tool allowed (`may_call = ["*"]`), `describe` lists what a script may call: not
/// `code.run` (a script calling it would be a cycle) nor `code.describe` itself.
#[test]
fn describe_lists_only_what_a_script_may_call() {
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}, {:?}]\n[plugin.code]\nmay_call = [\"*\"]\n",
        plugin("code"),
        plugin("time"),
    ));
    let mut server = config.serve();
    server.initialize("2025-11-25", json!({}));
    let described = text(&call_tool(&mut server, "code.describe", json!({})));
    assert!(described.contains("await tools.time.get_current_time("), "{described}");
    assert!(!described.contains("tools.code."), "{described}");
    let cycle =
        call_tool(&mut server, "code.run", json!({ "script": "return await tools.code.run({ script: 'return 1' })" }));
    assert_eq!(cycle["isError"], true, "a script calling code.run is refused: {cycle}");
}
