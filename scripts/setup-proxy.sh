#!/usr/bin/env bash
# nginx from Debian 12's packages (1.22.1), for the test that proves heartbeats keep a slow call
# alive through a reverse proxy: unpacked into .tools/nginx, never installed system-wide.
# Idempotent; prints the nginx binary.
set -euo pipefail
exec "$(dirname "$0")/deb-into-tools.sh" nginx nginx 1.22.1- usr/sbin/nginx
