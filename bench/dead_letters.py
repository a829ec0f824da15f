#!/usr/bin/env python3
"""Dead letters replayed: how long `mcpd relay dead replay --all` takes to hand N dead letters to a running
relay and until they are delivered, against the baseline of the same N requests posted to the relay's ingest.

bin/mcpd relay in front of a local upstream (a Python HTTP server) that refuses every request with 422 — each is kept
in dead/ — until it is told to take them; then the replay runs, timed from its start to its exit (the CLI waits until
the relay took them all) and to an empty spool. The baseline posts the same N bodies, one connection, one after the
other, to the relay, as the senders did before they were refused.

    dead_letters.py --entries 1000 --runs 3 --out bench/report/results.jsonl
"""
import argparse
import http.client
import http.server
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wan  # noqa: E402  (the process helpers of the WAN benchmark)


class Upstream(http.server.ThreadingHTTPServer):
    taking = False


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200 if self.server.taking else 422)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def one(args, run, out):
    with wan.scratch("mcpd-dead-") as (work, procs):
        upstream = Upstream(("127.0.0.1", 0), Handler)
        threading.Thread(target=upstream.serve_forever, daemon=True).start()
        relay_port = wan.free_port()
        wan.relay(procs, work, args.jar, relay_port, upstream.server_address[1], {}, [])
        wan.wait_http(relay_port, "/readyz")
        conn = http.client.HTTPConnection("127.0.0.1", relay_port, timeout=30)
        started = time.time()
        for i in range(args.entries):
            conn.request("POST", "/v1/ingest", body='{"events":[{"i":%d}]}' % i,
                         headers={"content-type": "application/json"})
            conn.getresponse().read()
        accept_s = time.time() - started
        wan.until(lambda: wan.get_json(relay_port, "/relay/status")["deadLetters"]["count"] == args.entries, 300)
        upstream.taking = True
        started = time.time()
        subprocess.run(wan.mcpd(args.jar) + ["relay", "dead", "replay", "--all", "--data",
                                             os.path.join(work, "relay", "relay.db")],
                       check=True, stdout=subprocess.DEVNULL)
        replay_s = time.time() - started
        delivered_s = wan.until(lambda: wan.spool_entries(relay_port) == 0
                                and wan.get_json(relay_port, "/relay/status")["deadLetters"]["count"] == 0,
                                300) - started
        upstream.shutdown()
        wan.record(out, {"kind": "dead-letters", "run": run, "entries": args.entries, "accept_s": round(accept_s, 2),
                         "replay_s": round(replay_s, 2), "delivered_s": round(delivered_s, 2),
                         "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jar", required=True)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    for run in range(args.runs):
        one(args, run, args.out)


if __name__ == "__main__":
    main()
