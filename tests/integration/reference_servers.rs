//! The bundled plugins against the official reference servers they replace (issue 16): each
//! reference server, installed pinned by `scripts/setup-reference-servers.sh`, and mcpbox
//! serving the plugin with the reference's names (`prefix = ""`) are driven over stdio by the
//! official MCP Python SDK (`tests/clients/reference_compat.py`): the same tool lists (names,
//! argument names, types, required arguments, output schemas) and the same results for the
//! same calls (`tests/clients/reference_scenarios.py`), every difference listed.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{cache_dir, own, plugin, repo_root};

/// Node 22 and the reference servers' directory.
pub(crate) fn reference_servers() -> (String, String) {
    let setup = Command::new("bash")
        .arg(repo_root().join("scripts/setup-reference-servers.sh"))
        .output()
        .expect("cannot run scripts/setup-reference-servers.sh");
    assert!(
        setup.status.success(),
        "installing the reference servers failed: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let printed = String::from_utf8(setup.stdout).unwrap();
    let (node, dir) = printed.trim().split_once(' ').expect("NODE DIR");
    (node.to_owned(), dir.to_owned())
}

/// Writes the config serving `name` alone with the reference's names, then runs the
/// comparison described by `spec` (to which the mcpbox side is added).
fn compare(name: &str, dir: &Path, plugin_section: &str, mcpbox_args: &[&str], spec: Value) {
    compare_with(name, &plugin(name), dir, plugin_section, mcpbox_args, spec);
}

/// [`compare`] for the component `wasm` served as `name` (a server built by `mcpbox build`);
/// the scenario is `spec["scenario"]` if given, else `name`'s.
pub(crate) fn compare_with(
    name: &str,
    wasm: &Path,
    dir: &Path,
    plugin_section: &str,
    mcpbox_args: &[&str],
    mut spec: Value,
) {
    let config = dir.join("mcpbox.toml");
    std::fs::write(
        &config,
        format!("plugins = [{:?}]\n\n[plugin.{name}]\nprefix = \"\"\n{plugin_section}", wasm.display()),
    )
    .unwrap();
    let mut args =
        vec!["serve".to_owned(), "--no-watch".to_owned(), "--config".to_owned(), config.display().to_string()];
    args.extend(mcpbox_args.iter().map(|a| a.to_string()));
    spec["plugin"] = json!(name);
    // The server's own state directories (the client starts it with this environment).
    let own = own::OwnDirs::for_server();
    let mut env: serde_json::Map<String, Value> =
        own.variables().into_iter().map(|(variable, value)| (variable.to_owned(), json!(value))).collect();
    env.insert("MCPBOX_CACHE_DIR".into(), json!(cache_dir()));
    spec["mcpbox"] = json!({
        "command": env!("CARGO_BIN_EXE_mcpbox"),
        "args": args,
        "env": env,
        "stderr": dir.join("mcpbox.stderr"),
    });
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let (_, servers) = reference_servers();
    let output = Command::new(format!("{servers}/venv/bin/python"))
        .arg(repo_root().join("tests/clients/reference_compat.py"))
        .arg(&spec_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("match the reference server"),
        "{name}: {stdout}\n{}\nmcpbox's log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(dir.join("mcpbox.stderr")).unwrap_or_default()
    );
}

/// The memory scenario's spec in `dir`: the reference server with its file in `dir/ref`, and
/// the directory mcpbox's side keeps its file in (`dir/box`, returned).
pub(crate) fn memory_spec(dir: &Path) -> (Value, std::path::PathBuf) {
    let (node, servers) = reference_servers();
    let (ours, theirs) = (dir.join("box"), dir.join("ref"));
    std::fs::create_dir(&ours).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let mut reference = node_server(&node, &servers, "server-memory", &[]);
    reference["env"] = json!({"MEMORY_FILE_PATH": theirs.join("memory.jsonl")});
    let spec = json!({
        "memory_files": {"reference": theirs.join("memory.jsonl"), "mcpbox": ours.join("memory.jsonl")},
        "reference": reference,
    });
    (spec, ours)
}

pub(crate) fn node_server(node: &str, servers: &str, package: &str, args: &[&str]) -> Value {
    let mut all = vec![format!("{servers}/node_modules/@modelcontextprotocol/{package}/dist/index.js")];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({"command": node, "args": all})
}

/// Every filesystem tool on the same tree, with host paths: mcpbox mounts its grant at the
/// host path (`host_paths = true`), as the reference reads its command line.
#[test]
fn filesystem_matches_the_reference_server() {
    let (node, servers) = reference_servers();
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = (dir.path().join("box"), dir.path().join("ref"));
    let mut reference = node_server(&node, &servers, "server-filesystem", &[theirs.to_str().unwrap()]);
    // Dates print in the process's zone; the sandbox's is UTC.
    reference["env"] = json!({"TZ": "UTC"});
    let spec = json!({"roots": {"reference": theirs, "mcpbox": ours}, "reference": reference});
    // The scenario fills both trees; mcpbox's grant must exist when it starts.
    std::fs::create_dir(&ours).unwrap();
    compare("filesystem", dir.path(), "host_paths = true\n", &["--root-rw", ours.to_str().unwrap()], spec);
}

/// The knowledge graph across a sequence of edits, from a file in the reference's format; the
/// two files end the same; concurrent writers lose nothing.
#[test]
fn memory_matches_the_reference_server() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, ours) = memory_spec(dir.path());
    let section = format!("roots = false\n\n[[plugin.memory.dirs]]\npath = {:?}\nwritable = true\n", ours.display());
    compare("memory", dir.path(), &section, &[], spec);
}

/// Time zones, conversions (fractional offsets, clock changes, bad input), current times.
#[test]
fn time_matches_the_reference_server() {
    let (_, servers) = reference_servers();
    let dir = tempfile::tempdir().unwrap();
    let reference =
        json!({"command": format!("{servers}/venv/bin/mcp-server-time"), "args": ["--local-timezone", "Etc/UTC"]});
    compare("time", dir.path(), "", &[], json!({ "reference": reference }));
}

/// A sequence of thoughts with revisions and branches; the history in a directory of the
/// operator's.
#[test]
fn sequential_thinking_matches_the_reference_server() {
    let (node, servers) = reference_servers();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let section = format!(
        "roots = false\n\n[[plugin.sequential-thinking.dirs]]\npath = {:?}\nwritable = true\ncreate = true\n",
        state.display()
    );
    let reference = node_server(&node, &servers, "server-sequential-thinking", &[]);
    compare("sequential-thinking", dir.path(), &section, &[], json!({ "reference": reference }));
}

/// What `scripts/run.sh` serves (the bundled config, the current directory granted; fetch
/// granted the network as the README shows), to the official Python SDK: a tool of each
/// bundled plugin answers, with a fresh `HOME` whose data directories the config creates.
#[test]
fn the_bundled_set_serves_every_plugin_to_the_python_sdk() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "one\ntwo").unwrap();
    let script = r#"
import asyncio, os, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(mcpbox, config, project, url):
    server = StdioServerParameters(command=mcpbox, args=["serve", "--config", config, "--root", project], env=dict(os.environ))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        calls = [
            ("filesystem.read_text_file", {"path": os.path.join(project, "notes.txt"), "tail": 1}),
            ("memory.create_entities", {"entities": [{"name": "mcpbox", "entityType": "server", "observations": ["bundled"]}]}),
            ("memory.search_nodes", {"query": "bundled"}),
            ("time.convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"}),
            ("sequential-thinking.sequentialthinking", {"thought": "t", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}),
            ("textstats.sha256", {"path": "notes.txt"}),
            ("fetch.fetch", {"url": url}),
        ]
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            print(name, (result.structured_content or {}).get("content") or result.content[0].text[:80].replace("\n", " "))

asyncio.run(main(*sys.argv[1:]))
"#;
    // The bundled config, with fetch granted the network as the README shows, plus private
    // addresses for the page this test serves on loopback.
    let bundled = crate::common::bundled();
    let config = std::fs::read_to_string(bundled.join("mcpbox.toml"))
        .unwrap()
        .replace("plugins = [\".\"]", &format!("plugins = [{:?}]", bundled.display()))
        .replace("# network = [\"*\"]", "network = [\"*\"]\nallow_private_network = true");
    assert!(config.contains("allow_private_network"), "the bundled config shows how to grant fetch the network");
    let config_path = home.path().join("mcpbox.toml");
    std::fs::write(&config_path, config).unwrap();
    let page = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", page.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in page.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let read = stream.read(&mut request).unwrap_or(0);
            let body = if String::from_utf8_lossy(&request[..read]).starts_with("GET /robots.txt") {
                ""
            } else {
                "<html><body><h1>Served</h1><p>locally</p></body></html>"
            };
            let status = if body.is_empty() { "404 Not Found" } else { "200 OK" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let mut client = Command::new(crate::common::python_sdk());
    client.arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_mcpbox")).arg(&config_path).arg(&project).arg(&url);
    let _own = crate::common::owned_server(&mut client);
    // The HOME the config's `~` paths resolve in, which the test reads back.
    let output = client.env("HOME", home.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("filesystem.read_text_file two"), "{stdout}");
    assert!(stdout.contains("time.convert_time"), "{stdout}");
    assert!(stdout.contains("fetch.fetch Contents of http://127.0.0.1:"), "{stdout}");
    assert!(stdout.contains("# Served"), "{stdout}");
    // The memory graph went to the per-user data directory the config names.
    let graph = std::fs::read_to_string(home.path().join(".local/share/mcpbox/memory/memory.jsonl")).unwrap();
    assert!(graph.contains("\"name\":\"mcpbox\""), "{graph}");
    assert!(home.path().join(".local/share/mcpbox/sequential-thinking/history.json").exists());
}

/// Web pages as Markdown (articles, documentation, tables, lists, forms, entities), plain text,
/// JSON, `max_length`, `start_index`, `raw`, a redirect, a robots.txt that forbids a path, a
/// missing page, from a web server on loopback: private addresses are allowed for this test
/// only (`allow_private_network`, the reference's `--allow-private-ips`). The reference runs
/// without Node.js on its PATH, so it simplifies pages with readabilipy's Python code, as the
/// plugin does (with Node.js it would use Readability.js).
#[test]
fn fetch_matches_the_reference_server() {
    let (_, servers) = reference_servers();
    let dir = tempfile::tempdir().unwrap();
    let reference = json!({
        "command": format!("{servers}/venv/bin/mcp-server-fetch"),
        "args": ["--allow-private-ips"],
        "env": {"PATH": format!("{servers}/venv/bin")},
    });
    let section = "network = [\"*\"]\nallow_private_network = true\nroots = false\n";
    compare("fetch", dir.path(), section, &[], json!({ "reference": reference }));
}
