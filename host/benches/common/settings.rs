//! What the benchmarks share besides the load driver: where the repository is, the numbers
//! they read from the environment, and the unit their tables print latency in.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The repository's root (the benchmarks run from `host/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_owned).unwrap_or_default()
}

/// A number from the environment (`BENCH_SECONDS`, `BENCH_REPS`), or `default`.
pub fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// A duration in microseconds.
pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
