//! What checking an OAuth access token costs per request: the same stateless 2026-07-28 tool
//! call (`chaos.echo`) over Streamable HTTP to two release `mcpbox` servers side by side, one
//! open, one with `[auth]` naming a local OpenID provider (oidc-provider, from
//! `scripts/setup-oidc-provider.sh`) and a valid ES256 token on every request (its key set
//! cached after the first). 1 and 8 requests in flight, 3 interleaved repetitions, medians,
//! with the ratio to the open server. `BENCH_SECONDS` sets the time per run.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

#[path = "common/echo_load.rs"]
#[expect(dead_code, reason = "its table of unauthenticated targets (`compare`) is for the other benchmarks")]
mod echo_load;
#[path = "common/http_client.rs"]
#[expect(dead_code, reason = "shared with the benchmarks that open legacy sessions; this one opens none")]
mod http_client;
use echo_load::{mcpbox, median, run};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Reads the provider's stdout until it says it is ready; returns its issuer.
fn issuer_when_ready(stdout: impl std::io::Read + Send + 'static) -> String {
    let mut lines = BufReader::new(stdout).lines();
    let issuer = loop {
        let line = lines.next().expect("the provider ended").unwrap();
        if let Some(issuer) = line.strip_prefix("ready ") {
            break issuer.to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    issuer
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    assert!(root.join("target/test-plugins/chaos.wasm").exists(), "run scripts/build-guests.sh first");
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();

    // The provider, on a port of its own.
    let setup = Command::new("bash").arg(root.join("scripts/setup-oidc-provider.sh")).output().unwrap();
    assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    let printed = String::from_utf8(setup.stdout).unwrap();
    let (node, script) = printed.trim().split_once(' ').unwrap();
    let mut provider = Command::new(node)
        .args([script, &free_port().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let issuer = issuer_when_ready(provider.stdout.take().unwrap());

    // The two servers.
    let config = std::env::temp_dir().join(format!("mcpbox-bench-auth-{}.toml", std::process::id()));
    std::fs::write(&config, format!("[auth]\nissuers = [\"{issuer}\"]\n")).unwrap();
    let (mut open, open_url) = mcpbox(&root, None);
    let (mut authorized, auth_url) = mcpbox(&root, Some(&config));

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let token = runtime.block_on(async {
        let answer: Value = reqwest::Client::new()
            .post(format!("{issuer}/token"))
            .basic_auth("ada", Some("ada-secret"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("grant_type", "client_credentials")
                    .append_pair("scope", "tools:read")
                    .append_pair("resource", &auth_url)
                    .finish(),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"].as_str().unwrap().to_owned()
    });
    // The first request fetches the key set; the runs measure the cached path.
    runtime.block_on(run(&auth_url, Some(&token), 1, 0.2));

    println!("Stateless tools/call over Streamable HTTP, open vs an OAuth access token checked on every request");
    println!("({seconds} s per run, 3 interleaved runs, medians; latency in microseconds)");
    println!("| {:<22} | {:>9} | {:>10} | {:>10} | {:>12} |", "server", "in flight", "calls/s", "median", "vs open");
    println!("|{:-<24}|{:-<11}|{:-<12}|{:-<12}|{:-<14}|", "", "", "", "", "");
    for lanes in [1, 8] {
        let (mut open_runs, mut auth_runs) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            open_runs.push(runtime.block_on(run(&open_url, None, lanes, seconds)));
            auth_runs.push(runtime.block_on(run(&auth_url, Some(&token), lanes, seconds)));
        }
        let summary = |runs: &[(f64, Duration)]| {
            (median(runs.iter().map(|r| r.0).collect()), median(runs.iter().map(|r| r.1.as_secs_f64() * 1e6).collect()))
        };
        let (open_rate, open_median) = summary(&open_runs);
        let (auth_rate, auth_median) = summary(&auth_runs);
        println!("| {:<22} | {lanes:>9} | {open_rate:>10.0} | {open_median:>10.0} | {:>12} |", "open", "1.00");
        println!(
            "| {:<22} | {lanes:>9} | {auth_rate:>10.0} | {auth_median:>10.0} | {:>12} |",
            "[auth], JWT (ES256)",
            format!("{:.2} ({:+.0} us)", auth_median / open_median, auth_median - open_median)
        );
    }
    for child in [&mut open, &mut authorized, &mut provider] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_file(config);
}
