#!/usr/bin/env bash
# A certified OpenID provider for the authorization tests: the npm package oidc-provider,
# pinned, in .tools/oidc-provider for the Node 22 the conformance suite brings; never installed
# system-wide. Idempotent. Prints "NODE SCRIPT": run `NODE SCRIPT PORT` to start it on
# 127.0.0.1:PORT (scripts/oidc-provider.mjs says which clients it has).
set -euo pipefail
# The checkout this script is in, even when called through a symlink.
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
read -r node dir < <("$root/scripts/npm-into-tools.sh" "$root/.tools/oidc-provider" oidc-provider@9.6.0)
# Node resolves the script's imports from its own directory: it runs beside node_modules.
# Tests set up in parallel: each copies through a name of its own, then renames atomically.
tmp="$dir/oidc-provider.mjs.$$"
cp "$root/scripts/oidc-provider.mjs" "$tmp"
mv "$tmp" "$dir/oidc-provider.mjs"
echo "$node $dir/oidc-provider.mjs"
