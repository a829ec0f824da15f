#!/usr/bin/env python3
"""Where the relay's time goes, from a JFR recording (bench/profile.sh makes one under load).

Usage: bench/profile.py RECORDING.jfr

Prints CPU by thread group (jdk.ThreadCPULoad), Java execution samples by the code they were in (the innermost frame
of ours, of Camel, of Vert.x/Netty, or the JDK), the hottest methods, and the garbage collector's pauses.
"""
import collections
import json
import re
import subprocess
import sys


def events(recording, *names):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "96", "--events", ",".join(names), recording],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def thread_group(name):
    name = re.sub(r"\d+", "N", name or "?")
    for prefix, group in (("vert.x-eventloop", "Vert.x event loops (HTTP, Netty)"),
                          ("vert.x-worker", "Vert.x workers (Camel ingest exchanges)"),
                          ("vert.x-internal", "Vert.x internal blocking"),
                          ("spool-committer", "spool committer (write + fdatasync)"),
                          ("Camel", "Camel threads (delivery workers, probes)"),
                          ("spool", "spool workers"),
                          ("CN CompilerThread", "JIT compiler"),
                          ("VM Thread", "GC and safepoints"), ("GC", "GC and safepoints")):
        if name.startswith(prefix):
            return group
    return "other: " + name


def component(frame):
    method = frame["method"]
    cls = method["type"]["name"]
    if cls.startswith("dev/mcpd") or cls.startswith("dev.mcpd"):
        return "mcpd (ingest steps, spool, delivery)"
    if "camel" in cls:
        return "Camel (routing, platform-http, camel-http)"
    if cls.startswith(("io/vertx", "io.vertx", "io/netty", "io.netty")):
        return "Vert.x / Netty (HTTP)"
    if cls.startswith(("org/apache/hc", "org.apache.hc")):
        return "Apache HttpClient (delivery)"
    return None


def main():
    recording = sys.argv[1]
    per_thread = collections.defaultdict(list)
    for e in events(recording, "jdk.ThreadCPULoad"):
        v = e["values"]
        thread = v.get("eventThread") or {}
        per_thread[(thread.get("javaThreadId"), thread.get("javaName"))].append(v["user"] + v["system"])
    # ThreadCPULoad is each thread's share of the whole machine, sampled about once a second: a thread's mean share,
    # summed over a group's threads, is the group's share of the machine (both cores: 100%).
    groups = collections.Counter()
    for (_, name), loads in per_thread.items():
        groups[thread_group(name)] += sum(loads) / len(loads)
    print("CPU by thread group (% of the machine, mean over the recording):")
    for group, share in groups.most_common():
        if share >= 0.002:
            print(f"  {100 * share:5.1f}%  {group}")

    samples = events(recording, "jdk.ExecutionSample")
    by_component = collections.Counter()
    leaf = collections.Counter()
    for e in samples:
        frames = e["values"]["stackTrace"]["frames"] if e["values"].get("stackTrace") else []
        if not frames:
            continue
        top = frames[0]["method"]
        leaf[top["type"]["name"].replace("/", ".") + "." + top["name"]] += 1
        owner = next((c for c in (component(f) for f in frames) if c), "JDK only")
        by_component[owner] += 1
    total = sum(by_component.values()) or 1
    print(f"\nJava execution samples ({total}) by the innermost non-JDK code on the stack:")
    for name, count in by_component.most_common():
        print(f"  {100 * count / total:5.1f}%  {name}")
    print("\nHottest methods (self):")
    for name, count in leaf.most_common(15):
        print(f"  {100 * count / total:5.1f}%  {name}")

    pauses = [e["values"]["sumOfPauses"] for e in events(recording, "jdk.GarbageCollection")]
    def millis(d):  # ISO-8601 durations such as "PT0.001719S"
        m = re.match(r"PT(?:(\d+)M)?([\d.]+)S", d)
        return (int(m.group(1) or 0) * 60 + float(m.group(2))) * 1000 if m else 0.0
    ms = [millis(p) for p in pauses]
    if ms:
        print(f"\nGC: {len(ms)} collections, {sum(ms):.0f} ms of pauses in all, longest {max(ms):.1f} ms")


if __name__ == "__main__":
    main()
