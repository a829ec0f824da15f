#!/usr/bin/env python3
"""Prometheus remote write through the relay, to a Prometheus that refuses old samples for good.

Prometheus A (Debian's prometheus) scrapes a load of N series every second (an exporter served here: one gauge per
series, its value changing at each scrape) and remote-writes it to the relay (bin/mcpd as shipped, default options);
the relay's only upstream is Prometheus B (--web.enable-remote-write-receiver, no out-of-order window), through
bench/delay_proxy.py at --rtt. /api/v1/write is an ordered path: A's requests are one ordered stream.

  outages    20 s steady, B stopped for 20 s and started again, a backlog then the relay killed (kill -9) and
             started on it, a backlog then the relay stopped (SIGTERM) and started on it; at the end the samples of
             the load in A and in B over the whole window are compared (PromQL count_over_time on each), and what B
             refused is counted: the relay's dead letters and B's "out of order" log lines
  sustained  --seconds of load with delivery running: the relay's entries accepted and delivered in that time, the
             samples A sent and B appended, the spool before and after

Prometheus: --prometheus, or MCPD_TEST_PROMETHEUS (.ci/promtool.sh unpacks Debian's), or prometheus on the PATH.
Each result is one JSON line (kind "remote-write") appended to --out.

    bench/remote_write.py --phases outages,sustained --rtt 80 --series 10000 --runs 3
"""
import argparse
import http.server
import json
import os
import shutil
import signal
import sys
import threading
import time
import urllib.parse

import wan
from wan import free_port, get_json, metric_values, peak_rss_mib, record, scratch, until, wait_http


class Exporter:
    """A scrape target with `series` gauges (load_value{series="i"}), each a new value at every scrape."""

    def __init__(self, series):
        self.series, self.scrapes = series, 0
        exporter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                exporter.scrapes += 1
                tick = exporter.scrapes
                body = "".join('load_value{series="%d"} %d\n' % (i, tick * 7 + i % 13)
                               for i in range(exporter.series)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def prometheus_binary(given):
    for candidate in (given, os.environ.get("MCPD_TEST_PROMETHEUS"), shutil.which("prometheus")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("remote_write.py: no prometheus: give --prometheus, set MCPD_TEST_PROMETHEUS or put it on the "
                     "PATH (.ci/promtool.sh unpacks Debian's)")


class Prometheus:
    def __init__(self, binary, procs, work, name, config, flags=()):
        self.binary, self.procs, self.name, self.port = binary, procs, name, free_port()
        self.home = os.path.join(work, name)
        os.makedirs(self.home, exist_ok=True)
        with open(os.path.join(self.home, "prometheus.yml"), "w") as f:
            f.write(config)
        self.flags = list(flags)
        self.process = None
        self.start()

    def start(self):
        self.process = self.procs.start("prometheus-" + self.name, [
            self.binary, "--config.file=" + os.path.join(self.home, "prometheus.yml"),
            "--storage.tsdb.path=" + os.path.join(self.home, "data"), "--web.listen-address=127.0.0.1:%d" % self.port,
            "--log.level=info"] + self.flags)
        wait_http(self.port, "/-/ready", timeout=120)

    def stop(self):
        self.procs.stop(self.process)

    def query(self, promql, at):
        """The value of an instant query at `at` (0 for an empty result)."""
        answer = get_json(self.port, "/api/v1/query?" + urllib.parse.urlencode({"query": promql, "time": at}))
        if answer.get("status") != "success":
            raise RuntimeError("%s: %s" % (promql, answer))
        result = answer["data"]["result"]
        return float(result[0]["value"][1]) if result else 0.0

    def metric(self, name):
        return sum(metric_values(self.port, (name,)))

    def log_lines(self, text):
        with open(os.path.join(self.procs.work, "prometheus-" + self.name + ".log"), errors="replace") as f:
            return sum(1 for line in f if text in line)


class Relay:
    def __init__(self, args, procs, work, upstream_port):
        self.args, self.procs, self.port = args, procs, free_port()
        self.command = wan.mcpd(args.jar) + [
            "relay", "--listen", "127.0.0.1:%d" % self.port, "--spool-dir", os.path.join(work, "spool"),
            "--upstream", "http://127.0.0.1:%d" % upstream_port,
            "--upstream-probe", "1=http://127.0.0.1:%d/-/ready" % upstream_port]
        self.start()

    def start(self):
        self.process = self.procs.start("relay", self.command, env=self.args.jvm)
        wait_http(self.port)

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.procs.running.remove(self.process)

    def stop(self):
        self.procs.stop(self.process)

    def status(self):
        return get_json(self.port, "/relay/status")

    def entries(self):
        return self.status()["spool"]["entries"]

    def counts(self):
        """Entries accepted and delivered so far by this relay process."""
        return (sum(metric_values(self.port, ("mcpd_relay_accepted_total",))),
                sum(metric_values(self.port, ("mcpd_relay_delivered_total",))))


def remote_write_config(scraped_port, relay_port):
    return ("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: load\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
            "remote_write:\n  - url: http://127.0.0.1:%d/api/v1/write\n"
            "    queue_config:\n      min_backoff: 100ms\n      max_backoff: 1s\n      batch_send_deadline: 1s\n"
            % (scraped_port, relay_port))


RECEIVER = "global:\n  scrape_interval: 1s\nscrape_configs: []\n"


def one(args, phase, rtt, out):
    with scratch("mcpd-remote-write-") as (work, procs):
        exporter = Exporter(args.series)
        try:
            b = Prometheus(args.prometheus, procs, work, "b", RECEIVER, ["--web.enable-remote-write-receiver"])
            proxy_port = free_port()
            proxy_args = [sys.executable, os.path.join(wan.HERE, "delay_proxy.py"), "--listen",
                          "127.0.0.1:%d" % proxy_port, "--to", "127.0.0.1:%d" % b.port, "--one-way-ms", str(rtt / 2)]
            procs.start("proxy", proxy_args)
            wait_http(proxy_port, "/-/ready")
            relay = Relay(args, procs, work, proxy_port)
            started = time.time()
            a = Prometheus(args.prometheus, procs, work, "a", remote_write_config(exporter.port, relay.port))
            row = {"kind": "remote-write", "at": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "phase": phase,
                   "rtt_ms": rtt, "series": args.series}
            if phase == "outages":
                row.update(outages(args, a, b, relay, started))
            else:
                row.update(sustained(args, a, b, relay))
            row["relay_peak_rss_mib"] = peak_rss_mib(relay.process)
            record(out, row)
        finally:
            exporter.close()


def empty_spool(relay, timeout=300):
    until(lambda: relay.entries() == 0, timeout)


def outages(args, a, b, relay, started):
    time.sleep(20)  # steady state: a length of scraping
    b.stop()  # the receiver down for 20 s: the relay spools what A sends
    time.sleep(20)
    b.start()
    empty_spool(relay)
    b.stop()  # a backlog, then the relay killed with it and started again
    time.sleep(10)
    backlog_killed = relay.entries()
    relay.kill9()
    relay.start()
    b.start()
    empty_spool(relay)
    b.stop()  # a backlog, then the relay stopped (SIGTERM) and started again
    time.sleep(10)
    backlog_restarted = relay.entries()
    relay.stop()
    relay.start()
    b.start()
    end = int(time.time()) - 5
    # A has sent everything it scraped until `end`, and the relay has delivered it.
    until(lambda: min(metric_values(a.port, ("prometheus_remote_storage_queue_highest_sent_timestamp_seconds",)))
          >= end + 1, 120)
    empty_spool(relay)
    window = end - int(started) - 10  # the first scrapes, before A's remote write settled, left out
    # Every series of the load has its own label, so the counts of its series can be summed (count_over_time drops
    # the name: up, scrape_duration_seconds and the like would clash); the scrapes are counted by `up`.
    samples = 'sum(count_over_time(load_value{job="load"}[%ds]))' % window
    scrapes = 'count_over_time(up{job="load"}[%ds])' % window
    in_a = a.query(samples, end)
    in_b = 0.0
    deadline = time.time() + 30
    while time.time() < deadline:  # B's head takes what the relay delivered within a moment
        in_b = b.query(samples, end)
        if in_b >= in_a:
            break
        time.sleep(1)
    status = relay.status()
    return {"window_s": window, "samples_in_a": int(in_a), "samples_in_b": int(in_b),
            "scrapes_in_a": int(a.query(scrapes, end)), "scrapes_in_b": int(b.query(scrapes, end)),
            "missing": int(in_a - in_b), "dead_letters": status["spool"]["deadLetters"],
            "out_of_order_lines": b.log_lines("out of order") + b.log_lines("out-of-order"),
            "backlog_killed": backlog_killed, "backlog_restarted": backlog_restarted,
            "last_relay_delivered": status["upstreams"][0]["delivered"],
            "last_relay_requests": status["upstreams"][0]["requests"]}


def sustained(args, a, b, relay):
    time.sleep(args.warmup)  # both JVMs and A's remote-write shards settle
    accepted0, delivered0 = relay.counts()
    sent0 = a.metric("prometheus_remote_storage_samples_total")
    appended0 = b.metric("prometheus_tsdb_head_samples_appended_total")
    entries0 = relay.entries()
    begin = time.time()
    time.sleep(args.seconds)
    seconds = time.time() - begin
    accepted, delivered = relay.counts()
    sent = a.metric("prometheus_remote_storage_samples_total") - sent0
    appended = b.metric("prometheus_tsdb_head_samples_appended_total") - appended0
    status = relay.status()["upstreams"][0]
    return {"seconds": round(seconds, 1), "accepted": int(accepted - accepted0),
            "delivered": int(delivered - delivered0),
            "delivered_ratio": round((delivered - delivered0) / max(accepted - accepted0, 1), 3),
            "samples_sent_per_s": round(sent / seconds), "samples_appended_per_s": round(appended / seconds),
            "entries_before": entries0, "entries_after": relay.entries(),
            "requests_per_entry": round(status["requests"] / max(status["delivered"], 1), 4),
            "dead_letters": relay.status()["spool"]["deadLetters"],
            "out_of_order_lines": b.log_lines("out of order") + b.log_lines("out-of-order")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(wan.HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--prometheus", default=None)
    parser.add_argument("--phases", default="outages,sustained")
    parser.add_argument("--rtt", default="0")
    parser.add_argument("--series", type=int, default=10000, help="series A scrapes every second")
    parser.add_argument("--seconds", type=int, default=60, help="how long the sustained phase measures")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--java-opts", default="", help="MCPD_JAVA_OPTS for the relay")
    parser.add_argument("--out", default=os.path.join(wan.HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    args.prometheus = prometheus_binary(args.prometheus)
    args.jvm = {"MCPD_JAVA_OPTS": args.java_opts}
    for _ in range(args.runs):
        for phase in args.phases.split(","):
            for rtt in [float(r) for r in args.rtt.split(",")]:
                one(args, phase, rtt, out=args.out)


if __name__ == "__main__":
    main()
