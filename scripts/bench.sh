#!/usr/bin/env bash
# Builds the guests and runs the latency benchmark in release mode; prints a table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build-guests.sh"
cd "$root"
cargo bench -p mcpbox --bench latency
