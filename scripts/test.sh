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
# A fresh tree (CI's clean clone) builds without incremental state, which it would write and
# never read: a fifth less CPU for our own crates. A tree that already keeps it (a developer's)
# goes on keeping it, so that switching between this script and `cargo test` rebuilds nothing.
[ -d target/debug/incremental ] || export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver)
# cargo-clippy's way of handing clippy-driver its arguments.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

# The tools the tests drive download while the code compiles (the network beside the CPU).
mkdir -p target
# The tests' temporary directories go to a directory of the run's own (TMPDIR, from the host
# tests on), which goes with the run (check-untouched.sh lists what a test left in it): the
# system's /tmp is shared with whatever else the machine runs.
test_tmp=$(mktemp -d /tmp/mcpbox-run.XXXXXX)
# What the run changes outside its own places is checked at the end (check-untouched.sh).
touch target/test-started.stamp
scripts/setup-test-tools.sh 2> target/setup-test-tools.log &
tools=$!
# A failure below ends the set-up too (the step under way finishes; no further one starts).
guest_units=
trap 'kill "$tools" $guest_units 2> /dev/null || true; rm -rf "$test_tmp"' EXIT

phase "guests (set-up, build, lints)"
# (Guests built by Debian's rustc where rustup's server is out of reach are not linted: Debian's
# rustc-web ships no clippy; scripts/cargo-wasip2.)
scripts/build-guests.sh
cargo fmt --all -- --check
(cd plugins && cargo fmt --all -- --check)
phase "host build and lints"
cargo test --workspace --all-targets --features failpoints --no-run
# The SDK's and the bundled plugins' unit tests and rustdoc examples, compiled and run for the
# host's target (they build Plugins and schemas; the WIT imports a call would use exist only
# inside a component): beside the host's tests, which leave a quarter of the CPU idle while
# they wait on the servers and tools they start (2026-11-29, two cores: 1.48 busy), rather
# than 56 s of the run's wall time of their own. Their result is reported after the host's.
phase "guest unit tests (beside the host tests)"
cargo test --quiet --manifest-path plugins/Cargo.toml -p mcpbox-sdk -p filesystem -p memory -p time -p sequential-thinking -p fetch \
  > target/guest-unit-tests.log 2>&1 &
guest_units=$!
phase "the tests' tools (set up meanwhile)"
if ! wait "$tools"; then
  cat target/setup-test-tools.log >&2
  echo "test.sh: setting up the tests' tools failed (above)" >&2
  exit 1
fi
cat target/setup-test-tools.log >&2
phase "host tests"
# The tests run with a HOME of the run's own (target/test-home), empty: what a test starts
# without a HOME of its own (tests/integration/common/own.rs) would write there, shared with
# every other test, and check-untouched.sh fails the run when anything is left in it; the real
# HOME is never the tests'. The tool homes and the package managers' download caches stay the
# real ones (downloads, not state).
test_home="$root/target/test-home"
rm -rf "$test_home" && mkdir -p "$test_home"
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export npm_config_cache="${npm_config_cache:-$HOME/.npm}" PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}"
[ -d "$HOME/.pyenv" ] && export PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME
export HOME="$test_home" TMPDIR="$test_tmp"
# Each test's wall time (tests/integration/common/clock.rs); the ten slowest are printed after.
export MCPBOX_TEST_TIMES="$root/target/test-times.tsv"
rm -f "$MCPBOX_TEST_TIMES"
# As many tests at a time as there are cores (libtest's default). One more kept the cores
# busier (1.86 of 2 instead of 1.48, with the guests' unit tests beside) and the phase no
# shorter (489 s against 475, 2026-11-29, quiet fresh clones): the tests then compile the same
# components at once more often, and each took half as long again, the margin a busy machine
# needs. The guests were built above, for every test process to use as they are
# (tests/integration/common/mod.rs, `guests`): none asks cargo again, whose lock on the guests'
# target directory their unit tests hold meanwhile.
status=0
MCPBOX_TEST_GUESTS_BUILT=1 cargo test --workspace --features failpoints || status=$?
unset MCPBOX_TEST_TIMES
echo "test.sh: the ten slowest tests (seconds):" >&2
# sed reads the whole list: `head` would leave sort writing into a closed pipe, and pipefail
# would turn its SIGPIPE into the run's exit status (141) after a green suite.
sort -rn "$root/target/test-times.tsv" 2> /dev/null | sed -n '1,10s/^/  /p' >&2 || true
guest_status=0
wait "$guest_units" || guest_status=$?
guest_units=
phase "guest unit tests (their result)"
cat target/guest-unit-tests.log >&2
[ "$status" = 0 ] || exit "$status"
[ "$guest_status" = 0 ] || { echo "test.sh: the guests' unit tests failed (above)" >&2; exit "$guest_status"; }
# Every protection in SECURITY.md switched off in turn must make its guarding tests fail (they
# have just passed with nothing armed).
phase "protections"
python3 scripts/check-protections.py --no-baseline
phase "nothing changed outside the run's own places"
scripts/check-untouched.sh target/test-started.stamp "$test_home" "$test_tmp"
phase "done"
