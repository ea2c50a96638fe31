#!/usr/bin/env bash
# Refuses a binary built with the test suite's `failpoints` feature (host/src/failpoint.rs):
# scripts/run.sh and scripts/build-image.sh run it on every binary they build or take, so no
# binary whose protections can be switched off becomes a product. A build without the feature
# has neither the marker `--version` shows, nor any fail point's name (tests/protections.toml),
# nor a symbol of the `fail` crate.
#
#   scripts/no-failpoints.sh BINARY
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$1
names=$(sed -n 's/^failpoint = "\([^"]*\)"$/\1/p' "$root/tests/protections.toml" | grep -v '^guest\.')
found=$( {
  strings -n 8 "$binary" | grep -oF -e "(fail-point build: for the test suite only)" $(printf -- '-e %s ' $names)
  # The `fail` crate's code, by its symbols (a release build keeps them: it strips debug info only).
  nm -C "$binary" 2>/dev/null | grep -o ' fail::[A-Za-z_]*' | head -3
} | sort -u || true)
if [ -n "$found" ]; then
  echo "no-failpoints: $binary is a fail-point build (the test suite's \`failpoints\` feature): its protections can be switched off. found: $(echo $found | cut -c1-200)..." >&2
  exit 1
fi
