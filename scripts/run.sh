#!/usr/bin/env bash
# The run command (README): builds mcpbox and its bundled plugins, then serves them over stdio
# with their config (plugins/mcpbox.toml) and the current directory granted read-only. Extra
# arguments go to `mcpbox serve` (`--root-rw DIR` to let the filesystem plugin write).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build-guests.sh" >&2
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p mcpbox >&2
"$root/scripts/no-failpoints.sh" "$root/target/release/mcpbox"
exec "$root/target/release/mcpbox" serve --config "$root/target/plugins/mcpbox.toml" --root "$PWD" "$@"
