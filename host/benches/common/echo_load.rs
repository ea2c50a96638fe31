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

/// The table of the benchmarks that compare servers: each of `targets` (a name, a URL) at
/// each of `lanes` in flight, 3 interleaved repetitions of `seconds`, medians, and the latency
/// as a ratio to the first target's (`vs` names it in the header).
pub fn compare(runtime: &tokio::runtime::Runtime, targets: &[(&str, String)], lanes: &[usize], seconds: f64, vs: &str) {
    for (_, url) in targets {
        runtime.block_on(run(url, None, 1, 0.2));
    }
    println!("({seconds} s per run, 3 interleaved runs, medians; latency in microseconds)");
    let vs = format!("latency vs {vs}");
    println!("| {:<30} | {:>9} | {:>10} | {:>10} | {vs:>16} |", "server", "in flight", "calls/s", "median");
    println!("|{:-<32}|{:-<11}|{:-<12}|{:-<12}|{:-<18}|", "", "", "", "", "");
    for &lanes in lanes {
        let mut runs = vec![Vec::new(); targets.len()];
        for _ in 0..3 {
            for (i, (_, url)) in targets.iter().enumerate() {
                runs[i].push(runtime.block_on(run(url, None, lanes, seconds)));
            }
        }
        let summary = |runs: &[(f64, Duration)]| {
            (median(runs.iter().map(|r| r.0).collect()), median(runs.iter().map(|r| r.1.as_secs_f64() * 1e6).collect()))
        };
        let (_, base) = summary(&runs[0]);
        for (i, (name, _)) in targets.iter().enumerate() {
            let (rate, latency) = summary(&runs[i]);
            println!(
                "| {name:<30} | {lanes:>9} | {rate:>10.0} | {latency:>10.0} | {:>16} |",
                format!("{:.2} ({:+.0} us)", latency / base, latency - base)
            );
        }
    }
}
