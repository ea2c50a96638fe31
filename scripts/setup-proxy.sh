#!/usr/bin/env bash
# nginx from Debian 12's packages (1.22.1), for the test that proves heartbeats keep a slow call
# alive through a reverse proxy: downloaded and unpacked into .tools/nginx, never installed
# system-wide. Idempotent; prints the nginx binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
series=1.22.1
dir="$root/.tools/nginx"
nginx="$dir/root/usr/sbin/nginx"
mkdir -p "$dir"
# Tests run in parallel and may all ask at once.
exec 9>"$dir.lock"
flock 9
if [ ! -x "$nginx" ]; then
  rm -rf "$dir/dl" "$dir/root"
  mkdir -p "$dir/dl"
  # A fresh machine has no package lists yet.
  if ! apt-cache show nginx >/dev/null 2>&1; then
    apt-get update -qq >&2
  fi
  # Debian 12 keeps nginx at 1.22.1 and ships only security fixes to it: take its newest.
  version=$(apt-cache madison nginx | awk -v s="$series" '$3 ~ "^"s"-" { print $3; exit }')
  if [ -z "$version" ]; then
    echo "no nginx $series in the package lists" >&2
    exit 1
  fi
  (cd "$dir/dl" && apt-get download -qq "nginx=$version" >&2)
  for deb in "$dir"/dl/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
fi
echo "$nginx"
