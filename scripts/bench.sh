#!/usr/bin/env bash
# Builds the guests and runs the benchmarks in release mode; each prints a table.
#   scripts/bench.sh          call latency (in process and over stdio)
#   scripts/bench.sh http     throughput over Streamable HTTP at 1, 8, 64 in flight; idle sessions
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build-guests.sh"
cd "$root"
case "${1:-latency}" in
  latency) cargo bench -p mcpbox --bench latency ;;
  http) cargo bench -p mcpbox --bench http_throughput ;;
  *) echo "usage: $0 [latency|http]" >&2; exit 2 ;;
esac
