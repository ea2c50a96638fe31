#!/usr/bin/env bash
# The browser test's components (tests/integration/browser.rs): Debian 12's chromium, downloaded
# with the libraries this machine kind lacks for it and unpacked into .tools/chromium (never
# installed system-wide, never a browser download from elsewhere: Debian's security archive keeps
# one chromium, which this takes); and, into .tools/browser-1, pinned npm packages for the Node 22
# the conformance suite brings: playwright-core (drives chromium), the official MCP Apps SDK
# (@modelcontextprotocol/ext-apps, its host-side app bridge), the TypeScript SDK the other tests
# pin, and esbuild (bundles the host page). Idempotent; safe to run in parallel. Prints
# "NODE PACKAGES_DIR CHROMIUM LIBRARY_PATH".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.tools/chromium"
binary="$dir/root/usr/lib/chromium/chromium"
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ ! -x "$binary" ]; then
  rm -rf "$dir/dl" "$dir/root"
  mkdir -p "$dir/dl"
  # A fresh machine has no package lists yet.
  if ! apt-cache show chromium >/dev/null 2>&1; then
    apt-get update -qq >&2
  fi
  # chromium and what apt would install with it here (a simulation: nothing is installed).
  packages=$(apt-get install -s --no-install-recommends chromium 2>/dev/null |
    awk '/^Inst / { gsub(/[()]/, "", $3); print $2 "=" $3 }')
  if [ -z "$packages" ]; then
    echo "setup-browser: apt finds no chromium to download" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  (cd "$dir/dl" && apt-get download -qq $packages >&2)
  for deb in "$dir"/dl/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  rm -rf "$dir/dl"
fi
flock -u 9
read -r node packages < <("$root/scripts/npm-into-tools.sh" "$root/.tools/browser-1" \
  playwright-core@1.65.1 @modelcontextprotocol/ext-apps@1.7.5 @modelcontextprotocol/sdk@1.32.2 esbuild@0.28.2)
lib="$dir/root/usr/lib/x86_64-linux-gnu"
echo "$node $packages $binary $lib:$lib/pulseaudio:$dir/root/usr/lib/chromium"
