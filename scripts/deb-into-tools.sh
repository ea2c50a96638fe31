#!/usr/bin/env bash
# A Debian package downloaded and unpacked into .tools/DIR, never installed system-wide, for the
# tests' real components: `deb-into-tools.sh DIR PACKAGE VERSION BINARY` takes the newest
# version of PACKAGE that starts with VERSION (Debian 12 keeps a series and ships only security
# fixes to it) and prints the path of BINARY inside it; further arguments are libraries it needs
# (their candidate versions; run the binary with LD_LIBRARY_PATH=DIR/root/usr/lib/x86_64-linux-gnu).
# Idempotent; safe to run in parallel.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1 package=$2 series=$3 binary=$4
shift 4
dir="$root/.tools/$name"
path="$dir/root/$binary"
mkdir -p "$dir"
# Tests run in parallel and may all ask at once.
exec 9>"$dir.lock"
flock 9
if [ ! -x "$path" ]; then
  rm -rf "$dir/dl" "$dir/root"
  mkdir -p "$dir/dl"
  # A fresh machine has no package lists yet.
  if ! apt-cache show "$package" >/dev/null 2>&1; then
    apt-get update -qq >&2
  fi
  version=$(apt-cache madison "$package" | awk -v s="$series" '$3 ~ "^"s { print $3; exit }')
  if [ -z "$version" ]; then
    echo "no $package $series in the package lists" >&2
    exit 1
  fi
  (cd "$dir/dl" && apt-get download -qq "$package=$version" "$@" >&2)
  for deb in "$dir"/dl/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
fi
echo "$path"
