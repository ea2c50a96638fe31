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
//! current alternating; a row's change is the median over repetitions of base p50 / current
//! p50 *within a repetition* (pairs run seconds apart see the same machine; above 1 is faster),
//! with a 95% interval from the order statistics of those ratios (distribution-free: the j-th
//! smallest and largest of the sorted ratios, j chosen for 95%). Many short pairs (36 of
//! 0.25 s) rather than few long ones (9 of 1 s), in the same time: what varies on a shared
//! machine is the machine between pairs, and more pairs narrow the interval (±8% → ±3% on the
//! stdio row at 1 in flight). The verdict: `slower` when the whole interval lies below
//! 1 - `GUARD_MARGIN` (0.02), `faster` when above 1 + it, `no change` otherwise.
//!
//! Why the median latency and not calls/s: on a 2-core shared machine one preempted call in a
//! run moves its mean (calls/s at 1 in flight is one over the mean) by several percent, and the
//! calls/s ratios of 9 repetitions spread ±10%; the median of a run's thousands of calls moves
//! little. Measured on this machine kind (docs/performance.md, "The guard"): a build against
//! itself reads "no change"; a 10 µs busy wait per call is not yet told apart from noise on
//! the stdio row at 1 in flight (it moved p50 by 3%: 0.984 [0.959, 1.001]).

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
use load::{Server, Stats, median};

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
    .filter(|(label, _)| label.contains(only.as_str()))
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
        "native: {}; {seconds} s per run, {reps} interleaved repetitions; change = base/current p50 per \
         repetition, median [~95% interval]; verdict margin {margin}\n",
        native.program.display()
    );
    let mut results: Vec<[Vec<Stats>; 3]> = vec![Default::default(); rows.len()];
    for rep in 0..reps {
        for (i, &(_, lane, lanes)) in rows.iter().enumerate() {
            // Base and current alternate which goes first; native runs last (it is only scale).
            let order = if rep % 2 == 0 { [Who::Base, Who::Current] } else { [Who::Current, Who::Base] };
            for who in order.into_iter().chain([Who::Native]) {
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
        "| transport | in flight | base calls/s | current calls/s | change | base p50 µs | current p50 µs | native p50 µs | current p50 / native | verdict |"
    );
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|---|");
    let mut slower = 0;
    for (&(label, _, lanes), [b, c, n]) in rows.iter().zip(&results) {
        let ratios: Vec<f64> = b.iter().zip(c).map(|(b, c)| b.median.as_secs_f64() / c.median.as_secs_f64()).collect();
        let (mid, low, high) = median_and_interval(ratios);
        let verdict = if high < 1.0 - margin {
            slower += 1;
            "slower"
        } else if low > 1.0 + margin {
            "faster"
        } else {
            "no change"
        };
        let (b, c, n) = (median(b), median(c), median(n));
        println!(
            "| {label} | {lanes} | {:.0} | {:.0} | {mid:.3} [{low:.3}, {high:.3}] | {:.0} | {:.0} | {:.0} | {:.2} | {verdict} |",
            b.rate,
            c.rate,
            micros(b.median),
            micros(c.median),
            micros(n.median),
            micros(c.median) / micros(n.median),
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
