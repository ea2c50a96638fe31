#!/usr/bin/env bash
# The official TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned), for the tests that drive
# mcpbox with its Client over WebSocketClientTransport and SSEClientTransport, installed into
# .tools/ts-sdk-VERSION; run with the Node 22 the conformance suite brings (its WebSocket
# transport needs Node's global WebSocket, which these machines' Node 20 lacks). Idempotent;
# prints "NODE SDK_DIR".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=1.32.2
exec "$root/scripts/npm-into-tools.sh" "$root/.tools/ts-sdk-$version" "@modelcontextprotocol/sdk@$version"
