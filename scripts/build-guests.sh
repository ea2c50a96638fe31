#!/usr/bin/env bash
# Builds every guest (bundled plugins, test fixtures, examples) in release (for the test suite,
# its `suite` profile: release without LTO), then copies the
# bundled plugins and their config (plugins/mcpbox.toml) to target/plugins/, the test fixtures
# to target/test-plugins/, and the set the whole-server tests serve (the fixtures `fs` and
# `conformance`, with `textstats`) to target/test-set/. For the test suite
# (MCPBOX_TEST_FAILPOINTS=1), also the guests' fail-point builds: each bundled plugin with one
# protection switched off by a cargo feature `failpoint-NAME`, into
# target/failpoint-plugins/NAME/ (tests/protections.toml; tests/integration/common picks it
# when FAILPOINTS arms `guest.PLUGIN.NAME`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-wasm-toolchain.sh"
# The test suite's guests are the release build without LTO (plugins/Cargo.toml, `suite`).
profile=release
[ "${MCPBOX_TEST_FAILPOINTS:-}" = 1 ] && profile=suite
"$root/scripts/cargo-wasip2" build --profile "$profile" --quiet --manifest-path "$root/plugins/Cargo.toml" --workspace
out="$root/plugins/target/wasm32-wasip2/$profile"
# put FILE DIR [NAME]: copies FILE into DIR (as NAME) only if it changed, through a rename, so
# that an mcpbox of a test process running beside this one never reads a half-copied file.
put() {
  local dest="$2/${3:-$(basename "$1")}"
  cmp -s "$1" "$dest" && return 0
  cp "$1" "$dest.$$.tmp"
  mv -f "$dest.$$.tmp" "$dest"
}
mkdir -p "$root/target/plugins" "$root/target/test-plugins"
# A plugin that left the bundled set must leave target/plugins too.
rm -f "$root/target/plugins/fs.wasm" "$root/target/plugins/conformance.wasm"
for plugin in textstats filesystem memory time fetch code; do
  put "$out/$plugin.wasm" "$root/target/plugins"
done
# Cargo names the file after the crate's library (underscores); the plugin's name is its file's.
put "$out/sequential_thinking.wasm" "$root/target/plugins" sequential-thinking.wasm
put "$root/plugins/mcpbox.toml" "$root/target/plugins"
mkdir -p "$root/target/test-set"
for plugin in fs conformance textstats; do
  put "$out/$plugin.wasm" "$root/target/test-set"
done
for fixture in fs conformance chaos tools_only hello net unknown_import echo plain bad_schema squatter overflow liar wit_0_1_0 rounds meta composer; do
  put "$out/$fixture.wasm" "$root/target/test-plugins"
done
if [ "${MCPBOX_TEST_FAILPOINTS:-}" = 1 ]; then
  for point in memory:writers-lock; do
    plugin=${point%%:*} name=${point#*:}
    "$root/scripts/cargo-wasip2" build --profile failpoint --quiet --manifest-path "$root/plugins/Cargo.toml" \
      -p "$plugin" --features "$plugin/failpoint-$name"
    mkdir -p "$root/target/failpoint-plugins/$name"
    put "$root/plugins/target/wasm32-wasip2/failpoint/$plugin.wasm" "$root/target/failpoint-plugins/$name"
  done
fi
