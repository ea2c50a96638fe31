//! Throughput and latency of a trivial tool call (`chaos.echo`) over Streamable HTTP with 1, 8
//! and 64 requests in flight, for a legacy session per lane and for stateless 2026-07-28
//! requests, with `ping` as the protocol's own baseline; then the memory of idle sessions.
//! Drives the real release `mcpbox` binary over loopback. `BENCH_SECONDS` sets the time per row.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/http_client.rs"]
mod http_client;
use http_client::{MODERN_META, open_session, post, served_url};

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    LegacyPing,
    LegacyCall,
    ModernCall,
}

/// Runs `lanes` concurrent request loops for `seconds`; returns calls/s, median and p99.
async fn run(url: &str, mode: Mode, lanes: usize, seconds: f64) -> (f64, Duration, Duration) {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(256).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..lanes {
        let client = client.clone();
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let headers: Vec<(&'static str, String)> = match mode {
                Mode::ModernCall => vec![
                    ("mcp-protocol-version", "2026-07-28".to_owned()),
                    ("mcp-method", "tools/call".to_owned()),
                    ("mcp-name", "chaos.echo".to_owned()),
                ],
                _ => vec![
                    ("mcp-session-id", open_session(&client, &url).await),
                    ("mcp-protocol-version", "2025-11-25".into()),
                ],
            };
            let meta: Value = serde_json::from_str(MODERN_META).unwrap();
            let mut samples = Vec::new();
            let mut id = 1u64;
            while Instant::now() < deadline {
                id += 1;
                let body = match mode {
                    Mode::LegacyPing => json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }),
                    Mode::LegacyCall => json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": { "name": "chaos.echo", "arguments": { "value": "hello" } } }),
                    Mode::ModernCall => json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": { "name": "chaos.echo", "arguments": { "value": "hello" }, "_meta": meta } }),
                };
                let started = Instant::now();
                let (status, _, text) = post(&client, &url, body.to_string(), &headers).await;
                samples.push(started.elapsed());
                assert_eq!(status, 200, "{text}");
                assert!(text.contains("result"), "{text}");
            }
            samples
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort();
    let rate = all.len() as f64 / seconds;
    (rate, all[all.len() / 2], all[(all.len() * 99 / 100).min(all.len() - 1)])
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let chaos = root.join("target/test-plugins/chaos.wasm");
    assert!(chaos.exists(), "run scripts/build-guests.sh first (or use scripts/bench.sh)");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpbox"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .arg(&chaos)
        .env("MCPBOX_CACHE_DIR", root.join("target/bench-compile-cache"))
        .env("MCPBOX_LOG", "info,rmcp=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = served_url(&mut child);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!("Streamable HTTP, {seconds} s per row, trivial tool call chaos.echo (latency in microseconds)");
    println!("| {:<28} | {:>9} | {:>10} | {:>10} | {:>10} |", "what", "in flight", "calls/s", "median", "p99");
    println!("|{:-<30}|{:-<11}|{:-<12}|{:-<12}|{:-<12}|", "", "", "", "", "");
    for (name, mode) in [
        ("ping, legacy session", Mode::LegacyPing),
        ("tools/call, legacy session", Mode::LegacyCall),
        ("tools/call, 2026-07-28", Mode::ModernCall),
    ] {
        for lanes in [1, 8, 64] {
            let (rate, median, p99) = runtime.block_on(run(&url, mode, lanes, seconds));
            println!(
                "| {name:<28} | {lanes:>9} | {rate:>10.0} | {:>10.0} | {:>10.0} |",
                median.as_secs_f64() * 1e6,
                p99.as_secs_f64() * 1e6
            );
        }
    }
    let pid = child.id();
    let sessions = 500;
    let before = rss_kib(pid);
    let kept: Vec<String> = runtime.block_on(async {
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let mut ids = Vec::new();
        for _ in 0..sessions {
            ids.push(open_session(&client, &url).await);
        }
        ids
    });
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(pid);
    println!(
        "\nidle legacy sessions: {} opened, RSS {before} KiB -> {after} KiB, {:.1} KiB per session",
        kept.len(),
        (after.saturating_sub(before)) as f64 / sessions as f64
    );
    let _ = child.kill();
    let _ = child.wait();
}
