#!/usr/bin/env bash
# The run command (README): builds mcpbox and its bundled plugins, then serves them over stdio
# with the current directory granted read-only. Extra arguments go to `mcpbox serve`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build-guests.sh" >&2
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p mcpbox >&2
exec "$root/target/release/mcpbox" serve "$root/target/plugins" --root "$PWD" "$@"
