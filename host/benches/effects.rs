//! What the filesystem door and the audit cost a call (`scripts/bench.sh effects [OLD]`), over
//! stdio, one call in flight (and 8, for the audit's group commit), rows rotating which runs first, `BENCH_REPS`
//! (default 5) repetitions, medians with the min-max of the runs:
//!
//! - a call that does no I/O (`echo.echo`) and a file-heavy one (the bundled `filesystem`'s
//!   `search_files` over a tree of 2,000 files in 40 directories), this build against `OLD`
//!   (`BENCH_BASELINE`, a build from before the door): the door's cost;
//! - the same calls with `--audit` (a line written and `fdatasync`ed before each response), and
//!   with `[audit] fsync = "checkpoint"`: the audit's cost.
//!
//! `BENCH_ROWS` keeps the rows whose label contains it, with those they are compared with.

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
#[expect(dead_code, reason = "start-up, HTTP and WebSocket lanes are compare.rs's")]
mod load;
use load::{Server, Stats, median};

fn serving(program: &Path, args: Vec<String>, tool: &str, arguments: serde_json::Value, answer: &str) -> Server {
    let mut all = vec!["serve".to_owned(), "--no-watch".to_owned()];
    all.extend(args);
    Server {
        program: program.to_owned(),
        args: all,
        env: vec![("MCPBOX_CACHE_DIR".into(), repo_root().join("target/bench-compile-cache").display().to_string())],
        tool: tool.into(),
        arguments,
        answer: answer.into(),
    }
}

/// 40 directories of 50 small files each.
fn tree(at: &Path) {
    for d in 0..40 {
        let dir = at.join(format!("dir{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..50 {
            std::fs::write(dir.join(format!("file{f:02}.txt")), format!("file {d} {f}\n")).unwrap();
        }
    }
}

fn main() {
    let seconds = env_number("BENCH_SECONDS", 2.0);
    let reps = env_number("BENCH_REPS", 5.0).max(1.0) as usize;
    let root = repo_root();
    let this = PathBuf::from(env!("CARGO_BIN_EXE_mcpbox"));
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    let echo = root.join("target/test-plugins/echo.wasm");
    let filesystem = root.join("target/plugins/filesystem.wasm");
    assert!(echo.exists() && filesystem.exists(), "run scripts/build-guests.sh first");
    let work = tempfile::tempdir().unwrap();
    let files = work.path().join("tree");
    tree(&files);
    let files_arg = files.display().to_string();
    let checkpoint_config = work.path().join("checkpoint.toml");
    std::fs::write(
        &checkpoint_config,
        format!("[audit]\npath = {:?}\nfsync = \"checkpoint\"\n", work.path().join("audit-checkpoint.jsonl")),
    )
    .unwrap();
    let audit = |name: &str| vec!["--audit".to_owned(), work.path().join(name).display().to_string()];
    let hello = json!({ "text": "hello" });
    let search = json!({ "path": "/roots/tree", "pattern": "**/file4*.txt" });
    let echo_with = |program: &Path, extra: Vec<String>| {
        let mut args = extra;
        args.push(echo.display().to_string());
        serving(program, args, "echo.echo", hello.clone(), "hello")
    };
    let search_with = |program: &Path, extra: Vec<String>| {
        let mut args = extra;
        args.extend(["--root".to_owned(), files_arg.clone(), filesystem.display().to_string()]);
        serving(program, args, "filesystem.search_files", search.clone(), "/")
    };
    // (row, reference row, server, calls in flight)
    let mut rows: Vec<(String, Option<usize>, Server, usize)> = vec![
        ("echo (no I/O), this build".into(), None, echo_with(&this, vec![]), 1),
        ("echo, --audit (fsync every line)".into(), Some(0), echo_with(&this, audit("audit-echo.jsonl")), 1),
        (
            "echo, --audit, fsync = \"checkpoint\"".into(),
            Some(0),
            echo_with(&this, vec!["--config".into(), checkpoint_config.display().to_string()]),
            1,
        ),
        ("search_files (2,000 files), this build".into(), None, search_with(&this, vec![]), 1),
        ("search_files, --audit".into(), Some(3), search_with(&this, audit("audit-search.jsonl")), 1),
        ("echo, 8 in flight".into(), None, echo_with(&this, vec![]), 8),
        (
            "echo, 8 in flight, --audit (lines synced together)".into(),
            Some(5),
            echo_with(&this, audit("audit-8.jsonl")),
            8,
        ),
    ];
    if let Some(old) = &baseline {
        rows.push(("echo (no I/O), the build before".into(), Some(0), echo_with(old, vec![]), 1));
        rows.push(("search_files (2,000 files), the build before".into(), Some(3), search_with(old, vec![]), 1));
    }
    // `BENCH_ROWS`: only the rows whose label contains it (and the rows they compare with).
    let only = std::env::var("BENCH_ROWS").unwrap_or_default();
    let keep: Vec<bool> = rows.iter().map(|(label, ..)| label.contains(only.as_str())).collect();
    let keep: Vec<bool> =
        (0..rows.len()).map(|i| keep[i] || rows.iter().enumerate().any(|(j, r)| keep[j] && r.1 == Some(i))).collect();
    let mut results: Vec<Vec<Stats>> = vec![Vec::new(); rows.len()];
    for rep in 0..reps {
        // Rotate the order, so that no row always runs on a machine another warmed.
        for k in 0..rows.len() {
            let i = (k + rep) % rows.len();
            if keep[i] {
                results[i].push(load::run_stdio(&rows[i].2, rows[i].3, seconds).0);
            }
        }
    }
    println!("{seconds} s per run, {reps} interleaved runs, over stdio; latency and CPU in microseconds\n");
    println!(
        "| row | calls/s: median (min-max) | p50 | CPU/call | vs | calls/s ratio | each median inside the other's min-max |"
    );
    println!("|---|---:|---:|---:|---|---:|---|");
    let range = |runs: &[Stats]| {
        let rates = runs.iter().map(|s| s.rate);
        (median(runs), rates.clone().fold(f64::INFINITY, f64::min), rates.fold(0.0, f64::max))
    };
    for (i, (label, reference, ..)) in rows.iter().enumerate().filter(|(i, _)| keep[*i]) {
        let (mid, min, max) = range(&results[i]);
        let (vs, ratio, inside) = match reference {
            Some(r) => {
                let (other, other_min, other_max) = range(&results[*r]);
                let inside = (other_min..=other_max).contains(&mid.rate) && (min..=max).contains(&other.rate);
                (rows[*r].0.as_str(), format!("{:.3}", mid.rate / other.rate), if inside { "yes" } else { "no" })
            }
            None => ("", String::new(), ""),
        };
        println!(
            "| {label} | {:.0} ({min:.0}-{max:.0}) | {:.0} | {:.0} | {vs} | {ratio} | {inside} |",
            mid.rate,
            micros(mid.median),
            mid.cpu_per_call
        );
    }
}
