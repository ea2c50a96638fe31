//! The load driver of `benches/compare.rs`: one server process under test, driven over stdio,
//! Streamable HTTP (legacy sessions or stateless requests) or WebSocket with a fixed number of
//! calls in flight, measuring what the client sees (rate, median and p99 latency) and what the
//! server spent (CPU per call, from `/proc/PID/stat`, over the measured window only).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http_client::{MODERN_META, open_session, post, served_url};

/// One server under test: how to start it and the tool it calls.
pub struct Server {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub tool: String,
    pub arguments: Value,
    /// What the tool's text answer starts with.
    pub answer: String,
}

impl Server {
    pub fn command(&self, extra: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).args(extra).env("MCPBOX_LOG", "warn");
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    pub fn call(&self, id: u64) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": self.tool, "arguments": self.arguments } })
    }

    pub fn check(&self, response: &Value) {
        let text = response["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(&self.answer), "{response}");
    }
}

/// What one row measured for one server.
#[derive(Clone, Copy, Default)]
pub struct Stats {
    pub rate: f64,
    pub median: Duration,
    pub p99: Duration,
    /// Server CPU (user + system, every thread) per call, in microseconds.
    pub cpu_per_call: f64,
    /// Minor page faults of the server per call (stdio runs only).
    pub faults_per_call: f64,
    /// TLB shootdowns on the machine per call (`/proc/interrupts`; stdio runs only).
    pub shootdowns_per_call: f64,
}

pub fn stats(mut samples: Vec<Duration>, seconds: f64, cpu_seconds: f64) -> Stats {
    samples.sort();
    let n = samples.len();
    Stats {
        rate: n as f64 / seconds,
        median: samples[n / 2],
        p99: samples[(n * 99 / 100).min(n - 1)],
        cpu_per_call: cpu_seconds * 1e6 / n as f64,
        ..Stats::default()
    }
}

/// The median of each measure over repetitions.
pub fn median(runs: &[Stats]) -> Stats {
    let mid = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    Stats {
        rate: mid(runs.iter().map(|s| s.rate).collect()),
        median: Duration::from_secs_f64(mid(runs.iter().map(|s| s.median.as_secs_f64()).collect())),
        p99: Duration::from_secs_f64(mid(runs.iter().map(|s| s.p99.as_secs_f64()).collect())),
        cpu_per_call: mid(runs.iter().map(|s| s.cpu_per_call).collect()),
        faults_per_call: mid(runs.iter().map(|s| s.faults_per_call).collect()),
        shootdowns_per_call: mid(runs.iter().map(|s| s.shootdowns_per_call).collect()),
    }
}

/// Minor page faults `pid` has taken, all threads (`/proc/PID/stat` field 10).
pub fn minor_faults(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    fields.get(7).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// TLB shootdown interrupts on every CPU of the machine so far (`/proc/interrupts`, x86).
pub fn tlb_shootdowns() -> u64 {
    let interrupts = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    interrupts
        .lines()
        .find(|line| line.trim_start().starts_with("TLB:"))
        .map(|line| line.split_whitespace().skip(1).map_while(|n| n.parse::<u64>().ok()).sum())
        .unwrap_or(0)
}

/// CPU seconds `pid` has used, all its live threads, to the nanosecond: the first field of
/// each `/proc/PID/task/TID/schedstat`. `/proc/PID/stat` counts in USER_HZ (10 ms), which over a
/// 0.25 s run of ~100 ms of CPU is ±10% of quantization, more than the changes the guard looks
/// for. Falls back to `/proc/PID/stat` where schedstat is missing (a kernel without
/// CONFIG_SCHEDSTATS).
pub fn cpu_seconds(pid: u32) -> f64 {
    let precise: Option<u64> = std::fs::read_dir(format!("/proc/{pid}/task")).ok().and_then(|tasks| {
        tasks
            .map(|task| {
                let schedstat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
                schedstat.split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum()
    });
    if let Some(nanos) = precise {
        return nanos as f64 / 1e9;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// A `/proc/PID/status` field in KiB (`VmRSS`, `VmHWM`).
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A server on stdio, initialized.
pub struct StdioClient {
    pub child: Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl StdioClient {
    pub fn start(server: &Server, extra: &[&str]) -> StdioClient {
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

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn receive(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `in_flight` pipelined calls on one stdio connection for `seconds`; also the peak RSS.
pub fn run_stdio(server: &Server, in_flight: usize, seconds: f64) -> (Stats, u64) {
    let (stats, peak, (), ()) = run_stdio_probed(server, in_flight, seconds, |_| ());
    (stats, peak)
}

/// [`run_stdio`], calling `probe` with the server's pid when the measured window opens and
/// when it closes (before the server stops); returns both probes too.
pub fn run_stdio_probed<T>(
    server: &Server,
    in_flight: usize,
    seconds: f64,
    mut probe: impl FnMut(u32) -> T,
) -> (Stats, u64, T, T) {
    let mut client = StdioClient::start(server, &[]);
    // Warm up (first instantiation, caches).
    for id in 1..=50 {
        client.send(&server.call(id));
        client.receive();
    }
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let mut samples = Vec::new();
    let mut next = 1000u64;
    let pid = client.child.id();
    let opened = probe(pid);
    let cpu_before = cpu_seconds(pid);
    let (faults_before, shootdowns_before) = (minor_faults(pid), tlb_shootdowns());
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    for _ in 0..in_flight {
        sent.insert(next, Instant::now());
        client.send(&server.call(next));
        next += 1;
    }
    while !sent.is_empty() {
        let response = client.receive();
        let id = response["id"].as_u64().unwrap();
        server.check(&response);
        samples.push(sent.remove(&id).unwrap().elapsed());
        if Instant::now() < deadline {
            sent.insert(next, Instant::now());
            client.send(&server.call(next));
            next += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    let calls = samples.len() as f64;
    let faults = (minor_faults(pid) - faults_before) as f64 / calls;
    let shootdowns = tlb_shootdowns().saturating_sub(shootdowns_before) as f64 / calls;
    let peak = memory_kib(pid, "VmHWM:");
    let closed = probe(pid);
    client.stop();
    (
        Stats { faults_per_call: faults, shootdowns_per_call: shootdowns, ..stats(samples, elapsed, cpu) },
        peak,
        opened,
        closed,
    )
}

/// Spawn to the first `tools/list` answer over stdio, and the RSS then; medians of `runs`.
pub fn start_up(server: &Server, extra: &[&str], runs: usize) -> (Duration, u64) {
    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let mut client = StdioClient::start(server, extra);
        client.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
        let tools = client.receive();
        assert!(!tools["result"]["tools"].as_array().unwrap().is_empty());
        times.push(started.elapsed());
        rss.push(memory_kib(client.child.id(), "VmRSS:"));
        client.stop();
    }
    times.sort();
    rss.sort();
    (times[runs / 2], rss[runs / 2])
}

/// A server on Streamable HTTP, and its endpoint.
pub fn start_http(server: &Server) -> (Child, String) {
    let mut child = server
        .command(&["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("MCPBOX_LOG", "info,rmcp=warn")
        .spawn()
        .unwrap();
    let url = served_url(&mut child);
    (child, url)
}

/// `lanes` concurrent request loops over HTTP for `seconds` against the server `pid` at `url`.
pub async fn run_http(pid: u32, url: &str, server: &Server, modern: bool, lanes: usize, seconds: f64) -> Stats {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(256).build().unwrap();
    let mut tasks = Vec::new();
    let start = Instant::now() + Duration::from_millis(300);
    let deadline = start + Duration::from_secs_f64(seconds);
    for _ in 0..lanes {
        let client = client.clone();
        let url = url.to_owned();
        let tool = server.tool.clone();
        let arguments = server.arguments.clone();
        tasks.push(tokio::spawn(async move {
            let headers: Vec<(&'static str, String)> = if modern {
                vec![
                    ("mcp-protocol-version", "2026-07-28".to_owned()),
                    ("mcp-method", "tools/call".to_owned()),
                    ("mcp-name", tool.clone()),
                ]
            } else {
                vec![
                    ("mcp-session-id", open_session(&client, &url).await),
                    ("mcp-protocol-version", "2025-11-25".into()),
                ]
            };
            let meta: Value = serde_json::from_str(MODERN_META).unwrap();
            let body = |id: u64| {
                let mut params = json!({ "name": tool, "arguments": arguments });
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
            let mut samples = Vec::new();
            while Instant::now() < deadline {
                id += 1;
                let started = Instant::now();
                let (status, _, text) = post(&client, &url, body(id), &headers).await;
                samples.push(started.elapsed());
                assert!(status == 200 && text.contains("result"), "{status} {text}");
            }
            samples
        }));
    }
    tokio::time::sleep_until(start.into()).await;
    let cpu_before = cpu_seconds(pid);
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let elapsed = start.elapsed().as_secs_f64();
    stats(all, elapsed, cpu_seconds(pid) - cpu_before)
}

/// `in_flight` pipelined calls on one WebSocket for `seconds`.
pub async fn run_ws(pid: u32, url: &str, server: &Server, in_flight: usize, seconds: f64) -> Stats {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.replacen("http://", "ws://", 1).replace("/mcp", "/ws").into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "mcp".parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } } });
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
    for id in 1..=50 {
        socket.send(Message::text(server.call(id).to_string())).await.unwrap();
        receive(&mut socket).await;
    }
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let mut samples = Vec::new();
    let mut next = 1000u64;
    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    for _ in 0..in_flight {
        sent.insert(next, Instant::now());
        socket.send(Message::text(server.call(next).to_string())).await.unwrap();
        next += 1;
    }
    while !sent.is_empty() {
        let response = receive(&mut socket).await;
        let id = response["id"].as_u64().unwrap();
        server.check(&response);
        samples.push(sent.remove(&id).unwrap().elapsed());
        if Instant::now() < deadline {
            sent.insert(next, Instant::now());
            socket.send(Message::text(server.call(next).to_string())).await.unwrap();
            next += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    stats(samples, elapsed, cpu_seconds(pid) - cpu_before)
}
