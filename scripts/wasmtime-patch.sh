#!/usr/bin/env bash
# Rebuilds host/vendor/wasmtime: the crates.io source of wasmtime VERSION (a 48.0.x release)
# with host/vendor/wasmtime.patch applied (host/vendor/PATCH.md says what it fixes and why).
#   scripts/wasmtime-patch.sh 48.0.9     take a new 48.0.x release: every wasmtime crate moves
#                                        to it together (Cargo.lock), the patch is applied again
#   scripts/wasmtime-patch.sh --check    the vendored copy is exactly 48.0.8 plus the patch
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vendor="$root/host/vendor"
current=$(sed -n 's/^version = "\(48\.[0-9.]*\)"$/\1/p' "$vendor/wasmtime/Cargo.toml" | sed -n 1p)
version=${1:---check}
check=false
if [ "$version" = --check ]; then check=true; version=$current; fi
case "$version" in 48.0.*) ;; *) echo "only 48.0.x releases build with this toolchain (got $version)" >&2; exit 2 ;; esac

# The pristine source, fetched by cargo into a scratch project (only crates.io is needed).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" && : > "$scratch/src/lib.rs"
printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nwasmtime = { version = "=%s", default-features = false }\n' "$version" > "$scratch/Cargo.toml"
(cd "$scratch" && cargo fetch --quiet)
pristine=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"wasmtime-$version" | sed -n 1p)

fresh="$scratch/wasmtime"
cp -r "$pristine" "$fresh"
rm -f "$fresh/Cargo.toml.orig" "$fresh/.cargo_vcs_info.json" "$fresh/Cargo.lock" "$fresh/.cargo-ok"
(cd "$fresh" && patch -p1 --quiet --no-backup-if-mismatch < "$vendor/wasmtime.patch")
if $check; then
  diff -r "$fresh" "$vendor/wasmtime" && echo "host/vendor/wasmtime is wasmtime $version with host/vendor/wasmtime.patch"
  exit
fi
rm -rf "$vendor/wasmtime" && mv "$fresh" "$vendor/wasmtime"
cd "$root"
cargo update --quiet -p wasmtime-wasi --precise "$version"
cargo tree -i wasmtime --depth 0 >/dev/null
echo "host/vendor/wasmtime is now wasmtime $version with the patch; every wasmtime crate is at $version:"
grep -A1 '^name = "wasmtime' Cargo.lock | grep version | sort | uniq -c
