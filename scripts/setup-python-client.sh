#!/usr/bin/env bash
# A virtualenv with the official MCP Python SDK, for the tests that drive mcpbox with it.
# Idempotent; prints the venv's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/target/python-sdk"
version=2.3.0
mkdir -p "$root/target"
# Tests run in parallel and may all ask for the venv at once.
exec 9>"$root/target/python-sdk.lock"
flock 9
if ! "$venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$version'" 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$version" >&2
fi
echo "$venv/bin/python"
