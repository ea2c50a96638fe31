//! A fleet's throughput and latency: the same stateless 2026-07-28 tool call (`chaos.echo`)
//! to one release `mcpbox` alone (the baseline), to one replica with Redis behind HAProxy, and
//! to three replicas with Redis behind HAProxy (`scripts/fleet.sh`). 1 and 16 requests in
//! flight, 3 interleaved repetitions, medians, with the ratio to the baseline. On a machine
//! of 2 cores the three replicas share the cores the load driver and HAProxy use too: this
//! shows the fleet's overhead, not its scaling. `BENCH_SECONDS` sets the time per run.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "common/echo_load.rs"]
mod echo_load;
#[path = "common/http_client.rs"]
#[expect(dead_code, reason = "shared with the benchmarks that open legacy sessions; this one opens none")]
mod http_client;
use echo_load::{compare, mcpbox};

/// A fleet of `replicas` started by scripts/fleet.sh in `dir`; its load balancer's URL.
fn fleet(root: &Path, dir: &Path, replicas: usize) -> String {
    let output = Command::new("bash")
        .arg(root.join("scripts/fleet.sh"))
        .arg("up")
        .arg(dir)
        .args([replicas.to_string(), "--".to_owned()])
        .arg(root.join("target/test-plugins/chaos.wasm"))
        .env("MCPBOX", env!("CARGO_BIN_EXE_mcpbox"))
        .env("MCPBOX_CACHE_DIR", root.join("target/bench-compile-cache"))
        .env("MCPBOX_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().lines().last().unwrap().to_owned()
}

fn down(root: &Path, dir: &Path) {
    let _ = Command::new("bash").arg(root.join("scripts/fleet.sh")).arg("down").arg(dir).status();
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    assert!(root.join("target/test-plugins/chaos.wasm").exists(), "run scripts/build-guests.sh first");
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let dirs: Vec<PathBuf> =
        (1..=2).map(|n| std::env::temp_dir().join(format!("mcpbox-bench-fleet-{}-{n}", std::process::id()))).collect();
    let (mut single, single_url) = mcpbox(&root, None);
    let one_url = fleet(&root, &dirs[0], 1);
    let three_url = fleet(&root, &dirs[1], 3);
    let targets = [
        ("1 mcpbox alone", single_url),
        ("1 replica + Redis + HAProxy", one_url),
        ("3 replicas + Redis + HAProxy", three_url),
    ];

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!("Stateless tools/call over Streamable HTTP: one mcpbox, and fleets behind HAProxy sharing Redis");
    println!("(2 cores shared by all)");
    compare(&runtime, &targets, &[1, 16], seconds, "alone");
    let _ = single.kill();
    let _ = single.wait();
    for dir in &dirs {
        down(&root, dir);
        let _ = std::fs::remove_dir_all(dir);
    }
}
