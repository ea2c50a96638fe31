#!/usr/bin/env bash
# The fleet's real components from Debian 12's packages, unpacked into .tools/, never installed
# system-wide: Redis 7.0 (the shared store; `redis-server` lives in redis-tools) and HAProxy 2.6
# (the load balancer). Idempotent; prints the two binaries, one a line. Run them with
# LD_LIBRARY_PATH=.tools/<name>/root/usr/lib/x86_64-linux-gnu (their libraries come along).
set -euo pipefail
here=$(dirname "$0")
"$here/deb-into-tools.sh" redis redis-server 5:7.0.15- usr/bin/redis-server redis-tools liblzf1 libjemalloc2
"$here/deb-into-tools.sh" haproxy haproxy 2.6.12- usr/sbin/haproxy liblua5.3-0 libopentracing-c-wrapper0 libopentracing1
