#!/usr/bin/env bash
# The benchmark (issue 7): the relay's accept and delivery paths measured side by side with the machine's ceilings —
#   A  nginx `return 200`                      (what HTTP on loopback costs)
#   B  nginx proxy_pass → nginx, keep-alive     (relaying with no durability at all)
#   C  the spool's file system: file+fsync+rename+dir fsync, append+fdatasync per 1/8/64 records
# then the relay (bin/mcpd, as shipped) at 1 KiB and 16 KiB, latency against offered load, 60 s sustained with
# delivery, backlogs of 0 / 100 000 / 1 000 000 waiting entries (restart time, accept rate, drain), and the collector
# on SQLite and PostgreSQL, and large bodies in flight (40 concurrent 16 MiB uploads: answers and peak RSS at three
# heap sizes), and delivery across a long link (bench/wan.py: the relay ships through a delaying TCP proxy at RTT
# 0 / 20 / 80 / 200 ms to mcpd serve on SQLite and PostgreSQL, in batches, and to nginx, one request per entry), and
# OTLP/gRPC Export calls beside OTLP/HTTP requests of the same message (h2load, both over HTTP/2), and the delivery
# barrier (bench/barrier.py: last accept → 200 from /relay/sync at RTT 0 and 80 ms; accept with 0 and 1 000 waiters),
# and the health checks (bench/health.py: time to take a dead upstream out of service and to bring it back),
# collector replicas taking turns (bench/lease.py: takeover of the store's lease after kill -9 and SIGTERM), and the
# collector's retention sweep (bench/sweep.py: ingest latency while 1 000 000 expired keys are forgotten, on SQLite
# and PostgreSQL, beside the same load with nothing expiring), and Kafka between relays and collectors (bench/kafka.py:
# relay → topic beside relay → mcpd serve, the archive rate of one and two collectors, a broker restart), and ordered
# streams (bench/remote_write.py: a Prometheus remote-writing through the relay to another, through outages, a kill -9
# and restarts, and sustained at 80 ms; bench/wan.py: OTLP metrics as one ordered stream at 80 ms).
# Subjects alternate within each repetition; BENCHMARKS.md quotes medians (min–max).
#
# Usage: bench/run.sh [--quick | --only cost | --only cost-limit | --only collector | --only large-bodies | --only wan | --only ordered | --only grpc |
#                      --only tls | --only barrier | --only health | --only dead-letters | --only lease | --only sweep |
#                      --only kafka]
#   (full)   about an hour; writes BENCHMARKS.md and bench/report/*.png
#   --quick  a couple of minutes, one short repetition, small backlog, no PostgreSQL: checks that the harness works
#            and writes its report under target/bench-quick/ (never over the committed one)
#   --only cost | --only collector | --only large-bodies | --only wan | --only ordered | --only grpc | --only tls | --only barrier |
#   --only health | --only dead-letters | --only lease | --only sweep | --only kafka
#            runs that phase alone (--only cost-limit: the cost phase's part beside the limit alone, about 20 minutes) and puts its rows in place of the earlier ones in bench/report/results.jsonl,
#            then writes BENCHMARKS.md again from it (the other phases' rows are kept as they were measured)
# Installs wrk, h2load, nginx and gnuplot from Debian's packages when missing; builds target/mcpd.jar when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# The PostgreSQL clusters started below keep fsync and full_page_writes on, as a production store runs (the tests'
# clusters have them off).
export MCPD_PG_DURABLE=1

quick=0 only=
case "${1:-}" in
  --quick) quick=1 ;;
  --only) [ "${2:-}" = large-bodies ] || [ "${2:-}" = wan ] || [ "${2:-}" = grpc ] || [ "${2:-}" = tls ] \
          || [ "${2:-}" = barrier ] || [ "${2:-}" = cost ] || [ "${2:-}" = cost-limit ] || [ "${2:-}" = collector ] \
            || [ "${2:-}" = health ] || [ "${2:-}" = dead-letters ] || [ "${2:-}" = lease ] || [ "${2:-}" = sweep ] \
            || [ "${2:-}" = kafka ] || [ "${2:-}" = ordered ] || {
            echo "usage: bench/run.sh --only cost|cost-limit|collector|large-bodies|wan|ordered|grpc|tls|barrier|health|dead-letters|lease|sweep|kafka" >&2
            exit 2; }
          only=$2 ;;
  "") ;;
  *) echo "usage: bench/run.sh [--quick | --only cost | --only cost-limit | --only collector | --only large-bodies | --only wan | --only ordered | --only grpc | --only tls | --only barrier |" \
       "--only health | --only dead-letters | --only lease | --only sweep | --only kafka]" >&2
     exit 2 ;;
esac
want() { [ -z "$only" ] || [ "$only" = "$1" ]; } # want PHASE: whether this run measures it

if ((quick)); then
  reps=1 seconds=3 warmup=1 relay_warmup=5 sustained=10 backlogs="0 10000" backlog_reps=1 latency_reps=1
  disk_seconds=1
  wan_rtts=0,80 wan_upstreams=serve wan_reps=1 wan_backlog=5000 wan_sustained=5 wan_sustained_rtts=80 wan_warm=3
  barrier_args="--samples 10 --warmup 3 --runs 1 --seconds 3 --warmup-seconds 3" health_runs=1
  dead_entries=200 dead_runs=1
  sweep_args="--stores sqlite --keys 20000 --runs 1 --warmup 3 --baseline-seconds 3"
  kafka_args="--runs 1 --seconds 3 --down 3"
  ordered_args="--phases sustained --series 1000 --seconds 5 --warmup 5" ordered_sustained=5
  cost_args="--reps 1 --seconds 3 --warmup 5 --backlog 300000 --drain-seconds 3"
  report_dir=$root/target/bench-quick plots_dir=$root/target/bench-quick
else
  reps=5 seconds=10 warmup=3 relay_warmup=20 sustained=60 backlogs="0 100000 1000000" backlog_reps=3 latency_reps=3
  disk_seconds=5
  wan_rtts=0,20,80,200 wan_upstreams=serve,serve-pg,nginx,otlp wan_reps=3 wan_backlog=100000 wan_sustained=60 wan_warm=20
  wan_sustained_rtts=0,80
  barrier_args="--samples 100 --warmup 20 --runs 5 --seconds 10 --warmup-seconds 20" health_runs=3
  dead_entries=1000 dead_runs=3 lease_runs=5
  sweep_args="--stores sqlite,postgres --keys 1000000 --runs 3"
  kafka_args="--runs 3 --seconds 20 --down 10" kafka_pg=1
  ordered_args="--phases outages --runs 3" ordered_sustained=60
  cost_args="--reps 3 --seconds 10 --warmup 40 --backlog 10000000 --drain-seconds 60"
  report_dir=$root plots_dir=$root/bench/report
fi
connections=64

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v nginx >/dev/null || need+=(nginx)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
command -v curl >/dev/null || need+=(curl)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  echo "== installing ${need[*]} from Debian's packages" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -f "$root/target/mcpd.jar" ] || (cd "$root" && mvn -B -q -DskipTests package)
# The relay as an operator runs it: bin/mcpd with the class-data archive bin/cds-archive writes for this jar.
[ "$root/target/mcpd.jsa" -nt "$root/target/mcpd.jar" ] || "$root/bin/cds-archive" >&2

# The work directory holds the spools: on the disk, not a tmpfs (ceiling C is measured in it too).
work=$(mktemp -d "${MCPD_BENCH_DIR:-/var/tmp}/mcpd-bench.XXXXXX")
results=$work/results.jsonl
relay_port=14400 tls_port=14401 serve_port=14440 a_port=18181 b_port=18182 down_port=18183
cleanup() {
  set +e # every step, whatever failed before it
  pkill -f "mcpd.jar relay --listen 127.0.0.1:$relay_port"
  pkill -f "mcpd.jar relay --listen 127.0.0.1:$tls_port"
  pkill -f "mcpd.jar serve --listen 127.0.0.1:$serve_port"
  for conf in "$work"/nginx-*.conf; do
    [ -f "${conf%.conf}.pid" ] && nginx -c "$conf" -s stop 2>/dev/null
  done
  [ -n "${pg_env:-}" ] && bash "$root/.ci/postgres.sh" stop "$pg_env" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

record() { echo "$1" >>"$results"; }
say() { echo "== $*" >&2; }

# --- the machine ------------------------------------------------------------------------------------------------
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
record "$(printf '{"kind":"machine","cpu":"%s","cores":%d,"memory_mib":%d,"kernel":"%s","fs":"%s","java":"%s","nginx":"%s","wrk":"%s","quick":%d,"date":"%s"}' \
  "$cpu" "$(nproc)" "$(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo)" "$(uname -r)" \
  "$(df -T "$work" | awk 'NR==2 {print $2 " on " $1}')" \
  "$(java -version 2>&1 | head -1 | tr -d '"')" "$(nginx -v 2>&1 | sed 's/.*: //')" \
  "$(wrk -v 2>&1 | head -1 | awk '{print $2}')" "$quick" "$(date -u +%Y-%m-%dT%H:%MZ)")"

# --- nginx: A answers, B proxies to A; D (the relay's upstream coming back) is started for the drain -------------
nginx_conf() { # nginx_conf NAME SERVER-BLOCKS
  cat >"$work/nginx-$1.conf" <<CONF
worker_processes auto;
pid $work/nginx-$1.pid;
error_log $work/nginx-$1.error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx-$1.body;
  proxy_temp_path $work/nginx-$1.proxy;
  keepalive_requests 1000000;
  client_max_body_size 20m;
  client_body_buffer_size 64k;
  $2
}
CONF
}
nginx_conf ceilings "
  upstream a { server 127.0.0.1:$a_port; keepalive 64; }
  server { listen 127.0.0.1:$a_port; location / { return 200; } }
  server { listen 127.0.0.1:$b_port; location / {
      proxy_pass http://a; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
nginx_conf drain "server { listen 127.0.0.1:$down_port; location / { return 200; } }"
nginx -c "$work/nginx-ceilings.conf"

# --- helpers ----------------------------------------------------------------------------------------------------
relay_pid=
start_relay() { # start_relay DIR UPSTREAM-PORT  (sets relay_pid and started_ms; returns when a POST is answered 2xx)
  local t0; t0=$(date +%s%3N)
  MCPD_JAVA_OPTS="${MCPD_BENCH_JAVA_OPTS:-}" "$root/bin/mcpd" relay --listen "127.0.0.1:$relay_port" \
    --upstream "http://127.0.0.1:$2" --data "$1/mcpd.db" --spool-max-bytes 64GiB >>"$work/relay.log" 2>&1 &
  relay_pid=$!
  for _ in $(seq 1 1200); do
    if curl -sf -o /dev/null -H 'content-type: application/json' -d '{"events":[{"bench":"first"}]}' \
      "http://127.0.0.1:$relay_port/v1/ingest"; then
      serving_ms=$(($(date +%s%3N) - t0))
      return
    fi
    sleep 0.05
  done
  echo "the relay did not start" >&2; tail "$work/relay.log" >&2; exit 1
}
stop_relay() {
  kill "$relay_pid" 2>/dev/null || true
  wait "$relay_pid" 2>/dev/null || true
}
metric() { # metric NAME  — sums the samples of a relay metric
  curl -sf "http://127.0.0.1:$relay_port/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $2} END {printf "%.0f", s}'
}
await_empty_spool() { # returns once delivery caught up (at most 10 minutes)
  for _ in $(seq 1 6000); do [ "$(metric mcpd_relay_spool_entries)" = 0 ] && return; sleep 0.1; done
  echo "the spool did not drain" >&2
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
postgres_ticks() { # every PostgreSQL server process together
  local t=0 comm
  for comm in /proc/[0-9]*/comm; do
    [ "$(cat "$comm" 2>/dev/null)" = postgres ] && t=$((t + $(awk '{print $14 + $15}' "${comm%comm}stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
rss_mib() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
peak_rss_mib() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

load() { # load SUBJECT SIZE URL SECONDS DELAY-MS [EXTRA-JSON]  — one wrk run, one result line
  local subject=$1 size=$2 url=$3 secs=$4 pause=$5 extra=${6:-} before=0 line cpu=""
  [ -n "$relay_pid" ] && [[ $subject == relay* ]] && before=$(cpu_ticks "$relay_pid")
  line=$(BODY_BYTES=$size DELAY_MS=$pause wrk -t2 -c"$connections" -d"${secs}s" -s "$here/post.lua" "$url" | tail -1)
  if [ -n "$relay_pid" ] && [[ $subject == relay* ]]; then
    cpu=$(awk -v t="$(($(cpu_ticks "$relay_pid") - before))" -v hz="$(getconf CLK_TCK)" -v s="$secs" \
      'BEGIN {printf ",\"cpu_cores\":%.2f", t / hz / s}'),\"rss_mib\":$(rss_mib "$relay_pid")
  fi
  record "{\"kind\":\"load\",\"subject\":\"$subject\",\"size\":$size,\"delay_ms\":$pause$cpu$extra,${line#\{}"
  echo "$line"
}
warm() { # warm URL SIZE [SECONDS] — the JVM needs 15–20 s of load before its rate settles (C2 compilation)
  BODY_BYTES=$2 wrk -t2 -c"$connections" -d"${3:-$warmup}s" -s "$here/post.lua" "$1" >/dev/null
}

if want all; then
# --- ceiling C: the disk ----------------------------------------------------------------------------------------
say "ceiling C: the disk ($disk_seconds s per pattern, $reps repetitions)"
for _ in $(seq 1 "$reps"); do
  java "$here/DiskProbe.java" "$work/disk" "$disk_seconds" | while read -r line; do
    record "{\"kind\":\"disk\",${line#\{}"
  done
done

# --- saturation: A, B, the relay at 1 KiB and 16 KiB, alternating ----------------------------------------------
say "saturation: $reps × ${seconds} s per subject, $connections connections"
start_relay "$work/accept" "$a_port"
accept_pid=$relay_pid
warm "http://127.0.0.1:$a_port/v1/ingest" 1024
warm "http://127.0.0.1:$b_port/v1/ingest" 1024
warm "http://127.0.0.1:$relay_port/v1/ingest" 1024 "$relay_warmup"
await_empty_spool
for rep in $(seq 1 "$reps"); do
  load A-1k 1024 "http://127.0.0.1:$a_port/v1/ingest" "$seconds" 0
  load B-1k 1024 "http://127.0.0.1:$b_port/v1/ingest" "$seconds" 0
  load relay-1k 1024 "http://127.0.0.1:$relay_port/v1/ingest" "$seconds" 0
  await_empty_spool
  load B-16k 16384 "http://127.0.0.1:$b_port/v1/ingest" "$seconds" 0
  load relay-16k 16384 "http://127.0.0.1:$relay_port/v1/ingest" "$seconds" 0
  await_empty_spool
done

# --- latency against offered load: paced connections at 1/4, 1/2, 3/4 of each subject's saturating rate ---------
median_rps() { # median_rps SUBJECT
  python3 - "$results" "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(statistics.median(r["rps"] for r in rows if r.get("kind") == "load" and r["subject"] == sys.argv[2]
                        and r["delay_ms"] == 0))
PY
}
say "latency against offered load"
declare -A saturation
for subject in A-1k B-1k relay-1k; do saturation[$subject]=$(median_rps "$subject"); done
for rep in $(seq 1 "$latency_reps"); do
  for fraction in 0.25 0.5 0.75; do
    for subject in A-1k B-1k relay-1k; do
      case $subject in A-1k) port=$a_port ;; B-1k) port=$b_port ;; relay-1k) port=$relay_port ;; esac
      pause=$(awk -v c="$connections" -v r="${saturation[$subject]}" -v f="$fraction" \
        'BEGIN {d = c * 1000 / (r * f); printf "%d", d < 1 ? 1 : d + 0.5}')
      load "$subject" 1024 "http://127.0.0.1:$port/v1/ingest" "$seconds" "$pause" ",\"fraction\":$fraction"
      [ "$subject" = relay-1k ] && await_empty_spool
    done
  done
done

# --- sustained: 60 s of load with delivery running, spool size sampled ------------------------------------------
sustained() { # sustained LABEL DELAY-MS
  local a0 d0 e0 t0 sampler
  a0=$(metric mcpd_relay_accepted_total) d0=$(metric mcpd_relay_delivered_total) e0=$(metric mcpd_relay_spool_entries)
  t0=$(date +%s%3N)
  (while sleep 5; do
     record "{\"kind\":\"sustained-sample\",\"label\":\"$1\",\"t_s\":$((($(date +%s%3N) - t0) / 1000)),\"entries\":$(metric mcpd_relay_spool_entries),\"delivered\":$(($(metric mcpd_relay_delivered_total) - d0)),\"rss_mib\":$(rss_mib "$relay_pid")}"
   done) &
  sampler=$!
  load "relay-sustained-$1" 1024 "http://127.0.0.1:$relay_port/v1/ingest" "$sustained" "$2" \
    ",\"entries_before\":$e0" >/dev/null
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  local secs; secs=$(awk -v t="$(($(date +%s%3N) - t0))" 'BEGIN {printf "%.3f", t / 1000}')
  record "{\"kind\":\"sustained\",\"label\":\"$1\",\"seconds\":$secs,\"accepted\":$(($(metric mcpd_relay_accepted_total) - a0)),\"delivered\":$(($(metric mcpd_relay_delivered_total) - d0)),\"entries_before\":$e0,\"entries_after\":$(metric mcpd_relay_spool_entries),\"peak_rss_mib\":$(peak_rss_mib "$relay_pid")}"
  await_empty_spool
}
say "sustained: ${sustained} s at full load, then ${sustained} s paced at half of ceiling B"
sustained full 0
half_b_pause=$(awk -v c="$connections" -v r="${saturation[B-1k]}" 'BEGIN {d = c * 1000 / (r * 0.5); printf "%d", d < 1 ? 1 : d + 0.5}')
sustained half-B "$half_b_pause"
record "{\"kind\":\"relay-process\",\"phase\":\"accept\",\"peak_rss_mib\":$(peak_rss_mib "$accept_pid")}"
stop_relay

# --- backlog scale: upstream down, N entries waiting --------------------------------------------------------------
say "backlog: $backlogs entries waiting"
for n in $backlogs; do
  dir=$work/backlog-$n
  mkdir -p "$dir/mcpd.spool" && mkdir -p -m 700 "$dir/mcpd.spool/relay"  # the relay refuses a spool others can write
  filled=0
  if ((n > 0)); then
    line=$(java -cp "$root/target/mcpd.jar" "$here/FillSpool.java" "$dir/mcpd.spool/relay" "$n" 2>>"$work/fill.log")
    filled=1
  fi
  start_relay "$dir" "$down_port"
  record "{\"kind\":\"restart\",\"backlog\":$n,\"serving_ms\":$serving_ms,\"rss_mib\":$(rss_mib "$relay_pid")}"
  warm "http://127.0.0.1:$relay_port/v1/ingest" 1024 "$relay_warmup" # upstream down: these wait in the spool too
  for rep in $(seq 1 "$backlog_reps"); do
    load relay-backlog 1024 "http://127.0.0.1:$relay_port/v1/ingest" "$seconds" 0 \
      ",\"backlog\":$n,\"waiting\":$(metric mcpd_relay_spool_entries)" >/dev/null
  done
  if [ "$n" = "${backlogs##* }" ]; then
    waiting=$(metric mcpd_relay_spool_entries)
    nginx -c "$work/nginx-drain.conf"
    t0=$(date +%s%3N)
    until [ "$(metric mcpd_relay_delivered_total)" -gt 0 ]; do sleep 0.05; done
    t1=$(date +%s%3N)
    until [ "$(metric mcpd_relay_spool_entries)" = 0 ]; do sleep 0.2; done
    t2=$(date +%s%3N)
    record "{\"kind\":\"drain\",\"entries\":$waiting,\"first_delivery_ms\":$((t1 - t0)),\"drain_ms\":$((t2 - t1)),\"peak_rss_mib\":$(peak_rss_mib "$relay_pid")}"
    nginx -c "$work/nginx-drain.conf" -s stop
  fi
  record "{\"kind\":\"relay-process\",\"phase\":\"backlog-$n\",\"peak_rss_mib\":$(peak_rss_mib "$relay_pid")}"
  stop_relay
  rm -rf "$dir"
done

fi # want all

# --- the collector --------------------------------------------------------------------------------------------------
# Its per-request rate (every request its own key), on SQLite and PostgreSQL. With --only collector, also what a
# backlog drains at into each (bench/wan.py, at each RTT), so the ratio between the two is measured side by side.
if want collector; then
collector() { # collector LABEL DATA
  "$root/bin/mcpd" serve --listen "127.0.0.1:$serve_port" --data "$2" >>"$work/collector.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 400); do curl -sf -o /dev/null "http://127.0.0.1:$serve_port/readyz" && break; sleep 0.05; done
  warm "http://127.0.0.1:$serve_port/v1/ingest" 1024 "$relay_warmup"
  local c0 g0 line requests=0
  c0=$(cpu_ticks "$pid") g0=$(postgres_ticks)
  for rep in $(seq 1 "$reps"); do
    line=$(UNIQUE_KEYS=1 RUN_ID="$1-$rep" load "collector-$1" 1024 "http://127.0.0.1:$serve_port/v1/ingest" \
      "$seconds" 0)
    requests=$((requests + $(sed 's/.*"requests":\([0-9]*\).*/\1/' <<<"$line")))
  done
  # The CPU the collector and its store spent per request (wrk's own is not counted): what a drain's is set against.
  record "{\"kind\":\"collector-cpu\",\"store\":\"$1\",\"requests\":$requests,\"collector_cpu_s\":$(awk -v t="$(($(cpu_ticks "$pid") - c0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'),\"postgres_cpu_s\":$(awk -v t="$(($(postgres_ticks) - g0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}')}"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
say "collector: SQLite"
collector sqlite "$work/collector/mcpd.db"
if ((!quick)); then
  say "collector: PostgreSQL (a throwaway cluster from .ci/postgres.sh, fsync on)"
  eval "$(bash "$root/.ci/postgres.sh")"
  pg_env=$(dirname "$MCPD_TEST_PGDATA")/env
  collector postgres "$MCPD_TEST_POSTGRES_URL"
fi
if [ "$only" = collector ]; then
  say "collector: a backlog of $wan_backlog drained into each at RTT $wan_rtts ms (bench/wan.py), $wan_reps runs"
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt 0 --upstreams serve,serve-pg --phases drain \
    --runs "$wan_reps" --backlog "$wan_backlog" --warm-upstream "$wan_warm" --warm-relay "$wan_warm" --pg "${MCPD_TEST_POSTGRES_URL:-}" \
    --out "$results" >&2
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt "${wan_rtts#0,}" --upstreams serve,serve-pg \
    --phases drain --runs 1 --backlog "$wan_backlog" --warm-upstream "$wan_warm" --warm-relay "$wan_warm" --pg "${MCPD_TEST_POSTGRES_URL:-}" \
    --out "$results" >&2
fi
fi # want collector

# --- large bodies in flight: COUNT concurrent uploads of 16 MiB (the default --max-body-bytes), upstream down ------
# The relay as shipped (bin/mcpd; its default heap is a quarter of the machine's memory) and with -Xmx384m and
# -Xmx256m, as a container with a memory limit runs it. Each upload has its own connection, a Content-Length and no
# Expect, as SDKs send. Reported: the answers (2xx, 503 + Retry-After, none), the resident size just before and the
# peak during the uploads (VmHWM), against the bytes of all the bodies together.
large_bodies() { # large_bodies LABEL JAVA-OPTS COUNT
  local before line
  rm -rf "$work/large"
  MCPD_BENCH_JAVA_OPTS="$2" start_relay "$work/large" "$down_port"
  before=$(rss_mib "$relay_pid")
  line=$(python3 "$here/large_bodies.py" "$relay_port" "$3" $((16 * 1024 * 1024)))
  record "{\"kind\":\"large-bodies\",\"label\":\"$1\",\"java_opts\":\"$2\",\"date\":\"$(date -u +%Y-%m-%dT%H:%MZ)\",\"rss_before_mib\":$before,\"peak_rss_mib\":$(peak_rss_mib "$relay_pid"),${line#\{}"
  grep -q OutOfMemoryError "$work/relay.log" && record "{\"kind\":\"large-bodies-oom\",\"label\":\"$1\"}"
  stop_relay
}
if want large-bodies; then
  count=40
  ((quick)) && count=8
  say "large bodies: $count concurrent 16 MiB uploads, three heaps"
  for rep in $(seq 1 "$reps"); do
    large_bodies default "" "$count"
    large_bodies xmx384m "-Xmx384m" "$count"
    large_bodies xmx256m "-Xmx256m" "$count"
  done
fi

# --- OTLP/gRPC beside OTLP/HTTP: the same 1 KiB message to the same relay with the same HTTP/2 client (h2load, h2c) ---
# As Export calls to .../TraceService/Export and as POST /v1/traces (application/x-protobuf), alternating, in two
# shapes: 64 connections with one stream each, and 4 connections with 16 streams each (one gRPC channel per sender
# multiplexes its calls). The relay's upstream is down: this is the accept path alone. The relay was warmed by a run
# of each first. h2load counts an HTTP 200 as a success, which a gRPC refusal also is, so the spool's own count of
# accepted requests is recorded beside it.
grpc_load() { # grpc_load PROTOCOL CONNECTIONS STREAMS SECONDS
  local before ticks out rate total
  before=$(metric mcpd_relay_accepted_total)
  ticks=$(cpu_ticks "$relay_pid")
  if [ "$1" = grpc ]; then
    out=$(h2load -D "$4" -c "$2" -m "$3" -d "$work/message.grpc" -H 'content-type: application/grpc' \
      -H 'te: trailers' "http://127.0.0.1:$relay_port/opentelemetry.proto.collector.trace.v1.TraceService/Export")
  else
    out=$(h2load -D "$4" -c "$2" -m "$3" -d "$work/message.pb" \
      -H 'content-type: application/x-protobuf' "http://127.0.0.1:$relay_port/v1/traces")
  fi
  rate=$(awk '/^finished in/ {gsub(",", "", $4); print $4}' <<<"$out")
  total=$(awk '/^requests:/ {print $2}' <<<"$out")
  ticks=$(($(cpu_ticks "$relay_pid") - ticks)) # the relay's own CPU (user + system), in clock ticks
  record "{\"kind\":\"grpc-accept\",\"protocol\":\"$1\",\"connections\":$2,\"streams\":$3,\"seconds\":$4,\"rps\":$rate,\"requests\":$total,\"accepted\":$(($(metric mcpd_relay_accepted_total) - before)),\"relay_cpu_ticks\":$ticks,\"ticks_per_s\":$(getconf CLK_TCK),\"date\":\"$(date -u +%Y-%m-%dT%H:%MZ)\"}"
}
if want grpc; then
  say "grpc: Export calls beside POST /v1/traces, $reps × ${seconds} s per protocol and shape"
  python3 -c "
import os, struct, sys
message = os.urandom(1024)
open(sys.argv[1] + '/message.pb', 'wb').write(message)
open(sys.argv[1] + '/message.grpc', 'wb').write(b'\\0' + struct.pack('>I', len(message)) + message)" "$work"
  rm -rf "$work/grpc"
  start_relay "$work/grpc" 18189 # nothing listens there
  grpc_load http 64 1 "$relay_warmup" >/dev/null
  grpc_load grpc 64 1 "$relay_warmup" >/dev/null
  sed -i '/"kind":"grpc-accept"/d' "$results" # the warm-up runs
  for rep in $(seq 1 "$reps"); do
    for shape in "64 1" "4 16"; do
      grpc_load http $shape "$seconds"
      grpc_load grpc $shape "$seconds"
    done
  done
  stop_relay
fi

# --- HTTPS on the listener beside plain HTTP: the same relay twice, one with --tls-cert/--tls-key ----------------------
# Two relays side by side (upstream down: the accept path alone), each warmed first, loaded in turn by wrk with the
# same 1 KiB POST: keep-alive on 64 connections (what an SDK's exporter does), and a new connection for every request
# on 16 (`Connection: close`: each request pays a full handshake, ECDSA P-256, TLS 1.3, no resumption).
tls_load() { # tls_load PROTOCOL SHAPE CONNECTIONS SECONDS [HEADER]
  local url pid before line cpu
  if [ "$1" = https ]; then url="https://127.0.0.1:$tls_port/v1/ingest" pid=$tls_pid
  else url="http://127.0.0.1:$relay_port/v1/ingest" pid=$relay_pid; fi
  before=$(cpu_ticks "$pid")
  line=$(wrk -t2 -c"$3" -d"$4s" ${5:+-H "$5"} -s "$here/post.lua" "$url" | tail -1)
  cpu=$(awk -v t="$(($(cpu_ticks "$pid") - before))" -v hz="$(getconf CLK_TCK)" -v s="$4" 'BEGIN {printf "%.2f", t / hz / s}')
  record "{\"kind\":\"tls-accept\",\"protocol\":\"$1\",\"shape\":\"$2\",\"connections\":$3,\"cpu_cores\":$cpu,\"date\":\"$(date -u +%Y-%m-%dT%H:%MZ)\",${line#\{}"
}
if want tls; then
  say "tls: HTTPS beside HTTP, $reps × ${seconds} s per protocol and shape"
  pki=$work/pki && mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/ca.key" \
    -out "$pki/ca.pem" -days 2 -subj "/CN=bench CA" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/relay.key" \
    -out "$pki/relay.csr" -subj "/CN=bench relay" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
  openssl x509 -req -in "$pki/relay.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
    -out "$pki/relay.pem" -days 1 -extfile "$pki/ext" 2>/dev/null
  rm -rf "$work/tls-plain" "$work/tls-https"
  start_relay "$work/tls-plain" 18189 # nothing listens there
  MCPD_JAVA_OPTS="${MCPD_BENCH_JAVA_OPTS:-}" "$root/bin/mcpd" relay --listen "127.0.0.1:$tls_port" \
    --upstream http://127.0.0.1:18189 --data "$work/tls-https/mcpd.db" --spool-max-bytes 64GiB \
    --tls-cert "$pki/relay.pem" --tls-key "$pki/relay.key" >>"$work/relay-tls.log" 2>&1 &
  tls_pid=$!
  tls_serving() { # the routes serve: /readyz answers anything but "starting" (/healthz says 200 a moment before)
    body=$(curl -s --cacert "$pki/ca.pem" "https://127.0.0.1:$tls_port/readyz") && [ -n "$body" ] \
      && [ "${body#starting}" = "$body" ]
  }
  for _ in $(seq 1 1200); do
    tls_serving && break
    sleep 0.05
  done
  tls_serving || { echo "the HTTPS relay did not start" >&2; tail "$work/relay-tls.log" >&2; exit 1; }
  for protocol in http https; do
    tls_load "$protocol" keep-alive 64 "$relay_warmup"
    tls_load "$protocol" per-request 16 "$relay_warmup" 'Connection: close'
  done
  sed -i '/"kind":"tls-accept"/d' "$results" # the warm-up runs
  for rep in $(seq 1 "$reps"); do
    for protocol in http https; do
      tls_load "$protocol" keep-alive 64 "$seconds"
      tls_load "$protocol" per-request 16 "$seconds" 'Connection: close'
    done
  done
  kill "$tls_pid" 2>/dev/null || true
  wait "$tls_pid" 2>/dev/null || true
  stop_relay
fi

# --- the cost of one request: bench/cost.py ---------------------------------------------------------------------
# First the relay beside the limit of its job on the JVM (bench/DurableLimit.java), each started fresh and alone,
# delivering and accepting only: its first 10 s under load, the next 10 s, steady windows, half rate. Then side by side
# in each repetition: nginx proxy_pass, the relay delivering to nginx, the relay accepting only — with CPU per entry,
# the JIT's share and peak RSS; then a backlog of 10 000 000 entries: restart, idle RSS, drain from a
# warm and from a cold page cache.
if want cost || [ "$only" = cost-limit ]; then
  say "cost: the relay beside the limit; proxy_pass beside the relay with and without delivery; backlog restart and drain"
  cost_phases=limit,load,backlog
  [ "$only" = cost-limit ] && cost_phases=limit
  # shellcheck disable=SC2086 # cost_args is a list of options
  MCPD_BENCH_DIR=$work python3 "$here/cost.py" --jar "$root/target/mcpd.jar" $cost_args --phases "$cost_phases" \
    --out "$results" >&2
fi

# --- delivery across a long link: bench/wan.py through bench/delay_proxy.py ----------------------------------------
# Archive (32 senders for 3 s, until the upstream has everything) three times and drain (a backlog filled by
# FillSpool, the link down, then up; an mcpd serve warmed first by $wan_warm s of requests straight to it, as its
# per-request runs are) once per RTT and upstream; a trickle of lone entries to mcpd serve; 60 s
# sustained at 0 and 80 ms.
if want wan; then
  if [[ $wan_upstreams == *serve-pg* ]]; then
    if [ -z "${pg_env:-}" ]; then
      eval "$(bash "$root/.ci/postgres.sh")"
      pg_env=$(dirname "$MCPD_TEST_PGDATA")/env
    fi
  fi
  say "wan: RTT $wan_rtts ms to $wan_upstreams (archive ×$wan_reps, drain of $wan_backlog)"
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt "$wan_rtts" --upstreams "$wan_upstreams" \
    --phases archive,drain --runs "$wan_reps" --backlog "$wan_backlog" --warm-upstream "$wan_warm" --warm-relay "$wan_warm" \
    --pg "${MCPD_TEST_POSTGRES_URL:-}" \
    --out "$results" >&2
  say "wan: 300 entries one by one at RTT 80 ms to mcpd serve (what crosses the link for lone entries)"
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt 80 --upstreams serve --phases trickle --runs "$wan_reps" \
    --out "$results" >&2
  say "wan: $wan_sustained s sustained at RTT $wan_sustained_rtts ms"
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt "$wan_sustained_rtts" --upstreams "$wan_upstreams" \
    --phases sustained --sustained-seconds "$wan_sustained" --pg "${MCPD_TEST_POSTGRES_URL:-}" --out "$results" >&2
fi

# --- ordered streams: bench/remote_write.py (Debian's prometheus) and bench/wan.py's OTLP metrics ---------------------
# Prometheus A → the relay → Prometheus B: outages, kill -9 and restarts (three runs), then sustained at 80 ms with a
# load of 10 000 samples/s; OTLP metrics (one ordered stream) sustained at 80 ms with the default merge bounds and
# with larger ones.
if want ordered; then
  if source "$root/.ci/promtool.sh" >&2; then
    say "ordered: Prometheus remote write through the relay ($ordered_args)"
    # shellcheck disable=SC2086 # ordered_args is a list of options
    python3 "$here/remote_write.py" --jar "$root/target/mcpd.jar" $ordered_args --out "$results" >&2
    if ((!quick)); then
      python3 "$here/remote_write.py" --jar "$root/target/mcpd.jar" --phases sustained --rtt 80 --series 10000 \
        --seconds "$ordered_sustained" --out "$results" >&2
    fi
  else
    say "ordered: no prometheus (Debian's package could not be fetched): remote write not measured"
  fi
  say "ordered: OTLP metrics, one ordered stream, $ordered_sustained s sustained at RTT 80 ms"
  python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt 80 --upstreams otlp-metrics --phases sustained \
    --sustained-seconds "$ordered_sustained" --label "default options" --out "$results" >&2
  if ((!quick)); then
    python3 "$here/wan.py" --jar "$root/target/mcpd.jar" --rtt 80 --upstreams otlp-metrics --phases sustained \
      --sustained-seconds "$ordered_sustained" --label="--batch-max-entries 4096 --batch-max-bytes 4MiB" \
      --relay-arg=--batch-max-entries --relay-arg=4096 --relay-arg=--batch-max-bytes --relay-arg=4MiB \
      --out "$results" >&2
  fi
fi

# --- the delivery barrier: bench/barrier.py ------------------------------------------------------------------------
if want barrier; then
  say "barrier: last accept → 200 from /relay/sync at RTT 0 and 80 ms; accept with 0 and 1 000 waiters"
  # shellcheck disable=SC2086 # barrier_args is a list of options
  python3 "$here/barrier.py" --jar "$root/target/mcpd.jar" --rtt 0,80 $barrier_args --out "$results" >&2
fi

# --- health checks: bench/health.py -------------------------------------------------------------------------------
if want health; then
  say "health: out of service after the upstream dies, back after it returns (defaults and the ELB example)"
  python3 "$here/health.py" --jar "$root/target/mcpd.jar" --runs "$health_runs" --out "$results" >&2
fi

# --- dead letters replayed: bench/dead_letters.py ----------------------------------------------------------------------
if want dead-letters; then
  say "dead-letters: $dead_entries refused, then replayed into the running relay (against posting them)"
  python3 "$here/dead_letters.py" --jar "$root/target/mcpd.jar" --entries "$dead_entries" --runs "$dead_runs" \
    --out "$results" >&2
fi

# --- collector replicas taking turns: bench/lease.py ------------------------------------------------------------------
# Two mcpd serve on one PostgreSQL (--lease-pass-seconds 2): the lease's holder killed (kill -9) or stopped (SIGTERM),
# timed until the other holds it; both status pages watched for two holders at once. It needs PostgreSQL: not in
# --quick.
if want lease && ((!quick)); then
  if [ -z "${pg_env:-}" ]; then
    eval "$(bash "$root/.ci/postgres.sh")"
    pg_env=$(dirname "$MCPD_TEST_PGDATA")/env
  fi
  say "lease: takeover after kill -9 and after SIGTERM of the holder, $lease_runs runs of each"
  python3 "$here/lease.py" --jar "$root/target/mcpd.jar" --pg "$MCPD_TEST_POSTGRES_URL" --runs "$lease_runs" \
    --out "$results" >&2
fi

# --- the collector's retention sweep under ingest: bench/sweep.py ------------------------------------------------------
# 1 000 000 expired keys forgotten by the lease holder while 16 connections post at 1 000 requests/s, beside the same
# load with nothing expiring; SQLite, and PostgreSQL (a throwaway cluster from .ci/postgres.sh) in a full run.
if want sweep; then
  if [[ $sweep_args == *postgres* ]] && [ -z "${pg_env:-}" ]; then
    eval "$(bash "$root/.ci/postgres.sh")"
    pg_env=$(dirname "$MCPD_TEST_PGDATA")/env
  fi
  say "sweep: ingest while the retention sweep forgets expired keys ($sweep_args)"
  # shellcheck disable=SC2086 # sweep_args is a list of options
  MCPD_BENCH_DIR=$work python3 "$here/sweep.py" --jar "$root/target/mcpd.jar" $sweep_args \
    --pg "${MCPD_TEST_POSTGRES_URL:-}" --out "$results" >&2
fi

# --- Kafka between relays and collectors: bench/kafka.py ----------------------------------------------------------------
# A KRaft broker (the tests' TestKafka as a process); relay → topic beside relay → mcpd serve; the archive rate of one
# and of two collectors consuming the topic (on PostgreSQL in a full run); a broker killed and started again.
if want kafka; then
  if [ -n "${kafka_pg:-}" ] && [ -z "${pg_env:-}" ]; then
    eval "$(bash "$root/.ci/postgres.sh")"
    pg_env=$(dirname "$MCPD_TEST_PGDATA")/env
  fi
  say "kafka: relay → Kafka → collectors ($kafka_args)"
  # shellcheck disable=SC2086 # kafka_args is a list of options
  python3 "$here/kafka.py" --jar "$root/target/mcpd.jar" $kafka_args \
    ${kafka_pg:+--pg "$MCPD_TEST_POSTGRES_URL"} --out "$results" >&2
fi

# --- the report -------------------------------------------------------------------------------------------------
mkdir -p "$plots_dir"
if [ -n "$only" ]; then # this phase's rows in place of the earlier ones; every other row as it was measured
  python3 - "$plots_dir/results.jsonl" "$results" "$only" <<'PY' >"$work/merged.jsonl"
import json, sys
kept, new, phase = sys.argv[1], sys.argv[2], sys.argv[3]
def measured(row):  # whether this phase measures the row
    if phase == "collector":
        return (row["kind"] == "load" and row.get("subject", "").startswith("collector-")
                or row["kind"] == "collector-cpu"
                or row["kind"] == "wan" and row.get("phase") == "drain" and row.get("upstream") in ("serve", "serve-pg"))
    if phase == "wan":
        return row["kind"] == "wan" and row.get("upstream") != "otlp-metrics"
    if phase == "ordered":
        return row["kind"] == "remote-write" or row["kind"] == "wan" and row.get("upstream") == "otlp-metrics"
    return row["kind"].startswith(phase)
for line in open(kept):
    if line.strip() and not measured(json.loads(line)):
        print(line.rstrip())
for line in open(new):
    if line.strip() and measured(json.loads(line)):
        print(line.rstrip())
PY
  cp "$work/merged.jsonl" "$results"
fi
cp "$results" "$plots_dir/results.jsonl"
python3 "$here/report.py" "$plots_dir/results.jsonl" "$report_dir/BENCHMARKS.md" "$plots_dir"
say "report: $report_dir/BENCHMARKS.md"
