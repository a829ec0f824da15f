#!/usr/bin/env python3
"""Delivery across a long link: a relay ships to an upstream through bench/delay_proxy.py at several round trips.

For each RTT and upstream, one fresh relay (bin/mcpd as shipped, default options) and one fresh upstream, and:
  archive    32 senders post 1 KiB requests (each its own key) for a few seconds, as fast as the relay takes them;
             time from the first send until the upstream has every one the relay accepted
  drain      a backlog of M entries waiting while the link is down; time from the first delivered entry until the
             last (the relay's probe ends its wait within 5 s of the link's return). With --warm-relay S the relay
             first delivers S seconds of load (both JVMs compile the delivery path, as a relay that was delivering
             before its link broke has), then the senders post the backlog while the link is down; without it, a
             fresh relay starts on a backlog bench/FillSpool.java wrote
  sustained  full load for N seconds with delivery running: entries accepted and delivered in that time, the
             spool's size before and after, the relay's peak resident size
  trickle    300 requests one after another from one sender, each answered before the next: what crosses the link
             when every entry waits alone
Upstreams: `serve` (mcpd serve on SQLite), `serve-pg` (mcpd serve on PostgreSQL, --pg URL), `nginx` (return 200:
one request per entry, no batches), `otlp` (bench/otlp_upstream.py, an OTLP/HTTP receiver that answers GET with
405 as a Collector does and decodes every export to count its spans; the senders post 1 KiB protobuf trace exports
to /v1/traces, so the relay merges them), `otlp-json` (the same, OTLP's JSON encoding), `otlp-alone` (protobuf,
the relay told --batch-max-entries 1: merging off), `otlp-metrics` (1 KiB
protobuf metrics exports to /v1/metrics: an ordered path, so every sender's entries are one ordered stream). Every run but trickle and a drain without --warm-relay warms both JVMs up first. Each row also
gives the bytes that crossed the link towards the upstream (counted by the delay proxy) against the bodies of the
entries delivered, and the upstream's requests per delivered entry. Each result is one JSON line appended to --out.

    bench/wan.py --rtt 0,20,80,200 --upstreams serve,nginx,otlp --backlog 100000
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


def wait_http(port, path="/readyz", timeout=60):
    """Until PATH answers below 500 — or, for an mcpd's /readyz, answers anything but "starting" (its routes serve;
    /healthz answers 200 a moment before they are up)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            if response.status < 500 or (path == "/readyz" and not body.startswith(b"starting")):
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


def protobuf_field(number, wire, payload):
    def varint(value):
        out = bytearray()
        while True:
            b = value & 0x7F
            value >>= 7
            out.append(b | (0x80 if value else 0))
            if not value:
                return bytes(out)
    key = varint(number << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 1:
        return key + payload.to_bytes(8, "little")
    data = payload.encode() if isinstance(payload, str) else payload
    return key + varint(len(data)) + data


def otlp_trace_export(path, encoding):
    """A trace export of about 1 KiB, as an SDK sends it — one resource, one scope, one server span with the
    attributes of an HTTP request, ids and values random so it compresses as real telemetry does — written to path
    in `encoding` (protobuf or json, OTLP's JSON mapping); returns its size."""
    ids = os.urandom(24)
    resource = [("service.name", "orders"), ("service.version", "4.2.1"), ("host.name", "orders-" + os.urandom(4).hex()),
                ("cloud.region", "eu-west-1"), ("k8s.pod.name", "orders-7d9f8b6c4-" + os.urandom(3).hex()),
                ("telemetry.sdk.language", "java"), ("telemetry.sdk.version", "1.56.0")]
    span = [("http.request.method", "GET"), ("url.path", "/api/orders/" + os.urandom(8).hex()),
            ("server.address", "orders.eu-west-1.internal"), ("http.response.status_code", "200"),
            ("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) bench/" + os.urandom(4).hex()),
            ("client.address", "10.%d.%d.%d" % tuple(os.urandom(3))), ("enduser.id", os.urandom(16).hex()),
            ("session.id", os.urandom(16).hex()), ("http.request.header.x-request-id", os.urandom(16).hex())]
    encode = otlp_json if encoding == "json" else otlp_protobuf
    body = encode(ids, resource, span)
    pad = 1024 - len(body) - 40
    if pad > 0:  # one more attribute of random hex brings it to about 1 KiB
        body = encode(ids, resource, span + [("app.note", os.urandom(pad // 2).hex())])
    with open(path, "wb") as f:
        f.write(body)
    return len(body)


def otlp_metrics_export(path):
    """A metrics export of about 1 KiB, as an SDK's periodic reader sends it: one resource, one scope, one cumulative
    counter (http.server.request.count) with data points per route and status, values random; posted to /v1/metrics,
    an ordered path, so the entries of every sender are one ordered stream. Written to path; returns its size."""
    resource = [("service.name", "orders"), ("host.name", "orders-" + os.urandom(4).hex()),
                ("cloud.region", "eu-west-1"), ("telemetry.sdk.language", "java")]

    def attributes(number, pairs):
        return b"".join(protobuf_field(number, 2, protobuf_field(1, 2, k) + protobuf_field(2, 2, protobuf_field(1, 2, v)))
                        for k, v in pairs)
    points = b""
    while len(points) < 760:
        route = [("http.route", "/api/orders/" + os.urandom(3).hex()), ("http.response.status_code", "200"),
                 ("http.request.method", "GET")]
        points += protobuf_field(1, 2, attributes(7, route) + protobuf_field(2, 1, START) + protobuf_field(3, 1, END)
                                 + protobuf_field(6, 1, int.from_bytes(os.urandom(3), "little")))
    counter = protobuf_field(1, 2, "http.server.request.count") + protobuf_field(3, 2, "{request}") \
        + protobuf_field(7, 2, points + protobuf_field(2, 0, 2) + protobuf_field(3, 0, 1))
    scope = protobuf_field(1, 2, protobuf_field(1, 2, SCOPE_NAME)) + protobuf_field(2, 2, counter)
    body = protobuf_field(1, 2, protobuf_field(1, 2, attributes(1, resource)) + protobuf_field(2, 2, scope))
    with open(path, "wb") as f:
        f.write(body)
    return len(body)


SPAN_NAME, SCOPE_NAME, START, END = "GET /api/orders/{id}", "io.opentelemetry.tomcat-10.0", 1_764_000_000_000_000_000, \
    1_764_000_000_042_000_000


def otlp_protobuf(ids, resource, span):
    def attributes(number, pairs):
        return b"".join(protobuf_field(number, 2, protobuf_field(1, 2, k) + protobuf_field(2, 2, protobuf_field(1, 2, v)))
                        for k, v in pairs)
    message = (protobuf_field(1, 2, ids[:16]) + protobuf_field(2, 2, ids[16:]) + protobuf_field(5, 2, SPAN_NAME)
               + protobuf_field(6, 0, 2) + protobuf_field(7, 1, START) + protobuf_field(8, 1, END)
               + attributes(9, span))
    scope = protobuf_field(1, 2, protobuf_field(1, 2, SCOPE_NAME)) + protobuf_field(2, 2, message)
    return protobuf_field(1, 2, protobuf_field(1, 2, attributes(1, resource)) + protobuf_field(2, 2, scope))


def otlp_json(ids, resource, span):
    def attributes(pairs):
        return [{"key": k, "value": {"stringValue": v}} for k, v in pairs]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attributes(resource)}, "scopeSpans": [{
        "scope": {"name": SCOPE_NAME}, "spans": [{
            "traceId": ids[:16].hex(), "spanId": ids[16:].hex(), "name": SPAN_NAME, "kind": 2,
            "startTimeUnixNano": str(START), "endTimeUnixNano": str(END), "attributes": attributes(span)}]}]}]},
        separators=(",", ":")).encode()


# The OTLP upstreams: how their senders encode, and what the relay is told.
OTLP_KINDS = {"otlp": ("protobuf", []), "otlp-json": ("json", []),
              "otlp-alone": ("protobuf", ["--batch-max-entries", "1"]), "otlp-metrics": ("metrics", [])}


class Upstream:
    """What the relay delivers to, and how many entries it has taken."""

    def __init__(self, kind, procs, work, jar, pg, jvm):
        self.kind, self.procs, self.work = kind, procs, work
        self.port = free_port()
        if kind in OTLP_KINDS:
            self.process = procs.start("otlp", [sys.executable, os.path.join(HERE, "otlp_upstream.py"),
                                                "--listen", "127.0.0.1:%d" % self.port])
        elif kind == "nginx":
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
        wait_http(self.port, self.health_path())
        self.base = self.taken()

    def health_path(self):
        return "/count" if self.kind in OTLP_KINDS else {"nginx": "/"}.get(self.kind, "/readyz")

    def taken(self):
        if self.kind in OTLP_KINDS:
            return get_json(self.port, "/count")["items"]
        if self.kind == "nginx":
            with open(self.access, "rb") as f:
                return sum(1 for _ in f)
        # The collector's own counters of what it archived (a copy seen before counts too: PostgreSQL outlives one
        # run), not /v1/stats: that sums the whole archive, a scan of every row at each look, which cost the store
        # more than the drain being measured.
        return sum(metric_values(self.port, ("mcpd_ingest_accepted_total", "mcpd_ingest_duplicate_total")))


def send(port, seconds, connections, run, otlp_body=None):
    """1 KiB native batches (or, with otlp_body, that OTLP trace export to /v1/traces), each its own key, from
    `connections` senders for `seconds` (wrk, bench/post.lua); returns how many the relay accepted."""
    path = otlp_path(otlp_body) if otlp_body else "/v1/ingest"
    subprocess.run(["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds, "-s", os.path.join(HERE, "post.lua"),
                    "http://127.0.0.1:%d%s" % (port, path)], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "UNIQUE_KEYS": "1", "RUN_ID": run, "BODY_FILE": otlp_body or "",
                        "BODY_TYPE": otlp_type(otlp_body)})
    return accepted(port)


def warm_collector(port, seconds, run):
    """Posts straight to mcpd serve for `seconds` (64 senders, each request its own key), as the collector's own
    per-request runs are warmed: a collector waiting for its relays has been running, its hot paths compiled, where
    a JVM started for the drain would compile them during it."""
    subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % seconds, "-s", os.path.join(HERE, "post.lua"),
                    "http://127.0.0.1:%d/v1/ingest" % port], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "UNIQUE_KEYS": "1", "RUN_ID": run, "BODY_FILE": "", "BODY_TYPE": ""})


def otlp_path(body_file):
    """Where an export goes: a metrics export (metrics.pb) to /v1/metrics, an ordered path; a trace export to
    /v1/traces."""
    return "/v1/metrics" if os.path.basename(body_file).startswith("metrics") else "/v1/traces"


def otlp_type(body_file):
    return "application/json" if body_file and body_file.endswith(".json") else "application/x-protobuf"


def send_one_by_one(port, count, run, otlp_body=None):
    """`count` requests from one sender, each answered before the next; returns the body size."""
    if otlp_body:
        with open(otlp_body, "rb") as f:
            body, path, kind = f.read(), otlp_path(otlp_body), otlp_type(otlp_body)
    else:
        head, tail = '{"events":[{"bench":true,"pad":"', '"}]}'
        body, path, kind = (head + "x" * (1024 - len(head) - len(tail)) + tail).encode(), "/v1/ingest", \
            "application/json"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for i in range(count):
        conn.request("POST", path, body, {"Content-Type": kind, "Idempotency-Key": "%s-%d" % (run, i)})
        answer = conn.getresponse()
        answer.read()
        if answer.status // 100 != 2:
            raise RuntimeError("the relay answered %d" % answer.status)
    return len(body)


def wire_bytes(count_file):
    try:
        with open(count_file) as f:
            return int(f.read() or 0)
    except OSError:
        return 0


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


def fill_spool(work, jar, count, run, otlp_body=None):
    spool = os.path.join(work, "relay", "relay.spool", "relay")
    os.makedirs(spool, exist_ok=True)
    subprocess.run(["java", "-cp", jar, os.path.join(HERE, "FillSpool.java"), spool, str(count), run]
                   + ([otlp_body] if otlp_body else []), check=True, stdout=subprocess.DEVNULL)


def spool_entries(port):
    return int(float(metric(port, "mcpd_relay_spool_entries")))


def metric(port, name):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    for line in conn.getresponse().read().decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    raise RuntimeError("no " + name)


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (0 once it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def cpu_by_process(relay_process, upstream_process):
    """CPU seconds so far of the relay, the upstream and, together, every PostgreSQL server process (its backends
    hold the collector's pooled connections, so they live through a drain)."""
    postgres = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/comm" % entry) as f:
                    if f.read().strip() == "postgres":
                        postgres += cpu_seconds(int(entry))
            except OSError:
                pass
    return {"relay": cpu_seconds(relay_process.pid), "upstream": cpu_seconds(upstream_process.pid),
            "postgres": round(postgres, 2)}


def metric_values(port, names):
    """Every sample of the meters named (all their label sets), from one read of /metrics."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    return [float(line.split()[-1]) for line in conn.getresponse().read().decode().splitlines()
            if line.split("{")[0].split(" ")[0] in names]


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
        encoding, told = OTLP_KINDS.get(kind, (None, []))
        otlp_body = os.path.join(work, {"json": "export.json", "metrics": "metrics.pb"}.get(encoding, "export.pb")) \
            if encoding else None
        body_bytes = (otlp_metrics_export(otlp_body) if encoding == "metrics" else otlp_trace_export(otlp_body, encoding)) \
            if otlp_body else 1024
        relay_args = args.relay_args + told
        proxy_port, relay_port = free_port(), free_port()
        count_file = os.path.join(work, "wire-bytes")
        proxy_args = [sys.executable, os.path.join(HERE, "delay_proxy.py"), "--listen", "127.0.0.1:%d" % proxy_port,
                      "--to", "127.0.0.1:%d" % upstream.port, "--one-way-ms", str(rtt / 2),
                      "--count-file", count_file]
        run = "wan-%d-%d" % (os.getpid(), time.time_ns())
        proxy = procs.start("proxy", proxy_args)
        wait_http(proxy_port, upstream.health_path())
        extra = {}
        if phase == "drain" and args.warm_relay:
            # A relay that was delivering when the link went down: both JVMs have compiled the delivery path (as the
            # collector's per-request rate is measured on a warm JVM); the backlog then builds up through ingest.
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, relay_args)
            wait_http(relay_port)
            time.sleep(6)  # one probe interval: the relay has seen what the upstream speaks
            warm = send(relay_port, args.warm_relay, args.senders, run + "-warm", otlp_body)
            wait_taken(upstream, warm, args.timeout)
            extra["relay_warmup_s"] = args.warm_relay
            procs.stop(proxy)  # the link is down: the backlog waits in the spool
            while spool_entries(relay_port) < args.backlog:  # in seconds of load: it ends a little past the size
                send(relay_port, 1, args.senders, run + "-fill-%d" % time.time_ns(), otlp_body)
            upstream.base = upstream.taken()
            count = spool_entries(relay_port)
        elif phase == "drain":
            if args.warm_upstream and kind in ("serve", "serve-pg"):
                warm_collector(upstream.port, args.warm_upstream, run + "-warm")
                upstream.base = upstream.taken()
                extra["upstream_warmup_s"] = args.warm_upstream
            procs.stop(proxy)  # the link is down: the backlog waits in the spool
            fill_spool(work, args.jar, args.backlog, run, otlp_body)
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, relay_args)
            wait_http(relay_port)
            count = spool_entries(relay_port)
        if phase == "drain":
            cpu_before = cpu_by_process(rel, upstream.process)
            proxy = procs.start("proxy", proxy_args)
            in_flight = []
            seconds = wait_taken(upstream, count, args.timeout, first_delivery=True, sample=lambda: in_flight.append(
                get_json(relay_port, "/relay/status")["upstreams"][0]["inFlight"]))
            cpu_after = cpu_by_process(rel, upstream.process)
            extra = {**extra, "max_in_flight": max(in_flight),
                     "cpu_s": {name: round(cpu_after[name] - cpu_before.get(name, 0), 2) for name in cpu_after}}
            wire = wire_bytes(count_file)
        elif phase == "trickle":
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, relay_args)
            wait_http(relay_port)
            time.sleep(6)  # one probe interval: the relay has seen what the upstream speaks
            before_wire = wire_bytes(count_file)
            started = time.time()
            count = args.trickle
            body_bytes = send_one_by_one(relay_port, count, run, otlp_body)
            seconds = wait_taken(upstream, count, args.timeout, started=started)
            time.sleep(0.6)  # the proxy writes its count twice a second
            wire = wire_bytes(count_file) - before_wire
        else:
            rel = relay(procs, work, args.jar, relay_port, proxy_port, args.jvm, relay_args)
            wait_http(relay_port)
            time.sleep(6)  # one probe interval: the relay has seen what the upstream speaks
            # Warm-up: both JVMs compile their hot paths (a first run is several times slower than the next).
            warm = send(relay_port, args.warmup_seconds, args.senders, run + "-warm", otlp_body)
            wait_taken(upstream, warm, args.timeout)
            upstream.base = upstream.taken()
            time.sleep(0.6)
            before_wire = wire_bytes(count_file)
            before = accepted(relay_port)
            if phase == "archive":
                started = time.time()
                count = send(relay_port, args.send_seconds, args.senders, run, otlp_body) - before
                seconds = wait_taken(upstream, count, args.timeout, started=started)
            else:
                entries_before = spool_entries(relay_port)
                started = time.time()
                count = send(relay_port, args.sustained_seconds, args.senders, run, otlp_body) - before
                seconds = time.time() - started
                delivered = upstream.taken() - upstream.base
                extra = {"delivered": delivered, "delivered_ratio": round(delivered / max(count, 1), 3),
                         "entries_before": entries_before, "entries_after": spool_entries(relay_port)}
            time.sleep(0.6)
            wire = wire_bytes(count_file) - before_wire
        status = get_json(relay_port, "/relay/status")["upstreams"][0]
        delivered_entries = extra.get("delivered", count)
        row = {"kind": "wan", "at": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "phase": phase,
               "upstream": kind, "rtt_ms": rtt, "entries": count,
               "seconds": round(seconds, 3), "rate": round(count / seconds, 1), "label": args.label,
               "window": status.get("window"), "protocol": status.get("protocol"),
               "requests": status.get("requests"), "relay_delivered": status.get("delivered"),
               "requests_per_entry": round(status.get("requests", 0) / max(status.get("delivered", 0), 1), 4),
               "body_bytes": body_bytes, "wire_bytes": wire,
               "wire_per_body": round(wire / max(delivered_entries * body_bytes, 1), 3),
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
    parser.add_argument("--trickle", type=int, default=300)
    parser.add_argument("--sustained-seconds", type=int, default=60)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--warm-upstream", type=int, default=20,
                        help="seconds of load straight to mcpd serve before a drain into it (0: a cold collector)")
    parser.add_argument("--warm-relay", type=int, default=0,
                        help="drain: seconds of load through the relay before the link goes down, the backlog then "
                             "posted to it (0: a fresh relay started on a backlog bench/FillSpool.java wrote)")
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
