#!/usr/bin/env bash
# What the interpreter rows of `scripts/bench.sh compare` serve, built into target/bench-plugins/
# (idempotent): the projects `mcpbox new --lang python` and `--lang js` make, built the way
# docs/python.md and docs/javascript.md say, and a venv with the official Python SDK whose own
# server (host/benches/native_greet.py) is the native baseline.
#   scripts/bench-plugins.sh MCPBOX_BINARY
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mcpbox=$1
out="$root/target/bench-plugins"
mkdir -p "$out"
if [ ! -f "$out/python/hello/hello.wasm" ]; then
  rm -rf "$out/python"
  "$mcpbox" new hello --lang python --dir "$out/python" >/dev/null
  (cd "$out/python/hello" && ./build.sh >/dev/null)
fi
if [ ! -f "$out/js/hello/hello.wasm" ]; then
  rm -rf "$out/js"
  "$mcpbox" new hello --lang js --dir "$out/js" >/dev/null
  (cd "$out/js/hello" && npm install --silent --no-audit --no-fund >/dev/null && npm run --silent build >/dev/null)
fi
sdk=2.3.0
if ! "$out/native-python/bin/python" -c "import importlib.metadata as m; assert m.version('mcp') == '$sdk'" 2>/dev/null; then
  python3 -m venv "$out/native-python"
  "$out/native-python/bin/pip" install --quiet --disable-pip-version-check "mcp==$sdk"
fi
