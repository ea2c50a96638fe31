//! Existing MCP servers made plugins by `mcpbox build` (issue 40): real servers from npm at
//! pinned versions, unmodified, built and then compared with the same server run natively by
//! the reference-compatibility harness (`reference_servers.rs`: the official Python SDK
//! client, the same tool schemas, the same results on recorded calls); servers that cannot
//! run sandboxed fail the build with their blockers; a built server's code gets exactly what
//! any plugin gets.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::repo_root;
use crate::reference_servers::{compare_with, node_server, reference_servers};

/// The npm versions the builds pin: the reference servers the harness already runs natively.
const REFERENCE_VERSION: &str = "2026.8.31";

/// Runs `mcpbox build SOURCE -o DIR/NAME.wasm` with the tests' Node and toolchain directory;
/// `(succeeded, stdout and stderr, the report)`.
fn build(source: &str, dir: &Path, name: &str) -> (bool, String, Value) {
    let (node, _) = reference_servers();
    let out = dir.join(format!("{name}.wasm"));
    let output = Command::new(env!("CARGO_BIN_EXE_mcpbox"))
        .args(["build", source, "--node", &node, "-o"])
        .arg(&out)
        .current_dir(dir)
        .env("MCPBOX_BUILD_TOOLS", repo_root().join("target/build-tools"))
        .env("MCPBOX_CACHE_DIR", repo_root().join("target/test-compile-cache"))
        .output()
        .expect("cannot run mcpbox build");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let report = std::fs::read_to_string(out.with_extension("compat.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (output.status.success(), text, report)
}

/// [`build`] that must succeed; the component's path and the report.
fn built(source: &str, dir: &Path, name: &str) -> (PathBuf, Value) {
    let (ok, text, report) = build(source, dir, name);
    assert!(ok, "mcpbox build {source} failed:\n{text}");
    (dir.join(format!("{name}.wasm")), report)
}

fn names(report: &Value, key: &str) -> Vec<String> {
    report[key].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
}

/// The memory server from npm, its graph in a granted directory named by its own variable
/// (`MEMORY_FILE_PATH`, which the report finds and suggests): every edit and query answers as
/// the native server's, and both files end byte for byte the same.
#[test]
fn the_memory_server_built_from_npm_matches_it_run_natively() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, report) =
        built(&format!("npm:@modelcontextprotocol/server-memory@{REFERENCE_VERSION}"), dir.path(), "memory");
    assert_eq!(report["sdk"]["package"], "@modelcontextprotocol/sdk", "{report:#}");
    assert!(names(&report, "tools").contains(&"create_entities".to_owned()), "{report:#}");
    assert!(report["environment"].to_string().contains("MEMORY_FILE_PATH"), "{report:#}");
    // What the section below sets, the report suggests: the variable, and one call at a time
    // (each call reads and rewrites the whole file; concurrent calls would lose writes).
    let suggested = report["suggested_config"].as_str().unwrap();
    assert!(suggested.contains("MEMORY_FILE_PATH") && suggested.contains("max_concurrency = 1"), "{suggested}");

    let (node, servers) = reference_servers();
    let (ours, theirs) = (dir.path().join("box"), dir.path().join("ref"));
    std::fs::create_dir(&ours).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let mut reference = node_server(&node, &servers, "server-memory", &[]);
    reference["env"] = json!({"MEMORY_FILE_PATH": theirs.join("memory.jsonl")});
    let spec = json!({
        "memory_files": {"reference": theirs.join("memory.jsonl"), "mcpbox": ours.join("memory.jsonl")},
        "reference": reference,
    });
    let section = format!(
        "roots = false\nmax_concurrency = 1\nenv = {{ MEMORY_FILE_PATH = \"/roots/data/memory.jsonl\" }}\n\n\
         [[plugin.memory.dirs]]\npath = {:?}\nname = \"data\"\nwritable = true\n",
        ours.display()
    );
    compare_with("memory", &wasm, dir.path(), &section, &[], spec);
}

/// The sequential-thinking server from npm: the same tool and the same answers, but for the
/// thought history it keeps in process memory, which a fresh instance per call starts empty
/// (the report says so for every build; `ThinkingBuilt` in reference_scenarios.py names the
/// two fields and leaves nothing else out).
#[test]
fn the_sequential_thinking_server_built_from_npm_matches_it_run_natively_but_for_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("npm:@modelcontextprotocol/server-sequential-thinking@{REFERENCE_VERSION}");
    let (wasm, report) = built(&source, dir.path(), "sequential-thinking");
    assert_eq!(names(&report, "tools"), ["sequentialthinking"], "{report:#}");
    assert!(report["notes"].to_string().contains("starts empty on every call"), "{report:#}");
    let (node, servers) = reference_servers();
    let reference = node_server(&node, &servers, "server-sequential-thinking", &[]);
    let spec = json!({ "reference": reference, "scenario": "sequential-thinking-built" });
    compare_with("sequential-thinking", &wasm, dir.path(), "roots = false\n", &[], spec);
}

/// The "everything" server from npm, the SDK's showcase: its tools, resources, templates and
/// prompts are listed; every tool whose result does not depend on a process outliving the
/// call or on the internet answers as natively (`Everything` in reference_scenarios.py names
/// the others and why), the files it reads next to its code embedded by the build.
#[test]
fn the_everything_server_built_from_npm_matches_it_run_natively_for_its_per_call_tools() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("npm:@modelcontextprotocol/server-everything@{REFERENCE_VERSION}");
    let (wasm, report) = built(&source, dir.path(), "everything");
    for key in ["tools", "resources", "resource_templates", "prompts"] {
        assert!(!names(&report, key).is_empty(), "no {key} listed: {report:#}");
    }
    assert!(report["embedded"].to_string().contains("docs/"), "its docs are not embedded: {report:#}");
    assert!(report["stubs"].to_string().contains("express"), "{report:#}");
    assert!(report["blockers"].as_array().is_some_and(Vec::is_empty), "{report:#}");
    let (node, servers) = reference_servers();
    let reference = node_server(&node, &servers, "server-everything", &["stdio"]);
    // It imports fetch (one tool downloads a file): no network, the stub that refuses.
    compare_with(
        "everything",
        &wasm,
        dir.path(),
        "roots = false\nstub_ungranted = true\n",
        &[],
        json!({ "reference": reference }),
    );
}
