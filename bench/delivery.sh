#!/usr/bin/env bash
# Delivery figures: accept→upstream latency under light load, and the drain rate of a 10 000-entry backlog,
# against a local nginx answering 200. Usage: bench/delivery.sh [runs]   (installs nginx from Debian if missing)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=${1:-3}
work=$(mktemp -d)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; pkill -f "mcpd.jar relay --listen 127.0.0.1:1432" || true; rm -rf "$work"' EXIT

command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx >/dev/null; }
[ -f "$root/target/mcpd.jar" ] || (cd "$root" && mvn -q -DskipTests package)

cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
  log_format timing '\$msec \$http_idempotency_key';
  access_log $work/access.log timing;
  client_body_temp_path $work/body;
  server { listen 127.0.0.1:18080; location / { client_max_body_size 20m; return 200; } }
}
CONF
nginx -c "$work/nginx.conf"

relay() { # relay PORT UPSTREAM DATA
  java -jar "$root/target/mcpd.jar" relay --listen "127.0.0.1:$1" --upstream "$2" --data "$3/mcpd.db" >>"$work/relay.log" 2>&1 &
  # Until the routes serve: /readyz answers anything but "starting" (/healthz says 200 a moment before).
  for _ in $(seq 1 120); do
    body=$(curl -s "localhost:$1/readyz") && [ -n "$body" ] && [ "${body#starting}" = "$body" ] && return
    sleep 0.25
  done
  echo "relay did not start" >&2; tail "$work/relay.log" >&2; exit 1
}
stop() { pkill -f "mcpd.jar relay --listen 127.0.0.1:$1" || true; while pgrep -f "listen 127.0.0.1:$1" >/dev/null; do sleep 0.1; done; }

echo "== accept→upstream latency, one request every 20 ms"
relay 14320 http://127.0.0.1:18080 "$work/latency"
python3 "$here/accept_to_upstream.py" 14320 50 0.02 "$work/access.log" >/dev/null # warm-up
for _ in $(seq 1 "$runs"); do python3 "$here/accept_to_upstream.py" 14320 500 0.02 "$work/access.log"; done
stop 14320

echo "== drain of a 10 000-entry backlog (4 workers)"
for _ in $(seq 1 "$runs"); do
  rm -rf "$work/drain"
  relay 14321 http://127.0.0.1:18099 "$work/drain"   # nothing listens there: everything stays spooled
  python3 "$here/fill_spool.py" 14321 10000 >/dev/null
  stop 14321
  : > "$work/access.log"
  relay 14321 http://127.0.0.1:18080 "$work/drain"
  for _ in $(seq 1 600); do [ "$(grep -c drain- "$work/access.log")" -ge 10000 ] && break; sleep 0.1; done
  python3 - "$work/access.log" <<'PY'
import sys
ts = [float(l.split()[0]) for l in open(sys.argv[1]) if 'drain-' in l]
print("drained %d entries in %.2f s = %.0f entries/s" % (len(ts), max(ts) - min(ts), len(ts) / (max(ts) - min(ts))))
PY
  stop 14321
done
