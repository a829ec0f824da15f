#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: installs Debian's server package if it is missing, starts a fresh
# cluster in a new temporary directory on a free port of 127.0.0.1, and hands its coordinates to the caller.
#
# Use (bash):
#   source .ci/postgres.sh     # what .ci/run does: starts a cluster, exports the variables below, and sets an EXIT
#                              # trap in the sourcing shell that stops the cluster and deletes its directory when
#                              # that shell ends (replacing any EXIT trap the shell had). If the variables already
#                              # name a running cluster of this script, it reuses that one and sets no trap: it is
#                              # then stopped by whoever started it. Returns 1 (never exits the shell) on failure.
#   eval "$(bash .ci/postgres.sh)"       # same, but nothing stops the cluster for you: it outlives this shell
#   bash .ci/postgres.sh stop [ENVFILE]  # stops and deletes such a cluster: the one in ENVFILE (the cluster's
#                                        # directory has one, named env), else the one $MCPD_TEST_PGDATA names
#
# Exported (also written, as `export` lines, to <cluster dir>/env):
#   MCPD_TEST_POSTGRES_URL  postgres://mcpd:mcpd@127.0.0.1:<port>/mcpd (database mcpd, owned by role mcpd,
#                           password mcpd; authentication is `trust` on loopback, so any password is accepted)
#   MCPD_TEST_PG_CTL        the server's pg_ctl (/usr/lib/postgresql/<version>/bin/pg_ctl)
#   MCPD_TEST_PGDATA        the cluster's data directory (<cluster dir>/data)
#   MCPD_TEST_PG_LOG        the server's log file (<cluster dir>/postgres.log); pg_ctl start must write to it
#   MCPD_TEST_PG_RUNAS      the user the server runs as, to run pg_ctl as (postgres when this runs as root,
#                           because PostgreSQL refuses to run as root; empty otherwise: run pg_ctl directly)
#   MCPD_TEST_PG_FSYNC      on or off: what the cluster was started with (below)
#
# Tests get fsync = off and full_page_writes = off: nothing they check depends on the disk's flushes, and the
# suite runs faster. Benchmarks set MCPD_PG_DURABLE=1 before starting it: the server then keeps PostgreSQL's
# defaults (fsync, full_page_writes and synchronous_commit on), as a production store runs, so a commit costs
# what it costs there; and it logs every lock wait of 100 ms or more (log_lock_waits, deadlock_timeout = 100ms).
#
# A test stops and restarts the server with exactly (port, listen address and socket directory are in the
# cluster's postgresql.conf, so no other option is needed; drop `runuser -u ... --` when MCPD_TEST_PG_RUNAS is
# empty):
#   runuser -u "$MCPD_TEST_PG_RUNAS" -- "$MCPD_TEST_PG_CTL" -D "$MCPD_TEST_PGDATA" -w -t 60 stop -m fast
#   runuser -u "$MCPD_TEST_PG_RUNAS" -- "$MCPD_TEST_PG_CTL" -D "$MCPD_TEST_PGDATA" -l "$MCPD_TEST_PG_LOG" -w -t 60 start
# (`-m immediate` instead of `-m fast` simulates a crash.) Always pass -l on start: without it the server keeps
# pg_ctl's stdout open, and a caller reading that output to its end waits for ever. Java tests use
# dev.mcpd.collector.TestPostgres, which does this.
#
# The port is picked below the kernel's ephemeral range, so while a test has the server stopped no outgoing
# connection can be given the port and keep the server from starting again. The cluster is independent of
# Debian's pg_ctlcluster clusters: installing here disables the package's default cluster, and an existing one
# (running or not) is left alone.

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # ---- Sourced: run the work in a child bash (so the caller's shell options and variables stay untouched),
  # then take its `export` lines. Kept to plain statements that are safe under the caller's set -euo pipefail.
  _mcpd_pg_before="${MCPD_TEST_PGDATA:-}"
  _mcpd_pg_exports="$(bash "${BASH_SOURCE[0]}" start)" || {
    unset _mcpd_pg_exports _mcpd_pg_before
    echo "postgres.sh: FAILED to provide a PostgreSQL server (see the messages above)" >&2
    return 1
  }
  eval "$_mcpd_pg_exports"
  unset _mcpd_pg_exports
  _mcpd_pg_cleanup() {
    local rc=$? dir="${MCPD_TEST_PGDATA:-}"
    if [[ -n "$dir" && "$rc" != 0 && -f "${MCPD_TEST_PG_LOG:-}" ]]; then
      echo "postgres.sh: exit status $rc; the test PostgreSQL server's log ends with:" >&2
      tail -n 20 "$MCPD_TEST_PG_LOG" >&2 || true
    fi
    [[ -n "$dir" ]] && bash "${_MCPD_PG_SCRIPT}" stop >&2 || true
  }
  _MCPD_PG_SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
  # Only a cluster this call created is this shell's to stop: a reused one belongs to whoever started it.
  if [[ "$MCPD_TEST_PGDATA" != "$_mcpd_pg_before" ]]; then
    trap _mcpd_pg_cleanup EXIT
    # A non-interactive shell killed by a signal would skip the EXIT trap: turn the signal into an exit.
    if [[ $- != *i* ]]; then trap 'exit 130' INT; trap 'exit 143' TERM; fi
  fi
  unset _mcpd_pg_before
  return 0
fi

# ---- Executed: everything below runs in its own bash. stdout carries only the `export` lines.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Runs a command as the server's user (PostgreSQL's programs refuse root), from a directory that user can read.
as_pg() {
  if [[ -n "$RUNAS" ]]; then (cd "$CLUSTER_DIR" && runuser -u "$RUNAS" -- "$@"); else (cd "$CLUSTER_DIR" && "$@"); fi
}

if [[ "$(id -u)" == 0 ]]; then RUNAS=postgres; else RUNAS=""; fi

find_bindir() {
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n | tail -n 1 || true)"
  if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" && -x "$d/postgres" ]]; then echo "$d"; fi
}

install_server() {
  [[ "$(id -u)" == 0 ]] || die "the PostgreSQL server is not installed, and installing it needs root: apt-get install postgresql"
  log "installing PostgreSQL server from Debian's packages"
  # Keep the package from creating (and perhaps starting) its default cluster on port 5432: the tests use
  # their own cluster. postgresql-common's createcluster.conf includes this directory.
  mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/00-mcpd-ci.conf
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq postgresql >&2 || die "apt-get install postgresql failed"
}

# Prints a TCP port free on 127.0.0.1, below the ephemeral range (see the header).
free_port() {
  local low=32768 p i py=""
  read -r low _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  (( low > 11000 )) || low=32768
  # Ask the kernel (bind) with a Python that works; else probe with a connect.
  for p in /usr/bin/python3 python3; do
    if "$p" -c '' >/dev/null 2>&1; then py="$p"; break; fi
  done
  for i in $(seq 1 200); do
    p=$(( 10000 + RANDOM % (low - 10000) ))
    if [[ -n "$py" ]]; then
      "$py" - "$p" <<'EOF' 2>/dev/null && { echo "$p"; return 0; }
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.close()
EOF
    elif ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  return 1
}

write_env() {
  {
    printf 'export MCPD_TEST_POSTGRES_URL=%q\n' "postgres://mcpd:mcpd@127.0.0.1:$PORT/mcpd"
    printf 'export MCPD_TEST_PG_CTL=%q\n' "$BINDIR/pg_ctl"
    printf 'export MCPD_TEST_PGDATA=%q\n' "$CLUSTER_DIR/data"
    printf 'export MCPD_TEST_PG_LOG=%q\n' "$CLUSTER_DIR/postgres.log"
    printf 'export MCPD_TEST_PG_RUNAS=%q\n' "$RUNAS"
    printf 'export MCPD_TEST_PG_FSYNC=%q\n' "$FSYNC"
  } > "$CLUSTER_DIR/env"
  cat "$CLUSTER_DIR/env"
}

cmd_start() {
  # Idempotent: a shell that already has a running cluster of ours keeps it.
  if [[ -n "${MCPD_TEST_PGDATA:-}" && -n "${MCPD_TEST_POSTGRES_URL:-}" && -f "${MCPD_TEST_PGDATA%/data}/env" ]] \
      && psql -X -q -A -t "$MCPD_TEST_POSTGRES_URL" -c 'select 1' >/dev/null 2>&1; then
    log "reusing the running cluster in ${MCPD_TEST_PGDATA%/data} ($MCPD_TEST_POSTGRES_URL)"
    cat "${MCPD_TEST_PGDATA%/data}/env"
    return 0
  fi

  BINDIR="$(find_bindir)"
  if [[ -z "$BINDIR" ]]; then
    install_server
    BINDIR="$(find_bindir)"
    [[ -n "$BINDIR" ]] || die "PostgreSQL was installed, but no /usr/lib/postgresql/<version>/bin/initdb was found"
  fi
  command -v psql >/dev/null || die "psql is missing (apt-get install postgresql-client)"
  if [[ -n "$RUNAS" ]]; then id -u "$RUNAS" >/dev/null 2>&1 || die "user $RUNAS does not exist (it comes with the postgresql package)"; fi

  FSYNC=off
  [[ "${MCPD_PG_DURABLE:-0}" == 1 ]] && FSYNC=on
  # /tmp, not $TMPDIR: the server's user must be able to reach the directory.
  CLUSTER_DIR="$(mktemp -d /tmp/mcpd-pg.XXXXXX)"
  STARTED=""
  # On any failure below: stop what was started, delete the directory, show the server's log.
  trap '
    rc=$?
    if [[ $rc != 0 ]]; then
      [[ -f "$CLUSTER_DIR/postgres.log" ]] && { log "the server log ends with:"; tail -n 20 "$CLUSTER_DIR/postgres.log" >&2; }
      [[ -n "$STARTED" ]] && as_pg "$BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -w -t 30 stop -m immediate >/dev/null 2>&1
      rm -rf "$CLUSTER_DIR"
    fi' EXIT
  [[ -n "$RUNAS" ]] && chown "$RUNAS:" "$CLUSTER_DIR"

  log "creating a cluster in $CLUSTER_DIR with $BINDIR/initdb"
  as_pg "$BINDIR/initdb" -D "$CLUSTER_DIR/data" -U postgres -E UTF8 --locale=C --no-sync \
      --auth-local=trust --auth-host=trust >"$CLUSTER_DIR/initdb.log" 2>&1 \
    || { cat "$CLUSTER_DIR/initdb.log" >&2; die "initdb failed"; }
  # Loopback only; trust on the socket and on 127.0.0.1 / ::1 (the server listens on nothing else).
  cat > "$CLUSTER_DIR/data/pg_hba.conf" <<'EOF'
local all all               trust
host  all all 127.0.0.1/32  trust
host  all all ::1/128       trust
EOF

  local attempt
  for attempt in 1 2 3; do
    PORT="$(free_port)" || die "found no free TCP port on 127.0.0.1"
    cat >> "$CLUSTER_DIR/data/postgresql.conf" <<EOF

# --- throwaway test cluster (.ci/postgres.sh); a later 'port' line wins over an earlier one
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$CLUSTER_DIR'
EOF
    if [ "$FSYNC" = off ]; then
      printf 'fsync = off\nfull_page_writes = off\n' >> "$CLUSTER_DIR/data/postgresql.conf"
    else
      # Benchmarks read the log for every lock wait of 100 ms or more (bench/sweep.py: did the sweep make ingest wait?)
      printf 'log_lock_waits = on\ndeadlock_timeout = 100ms\n' >> "$CLUSTER_DIR/data/postgresql.conf"
    fi
    log "starting it on 127.0.0.1:$PORT"
    if as_pg "$BINDIR/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/postgres.log" -w -t 60 start >&2; then
      STARTED=yes
      break
    fi
    log "pg_ctl start failed on port $PORT (attempt $attempt of 3)"
    (( attempt < 3 )) || die "pg_ctl start failed"
  done

  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres >&2 <<'EOF' \
    || die "creating role and database mcpd failed"
CREATE ROLE mcpd LOGIN PASSWORD 'mcpd';
CREATE DATABASE mcpd OWNER mcpd;
EOF
  psql -X -q -A -t "postgres://mcpd:mcpd@127.0.0.1:$PORT/mcpd" -c 'select 1' >/dev/null \
    || die "cannot connect as mcpd to the new cluster"

  write_env
  log "ready: MCPD_TEST_POSTGRES_URL=postgres://mcpd:mcpd@127.0.0.1:$PORT/mcpd (data $CLUSTER_DIR/data, log $CLUSTER_DIR/postgres.log)"
}

cmd_stop() {
  local envfile="${1:-}"
  if [[ -n "$envfile" ]]; then
    [[ -f "$envfile" ]] || die "no such file: $envfile"
    # shellcheck disable=SC1090
    source "$envfile"
  fi
  local data="${MCPD_TEST_PGDATA:-}"
  [[ -n "$data" ]] || die "which cluster? give its env file, or set MCPD_TEST_PGDATA"
  CLUSTER_DIR="${data%/data}"
  RUNAS="${MCPD_TEST_PG_RUNAS:-}"
  [[ "$CLUSTER_DIR" == /tmp/mcpd-pg.* ]] || die "$CLUSTER_DIR is not a cluster directory of this script"
  if [[ -d "$data" ]]; then
    if as_pg "$MCPD_TEST_PG_CTL" -D "$data" status >/dev/null 2>&1; then
      as_pg "$MCPD_TEST_PG_CTL" -D "$data" -w -t 60 stop -m fast >&2 \
        || as_pg "$MCPD_TEST_PG_CTL" -D "$data" -w -t 30 stop -m immediate >&2 \
        || die "could not stop the server in $data"
    fi
  fi
  rm -rf "$CLUSTER_DIR"
  log "stopped and removed the cluster in $CLUSTER_DIR"
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: source .ci/postgres.sh | eval \"\$(bash .ci/postgres.sh)\" | bash .ci/postgres.sh stop [ENVFILE]" ;;
esac
