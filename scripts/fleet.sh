#!/usr/bin/env bash
# A fleet of mcpbox replicas on this machine, all on loopback: Redis (the shared store), N
# replicas, HAProxy in front (deploy/haproxy/mcpbox.cfg) and, beside it, nginx routing sessions
# by their id (deploy/nginx/mcpbox.conf). The fleet test runs it; so can a person:
#
#   scripts/fleet.sh up DIR [N] -- SERVE_ARGS...   start (N = 3), wait until every replica is
#                                                 ready; print the load balancer's MCP URL
#   scripts/fleet.sh kill DIR I                   SIGKILL replica I (1-based)
#   scripts/fleet.sh down DIR                     stop everything
#
# DIR/fleet.env says where everything is (REDIS_PORT, LB_PORT, NGINX_PORT, REPLICA_<i>_PORT,
# ..._PID).
# The replicas run $MCPBOX (default: `mcpbox` on PATH, else target/release/mcpbox) with SERVE_ARGS, sharing DIR/state-keys
# (made once) and a lease of $FLEET_LEASE seconds (default 3, short for tests).
set -euo pipefail
# The checkout's root, also when scripts/ is reached through a link (the docs' workspaces).
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
command=${1:?usage: fleet.sh up|kill|down DIR ...}
dir=${2:?usage: fleet.sh up|kill|down DIR ...}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until URL answers 200 (at most 60 s).
wait_ok() {
  python3 - "$1" <<'PY'
import sys, time, urllib.request
end = time.time() + 60
while True:
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    if time.time() > end:
        sys.exit(f"{sys.argv[1]} did not become ready")
    time.sleep(0.1)
PY
}

stop_pid() {
  local pid=$1
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

case "$command" in
up)
  shift 2
  replicas=3
  if [ "${1:-}" != "" ] && [ "$1" != "--" ]; then replicas=$1; shift; fi
  [ "${1:-}" = "--" ] && shift
  mapfile -t tools < <("$root/scripts/setup-fleet.sh")
  redis=${tools[0]} haproxy=${tools[1]}
  redis_libs="$root/.tools/redis/root/usr/lib/x86_64-linux-gnu"
  haproxy_libs="$root/.tools/haproxy/root/usr/lib/x86_64-linux-gnu"
  mcpbox=${MCPBOX:-$(command -v mcpbox || echo "$root/target/release/mcpbox")}
  : > "$dir/fleet.env"
  redis_port=$(free_port)
  LD_LIBRARY_PATH=$redis_libs "$redis" --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/redis.log" > /dev/null 2>&1 &
  echo "REDIS_PORT=$redis_port" >> "$dir/fleet.env"
  echo "REDIS_PID=$!" >> "$dir/fleet.env"
  for _ in $(seq 100); do
    LD_LIBRARY_PATH=$redis_libs "$root/.tools/redis/root/usr/bin/redis-cli" -p "$redis_port" ping 2>/dev/null | grep -q PONG && break
    sleep 0.05
  done
  [ -s "$dir/state-keys" ] || head -c 32 /dev/urandom | base64 > "$dir/state-keys"
  servers="" any="" ports=()
  for i in $(seq "$replicas"); do
    port=$(free_port)
    MCPBOX_LOG=${MCPBOX_LOG:-info,rmcp=warn} "$mcpbox" serve --http "127.0.0.1:$port" --replica "r$i" \
      --store "redis://127.0.0.1:$redis_port/" --store-lease "${FLEET_LEASE:-3}" --request-state-keys "$dir/state-keys" "$@" \
      > "$dir/r$i.out" 2> "$dir/r$i.log" &
    echo "REPLICA_${i}_PORT=$port" >> "$dir/fleet.env"
    echo "REPLICA_${i}_PID=$!" >> "$dir/fleet.env"
    servers+="    server r$i 127.0.0.1:$port check"$'\n'
    any+="    server 127.0.0.1:$port;"$'\n'
    ports+=("$port")
  done
  for i in $(seq "$replicas"); do
    port=$(sed -n "s/^REPLICA_${i}_PORT=//p" "$dir/fleet.env")
    wait_ok "http://127.0.0.1:$port/readyz" || { cat "$dir/r$i.log" >&2; exit 1; }
  done
  lb_port=$(free_port)
  python3 - "$root/deploy/haproxy/mcpbox.cfg" "$dir/haproxy.cfg" "127.0.0.1:$lb_port" "$servers" <<'PY'
import sys
text = open(sys.argv[1]).read().replace("@BIND@", sys.argv[3]).replace("@SERVERS@\n", sys.argv[4])
open(sys.argv[2], "w").write(text)
PY
  LD_LIBRARY_PATH=$haproxy_libs "$haproxy" -f "$dir/haproxy.cfg" -db > "$dir/haproxy.log" 2>&1 &
  echo "LB_PORT=$lb_port" >> "$dir/fleet.env"
  echo "LB_PID=$!" >> "$dir/fleet.env"
  wait_ok "http://127.0.0.1:$lb_port/readyz"
  # nginx, routing sessions by the replica their id names.
  nginx=$("$root/scripts/setup-proxy.sh")
  nginx_port=$(free_port)
  replicas_conf=""
  for i in $(seq "$replicas"); do
    line="upstream r$i { server 127.0.0.1:${ports[$((i - 1))]};"
    for j in $(seq "$replicas"); do
      [ "$j" = "$i" ] || line+=" server 127.0.0.1:${ports[$((j - 1))]} backup;"
    done
    replicas_conf+="$line }"$'\n'
  done
  mkdir -p "$dir/nginx"
  python3 - "$root/deploy/nginx/mcpbox.conf" "$dir/nginx/mcpbox.conf" "127.0.0.1:$nginx_port" "$any" "$replicas_conf" <<'PY'
import sys
text = open(sys.argv[1]).read().replace("@LISTEN@", sys.argv[3]).replace("@ANY@", sys.argv[4])
open(sys.argv[2], "w").write(text.replace("@REPLICAS@\n", sys.argv[5]))
PY
  cat > "$dir/nginx/nginx.conf" <<NGINX
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log;
daemon off;
events {}
http {
    access_log off;
    client_body_temp_path $dir/nginx;
    proxy_temp_path $dir/nginx;
    fastcgi_temp_path $dir/nginx;
    uwsgi_temp_path $dir/nginx;
    scgi_temp_path $dir/nginx;
    include $dir/nginx/mcpbox.conf;
}
NGINX
  "$nginx" -c "$dir/nginx/nginx.conf" -p "$dir/nginx" > "$dir/nginx/out.log" 2>&1 &
  echo "NGINX_PORT=$nginx_port" >> "$dir/fleet.env"
  echo "NGINX_PID=$!" >> "$dir/fleet.env"
  wait_ok "http://127.0.0.1:$nginx_port/readyz"
  # Every replica up in HAProxy's eyes (its checks run every 500 ms, two to rise).
  sleep 1.2
  echo "http://127.0.0.1:$lb_port/mcp"
  ;;
kill)
  i=${3:?which replica}
  pid=$(sed -n "s/^REPLICA_${i}_PID=//p" "$dir/fleet.env")
  kill -9 "$pid"
  ;;
down)
  [ -f "$dir/fleet.env" ] || exit 0
  # The load balancer first, then the replicas, the store last.
  for key in LB_PID NGINX_PID $(grep -o '^REPLICA_[0-9]*_PID' "$dir/fleet.env") REDIS_PID; do
    pid=$(sed -n "s/^$key=//p" "$dir/fleet.env")
    [ -n "$pid" ] && stop_pid "$pid"
  done
  ;;
*)
  echo "usage: fleet.sh up|kill|down DIR ..." >&2
  exit 2
  ;;
esac
