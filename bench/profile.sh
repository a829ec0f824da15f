#!/usr/bin/env bash
# Where the relay's time goes at saturation: starts the relay as shipped (bin/mcpd) with its upstream a local nginx
# answering 200, warms it up for 40 s, records 20 s of JFR (settings=profile) under 64 connections of 1 KiB POSTs,
# and prints bench/profile.py's summary. The recording stays in target/bench-profile/relay.jfr (open it with JDK
# Mission Control for more). Usage: bench/profile.sh   (needs wrk and nginx: bench/run.sh installs them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
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
"$root/bin/mcpd" relay --listen 127.0.0.1:14490 --upstream http://127.0.0.1:18191 --data "$out/mcpd.db" \
  --spool-max-bytes 64GiB >"$out/relay.log" 2>&1 &
relay=$!
trap 'kill $relay 2>/dev/null; nginx -c "$out/nginx.conf" -s stop 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do curl -sf -o /dev/null http://127.0.0.1:14490/readyz && break; sleep 0.1; done
wrk -t2 -c64 -d40s -s "$here/post.lua" http://127.0.0.1:14490/v1/ingest >/dev/null
jcmd "$relay" JFR.start name=bench settings=profile filename="$out/relay.jfr" >/dev/null
wrk -t2 -c64 -d20s -s "$here/post.lua" http://127.0.0.1:14490/v1/ingest | tail -1
jcmd "$relay" JFR.stop name=bench >/dev/null
python3 "$here/profile.py" "$out/relay.jfr"
