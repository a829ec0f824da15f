#!/usr/bin/env bash
# What one chunk of PostgreSQL's key sweep costs, nothing else running: 1 000 chunks of 1 000 keys deleted from a
# freshly seeded million-key table, each timed by psql, the statement the collector ships (by row address, as
# JdbcStore.Expiring.KEYS sends it) beside the one it replaced (each key looked up again through the primary key).
#   bench/pg_chunk_delete.sh postgres://…   (a throwaway database: its tables are emptied; e.g. one from
#                                            MCPD_PG_DURABLE=1 .ci/postgres.sh, and its superuser for CHECKPOINT)
set -euo pipefail
url=${1:?usage: bench/pg_chunk_delete.sh postgres://user:password@host:port/database}
root=$(cd "$(dirname "$0")/.." && pwd)
keys=1000000 chunk=1000 cutoff=1577836801000 # the seeded keys were first seen in the second after 2020-01-01

# The schema as mcpd serve makes it: start it on the database once.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
java -jar "$root/target/mcpd.jar" serve --listen "127.0.0.1:$port" --data "$url" >/dev/null 2>&1 &
serve=$!
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.5; done
kill "$serve"; wait "$serve" || true

seed() { # as bench/sweep.py seeds it: keys in the order first seen, VACUUM ANALYZE, CHECKPOINT
  psql -X -q -v ON_ERROR_STOP=1 "$url" -c "TRUNCATE idempotency_keys, batches, duplicates" \
    -c "INSERT INTO idempotency_keys (sender, idempotency_key, body_sha256, seen_at_ms) SELECT '',
          'relay-' || encode(sha256(('seed-' || g)::text::bytea), 'hex'), encode(sha256(('body-' || g)::text::bytea),
          'hex'), 1577836800000 + (g - 1) * 1000 / $keys FROM generate_series(1, $keys) g ORDER BY g" \
    -c "VACUUM ANALYZE idempotency_keys"
  psql -X -q "${url/\/\/*@/\/\/postgres@}" -c CHECKPOINT 2>/dev/null \
    || echo "pg_chunk_delete: CHECKPOINT refused; the seed's writes are still to checkpoint" >&2
}

time_chunks() { # $1: a name, $2: the chunk's statement
  seed
  local times
  times=$({ echo '\timing on'; for _ in $(seq $((keys / chunk))); do echo "$2;"; done; } \
    | psql -X -q -v ON_ERROR_STOP=1 "$url" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
  python3 - "$1" <<PY
import statistics, sys
t = [float(x) for x in """$times""".split()]
print("%-16s chunks %d, in all %.1f s, median %.1f ms, p90 %.1f ms, max %.1f ms; median of the first 100 %.1f ms,"
      " of the last 100 %.1f ms" % (sys.argv[1], len(t), sum(t) / 1000, statistics.median(t),
      sorted(t)[int(len(t) * 0.9)], max(t), statistics.median(t[:100]), statistics.median(t[-100:])))
PY
}

time_chunks "by row address" "DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys
  WHERE seen_at_ms < $cutoff ORDER BY seen_at_ms LIMIT $chunk))"
time_chunks "by primary key" "DELETE FROM idempotency_keys WHERE (sender, idempotency_key) IN (SELECT sender,
  idempotency_key FROM idempotency_keys WHERE seen_at_ms < $cutoff LIMIT $chunk)"
