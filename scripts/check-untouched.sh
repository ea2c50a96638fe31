#!/usr/bin/env bash
# Fails when a test run created or changed anything outside its own places (scripts/test.sh,
# last): a test gives every mcpbox it starts a HOME and state of its own, and keeps its files
# in temporary directories, target/ and .tools/.
#
#   scripts/check-untouched.sh STAMP [TEST_HOME [TEST_TMPDIR]]
#
# STAMP: a file touched when the run started; TEST_HOME: the HOME the tests ran with
# (scripts/test.sh), which must be left empty: what a test starts without a HOME of its own
# writes there, where the other tests' programs would find it; TEST_TMPDIR: the TMPDIR the
# tests ran with, the run's own (removed with the run): a test's temporary directory left in it
# is listed with its files, for whoever looks for the leak, and does not fail the run (it is
# inside the run's own places; a program that writes there after its test ended makes the
# removal race it). The one found so far: the compiling child that
# `compile_bounds::a_compilation_stops_when_mcpbox_dies` keeps alive on purpose when
# check-protections.py arms `compile.stops-with-mcpbox`, which wrote its cache back into the
# test's removed directory; the test now kills what still compiles there before it goes.
#
# Looked at: files (not directories, whose times change when an allowed child appears) newer
# than STAMP
# - under the real HOME, but for what the run's tools keep there on purpose, each listed
#   below with why;
# - in the checkout, but for target/ (builds, caches, the tests' own directories), .tools/
#   (the tests' real components) and plugins/target/ (the guests' cargo build);
# - under /usr and /opt, where programs and their libraries live (a Python's site-packages
#   among them: a build's componentizer once wrote into the builder's, c19f9dc), which a test
#   run installs nothing into;
# The system's /tmp is not looked at: other programs on the machine use it too (a run of
# another checkout beside this one among them).
set -euo pipefail
stamp=$1
test_home=${2:-}
test_tmp=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
# The real HOME (scripts/test.sh points HOME at the tests' own for the tests only).
home=$(getent passwd "$(id -u)" | cut -d: -f6)
home=${home:-${HOME:?}}
# What the run may change under HOME, and why.
allowed=(
  .cargo          # cargo's registry and git checkouts (crates the builds download)
  .rustup         # the toolchain and the wasm32-wasip2 target (setup-wasm-toolchain.sh)
  .npm            # npm's download cache (the npm installs into .tools/ and target/)
  .cache/pip      # pip's download cache (the virtualenvs under .tools/ and target/)
  # wasmtime's compile cache of wizer, componentize-js's pre-initializer (the JavaScript
  # engine compiled once): wizer finds the home through the passwd entry, not HOME, since
  # componentize-js gives it an environment without one (what wizer is given is baked into
  # the component's environment, so mcpbox build cannot give it a HOME of the build's own).
  .cache/wasmtime
)
prune=()
for path in "${allowed[@]}"; do
  prune+=(-path "$home/$path" -prune -o)
done
found=$(
  {
    find "$home" -path "$root" -prune -o "${prune[@]}" -newer "$stamp" -not -type d -print 2> /dev/null || true
    find "$root" \( -path "$root/target" -o -path "$root/.tools" -o -path "$root/plugins/target" \) -prune \
      -o -newer "$stamp" -not -type d -print 2> /dev/null || true
    find /usr /opt -xdev -newer "$stamp" -not -type d -print 2> /dev/null || true
    if [ -n "$test_home" ] && [ -d "$test_home" ]; then
      find "$test_home" -not -type d -print 2> /dev/null || true
    fi
  } | sort
)
if [ -n "$test_tmp" ] && [ -d "$test_tmp" ] && [ -n "$(ls -A "$test_tmp")" ]; then
  echo "check-untouched: note: left in the run's own TMPDIR (removed with the run), first files:" >&2
  find "$test_tmp" -mindepth 1 -printf '  %TT %p\n' 2> /dev/null | sed -n 1,30p >&2 || true
fi
if [ -n "$found" ]; then
  echo "check-untouched: the test run created or changed these outside its own places:" >&2
  echo "$found" | sed -n 1,50p >&2
  echo "(a server or command a test starts must get its own HOME and state: tests/integration/common/own.rs)" >&2
  exit 1
fi
echo "check-untouched: nothing outside the run's own places changed" >&2
