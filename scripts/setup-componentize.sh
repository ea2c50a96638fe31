#!/usr/bin/env bash
# The Python and JavaScript component builders the tests use for their helper-module fixtures,
# installed once into target/ (the guides' own commands install them per project instead).
#   setup-componentize.sh python   prints the path of componentize-py (a venv, from PyPI)
#   setup-componentize.sh js       prints the node_modules holding componentize-js (from npm)
# Idempotent; tests run in parallel and may all ask at once, hence the lock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/target"
case "${1:-}" in
  python)
    venv="$root/target/componentize-py"
    version=0.25.1
    exec 9>"$venv.lock"
    flock 9
    if ! "$venv/bin/componentize-py" --version 2>/dev/null | grep -qx "componentize-py $version"; then
      python3 -m venv "$venv" >&2
      "$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$version" >&2
    fi
    echo "$venv/bin/componentize-py" ;;
  js)
    dir="$root/target/componentize-js"
    version=0.23.0
    mkdir -p "$dir"
    exec 9>"$dir.lock"
    flock 9
    if ! grep -qs "\"version\": \"$version\"" "$dir/node_modules/@bytecodealliance/componentize-js/package.json"; then
      echo '{ "private": true, "type": "module" }' > "$dir/package.json"
      (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "@bytecodealliance/componentize-js@$version" >&2)
    fi
    echo "$dir/node_modules" ;;
  *) echo "usage: $0 python|js" >&2; exit 2 ;;
esac
