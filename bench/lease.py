#!/usr/bin/env python3
"""Collector replicas taking turns through the store's lease: how long after its holder dies (kill -9) or stops
cleanly (SIGTERM) another replica holds it.

Two `mcpd serve` (bin/mcpd as shipped) on one PostgreSQL (--pg URL, or $MCPD_TEST_POSTGRES_URL; a schema of their
own, dropped afterwards), each with --lease-pass-seconds P. Once exactly one holds the lease and the other has seen
it do so, each run:
  kill-9   waits a random fraction of a pass (so the kill lands anywhere between two renewals), kills the holder
           with SIGKILL and times from the kill until the other replica's GET /collector/status says held (read every
           --poll-ms); the killed one is started again and waits its turn
  sigterm  the same with SIGTERM (a clean stop releases the lease); the stopped one is started again
Throughout, a watcher reads both replicas' /collector/status one after the other every --poll-ms and notes any round
in which both said held. The replicas are started without --ingest-key, so /collector/status is open. Each row
gives the takeover in ms and in passes (takeover / P); for kill -9 also how long the dead holder's lease had left
in the store at the kill (expires_at_ms of the leases row against the clock), which is the part of the takeover
that is the lease's term rather than the survivor's reaction. Each result is one JSON line appended to --out.

    lease.py --pg postgres://mcpd:mcpd@127.0.0.1:5432/mcpd --pass-seconds 2 --runs 5
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wan  # noqa: E402  (the process helpers of the WAN benchmark)


def status(port):
    """The replica's /collector/status, or None when it does not answer (dead, starting, stopping)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        conn.request("GET", "/collector/status")
        answer = conn.getresponse()
        body = answer.read()
        if answer.status == 401:
            raise RuntimeError("/collector/status wants the ingest key: start the replicas without one")
        return json.loads(body) if answer.status == 200 else None
    except (OSError, ValueError):
        return None


def held(s):
    return bool(s and s.get("lease", {}).get("held"))


def psql(url, sql):
    return subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


class Replica:
    def __init__(self, name, port):
        self.name, self.port, self.process, self.id = name, port, None, None


class Watcher(threading.Thread):
    """Reads every live replica's status in turn, every poll_s; remembers each round in which two said held."""

    def __init__(self, replicas, poll_s):
        super().__init__(daemon=True)
        self.replicas, self.poll_s = replicas, poll_s
        self.seen = []  # rounds with two holders: [(time, [replica ids])]
        self.rounds = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            holders = [s["replica"] for s in (status(r.port) for r in list(self.replicas) if r.process) if held(s)]
            self.rounds += 1
            if len(holders) > 1:
                self.seen.append((time.time(), holders))
            self.stopping.wait(self.poll_s)

    def since(self, mark):
        return [h for t, h in self.seen if t >= mark]


def start(procs, jar, replica, data, pass_s):
    replica.process = procs.start(replica.name, wan.mcpd(jar) + [
        "serve", "--listen", "127.0.0.1:%d" % replica.port, "--data", data, "--lease-pass-seconds", str(pass_s)])
    wan.wait_http(replica.port, "/readyz", timeout=120)
    wan.until(lambda: status(replica.port) is not None, 60)
    replica.id = status(replica.port)["replica"]


def settled(replicas, timeout):
    """Waits until exactly one replica holds the lease and the other has read it as that one's; (holder, other)."""
    def one_holder():
        a, b = status(replicas[0].port), status(replicas[1].port)
        if held(a) != held(b) and a and b:
            holder, other = (a, b) if held(a) else (b, a)
            return other["lease"].get("holder") == holder["replica"]
        return False
    wan.until(one_holder, timeout)
    first = held(status(replicas[0].port))
    return (replicas[0], replicas[1]) if first else (replicas[1], replicas[0])


def takeover(other, poll_s, timeout, stopped=None):
    """Reads `other`'s status every poll_s until it says held; (the time.monotonic() of that answer, and of the moment
    `stopped` was seen to have exited if it had by then)."""
    deadline = time.monotonic() + timeout
    exited = None
    while time.monotonic() < deadline:
        if held(status(other.port)):
            return time.monotonic(), exited
        if stopped is not None and exited is None and stopped.poll() is not None:
            exited = time.monotonic()
        time.sleep(poll_s)
    raise RuntimeError("replica %s did not take the lease within %d s" % (other.id, timeout))


def one_event(args, procs, replicas, watcher, data, event, run, out):
    holder, other = settled(replicas, 10 * args.pass_seconds + 60)
    # Where between two renewals the stop lands decides how much of its term the lease has left: spread it.
    offset = random.uniform(0, args.pass_seconds)
    time.sleep(offset)
    mark_wall = time.time()
    stopped_at = time.monotonic()
    os.kill(holder.process.pid, signal.SIGKILL if event == "kill-9" else signal.SIGTERM)
    extra = {}
    if event == "kill-9":
        left = psql(args.pg, "SELECT expires_at_ms FROM %s.leases WHERE name = 'upkeep' AND holder = '%s'"
                    % (args.schema, holder.id.replace("'", "''")))
        if left:
            extra["lease_left_ms"] = int(left) - round(mark_wall * 1000)
    took_at, exited_at = takeover(other, args.poll_ms / 1000, 3 * args.pass_seconds + 60,
                                  holder.process if event == "sigterm" else None)
    ms = (took_at - stopped_at) * 1000
    if event == "sigterm":
        code = holder.process.wait(60)
        extra["exit_code"] = code
        if exited_at is not None:
            extra["holder_exited_ms"] = round((exited_at - stopped_at) * 1000)
    else:
        holder.process.wait()
    procs.running.remove(holder.process)
    holder.process = None
    two = watcher.since(mark_wall - args.pass_seconds * 3)
    wan.record(out, {"kind": "lease", "event": event, "run": run, "pass_s": args.pass_seconds,
                     "takeover_ms": round(ms), "passes": round(ms / 1000 / args.pass_seconds, 3),
                     "stop_offset_s": round(offset, 3), **extra, "two_holders_seen": bool(two),
                     "two_holders": two[:5], "poll_ms": args.poll_ms,
                     "from": holder.id, "to": other.id,
                     "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())})
    start(procs, args.jar, holder, data, args.pass_seconds)  # back, to wait its turn


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--pg", default=os.environ.get("MCPD_TEST_POSTGRES_URL"),
                        help="postgres://… (default: $MCPD_TEST_POSTGRES_URL)")
    parser.add_argument("--pass-seconds", type=int, default=2, help="--lease-pass-seconds of both replicas")
    parser.add_argument("--runs", type=int, default=5, help="runs of each event")
    parser.add_argument("--poll-ms", type=int, default=20, help="how often the status pages are read")
    parser.add_argument("--logs", help="copy the replicas' logs into this directory at the end")
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    if not args.pg:
        parser.error("no PostgreSQL: give --pg URL or set MCPD_TEST_POSTGRES_URL")
    schema = "mcpd_lease_bench_%d_%d" % (os.getpid(), time.time_ns() % 1_000_000)
    psql(args.pg, "CREATE SCHEMA " + schema)
    data = args.pg + ("&" if "?" in args.pg else "?") + "currentSchema=" + schema
    args.schema = schema
    try:
        with wan.scratch("mcpd-lease-") as (work, procs):
            replicas = [Replica("replica-a", wan.free_port()), Replica("replica-b", wan.free_port())]
            watcher = Watcher(replicas, args.poll_ms / 1000)
            try:
                start(procs, args.jar, replicas[0], data, args.pass_seconds)
                wan.until(lambda: held(status(replicas[0].port)), 10 * args.pass_seconds + 60)
                start(procs, args.jar, replicas[1], data, args.pass_seconds)
                watcher.start()
                for run in range(args.runs):
                    for event in ("kill-9", "sigterm"):
                        one_event(args, procs, replicas, watcher, data, event, run, args.out)
                print("watcher: %d rounds, %d with two holders" % (watcher.rounds, len(watcher.seen)),
                      file=sys.stderr)
            finally:
                watcher.stopping.set()
                watcher.join(5)
                if args.logs:
                    os.makedirs(args.logs, exist_ok=True)
                    for name in os.listdir(work):
                        if name.endswith(".log"):
                            shutil.copy(os.path.join(work, name), args.logs)
    finally:
        psql(args.pg, "DROP SCHEMA IF EXISTS %s CASCADE" % schema)


if __name__ == "__main__":
    main()
