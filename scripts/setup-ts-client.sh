#!/usr/bin/env bash
# The official TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned), for the tests that drive
# mcpbox with its Client over WebSocketClientTransport and SSEClientTransport, installed into
# .tools/ts-sdk-VERSION; run with the Node 22 the conformance suite brings (its WebSocket
# transport needs Node's global WebSocket, which these machines' Node 20 lacks). Idempotent;
# prints "NODE SDK_DIR".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=1.32.2
dir="$root/.tools/ts-sdk-$version"
read -r node _ < <("$root/scripts/setup-conformance.sh")
mkdir -p "$dir"
# Tests run in parallel and may all ask for the SDK at once.
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
  ! grep -q "\"version\": \"$version\"" "$dir/node_modules/@modelcontextprotocol/sdk/package.json"; then
  cd "$dir"
  [ -f package.json ] || echo '{ "name": "mcpbox-ts-client", "private": true }' >package.json
  npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$version" >&2
fi
echo "$node $dir"
