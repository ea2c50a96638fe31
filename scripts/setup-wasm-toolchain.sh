#!/usr/bin/env bash
# Makes this machine able to build wasm32-wasip2 components (the plugins), idempotently.
#
# Route A (preferred): rustup's official wasm32-wasip2 target. The rustup distribution server
# is not one of the package registries these machines are sure to reach, so it is tried with a
# timeout and never relied on.
# Route B (fallback): Debian's rustc-web toolchain plus its std source; the wasm32-wasip2
# standard library is compiled once with -Zbuild-std (the only step that needs
# RUSTC_BOOTSTRAP) and installed into Debian's sysroot. Guests then build with plain cargo.
#
# Either way, the result is recorded in .tools/wasm-toolchain (read by scripts/cargo-wasip2).
#
# Usage: scripts/setup-wasm-toolchain.sh [--mode auto|rustup|debian] [--selftest]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state_dir="$root/.tools"
state="$state_dir/wasm-toolchain"
mode=${MCPBOX_WASM_TOOLCHAIN:-auto}
selftest=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode=$2; shift 2 ;;
    --selftest) selftest=1; shift ;;
    *) echo "usage: $0 [--mode auto|rustup|debian] [--selftest]" >&2; exit 2 ;;
  esac
done
mkdir -p "$state_dir"
say() { echo "setup-wasm-toolchain: $*" >&2; }

rustup_ready() {
  command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2
}

try_rustup() {
  rustup_ready && return 0
  command -v rustup >/dev/null 2>&1 || return 1
  say "adding the wasm32-wasip2 target with rustup (up to ${RUSTUP_TIMEOUT:-120} s)"
  timeout "${RUSTUP_TIMEOUT:-120}" rustup target add wasm32-wasip2 >&2 && rustup_ready
}

debian_sysroot_lib=/usr/lib/rustlib/wasm32-wasip2/lib

debian_ready() {
  [ -x /usr/bin/rustc ] && [ -f "$debian_sysroot_lib/.mcpbox-stamp" ] &&
    [ "$(cat "$debian_sysroot_lib/.mcpbox-stamp")" = "$(/usr/bin/rustc -vV | sed -n 's/^commit-hash: //p')" ]
}

setup_debian() {
  debian_ready && return 0
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  say "installing Debian's rustc-web toolchain (route B)"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    rustc-web cargo-web rust-web-src rust-web-llvm lld-22 wasi-libc >&2
  say "compiling the wasm32-wasip2 standard library once (about a minute)"
  local work
  work=$(mktemp -d)
  mkdir -p "$work/src"
  # An rlib: building it compiles std without linking anything (libc is not in place yet).
  printf '[package]\nname = "stdbuild"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n' >"$work/Cargo.toml"
  echo 'pub fn f() -> usize { std::env::args().count() }' >"$work/src/lib.rs"
  (
    cd "$work"
    RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc \
      CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="-Cembed-bitcode=yes -Zforce-unstable-if-unmarked" \
      /usr/bin/cargo build --release --target wasm32-wasip2 -Zbuild-std=std,panic_abort >&2
  )
  $sudo mkdir -p "$debian_sysroot_lib/self-contained"
  $sudo cp "$work"/target/wasm32-wasip2/release/deps/*.rlib "$debian_sysroot_lib/"
  # std links against wasi-libc; rustc looks for it (and the crt objects) in self-contained/.
  local libc_dir
  libc_dir=/usr/lib/wasm32-wasi
  $sudo cp "$libc_dir"/*.a "$libc_dir"/*.o "$debian_sysroot_lib/self-contained/" 2>/dev/null || true
  /usr/bin/rustc -vV | sed -n 's/^commit-hash: //p' | $sudo tee "$debian_sysroot_lib/.mcpbox-stamp" >/dev/null
  rm -rf "$work"
}

case "$mode" in
  rustup) try_rustup || { say "rustup could not add wasm32-wasip2"; exit 1; }; echo rustup >"$state" ;;
  debian) setup_debian; echo debian >"$state" ;;
  auto)
    if try_rustup; then
      echo rustup >"$state"
    else
      say "rustup route unavailable; falling back to Debian's toolchain"
      setup_debian
      echo debian >"$state"
    fi ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac

if [ "$selftest" = 1 ]; then
  work=$(mktemp -d)
  mkdir -p "$work/src"
  printf '[package]\nname = "selftest"\nversion = "0.0.0"\nedition = "2021"\n[lib]\ncrate-type = ["cdylib"]\n[workspace]\n' >"$work/Cargo.toml"
  echo '#[no_mangle] pub extern "C" fn answer() -> u32 { std::env::args().count() as u32 + 41 }' >"$work/src/lib.rs"
  "$root/scripts/cargo-wasip2" build --release --manifest-path "$work/Cargo.toml" >&2
  head -c 8 "$work/target/wasm32-wasip2/release/selftest.wasm" | od -An -tx1 | grep -q '0d 00 01 00' ||
    { say "selftest: the output is not a component"; exit 1; }
  rm -rf "$work"
  say "selftest passed ($(cat "$state"))"
fi
