//! MCP Apps in a real browser: Debian's Chromium, headless, driven by playwright-core, opens a
//! small host page built on the official ext-apps SDK's `AppBridge` and the official TypeScript
//! SDK's client (`tests/browser/`), connected to mcpbox over Streamable HTTP (CORS for the
//! page's origin, which the operator allows). The page lists the tools, finds `textstats.stats`'
//! app, renders it in a sandboxed iframe under the CSP its `_meta.ui` allows, and hands it the
//! tool's result; the test reads the chart from the app's DOM, clicks the app's button (a
//! `tools/call` from the app through the bridge to mcpbox), and keeps a screenshot in
//! `target/test-artifacts/`. The same app is then found and used by a 2026-07-28 client (the
//! official Python SDK) outside the browser.

use serde_json::{Value, json};

use crate::common::{Server, free_port, http_client, plugin, python_sdk, repo_root, temp_dir};

/// `scripts/setup-browser.sh`: node, the npm packages, chromium and its library path.
fn browser_tools() -> [String; 4] {
    let setup = std::process::Command::new("bash").arg(repo_root().join("scripts/setup-browser.sh")).output().unwrap();
    assert!(setup.status.success(), "setting up the browser failed: {}", String::from_utf8_lossy(&setup.stderr));
    let line = String::from_utf8(setup.stdout).unwrap();
    let parts: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    parts.try_into().unwrap_or_else(|parts| panic!("setup-browser.sh printed {parts:?}"))
}

#[test]
fn an_app_renders_in_chromium_and_calls_its_tool_back_through_the_host() {
    let [node, packages, chromium, libraries] = browser_tools();
    let project = temp_dir();
    std::fs::write(project.path().join("notes.txt"), "the cat sat on the mat\nthe end\n").unwrap();
    let page_port = free_port();
    let page_origin = format!("http://127.0.0.1:{page_port}");
    let (_server, url) = Server::start_http(&[
        plugin("textstats").into_os_string(),
        "--root".into(),
        project.path().into(),
        "--allow-origin".into(),
        page_origin.clone().into(),
    ]);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join("mcp-app-in-chromium.png");
    let _ = std::fs::remove_file(&screenshot);
    let root = format!("/roots/{}", project.path().file_name().unwrap().to_str().unwrap());
    // Chromium keeps crash reports and settings under HOME: the test's own.
    let output = crate::common::owned(&mut std::process::Command::new(&node))
        .arg(repo_root().join("tests/browser/run.mjs"))
        .args([&packages, &chromium, &page_port.to_string(), &url, &root])
        .arg(&screenshot)
        .env("LD_LIBRARY_PATH", &libraries)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the browser run failed:\n{stdout}\n{stderr}");
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(seen["tools"], "textstats.sha256 textstats.stats", "{seen}");
    assert_eq!(seen["app"], "textstats.stats -> ui://textstats/chart", "{seen}");
    assert_eq!(seen["sandbox"], "allow-scripts", "{seen}");
    // The chart the app drew from the result the host handed it, read from its DOM.
    assert_eq!(seen["title"], "Most frequent of 8 words in 1 file", "{seen}");
    assert_eq!(seen["rows"], json!(["the3", "cat1", "end1", "mat1", "on1"]), "{seen}");
    // The app's own `tools/call`, through the bridge and the host's client to mcpbox.
    assert_eq!(seen["status"], "counted again through the host", "{seen}");
    assert!(std::fs::metadata(&screenshot).is_ok_and(|m| m.len() > 1000), "no screenshot at {}", screenshot.display());
}

/// CORS answers only the origins the operator named: another local page's preflight gets no
/// `Access-Control-Allow-Origin`, so the browser keeps mcpbox's answers from it.
#[tokio::test]
async fn cors_answers_only_the_origins_the_operator_allowed() {
    let (_server, url) = Server::start_http(&[
        plugin("textstats").into_os_string(),
        "--allow-origin".into(),
        "http://127.0.0.1:9".into(),
    ]);
    let preflight = |origin: &'static str| {
        http_client()
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type, mcp-protocol-version")
            .send()
    };
    let allowed = preflight("http://127.0.0.1:9").await.unwrap();
    assert_eq!(allowed.status(), 204);
    assert_eq!(allowed.headers()["access-control-allow-origin"], "http://127.0.0.1:9");
    assert!(allowed.headers()["access-control-allow-headers"].to_str().unwrap().contains("mcp-protocol-version"));
    let other = preflight("http://127.0.0.1:10").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none(), "{:?}", other.headers());
    let post = http_client()
        .post(&url)
        .header("origin", "http://127.0.0.1:9")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(post.headers()["access-control-allow-origin"], "http://127.0.0.1:9");
    assert!(post.headers()["access-control-expose-headers"].to_str().unwrap().contains("mcp-session-id"));
}

/// The same app through a 2026-07-28 client (stateless, no session), outside the browser.
#[test]
fn a_2026_client_finds_reads_and_uses_the_app() {
    let project = temp_dir();
    std::fs::write(project.path().join("notes.txt"), "one two two\n").unwrap();
    let (_server, url) =
        Server::start_http(&[plugin("textstats").into_os_string(), "--root".into(), project.path().into()]);
    let root = format!("/roots/{}", project.path().file_name().unwrap().to_str().unwrap());
    let script = format!(
        r#"
import asyncio
from mcp import Client

async def main():
    async with Client({url:?}, mode="2026-07-28") as client:
        tools = {{t.name: t for t in (await client.list_tools()).tools}}
        app = tools["textstats.stats"].meta["ui"]["resourceUri"]
        read = await client.read_resource(app)
        html = read.contents[0]
        result = await client.call_tool("textstats.stats", {{"path": {root:?}, "top": 2}})
        print(app, html.mime_type, html.meta["ui"]["prefersBorder"], "ui/initialize" in html.text)
        print(result.structured_content["top_words"])

asyncio.run(main())
"#
    );
    let output = std::process::Command::new(python_sdk()).args(["-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout, "ui://textstats/chart text/html;profile=mcp-app True True\n[['two', 2], ['one', 1]]\n");
}
