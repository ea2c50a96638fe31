#!/usr/bin/env bash
# Installs pinned npm packages into a directory of .tools/, once, under a lock (tests run in
# parallel and may all ask at once), for the Node 22 the conformance suite brings. Idempotent:
# the packages are installed again only when the list changes.
# usage: npm-into-tools.sh DIR PACKAGE@VERSION...   prints "NODE DIR"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
read -r node _ < <("$root/scripts/setup-conformance.sh")
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
stamp="$dir/npm-installed-$(echo "$*" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  cd "$dir"
  [ -f package.json ] || echo "{ \"name\": \"mcpbox-$(basename "$dir")\", \"private\": true }" >package.json
  PATH="$(dirname "$node"):$PATH" npm install --silent --no-audit --no-fund "$@" >&2
  touch "$stamp"
fi
echo "$node $dir"
