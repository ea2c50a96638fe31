//! What metrics, JSON logs and traces cost a call: the same stateless 2026-07-28 tool call
//! (`chaos.echo`) over Streamable HTTP to a release mcpbox with telemetry off (the baseline:
//! text logs, no listener, no exporter; metrics are always counted), with `--metrics` scraped
//! every second, with `--log-format json` (a line per request), and with `--otlp-endpoint`
//! sending every span to a collector that accepts and drops them (in this process). 1 and 16
//! in flight, 3 interleaved repetitions, medians, ratios to the baseline. `BENCH_SECONDS` sets
//! the time per run.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "common/echo_load.rs"]
mod echo_load;
#[path = "common/http_client.rs"]
#[expect(dead_code, reason = "shared with the benchmarks that open legacy sessions; this one opens none")]
mod http_client;
use echo_load::{compare, mcpbox, mcpbox_with};

/// A collector that answers every export with 200 and keeps nothing; its base URL.
async fn null_collector() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().route("/v1/traces", axum::routing::post(|_: axum::body::Bytes| async { "" }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    assert!(root.join("target/test-plugins/chaos.wasm").exists(), "run scripts/build-guests.sh first");
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let collector = runtime.block_on(null_collector());
    let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let variants: Vec<(&str, Vec<OsString>)> = vec![
        ("telemetry off", vec![]),
        ("--metrics, scraped every 1 s", args(&["--metrics", &metrics])),
        ("--log-format json", args(&["--log-format", "json"])),
        ("--otlp-endpoint (every span)", args(&["--otlp-endpoint", &collector])),
    ];
    let mut servers = Vec::new();
    let mut targets = Vec::new();
    for (name, extra) in &variants {
        let (child, url) = if extra.is_empty() { mcpbox(&root, None) } else { mcpbox_with(&root, extra) };
        servers.push(child);
        targets.push((*name, url));
    }
    // The scraper: Prometheus's default interval is 15 s; every second is a busy one.
    runtime.spawn(async move {
        let client = reqwest::Client::new();
        loop {
            let _ = client.get(format!("http://{metrics}/metrics")).send().await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    println!("Stateless tools/call over Streamable HTTP, telemetry off and each signal on");
    compare(&runtime, &targets, &[1, 16], seconds, "off");
    for mut server in servers {
        let _ = server.kill();
        let _ = server.wait();
    }
}
