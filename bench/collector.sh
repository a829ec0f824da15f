#!/usr/bin/env bash
# Collector ingest rate: native batches of 10 events (~1 KiB), 16 connections, on embedded SQLite and on a throwaway
# PostgreSQL (fsync on). Usage: bench/collector.sh [runs]   (installs wrk and PostgreSQL from Debian if missing)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=${1:-3}
work=$(mktemp -d)
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
[ -f "$root/target/mcpd.jar" ] || (cd "$root" && mvn -q -DskipTests package)

serve() { # serve PORT DATA
  java -jar "$root/target/mcpd.jar" serve --listen "127.0.0.1:$1" --data "$2" >>"$work/collector.log" 2>&1 &
  echo $! > "$work/pid"
  for _ in $(seq 1 120); do curl -sf "localhost:$1/readyz" >/dev/null && return; sleep 0.25; done
  echo "collector did not start" >&2; tail "$work/collector.log" >&2; exit 1
}
measure() { # measure PORT LABEL
  wrk -t2 -c16 -d3s -s "$here/native_batch.lua" "http://127.0.0.1:$1/v1/ingest" >/dev/null # warm-up
  for _ in $(seq 1 "$runs"); do
    wrk -t2 -c16 -d10s --latency -s "$here/native_batch.lua" "http://127.0.0.1:$1/v1/ingest" |
      awk -v label="$2" '/ 99%/ {p99=$2} /Requests\/sec/ {rate=$2}
        END {printf "%s: %.0f batches/s (%.0f events/s), p99 %s\n", label, rate, rate * 10, p99}'
  done
  kill "$(cat "$work/pid")"; wait "$(cat "$work/pid")" 2>/dev/null || true
}

echo "== SQLite (WAL, synchronous=FULL)"
serve 14340 "$work/sqlite/mcpd.db"
measure 14340 sqlite

echo "== PostgreSQL 15 (fsync on, synchronous_commit on)"
eval "$(bash "$root/.ci/postgres.sh")"
trap 'bash "$root/.ci/postgres.sh" stop "$(dirname "$MCPD_TEST_PGDATA")/env" >/dev/null 2>&1; rm -rf "$work"' EXIT
port=${MCPD_TEST_POSTGRES_URL##*:}; port=${port%%/*}
psql "postgres://postgres@127.0.0.1:$port/postgres" -qc "ALTER SYSTEM SET fsync = on" -c "SELECT pg_reload_conf()" >/dev/null
serve 14341 "$MCPD_TEST_POSTGRES_URL"
measure 14341 postgres
