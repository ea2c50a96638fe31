//! Existing Python MCP servers made plugins by `mcpbox build` (issue 40, tier 1: no native
//! code): real servers from PyPI at pinned versions, unmodified, built on mcpbox's pure-Python
//! stand-in for the MCP SDK, then compared with the same server run natively on the real SDK
//! (1.30.0) by the reference-compatibility harness; servers that need pydantic's native core
//! or other native extensions fail the build naming them.

use std::path::Path;

use serde_json::json;

use crate::common::repo_root;
use crate::existing_servers::{
    assert_absent, build, built, in_namespace, names, requests, serve_probe, standin_certificates, start_standin,
};
use crate::reference_servers::{compare_with, reference_servers};

/// excel-mcp-server 0.1.8 (FastMCP and openpyxl): its workbooks in a granted directory
/// mounted at the host path (its stdio mode takes absolute paths), every tool's schema and a
/// sequence of edits and reads as natively; temporary files go to the granted directory.
#[test]
fn the_excel_server_built_from_pypi_matches_it_run_natively_in_a_granted_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, report) = built("pypi:excel-mcp-server==0.1.8", dir.path(), "excel");
    assert_eq!(report["sdk"]["package"], "mcp", "{report:#}");
    assert_eq!(report["flavour"], "FastMCP", "{report:#}");
    assert_eq!(report["writes_files"], true, "{report:#}");
    assert!(names(&report, "tools").contains(&"create_workbook".to_owned()), "{report:#}");
    assert!(report["shims"].to_string().contains("logging.FileHandler"), "{report:#}");
    let (_, servers) = reference_servers();
    let (ours, theirs) = (dir.path().join("box"), dir.path().join("ref"));
    std::fs::create_dir(&ours).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let reference = json!({"command": format!("{servers}/py-existing/bin/excel-mcp-server"), "args": ["stdio"]});
    let spec = json!({"roots": {"reference": theirs, "mcpbox": ours}, "reference": reference});
    let section = format!(
        "roots = false\nmax_concurrency = 1\nhost_paths = true\n\n[[plugin.excel.dirs]]\npath = {:?}\nwritable = true\n",
        ours.display()
    );
    compare_with("excel", &wasm, dir.path(), &section, &[], spec);
    assert!(ours.join("book.xlsx").exists() && !theirs.join("missing.xlsx").exists());
}

/// duckduckgo-mcp-server 0.6.1 (FastMCP, httpx, BeautifulSoup) against a loopback stand-in of
/// html.duckduckgo.com: natively in a network namespace (its CA through its own variable),
/// built through mcpbox's routes with httpx over wasi:http; its `--allow-private-urls` from
/// the operator's `args` on both sides (the stand-in is on loopback). Same tools, same
/// answers, the same requests reached the stand-in.
#[test]
fn the_duckduckgo_server_built_from_pypi_searches_a_stand_in_as_it_does_natively() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, report) = built("pypi:duckduckgo-mcp-server==0.6.1", dir.path(), "duckduckgo");
    assert!(report["hosts"].to_string().contains("https://html.duckduckgo.com"), "{report:#}");
    assert_eq!(report["uses_network"], true, "{report:#}");
    for shim in ["httpx (over wasi:http)", "ssl (TLS by the host)"] {
        assert!(report["shims"].to_string().contains(shim), "{shim}: {report:#}");
    }
    assert!(report["stubs"].to_string().contains("uvicorn"), "{report:#}");
    let suggested = report["suggested_config"].as_str().unwrap();
    assert!(suggested.contains("network = [\"https://html.duckduckgo.com\"]"), "{suggested}");

    let host = "html.duckduckgo.com";
    let (ca, cert, key) = standin_certificates(dir.path(), host);
    let (_, servers) = reference_servers();
    let python = format!("{servers}/venv/bin/python");
    let standin = repo_root().join("tests/clients/duckduckgo_standin.py");
    let ours_log = dir.path().join("ours.jsonl");
    let (ours, port) = start_standin(&python, &standin, &cert, &key, &ours_log);
    let theirs_log = dir.path().join("theirs.jsonl");
    let native = [format!("{servers}/py-existing/bin/duckduckgo-mcp-server"), "--allow-private-urls".to_owned()];
    let args = in_namespace(dir.path(), host, [Path::new(&python), &standin, &cert, &key, &theirs_log], &native);
    let reference = json!({"command": "unshare", "args": args, "env": {"DDG_CA_CERTS": ca}});
    let section = format!(
        "network = [\"https://{host}\"]\nargs = [\"--allow-private-urls\"]\n\n\
         [network]\nhosts = {{ {host:?} = \"127.0.0.1:{port}\" }}\nca_file = {ca:?}\n"
    );
    compare_with("duckduckgo", &wasm, dir.path(), &section, &[], json!({ "reference": reference }));
    drop(ours);
    let (theirs, ours) = (requests(&theirs_log), requests(&ours_log));
    assert!(!theirs.is_empty() && theirs == ours, "native {theirs:?}\nbuilt {ours:?}");
}

/// Tier 2 is not built (docs/existing-servers.md says why): the reference servers time and
/// fetch use pydantic's models, so their builds fail naming pydantic-core with the line that
/// needs it, fetch's also naming its other native dependencies; no component is written.
#[test]
fn python_servers_that_need_pydantic_core_fail_the_build_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (source, name, also) in [
        ("pypi:mcp-server-time==2026.10.19", "time", None),
        ("pypi:mcp-server-fetch==2026.10.24", "fetch", Some("lxml")),
    ] {
        let (ok, text, report) = build(source, dir.path(), name);
        assert!(!ok, "{source} built:\n{text}");
        assert!(!dir.path().join(format!("{name}.wasm")).exists());
        let blockers = report["blockers"].as_array().cloned().unwrap_or_default();
        let pydantic = blockers.iter().find(|b| b["what"] == "pydantic-core").unwrap_or_else(|| panic!("{report:#}"));
        assert!(pydantic["at"].as_str().unwrap().contains("server.py:"), "{pydantic}");
        assert!(text.contains("pydantic-core"), "{text}");
        if let Some(native) = also {
            assert!(blockers.iter().any(|b| b["what"] == native), "{report:#}");
        }
    }
}

/// A Python server (a single file) whose code reads the environment, its arguments and a
/// random id at module level, and tries what a sandbox refuses through names no scan can see:
/// the build's shell is not in the component; each call reads its own values; a process, a
/// socket, files outside the grants and a write to a read-only grant are refused.
#[test]
fn a_built_python_servers_code_reads_its_environment_per_call_and_gets_what_any_plugin_gets() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join("tests/fixtures/existing/python-probe/server.py");
    let shell_secret = format!("build-shell-{}", std::process::id());
    let out = dir.path().join("probe.wasm");
    // Built by a builder whose home, user, variables and settings would show (build_hygiene.rs).
    let builder = crate::build_hygiene::CanaryBuilder::new();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    crate::common::owned(&mut command);
    let output = builder
        .apply(&mut command)
        .args(["build", source.to_str().unwrap(), "-o"])
        .arg(&out)
        // The suite's componentize-py (scripts/setup-componentize.sh), not a venv per toolchain.
        .env("MCPBOX_COMPONENTIZE_PY", repo_root().join("target/componentize-py/bin/componentize-py"))
        .env("MCPBOX_PROBE_SECRET", &shell_secret)
        .output()
        .unwrap();
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{printed}");
    builder.assert_clean(&out);
    assert_absent(&out, &shell_secret);
    let (_config, mut server, data) = serve_probe(&out, dir.path());
    let state = crate::common::call_tool(&mut server, "module_state", json!({}));
    let state: serde_json::Value = serde_json::from_str(&crate::common::text(&state)).unwrap();
    assert_eq!(state["builder_site"], serde_json::Value::Null, "a module of the builder's Python was carried: {state}");
    for what in ["spawn", "socket", "read_outside", "write_outside", "write_granted"] {
        let result = crate::common::call_tool(&mut server, "attempt", json!({ "what": what }));
        assert_eq!(result["isError"], true, "{what}: {result}");
        let text = crate::common::text(&result);
        assert!(text.starts_with("Error executing tool attempt: ") && !text.contains("uid="), "{what}: {result}");
    }
    assert!(!Path::new("/tmp/mcpbox-probe-escape").exists(), "a write outside the grants reached the host");
    assert_eq!(std::fs::read_to_string(data.join("hello.txt")).unwrap(), "hello from the grant");
    let granted = crate::common::call_tool(&mut server, "attempt", json!({ "what": "read_granted" }));
    assert_eq!(crate::common::text(&granted), "hello from the grant", "{granted}");
}
