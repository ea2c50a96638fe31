//! Latency of a trivial tool call, median of many, with baselines measured in the same run:
//!
//! 1. in process: `Catalog::call_tool` on the `chaos.echo` guest (fresh instance per call)
//!    against the same echo as a native Rust function;
//! 2. end to end: `tools/call` of `chaos.echo` through the real `mcpbox` binary over stdio
//!    against `ping` over the same connection (the protocol's own round trip).
//!
//! Run with `scripts/bench.sh` (it builds the guests first). `BENCH_CALLS` sets the count.

#![expect(clippy::unwrap_used, reason = "a benchmark stops at the first thing that does not hold")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcpbox::runtime::Catalog;
use mcpbox::runtime::compile::{CompileBounds, Compiler};
use mcpbox::runtime::engine::EngineOptions;
use mcpbox::runtime::{CallScope, Limits};
use serde_json::{Value, json};

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let median = samples[samples.len() / 2];
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    (median, p99)
}

fn native_echo(arguments: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Echo {
        value: Value,
    }
    let args: Echo = serde_json::from_str(arguments).unwrap();
    args.value.to_string()
}

fn row(name: &str, (median, p99): (Duration, Duration), baseline: Option<Duration>) {
    let ratio =
        baseline.map(|b| format!("{:.1}x", median.as_secs_f64() / b.as_secs_f64())).unwrap_or_else(|| "1.0x".into());
    println!("| {name:<46} | {:>10.1} | {:>10.1} | {ratio:>8} |", median.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6);
}

fn main() {
    let calls: usize = std::env::var("BENCH_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let chaos = root.join("target/test-plugins/chaos.wasm");
    assert!(chaos.exists(), "run scripts/build-guests.sh first (or use scripts/bench.sh)");
    let cache = root.join("target/bench-compile-cache");
    let arguments = json!({ "value": "hello" }).to_string();

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let in_process = |pooling: bool| {
        runtime.block_on(async {
            let options = EngineOptions {
                cache_dir: Some(cache.clone()),
                pooling,
                max_memory_bytes: Limits::default().memory_bytes,
                copy_on_write: false,
            };
            let compiler = Compiler::in_process(&options, CompileBounds::default()).unwrap();
            let started = Instant::now();
            let (catalog, problems) =
                Catalog::load(&compiler, std::slice::from_ref(&chaos), &Default::default(), Limits::default()).await;
            let compile = started.elapsed();
            assert!(problems.is_empty(), "{problems:?}");
            let mut native = Vec::with_capacity(calls);
            let mut sandboxed = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                std::hint::black_box(native_echo(std::hint::black_box(&arguments)));
                native.push(t.elapsed());
                let t = Instant::now();
                let result = catalog.call_tool("chaos.echo", arguments.clone(), CallScope::default()).await.unwrap();
                sandboxed.push(t.elapsed());
                assert!(!result.is_error);
            }
            (stats(native), stats(sandboxed), compile)
        })
    };
    let (native, sandboxed, compile) = in_process(false);
    let (_, pooled, _) = in_process(true);

    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpbox"))
        .arg("serve")
        .arg(&chaos)
        .env("MCPBOX_CACHE_DIR", &cache)
        .env("MCPBOX_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut id = 0;
    let mut round_trip = |method: &str, params: Value| -> Duration {
        id += 1;
        let t = Instant::now();
        writeln!(stdin, "{}", json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return t.elapsed();
            }
        }
    };
    round_trip(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }),
    );
    let mut ping = Vec::with_capacity(calls);
    let mut call = Vec::with_capacity(calls);
    for _ in 0..calls {
        ping.push(round_trip("ping", json!({})));
        call.push(round_trip("tools/call", json!({ "name": "chaos.echo", "arguments": { "value": "hello" } })));
    }
    drop(stdin);
    let _ = child.wait();
    let (ping, call) = (stats(ping), stats(call));

    println!(
        "trivial tool call latency, {calls} calls each, microseconds (load of plugin: {:.0} ms)",
        compile.as_secs_f64() * 1e3
    );
    println!("| {:<46} | {:>10} | {:>10} | {:>8} |", "what", "median", "p99", "ratio");
    println!("|{:-<48}|{:-<12}|{:-<12}|{:-<10}|", "", "", "", "");
    row("native Rust echo function (baseline)", native, None);
    row("sandboxed echo: fresh instance + call", sandboxed, Some(native.0));
    row("the same with the pooling allocator", pooled, Some(native.0));
    row("stdio round trip: ping (baseline)", ping, None);
    row("stdio round trip: tools/call chaos.echo", call, Some(ping.0));
}
