#!/usr/bin/env bash
# The official MCP reference servers mcpbox's bundled plugins replace, pinned, for the
# compatibility test (tests/integration/reference_servers.rs): the npm ones (filesystem, memory,
# sequential-thinking; and everything and github, for tests/integration/existing_servers.rs) into
# .tools/reference-servers/node_modules, run with the Node 22 the conformance setup brings; the PyPI ones (time, fetch) into a venv there, whose Python also
# drives the comparison (it holds the official MCP Python SDK the servers use); the Python
# servers `mcpbox build` is compared on (excel, duckduckgo; MCP SDK 1.x) into a second venv,
# DIR/py-existing. Idempotent; prints "NODE DIR" (DIR/venv/bin holds python, mcp-server-time
# and mcp-server-fetch; DIR/py-existing/bin excel-mcp-server and duckduckgo-mcp-server).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
npm_version=2026.8.31
# The GitHub server is archived: its last release.
github_version=2025.4.8
time_version=2026.10.19
fetch_version=2026.10.24
# The Python servers of tests/integration/existing_servers.rs, with the SDK they run on natively.
existing_python=(excel-mcp-server==0.1.8 duckduckgo-mcp-server==0.6.1 mcp==1.30.0 fastmcp==2.14.7)
dir="$root/.tools/reference-servers"
read -r node _ < <("$root/scripts/npm-into-tools.sh" "$dir" \
  "@modelcontextprotocol/server-filesystem@$npm_version" \
  "@modelcontextprotocol/server-memory@$npm_version" \
  "@modelcontextprotocol/server-sequential-thinking@$npm_version" \
  "@modelcontextprotocol/server-everything@$npm_version" \
  "@modelcontextprotocol/server-github@$github_version")
exec 9>"$dir.venv.lock"
flock 9
stamp="$dir/venv/installed-$time_version-$fetch_version"
if [ ! -f "$stamp" ]; then
  python3 -m venv "$dir/venv" >&2
  "$dir/venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp-server-time==$time_version" "mcp-server-fetch==$fetch_version" >&2
  touch "$stamp"
fi
stamp="$dir/py-existing/installed-$(echo "${existing_python[*]}" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  python3 -m venv "$dir/py-existing" >&2
  "$dir/py-existing/bin/pip" install --quiet --disable-pip-version-check "${existing_python[@]}" >&2
  touch "$stamp"
fi
echo "$node $dir"
