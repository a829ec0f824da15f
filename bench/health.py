#!/usr/bin/env python3
"""Health checks measured: how long after its upstream dies a relay takes it out of service, and how
long after it comes back the relay puts it back — with no traffic, probes alone.

bin/mcpd relay checks one upstream, mcpd serve; the collector is killed (its port refuses connections) and, once the
relay shows the upstream out of service in /relay/status, started again on the same port. Times run from the kill
(and from the moment the collector answers /readyz again) to the change in /relay/status, read every 50 ms.

    health.py --settings defaults,elb --runs 3 --out bench/report/results.jsonl
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wan  # noqa: E402  (the process helpers of the WAN benchmark)

SETTINGS = {
    "defaults": [],
    "elb": ["--probe-interval-seconds", "6", "--probe-timeout-seconds", "3", "--healthy-threshold", "4",
            "--unhealthy-threshold", "4"],
}


def in_service(relay_port):
    return wan.get_json(relay_port, "/relay/status")["upstreams"][0]["inService"]


def collector(procs, work, jar, port):
    process = procs.start("collector", wan.mcpd(jar) + ["serve", "--listen", "127.0.0.1:%d" % port,
                                                         "--data", os.path.join(work, "collector.db")])
    wan.wait_http(port, "/readyz")
    return process


def one(args, name, run, out):
    with wan.scratch("mcpd-health-") as (work, procs):
        port, relay_port = wan.free_port(), wan.free_port()
        serve = collector(procs, work, args.jar, port)
        wan.relay(procs, work, args.jar, relay_port, port, {}, SETTINGS[name])
        wan.wait_http(relay_port)
        wan.until(lambda: in_service(relay_port), 120)
        time.sleep(2)  # a few checks in the steady state
        serve.kill()
        serve.wait()
        procs.running.remove(serve)
        died = time.time()
        out_at = wan.until(lambda: not in_service(relay_port), 120)
        collector(procs, work, args.jar, port)
        back = time.time()
        in_at = wan.until(lambda: in_service(relay_port), 120)
        wan.record(out, {"kind": "health", "settings": name, "run": run, "args": " ".join(SETTINGS[name]),
                         "detect_s": round(out_at - died, 2), "recover_s": round(in_at - back, 2),
                         "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jar", default=os.path.join(HERE, "..", "target", "mcpd.jar"))
    parser.add_argument("--settings", default="defaults,elb")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "report", "results.jsonl"))
    args = parser.parse_args()
    for run in range(args.runs):
        for name in args.settings.split(","):
            one(args, name, run, args.out)


if __name__ == "__main__":
    main()
