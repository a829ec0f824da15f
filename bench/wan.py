#!/usr/bin/env python3
"""Delivery across a long link: a relay ships to an upstream through bench/delay_proxy.py at several round trips.

For each RTT and upstream, one fresh relay (bin/mcpd as shipped, default options) and one fresh upstream, and:
  archive    32 senders post 1 KiB requests (each its own key) for a few seconds, as fast as the relay takes them;
             time from the first send until the upstream has every one the relay accepted
  drain      a backlog of M entries (bench/FillSpool.java) waiting while the link is down; time from the first
             delivered entry until the last (the relay's probe ends its wait within 5 s of the link's return)
  sustained  full load for N seconds with delivery running: entries accepted and delivered in that time, the
             spool's size before and after, the relay's peak resident size
Upstreams: `serve` (mcpd serve on SQLite), `serve-pg` (mcpd serve on PostgreSQL, --pg URL), `nginx` (return 200:
one request per entry, no batches). Every run but drain warms both JVMs up first. Each result is one JSON line
appended to --out.

    bench/wan.py --rtt 0,20,80,200 --upstreams serve,nginx --backlog 100000
"""
import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(condition, timeout):
    """The time at which condition() first holds, looked at every 50 ms; an error after timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return time.time()
        time.sleep(0.05)
    raise RuntimeError("not within %d s" % timeout)


def wait_http(port, path="/healthz", timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("nothing answered on port %d" % port)


def get_json(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    return json.loads(conn.getresponse().read())


class Processes:
    def __init__(self, work):
        self.work = work
        self.running = []

    def start(self, name, args, env=None):
        log = open(os.path.join(self.work, name + ".log"), "ab")
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        self.running.append(process)
        return process

    def stop(self, process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.running.remove(process)

    def stop_all(self):
        for process in list(self.running):
            self.stop(process)


class Upstream:
    """What the relay delivers to, and how many entries it has taken."""

    def __init__(self, kind, procs, work, jar, pg, jvm):
        self.kind, self.procs, self.work = kind, procs, work
        self.port = free_port()
        if kind == "nginx":
            self.access = os.path.join(work, "nginx-access.log")
            conf = os.path.join(work, "nginx.conf")
            with open(conf, "w") as f:
                f.write("worker_processes 1; daemon off; pid %s/nginx.pid; error_log %s/nginx-error.log;\n"
                        "events { worker_connections 4096; }\n"
                        "http { access_log %s; client_body_temp_path %s/body;\n"
                        "  server { listen 127.0.0.1:%d; keepalive_requests 1000000;\n"
                        "    location / { client_max_body_size 20m; client_body_buffer_size 1m; return 200; } } }\n"
                        % (work, work, self.access, work, self.port))
            open(self.access, "w").close()
            self.process = procs.start("nginx", ["nginx", "-c", conf])
        else:
            data = pg if kind == "serve-pg" else os.path.join(work, "collector.db")
            self.process = procs.start("collector", mcpd(jar) + ["serve", "--listen", "127.0.0.1:%d" % self.port,
                                                                  "--data", data], env=jvm)
        wait_http(self.port, "/" if kind == "nginx" else "/readyz")
        self.base = self.taken()

    def taken(self):
        if self.kind == "nginx":
            with open(self.access, "rb") as f:
                return sum(1 for _ in f)
        stats = get_json(self.port, "/v1/stats")  # a copy seen before counts too: PostgreSQL outlives one run
        return stats["events"] + stats["duplicates"]


def send(port, seconds, connections, run):
    """1 KiB native batches, each its own key, from `connections` senders for `seconds` (wrk, bench/post.lua);
    returns how many the relay accepted."""
    subprocess.run(["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds, "-s", os.path.join(HERE, "post.lua"),
                    "http://127.0.0.1:%d/v1/ingest" % port], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "UNIQUE_KEYS": "1", "RUN_ID": run})
    return accepted(port)


def accepted(port):
    return int(metric(port, "mcpd_relay_accepted_total"))


def wait_taken(upstream, count, timeout, first_delivery=False, started=None, sample=None):
    """Seconds until the upstream took `count` more entries: from `started`, or from its first one (first_delivery);
    `sample` is called on each look."""
    started = started or time.time()
    first = None
    deadline = started + timeout
    while time.time() < deadline:
        if sample:
            sample()
        now = upstream.taken() - upstream.base
        if first is None and now > 0:
            first = time.time()
        if now >= count:
            return time.time() - (first if first_delivery else started)
        time.sleep(0.05)
    raise RuntimeError("upstream took %d of %d in %d s" % (upstream.taken() - upstream.base, count, timeout))


@contextlib.contextmanager
def scratch(prefix):
    """A work directory and the processes started in it; on the way out every process is stopped, the directory
    removed."""
    work = tempfile.mkdtemp(prefix=prefix)
    procs = Processes(work)
    try:
        yield work, procs
    finally:
        procs.stop_all()
        shutil.rmtree(work, ignore_errors=True)


def record(out, row):
    """One result line: printed, and appended to the results file."""
    print(json.dumps(row), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def mcpd(jar):
    """bin/mcpd as an operator runs it (its JVM options), on this jar."""
    return ["env", "MCPD_JAR=" + os.path.abspath(jar), os.path.join(HERE, "..", "bin", "mcpd")]


def relay(procs, work, jar, relay_port, upstream_port, jvm, extra):
    return procs.start("relay", mcpd(jar) + ["relay", "--listen", "127.0.0.1:%d" % relay_port,
                                             "--data", os.path.join(work, "relay", "relay.db"),
                                             "--upstream", "http://127.0.0.1:%d" % upstream_port] + extra, env=jvm)


def fill_spool(work, jar, count, run):
    spool = os.path.join(work, "relay", "relay.spool", "relay")
    os.makedirs(spool, exist_ok=True)
    subprocess.run(["java", "-cp", jar, os.path.join(HERE, "FillSpool.java"), spool, str(count), run], check=True,
                   stdout=subprocess.DEVNULL)


def spool_entries(port):
    return int(float(metric(port, "mcpd_relay_spool_entries")))


def metric(port, name):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    for line in conn.getresponse().read().decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    raise RuntimeError("no " + name)


def peak_rss_mib(process):
    """The peak resident size of the JVM bin/mcpd exec'd (the same process: exec keeps the pid)."""
    try:
        with open("/proc/%d/status" % process.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None


def one(args, kind, rtt, phase, out):
    with scratch("mcpd-wan-") as (work, procs):
        upstream = Upstream(kind, procs, work, args.jar, args.pg, args.jvm)
        proxy_port, relay_port = free_port(), free_port()
        proxy_args = [sys.executable, os.path.join(HERE, "delay_proxy.py"), "--listen", "127.0.0.1:%d" % proxy_port,
                      "--to", "127.0.0.1:%d" % upstream.port, "--one-way-ms", str(rtt / 2)]
        run = "wan-%d-%d" % (os.getpid(), time.time_ns())
        proxy = procs.start("proxy", proxy_args)
        wait_http(proxy_port, "/" if kind == "nginx" else "/readyz")
        extra = {}
        if phase == "drain":
            procs.stop(proxy)  # the link is down: the backlog waits in the spool
            fill_spool(work, args.jar, args.backlog, run)
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, args.relay_args)
            wait_http(relay_port)
            count = spool_entries(relay_port)
            proxy = procs.start("proxy", proxy_args)
            in_flight = []
            seconds = wait_taken(upstream, count, args.timeout, first_delivery=True, sample=lambda: in_flight.append(
                get_json(relay_port, "/relay/status")["upstreams"][0]["inFlight"]))
            extra = {"max_in_flight": max(in_flight)}
        else:
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, args.relay_args)
            wait_http(relay_port)
            time.sleep(6)  # one probe interval: the relay has seen what the upstream speaks
            # Warm-up: both JVMs compile their hot paths (a first run is several times slower than the next).
            warm = send(relay_port, args.warmup_seconds, args.senders, run + "-warm")
            wait_taken(upstream, warm, args.timeout)
            upstream.base = upstream.taken()
            before = accepted(relay_port)
            if phase == "archive":
                started = time.time()
                count = send(relay_port, args.send_seconds, args.senders, run) - before
                seconds = wait_taken(upstream, count, args.timeout, started=started)
            else:
                entries_before = spool_entries(relay_port)
                started = time.time()
                count = send(relay_port, args.sustained_seconds, args.senders, run) - before
                seconds = time.time() - started
                delivered = upstream.taken() - upstream.base
                extra = {"delivered": delivered, "delivered_ratio": round(delivered / max(count, 1), 3),
                         "entries_before": entries_before, "entries_after": spool_entries(relay_port)}
        status = get_json(relay_port, "/relay/status")["upstreams"][0]
        row = {"kind": "wan", "phase": phase, "upstream": kind, "rtt_ms": rtt, "entries": count,
               "seconds": round(seconds, 3), "rate": round(count / seconds, 1), "label": args.label,
               "window": status.get("window"), "protocol": status.get("protocol"),
               "requests": status.get("requests"), "relay_delivered": status.get("delivered"),
               "peak_rss_mib": peak_rss_mib(rel), **extra}
        record(out, row)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--rtt", default="0,20,80,200")
    parser.add_argument("--upstreams", default="serve,nginx")
    parser.add_argument("--phases", default="archive,drain")
    parser.add_argument("--send-seconds", type=int, default=3)
    parser.add_argument("--warmup-seconds", type=int, default=5)
    parser.add_argument("--senders", type=int, default=32)
    parser.add_argument("--backlog", type=int, default=100000)
    parser.add_argument("--sustained-seconds", type=int, default=60)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--pg", default=os.environ.get("MCPD_BENCH_PG", ""))
    parser.add_argument("--label", default="relay")
    parser.add_argument("--relay-arg", dest="relay_args", action="append", default=[])
    parser.add_argument("--java-opts", default="", help="MCPD_JAVA_OPTS for both JVMs")
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    args.jvm = {"MCPD_JAVA_OPTS": args.java_opts}
    for _ in range(args.runs):
        for kind in args.upstreams.split(","):
            for rtt in [float(r) for r in args.rtt.split(",")]:
                for phase in args.phases.split(","):
                    one(args, kind, rtt, phase, args.out)


if __name__ == "__main__":
    main()
