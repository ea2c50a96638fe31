#!/usr/bin/env bash
# Everything the tests start or drive, installed ahead of them into .tools/ and target/ (each
# script pinned and idempotent; the tests run them again, a no-op then): the SDK clients, the
# conformance suite, the OpenID provider, the reference servers, the registry, Redis, HAProxy,
# nginx, the operations tools, the component builders and the browser (Chromium, playwright-core). scripts/test.sh runs this in the
# background while it compiles: these need the network and the disk, the compiler the CPU.
set -euo pipefail
here=$(dirname "$0")
for setup in python-client ts-client conformance oidc-provider reference-servers registry fleet proxy operations \
  "componentize python" "componentize js" browser; do
  started=$(date +%s)
  # "componentize python": a script and its argument.
  set -- $setup
  "$here/setup-$1.sh" "${@:2}" > /dev/null
  echo "setup-test-tools: ${setup} in $(( $(date +%s) - started )) s" >&2
done
