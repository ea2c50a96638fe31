#!/usr/bin/env bash
# Builds the guests and runs the benchmarks in release mode; each prints a table.
#   scripts/bench.sh          mcpbox vs a native rmcp server: latency, throughput and server CPU
#                             per call at 1/8/64 in flight over stdio, HTTP (legacy and
#                             stateless) and WebSocket (against the native stdio), start-up and
#                             memory with 1 and 50 plugins; Python and JavaScript plugins vs the
#                             Python SDK's own server; medians of 3 interleaved runs, with ratios
#   scripts/bench.sh builds OLD  this checkout's release build against another mcpbox binary
#                             OLD (a build of the commit before a change), both serving the echo
#                             plugin: the compare rows, each median against the other build's
#                             min-max over the interleaved runs
#   scripts/bench.sh guard BASE  the guard for every change: this working tree's release build
#                             against a release build of commit BASE (kept in target/guard/), both
#                             serving the echo plugin, the echo rows interleaved (36 pairs of
#                             0.25 s: GUARD_REPS, GUARD_SECONDS; ~6 minutes; the stdio row at 1 in
#                             flight alternates single calls between the two), with BASE's native
#                             rmcp echo for scale; a verdict per row on p50 and server CPU per call
#                             (slower, faster, no change; GUARD_ROWS=stdio|HTTP|WebSocket) and exit 1
#                             if a row is slower. Compare against the build before the program
#                             (docs/performance.md, "The guard"), not only the last commit
#   scripts/bench.sh interpreters  the Python and JavaScript plugins vs the Python SDK's server,
#                             with faults, TLB shootdowns and memory.grows per call, resident
#                             resets on and off, and twenty interpreter plugins in one server
#   scripts/bench.sh latency  call latency in process (sandbox vs native function) and over stdio
#   scripts/bench.sh http     mcpbox alone over Streamable HTTP; memory of idle sessions
#   scripts/bench.sh auth     the cost of checking an OAuth access token per request ([auth]
#                             with a local OpenID provider vs the same server open)
#   scripts/bench.sh fleet    one mcpbox alone vs fleets of 1 and 3 replicas sharing Redis
#                             behind HAProxy (scripts/fleet.sh): calls/s and latency
#   scripts/bench.sh telemetry telemetry off vs --metrics (scraped), --log-format json and
#                             --otlp-endpoint: calls/s and latency
#   scripts/bench.sh credentials a plugin's HTTP request without and with a credential set by
#                             mcpbox (the response scanned for it): small and large answers
#   scripts/bench.sh effects [OLD]  what the filesystem door and the audit cost a call: echo
#                             (no I/O) and filesystem.search_files over 2,000 files, audit off,
#                             on (fsync every line) and fsync at checkpoints; with OLD, against
#                             that build (before the door)
#   scripts/bench.sh startup  start-up with 1, 10 and 50 plugins, cold and from the cache
#   scripts/bench.sh examples the example plugin in Rust, Python and JavaScript: size, build
#                             time, compile time against the cached start-up, call latency
#   scripts/bench.sh reference the bundled plugins against the reference servers they replace:
#                             size, compile time, call latency, start-up and memory
#   scripts/bench.sh code-mode the same three-file task by a client calling each tool and in
#                             code mode (one code.run): round trips, bytes to the client, time
#   scripts/bench.sh built    servers built by `mcpbox build` (sequential-thinking from npm, excel from PyPI)
#                             against itself on Node: start-up, RSS, p50, calls/s at 1 and 8
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build-guests.sh"
cd "$root"
case "${1:-compare}" in
  compare)
    cargo build --release -p mcpbox --example native_echo --features native-echo
    cargo build --release -p mcpbox
    scripts/bench-plugins.sh target/release/mcpbox
    cargo bench -p mcpbox --bench compare
    cargo bench -p mcpbox --bench interpreters ;;
  interpreters)
    cargo build --release -p mcpbox
    scripts/bench-plugins.sh target/release/mcpbox
    cargo bench -p mcpbox --bench interpreters ;;
  builds)
    [ -x "${2:-}" ] || { echo "usage: $0 builds OLD_MCPBOX_BINARY" >&2; exit 2; }
    baseline=$(realpath "$2")
    cargo build --release -p mcpbox
    BENCH_BASELINE=$baseline cargo bench -p mcpbox --bench compare ;;
  guard)
    [ -n "${2:-}" ] || { echo "usage: $0 guard BASE (a commit)" >&2; exit 2; }
    base=$(git rev-parse --verify "$2^{commit}")
    # BASE's source, as committed, and its release builds in a target of their own (kept: a
    # second guard against the same base builds nothing).
    source="$root/target/guard/src-$base"
    if [ ! -e "$source/.complete" ]; then
      rm -rf "$source" && mkdir -p "$source"
      git archive "$base" | tar -x -C "$source"
      touch "$source/.complete"
    fi
    export CARGO_TARGET_DIR="$root/target/guard/target"
    (cd "$source" && cargo build --release -p mcpbox --example native_echo --features native-echo \
      && cargo build --release -p mcpbox)
    cp "$CARGO_TARGET_DIR/release/mcpbox" "$root/target/guard/mcpbox-$base"
    cp "$CARGO_TARGET_DIR/release/examples/native_echo" "$root/target/guard/native_echo-$base"
    unset CARGO_TARGET_DIR
    cargo build --release -p mcpbox
    GUARD_BASE="$root/target/guard/mcpbox-$base" GUARD_NATIVE="$root/target/guard/native_echo-$base" \
      GUARD_CURRENT="$root/target/release/mcpbox" cargo bench -p mcpbox --bench guard ;;
  latency) cargo bench -p mcpbox --bench latency ;;
  http) cargo bench -p mcpbox --bench http_throughput ;;
  auth) cargo bench -p mcpbox --bench auth_overhead ;;
  fleet) cargo bench -p mcpbox --bench fleet ;;
  telemetry) cargo bench -p mcpbox --bench telemetry ;;
  startup) cargo bench -p mcpbox --bench startup ;;
  effects)
    if [ -n "${2:-}" ]; then BENCH_BASELINE=$(realpath "$2") cargo bench -p mcpbox --bench effects
    else cargo bench -p mcpbox --bench effects; fi ;;
  credentials) cargo bench -p mcpbox --bench credentials ;;
  examples)
    cargo build --release -p mcpbox
    python3 scripts/bench-examples.py target/release/mcpbox ;;
  reference)
    cargo build --release -p mcpbox
    python3 scripts/bench-reference.py target/release/mcpbox ;;
  built)
    cargo build --release -p mcpbox
    python3 scripts/bench-built.py target/release/mcpbox ;;
  code-mode)
    cargo build --release -p mcpbox
    python3 scripts/bench-code-mode.py target/release/mcpbox ;;
  *) echo "usage: $0 [compare|guard BASE|interpreters|builds OLD|latency|http|auth|fleet|telemetry|startup|effects [OLD]|credentials|examples|reference|built|code-mode]" >&2; exit 2 ;;
esac
