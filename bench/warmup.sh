#!/usr/bin/env bash
# The relay from a cold start under load, and where its CPU goes by thread: bin/mcpd relay delivering to a local nginx
# `return 200`, then wrk -t2 -c64 (1 KiB POSTs): the first 10 s window, 20 s more load, a steady 10 s window. Per
# window: requests/s and p50/p99 (wrk), accepted and delivered per second (the relay's metrics), and the relay's CPU per
# request by thread group (/proc/PID/task/*/stat: event loops, the JIT's compiler threads, delivery lanes, the spool's
# committer). One line per window. What runs is what bin/mcpd runs: JAVA_HOME, MCPD_JAR and MCPD_JAVA_OPTS choose the
# JVM, the jar and extra JVM options (a JIT setting, another jar to compare with, Java 25's -XX:AOTCache=FILE).
# Usage: bench/warmup.sh [RELAY OPTIONS...]   (needs wrk and nginx: bench/run.sh installs them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$(mktemp -d "${MCPD_BENCH_DIR:-/var/tmp}/mcpd-warmup.XXXXXX")
port=14491 upstream=18192
cat >"$out/nginx.conf" <<CONF
worker_processes 1;
pid $out/nginx.pid;
error_log $out/nginx.error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $out/body;
  server { listen 127.0.0.1:$upstream; location / { client_max_body_size 20m; return 200; } } }
CONF
nginx -c "$out/nginx.conf"
"$root/bin/mcpd" relay --listen 127.0.0.1:$port --upstream http://127.0.0.1:$upstream --data "$out/mcpd.db" \
  --spool-max-bytes 64GiB "$@" >"$out/relay.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; nginx -c "$out/nginx.conf" -s stop 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 1 300); do # until the routes serve: /readyz answers anything but "starting"
  body=$(curl -s http://127.0.0.1:$port/readyz) && [ -n "$body" ] && [ "${body#starting}" = "$body" ] && break
  sleep 0.1
done
threads() { # thread name, user + system ticks; the name is read after the last ')' of stat, names have spaces
  for task in /proc/$pid/task/*; do
    stat=$(cat "$task/stat" 2>/dev/null) || continue
    name=$(cat "$task/comm" 2>/dev/null | tr ' ' _) || continue
    echo "${task##*/} $name $(echo "${stat##*) }" | awk '{print $12 + $13}')"
  done
}
counts() { curl -s http://127.0.0.1:$port/metrics | awk '/^mcpd_relay_accepted_total/ {a += $2}
  /^mcpd_relay_delivered_total/ {d += $2} END {printf "%d %d", a, d}'; }
window() { # NAME SECONDS
  threads >"$out/t0"; local before; before=$(counts)
  RUN_ID=$1 wrk -t2 -c64 -d"$2"s -s "$here/post.lua" http://127.0.0.1:$port/v1/ingest >"$out/wrk"
  threads >"$out/t1"
  python3 - "$out" "$1" "$2" "$before" "$(counts)" <<'PY'
import collections, json, re, sys
out, name, seconds, before, after = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
def read(f):
    return {l.split()[0]: (l.split()[1], int(l.split()[2])) for l in open(f"{out}/{f}") if len(l.split()) == 3}
t0, t1 = read("t0"), read("t1")
groups = collections.Counter()
for tid, (thread, ticks) in t1.items():
    thread = re.sub(r"\d+", "N", thread)
    group = ("event loops" if thread.startswith("vert.x-eventloo") else "JIT" if "CompilerThre" in thread
             else "lanes" if thread.startswith("Camel") else "committer" if thread == "spool-committer" else "other")
    groups[group] += ticks - t0.get(tid, (thread, 0))[1]
wrk = json.loads(next(l for l in open(f"{out}/wrk") if l.startswith("{")))
(a0, d0), (a1, d1) = before.split(), after.split()
accepted, delivered = (int(a1) - int(a0)) / seconds, (int(d1) - int(d0)) / seconds
per = 1e4 / max(wrk["requests"], 1)  # a tick is 10 ms: µs per request
print(f"{name}: {wrk['rps']:.0f} req/s, accepted {accepted:.0f}/s, delivered {delivered:.0f}/s, p50 {wrk['p50_ms']:.1f}"
      f" ms, p99 {wrk['p99_ms']:.1f} ms; CPU {sum(groups.values()) * per:.0f} µs/request: "
      + ", ".join(f"{g} {t * per:.0f}" for g, t in groups.most_common() if t * per >= 1))
PY
}
window first 10
RUN_ID=warm wrk -t2 -c64 -d20s -s "$here/post.lua" http://127.0.0.1:$port/v1/ingest >/dev/null
window steady 10
