#!/usr/bin/env python3
"""The delivery barrier measured: how long after the last accept GET /relay/sync answers 200, and
whether callers waiting on it slow the relay's ingest.

latency  bin/mcpd relay in front of mcpd serve, directly (RTT 0) and through bench/delay_proxy.py (RTT 80 ms):
         each sample posts a burst of BURST requests at once, then asks /relay/sync for the highest sequence
         number they were given; the time from the last accept's answer to the sync's 200. The collector's own
         count afterwards shows what the barrier cost the upstream (requests beyond the posted entries: none).
waiters  bin/mcpd relay with its upstream down: 10 s of wrk (64 connections, 1 KiB native batches) with no caller
         waiting and with 1 000 callers waiting on /relay/sync (one connection each, re-armed when answered),
         alternating.

    barrier.py --phases latency,waiters --runs 5 --out bench/report/results.jsonl
"""
import argparse
import asyncio
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wan  # noqa: E402  (the process, proxy and upstream helpers of the WAN benchmark)

BURST = 16


def post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/v1/ingest", body, {"Content-Type": "application/json"})
    answer = conn.getresponse()
    answer.read()
    if answer.status != 202:
        raise RuntimeError("POST answered %d" % answer.status)
    return int(answer.getheader("mcpd-relay-seq")), answer.getheader("mcpd-relay-id"), time.monotonic()


def sync(port, seq, relay_id, timeout="30s"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
    conn.request("GET", "/relay/sync?seq=%d&relay=%s&timeout=%s" % (seq, relay_id, timeout))
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read()), time.monotonic()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latency(args, rtt, out):
    with wan.scratch("mcpd-barrier-") as (work, procs):
        upstream = wan.Upstream("serve", procs, work, args.jar, "", {})
        proxy_port, relay_port = wan.free_port(), wan.free_port()
        target = upstream.port
        if rtt:
            procs.start("proxy", [sys.executable, os.path.join(HERE, "delay_proxy.py"), "--listen",
                                  "127.0.0.1:%d" % proxy_port, "--to", "127.0.0.1:%d" % upstream.port,
                                  "--one-way-ms", str(rtt / 2)])
            wan.wait_http(proxy_port, "/readyz")
            target = proxy_port
        wan.relay(procs, work, args.jar, relay_port, target, {}, [])
        wan.wait_http(relay_port)
        time.sleep(6)  # one probe interval: the relay has seen that the upstream takes batches
        posted = 0
        samples = []
        with ThreadPoolExecutor(BURST) as senders:
            for i in range(args.warmup + args.samples):
                bodies = ['{"events":[{"barrier":%d,"n":%d,"run":"%s"}]}' % (i, n, work) for n in range(BURST)]
                accepted = list(senders.map(lambda body: post(relay_port, body), bodies))
                posted += BURST
                seq = max(a[0] for a in accepted)
                last_accept = max(a[2] for a in accepted)
                status, body, answered = sync(relay_port, seq, accepted[0][1])
                if status != 200 or body["pending"] != 0:
                    raise RuntimeError("sync answered %d %s" % (status, body))
                if i >= args.warmup:
                    samples.append((answered - last_accept) * 1000)
        wan.wait_taken(upstream, posted, 60)
        taken = upstream.taken() - upstream.base
        row = {"kind": "barrier-latency", "rtt_ms": rtt, "burst": BURST, "samples": len(samples),
               "p50_ms": round(statistics.median(samples), 1), "p99_ms": round(percentile(samples, 99), 1),
               "max_ms": round(max(samples), 1), "posted": posted, "upstream_took": taken,
               "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
        wan.record(out, row)


class Waiters:
    """COUNT callers waiting on /relay/sync for SEQ, each on its own connection, asking again when answered."""

    def __init__(self, port, seq, relay_id, count):
        self.port, self.seq, self.relay_id, self.count = port, seq, relay_id, count
        self.loop = asyncio.new_event_loop()
        self.stop = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.main(),), daemon=True)

    async def one(self):
        request = ("GET /relay/sync?seq=%d&relay=%s&timeout=60s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                   % (self.seq, self.relay_id)).encode()
        while not self.stop.is_set():
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(request)
            await writer.drain()
            read = asyncio.ensure_future(reader.read(4096))
            stop = asyncio.ensure_future(self.stop.wait())
            await asyncio.wait([read, stop], return_when=asyncio.FIRST_COMPLETED)
            read.cancel()
            stop.cancel()
            writer.close()

    async def main(self):
        self.stop = asyncio.Event()
        await asyncio.gather(*(self.one() for _ in range(self.count)))

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 60
        while wan.get_json(self.port, "/relay/status")["sync"]["waiters"] < self.count:
            if time.time() > deadline:
                raise RuntimeError("the waiters did not all arrive")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


def waiters(args, out):
    with wan.scratch("mcpd-barrier-") as (work, procs):
        relay_port = wan.free_port()
        wan.relay(procs, work, args.jar, relay_port, wan.free_port(), {}, ["--spool-max-bytes", "64GiB"])
        wan.wait_http(relay_port)
        seq, relay_id, _ = post(relay_port, '{"events":[{"awaited":true}]}')
        subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % args.warmup_seconds, "-s", os.path.join(HERE, "post.lua"),
                        "http://127.0.0.1:%d/v1/ingest" % relay_port], check=True, stdout=subprocess.DEVNULL)
        for run in range(args.runs):
            for count in (0, 1000):
                def measure():
                    before = wan.accepted(relay_port)
                    started = time.time()
                    subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % args.seconds, "-s",
                                    os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d/v1/ingest" % relay_port],
                                   check=True, stdout=subprocess.DEVNULL)
                    return (wan.accepted(relay_port) - before) / (time.time() - started)
                if count:
                    with Waiters(relay_port, seq, relay_id, count):
                        rate = measure()
                        still = wan.get_json(relay_port, "/relay/status")["sync"]["waiters"]
                else:
                    rate, still = measure(), 0
                row = {"kind": "barrier-accept", "waiters": count, "waiting_at_end": still, "run": run,
                       "rps": round(rate, 1), "seconds": args.seconds,
                       "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
                wan.record(out, row)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--phases", default="latency,waiters")
    parser.add_argument("--rtt", default="0,80")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20, help="bursts before the samples (latency)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each of 0 and 1000 waiters")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--warmup-seconds", type=int, default=20)
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    phases = args.phases.split(",")
    if "latency" in phases:
        for rtt in (int(r) for r in args.rtt.split(",")):
            latency(args, rtt, args.out)
    if "waiters" in phases:
        waiters(args, args.out)


if __name__ == "__main__":
    main()
