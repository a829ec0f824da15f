#!/usr/bin/env python3
"""Kafka between relays and collectors, beside the relay delivering straight to `mcpd serve`.

A KRaft broker (the tests' own, dev.mcpd.testing.TestKafka, as a process of its own: one node, log on this disk) with
a topic of --partitions partitions. Each repetition:
  relay-to-kafka   `mcpd relay --upstream kafka://…/TOPIC` under 64 connections of 1 KiB native batches for
                   --seconds: entries accepted and delivered (acknowledged by the broker) per second, and the spool at
                   the end; then the same load on a relay delivering to `mcpd serve` (SQLite) over HTTP, side by side
  archive          the topic now holds what the relay delivered: one `mcpd serve --source` (new group, empty store)
                   archives it all; then two collectors started at once (another group, one new store) — the
                   two-collector rate over the one-collector rate, each in the steady state (once every partition is
                   read by a member and every member reads some, until 95% are archived), with the machine's CPU
                   busy fraction meanwhile. The
                   store: a fresh PostgreSQL schema each with --pg, else SQLite (a file per collector)
  broker-restart   a relay under 8 connections; the broker is killed (SIGKILL) for --down seconds and started again on
                   its log: the time from its restart until the relay's spool is back to what it held before the kill
Each result is one JSON line appended to --out (kind "kafka").

    kafka.py --jar target/mcpd.jar --runs 3 [--pg postgres://…]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import wan  # noqa: E402  (the process helpers of the WAN benchmark)

TOPIC = "bench"


def classpath():
    """target/test-classes (TestKafka) and the test classpath, which has the broker (kafka_2.13)."""
    listing = os.path.join(ROOT, "target", "test-classpath.txt")
    if not os.path.exists(os.path.join(ROOT, "target", "test-classes", "dev", "mcpd", "testing", "TestKafka.class")):
        subprocess.run(["mvn", "-B", "-q", "-DskipTests", "package"], cwd=ROOT, check=True)
    if not os.path.exists(listing):
        subprocess.run(["mvn", "-B", "-q", "dependency:build-classpath", "-Dmdep.includeScope=test",
                        "-Dmdep.outputFile=" + listing], cwd=ROOT, check=True)
    with open(listing) as f:
        return os.path.join(ROOT, "target", "test-classes") + ":" + f.read().strip()


class Broker:
    def __init__(self, procs, work, partitions):
        self.procs, self.dir, self.partitions = procs, os.path.join(work, "kafka"), partitions
        self.port, self.controller = wan.free_port(), wan.free_port()
        self.process = None
        self.cp = classpath()

    def start(self):
        log = os.path.join(self.procs.work, "broker.log")
        before = os.path.getsize(log) if os.path.exists(log) else 0
        self.process = self.procs.start("broker", ["java", "-Xmx768m", "-cp", self.cp, "dev.mcpd.testing.TestKafka",
                                                   self.dir, str(self.port), str(self.controller), TOPIC,
                                                   str(self.partitions)])

        def ready():
            with open(log, "rb") as f:
                f.seek(before)
                return b"ready " in f.read()
        try:
            wan.until(ready, 180)
        except RuntimeError:
            with open(log, "rb") as f:
                f.seek(before)
                sys.stderr.write(f.read().decode(errors="replace")[-4000:])
            raise

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.procs.running.remove(self.process)

    def url(self):
        return "kafka://127.0.0.1:%d/%s" % (self.port, TOPIC)


def relay(procs, work, jar, name, upstream):
    port = wan.free_port()
    process = procs.start(name, wan.mcpd(jar) + ["relay", "--listen", "127.0.0.1:%d" % port, "--data",
                                                 os.path.join(work, name, "relay.db"), "--upstream", upstream])
    wan.wait_http(port)
    return port, process


def collector(procs, work, jar, name, data, extra=()):
    port = wan.free_port()
    process = procs.start(name, wan.mcpd(jar) + ["serve", "--listen", "127.0.0.1:%d" % port, "--data", data]
                          + list(extra))
    wan.wait_http(port)
    return port, process


def labelled(port, name, label):
    """The value of a metric sample with this label (e.g. 'outcome="archived"'), 0 when absent."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    for line in conn.getresponse().read().decode().splitlines():
        if line.startswith(name + "{") and label in line:
            return float(line.split()[-1])
    return 0.0


def archived(port):
    return labelled(port, "mcpd_collector_source_records_total", 'outcome="archived"') + labelled(
        port, "mcpd_collector_source_records_total", 'outcome="duplicate"')


def delivered(port):
    return wan.metric(port, "mcpd_relay_delivered_total")


def under_load(port, seconds, connections, run):
    """(accepted, delivered) per second over `seconds` of load, and the spool's entries at its end."""
    a0, d0 = wan.accepted(port), delivered(port)
    started = time.time()
    wan.send(port, seconds, connections, run)
    took = time.time() - started
    a1, d1 = wan.accepted(port), delivered(port)
    return (a1 - a0) / took, (d1 - d0) / took, wan.spool_entries(port)


def drained(port, timeout=300):
    wan.until(lambda: wan.spool_entries(port) == 0, timeout)


def relay_phase(args, procs, work, broker, rep, out):
    port, process = relay(procs, work, args.jar, "relay-kafka-%d" % rep, broker.url())
    wan.send(port, 3, 64, "warm-k%d" % rep)  # the JIT's first compilations, not measured
    drained(port)
    acc, dlv, spool = under_load(port, args.seconds, 64, "k%d-%d" % (rep, time.time_ns()))
    drained(port)
    procs.stop(process)
    cport, cproc = collector(procs, work, args.jar, "serve-http-%d" % rep, os.path.join(work, "http-%d.db" % rep))
    hport, hproc = relay(procs, work, args.jar, "relay-http-%d" % rep, "http://127.0.0.1:%d" % cport)
    wan.send(hport, 3, 64, "warm-h%d" % rep)
    drained(hport)
    hacc, hdlv, hspool = under_load(hport, args.seconds, 64, "h%d-%d" % (rep, time.time_ns()))
    drained(hport)
    procs.stop(hproc)
    procs.stop(cproc)
    wan.record(args.out, {"kind": "kafka", "phase": "relay-to-kafka", "rep": rep, "seconds": args.seconds,
                          "partitions": args.partitions, "accepted_per_s": acc, "delivered_per_s": dlv,
                          "spool_at_end": spool, "http_accepted_per_s": hacc, "http_delivered_per_s": hdlv,
                          "http_spool_at_end": hspool, "date": time.strftime("%Y-%m-%d")})


def stores(args, work, rep, name, count):
    """`count` data locations that share one archive: a fresh PostgreSQL schema with --pg, else SQLite files."""
    if args.pg:
        schema = "mcpd_kafka_%s_%d_%d" % (name, rep, os.getpid())
        subprocess.run(["psql", "-X", "-q", args.pg, "-c", "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s"
                        % (schema, schema)], check=True, capture_output=True)
        return [args.pg + ("&" if "?" in args.pg else "?") + "currentSchema=" + schema] * count
    return [os.path.join(work, "%s-%d-%d.db" % (name, rep, i)) for i in range(count)]


def cpu_ticks():
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def assigned(port):
    """How many partitions the collector reads now (its lag gauge has one sample per partition)."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    return sum(1 for line in conn.getresponse().read().decode().splitlines()
               if line.startswith("mcpd_collector_source_lag_records{"))


def archive_rate(args, procs, work, broker, rep, records, count):
    """Records archived per second by `count` collectors of a new group on a new archive, in the steady state: from
    the first moment every partition is read by a member and every member reads some (the JVMs' start and the group's
    rebalances are not counted) until 95% of the records are archived. Also the machine's CPU busy fraction then."""
    group = "bench-%d-%d-%d" % (count, rep, time.time_ns())
    started_ports = []
    threads = []
    for i, store in enumerate(stores(args, work, rep, "c%d" % count, count)):
        # Both at once: the second joins while the first reads, as replicas do.
        threads.append(threading.Thread(target=lambda i=i, store=store: started_ports.append(collector(
            procs, work, args.jar, "source-%d-%d-%d" % (count, rep, i), store,
            ["--source", broker.url(), "--source-group", group]))))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ports = [p for p, _ in started_ports]
    steady = None
    deadline = time.time() + 600
    while time.time() < deadline:
        now, done = time.time(), sum(archived(p) for p in ports)
        shares = [assigned(p) for p in ports]
        if steady is None and sum(shares) == args.partitions and min(shares) > 0:
            steady = (now, done, cpu_ticks())
        if done >= 0.95 * records:
            break
        time.sleep(0.2)
    else:
        raise RuntimeError("not archived within 600 s")
    end, (busy1, total1) = (now, done), cpu_ticks()
    for _, process in started_ports:
        procs.stop(process)
    if steady is None or end[1] - steady[1] < records / 4:
        # A backlog this small (a --quick run) is gone before the group settles: no steady rate to speak of.
        return None, None
    busy0, total0 = steady[2]
    return (end[1] - steady[1]) / (end[0] - steady[0]), (busy1 - busy0) / max(1, total1 - total0)


def archive_phase(args, procs, work, broker, rep, out, records):
    one, one_busy = archive_rate(args, procs, work, broker, rep, records, 1)
    two, two_busy = archive_rate(args, procs, work, broker, rep, records, 2)
    if one is None or two is None:
        print("kafka: %d records archived before the group settled: no steady rate measured" % records,
              file=sys.stderr)
        return
    wan.record(args.out, {"kind": "kafka", "phase": "archive", "rep": rep, "records": records,
                          "partitions": args.partitions, "store": "postgres" if args.pg else "sqlite",
                          "pg_fsync": os.environ.get("MCPD_TEST_PG_FSYNC") if args.pg else None,
                          "one_per_s": one, "two_per_s": two, "one_cpu_busy": one_busy, "two_cpu_busy": two_busy,
                          "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d")})


def restart_phase(args, procs, work, broker, rep, out):
    port, process = relay(procs, work, args.jar, "relay-restart-%d" % rep, broker.url())
    wan.send(port, 3, 8, "warm-r%d" % rep)
    drained(port)
    load = threading.Thread(target=wan.send, args=(port, args.down + 40, 8, "r%d-%d" % (rep, time.time_ns())))
    load.start()
    time.sleep(5)
    before = wan.spool_entries(port)
    broker.kill()
    time.sleep(args.down)
    peak = wan.spool_entries(port)
    broker.start()
    restarted = time.time()
    wan.until(lambda: wan.spool_entries(port) <= max(before, 10), 120)
    recovery = time.time() - restarted
    load.join()
    drained(port)
    procs.stop(process)
    wan.record(args.out, {"kind": "kafka", "phase": "broker-restart", "rep": rep, "down_s": args.down,
                          "spool_before": before, "spool_peak": peak, "recovery_s": recovery,
                          "date": time.strftime("%Y-%m-%d")})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(ROOT, "target", "mcpd.jar"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--down", type=int, default=10)
    parser.add_argument("--pg", default=None, help="PostgreSQL URL for the two collectors' shared store")
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    for rep in range(args.runs):
        with wan.scratch("mcpd-kafka-bench-") as (work, procs):
            broker = Broker(procs, work, args.partitions)
            broker.start()
            relay_phase(args, procs, work, broker, rep, args.out)
            records = int(subprocess.run(["java", "-cp", broker.cp, os.path.join(HERE, "TopicSize.java"),
                                          "127.0.0.1:%d" % broker.port, TOPIC], check=True, capture_output=True,
                                         text=True).stdout.split("records=")[1].split()[0])
            archive_phase(args, procs, work, broker, rep, args.out, records)
            restart_phase(args, procs, work, broker, rep, args.out)


if __name__ == "__main__":
    main()
