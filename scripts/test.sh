#!/usr/bin/env bash
# The test command (README): sets up the wasm toolchain, builds and lints the guests and the
# host, checks formatting, runs every test of the host against real components, and proves that
# every protection is guarded by a test. Each phase says when it starts (seconds in, on stderr).
#
# Nothing is built twice:
# - clippy lints as the code is built (clippy-driver as cargo's workspace wrapper, `-D warnings`;
#   what `cargo clippy` does, without its separate check build of every dependency): the guests'
#   release build, their unit tests on the host's target, and the host's test build, every
#   target (benches and examples included);
# - the host's tests are built once, with the `failpoints` feature (host/src/failpoint.rs): the
#   same build runs the whole suite with nothing armed, then each protection's guarding tests
#   with its fail point armed (scripts/check-protections.py). MCPBOX_TEST_FAILPOINTS=1 is what
#   lets that build be made and run; nothing else makes one (SECURITY.md, "How this is tested").
# The environment below is the tests' too: their own runs of build-guests.sh find every guest
# built as they would build it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$(date +%s)
phase() { echo "test.sh: $1 at $(( $(date +%s) - started )) s" >&2; }
export MCPBOX_TEST_FAILPOINTS=1
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver)
# cargo-clippy's way of handing clippy-driver its arguments.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

# The tools the tests drive download while the code compiles (the network beside the CPU).
mkdir -p target
scripts/setup-test-tools.sh 2> target/setup-test-tools.log &
tools=$!
# A failure below ends the set-up too (the step under way finishes; no further one starts).
trap 'kill "$tools" 2> /dev/null || true' EXIT

phase "guests (set-up, build, lints)"
# (Guests built by Debian's rustc where rustup's server is out of reach are not linted: Debian's
# rustc-web ships no clippy; scripts/cargo-wasip2.)
scripts/build-guests.sh
cargo fmt --all -- --check
(cd plugins && cargo fmt --all -- --check)
phase "guest unit tests"
# The SDK's and the bundled plugins' unit tests and rustdoc examples, compiled and run for the
# host's target (they build Plugins and schemas; the WIT imports a call would use exist only
# inside a component).
cargo test --quiet --manifest-path plugins/Cargo.toml -p mcpbox-sdk -p filesystem -p memory -p time -p sequential-thinking -p fetch
phase "host build and lints"
cargo test --workspace --all-targets --features failpoints --no-run
phase "the tests' tools (set up meanwhile)"
if ! wait "$tools"; then
  cat target/setup-test-tools.log >&2
  echo "test.sh: setting up the tests' tools failed (above)" >&2
  exit 1
fi
cat target/setup-test-tools.log >&2
phase "host tests"
cargo test --workspace --features failpoints
# Every protection in SECURITY.md switched off in turn must make its guarding tests fail (they
# have just passed with nothing armed).
phase "protections"
python3 scripts/check-protections.py --no-baseline
phase "done"
