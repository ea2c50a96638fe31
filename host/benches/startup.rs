//! Start-up of the real release `mcpbox` with 1, 10 and 50 plugins: spawn to the first
//! `tools/list` answer over stdio, compiled afresh (`--no-cache`, every file compiled as if
//! new) and from the compile cache. The folders hold copies of the guest plugins under
//! distinct names (so distinct prefixes), cycling through all of them. Median of `BENCH_RUNS`
//! (default 5) starts each.

#![expect(clippy::unwrap_used, reason = "a benchmark stops at the first thing that does not hold")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Spawn to `tools/list` answered; returns the time and the number of tools.
fn start(dir: &Path, cache: &Path, extra: &[&str]) -> (Duration, usize) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpbox"))
        .arg("serve")
        .arg(dir)
        .args(extra)
        .env("MCPBOX_CACHE_DIR", cache)
        .env("MCPBOX_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    ask(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } } }));
    ask(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    ask(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { } }));
    let tools;
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "mcpbox exited");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 1 {
            tools = message["result"]["tools"].as_array().map_or(0, Vec::len);
            break;
        }
    }
    let elapsed = started.elapsed();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    (elapsed, tools)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    let root = repo_root();
    let sources: Vec<PathBuf> = [
        "test-plugins/fs",
        "plugins/textstats",
        "test-plugins/conformance",
        "test-plugins/echo",
        "test-plugins/hello",
        "test-plugins/chaos",
        "test-plugins/tools_only",
    ]
    .iter()
    .map(|p| root.join("target").join(format!("{p}.wasm")))
    .collect();
    assert!(sources.iter().all(|p| p.exists()), "run scripts/build-guests.sh first (or scripts/bench.sh startup)");
    let work = std::env::temp_dir().join(format!("mcpbox-startup-{}", std::process::id()));
    println!("start-up: spawn to tools/list answered over stdio, median of {runs} (milliseconds)\n");
    println!("| plugins | tools (first page) | compiled afresh (--no-cache) | from the cache | cached per plugin |");
    println!("|---:|---:|---:|---:|---:|");
    for count in [1usize, 10, 50] {
        let dir = work.join(format!("{count}"));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..count {
            std::fs::copy(&sources[i % sources.len()], dir.join(format!("p{i:02}.wasm"))).unwrap();
        }
        let cache = work.join(format!("cache-{count}"));
        let cold = median((0..runs).map(|_| start(&dir, &cache, &["--no-cache"]).0).collect());
        start(&dir, &cache, &[]); // fills the cache
        let mut tools = 0;
        let warm = median(
            (0..runs)
                .map(|_| {
                    let (elapsed, n) = start(&dir, &cache, &[]);
                    tools = n;
                    elapsed
                })
                .collect(),
        );
        println!(
            "| {count} | {tools} | {:.0} | {:.0} | {:.1} |",
            cold.as_secs_f64() * 1e3,
            warm.as_secs_f64() * 1e3,
            warm.as_secs_f64() * 1e3 / count as f64
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
