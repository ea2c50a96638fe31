#!/usr/bin/env bash
# The test command (README): sets up the wasm toolchain, builds the guests, checks formatting
# and lints (host and guests), and runs every test of the host against real components.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/build-guests.sh
cargo fmt --all -- --check
(cd plugins && cargo fmt --all -- --check)
cargo clippy --workspace --all-targets --quiet -- -D warnings
# Clippy for guests needs rustup's toolchain (Debian's rustc-web ships no clippy).
if [ "$(cat .tools/wasm-toolchain)" = rustup ]; then
  scripts/cargo-wasip2 clippy --release --quiet --manifest-path plugins/Cargo.toml --workspace -- -D warnings
fi
# The SDK's and the bundled plugins' unit tests and rustdoc examples, compiled and run for the
# host's target (they build Plugins and schemas; the WIT imports a call would use exist only
# inside a component).
cargo test --quiet --manifest-path plugins/Cargo.toml -p mcpbox-sdk -p filesystem -p memory -p time -p sequential-thinking -p fetch
cargo test --workspace
# Every protection in SECURITY.md switched off in turn must make its guarding tests fail.
python3 scripts/check-protections.py
