//! mcpbox against a native MCP server, side by side in one run: the real release `mcpbox`
//! serving the sandboxed `echo` plugin, and `examples/native_echo.rs` (rmcp, the same echo in
//! plain Rust), each driven as a client over stdio and over Streamable HTTP (a legacy session
//! per lane, and stateless 2026-07-28 requests) with 1, 8 and 64 requests in flight; and
//! mcpbox over WebSocket (one socket, calls pipelined like stdio), against the native server
//! over stdio, its nearest equivalent (rmcp has no WebSocket server). Reports
//! median and p99 latency, throughput, cold start and peak memory, with the ratios
//! mcpbox/native. `scripts/bench.sh compare` builds everything and runs it; `BENCH_SECONDS`
//! sets the time per row (default 2); `BENCH_MCPBOX` runs another `mcpbox` binary under the same
//! driver (to compare two builds of mcpbox).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/http_client.rs"]
mod http_client;
use http_client::{MODERN_META, open_session, post};

/// One server under test.
struct Server {
    program: PathBuf,
    args: Vec<String>,
    tool: &'static str,
}

impl Server {
    fn command(&self, extra: &[&str]) -> Command {
        let root = repo_root();
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .args(extra)
            .env("MCPBOX_CACHE_DIR", root.join("target/bench-compile-cache"))
            .env("MCPBOX_LOG", "warn");
        command
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

#[derive(Clone, Copy)]
struct Stats {
    rate: f64,
    median: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>, seconds: f64) -> Stats {
    samples.sort();
    let n = samples.len();
    Stats { rate: n as f64 / seconds, median: samples[n / 2], p99: samples[(n * 99 / 100).min(n - 1)] }
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A server on stdio, initialized.
struct StdioClient {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl StdioClient {
    fn start(server: &Server, extra: &[&str]) -> StdioClient {
        let mut child =
            server.command(extra).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut client = StdioClient { child, stdin, stdout };
        client.send(&json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } } }));
        client.receive();
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        client
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() && message.get("method").is_none() {
                return message;
            }
        }
    }
}

/// `in_flight` pipelined calls on one stdio connection for `seconds`.
fn run_stdio(server: &Server, in_flight: usize, seconds: f64) -> (Stats, u64) {
    let mut client = StdioClient::start(server, &[]);
    let call = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": server.tool, "arguments": { "text": "hello" } } })
    };
    // Warm up (first instantiation, caches).
    for id in 1..=50 {
        client.send(&call(id));
        client.receive();
    }
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let mut samples = Vec::new();
    let mut next = 1000u64;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    for _ in 0..in_flight {
        sent.insert(next, Instant::now());
        client.send(&call(next));
        next += 1;
    }
    while !sent.is_empty() {
        let response = client.receive();
        let id = response["id"].as_u64().unwrap();
        assert!(response["result"]["content"][0]["text"] == "hello", "{response}");
        samples.push(sent.remove(&id).unwrap().elapsed());
        if Instant::now() < deadline {
            sent.insert(next, Instant::now());
            client.send(&call(next));
            next += 1;
        }
    }
    let peak = peak_rss_kib(client.child.id());
    let _ = client.child.kill();
    let _ = client.child.wait();
    (stats(samples, seconds), peak)
}

/// Spawn to the first `tools/list` answer over stdio, median of `runs`.
fn cold_start(server: &Server, extra: &[&str], runs: usize) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let mut client = StdioClient::start(server, extra);
            client.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
            let tools = client.receive();
            assert!(!tools["result"]["tools"].as_array().unwrap().is_empty());
            let elapsed = started.elapsed();
            let _ = client.child.kill();
            let _ = client.child.wait();
            elapsed
        })
        .collect();
    samples.sort();
    samples[runs / 2]
}

/// `lanes` concurrent request loops over HTTP for `seconds`.
async fn run_http(url: &str, tool: &'static str, modern: bool, lanes: usize, seconds: f64) -> Stats {
    let client = reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(256).build().unwrap();
    let mut tasks = Vec::new();
    let start = Instant::now() + Duration::from_millis(300);
    for _ in 0..lanes {
        let client = client.clone();
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let headers: Vec<(&'static str, String)> = if modern {
                vec![
                    ("mcp-protocol-version", "2026-07-28".to_owned()),
                    ("mcp-method", "tools/call".to_owned()),
                    ("mcp-name", tool.to_owned()),
                ]
            } else {
                vec![
                    ("mcp-session-id", open_session(&client, &url).await),
                    ("mcp-protocol-version", "2025-11-25".into()),
                ]
            };
            let meta: Value = serde_json::from_str(MODERN_META).unwrap();
            let body = |id: u64| {
                let mut params = json!({ "name": tool, "arguments": { "text": "hello" } });
                if modern {
                    params["_meta"] = meta.clone();
                }
                json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }).to_string()
            };
            // Warm up until every lane is ready, then measure together.
            let mut id = 1u64;
            while Instant::now() < start {
                id += 1;
                post(&client, &url, body(id), &headers).await;
            }
            let deadline = start + Duration::from_secs_f64(seconds);
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                id += 1;
                let started = Instant::now();
                let (status, _, text) = post(&client, &url, body(id), &headers).await;
                samples.push(started.elapsed());
                assert!(status == 200 && text.contains("hello"), "{status} {text}");
            }
            samples
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    stats(all, seconds)
}

/// `in_flight` pipelined calls on one WebSocket for `seconds`.
async fn run_ws(url: &str, tool: &str, in_flight: usize, seconds: f64) -> Stats {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.replacen("http://", "ws://", 1).replace("/mcp", "/ws").into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "mcp".parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } } });
    let call = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": { "text": "hello" } } })
    };
    async fn receive<S: futures::Stream<Item = tokio_tungstenite::tungstenite::Result<Message>> + Unpin>(
        socket: &mut S,
    ) -> Value {
        loop {
            if let Message::Text(text) = socket.next().await.unwrap().unwrap() {
                return serde_json::from_str(&text).unwrap();
            }
        }
    }
    socket.send(Message::text(initialize.to_string())).await.unwrap();
    receive(&mut socket).await;
    // Warm up (first instantiation, caches).
    for id in 1..=50 {
        socket.send(Message::text(call(id).to_string())).await.unwrap();
        receive(&mut socket).await;
    }
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let mut samples = Vec::new();
    let mut next = 1000u64;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    for _ in 0..in_flight {
        sent.insert(next, Instant::now());
        socket.send(Message::text(call(next).to_string())).await.unwrap();
        next += 1;
    }
    while !sent.is_empty() {
        let response = receive(&mut socket).await;
        let id = response["id"].as_u64().unwrap();
        assert!(response["result"]["content"][0]["text"] == "hello", "{response}");
        samples.push(sent.remove(&id).unwrap().elapsed());
        if Instant::now() < deadline {
            sent.insert(next, Instant::now());
            socket.send(Message::text(call(next).to_string())).await.unwrap();
            next += 1;
        }
    }
    stats(samples, seconds)
}

fn start_http(server: &Server) -> (Child, String) {
    let mut child = server
        .command(&["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("MCPBOX_LOG", "info,rmcp=warn")
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the server exited").unwrap();
        if let Some(at) = line.find("serving MCP over ") {
            break line[at + 17..].split_whitespace().next().unwrap().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let root = repo_root();
    let echo = root.join("target/test-plugins/echo.wasm");
    let native = root.join("target/release/examples/native_echo");
    assert!(echo.exists() && native.exists(), "run scripts/bench.sh compare (builds the echo plugin and native_echo)");
    let sandboxed = Server {
        program: std::env::var_os("BENCH_MCPBOX").map_or_else(|| env!("CARGO_BIN_EXE_mcpbox").into(), PathBuf::from),
        args: vec!["serve".into(), echo.display().to_string()],
        tool: "echo.echo",
    };
    let native = Server { program: native, args: vec![], tool: "echo" };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();

    println!("mcpbox (sandboxed echo plugin) vs native rmcp server (same echo); {seconds} s per row");
    println!(
        "latency in microseconds; ratio = mcpbox / native (latency: lower is better; calls/s: higher is better)\n"
    );
    println!(
        "| transport | in flight | mcpbox calls/s | native calls/s | ratio | mcpbox median | native median | ratio | mcpbox p99 | native p99 | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let row = |label: &str, lanes: usize, a: Stats, b: Stats| {
        println!(
            "| {label} | {lanes} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} |",
            a.rate,
            b.rate,
            a.rate / b.rate,
            micros(a.median),
            micros(b.median),
            micros(a.median) / micros(b.median),
            micros(a.p99),
            micros(b.p99),
            micros(a.p99) / micros(b.p99),
        );
    };
    let mut peaks: HashMap<&str, u64> = HashMap::new();
    let mut native_stdio = HashMap::new();
    for lanes in [1, 8, 64] {
        let (a, peak_a) = run_stdio(&sandboxed, lanes, seconds);
        let (b, peak_b) = run_stdio(&native, lanes, seconds);
        row("stdio", lanes, a, b);
        native_stdio.insert(lanes, b);
        peaks.insert("stdio mcpbox", peak_a.max(*peaks.get("stdio mcpbox").unwrap_or(&0)));
        peaks.insert("stdio native", peak_b.max(*peaks.get("stdio native").unwrap_or(&0)));
    }
    let (mut child_a, url_a) = start_http(&sandboxed);
    let (mut child_b, url_b) = start_http(&native);
    for (label, modern) in [("HTTP, legacy session per lane", false), ("HTTP, stateless 2026-07-28", true)] {
        for lanes in [1, 8, 64] {
            let a = runtime.block_on(run_http(&url_a, sandboxed.tool, modern, lanes, seconds));
            let b = runtime.block_on(run_http(&url_b, native.tool, modern, lanes, seconds));
            row(label, lanes, a, b);
        }
    }
    for lanes in [1, 8, 64] {
        let a = runtime.block_on(run_ws(&url_a, sandboxed.tool, lanes, seconds));
        row("WebSocket, one socket (native: its stdio above)", lanes, a, native_stdio[&lanes]);
    }
    let http_peak_a = peak_rss_kib(child_a.id());
    let http_peak_b = peak_rss_kib(child_b.id());
    for child in [&mut child_a, &mut child_b] {
        let _ = child.kill();
        let _ = child.wait();
    }

    let warm_a = cold_start(&sandboxed, &[], 9);
    let uncached_a = cold_start(&sandboxed, &["--no-cache"], 5);
    let start_b = cold_start(&native, &[], 9);
    println!("\n| start-up (spawn to tools/list answered, median) | mcpbox | native | ratio |");
    println!("|---|---:|---:|---:|");
    println!(
        "| plugin compiled from the cache | {:.1} ms | {:.1} ms | {:.2} |",
        warm_a.as_secs_f64() * 1e3,
        start_b.as_secs_f64() * 1e3,
        warm_a.as_secs_f64() / start_b.as_secs_f64()
    );
    println!(
        "| plugin compiled afresh (--no-cache) | {:.1} ms | {:.1} ms | {:.2} |",
        uncached_a.as_secs_f64() * 1e3,
        start_b.as_secs_f64() * 1e3,
        uncached_a.as_secs_f64() / start_b.as_secs_f64()
    );
    println!("\n| peak memory (VmHWM) | mcpbox | native | ratio |");
    println!("|---|---:|---:|---:|");
    let stdio_a = peaks["stdio mcpbox"];
    let stdio_b = peaks["stdio native"];
    println!("| stdio, after 64 in flight | {stdio_a} KiB | {stdio_b} KiB | {:.1} |", stdio_a as f64 / stdio_b as f64);
    println!(
        "| HTTP, after all HTTP rows | {http_peak_a} KiB | {http_peak_b} KiB | {:.1} |",
        http_peak_a as f64 / http_peak_b as f64
    );
}
