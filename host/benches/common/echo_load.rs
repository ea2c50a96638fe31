//! The load of the benchmarks that compare servers on one stateless 2026-07-28 tool call
//! (`chaos.echo`): the server, and `lanes` loops of calls for a while, their rate and median
//! latency.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http_client::{MODERN_META, post, served_url};

/// Calls/s and median latency of `lanes` loops of calls for `seconds`.
pub async fn run(url: &str, token: Option<&str>, lanes: usize, seconds: f64) -> (f64, Duration) {
    let client = reqwest::Client::builder().tcp_nodelay(true).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..lanes {
        let (client, url) = (client.clone(), url.to_owned());
        let mut headers = vec![
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", "tools/call".to_owned()),
            ("mcp-name", "chaos.echo".to_owned()),
        ];
        if let Some(token) = token {
            headers.push(("authorization", format!("Bearer {token}")));
        }
        tasks.push(tokio::spawn(async move {
            let meta: Value = serde_json::from_str(MODERN_META).unwrap();
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": { "name": "chaos.echo", "arguments": { "value": "hello" }, "_meta": meta } });
                let started = Instant::now();
                let (status, _, text) = post(&client, &url, body.to_string(), &headers).await;
                samples.push(started.elapsed());
                assert_eq!(status, 200, "{text}");
            }
            samples
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort();
    (all.len() as f64 / seconds, all[all.len() / 2])
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// A release mcpbox serving `chaos` on a port of its own, with `config` if given; and its URL
/// (on loopback, with `[auth]`, also its resource identifier).
pub fn mcpbox(root: &Path, config: Option<&Path>) -> (Child, String) {
    let config = config.map(|config| ["--config".into(), config.as_os_str().to_owned()]);
    mcpbox_with(root, config.as_ref().map_or(&[][..], |c| &c[..]))
}

/// [`mcpbox`] with these further arguments.
pub fn mcpbox_with(root: &Path, extra: &[std::ffi::OsString]) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    command.args(["serve", "--http", "127.0.0.1:0"]).arg(root.join("target/test-plugins/chaos.wasm")).args(extra);
    let mut child = command
        .env("MCPBOX_CACHE_DIR", root.join("target/bench-compile-cache"))
        .env("MCPBOX_LOG", "info,rmcp=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = served_url(&mut child);
    (child, url)
}
