//! Interpreter plugins against native servers (`scripts/bench.sh interpreters`, and part of
//! `scripts/bench.sh compare`).
//!
//! - The `greet` tool of `mcpbox new --lang python` and `--lang js` (built by
//!   `scripts/bench-plugins.sh`) against the same tool on the official Python SDK's own server
//!   (`benches/native_greet.py`), over stdio at 1 and 8 in flight: calls/s, p50, p99, server CPU
//!   per call, and where a call's cost goes: the server's minor page faults per call, the
//!   machine's TLB shootdowns per call, `memory.grow`s per call and the bytes the pool keeps
//!   resident after the run (both from mcpbox's own metrics, scraped).
//! - The same rows with resident resets off (`MCPBOX_RESIDENT_RESET_KIB=0`, the pool gives a
//!   freed slot's pages back as before), interleaved with the default: what they gain.
//! - Twenty interpreter plugins in one server (ten copies of each): start-up from the cache, RSS
//!   after start, peak RSS after calls to all of them at 8 in flight.
//!
//! Each row runs `BENCH_REPS` times (default 3), the servers alternating which goes first; each
//! cell is the median. `BENCH_SECONDS` sets the time per run (default 2), `BENCH_MCPBOX`
//! another `mcpbox` binary.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

#[path = "common/http_client.rs"]
mod http_client;
#[path = "common/settings.rs"]
mod settings;
use settings::{env_number, micros, repo_root};
#[path = "common/load.rs"]
#[expect(dead_code, reason = "the HTTP and WebSocket lanes are compare.rs's")]
mod load;
use load::{Server, Stats, median};

/// A free loopback port for a server's `--metrics`.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `mcpbox serve PATHS` with its metrics on `metrics`, `resident` KiB of resident resets (None:
/// mcpbox's own decision).
fn mcpbox_serving(paths: &[&Path], tool: &str, metrics: u16, resident: Option<u64>) -> Server {
    let program = std::env::var_os("BENCH_MCPBOX").map_or_else(|| env!("CARGO_BIN_EXE_mcpbox").into(), PathBuf::from);
    let mut args =
        vec!["serve".to_owned(), "--no-watch".to_owned(), "--metrics".to_owned(), format!("127.0.0.1:{metrics}")];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let mut env =
        vec![("MCPBOX_CACHE_DIR".into(), repo_root().join("target/bench-compile-cache").display().to_string())];
    if let Some(kib) = resident {
        env.push(("MCPBOX_RESIDENT_RESET_KIB".into(), kib.to_string()));
    }
    Server { program, args, env, tool: tool.into(), arguments: json!({ "name": "Ann" }), answer: "Hello, Ann".into() }
}

/// One metric's value (summed over its labels) from mcpbox's `/metrics`; 0 when absent.
fn scrape(port: u16, name: &str) -> f64 {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return 0.0 };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = write!(stream, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body);
    body.lines()
        .filter(|line| line.starts_with(name) && line[name.len()..].starts_with([' ', '{']))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What a run of an mcpbox server measured beyond [`Stats`].
#[derive(Clone, Copy, Default)]
struct Inside {
    grows_per_call: f64,
    resident_kib: f64,
}

fn run_mcpbox(server: &Server, port: u16, lanes: usize, seconds: f64) -> (Stats, Inside) {
    let probe = |_pid| (scrape(port, "mcpbox_guest_memory_grows_total"), scrape(port, "mcpbox_pool_resident_bytes"));
    let (stats, _, (grows_before, _), (grows_after, resident)) = load::run_stdio_probed(server, lanes, seconds, probe);
    let calls = stats.rate * seconds;
    (stats, Inside { grows_per_call: (grows_after - grows_before) / calls.max(1.0), resident_kib: resident / 1024.0 })
}

fn mid(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn print_header() {
    println!(
        "| plugin | in flight | mcpbox calls/s | native calls/s | ratio | mcpbox p50 | native p50 | ratio | mcpbox p99 | native p99 | mcpbox CPU/call | native CPU/call | faults/call mcpbox, native | TLB shootdowns/call | memory.grow/call | pool resident after |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

fn print_row(label: &str, lanes: usize, a: Stats, b: Stats, inside: Inside) {
    println!(
        "| {label} | {lanes} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1}, {:.1} | {:.2} | {:.2} | {:.0} KiB |",
        a.rate,
        b.rate,
        a.rate / b.rate,
        micros(a.median),
        micros(b.median),
        micros(a.median) / micros(b.median),
        micros(a.p99),
        micros(b.p99),
        a.cpu_per_call,
        b.cpu_per_call,
        a.faults_per_call,
        b.faults_per_call,
        a.shootdowns_per_call,
        inside.grows_per_call,
        inside.resident_kib,
    );
}

fn main() {
    let seconds = env_number("BENCH_SECONDS", 2.0);
    let reps = env_number("BENCH_REPS", 3.0).max(1.0) as usize;
    let root = repo_root();
    let plugins = root.join("target/bench-plugins");
    let python = plugins.join("python/hello/hello.wasm");
    let js = plugins.join("js/hello/hello.wasm");
    let native_python = plugins.join("native-python/bin/python");
    assert!(
        python.exists() && js.exists() && native_python.exists(),
        "run scripts/bench.sh interpreters (scripts/bench-plugins.sh builds the plugins)"
    );
    let native = Server {
        program: native_python,
        args: vec![root.join("host/benches/native_greet.py").display().to_string()],
        env: vec![],
        tool: "greet".into(),
        arguments: json!({ "name": "Ann" }),
        answer: "Hello, Ann".into(),
    };
    println!("the `greet` tool of `mcpbox new --lang python|js` vs the official Python SDK's server (stdio)");
    println!(
        "{seconds} s per run, median of {reps} interleaved runs; latency and CPU per call in microseconds; \"reset off\": MCPBOX_RESIDENT_RESET_KIB=0\n"
    );
    print_header();
    for (label, plugin) in [("Python plugin", &python), ("JavaScript plugin", &js)] {
        for resident in [None, Some(0)] {
            let port = free_port();
            let server = mcpbox_serving(&[plugin], "hello.greet", port, resident);
            let label = if resident.is_some() { format!("{label}, reset off") } else { label.to_owned() };
            for lanes in [1, 8] {
                let (mut a, mut b, mut inside) = (Vec::new(), Vec::new(), Vec::new());
                for rep in 0..reps {
                    let mut mine = || {
                        let (stats, measured) = run_mcpbox(&server, port, lanes, seconds);
                        a.push(stats);
                        inside.push(measured);
                    };
                    if rep % 2 == 0 {
                        mine();
                        b.push(load::run_stdio(&native, lanes, seconds).0);
                    } else {
                        b.push(load::run_stdio(&native, lanes, seconds).0);
                        mine();
                    }
                }
                let inside = Inside {
                    grows_per_call: mid(inside.iter().map(|i| i.grows_per_call).collect()),
                    resident_kib: mid(inside.iter().map(|i| i.resident_kib).collect()),
                };
                print_row(&label, lanes, median(&a), median(&b), inside);
            }
        }
    }

    println!("\n| interpreter plugin | start-up from the cache | RSS after start | peak RSS after 8 in flight |");
    println!("|---|---:|---:|---:|");
    let single = [
        ("Python plugin", mcpbox_serving(&[&python], "hello.greet", free_port(), None)),
        ("JavaScript plugin", mcpbox_serving(&[&js], "hello.greet", free_port(), None)),
    ];
    for (label, server) in single.iter().map(|(l, s)| (*l, s)).chain([("native Python SDK server", &native)]) {
        let (time, rss) = load::start_up(server, &[], 3);
        let (_, peak) = load::run_stdio(server, 8, seconds.min(1.0));
        println!("| {label} | {:.1} ms | {rss} KiB | {peak} KiB |", time.as_secs_f64() * 1e3);
    }
    twenty(&root, &python, &js, reps);
}

/// Ten copies of each interpreter plugin in one server.
fn twenty(root: &Path, python: &Path, js: &Path, reps: usize) {
    let dir = root.join("target/bench-twenty-interpreters");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 0..10 {
        for (kind, source) in [("py", python), ("js", js)] {
            let copy = dir.join(format!("{kind}{n:02}.wasm"));
            if !copy.exists() {
                std::fs::copy(source, copy).unwrap();
            }
        }
    }
    let (mut starts, mut after_start, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    let tools: Vec<String> = (0..10).flat_map(|n| ["py", "js"].map(|kind| format!("{kind}{n:02}.greet"))).collect();
    for _ in 0..reps {
        let server = mcpbox_serving(&[&dir], "py00.greet", free_port(), None);
        let (time, rss) = load::start_up(&server, &[], 1);
        starts.push(time.as_secs_f64() * 1e3);
        after_start.push(rss as f64);
        // One server; every plugin called in turn, 8 calls in flight, 40 calls each.
        let mut client = load::StdioClient::start(&server, &[]);
        let mut id = 1u64;
        for tool in &tools {
            let mut in_flight = 0;
            for _ in 0..40 {
                if in_flight == 8 {
                    client.receive();
                    in_flight -= 1;
                }
                client.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": tool, "arguments": { "name": "Ann" } } }));
                id += 1;
                in_flight += 1;
            }
            for _ in 0..in_flight {
                let response = client.receive();
                assert!(
                    response["result"]["content"][0]["text"].as_str().unwrap_or_default().starts_with("Hello"),
                    "{response}"
                );
            }
        }
        peaks.push(load::memory_kib(client.child.id(), "VmHWM:") as f64);
        client.stop();
    }
    println!("\n| twenty interpreter plugins (10 Python, 10 JavaScript) | |");
    println!("|---|---:|");
    println!("| start-up from the cache | {:.1} ms |", mid(starts));
    println!("| RSS after start | {:.0} KiB |", mid(after_start));
    println!("| peak RSS, each plugin called at 8 in flight | {:.0} KiB |", mid(peaks));
}
