//! What a credential costs a plugin's request: the same tool call (`net.fetch` of a local API,
//! stateless 2026-07-28 over Streamable HTTP, one in flight) to a release mcpbox whose plugin
//! has no credential (the baseline) and to one that sets `Authorization` from a secret on that
//! origin (so the response is scanned for every form of it), with a small answer (300 bytes)
//! and a large one (256 KiB). 5 interleaved repetitions, medians, ratios to the baseline.
//! `BENCH_SECONDS` sets the time per run.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/echo_load.rs"]
#[expect(dead_code, reason = "shared with the echo benchmarks; this one starts servers with it only")]
mod echo_load;
#[path = "common/http_client.rs"]
#[expect(dead_code, reason = "shared with the benchmarks that open legacy sessions; this one opens none")]
mod http_client;
use echo_load::mcpbox_with;
use http_client::{MODERN_META, post};

const REPETITIONS: usize = 5;

/// The API: `/small` and `/large` answer text of 300 bytes and 256 KiB; its base URL.
async fn api() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let text = |size: usize| "{\"login\":\"ada\",\"bio\":\"".to_owned() + &"x".repeat(size - 24) + "\"}";
    let (small, large) = (text(300), text(256 << 10));
    let app = axum::Router::new()
        .route("/small", axum::routing::get(move || async move { small }))
        .route("/large", axum::routing::get(move || async move { large }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

/// A server stopped when dropped, also when the benchmark panics.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Median latency of calls fetching `target` for `seconds`.
async fn run(url: &str, target: &str, seconds: f64) -> Duration {
    let client = reqwest::Client::builder().tcp_nodelay(true).build().unwrap();
    let headers = [
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", "net.fetch".to_owned()),
    ];
    let meta: Value = serde_json::from_str(MODERN_META).unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "net.fetch", "arguments": { "url": target }, "_meta": meta } });
        let started = Instant::now();
        let (status, _, text) = post(&client, url, body.to_string(), &headers).await;
        samples.push(started.elapsed());
        assert!(status == 200 && text.contains("200 {"), "{text}");
    }
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let net = root.join("target/test-plugins/net.wasm");
    assert!(net.exists(), "run scripts/build-guests.sh first");
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let api = runtime.block_on(api());
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("token");
    std::fs::write(&secret, "ghp_16C7e42F292c6912E7710c838347Ae178B4a").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let base = format!(
        "plugins = [{net:?}]\n[secrets.api]\nfile = {secret:?}\n[plugin.net]\nnetwork = [\"{api}\"]\nallow_private_network = true\n"
    );
    let credential = format!(
        "{base}[[plugin.net.credentials]]\nhost = \"{api}\"\nheader = \"Authorization\"\nvalue = \"Bearer {{secrets.api}}\"\n"
    );
    let mut servers = Vec::new();
    let mut targets = Vec::new();
    for (name, text) in [("no credential", base), ("a header credential", credential)] {
        let config = dir.path().join(format!("{}.toml", targets.len()));
        std::fs::write(&config, text).unwrap();
        // (It serves the echo benchmarks' `chaos` beside `net`: not called here.)
        let (child, url) = mcpbox_with(&root, &["--config".into(), config.into()]);
        servers.push(Stopped(child));
        targets.push((name, url));
    }
    println!("net.fetch of a local API, stateless over Streamable HTTP, 1 in flight, without and with a credential");
    println!("({seconds} s per run, {REPETITIONS} interleaved runs, medians; latency in microseconds)");
    println!("| {:<20} | {:>9} | {:>10} | {:>18} |", "plugin", "response", "median", "vs no credential");
    println!("|{:-<22}|{:-<11}|{:-<12}|{:-<20}|", "", "", "", "");
    for path in ["/small", "/large"] {
        let target = format!("{api}{path}");
        for (_, url) in &targets {
            runtime.block_on(run(url, &target, 0.3));
        }
        let mut runs = vec![Vec::new(); targets.len()];
        for _ in 0..REPETITIONS {
            for (i, (_, url)) in targets.iter().enumerate() {
                runs[i].push(runtime.block_on(run(url, &target, seconds)).as_secs_f64() * 1e6);
            }
        }
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let size = if path == "/small" { "300 B" } else { "256 KiB" };
        let base = median(runs[0].clone());
        for (i, (name, _)) in targets.iter().enumerate() {
            let latency = median(runs[i].clone());
            let (low, high) = runs[i].iter().fold((f64::MAX, 0f64), |(l, h), v| (l.min(*v), h.max(*v)));
            println!(
                "| {name:<20} | {size:>9} | {latency:>10.0} | {:>18} |",
                format!("{:.2} ({low:.0}-{high:.0})", latency / base)
            );
        }
    }
    drop(servers);
}
