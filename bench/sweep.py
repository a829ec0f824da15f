#!/usr/bin/env python3
"""The collector's retention sweep under ingest: how long ingest waits while the lease holder forgets expired keys.

For each store (SQLite file, PostgreSQL), a store whose schema `mcpd serve` made is seeded with --keys idempotency
keys first seen in the second after 2020-01-01T00:00Z, straight with SQL (Python's sqlite3; psql and
generate_series), keys and body hashes random hex as a relay's `relay-<sha256>` keys are (no batches rows: the key
sweep does not read them). PostgreSQL's rows go in in the order they were first seen, as its table fills under ingest
(a sweep's deletes then touch the table's pages in order; the key index is in random order either way); SQLite keeps
its rows in key order whatever the order they came in. Then, per run, each phase on a freshly seeded store (SQLite: a copy
of the seeded file; PostgreSQL: the tables emptied and seeded again, VACUUM ANALYZE, CHECKPOINT), the sweep first:
  baseline  `mcpd serve --dedup-window 3660d --lease-pass-seconds 1` (bin/mcpd as shipped): nothing expires, every
            pass finds no key to forget. Ingest load from the moment /readyz answers; measured after --warmup seconds
            of it, for as long as the same run's sweep took (or --baseline-seconds): a store's own stalls (a
            checkpoint, the disk's writeback) come every few minutes, so a shorter window would miss the ones a sweep's
            window of minutes catches, and credit them to the sweep
  sweep     `mcpd serve --dedup-window W --lease-pass-seconds 1`, the same load from the moment /readyz answers, until
            /collector/status (read every 100 ms) and the log's `upkeep sweep:` lines have accounted for every seeded
            key. W is chosen so that the seeded keys expire --warmup seconds after the collector answers (about
            seven years, in seconds; on SQLite, which forgets keys a whole minute at a time, so that the minute they
            were seen in expires then): the sweep starts under a load that has run that long, on a JVM that has
            compiled the ingest path, as a sweep does on a running collector. --warmup 0 gives --dedup-window 1m
            instead: the first pass, as the collector starts, finds every key expired (a restart with a shorter
            window), and both phases are measured from the first request on a cold JVM.
A sweep may take more than one pass (keys that expire while one runs are the next one's; a pass renews the lease
as it goes, and logs `lease lost` if it loses it all the same): the sweep window runs from the start of the first pass
that forgot keys to the end of the last (/collector/status's `at` and `tookMillis`, and the log's lines).
The load: --connections keep-alive connections (default 16), each posting a 1 KiB native batch with its own random
Idempotency-Key on a fixed schedule (together --rate requests/s: moderate, well under the store's saturating rate,
so latency shows waiting on the store rather than queueing), each request timed from its send to its answer. A
phase's figures count the requests in flight at any moment of its window: achieved rate (answers in the window per
second), latency p50 / p99 / p99.9 / max, and the longest interval in which no request was answered (max_gap_ms:
how long ingest was blocked at a time), and when the five slowest were sent. On PostgreSQL, the lock waits the server
logged in the window (log_lock_waits, deadlock_timeout: 100 ms on a benchmark cluster of .ci/postgres.sh), by what was
waited for (--pg-log, from $MCPD_TEST_PG_LOG). Each result is one JSON line appended to --out (kind "sweep").

The PostgreSQL database given with --pg is emptied (its tables truncated) before every phase: use a throwaway one,
e.g. `eval "$(MCPD_PG_DURABLE=1 bash .ci/postgres.sh)"` and --pg "$MCPD_TEST_POSTGRES_URL". Its fsync setting is
recorded in the rows (pg_fsync): .ci/postgres.sh keeps fsync on only with MCPD_PG_DURABLE=1 (bench/run.sh sets it).

    bench/sweep.py --jar target/mcpd.jar --stores sqlite,postgres --pg "$MCPD_TEST_POSTGRES_URL" --runs 3
"""
import argparse
import asyncio
import calendar
import gc
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_stores import PostgresStore, SqliteStore  # noqa: E402
from wan import Processes, free_port, get_json, mcpd, record, wait_http  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE_WINDOW = "3660d"  # the longest --dedup-window: back to 2016, so no seeded key expires
STARTUP_S = 3  # what launch to /readyz is allowed when a window is chosen to expire the keys during the load
BODY_HEAD, BODY_TAIL = '{"events":[{"bench":true,"pad":"', '"}]}'
BODY = (BODY_HEAD + "x" * (1024 - len(BODY_HEAD) - len(BODY_TAIL)) + BODY_TAIL).encode()


# --- the load --------------------------------------------------------------------------------------------------------

class Load:
    """`connections` keep-alive connections posting on a fixed schedule (rate requests/s in all); each request's send
    and answer times (time.time()) are kept."""

    def __init__(self, port, connections, rate):
        self.port, self.connections, self.rate = port, connections, rate
        self.samples = []  # (sent, answered, status)
        self.errors = 0
        self.stop = False
        self.started = None

    async def connection(self, i, first):
        interval = self.connections / self.rate
        due = first + i * interval / self.connections  # the connections' requests interleave evenly
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = ("POST /v1/ingest HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\nIdempotency-Key: " % (self.port, len(BODY)))
        loop = asyncio.get_running_loop()
        try:
            while not self.stop:
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                request = (head + "relay-" + uuid.uuid4().hex + "\r\n\r\n").encode() + BODY
                sent = time.time()
                writer.write(request)
                answer = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", answer)
                if length:
                    await reader.readexactly(int(length.group(1)))
                self.samples.append((sent, time.time(), int(answer[9:12])))
                due += interval
        except (OSError, asyncio.IncompleteReadError):
            self.errors += 1
        finally:
            writer.close()

    async def run(self, until):
        """Runs until `until()` (a coroutine function, asked every 100 ms) returns true."""
        loop = asyncio.get_running_loop()
        self.started = time.time()
        first = loop.time() + 0.005
        tasks = [asyncio.create_task(self.connection(i, first)) for i in range(self.connections)]
        while not await until():
            await asyncio.sleep(0.1)
        self.stop = True
        await asyncio.wait(tasks, timeout=10)


async def status(port):
    """GET /collector/status without blocking the loop the load runs on."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /collector/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = await reader.read()
    writer.close()
    return json.loads(answer.split(b"\r\n\r\n", 1)[1])


def summary(samples, start, end):
    """The requests in flight at any moment of [start, end]: achieved rate, latency percentiles, and the longest
    time in which none was answered."""
    inside = sorted((s for s in samples if s[1] >= start and s[0] <= end), key=lambda s: s[1])
    if not inside:
        return {"requests": 0}
    latencies = sorted((s[1] - s[0]) * 1000 for s in inside)

    def pct(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))]
    answered = [s[1] for s in inside if start <= s[1] <= end]
    begin = max(start, min(s[0] for s in samples))  # the load may have started after the sweep did
    marks = [begin] + answered + [end]
    gap = max(b - a for a, b in zip(marks, marks[1:]))
    return {"requests": len(inside), "seconds": round(end - start, 3),
            "rate": round(len(answered) / max(end - start, 1e-9), 1),
            "p50_ms": round(pct(50), 3), "p99_ms": round(pct(99), 3), "p999_ms": round(pct(99.9), 3),
            "max_ms": round(latencies[-1], 3), "max_gap_ms": round(gap * 1000, 3),
            "non2xx": sum(1 for s in inside if s[2] // 100 != 2),
            # when the five slowest were sent (UTC), to set beside the store's log (checkpoints, autovacuum)
            "slowest": [[time.strftime("%H:%M:%S", time.gmtime(s[0])) + ".%03d" % int(s[0] % 1 * 1000),
                         round((s[1] - s[0]) * 1000, 1)]
                        for s in sorted(inside, key=lambda s: s[0] - s[1])[:5]]}


def iso_seconds(text):
    """An Instant's text (2026-12-04T01:38:56.052372503Z) as seconds since the epoch."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + (fraction or "0"))


LOGGED = re.compile(r"^(\S+) INFO .*upkeep sweep: (\d+) idempotency keys .* in (\d+) ms")


def logged_sweeps(log):
    """The `upkeep sweep:` lines of the collector's log: (end, keys, took ms) each."""
    sweeps = []
    with open(log, errors="replace") as f:
        for line in f:
            m = LOGGED.match(line)
            if m:
                sweeps.append((iso_seconds(m.group(1)), int(m.group(2)), int(m.group(3))))
    return sweeps


# --- one phase -------------------------------------------------------------------------------------------------------

def serve(procs, work, args, store, port, window):
    return procs.start("collector", mcpd(args.jar) + [
        "serve", "--listen", "127.0.0.1:%d" % port, "--data", store.data, "--dedup-window", window,
        "--lease-pass-seconds", "1"], env={"MCPD_JAVA_OPTS": args.java_opts})


async def wait_ready(port, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = await reader.read()
            writer.close()
            if answer.startswith(b"HTTP/1.1 200"):
                return
        except OSError:
            pass
        await asyncio.sleep(0.01)
    raise RuntimeError("the collector did not answer /readyz on port %d" % port)


def sweep_window(args, store):
    """--dedup-window for the sweep phase. With no warm-up, the shortest (1m): the first pass, as the collector starts,
    finds every seeded key expired. With a warm-up, a window (in seconds, about seven years) that the seeded keys
    outlive by --warmup seconds after the collector answers (on SQLite, which forgets keys a whole minute at a time,
    the minute they were seen in): the sweep then starts under a load that has run that long, on a JVM that has
    compiled the ingest path."""
    if not args.warmup:
        return "1m"
    return "%ds" % (time.time() + STARTUP_S + args.warmup - store.forgettable_from_ms / 1000)


def phase(args, procs, work, store, phase_name, run, baseline_seconds=None):
    """One phase on a freshly seeded store; its row. A baseline is measured over baseline_seconds after the
    warm-up."""
    store.reset()
    port = free_port()
    log = os.path.join(work, "collector.log")
    open(log, "w").close()
    window = BASELINE_WINDOW if phase_name == "baseline" else sweep_window(args, store)
    launched = time.time()
    collector = serve(procs, work, args, store, port, window)
    load = Load(port, args.connections, args.rate)
    passes = {}  # lastSweep "at" -> (keysForgotten, tookMillis), as /collector/status showed them
    ready = []

    async def main():
        await wait_ready(port)
        ready.append(time.time())
        deadline = time.time() + (args.warmup + baseline_seconds if phase_name == "baseline" else args.timeout)

        async def done():
            if collector.poll() is not None:
                raise RuntimeError("the collector stopped; see " + log)
            if phase_name == "sweep":
                last = (await status(port)).get("lastSweep")
                if last:
                    passes[last["at"]] = (last["keysForgotten"], last["tookMillis"])
                forgotten = max(sum(k for k, _ in passes.values()), sum(s[1] for s in logged_sweeps(log)))
                if forgotten >= args.keys:
                    return True
                if time.time() > deadline:
                    raise RuntimeError("the sweep had not forgotten %d keys within %d s" % (args.keys, args.timeout))
            return time.time() >= deadline
        gc.disable()
        try:
            await load.run(done)
        finally:
            gc.enable()
    asyncio.run(main())
    procs.stop(collector)
    row = {"kind": "sweep", "store": store.name, "phase": phase_name, "run": run, "keys": args.keys,
           "connections": args.connections, "target_rate": args.rate, "warmup_s": args.warmup,
           "dedup_window": window, "lease_pass_s": 1, "ready_ms": round((ready[0] - launched) * 1000),
           "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), **store.facts()}
    if phase_name == "baseline":
        # After the warm-up, as in the sweep phase: the JVM is as fresh, or as warm, in both.
        start = load.started + args.warmup
        row.update(summary(load.samples, start, start + baseline_seconds))
        row.update(store.lock_waits(start, start + baseline_seconds))
    else:
        sweeps = [s for s in logged_sweeps(log) if s[1] > 0]
        starts = [iso_seconds(at) - took / 1000 for at, (keys, took) in passes.items() if keys > 0]
        ends = [iso_seconds(at) for at, (keys, _) in passes.items() if keys > 0]
        start, end = min(starts + [s[0] - s[2] / 1000 for s in sweeps]), max(ends + [s[0] for s in sweeps])
        row.update(summary(load.samples, start, end))
        row.update(store.lock_waits(start, end))
        with open(log, errors="replace") as f:
            lost = sum(1 for line in f if "lease lost" in line)
        row.update({"sweep_ms": round((end - start) * 1000), "sweep_passes": len(sweeps),
                    "sweep_work_ms": sum(s[2] for s in sweeps), "keys_forgotten": sum(s[1] for s in sweeps),
                    "pass_keys": [s[1] for s in sweeps], "pass_ms": [s[2] for s in sweeps],
                    "keys_left": store.expired_left(), "lease_lost_lines": lost,
                    # > 0: the sweep began under load, that many ms after it started; < 0: before the load
                    "sweep_began_after_load_ms": round((start - load.started) * 1000),
                    "load_covered_ms": round((end - max(start, load.started)) * 1000)})
    row["load_errors"] = load.errors
    record(args.out, row)
    shutil.copyfile(log, os.path.join(work, "collector-%s-%s-%d.log" % (store.name, phase_name, run)))
    return row


def make_schema(args, procs, work):
    """Starts mcpd serve on a store once, so that its schema exists, and stops it."""
    def make(data):
        port = free_port()
        collector = procs.start("schema", mcpd(args.jar) + ["serve", "--listen", "127.0.0.1:%d" % port,
                                                             "--data", data])
        wait_http(port, "/readyz")
        procs.stop(collector)
    return make


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--pg", default=os.environ.get("MCPD_BENCH_PG", ""),
                        help="postgres://… of a throwaway database: its tables are emptied")
    parser.add_argument("--pg-log", default=os.environ.get("MCPD_TEST_PG_LOG", ""),
                        help="the PostgreSQL server's log, for its lock waits (.ci/postgres.sh exports it)")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rate", type=float, default=1000, help="requests/s of all connections together")
    parser.add_argument("--warmup", type=int, default=15,
                        help="seconds of load before the sweep begins (and before the baseline is measured); 0: the"
                             " sweep begins as the collector starts, --dedup-window 1m")
    parser.add_argument("--baseline-seconds", type=float, default=0,
                        help="how long the baseline is measured; 0 (the default): as long as the sweep of the same"
                             " run took, so that both phases' worst moments come from windows of one length")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds the sweep may take")
    parser.add_argument("--java-opts", default="", help="MCPD_JAVA_OPTS for the collector")
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    for name in args.stores.split(","):
        if name == "postgres" and not args.pg:
            parser.error("--stores postgres needs --pg URL (or MCPD_BENCH_PG)")
        work = tempfile.mkdtemp(prefix="mcpd-sweep.", dir=os.environ.get("MCPD_BENCH_DIR", "/var/tmp"))
        procs = Processes(work)
        try:
            store = SqliteStore(work) if name == "sqlite" else PostgresStore(args.pg, args.pg_log)
            store.create(make_schema(args, procs, work))
            started = time.time()
            store.seed(args.keys)
            print("sweep: %s seeded with %d keys in %.0f s" % (name, args.keys, time.time() - started),
                  file=sys.stderr)
            for run in range(1, args.runs + 1):
                sweep = phase(args, procs, work, store, "sweep", run)
                phase(args, procs, work, store, "baseline", run,
                      args.baseline_seconds or sweep["sweep_ms"] / 1000)
        finally:
            procs.stop_all()
            if os.environ.get("MCPD_BENCH_KEEP"):
                print("sweep: kept " + work, file=sys.stderr)
            else:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
