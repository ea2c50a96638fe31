//! mcpbox against native MCP servers, side by side in one run (`scripts/bench.sh compare`).
//!
//! - The sandboxed `echo` plugin in the real release `mcpbox` against `examples/native_echo.rs`
//!   (rmcp, the same echo in plain Rust), over stdio, Streamable HTTP (a legacy session per lane,
//!   and stateless 2026-07-28 requests) and WebSocket (one socket, calls pipelined like stdio;
//!   rmcp has no WebSocket server, so against the native stdio), with 1, 8 and 64 in flight:
//!   calls/s, median and p99 latency, and the server's CPU per call.
//! - Start-up (spawn to the first `tools/list` answer, from the compile cache) and RSS then, with
//!   one plugin and with 50 (copies of `echo`), and peak memory under load.
//! - The interpreter plugins against the Python SDK's server are `benches/interpreters.rs`
//!   (`scripts/bench.sh compare` runs both).
//!
//! Every row runs `BENCH_REPS` times (default 3), the servers alternating which goes first, and
//! each cell is the median of the repetitions. `BENCH_SECONDS` sets the time per run (default
//! 2); `BENCH_ROWS` keeps the rows whose label contains it; `BENCH_MCPBOX` runs another
//! `mcpbox` binary under the same driver. `BENCH_BASELINE` (`scripts/bench.sh builds OLD`)
//! compares two builds of mcpbox: that binary, serving the same echo plugin, stands where the
//! native server does, and each median of calls/s is checked against the min-max of the
//! other build's runs.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

#[path = "common/http_client.rs"]
mod http_client;
#[path = "common/settings.rs"]
mod settings;
use settings::{env_number, micros, repo_root};
#[path = "common/load.rs"]
mod load;
use load::{Server, Stats, median};

/// How a row drives its server.
#[derive(Clone, Copy)]
enum Lane {
    Stdio,
    Http {
        modern: bool,
    },
    /// mcpbox over WebSocket; the native side is its stdio.
    WebSocket,
}

fn mcpbox_program() -> PathBuf {
    std::env::var_os("BENCH_MCPBOX").map_or_else(|| env!("CARGO_BIN_EXE_mcpbox").into(), PathBuf::from)
}

/// `mcpbox serve PATHS` calling `tool`, from the benchmark's compile cache.
/// Another build of mcpbox to compare with (`BENCH_BASELINE`), in place of the native server.
fn baseline() -> Option<PathBuf> {
    std::env::var_os("BENCH_BASELINE").map(PathBuf::from)
}

fn mcpbox_serving(paths: &[&Path], tool: &str, arguments: serde_json::Value, answer: &str) -> Server {
    let mut args = vec!["serve".to_owned(), "--no-watch".to_owned()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    Server {
        program: mcpbox_program(),
        args,
        env: vec![("MCPBOX_CACHE_DIR".into(), repo_root().join("target/bench-compile-cache").display().to_string())],
        tool: tool.into(),
        arguments,
        answer: answer.into(),
    }
}

fn print_header(first: &str, other: &str) {
    println!(
        "| {first} | in flight | mcpbox calls/s | {other} calls/s | ratio | mcpbox p50 | {other} p50 | ratio | mcpbox p99 | {other} p99 | ratio | mcpbox CPU/call | {other} CPU/call | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

fn print_row(label: &str, lanes: usize, a: Stats, b: Stats) {
    println!(
        "| {label} | {lanes} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} |",
        a.rate,
        b.rate,
        a.rate / b.rate,
        micros(a.median),
        micros(b.median),
        micros(a.median) / micros(b.median),
        micros(a.p99),
        micros(b.p99),
        micros(a.p99) / micros(b.p99),
        a.cpu_per_call,
        b.cpu_per_call,
        a.cpu_per_call / b.cpu_per_call,
    );
}

fn main() {
    let seconds = env_number("BENCH_SECONDS", 2.0);
    let reps = env_number("BENCH_REPS", 3.0).max(1.0) as usize;
    let only = std::env::var("BENCH_ROWS").unwrap_or_default();
    let root = repo_root();
    let echo = root.join("target/test-plugins/echo.wasm");
    let native = root.join("target/release/examples/native_echo");
    let baseline = baseline();
    assert!(
        echo.exists() && (native.exists() || baseline.is_some()),
        "run scripts/bench.sh compare (builds the echo plugin and native_echo)"
    );
    let hello = json!({ "text": "hello" });
    let sandboxed = mcpbox_serving(&[&echo], "echo.echo", hello.clone(), "hello");
    let (native, other) = match &baseline {
        Some(program) => {
            (Server { program: program.clone(), ..mcpbox_serving(&[&echo], "echo.echo", hello, "hello") }, "baseline")
        }
        None => {
            let native = Server {
                program: native,
                args: vec![],
                env: vec![],
                tool: "echo".into(),
                arguments: hello,
                answer: "hello".into(),
            };
            (native, "native")
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();

    match &baseline {
        Some(program) => {
            println!("mcpbox against another build of it, {}, both serving the echo plugin", program.display())
        }
        None => println!("mcpbox (sandboxed echo plugin) vs native rmcp server (same echo)"),
    }
    println!(
        "{seconds} s per run, median of {reps} interleaved runs; latency and CPU per call in microseconds; ratio = mcpbox / {other}\n"
    );
    let rows: Vec<(&str, Lane)> = vec![
        ("stdio", Lane::Stdio),
        ("HTTP, legacy session per lane", Lane::Http { modern: false }),
        ("HTTP, stateless 2026-07-28", Lane::Http { modern: true }),
        ("WebSocket, one socket (native: its stdio)", Lane::WebSocket),
    ];
    let rows: Vec<(&str, Lane, usize)> = rows
        .into_iter()
        .filter(|(label, _)| label.contains(only.as_str()))
        .flat_map(|(label, lane)| [1, 8, 64].map(|lanes| (label, lane, lanes)))
        .collect();
    let (mut http_a, url_a) = load::start_http(&sandboxed);
    let (mut http_b, url_b) = load::start_http(&native);
    let mut results: Vec<(Vec<Stats>, Vec<Stats>)> = vec![(Vec::new(), Vec::new()); rows.len()];
    let (mut peak_a, mut peak_b) = (0, 0);
    for rep in 0..reps {
        for (i, &(_, lane, lanes)) in rows.iter().enumerate() {
            let mut run = |mine: bool| -> Stats {
                let (server, child, url) =
                    if mine { (&sandboxed, &http_a, &url_a) } else { (&native, &http_b, &url_b) };
                match lane {
                    Lane::Stdio => {
                        let (stats, peak) = load::run_stdio(server, lanes, seconds);
                        if mine {
                            peak_a = peak_a.max(peak)
                        } else {
                            peak_b = peak_b.max(peak)
                        }
                        stats
                    }
                    Lane::Http { modern } => {
                        runtime.block_on(load::run_http(child.id(), url, server, modern, lanes, seconds))
                    }
                    Lane::WebSocket if mine || baseline.is_some() => {
                        runtime.block_on(load::run_ws(child.id(), url, server, lanes, seconds))
                    }
                    Lane::WebSocket => load::run_stdio(server, lanes, seconds).0,
                }
            };
            // Alternate which goes first, so that neither always runs on a machine the other warmed.
            let (a, b) = if rep % 2 == 0 {
                let a = run(true);
                (a, run(false))
            } else {
                let b = run(false);
                (run(true), b)
            };
            results[i].0.push(a);
            results[i].1.push(b);
        }
    }
    print_header("transport", other);
    for (&(label, _, lanes), (a, b)) in rows.iter().zip(&results) {
        print_row(label, lanes, median(a), median(b));
    }
    if baseline.is_some() {
        print_ranges(&rows, &results);
    }
    let http_peak_a = load::memory_kib(http_a.id(), "VmHWM:");
    let http_peak_b = load::memory_kib(http_b.id(), "VmHWM:");
    for child in [&mut http_a, &mut http_b] {
        let _ = child.kill();
        let _ = child.wait();
    }

    start_up_and_memory(&root, (&sandboxed, &native, other), &echo, reps);
    if peak_a > 0 {
        println!(
            "| stdio, peak (VmHWM) after the load runs | {peak_a} KiB | {peak_b} KiB | {:.2} |",
            ratio(peak_a, peak_b)
        );
    }
    println!(
        "| HTTP, peak (VmHWM) after the load runs | {http_peak_a} KiB | {http_peak_b} KiB | {:.2} |",
        ratio(http_peak_a, http_peak_b)
    );
}

/// Two builds of mcpbox: each build's median calls/s, with the min-max of its runs, and whether
/// each median falls inside the other build's min-max (no difference the runs can tell).
fn print_ranges(rows: &[(&str, Lane, usize)], results: &[(Vec<Stats>, Vec<Stats>)]) {
    let range = |runs: &[Stats]| {
        let rates = runs.iter().map(|s| s.rate);
        (median(runs).rate, rates.clone().fold(f64::INFINITY, f64::min), rates.fold(0.0, f64::max))
    };
    println!(
        "\n| transport | in flight | mcpbox calls/s: median (min-max) | baseline calls/s: median (min-max) | each median inside the other's min-max |"
    );
    println!("|---|---:|---:|---:|---|");
    for (&(label, _, lanes), (a, b)) in rows.iter().zip(results) {
        let ((a_mid, a_min, a_max), (b_mid, b_min, b_max)) = (range(a), range(b));
        let inside = (b_min..=b_max).contains(&a_mid) && (a_min..=a_max).contains(&b_mid);
        println!(
            "| {label} | {lanes} | {a_mid:.0} ({a_min:.0}-{a_max:.0}) | {b_mid:.0} ({b_min:.0}-{b_max:.0}) | {} |",
            if inside { "yes" } else { "no" }
        );
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}

/// Start-up and RSS after start with one plugin and with 50, interleaved with the native server
/// (or the baseline build, `other`).
fn start_up_and_memory(root: &Path, (sandboxed, native, other): (&Server, &Server, &str), echo: &Path, reps: usize) {
    let fifty = root.join("target/bench-fifty-plugins");
    std::fs::create_dir_all(&fifty).unwrap();
    for n in 0..50 {
        let copy = fifty.join(format!("echo{n:02}.wasm"));
        if !copy.exists() {
            std::fs::copy(echo, copy).unwrap();
        }
    }
    let many = mcpbox_serving(&[&fifty], "echo00.echo", json!({ "text": "hello" }), "hello");
    let (mut one, mut natives, mut fifties) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        one.push(load::start_up(sandboxed, &[], 3));
        natives.push(load::start_up(native, &[], 3));
        fifties.push(load::start_up(&many, &[], 1));
    }
    let mid = |runs: &mut Vec<(Duration, u64)>| {
        runs.sort();
        runs[runs.len() / 2]
    };
    let ((one_time, one_rss), (native_time, native_rss), (fifty_time, fifty_rss)) =
        (mid(&mut one), mid(&mut natives), mid(&mut fifties));
    let uncached = load::start_up(sandboxed, &["--no-cache"], 3).0;
    println!("\n| start-up and memory | mcpbox | {other} | ratio |");
    println!("|---|---:|---:|---:|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "| start-up, 1 plugin from the compile cache (spawn to tools/list answered) | {:.1} ms | {:.1} ms | {:.2} |",
        ms(one_time),
        ms(native_time),
        ms(one_time) / ms(native_time)
    );
    println!("| start-up, 50 plugins from the compile cache | {:.1} ms | | |", ms(fifty_time));
    println!("| start-up, 1 plugin compiled afresh (--no-cache) | {:.1} ms | | |", ms(uncached));
    println!("| RSS after start, 1 plugin | {one_rss} KiB | {native_rss} KiB | {:.2} |", ratio(one_rss, native_rss));
    println!("| RSS after start, 50 plugins | {fifty_rss} KiB | | |");
}
