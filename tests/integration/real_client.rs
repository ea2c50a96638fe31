//! The official Rust MCP SDK's client (rmcp) drives mcpbox over stdio in both eras: it lists
//! and calls tools, reads resources and gets prompts of the bundled plugins.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ProtocolVersion, ReadResourceRequestParams};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::common::*;

/// The server, and its own state directories (kept as long as it runs).
fn mcpbox(root: &std::path::Path) -> (TokioChildProcess, own::OwnDirs) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    command
        .arg("serve")
        .arg(fixture("fs"))
        .arg(fixture("conformance"))
        .arg(plugin("textstats"))
        .arg("--root")
        .arg(root);
    let own = owned_server_tokio(&mut command);
    (TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().unwrap().0, own)
}

async fn exercise<S: rmcp::service::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
    root_name: &str,
) {
    let tools = client.list_all_tools().await.unwrap();
    for expected in ["fs.read_file", "textstats.stats", "conformance.test_simple_text"] {
        assert!(tools.iter().any(|t| t.name == expected), "{expected} missing");
    }
    let args = json!({ "path": format!("/roots/{root_name}/notes.txt") }).as_object().unwrap().clone();
    let read = client.call_tool(CallToolRequestParams::new("fs.read_file").with_arguments(args.clone())).await.unwrap();
    assert_eq!(serde_json::to_value(&read).unwrap()["content"][0]["text"], "one two two\n");
    let stats = client.call_tool(CallToolRequestParams::new("textstats.stats").with_arguments(args)).await.unwrap();
    let structured = serde_json::to_value(&stats).unwrap()["structuredContent"].clone();
    assert_eq!(structured["words"], 3);
    assert_eq!(structured["top_words"][0], json!(["two", 2]));

    let resource = client.read_resource(ReadResourceRequestParams::new("test://static-text")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&resource).unwrap()["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let file = client
        .read_resource(ReadResourceRequestParams::new(format!("file:///roots/{root_name}/notes.txt")))
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&file).unwrap()["contents"][0]["text"], "one two two\n");

    let prompt = client.get_prompt(GetPromptRequestParams::new("conformance.test_simple_prompt")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&prompt).unwrap()["messages"][0]["content"]["text"],
        "This is a simple prompt for testing."
    );
}

fn notes_dir() -> (tempfile::TempDir, String) {
    let dir = temp_dir();
    std::fs::write(dir.path().join("notes.txt"), "one two two\n").unwrap();
    let name = dir.path().file_name().unwrap().to_str().unwrap().to_owned();
    (dir, name)
}

#[tokio::test]
async fn rmcp_client_with_the_legacy_handshake() {
    let (dir, name) = notes_dir();
    let (server, _own) = mcpbox(dir.path());
    let client = ().serve(server).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "mcpbox");
    exercise(&client, &name).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn rmcp_client_stateless_2026() {
    let (dir, name) = notes_dir();
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let (server, _own) = mcpbox(dir.path());
    let client = ().serve_with_lifecycle(server, mode).await.unwrap();
    exercise(&client, &name).await;
    client.cancel().await.unwrap();
}

/// The official MCP Python SDK (from PyPI, in a virtualenv under target/) in both eras.
#[test]
fn python_sdk_client_in_both_eras() {
    let python = python_sdk();
    let (dir, _) = notes_dir();
    for era in ["legacy", "modern"] {
        let mut client = std::process::Command::new(&python);
        client
            .arg(repo_root().join("tests/clients/python_sdk_client.py"))
            .arg("stdio")
            .arg(env!("CARGO_BIN_EXE_mcpbox"))
            .arg(test_set())
            .arg(dir.path())
            .arg(era);
        let _own = owned_server(&mut client);
        let output = client.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains(&format!("python sdk client (stdio, {era}): ok")),
            "{era}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
