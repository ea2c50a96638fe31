#!/usr/bin/env bash
# The test command (README): sets up the wasm toolchain, builds the guests, checks formatting
# and lints, and runs every test of the host against real components.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/build-guests.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace
