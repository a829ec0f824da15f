#!/usr/bin/env python3
"""The cost of one request, side by side in one run, and what a large backlog costs.

  limit    the relay beside the engineering limit of its job on the JVM (bench/DurableLimit.java: bare Vert.x, the
           relay's own jar, that appends each body to one file, fdatasyncs in groups, answers 202 once its group is on
           disk and then POSTs the body upstream), both with the JVM options bin/mcpd gives the relay. Per repetition,
           four subjects one after the other, each started fresh and stopped before the next: the limit and the relay
           delivering to nginx `return 200`, then both with their upstream down (accept only). Each subject under
           wrk -t2 -c64, 1 KiB: its first --seconds window from a cold start (warm-up), the window after it, then
           after --warmup seconds of load in all two steady windows, then one paced at half its steady rate (p99
           there). Per window: accepted and delivered per second, CPU per accepted request (over the window and, when
           delivering, until the upstream has it all), the JIT's share, p50/p99; per subject: peak RSS.
  load     per repetition, one after the other on the same machine: nginx proxy_pass (a relay without durability) to
           nginx `return 200`; the relay (bin/mcpd as shipped) delivering to that same nginx, one request per entry;
           the relay with its upstream down (accept only). wrk -t2 -c64, 1 KiB POSTs. For each relay: accepted and
           delivered per second (its own metrics), CPU per accepted entry (/proc/PID/stat), the JIT compiler's share
           of that CPU (the C1/C2 compiler threads' ticks), peak resident size. Both relays are warmed up first.
  backlog  N entries filled through the spool's own append path (bench/FillSpool.java), the relay started on them
           with its upstream (mcpd serve, SQLite) down: launch to first 2xx, resident size once idle; then the upstream
           comes up and the drain is timed over a window, first from a warm page cache (the fill's pages), then, after
           the relay is stopped, `echo 3 > /proc/sys/vm/drop_caches` and the relay started again, from a cold one.
Each result is one JSON line appended to --out (kinds cost-load, cost-process, cost-backlog).

    bench/cost.py --jar target/mcpd.jar --reps 3 --seconds 10 --backlog 10000000 --drain-seconds 60 [--phases limit,load,backlog]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wan import Processes, free_port, until, wait_http  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TICKS = os.sysconf("SC_CLK_TCK")


def ticks(pid, tid=None):
    path = "/proc/%d/stat" % pid if tid is None else "/proc/%d/task/%d/stat" % (pid, tid)
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def jit_ticks(pid):
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            if re.match(r"C[12] CompilerThre", name):
                total += ticks(pid, int(tid))
        except OSError:
            pass  # a compiler thread that came and went
    return total


def status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def metrics(port):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    sums = {"accepted": 0.0, "delivered": 0.0, "entries": 0.0}
    for line in text.splitlines():
        for key, name in (("accepted", "mcpd_relay_accepted_total"), ("delivered", "mcpd_relay_delivered_total"),
                          ("entries", "mcpd_relay_spool_entries")):
            if line.startswith(name + " ") or line.startswith(name + "{"):
                sums[key] += float(line.split()[-1])
    return sums


def wrk(url, seconds, connections=64, env=None):
    out = subprocess.run(["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds, "--timeout", "5s", "-s",
                          os.path.join(HERE, "post.lua"), url], capture_output=True, text=True,
                         env={**os.environ, "BODY_BYTES": "1024", **(env or {})}).stdout
    line = next((l for l in out.splitlines() if l.startswith("{")), None)
    if line is None:
        raise RuntimeError("wrk printed no result: " + out)
    return json.loads(line)


def nginx(procs, work, name, server):
    conf = os.path.join(work, name + ".conf")
    with open(conf, "w") as f:
        f.write("worker_processes 1; daemon off; pid %s/%s.pid; error_log %s/%s-error.log warn;\n"
                "events { worker_connections 4096; }\n"
                "http { access_log off; keepalive_requests 1000000; client_max_body_size 64m;\n"
                "  client_body_buffer_size 128k; client_body_temp_path %s/%s-body;\n%s }\n"
                % (work, name, work, name, work, name, server))
    return procs.start(name, ["nginx", "-c", conf])


def mcpd():
    return [os.path.join(ROOT, "bin", "mcpd")]


def relay(procs, work, name, port, upstream_port, spool, extra=()):
    return procs.start(name, mcpd() + ["relay", "--listen", "127.0.0.1:%d" % port, "--spool-dir", spool,
                                      "--spool-max-bytes", "64GiB", "--upstream", "http://127.0.0.1:%d" % upstream_port,
                                      *extra])


def first_2xx(port, timeout=120):
    import http.client
    body = b'{"events":[{"bench":"first"}]}'

    def answered():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("POST", "/v1/ingest", body, {"Content-Type": "application/json"})
            return conn.getresponse().status // 100 == 2
        except OSError:
            return False
    return until(answered, timeout)


def limit_command(args, port, spool_file, upstream_port):
    """DurableLimit with the JVM options bin/mcpd gives the relay (without its class-data archive)."""
    command = ["java", "-XX:+UseSerialGC", "-Xms128m", "-Xmx512m", "-Xmn64m", "-Xss512k",
               "-Djdk.nio.maxCachedBufferSize=1048576", "-cp", args.jar, os.path.join(HERE, "DurableLimit.java"),
               str(port), spool_file]
    return command + ([str(upstream_port)] if upstream_port else [])


def limit_counts(port):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/count")
    accepted, delivered = conn.getresponse().read().decode().split()
    return {"accepted": float(accepted), "delivered": float(delivered)}


def measured_window(subject, process, port, counts, seconds, delivering, pace_ms=0):
    """One wrk window on a subject; with delivery, waits until the upstream has all it accepted (CPU counted till then)."""
    before, cpu0, jit0 = counts(port), ticks(process.pid), jit_ticks(process.pid)
    started = time.time()
    env = {"DELAY_MS": str(pace_ms)} if pace_ms else {}
    result = wrk("http://127.0.0.1:%d/v1/ingest" % port, seconds, env=env)
    elapsed = time.time() - started
    after, cpu1 = counts(port), ticks(process.pid)
    accepted = after["accepted"] - before["accepted"]
    drain = 0.0
    if delivering:
        drain = max(0.0, until(lambda: counts(port)["delivered"] >= counts(port)["accepted"], 120)
                    - (started + elapsed))
    cpu2, jit2 = ticks(process.pid), jit_ticks(process.pid)
    final = counts(port)
    return {"rps": result["rps"], "accepted_per_s": accepted / elapsed,
            "delivered_per_s": (after["delivered"] - before["delivered"]) / elapsed,
            "cpu_us_per_req": (cpu1 - cpu0) / TICKS * 1e6 / max(accepted, 1),
            "cpu_us_per_req_drained": (cpu2 - cpu0) / TICKS * 1e6 / max(final["accepted"] - before["accepted"], 1),
            "jit_share": (jit2 - jit0) / max(cpu2 - cpu0, 1), "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "drain_s": drain, "non2xx": result["non2xx"], "socket_errors": result["socket_errors"]}


def relay_counts(port):
    m = metrics(port)
    return {"accepted": m["accepted"], "delivered": m["delivered"]}


def limit_phase(args, procs, work, out):
    up = free_port()
    nginx(procs, work, "upstream", "server { listen 127.0.0.1:%d; location / { return 200; } }" % up)
    wait_http(up, "/")
    for rep in range(args.reps):
        for subject, mode in (("limit", "delivering"), ("relay", "delivering"), ("limit", "accepting"),
                              ("relay", "accepting")):
            port = free_port()
            upstream = up if mode == "delivering" else free_port()  # a port nobody listens on: accept only
            spool = os.path.join(work, "%s-%s-%d" % (subject, mode, rep))
            if subject == "limit":
                process = procs.start("limit", limit_command(args, port, spool, upstream if mode == "delivering"
                                                             else None))
                wait_http(port, "/count", timeout=120)
                counts = limit_counts
            else:
                process = relay(procs, work, "relay", port, upstream, spool)
                wait_http(port)
                counts = relay_counts
            delivering = mode == "delivering"
            row = {"kind": "cost-limit", "subject": subject, "mode": mode, "rep": rep}
            loaded = 0
            for window in ("first", "second"):
                out({**row, "window": window, **measured_window(subject, process, port, counts, args.seconds,
                                                                 delivering)})
                loaded += args.seconds
            if args.warmup > loaded:
                wrk("http://127.0.0.1:%d/v1/ingest" % port, args.warmup - loaded)
                if delivering:
                    until(lambda: counts(port)["delivered"] >= counts(port)["accepted"], 120)
            steady = []
            for _ in range(2):
                steady.append(measured_window(subject, process, port, counts, args.seconds, delivering))
                out({**row, "window": "steady", **steady[-1]})
            rate = sorted(w["accepted_per_s"] for w in steady)[0]
            # 64 connections, each waiting DELAY_MS after an answer: about half the steady rate (a little under it).
            pace = max(1, round(64 * 1000 / (rate / 2) - 1))  # less about a millisecond of answer at that load
            out({**row, "window": "half", "pace_ms": pace,
                 **measured_window(subject, process, port, counts, args.seconds, delivering, pace_ms=pace)})
            out({"kind": "cost-limit-process", "subject": subject, "mode": mode, "rep": rep,
                 "peak_rss_mib": status(process.pid, "VmHWM")})
            procs.stop(process)
            shutil.rmtree(spool, ignore_errors=True)
    procs.stop_all()


def load_phase(args, procs, work, out):
    up, px, r1, r0 = free_port(), free_port(), free_port(), free_port()
    nginx(procs, work, "upstream", "server { listen 127.0.0.1:%d; location / { return 200; } }" % up)
    nginx(procs, work, "proxy", "upstream u { server 127.0.0.1:%d; keepalive 128; }\n"
          "server { listen 127.0.0.1:%d; location / { proxy_pass http://u; proxy_http_version 1.1;"
          " proxy_set_header Connection \"\"; } }" % (up, px))
    delivering = relay(procs, work, "relay-delivering", r1, up, os.path.join(work, "s1"))
    accepting = relay(procs, work, "relay-accepting", r0, free_port(), os.path.join(work, "s0"))
    for port in (up, px):
        wait_http(port, "/")
    for port in (r1, r0):
        wait_http(port)
        wrk("http://127.0.0.1:%d/v1/ingest" % port, args.warmup)
    time.sleep(2)
    for rep in range(args.reps):
        proxied = wrk("http://127.0.0.1:%d/v1/ingest" % px, args.seconds)
        out({"kind": "cost-load", "subject": "nginx-proxy", "rep": rep, "rps": proxied["rps"]})
        for subject, process, port in (("relay-delivering", delivering, r1), ("relay-accepting", accepting, r0)):
            before, cpu0, jit0 = metrics(port), ticks(process.pid), jit_ticks(process.pid)
            started = time.time()
            result = wrk("http://127.0.0.1:%d/v1/ingest" % port, args.seconds)
            seconds = time.time() - started
            after, cpu1, jit1 = metrics(port), ticks(process.pid), jit_ticks(process.pid)
            accepted = after["accepted"] - before["accepted"]
            delivered = after["delivered"] - before["delivered"]
            cpu = (cpu1 - cpu0) / TICKS
            out({"kind": "cost-load", "subject": subject, "rep": rep, "rps": result["rps"],
                 "accepted_per_s": accepted / seconds, "delivered_per_s": delivered / seconds,
                 "cpu_us_per_entry": cpu * 1e6 / max(accepted, 1), "cpu_cores": cpu / seconds,
                 "jit_share": (jit1 - jit0) / max(cpu1 - cpu0, 1), "p99_ms": result["p99_ms"],
                 "non2xx": result["non2xx"], "spool_entries_after": after["entries"]})
            if subject == "relay-delivering":  # let delivery catch up before the next subject runs
                until(lambda: metrics(port)["entries"] == 0, 300)
    for subject, process in (("relay-delivering", delivering), ("relay-accepting", accepting)):
        out({"kind": "cost-process", "subject": subject, "peak_rss_mib": status(process.pid, "VmHWM")})
    procs.stop_all()


def drain_rate(port, seconds):
    """Entries delivered per second over a window that starts with the first delivered entry."""
    until(lambda: metrics(port)["delivered"] > 0, 120)
    base, started = metrics(port)["delivered"], time.time()
    now = metrics(port)
    while time.time() - started < seconds and now["entries"] > 0:
        time.sleep(0.2)
        now = metrics(port)
    return (now["delivered"] - base) / (time.time() - started)


def backlog_phase(args, procs, work, out):
    spool = os.path.join(work, "backlog")
    fill = subprocess.run(["java", "-cp", args.jar, os.path.join(HERE, "FillSpool.java"),
                           os.path.join(spool, "relay"), str(args.backlog)], capture_output=True, text=True)
    filled = json.loads(fill.stdout.strip().splitlines()[-1])
    upstream_port, port = free_port(), free_port()
    launched = time.time()
    process = relay(procs, work, "relay-backlog", port, upstream_port, spool)
    first = first_2xx(port) - launched
    time.sleep(5)
    idle_rss = status(process.pid, "VmRSS")
    collector = procs.start("collector", mcpd() + ["serve", "--listen", "127.0.0.1:%d" % upstream_port, "--data",
                                                   os.path.join(work, "collector.db")])
    warm = drain_rate(port, args.drain_seconds)
    warm_peak = status(process.pid, "VmHWM")
    procs.stop(process)
    procs.stop(collector)
    subprocess.run(["sync"])
    dropped = subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], capture_output=True).returncode == 0
    collector = procs.start("collector", mcpd() + ["serve", "--listen", "127.0.0.1:%d" % upstream_port, "--data",
                                                   os.path.join(work, "collector.db")])
    wait_http(upstream_port, "/readyz")
    process = relay(procs, work, "relay-backlog", port, upstream_port, spool)
    wait_http(port)
    cold = drain_rate(port, args.drain_seconds)
    out({"kind": "cost-backlog", "entries": args.backlog, "fill_seconds": filled["seconds"],
         "first_2xx_s": first, "idle_rss_mib": idle_rss, "drain_warm_per_s": warm, "drain_cold_per_s": cold,
         "caches_dropped": dropped, "drain_seconds": args.drain_seconds, "peak_rss_warm_mib": warm_peak,
         "peak_rss_mib": status(process.pid, "VmHWM")})
    procs.stop_all()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jar", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=40)
    parser.add_argument("--backlog", type=int, default=10_000_000)
    parser.add_argument("--drain-seconds", type=int, default=60)
    parser.add_argument("--phases", default="limit,load,backlog")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    def out(row):
        row = {**row, "at": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), file=sys.stderr)

    work = tempfile.mkdtemp(prefix="mcpd-cost.", dir=os.environ.get("MCPD_BENCH_DIR", "/var/tmp"))
    procs = Processes(work)
    try:
        if "limit" in args.phases:
            limit_phase(args, procs, work, out)
        if "load" in args.phases.split(","):
            load_phase(args, procs, work, out)
        if "backlog" in args.phases:
            backlog_phase(args, procs, work, out)
    finally:
        procs.stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
