//! `scripts/bench.sh guard BASE`: did a change make a call slower than the build before it?
//!
//! The echo rows of `compare.rs` (stdio, Streamable HTTP with a legacy session per lane and
//! stateless 2026-07-28 requests, WebSocket; 1, 8 and 64 calls in flight) for two builds of
//! mcpbox serving the same echo plugin: `GUARD_BASE` (a build of the commit the guard compares
//! against) and `GUARD_CURRENT` (the working tree's), with the native rmcp echo server
//! `GUARD_NATIVE` beside them for scale. The native server is built from the base commit, so
//! it does not change with the product: every guard against the same base divides by the
//! same native server.
//!
//! Each repetition runs every row for every server, back to back, the order of base and
//! current alternating. A row has two measures, each a ratio *within a repetition* (pairs run
//! seconds apart see the same machine; above 1 is faster), summed up as the median over
//! repetitions with a 95% interval from the order statistics of the ratios (distribution-free:
//! the j-th smallest and largest of the sorted ratios, j chosen for 95%):
//! - **latency**: base p50 / current p50, what a client waits;
//! - **CPU per call**: base / current server CPU per call (every thread of the server process,
//!   to the nanosecond from `/proc/PID/task/*/schedstat`), what a call costs the machine. It
//!   leaves out the scheduling of a shared machine, which the latency carries in full: on the
//!   stdio rows at 8 and 64 in flight a 10 µs busy wait per call added 5-8% to it while their
//!   latency moved inside its noise. (At 1 in flight the server's CPU per call is mostly waking
//!   up and parking, which varies more than the call.)
//!
//! Many short pairs (36 of 0.25 s) rather than few long ones (9 of 1 s), in the same time: what
//! varies on a shared machine is the machine between pairs, and more pairs narrow the interval.
//! The stdio row at 1 in flight, the one a person calling one tool at a time feels, goes
//! further: base and current serve side by side and the client alternates single calls
//! between them (`alternating`), so that the machine is the same for both to the microsecond.
//! The verdict: `slower` when either whole interval lies below 1 - `GUARD_MARGIN` (0.02; on the
//! alternating row `GUARD_ALTERNATING_MARGIN`, 0.01, its noise being half), `faster` when one
//! lies above 1 + it and neither below, `no change` otherwise.
//!
//! Why not calls/s: on a 2-core shared machine one preempted call in a run moves its mean
//! (calls/s at 1 in flight is one over the mean) by several percent, and the calls/s ratios of
//! 9 repetitions spread ±10%; the median of a run's thousands of calls moves little.
//! Measured on this machine kind: docs/performance.md, "The guard".

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::path::{Path, PathBuf};

use serde_json::json;

#[path = "common/http_client.rs"]
mod http_client;
#[path = "common/settings.rs"]
mod settings;
use settings::{env_number, micros, repo_root};
#[path = "common/load.rs"]
#[expect(dead_code, reason = "start-up and memory are compare.rs's; the guard runs the echo rows only")]
mod load;
use load::{Server, Stats, StdioClient, cpu_seconds, median};

#[derive(Clone, Copy)]
enum Lane {
    Stdio,
    Http { modern: bool },
    WebSocket,
}

/// The three servers of a guard run.
#[derive(Clone, Copy, PartialEq)]
enum Who {
    Base,
    Current,
    Native,
}

fn path_from(variable: &str) -> PathBuf {
    let path = PathBuf::from(std::env::var_os(variable).unwrap_or_else(|| panic!("{variable} is not set")));
    assert!(path.exists(), "{variable}={} does not exist (run scripts/bench.sh guard BASE)", path.display());
    path
}

fn mcpbox(program: PathBuf, echo: &Path) -> Server {
    Server {
        program,
        args: vec!["serve".into(), "--no-watch".into(), echo.display().to_string()],
        env: vec![("MCPBOX_CACHE_DIR".into(), repo_root().join("target/bench-compile-cache").display().to_string())],
        tool: "echo.echo".into(),
        arguments: json!({ "text": "hello" }),
        answer: "hello".into(),
    }
}

/// One run of `lane` at `lanes` in flight for `seconds` against `server` (`http`: its listener).
fn run(
    runtime: &tokio::runtime::Runtime,
    server: &Server,
    http: &(std::process::Child, String),
    lane: Lane,
    lanes: usize,
    seconds: f64,
) -> Stats {
    match lane {
        Lane::Stdio => load::run_stdio(server, lanes, seconds).0,
        Lane::Http { modern } => runtime.block_on(load::run_http(http.0.id(), &http.1, server, modern, lanes, seconds)),
        Lane::WebSocket => runtime.block_on(load::run_ws(http.0.id(), &http.1, server, lanes, seconds)),
    }
}

/// The stdio row at 1 in flight for base and current at once: one call at a time, alternating
/// between the two servers (A B B A, ...), so that each call of one has a call of the other
/// microseconds away. Pairs of whole runs, even 0.25 s apart, see the machine change between
/// them (another process, a frequency step, a neighbour of the VM); alternate calls see the
/// same machine, and a few microseconds of per-call work stand out of it. Each server's
/// CPU per call comes from the same window.
fn alternating(base: &Server, current: &Server, seconds: f64) -> (Stats, Stats) {
    let mut clients = [StdioClient::start(base, &[]), StdioClient::start(current, &[])];
    let servers = [base, current];
    let mut next = 1u64;
    let mut call = |i: usize, clients: &mut [StdioClient; 2]| {
        let started = std::time::Instant::now();
        clients[i].send(&servers[i].call(next));
        let response = clients[i].receive();
        let took = started.elapsed();
        servers[i].check(&response);
        next += 1;
        took
    };
    // Warm up (first instantiation, caches), both.
    for _ in 0..50 {
        call(0, &mut clients);
        call(1, &mut clients);
    }
    let pids = [clients[0].child.id(), clients[1].child.id()];
    let cpu_before = pids.map(cpu_seconds);
    let mut samples: [Vec<std::time::Duration>; 2] = Default::default();
    let started = std::time::Instant::now();
    let deadline = started + std::time::Duration::from_secs_f64(seconds);
    let mut first = 0;
    while std::time::Instant::now() < deadline {
        for i in [first, 1 - first] {
            let took = call(i, &mut clients);
            samples[i].push(took);
        }
        first = 1 - first;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = [0, 1].map(|i| cpu_seconds(pids[i]) - cpu_before[i]);
    for client in clients {
        client.stop();
    }
    // Calls/s is the pair's window's: each server had half of the client's time.
    let [a, b] = [0, 1].map(|i| load::stats(std::mem::take(&mut samples[i]), elapsed, cpu[i]));
    (a, b)
}

/// The median of `ratios` and a distribution-free ~95% interval for it.
fn median_and_interval(mut ratios: Vec<f64>) -> (f64, f64, f64) {
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    // The j-th smallest and largest ratios bound the median with probability
    // 1 - 2 P(Binomial(n, 1/2) <= j - 1): the narrowest such interval of at least 95%
    // (the extremes, j = 1, when there are too few ratios for more).
    let mut j = 1;
    while j < n / 2 && binomial_tail(n, j + 1) <= 0.025 {
        j += 1;
    }
    (ratios[n / 2], ratios[j - 1], ratios[n - j])
}

/// P(X <= k - 1) for X ~ Binomial(n, 1/2): the chance that fewer than k of n ratios fall
/// below the true median.
fn binomial_tail(n: usize, k: usize) -> f64 {
    let mut choose = 1.0;
    let mut sum = 0.0;
    for i in 0..k {
        sum += choose;
        choose = choose * (n - i) as f64 / (i + 1) as f64;
    }
    sum / 2f64.powi(n as i32)
}

fn main() {
    let seconds = env_number("GUARD_SECONDS", 0.25);
    let reps = env_number("GUARD_REPS", 36.0).max(3.0) as usize;
    let margin = env_number("GUARD_MARGIN", 0.02);
    // The alternating row's own noise is about ±1% (a build against itself), so a change of
    // 1% there is already one (a 10 µs busy wait moved its p50 by 2 to 3.4%).
    let alternating_margin = env_number("GUARD_ALTERNATING_MARGIN", 0.01);
    // The rows whose transport starts with it (`stdio`, `HTTP`, `WebSocket`); none: all.
    let only = std::env::var("GUARD_ROWS").unwrap_or_default();
    let echo = repo_root().join("target/test-plugins/echo.wasm");
    assert!(echo.exists(), "run scripts/bench.sh guard (builds the echo plugin)");
    let base = mcpbox(path_from("GUARD_BASE"), &echo);
    let current = mcpbox(path_from("GUARD_CURRENT"), &echo);
    let native = Server {
        program: path_from("GUARD_NATIVE"),
        args: vec![],
        env: vec![],
        tool: "echo".into(),
        arguments: json!({ "text": "hello" }),
        answer: "hello".into(),
    };
    let rows: Vec<(&str, Lane, usize)> = [
        ("stdio", Lane::Stdio),
        ("HTTP, legacy session per lane", Lane::Http { modern: false }),
        ("HTTP, stateless 2026-07-28", Lane::Http { modern: true }),
        ("WebSocket, one socket (native: its stdio)", Lane::WebSocket),
    ]
    .into_iter()
    .filter(|(label, _)| label.starts_with(only.as_str()))
    .flat_map(|(label, lane)| [1, 8, 64].map(|lanes| (label, lane, lanes)))
    .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let http = [Who::Base, Who::Current, Who::Native].map(|who| {
        let server = match who {
            Who::Base => &base,
            Who::Current => &current,
            Who::Native => &native,
        };
        (who, load::start_http(server))
    });
    println!("the guard: {} (current) against {} (base)", current.program.display(), base.program.display());
    println!(
        "native: {}; {seconds} s per run, {reps} interleaved repetitions; change = base/current (p50, \
         server CPU per call) per repetition, median [~95% interval]; verdict margin {margin} \
         ({alternating_margin} on the alternating row)\n",
        native.program.display()
    );
    let mut results: Vec<[Vec<Stats>; 3]> = vec![Default::default(); rows.len()];
    for rep in 0..reps {
        for (i, &(_, lane, lanes)) in rows.iter().enumerate() {
            // Base and current alternate which goes first; native runs last (it is only scale).
            let order = if rep % 2 == 0 { [Who::Base, Who::Current] } else { [Who::Current, Who::Base] };
            // The stdio row at 1 in flight: base and current call by call (`alternating`),
            // for as long as the two runs it replaces.
            let alternate = matches!(lane, Lane::Stdio) && lanes == 1;
            if alternate {
                let (b, c) = alternating(&base, &current, 2.0 * seconds);
                results[i][Who::Base as usize].push(b);
                results[i][Who::Current as usize].push(c);
            }
            let order: &[Who] = if alternate { &[Who::Native] } else { &[order[0], order[1], Who::Native] };
            for &who in order {
                let (server, listener) = match who {
                    Who::Base => (&base, &http[0].1),
                    Who::Current => (&current, &http[1].1),
                    // The native server has no WebSocket: its stdio stands in, as in compare.rs.
                    Who::Native => (&native, &http[2].1),
                };
                let lane = match (who, lane) {
                    (Who::Native, Lane::WebSocket) => Lane::Stdio,
                    _ => lane,
                };
                let stats = run(&runtime, server, listener, lane, lanes, seconds);
                results[i][who as usize].push(stats);
            }
        }
        eprintln!("guard: repetition {} of {reps} done", rep + 1);
    }
    println!(
        "| transport | in flight | base calls/s | current calls/s | latency change | CPU/call change | base p50 µs | current p50 µs | native p50 µs | current p50 / native | base CPU/call µs | current CPU/call µs | native CPU/call µs | verdict |"
    );
    println!("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut slower = 0;
    for (&(label, lane, lanes), [b, c, n]) in rows.iter().zip(&results) {
        let margin = if matches!(lane, Lane::Stdio) && lanes == 1 { alternating_margin } else { margin };
        let latency = median_and_interval(
            b.iter().zip(c).map(|(b, c)| b.median.as_secs_f64() / c.median.as_secs_f64()).collect(),
        );
        let cpu = median_and_interval(b.iter().zip(c).map(|(b, c)| b.cpu_per_call / c.cpu_per_call).collect());
        let below = |(_, _, high): (f64, f64, f64)| high < 1.0 - margin;
        let above = |(_, low, _): (f64, f64, f64)| low > 1.0 + margin;
        let verdict = if below(latency) || below(cpu) {
            slower += 1;
            "slower"
        } else if above(latency) || above(cpu) {
            "faster"
        } else {
            "no change"
        };
        let shown = |(mid, low, high): (f64, f64, f64)| format!("{mid:.3} [{low:.3}, {high:.3}]");
        let (b, c, n) = (median(b), median(c), median(n));
        println!(
            "| {label} | {lanes} | {:.0} | {:.0} | {} | {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {:.1} | {verdict} |",
            b.rate,
            c.rate,
            shown(latency),
            shown(cpu),
            micros(b.median),
            micros(c.median),
            micros(n.median),
            micros(c.median) / micros(n.median),
            b.cpu_per_call,
            c.cpu_per_call,
            n.cpu_per_call,
        );
    }
    for (_, (mut child, _)) in http {
        let _ = child.kill();
        let _ = child.wait();
    }
    println!("\n{slower} of {} rows slower than the base", rows.len());
    if slower > 0 {
        std::process::exit(1);
    }
}
