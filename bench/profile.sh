#!/usr/bin/env bash
# Where the time goes at saturation: starts the subject as shipped (bin/mcpd), warms it up for 40 s, records 20 s of
# JFR (settings=profile) under 64 connections of 1 KiB POSTs, and prints bench/profile.py's summary. Subjects:
#   relay      (default) the relay delivering to a local nginx answering 200, one request per entry
#   accept     the relay with its upstream down: the accept path alone
#   collector  mcpd serve on SQLite, every request its own idempotency key
# The recording stays in target/bench-profile/SUBJECT.jfr (open it with JDK Mission Control for more).
# Usage: bench/profile.sh [relay|accept|collector]   (needs wrk and nginx: bench/run.sh installs them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
subject=${1:-relay}
case "$subject" in relay|accept|collector) ;; *) echo "usage: bench/profile.sh [relay|accept|collector]" >&2; exit 2 ;; esac
out=$root/target/bench-profile
rm -rf "$out" && mkdir -p "$out"
[ -f "$root/target/mcpd.jar" ] || (cd "$root" && mvn -B -q -DskipTests package)
cat >"$out/nginx.conf" <<CONF
worker_processes 1;
pid $out/nginx.pid;
error_log $out/nginx.error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $out/body;
  server { listen 127.0.0.1:18191; location / { client_max_body_size 20m; return 200; } } }
CONF
nginx -c "$out/nginx.conf"
upstream=http://127.0.0.1:18191
[ "$subject" = accept ] && upstream=http://127.0.0.1:9
if [ "$subject" = collector ]; then
  "$root/bin/mcpd" serve --listen 127.0.0.1:14490 --data "$out/collector.db" >"$out/$subject.log" 2>&1 &
else
  "$root/bin/mcpd" relay --listen 127.0.0.1:14490 --upstream "$upstream" --data "$out/mcpd.db" \
    --spool-max-bytes 64GiB >"$out/$subject.log" 2>&1 &
fi
pid=$!
trap 'kill $pid 2>/dev/null; nginx -c "$out/nginx.conf" -s stop 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do # until the routes serve: /readyz answers anything but "starting"
  body=$(curl -s http://127.0.0.1:14490/readyz) && [ -n "$body" ] && [ "${body#starting}" = "$body" ] && break
  sleep 0.1
done
keys=0
[ "$subject" = collector ] && keys=1
UNIQUE_KEYS=$keys RUN_ID=warm wrk -t2 -c64 -d40s -s "$here/post.lua" http://127.0.0.1:14490/v1/ingest >/dev/null
jcmd "$pid" JFR.start name=bench settings=profile filename="$out/$subject.jfr" >/dev/null
UNIQUE_KEYS=$keys RUN_ID=measure wrk -t2 -c64 -d20s -s "$here/post.lua" http://127.0.0.1:14490/v1/ingest | tail -1
jcmd "$pid" JFR.stop name=bench >/dev/null
python3 "$here/profile.py" "$out/$subject.jfr"
