#!/usr/bin/env bash
# Builds every guest (bundled plugins, test fixtures, examples) in release, then copies the
# bundled plugins and their config (plugins/mcpbox.toml) to target/plugins/, the test fixtures
# to target/test-plugins/, and the set the whole-server tests serve (the fixtures `fs` and
# `conformance`, with `textstats`) to target/test-set/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-wasm-toolchain.sh"
"$root/scripts/cargo-wasip2" build --release --quiet --manifest-path "$root/plugins/Cargo.toml" --workspace
out="$root/plugins/target/wasm32-wasip2/release"
mkdir -p "$root/target/plugins" "$root/target/test-plugins"
# A plugin that left the bundled set must leave target/plugins too.
rm -f "$root/target/plugins/fs.wasm" "$root/target/plugins/conformance.wasm"
for plugin in textstats filesystem memory time fetch; do
  cp "$out/$plugin.wasm" "$root/target/plugins/"
done
# Cargo names the file after the crate's library (underscores); the plugin's name is its file's.
cp "$out/sequential_thinking.wasm" "$root/target/plugins/sequential-thinking.wasm"
cp "$root/plugins/mcpbox.toml" "$root/target/plugins/mcpbox.toml"
mkdir -p "$root/target/test-set"
for plugin in fs conformance textstats; do
  cp "$out/$plugin.wasm" "$root/target/test-set/"
done
for fixture in fs conformance chaos tools_only hello net unknown_import echo plain bad_schema squatter overflow liar wit_0_1_0 rounds; do
  cp "$out/$fixture.wasm" "$root/target/test-plugins/"
done
