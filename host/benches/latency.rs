//! Latency of a trivial tool call, median of many, with baselines measured in the same run:
//!
//! 1. in process: `Catalog::call_tool` on the `chaos.echo` guest (fresh instance per call)
//!    against the same echo as a native Rust function;
//! 2. end to end: `tools/call` of `chaos.echo` through the real `mcpbox` binary over stdio
//!    against `ping` over the same connection (the protocol's own round trip);
//! 3. the cost of sealed `requestState` on a trivial multi round-trip: a 2026-07-28 call of a
//!    tool of the `conformance` plugin that asks nothing (`test_simple_text`) against the two
//!    rounds of one of the same plugin that saves a state and asks one question
//!    (`test_input_required_result_request_state`): the first round seals the state, the
//!    second opens it. Both instantiate the same component, so the difference is the asking
//!    and the sealing.
//!
//! Run with `scripts/bench.sh` (it builds the guests first). `BENCH_CALLS` sets the count.

#![expect(clippy::unwrap_used, reason = "a benchmark stops at the first thing that does not hold")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcpbox::runtime::{Catalog, FirstUse, Pins};

use mcpbox::runtime::engine::EngineOptions;
use mcpbox::runtime::engine::compile::{CompileBounds, Compiler};
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
            let (catalog, problems) = Catalog::load(
                &compiler,
                std::slice::from_ref(&chaos),
                &Default::default(),
                Limits::default(),
                &Pins::off(),
                FirstUse::Report,
            )
            .await;
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

    let mut server = StdioServer::start(&[&chaos, &root.join("target/test-plugins/conformance.wasm")], &cache);
    server.round_trip(
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }),
    );
    let mut ping = Vec::with_capacity(calls);
    let mut call = Vec::with_capacity(calls);
    for _ in 0..calls {
        ping.push(server.round_trip("ping", json!({})).0);
        call.push(
            server.round_trip("tools/call", json!({ "name": "chaos.echo", "arguments": { "value": "hello" } })).0,
        );
    }
    let (ping, call) = (stats(ping), stats(call));

    let mut modern = StdioServer::start(&[&chaos, &root.join("target/test-plugins/conformance.wasm")], &cache);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
    });
    let (mut plain, mut sealing, mut opening, mut state_bytes) = (Vec::new(), Vec::new(), Vec::new(), 0);
    let asking = "conformance.test_input_required_result_request_state";
    for _ in 0..calls {
        let simple = json!({ "name": "conformance.test_simple_text", "arguments": {}, "_meta": meta });
        plain.push(modern.round_trip("tools/call", simple).0);
        let (time, first) = modern.round_trip("tools/call", json!({ "name": asking, "arguments": {}, "_meta": meta }));
        sealing.push(time);
        let state = first["result"]["requestState"].clone();
        state_bytes = state.as_str().unwrap().len();
        let answers = json!({ "confirm": { "action": "accept", "content": { "ok": true } } });
        let retry =
            json!({ "name": asking, "arguments": {}, "_meta": meta, "inputResponses": answers, "requestState": state });
        let (time, done) = modern.round_trip("tools/call", retry);
        assert!(done["result"]["content"][0]["text"].as_str().unwrap().starts_with("state-ok"), "{done}");
        opening.push(time);
    }
    let (plain, sealing, opening) = (stats(plain), stats(sealing), stats(opening));

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
    row("2026-07-28 tools/call, no question (baseline)", plain, None);
    row(&format!("round 1: saves, asks, seals {state_bytes} B of state"), sealing, Some(plain.0));
    row("round 2: opens the state, answers, completes", opening, Some(plain.0));
}

/// `mcpbox serve` over stdio, for round trips one at a time.
struct StdioServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl StdioServer {
    fn start(plugins: &[&Path], cache: &Path) -> StdioServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpbox"))
            .arg("serve")
            .args(plugins)
            .env("MCPBOX_CACHE_DIR", cache)
            .env("MCPBOX_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioServer { child, stdin, stdout, id: 0 }
    }

    /// The time from sending the request to reading its response, and the response.
    fn round_trip(&mut self, method: &str, params: Value) -> (Duration, Value) {
        self.id += 1;
        let t = Instant::now();
        writeln!(self.stdin, "{}", json!({ "jsonrpc": "2.0", "id": self.id, "method": method, "params": params }))
            .unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            self.stdout.read_line(&mut line).unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == self.id {
                assert!(message.get("error").is_none(), "{message}");
                return (t.elapsed(), message);
            }
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
