#!/usr/bin/env python3
"""Writes BENCHMARKS.md and its plots from the result lines of bench/run.sh.

Usage: bench/report.py RESULTS.jsonl BENCHMARKS.md PLOTS_DIR

Every figure is the median of its repetitions with (min–max); ratios are of medians measured in the same run.
"""
import json
import os
import statistics
import subprocess
import sys


def load(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def spread(values, fmt="{:,.0f}"):
    values = list(values)
    if not values:
        return "–"
    median = statistics.median(values)
    if len(values) == 1:
        return fmt.format(median).replace(",", "\u2009")
    return (fmt.format(median) + " (" + fmt.format(min(values)) + "–" + fmt.format(max(values)) + ")").replace(
        ",", "\u2009")


def num(x):
    """A whole number with thin spaces between thousands: 12 345."""
    return f"{x:,.0f}".replace(",", "\u2009")


def median(values, default=None):
    values = list(values)
    return statistics.median(values) if values else default


class Results:
    def __init__(self, rows):
        self.rows = rows
        self.machine = next(r for r in rows if r["kind"] == "machine")

    def kind(self, kind, **match):
        return [r for r in self.rows if r["kind"] == kind and all(r.get(k) == v for k, v in match.items())]

    def saturated(self, subject):
        return [r for r in self.kind("load", subject=subject) if r["delay_ms"] == 0 and "backlog" not in r]

    def rps(self, subject):
        return median(r["rps"] for r in self.saturated(subject))

    def disk(self, pattern):
        return median(r["records_per_s"] for r in self.kind("disk", pattern=pattern))


def ratio(a, b):
    return "–" if not a or not b else f"{a / b:.2f}×"


def load_table(res, subjects):
    out = ["| subject | body | requests/s | p50 ms | p99 ms | p99.9 ms | non-2xx | relay CPU (cores) | relay RSS MiB |",
           "|---|---|---|---|---|---|---|---|---|"]
    for subject, label in subjects:
        rows = res.saturated(subject)
        if not rows:
            continue
        relay = subject.startswith("relay")
        out.append("| {} | {} KiB | {} | {} | {} | {} | {} | {} | {} |".format(
            label, rows[0]["size"] // 1024, spread(r["rps"] for r in rows),
            spread((r["p50_ms"] for r in rows), "{:.2f}"), spread((r["p99_ms"] for r in rows), "{:.2f}"),
            spread((r["p999_ms"] for r in rows), "{:.2f}"),
            sum(r["non2xx"] + r["socket_errors"] for r in rows),
            spread((r["cpu_cores"] for r in rows), "{:.2f}") if relay else "–",
            spread(r["rss_mib"] for r in rows) if relay else "–"))
    return out


def offered_load(res):
    points = {}
    for r in res.rows:
        if r["kind"] == "load" and "fraction" in r:
            points.setdefault((r["subject"], r["fraction"]), []).append(r)
    return points


def gnuplot(script):
    """Runs a gnuplot script on the PNG terminal every plot uses; a missing gnuplot costs the plot, not the report."""
    try:
        subprocess.run(["gnuplot"], input="set terminal pngcairo size 960,600 font ',10'\n" + script, text=True,
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report: no plot ({e}: {getattr(e, 'stderr', '')})", file=sys.stderr)


def plot(res, plots_dir):
    """Latency percentiles against achieved load (A, B, relay), and accept rate against backlog size."""
    points = offered_load(res)
    names = {"A-1k": "ceiling A (nginx return 200)", "B-1k": "ceiling B (nginx proxy, no durability)",
             "relay-1k": "mcpd relay (durable)"}
    files = []
    rates = []
    for subject in ("A-1k", "B-1k", "relay-1k"):
        data = os.path.join(plots_dir, f"latency-{subject}.dat")
        with open(data, "w") as f:
            series = [(median(r["rps"] for r in rows), median(r["p50_ms"] for r in rows),
                       median(r["p99_ms"] for r in rows)) for (s, _), rows in sorted(points.items()) if s == subject]
            saturated = res.saturated(subject)
            if saturated:
                series.append((res.rps(subject), median(r["p50_ms"] for r in saturated),
                               median(r["p99_ms"] for r in saturated)))
            for x, p50, p99 in sorted(series):
                f.write(f"{x:.0f} {p50:.3f} {p99:.3f}\n")
                rates.append(x)
        files.append((data, names[subject]))
    # One readable colour per subject, p99 solid and p50 dashed in the same colour: the relay against its ceilings.
    colours = ["#555555", "#1f77b4", "#d62728"]
    curves = ", ".join(f"'{d}' using 1:3 with linespoints lw 2 pt 7 lc rgb '{c}' title '{n}, p99', "
                       f"'{d}' using 1:2 with linespoints lw 1 dt 2 pt 6 lc rgb '{c}' title '{n}, p50'"
                       for (d, n), c in zip(files, colours))
    largest = max((n for n in (r.get("backlog") for r in res.rows if r["kind"] == "load") if n), default=1)
    backlog = os.path.join(plots_dir, "backlog.dat")
    with open(backlog, "w") as f:
        for n in sorted({r["backlog"] for r in res.rows if r["kind"] == "load" and "backlog" in r}):
            rows = [r for r in res.kind("load", subject="relay-backlog") if r["backlog"] == n]
            f.write(f"{n} {median(r['rps'] for r in rows):.0f} {min(r['rps'] for r in rows):.0f} "
                    f"{max(r['rps'] for r in rows):.0f} {median(r['p99_ms'] for r in rows):.3f}\n")
    script = f"""
set output '{os.path.join(plots_dir, "latency-vs-load.png")}'
set title 'Latency against achieved load — 1 KiB POST, 64 connections (paced at 1/4, 1/2, 3/4 of saturation, then saturated)'
set xlabel 'requests/s achieved (log scale: the subjects differ by 10x)'
set ylabel 'latency (ms, log scale)'
set logscale xy
set xrange [{min(rates, default=1) / 1.5:.0f}:{max(rates, default=10) * 1.5:.0f}]
set key top left
set grid
plot {curves}
set output '{os.path.join(plots_dir, "backlog.png")}'
set title 'Relay accept rate against entries waiting in the spool (upstream down) — 1 KiB, 64 connections'
set xlabel 'entries filled before the start (log scale; an empty spool is drawn at 1)'
set ylabel 'requests/s'
unset logscale
set logscale x
set xrange [0.5:{largest * 3}]
set format x '10^%L'
set yrange [0:*]
plot '{backlog}' using ($1 + 1):2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'median (min–max)'
"""
    gnuplot(script)


WAN_NAMES = {"serve": "mcpd serve, SQLite (batches)", "serve-pg": "mcpd serve, PostgreSQL (batches)",
             "nginx": "nginx `return 200` (one request per entry)",
             "otlp": "OTLP/HTTP receiver, protobuf (merged OTLP requests)",
             "otlp-json": "OTLP/HTTP receiver, JSON (merged OTLP requests)",
             "otlp-alone": "OTLP/HTTP receiver, protobuf, merging off (`--batch-max-entries 1`)"}


def drain_cpu(res):
    """Where a drain into mcpd serve at 0 ms spends the machine: CPU per entry of the relay, the collector and
    PostgreSQL, all on this machine's cores (a deployment has the relay in another region)."""
    lines = []
    for u in ("serve", "serve-pg"):
        rows = [r for r in res.kind("wan", phase="drain") if r.get("upstream") == u and r.get("rtt_ms") == 0
                and r.get("cpu_s")]
        if not rows:
            continue
        per_entry = {name: median([r["cpu_s"][name] / r["entries"] * 1e6 for r in rows])
                     for name in ("relay", "upstream", "postgres")}
        store = per_entry["postgres"] if u == "serve-pg" else 0
        total = per_entry["relay"] + per_entry["upstream"] + store
        parts = [f"the relay {per_entry['relay']:.0f} µs", f"the collector {per_entry['upstream']:.0f} µs"]
        if u == "serve-pg":
            parts.append(f"PostgreSQL {store:.0f} µs")
        line = (f"- {WAN_NAMES[u]}: {', '.join(parts)} — {total:.0f} µs in all, so "
                f"{res.machine.get('cores', 2)} cores pass at most {num(res.machine.get('cores', 2) * 1e6 / total)}"
                f" entries/s (drained: {num(median([r['rate'] for r in rows]))}/s).")
        alone = [r for r in res.kind("collector-cpu") if r.get("store") == ("postgres" if u == "serve-pg" else "sqlite")
                 and r.get("requests")]
        if alone:
            per_request = median([(r["collector_cpu_s"] + (r["postgres_cpu_s"] if u == "serve-pg" else 0))
                                  / r["requests"] * 1e6 for r in alone])
            in_drain = per_entry["upstream"] + store
            line += (f" The collector and its store spend {in_drain:.0f} µs per entry of a drain against "
                     f"{per_request:.0f} µs per request of its own: on cores of their own they take "
                     f"{per_request / in_drain:.1f}× as many entries in batches as in requests.")
        lines.append(line)
    if not lines:
        return []
    return ["CPU per entry of a drain at 0 ms (median of the runs; the relay, the collector and its store share this "
            "machine, where a deployment has the relay in another region):", ""] + lines + [""]


def drain_method(res):
    """How the drains were run: on a relay that was delivering when the link went down (rows with relay_warmup_s),
    or on a fresh relay started on a backlog FillSpool wrote."""
    rows = res.kind("wan", phase="drain")
    warm = sorted({WAN_NAMES[r["upstream"]] for r in rows if r.get("relay_warmup_s")})
    fresh = sorted({WAN_NAMES[r["upstream"]] for r in rows if not r.get("relay_warmup_s")})
    seconds = sorted({r["relay_warmup_s"] for r in rows if r.get("relay_warmup_s")})
    parts = []
    named = bool(warm) and bool(fresh)  # the upstreams are named only when the drains were run both ways
    if warm:
        parts.append(f"{'; '.join(warm) + ': t' if named else 'T'}he relay first delivers {'/'.join(map(str, seconds))} s of the senders' "
                     "load, as a running relay was delivering before its link broke (both JVMs have compiled the "
                     "delivery path, as the per-request runs are warmed); then the link goes down, the senders post "
                     "the backlog to the relay, and the link comes up")
    if fresh:
        parts.append(f"{'; '.join(fresh) + ': t' if named else 'T'}he spool is filled with the backlog (`bench/FillSpool.java`) while the "
                     "link is down, a fresh relay starts on it and the link comes up (the relay's JVM is not warmed "
                     "up first)")
    return ". ".join(parts) + ". The rate is from the first delivered entry to the last."


def wan_rates(res, phase, upstream):
    """{rtt: [entries/s, …]} of one WAN phase against one upstream."""
    rates = {}
    for r in res.kind("wan", phase=phase, upstream=upstream):
        rates.setdefault(r["rtt_ms"], []).append(r["rate"])
    return rates


def wan_upstreams(res):
    return [u for u in WAN_NAMES if res.kind("wan", upstream=u)]


def wan_plot(res, plots_dir):
    """Delivery rate against round-trip time: archive and drain, per upstream."""
    upstreams = wan_upstreams(res)
    if not upstreams:
        return
    colours = {"serve": "#d62728", "serve-pg": "#1f77b4", "nginx": "#555555", "otlp": "#2ca02c",
               "otlp-json": "#9467bd", "otlp-alone": "#8c564b"}
    curves = []
    for u in upstreams:
        for phase, style in (("archive", "lw 2 pt 7"), ("drain", "lw 1 dt 2 pt 6")):
            rates = wan_rates(res, phase, u)
            if not rates:
                continue
            data = os.path.join(plots_dir, f"wan-{u}-{phase}.dat")
            with open(data, "w") as f:
                for rtt in sorted(rates):
                    f.write(f"{rtt:g} {median(rates[rtt]):.0f} {min(rates[rtt]):.0f} {max(rates[rtt]):.0f}\n")
            what = "archive (32 senders)" if phase == "archive" else "drain of a backlog"
            curves.append(f"'{data}' using 1:2 with linespoints {style} lc rgb '{colours[u]}' "
                          f"title '{WAN_NAMES[u].replace('`', '')}: {what}'")
    script = f"""
set output '{os.path.join(plots_dir, "wan.png")}'
set title 'Delivery rate against round-trip time — relay → delaying TCP proxy → upstream, 1 KiB entries'
set xlabel 'round-trip time (ms)'
set ylabel 'entries/s delivered (log scale)'
set logscale y
set xrange [-10:210]
set xtics (0, 20, 80, 200)
set key outside bottom center horizontal maxrows 5
set grid
plot {", ".join(curves)}
"""
    gnuplot(script)


def wan_targets(res):
    out = []
    for u in wan_upstreams(res):
        rates = wan_rates(res, "archive", u)
        if 0 not in rates:
            continue
        zero = median(rates[0])
        for rtt, floor in ((80, 0.8), (200, 0.5)):
            if rtt in rates:
                r = median(rates[rtt]) / zero
                out.append(f"| WAN, {WAN_NAMES[u]}: archive rate at {rtt} ms ≥ {floor} × at 0 ms | {r:.2f}× "
                           f"({num(median(rates[rtt]))} vs {num(zero)} entries/s) | {'yes' if r >= floor else 'no'} |")
    for u, subject in (("serve-pg", "collector-postgres"), ("serve", "collector-sqlite")):
        drain, per_request = wan_rates(res, "drain", u).get(0), res.rps(subject)
        if drain and per_request:
            r = median(drain) / per_request
            out.append(f"| WAN, {WAN_NAMES[u]}: a backlog drains at ≥ 5 × the collector's per-request rate | "
                       f"{r:.2f}× ({num(median(drain))} entries/s vs {num(per_request)} requests/s) | "
                       f"{'yes' if r >= 5 else 'no'} |")
    for (u, rtt), runs in sustained_runs(res).items():
        r = median(s["delivered_ratio"] for s in runs)
        out.append(f"| WAN sustained, {WAN_NAMES[u]}, {rtt:g} ms: delivered ≥ 0.95 × accepted | "
                   f"{r:.2f}× ({num(median(s['delivered'] for s in runs))} of "
                   f"{num(median(s['entries'] for s in runs))}{', median of ' + str(len(runs)) if len(runs) > 1 else ''})"
                   f" | {'yes' if r >= 0.95 else 'no'} |")
    drains = wan_rates(res, "drain", "otlp")
    if 0 in drains and 80 in drains:
        r = median(drains[80]) / median(drains[0])
        out.append(f"| WAN, {WAN_NAMES['otlp']}: drain at 80 ms ≥ 0.8 × at 0 ms | {r:.2f}× "
                   f"({num(median(drains[80]))} vs {num(median(drains[0]))} entries/s) | {'yes' if r >= 0.8 else 'no'} |")
    merged = [s["requests_per_entry"] for s in res.kind("wan", phase="sustained", upstream="otlp")
              if s["rtt_ms"] == 80 and "requests_per_entry" in s]
    if merged:
        r = median(merged)
        out.append(f"| WAN sustained, {WAN_NAMES['otlp']}, 80 ms: requests per entry ≤ 1/20 | {r:.3f} "
                   f"(1/{1 / r:.0f}) | {'yes' if r <= 0.05 else 'no'} |")
    trickle = [t["wire_per_body"] for t in res.kind("wan", phase="trickle", upstream="serve")]
    if trickle:
        r = median(trickle)
        out.append(f"| WAN trickle, {WAN_NAMES['serve']}, entries one by one: bytes across the link ≤ 0.5 × their "
                   f"bodies | {r:.3f}× | {'yes' if r <= 0.5 else 'no'} |")
    return out


SWEEP_STORES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}


def sweep_runs(res):
    """{(store, fsync, warm-up): {"baseline": [rows], "sweep": [rows]}} of bench/sweep.py, SQLite first; fsync is
    PostgreSQL's setting (None on SQLite)."""
    runs = {}
    for r in sorted(res.kind("sweep"), key=lambda r: (list(SWEEP_STORES).index(r["store"]), r.get("pg_fsync") != "on",
                                                      -r.get("warmup_s", 0))):
        runs.setdefault((r["store"], r.get("pg_fsync"), r.get("warmup_s", 0)), {}).setdefault(r["phase"], []).append(r)
    return runs


def sweep_name(store, fsync, warmup):
    name = SWEEP_STORES[store] + (f" (fsync {fsync})" if fsync else "")
    return name + (", sweep at start (cold JVM)" if not warmup else "")


def sweep_targets(res):
    out = []
    for (store, fsync, warmup), phases in sweep_runs(res).items():
        base, sweep = phases.get("baseline", []), phases.get("sweep", [])
        if not base or not sweep or not warmup:
            continue
        keys, runs = num(sweep[0]["keys"]), f", median of {len(sweep)}" if len(sweep) > 1 else ""
        during, without = median(r["p99_ms"] for r in sweep), median(r["p99_ms"] for r in base)
        x = during / without
        out.append(f"| retention sweep of {keys} expired keys, {sweep_name(store, fsync, warmup)}: ingest p99 during "
                   f"≤ 1.5 × without | {x:.2f}× (p99 {during:.2f} vs {without:.2f} ms{runs}; answered "
                   f"{num(median(r['rate'] for r in sweep))} of the {num(sweep[0]['target_rate'])} requests/s scheduled) | "
                   f"{'yes' if x <= 1.5 else 'no'} |")
        worst = max(max(r["max_ms"], r["max_gap_ms"]) for r in sweep)
        out.append(f"| retention sweep of {keys} expired keys, {sweep_name(store, fsync, warmup)}: never blocks "
                   f"ingest > 100 ms at a time | slowest request {median(r['max_ms'] for r in sweep):.0f} ms, longest "
                   f"without an answer {median(r['max_gap_ms'] for r in sweep):.0f} ms{runs}; worst of all runs "
                   f"{worst:.0f} ms (without a sweep: "
                   f"{max(max(r['max_ms'], r['max_gap_ms']) for r in base):.0f} ms){lock_waits(sweep, base)} | "
                   f"{'yes' if worst <= 100 else 'no'} |")
    return out


def lock_waits(sweep, base):
    """PostgreSQL's log of lock waits past deadlock_timeout, all runs of each phase: what ingest waited for."""
    if not all("lock_waits" in r for r in sweep + base):
        return ""

    def count(rows):
        waits = {}
        for r in rows:
            for what, n in r["lock_waits"].items():
                waits[what] = waits.get(what, 0) + n
        return (", ".join(f"{n} for {what}" for what, n in sorted(waits.items(), key=lambda w: -w[1]))
                or "none")
    return (f"; lock waits ≥ {sweep[0]['lock_wait_ms']} ms in all runs: during {count(sweep)}; "
            f"without {count(base)}")


def sweep_section(res):
    runs = sweep_runs(res)
    if not runs:
        return []
    phases = next(iter(runs.values()))
    first, base = phases["sweep"][0], phases.get("baseline", [{"seconds": 0}])[0]
    started = {}  # the first run of each store: its rows may come from a run of that store alone
    for (store, _, _), store_phases in runs.items():
        started.setdefault(SWEEP_STORES[store], store_phases["sweep"][0]["date"])
    dates = (next(iter(started.values())) if len(set(started.values())) == 1
             else ", ".join(f"{date} ({store})" for store, date in started.items()))
    if base["seconds"] >= 0.95 * first["sweep_ms"] / 1000:
        baseline_length = "for as long as the same run's sweep took (the window s column)"
        windows = (" Both phases' windows are as long, so their worst moments are comparable: a store's own stalls"
                   " (a checkpoint, the disk's writeback) come every few minutes, and a shorter baseline would miss"
                   " them.")
    else:
        baseline_length = f"for {base['seconds']:.0f} s"
        windows = (" Max and longest gap are the worst moments of windows of different lengths: the baseline's, "
                   "and the whole sweep (the window s column) during one.")
    md = ["## Retention sweep under ingest", "",
          f"`mcpd serve` (`bin/mcpd`) on a store seeded with {num(first['keys'])} idempotency keys from 2020, under "
          f"{first['connections']} connections posting 1 KiB native batches, each its own key, paced at "
          f"{num(first['target_rate'])} requests/s in all (well under the store's saturating rate); every phase on a "
          "freshly seeded store. *Without*: `--dedup-window 3660d` (nothing expires), measured after "
          f"{first['warmup_s']} s of load {baseline_length}. *During*: a window the seeded keys outlive by {first['warmup_s']} s, so "
          "the sweep starts under a load that has run that long, measured from the start of its first pass to the end "
          "of its last (`--lease-pass-seconds 1`). \"Sweep at start\": `--dedup-window 1m`, the first pass finds "
          "every key expired as the collector starts, and both phases are measured from the first request, on a cold "
          "JVM. \"Longest gap\" is the longest time in which no request was answered (`bench/sweep.py`, run "
          f"{dates}, `bench/run.sh --only sweep` measures this phase alone). PostgreSQL is a throwaway cluster "
          "of `.ci/postgres.sh`: \"fsync on\" keeps PostgreSQL's defaults (fsync, full_page_writes, synchronous_commit "
          "on), as `MCPD_PG_DURABLE=1` starts it (bench/run.sh sets it); \"fsync off\" has fsync and full_page_writes "
          "off, as the tests run it. The sweep pauses between its chunks (on SQLite nine times as long as a chunk "
          "took, on PostgreSQL four times) and renews the lease as it goes, so one pass may outlive the lease's "
          "term (three passes: 3 s here) and keep it. The seeded keys were first seen "
          "within one second, in no order of key (PostgreSQL's table filled in the order they were seen, as under "
          "ingest). SQLite forgets keys a whole minute at a time, each minute's in the order its table keeps them: "
          "there the window lets the seeded keys' minute expire after the warm-up, and they go many to a page, as "
          "keys first seen close together do (keys first seen hours apart cost a page each: "
          "`bench/key_sweep_pages.py`). On PostgreSQL the first pass may find only some of them expired, and the "
          "next forgets the rest. The PostgreSQL cluster logs every lock wait of 100 ms or more, counted in the target "
          "row by what was waited for: ingest waits for a lock of the sweep's only when it stores a key that a chunk "
          "is deleting, so a wait there is ingest's own, such as inserts queued behind one that is extending the "
          "batches table while the disk is slow." + windows, "",
          "| store | phase | answered/s | p50 ms | p99 ms | p99.9 ms | max ms | longest gap ms | window s | keys "
          "forgotten | passes |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (store, fsync, warmup), phases in runs.items():
        for phase, label in (("baseline", "without"), ("sweep", "during")):
            rows = phases.get(phase, [])
            if not rows:
                continue
            md.append(f"| {sweep_name(store, fsync, warmup)} | {label} | {spread(r['rate'] for r in rows)} | "
                      f"{spread((r['p50_ms'] for r in rows), '{:.2f}')} | "
                      f"{spread((r['p99_ms'] for r in rows), '{:.2f}')} | "
                      f"{spread((r['p999_ms'] for r in rows), '{:.2f}')} | "
                      f"{spread((r['max_ms'] for r in rows), '{:.1f}')} | "
                      f"{spread((r['max_gap_ms'] for r in rows), '{:.1f}')} | " + (
                          f"{spread((r['sweep_ms'] / 1000 for r in rows), '{:.1f}')} | "
                          f"{num(median(r['keys_forgotten'] for r in rows))} | "
                          f"{spread(r['sweep_passes'] for r in rows)} |" if phase == "sweep"
                          else f"{spread((r['seconds'] for r in rows), '{:.1f}')} | – | – |"))
    return md + [""]


def sustained_runs(res):
    """{(upstream, rtt): [sustained runs]}, in the order the upstreams are named, then by RTT."""
    runs = {}
    for s in sorted(res.kind("wan", phase="sustained"), key=lambda s: (list(WAN_NAMES).index(s["upstream"]),
                                                                        s["rtt_ms"])):
        runs.setdefault((s["upstream"], s["rtt_ms"]), []).append(s)
    return runs


def wan_section(res, plots_link):
    upstreams = wan_upstreams(res)
    if not upstreams:
        return []
    md = ["## Delivery across a long link", "",
          "`bench/wan.py`: a relay (`bin/mcpd`, default options) ships to an upstream through `bench/delay_proxy.py`, "
          "a TCP proxy that passes every chunk on half the round trip after it arrived, in each direction (this "
          "kernel has no `netem`). Each run starts a fresh relay and upstream. **Archive**: after a 5 s warm-up, 32 "
          "senders post 1 KiB entries (each its own key) for 3 s as fast as the relay takes them; the rate is the "
          "entries accepted over the time from the first send until the upstream has every one — so at low RTT it "
          "is bound by the relay's accept path, not by delivery. **Drain**: " + drain_method(res) + " The upstream "
          "counts what it took (`/v1/stats` events and duplicates; nginx's access log; the OTLP receiver's span "
          "count).", "",
          "| upstream | RTT ms | archive entries/s | / 0 ms | drain entries/s | / 0 ms | protocol | window at the end | "
          "relay peak RSS MiB |", "|---|---|---|---|---|---|---|---|---|"]
    for u in upstreams:
        archive, drain = wan_rates(res, "archive", u), wan_rates(res, "drain", u)
        for rtt in sorted(set(archive) | set(drain)):
            rows = [r for r in res.kind("wan", upstream=u)
                    if r["rtt_ms"] == rtt and r["phase"] in ("archive", "drain")]
            a0, d0 = median(archive.get(0, [])), median(drain.get(0, []))
            md.append(f"| {WAN_NAMES[u]} | {rtt:g} | {spread(archive.get(rtt, []))} | "
                      f"{ratio(median(archive.get(rtt, [])), a0)} | {spread(drain.get(rtt, []))} | "
                      f"{ratio(median(drain.get(rtt, [])), d0)} | "
                      f"{'/'.join(sorted({str(r['protocol']) for r in rows}))} | "
                      f"{spread(r['window'] for r in rows if r.get('window') is not None)} | "
                      f"{max((r['peak_rss_mib'] for r in rows if r.get('peak_rss_mib')), default='–')} |")
    apart = sorted({r["at"][:10] for r in res.kind("wan") if "at" in r and r["at"][:10] != res.machine["date"][:10]})
    if apart:
        later = sorted({WAN_NAMES[r["upstream"]] for r in res.kind("wan") if r.get("at", "")[:10] in apart})
        md += ["", f"Measured apart from the full run ({', '.join(apart)}, `bench/wan.py` alone, the same machine): "
                   f"the rows of {'; '.join(later)}."]
    sizes = [r["entries"] for r in res.kind("wan", phase="drain")]
    # A backlog posted to a running relay stops at the first look that finds at least the size asked for.
    backlog = (num(min(sizes)) + (f"–{num(max(sizes))}" if max(sizes) > min(sizes) else "")) if sizes else "0"
    warmed = sorted({r["upstream_warmup_s"] for r in res.kind("wan", phase="drain")
                     if r.get("upstream_warmup_s") and not r.get("relay_warmup_s")})
    warm_note = (f" Before a drain into mcpd serve from a fresh relay the collector takes {'/'.join(map(str, warmed))} s of requests "
                 "straight to it, as its per-request runs are warmed: a collector waiting for its relays has been "
                 "running." if warmed else "")
    md += ["", f"Drain backlog: {backlog} entries.{warm_note} nginx gets one request per entry: its rate is bound by "
               "`--max-in-flight` (256) / RTT, and at low RTT by the Python proxy itself, which passes a few "
               "thousand requests a second (straight to nginx on loopback the same relay drains at the rate of "
               "\"Backlog scale\" above); an mcpd collector gets batches of up to 256 entries, so its drain is bound "
               "by the collector's store, not by the round trip; an OTLP receiver (`bench/otlp_upstream.py`, which "
               "answers a GET with 405 as a Collector does, and decodes every export to count its spans) gets the "
               "senders' 1 KiB protobuf trace exports merged, up to 256 per request.", "",
           f"![delivery rate against round-trip time]({plots_link}/wan.png)", ""]
    md += drain_cpu(res)
    sustained = sustained_runs(res)
    if sustained:
        md += ["Sustained: full load (32 senders, no pause) for the whole run with delivery running. Requests per "
               "entry and bytes across the link (towards the upstream, counted by the proxy, headers and probes "
               "included) per byte of the bodies delivered are given where the run measured them. The OTLP senders "
               "post one 1 KiB trace export (random ids and values) over and over, so merged requests of it "
               "compress better than varied telemetry would.", "",
               "| upstream | RTT ms | runs | accepted/s | delivered/s | delivered / accepted | spool entries after | "
               "requests per entry | bytes across / bodies | relay peak RSS MiB |",
               "|---|---|---|---|---|---|---|---|---|---|"]
        for (u, rtt), runs in sustained.items():
            measured = [s for s in runs if "requests_per_entry" in s]
            md.append(f"| {WAN_NAMES[u]} | {rtt:g} | {len(runs)} × {runs[0]['seconds']:.0f} s | "
                      f"{spread(s['entries'] / s['seconds'] for s in runs)} | "
                      f"{spread(s['delivered'] / s['seconds'] for s in runs)} | "
                      f"{median(s['delivered_ratio'] for s in runs):.2f} | "
                      f"{spread(s['entries_after'] for s in runs)} | "
                      f"{spread((s['requests_per_entry'] for s in measured), '{:.4f}')} | "
                      f"{spread((s['wire_per_body'] for s in measured), '{:.3f}')} | "
                      f"{max(s['peak_rss_mib'] for s in runs)} |")
        md.append("")
    trickle = res.kind("wan", phase="trickle")
    if trickle:
        md += ["Trickle: entries one at a time (one sender, each request answered before the next) — what crosses the "
               "link when entries do not wait together. To mcpd serve a lone entry of 1 KiB or more goes as a batch "
               "of one, gzipped when that saves a tenth.", "",
               "| upstream | RTT ms | entries | requests | bytes across | bytes across / bodies |",
               "|---|---|---|---|---|---|"]
        for t in trickle:
            md.append(f"| {WAN_NAMES[t['upstream']]} | {t['rtt_ms']:g} | {num(t['entries'])} | {num(t['requests'])} | "
                      f"{num(t['wire_bytes'])} | {t['wire_per_body']} |")
        md.append("")
    return md


def targets(res):
    out = ["| target | measured | met |", "|---|---|---|"]
    b, relay = res.rps("B-1k"), res.rps("relay-1k")
    if b and relay:
        out.append(f"| durable accept ≥ 1.0 × ceiling B (1 KiB, 64 connections) | {relay / b:.2f}× "
                   f"({num(relay)} vs {num(b)} req/s) | {'yes' if relay >= b else 'no'} |")
    half = offered_load(res).get(("relay-1k", 0.5))
    if half:
        p99 = median(r["p99_ms"] for r in half)
        achieved = median(r["rps"] for r in half)
        out.append(f"| accept p99 ≤ 10 ms at half the saturating rate | p99 {p99:.2f} ms at {num(achieved)} req/s | "
                   f"{'yes' if p99 <= 10 else 'no'} |")
    for s in res.kind("sustained"):
        if s["label"] == "half-B":
            rate = s["accepted"] / s["seconds"]
            growth = s["entries_after"] - s["entries_before"]
            flat = growth <= 0.02 * s["accepted"]
            out.append(f"| sustained: delivery keeps up at ≥ 0.5 × ceiling B | accepted {num(rate)}/s = "
                       f"{rate / b:.2f} × B, delivered {num(s['delivered'] / s['seconds'])}/s, spool "
                       f"{num(s['entries_before'])} → {num(s['entries_after'])} entries | "
                       f"{'yes' if flat and rate >= 0.5 * b else 'no'} |")
    backlog = backlog_rps(res)
    if 0 in backlog and len(backlog) > 1:
        top = max(backlog)
        r = median(backlog[top]) / median(backlog[0])
        out.append(f"| accept with {num(top)} entries waiting within 10% of an empty spool | {r:.2f}× | "
                   f"{'yes' if r >= 0.9 else 'no'} |")
        restart = [x for x in res.kind("restart") if x["backlog"] == top]
        if restart:
            ms = restart[0]["serving_ms"]
            out.append(f"| restart with {num(top)} entries serving in < 5 s | {ms / 1000:.1f} s | "
                       f"{'yes' if ms < 5000 else 'no'} |")
    out += wan_targets(res)
    out += lease_targets(res)
    out += sweep_targets(res)
    out += kafka_targets(res)
    # Large bodies in flight are measured for their own sake (BENCHMARKS "Large bodies in flight"), not against this.
    peaks = [r["peak_rss_mib"] for r in res.rows if "peak_rss_mib" in r and not r["kind"].startswith("large-bodies")]
    if peaks:
        out.append(f"| RSS < 300 MiB throughout | peak {max(peaks)} MiB | {'yes' if max(peaks) < 300 else 'no'} |")
    return out


def kafka_targets(res):
    out = []
    runs = res.kind("kafka", phase="relay-to-kafka")
    if runs:
        x = median(r["delivered_per_s"] / r["accepted_per_s"] for r in runs)
        out.append(f"| relay → Kafka at full load: delivered ≥ 0.95 × accepted (the spool flat) | {x:.2f}× "
                   f"({num(median(r['delivered_per_s'] for r in runs))} of "
                   f"{num(median(r['accepted_per_s'] for r in runs))} entries/s; spool at the end "
                   f"{spread(r['spool_at_end'] for r in runs)}; {len(runs)} runs) | {'yes' if x >= 0.95 else 'no'} |")
    archive = res.kind("kafka", phase="archive")
    if archive:
        x = median(r["two_per_s"] / r["one_per_s"] for r in archive)
        out.append(f"| two collectors on one topic archive ≥ 1.6 × one collector's rate | {x:.2f}× "
                   f"({num(median(r['two_per_s'] for r in archive))} vs "
                   f"{num(median(r['one_per_s'] for r in archive))} records/s, {archive[0]['store']}, "
                   f"{archive[0]['partitions']} partitions; bounded by the 2 cores the collectors, the store and the "
                   f"broker share) | {'yes' if x >= 1.6 else 'no'} |")
    return out


def kafka_section(res):
    runs, archive, restart = (res.kind("kafka", phase=p) for p in ("relay-to-kafka", "archive", "broker-restart"))
    if not runs:
        return []
    first = runs[0]
    md = ["## Kafka between relays and collectors", "",
          f"`bench/kafka.py` (run {first['date']}, `bench/run.sh --only kafka` measures this phase alone): one KRaft "
          "broker (the tests' own, as a process, its log on this disk) with a topic of "
          f"{first['partitions']} partitions. *Relay → Kafka*: `mcpd relay --upstream kafka://…` under 64 "
          f"connections of 1 KiB native batches for {first['seconds']} s — entries accepted and acknowledged by the "
          "broker per second; beside it, the same load on a relay delivering to `mcpd serve` (SQLite) over HTTP. "
          "*Archive*: the topic then holds what the relays delivered; one `mcpd serve --source` (a new group, an empty "
          "store) archives it all, then two collectors started at once (another group, one new store), each rate "
          "taken in the steady state: from the moment every partition is read by a member and every member reads "
          "some (the JVMs' start and the group's rebalances left out) until 95% of the records are archived. *Broker restart*: a relay under 8 connections, the broker "
          "killed with SIGKILL and started again on its log; recovery is from its restart until the relay's spool is "
          "back to what it held before.", "",
          "| | entries/s accepted | entries/s delivered | spool at the end |", "|---|---|---|---|",
          f"| relay → Kafka | {spread(r['accepted_per_s'] for r in runs)} | "
          f"{spread(r['delivered_per_s'] for r in runs)} | {spread(r['spool_at_end'] for r in runs)} |",
          f"| relay → `mcpd serve` (HTTP) | {spread(r['http_accepted_per_s'] for r in runs)} | "
          f"{spread(r['http_delivered_per_s'] for r in runs)} | {spread(r['http_spool_at_end'] for r in runs)} |", ""]
    if archive:
        store = archive[0]["store"] + (f" (fsync {archive[0]['pg_fsync']})" if archive[0].get("pg_fsync") else "")
        md += ["| archive from the topic | records | one collector, records/s | CPU busy | two collectors, records/s "
               "| CPU busy | two / one |", "|---|---|---|---|---|---|---|",
               f"| {store} | {spread(r['records'] for r in archive)} | "
               f"{spread(r['one_per_s'] for r in archive)} | "
               f"{spread((100 * r.get('one_cpu_busy', 0) for r in archive), '{:.0f}')} % | "
               f"{spread(r['two_per_s'] for r in archive)} | "
               f"{spread((100 * r.get('two_cpu_busy', 0) for r in archive), '{:.0f}')} % | "
               f"{median(r['two_per_s'] / r['one_per_s'] for r in archive):.2f}× |", "",
               f"CPU busy is the whole machine's ({archive[0].get('cores', '?')} cores) while the collectors archive: "
               "the broker, the collectors and the store share it. CPU per record archived: "
               f"{median(r['one_cpu_busy'] * r['cores'] / r['one_per_s'] * 1e6 for r in archive if 'cores' in r):.0f} µs "
               "with one collector, "
               f"{median(r['two_cpu_busy'] * r['cores'] / r['two_per_s'] * 1e6 for r in archive if 'cores' in r):.0f} µs "
               "with two (two JVMs polling, the group's coordination, two writers on one store). One collector "
               "already keeps this machine about four fifths busy, so a second finds little idle CPU, and two archive "
               "no faster than one: the machine bounds the rate here, not the topic. On hosts of their own, each "
               "collector brings its own cores and the topic's partitions spread the records between them, until "
               "the store's commit rate bounds them.", ""]
    if restart:
        md += [f"Broker restart: down {restart[0]['down_s']} s, the spool peaked at "
               f"{spread(r['spool_peak'] for r in restart)} entries (accepted meanwhile) and was back to its level "
               f"{spread((r['recovery_s'] for r in restart), '{:.1f}')} s after the broker's restart.", ""]
    return md


# The collector's lease (bench/lease.py): the event, what the target calls it, at most how many passes.
LEASE_EVENTS = (("kill-9", "kill -9 of the holder", 3), ("sigterm", "SIGTERM", 1))


def lease_passes(row):
    return row["takeover_ms"] / 1000 / row["pass_s"]


def lease_targets(res):
    out = []
    for event, label, most in LEASE_EVENTS:
        runs = res.kind("lease", event=event)
        if not runs:
            continue
        passes, ms = [lease_passes(r) for r in runs], [r["takeover_ms"] for r in runs]
        two = sum(r["two_holders_seen"] for r in runs)
        out.append(f"| collector lease: takeover after {label} ≤ {most} pass{'es' if most > 1 else ''} | median "
                   f"{median(passes):.2f} passes ({num(median(ms))} ms), max {max(passes):.2f} ({num(max(ms))} ms); "
                   f"pass {runs[0]['pass_s']} s, {len(runs)} runs; "
                   f"{'two holders at once in ' + str(two) + ' runs' if two else 'never two holders at once'} | {'yes' if max(passes) <= most else 'no'} |")
    return out


def lease_prose(res):
    """A line of the collector's section: the replicas' takeovers."""
    rows = res.kind("lease")
    if not rows:
        return []
    first = rows[0]
    parts = []
    for event, label, _ in LEASE_EVENTS:
        runs = res.kind("lease", event=event)
        if runs:
            parts.append(f"after {label} {spread(r['takeover_ms'] for r in runs)} ms = "
                         f"{spread((lease_passes(r) for r in runs), '{:.2f}')} passes ({len(runs)} runs)")
    two = sum(r["two_holders_seen"] for r in rows)
    reaction = [r["takeover_ms"] - r["lease_left_ms"] for r in rows if "lease_left_ms" in r]
    return ["", f"Replicas taking turns (`bench/lease.py`, run {first['date']}, `bench/run.sh --only lease` measures "
            f"this alone): two `mcpd serve` on one PostgreSQL with `--lease-pass-seconds {first['pass_s']}`; the "
            f"holder is stopped at a random point of its pass and the other's `/collector/status` read every "
            f"{first.get('poll_ms', 20)} ms until it says held — " + "; ".join(parts) + ". After `kill -9` the "
            "survivor waits out the dead holder's lease (it expires three passes after its last renewal, so 2–3 "
            "passes after the kill)" + (f", then takes it {spread(reaction)} ms after it ran out (the store's "
                                      "expires_at_ms against the kill)" if reaction else "") + "; after SIGTERM the holder releases it and the other takes it at its next pass. "
            "Both status pages, read in turn every "
            f"{first.get('poll_ms', 20)} ms throughout, " + (f"showed two holders at once in {two} runs."
                                                             if two else "never showed two holders at once.")]


def backlog_rps(res):
    """Accept rates by the number of entries waiting in the spool."""
    backlog = {}
    for r in res.kind("load", subject="relay-backlog"):
        backlog.setdefault(r["backlog"], []).append(r["rps"])
    return backlog


def in_short(res):
    """The figures a reader quotes, in one place: the README points here rather than copying them."""
    out = ["## In short", ""]
    b, relay, relay_spread = res.rps("B-1k"), res.rps("relay-1k"), spread(r["rps"] for r in res.saturated("relay-1k"))
    if relay:
        out.append(f"- Durable accept, 1 KiB, delivery running: **{relay_spread} req/s**, {ratio(relay, b)} ceiling B "
                   f"(nginx → nginx, no durability).")
    half = offered_load(res).get(("relay-1k", 0.5))
    if half:
        out.append(f"- p99 at about half the saturating rate: **{median(r['p99_ms'] for r in half):.2f} ms** "
                   f"({num(median(r['rps'] for r in half))} req/s).")
    backlog = backlog_rps(res)
    if 0 in backlog and len(backlog) > 1:
        top = max(backlog)
        restart = [x for x in res.kind("restart") if x["backlog"] == top]
        out.append(f"- With {num(top)} entries waiting: accept {ratio(median(backlog[top]), median(backlog[0]))} of "
                   "an empty spool" + (f"; launch → first 2xx {restart[0]['serving_ms'] / 1000:.1f} s" if restart
                                      else "") + ".")
    for d in res.kind("drain"):
        out.append(f"- A backlog drains at **{num(d['entries'] / max(d['drain_ms'], 1) * 1000)} entries/s** "
                   "(default options, upstream nginx on loopback: one request per entry, in the window).")
    sqlite, postgres = res.rps("collector-sqlite"), res.rps("collector-postgres")
    if sqlite:
        out.append(f"- The collector archives {num(sqlite)} batches/s on SQLite"
                   + (f", {num(postgres)} on PostgreSQL." if postgres else "."))
    archive, drain = wan_rates(res, "archive", "serve"), wan_rates(res, "drain", "serve")
    if 0 in archive and 80 in archive:
        line = (f"- Across a long link, to `mcpd serve` (batches, HTTP/2): at 80 ms of round trip the relay delivers "
                f"{ratio(median(archive[80]), median(archive[0]))} of its 0 ms rate")
        if 200 in archive:
            line += f", at 200 ms {ratio(median(archive[200]), median(archive[0]))}"
        if drain:
            line += "; a backlog drains at " + ", ".join(f"{num(median(drain[rtt]))}/s ({rtt:g} ms)"
                                                           for rtt in sorted(drain))
        out.append(line + ".")
    merged = sustained_runs(res).get(("otlp", 80))
    if merged:
        line = (f"- To an OTLP receiver (merged OTLP requests), sustained at 80 ms of round trip: "
                f"{median(s['delivered_ratio'] for s in merged):.2f}× of what was accepted is delivered, "
                f"{num(median(s['delivered'] / s['seconds'] for s in merged))} entries/s, "
                f"{median(s['requests_per_entry'] for s in merged):.3f} requests per entry")
        drain = wan_rates(res, "drain", "otlp")
        if drain:
            line += "; a backlog drains at " + ", ".join(f"{num(median(drain[rtt]))}/s ({rtt:g} ms)"
                                                           for rtt in sorted(drain))
        out.append(line + ".")
    large = [r for r in res.kind("large-bodies") if r["label"] == "default"]
    if large:
        out.append(f"- 40 concurrent 16 MiB uploads: peak RSS {num(median(r['peak_rss_mib'] for r in large))} MiB "
                   "with the default heap (all taken); a smaller heap takes fewer at once and tells the rest to "
                   "retry (below).")
    return out + [""]


def report(res, plots_dir, plots_link):
    m = res.machine
    b1, a1 = res.rps("B-1k"), res.rps("A-1k")
    relay1, relay16, b16 = res.rps("relay-1k"), res.rps("relay-16k"), res.rps("B-16k")
    md = ["# Benchmarks", "",
          "**Generated by `bench/run.sh`** (" + ("`--quick`: a smoke run, figures not comparable" if m["quick"]
                                                 else "full run") + f", {m['date']}). Do not edit by hand: run "
          "`bench/run.sh` (it installs wrk, nginx and gnuplot from Debian's packages, builds the jar if needed, and "
          "takes about an hour). Every figure is the median of its repetitions with (min–max); the subjects "
          "alternate within each repetition, so the ceilings and the relay share the same noise. The load generator "
          "(wrk, 2 threads) runs on the same 2 cores as the server under test.", "",
          f"**Machine**: {m['cpu']}, {m['cores']} cores, {num(m['memory_mib'])} MiB; Linux {m['kernel']}; spool file "
          f"system {m['fs']}; {m['java']}; nginx {m['nginx']}; wrk {m['wrk']}. The relay runs as shipped "
          "(`bin/mcpd`: SerialGC, 64 MiB young generation, the class-data archive of `bin/cds-archive`).", "",
          ] + in_short(res) + cost_section(res) + [
          "## Ratios (what holds from one machine to another)", "",
          "| ratio | value |", "|---|---|",
          f"| relay accept / ceiling B (1 KiB) | {ratio(relay1, b1)} |",
          f"| relay accept / ceiling A (1 KiB) | {ratio(relay1, a1)} |",
          f"| relay accept / ceiling C, one file + fsync + rename + dir fsync per record | "
          f"{ratio(relay1, res.disk('file'))} |",
          f"| relay accept / ceiling C, append + one fdatasync per record | {ratio(relay1, res.disk('append-1'))} |",
          f"| relay accept / ceiling C, append + one fdatasync per 64 records | "
          f"{ratio(relay1, res.disk('append-64'))} |",
          f"| relay accept / ceiling B (16 KiB) | {ratio(relay16, b16)} |", "",
          "## Targets (issues 7 and 14)", ""] + targets(res) + [
          "", "## Ceilings", "",
          "A and B: nginx (2 workers), `keepalive_requests` unlimited, 64 connections, POST with the same body as the "
          "relay gets. C: `bench/DiskProbe.java`, one thread, 1 KiB records, on the spool's file system.", ""]
    md += load_table(res, [("A-1k", "A: nginx `return 200`"), ("B-1k", "B: nginx → nginx (keep-alive)"),
                           ("B-16k", "B: nginx → nginx (keep-alive)")])
    md += ["", "| C: durable write pattern | records/s |", "|---|---|"]
    for pattern, label in (("file", "one file + fsync + rename + directory fsync per record"),
                           ("append-1", "append + fdatasync per record"),
                           ("append-8", "append + one fdatasync per 8 records"),
                           ("append-64", "append + one fdatasync per 64 records")):
        md.append(f"| {label} | {spread(r['records_per_s'] for r in res.kind('disk', pattern=pattern))} |")
    md += ["", "## The relay: accept path", "",
           "`mcpd relay` delivering to nginx `return 200` (so delivery runs during the measurement); every 2xx "
           "left after its request was fdatasynced in the spool. Between subjects the harness waits for the spool "
           "to drain, so no run pays for the previous one's delivery.", ""]
    md += load_table(res, [("relay-1k", "relay"), ("relay-16k", "relay")])
    md += ["", "## Latency against offered load", "",
           "Each of the 64 connections waits a fixed pause after every answer (wrk `delay()`), chosen as a fraction "
           "of the subject's own saturating rate; the achieved rate is what the pause allowed.", "",
           "| subject | target fraction | achieved req/s | p50 ms | p99 ms | p99.9 ms |", "|---|---|---|---|---|---|"]
    for (subject, fraction), rows in sorted(offered_load(res).items(), key=lambda kv: (kv[0][0], kv[0][1])):
        md.append(f"| {subject} | {fraction} | {spread(r['rps'] for r in rows)} | "
                  f"{spread((r['p50_ms'] for r in rows), '{:.2f}')} | {spread((r['p99_ms'] for r in rows), '{:.2f}')} | "
                  f"{spread((r['p999_ms'] for r in rows), '{:.2f}')} |")
    md += ["", f"![latency against load]({plots_link}/latency-vs-load.png)", "",
           "## Sustained load with delivery", "",
           "| load | seconds | accepted/s | delivered/s | spool entries before → after | peak RSS MiB |",
           "|---|---|---|---|---|---|"]
    for s in res.kind("sustained"):
        label = "full (64 connections, no pause)" if s["label"] == "full" else "paced at half of ceiling B"
        md.append(f"| {label} | {s['seconds']:.0f} | {num(s['accepted'] / s['seconds'])} | "
                  f"{num(s['delivered'] / s['seconds'])} | {num(s['entries_before'])} → {num(s['entries_after'])} | "
                  f"{s['peak_rss_mib']} |")
    samples = res.kind("sustained-sample")
    if samples:
        md += ["", "Spool entries every 5 s: " + "; ".join(
            lab + ": " + ", ".join(str(x["entries"]) for x in samples if x["label"] == lab)
            for lab in dict.fromkeys(x["label"] for x in samples)) + "."]
    md += ["", "## Backlog scale", "",
           "The spool is filled with N distinct 1 KiB entries (`bench/FillSpool.java`, through the spool's own "
           "append path), the relay is started on it with its upstream down, and timed from launch to its first 2xx; "
           "then, after a warm-up whose requests wait in the spool too, the accept rate is measured as above (entries "
           "waiting during the runs: the fill, the warm-up and the earlier runs). The largest backlog is then drained "
           "into nginx.", "",
           "| entries filled | launch → first 2xx | RSS after start MiB | entries waiting during the runs | accept req/s "
           "| p99 ms | accept / empty spool |",
           "|---|---|---|---|---|---|---|"]
    base = None
    for restart in res.kind("restart"):
        rows = [r for r in res.kind("load", subject="relay-backlog") if r["backlog"] == restart["backlog"]]
        rate = median(r["rps"] for r in rows)
        base = base or rate
        waiting = [r["waiting"] for r in rows if "waiting" in r]
        md.append(f"| {num(restart['backlog'])} | {restart['serving_ms'] / 1000:.1f} s | {restart['rss_mib']} | "
                  f"{num(min(waiting)) + '–' + num(max(waiting)) if waiting else '–'} | "
                  f"{spread(r['rps'] for r in rows)} | {spread((r['p99_ms'] for r in rows), '{:.2f}')} | "
                  f"{ratio(rate, base)} |")
    for d in res.kind("drain"):
        md += ["", f"Drain: {num(d['entries'])} entries delivered in {d['drain_ms'] / 1000:.1f} s = "
                   f"**{num(d['entries'] / max(d['drain_ms'], 1) * 1000)} entries/s** (default options: one "
                   "request per entry, in the window), the first "
                   f"{d['first_delivery_ms'] / 1000:.1f} s after the upstream came back; peak RSS "
                   f"{d['peak_rss_mib']} MiB."]
    md += ["", f"![accept rate against backlog]({plots_link}/backlog.png)", "", "## The collector", "",
           "`mcpd serve`, 1 KiB native batches (one event), each with its own `Idempotency-Key`, 64 connections.", ""]
    md += load_table(res, [("collector-sqlite", "SQLite (WAL, synchronous=FULL)"),
                           ("collector-postgres", "PostgreSQL (fsync on, synchronous_commit on)")])
    md += lease_prose(res)
    md += [""] + sweep_section(res) + wan_section(res, plots_link) + large_bodies(res) + grpc_section(res) + tls_section(res) + barrier_section(res) + health_section(res) \
        + dead_letters_section(res) + kafka_section(res)
    return "\n".join(md)


def cost_section(res):
    """The cost of one request (bench/cost.py): proxy_pass, the relay delivering, the relay accepting, side by side."""
    loads = res.kind("cost-load")
    if not loads:
        return []
    by = {subject: [r for r in loads if r["subject"] == subject]
          for subject in ("nginx-proxy", "relay-delivering", "relay-accepting")}
    proxy = median(r["rps"] for r in by["nginx-proxy"])
    full, accept = by["relay-delivering"], by["relay-accepting"]
    accepted = median(r["accepted_per_s"] for r in full)
    delivered = median(r["delivered_per_s"] for r in full)
    only = median(r["accepted_per_s"] for r in accept)
    cpu_full = median(r["cpu_us_per_entry"] for r in full)
    jit = max(median(r["jit_share"] for r in full), median(r["jit_share"] for r in accept))
    peaks = {p["subject"]: p["peak_rss_mib"] for p in res.kind("cost-process")}
    backlog = res.kind("cost-backlog")[-1:]
    md = ["## The cost of one request", "",
          "`bench/cost.py`, each repetition in turn on the same machine: nginx `proxy_pass` to nginx `return 200` (a "
          "relay without durability); the relay delivering to that nginx, one request per entry; the relay with its "
          "upstream down (accept only). wrk `-t2 -c64`, 1 KiB POSTs, each relay warmed up first; accepted and "
          "delivered from the relay's own metrics, CPU from `/proc/PID/stat`, the JIT's share from its compiler "
          "threads' ticks.", "",
          "| subject | requests/s | accepted/s | delivered/s | relay CPU per accepted entry µs | cores | JIT share "
          "of the relay's CPU | p99 ms | peak RSS MiB |", "|---|---|---|---|---|---|---|---|---|",
          f"| nginx proxy_pass | {spread(r['rps'] for r in by['nginx-proxy'])} | | | | | | | |"]
    for subject, label in (("relay-delivering", "relay → nginx"), ("relay-accepting", "relay, upstream down")):
        rows = by[subject]
        md.append(f"| {label} | {spread(r['rps'] for r in rows)} | {spread(r['accepted_per_s'] for r in rows)} | "
                  f"{spread(r['delivered_per_s'] for r in rows)} | {spread(r['cpu_us_per_entry'] for r in rows)} | "
                  f"{spread((r['cpu_cores'] for r in rows), '{:.2f}')} | "
                  f"{spread((100 * r['jit_share'] for r in rows), '{:.1f}')} % | "
                  f"{spread((r['p99_ms'] for r in rows), '{:.2f}')} | {peaks.get(subject, 0):.0f} |")
    md += ["", "| target | measured | met |", "|---|---|---|",
           f"| full load, delivery to nginx: accepted ≥ 0.5 × proxy_pass | {ratio(accepted, proxy)} | "
           f"{'yes' if accepted >= 0.5 * proxy else 'no'} |",
           f"| full load: delivered ≥ 0.95 × accepted | {ratio(delivered, accepted)} | "
           f"{'yes' if delivered >= 0.95 * accepted else 'no'} |",
           f"| accept only ≥ 0.7 × proxy_pass | {ratio(only, proxy)} | {'yes' if only >= 0.7 * proxy else 'no'} |",
           f"| relay CPU per accepted and delivered entry ≤ 80 µs | {cpu_full:.0f} µs | "
           f"{'yes' if cpu_full <= 80 else 'no'} |",
           f"| JIT ≤ 5 % of CPU after warm-up | {100 * jit:.1f} % | {'yes' if jit <= 0.05 else 'no'} |"]
    for b in backlog:
        cold_ratio = b["drain_cold_per_s"] / max(b["drain_warm_per_s"], 1)
        md += [f"| {num(b['entries'])} waiting: idle RSS ≤ 300 MiB | {b['idle_rss_mib']:.0f} MiB | "
               f"{'yes' if b['idle_rss_mib'] <= 300 else 'no'} |",
               f"| {num(b['entries'])} waiting: first 2xx ≤ 2 s after a restart | {b['first_2xx_s']:.2f} s | "
               f"{'yes' if b['first_2xx_s'] <= 2 else 'no'} |",
               f"| drain to mcpd serve, cold page cache ≥ 0.9 × warm | {cold_ratio:.2f}× "
               f"({num(b['drain_cold_per_s'])} vs {num(b['drain_warm_per_s'])} entries/s) | "
               f"{'yes' if cold_ratio >= 0.9 else 'no'} |",
               f"| both drains ≥ 11 100 entries/s | {num(min(b['drain_warm_per_s'], b['drain_cold_per_s']))} | "
               f"{'yes' if min(b['drain_warm_per_s'], b['drain_cold_per_s']) >= 11100 else 'no'} |"]
    all_peaks = list(peaks.values()) + [max(b["peak_rss_mib"], b.get("peak_rss_warm_mib", 0)) for b in backlog]
    if all_peaks:
        md.append(f"| peak RSS < 300 MiB in these phases | {max(all_peaks):.0f} MiB | "
                  f"{'yes' if max(all_peaks) < 300 else 'no'} |")
    for b in backlog:
        md += ["", f"Backlog: {num(b['entries'])} entries filled by `bench/FillSpool.java` in {b['fill_seconds']:.0f} s; "
                   f"the relay served its first 2xx {b['first_2xx_s']:.2f} s after launch, idle at "
                   f"{b['idle_rss_mib']:.0f} MiB; then drained to `mcpd serve` (SQLite) at "
                   f"{num(b['drain_warm_per_s'])} entries/s from the warm page cache and, after a restart and "
                   f"`echo 3 > /proc/sys/vm/drop_caches`{'' if b['caches_dropped'] else ' (which failed here)'}, at "
                   f"{num(b['drain_cold_per_s'])} entries/s from a cold one ({b['drain_seconds']} s windows); peak "
                   f"RSS during the warm drain {b.get('peak_rss_warm_mib', 0):.0f} MiB, the cold one {b['peak_rss_mib']:.0f} MiB."]
    return md + [""]


def dead_letters_section(res):
    rows = res.kind("dead-letters")
    if not rows:
        return []
    first = rows[0]
    ratio = sorted(r["replay_s"] / r["accept_s"] for r in rows)[len(rows) // 2]
    return ["## Dead letters replayed", "",
            f"`bin/mcpd relay` in front of an upstream that refuses with 422: {first['entries']} requests posted (one "
            "connection, one after the other: the baseline) all land in dead/; then the upstream takes them and "
            "`mcpd relay dead replay --all` hands them to the running relay (it returns once the relay took them all), "
            "and they are delivered (`bench/dead_letters.py`, run " + first["date"] + ", `bench/run.sh --only "
            "dead-letters` measures this phase alone). A replay is bound by forced writes: the CLI's copy of each "
            "entry, and the relay's append.", "",
            "| entries | posting them, s | replay, s | replay ÷ posting | delivered after the replay began, s |",
            "|---|---|---|---|---|",
            f"| {first['entries']} | {spread((r['accept_s'] for r in rows), '{:.2f}')} | "
            f"{spread((r['replay_s'] for r in rows), '{:.2f}')} | {ratio:.1f}× | "
            f"{spread((r['delivered_s'] for r in rows), '{:.2f}')} |", ""]


def health_section(res):
    rows = res.kind("health")
    if not rows:
        return []
    md = ["## Health checks", "",
          "`bin/mcpd relay` checking one `mcpd serve`, no traffic: the collector is killed, and once the relay shows it "
          "out of service in `/relay/status` (read every 50 ms) it is started again on the same port. \"Out of "
          "service after\" runs from the kill, \"back after\" from the moment the collector answers `/readyz` "
          "again (`bench/health.py`, run " + rows[0]["date"] + ", `bench/run.sh --only health` measures this phase "
          "alone).", "",
          "| settings | out of service after, s | back in service after, s |", "|---|---|---|"]
    for name, label in (("defaults", "defaults: interval 5 s, timeout 2 s, unhealthy 3, healthy 2"),
                        ("elb", "the ELB example: interval 6 s, timeout 3 s, 4 / 4")):
        runs = [r for r in rows if r["settings"] == name]
        if runs:
            md.append(f"| {label} | {spread((r['detect_s'] for r in runs), '{:.1f}')} | "
                      f"{spread((r['recover_s'] for r in runs), '{:.1f}')} |")
    return md + [""]


def barrier_section(res):
    latency = res.kind("barrier-latency")
    accept = res.kind("barrier-accept")
    if not latency and not accept:
        return []
    md = ["## The delivery barrier", ""]
    if latency:
        first = latency[0]
        md += ["`bin/mcpd relay` in front of `mcpd serve` (SQLite), directly and through `bench/delay_proxy.py`: each "
               f"sample posts {first['burst']} requests at once, then asks `GET /relay/sync` for the highest sequence "
               "number they were given; the time from the last accept's answer to the sync's 200 (`bench/barrier.py`, "
               "run " + first["date"] + ", `bench/run.sh --only barrier` measures this phase alone). \"Upstream "
               "took\" is the collector's own count against the entries posted: the barrier itself sends nothing.", "",
               "| RTT | samples | p50 ms | p99 ms | max ms | upstream took / posted |", "|---|---|---|---|---|---|"]
        for r in sorted(latency, key=lambda r: r["rtt_ms"]):
            md.append(f"| {r['rtt_ms']} ms | {r['samples']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                      f"{r['max_ms']:.1f} | {num(r['upstream_took'])} / {num(r['posted'])} |")
        md.append("")
    if accept:
        idle = [r["rps"] for r in accept if r["waiters"] == 0]
        busy = [r["rps"] for r in accept if r["waiters"] > 0]
        at_end = min((r["waiting_at_end"] for r in accept if r["waiters"] > 0), default=0)
        md += ["Accept with callers waiting: `bin/mcpd relay`, its upstream down, wrk (64 connections, 1 KiB native "
               f"batches, {accept[0]['seconds']} s per run) with no caller waiting and with 1 000 callers waiting on "
               "`/relay/sync` (one connection each; the relay's own count of waiters read 1 000 before each run and "
               f"at least {num(at_end)} at its end), alternating.", "",
               "| callers waiting | accepted req/s | against none waiting |", "|---|---|---|",
               f"| 0 | {spread(idle)} | 1.00× |",
               f"| 1 000 | {spread(busy)} | {ratio(median(busy), median(idle))} |", ""]
    return md


def cpu_per_request(runs):
    """The median of the relay's CPU time per accepted request, in microseconds."""
    runs = [r for r in runs if "relay_cpu_ticks" in r and r["accepted"]]
    return spread((r["relay_cpu_ticks"] / r["ticks_per_s"] * 1e6 / r["accepted"] for r in runs), "{:,.0f}")


def grpc_section(res):
    rows = res.kind("grpc-accept")
    if not rows:
        return []
    md = ["## OTLP/gRPC beside OTLP/HTTP", "",
          "The same 1 KiB message sent to `bin/mcpd relay` (upstream down: the accept path alone) as an OTLP/gRPC "
          "Export call (`…TraceService/Export`, `application/grpc`) and as `POST /v1/traces` "
          "(`application/x-protobuf`), by the same HTTP/2 client (h2load, cleartext), alternating; each call is "
          "durable before its answer either way (run " + rows[0]["date"] + ", `bench/run.sh --only grpc` measures "
          "this phase alone). h2load and the relay share the machine's two cores, so the relay's own CPU time per "
          "request (user + system, from /proc) is given beside the rates. \"accepted\" is the spool's own count "
          "against the requests h2load completed (h2load counts any HTTP 200, which a gRPC refusal is too; calls in "
          "flight when a run's time is up are accepted but not counted as completed).", "",
          "| shape | OTLP/HTTP req/s | OTLP/gRPC req/s | gRPC / HTTP | relay CPU µs per request, HTTP / gRPC | "
          "accepted / completed |",
          "|---|---|---|---|---|---|"]
    shapes = sorted({(r["connections"], r["streams"]) for r in rows}, key=lambda s: -s[0])
    for connections, streams in shapes:
        http = [r for r in rows if r["protocol"] == "http" and (r["connections"], r["streams"]) == (connections, streams)]
        grpc = [r for r in rows if r["protocol"] == "grpc" and (r["connections"], r["streams"]) == (connections, streams)]
        accepted = sum(r["accepted"] for r in http + grpc)
        completed = sum(r["requests"] for r in http + grpc)
        md.append(f"| {connections} connections × {streams} stream{'s' if streams > 1 else ''} | "
                  f"{spread(r['rps'] for r in http)} | {spread(r['rps'] for r in grpc)} | "
                  f"{ratio(median(r['rps'] for r in grpc), median(r['rps'] for r in http))} | "
                  f"{cpu_per_request(http)} / {cpu_per_request(grpc)} | {num(accepted)} / {num(completed)} |")
    return md + [""]


def tls_section(res):
    rows = res.kind("tls-accept")
    if not rows:
        return []
    md = ["## HTTPS on the listener", "",
          "Two `bin/mcpd relay` processes side by side (upstream down: the accept path alone), one with "
          "`--tls-cert`/`--tls-key` (ECDSA P-256, the JDK's TLS through Vert.x), loaded in turn by wrk with the same "
          "1 KiB POST: keep-alive on 64 connections, as an SDK's exporter sends, and a new connection for every request "
          "on 16 (`Connection: close`: a full handshake each, no resumption), each relay warmed first (run "
          + rows[0]["date"] + ", `bench/run.sh --only tls` measures this phase alone). wrk and the relays share the "
          "machine's two cores; the relay's own CPU (cores, user + system) is given beside the rates.", "",
          "| shape | HTTP req/s | HTTPS req/s | HTTPS / HTTP | HTTPS p99 ms | relay CPU cores, HTTP / HTTPS | "
          "non-2xx + socket errors |",
          "|---|---|---|---|---|---|---|"]
    names = {"keep-alive": "keep-alive, 64 connections", "per-request": "a connection per request, 16 connections"}
    for shape in ["keep-alive", "per-request"]:
        http = [r for r in rows if r["protocol"] == "http" and r["shape"] == shape]
        https = [r for r in rows if r["protocol"] == "https" and r["shape"] == shape]
        if not http or not https:
            continue
        errors = sum(r["non2xx"] + r["socket_errors"] for r in http + https)
        md.append(f"| {names[shape]} | {spread(r['rps'] for r in http)} | {spread(r['rps'] for r in https)} | "
                  f"{ratio(median(r['rps'] for r in https), median(r['rps'] for r in http))} | "
                  f"{spread((r['p99_ms'] for r in https), '{:,.1f}')} | "
                  f"{spread((r['cpu_cores'] for r in http), '{:.2f}')} / "
                  f"{spread((r['cpu_cores'] for r in https), '{:.2f}')} | {num(errors)} |")
    return md + [""]


def large_bodies(res):
    rows = res.kind("large-bodies")
    if not rows:
        return []
    first = rows[0]
    in_flight = first["count"] * first["size"] / 2 ** 20
    md = ["## Large bodies in flight", "",
          f"{first['count']} uploads of {first['size'] // 2 ** 20} MiB (the default `--max-body-bytes`) at once, each "
          "on its own connection with a `Content-Length` and no `Expect` (as SDKs send), into `bin/mcpd relay` with "
          "its upstream down (`bench/large_bodies.py`; run " + first["date"] + ", `bench/run.sh --only large-bodies` "
          "measures this phase alone). Request bodies may hold a quarter of the heap at once (at least one "
          "`--max-body-bytes` body); what does not fit is answered 503 + `Retry-After: 5` before its body is read. "
          f"All the bodies together are {num(in_flight)} MiB.", "",
          "| heap | answers | seconds | RSS before MiB | peak RSS MiB | peak RSS / bodies in flight | OutOfMemoryError |",
          "|---|---|---|---|---|---|---|"]
    for label, heap in (("default", "as shipped (max heap: a quarter of the machine's memory)"),
                        ("xmx384m", "`-Xmx384m`"), ("xmx256m", "`-Xmx256m`")):
        runs = [r for r in rows if r["label"] == label]
        if not runs:
            continue
        answers = {}
        for r in runs:
            for what, n in r["answers"].items():
                answers.setdefault(what, []).append(n)
        described = ", ".join(f"{spread(ns)} × {what.replace('+', ' + ').replace(':', ': ')}"
                              for what, ns in sorted(answers.items()))
        ooms = len(res.kind("large-bodies-oom", label=label))
        md.append(f"| {heap} | {described} | {spread((r['seconds'] for r in runs), '{:.1f}')} | "
                  f"{spread(r['rss_before_mib'] for r in runs)} | {spread(r['peak_rss_mib'] for r in runs)} | "
                  f"{ratio(median(r['peak_rss_mib'] for r in runs), in_flight)} | "
                  f"{'in ' + str(ooms) + ' of ' + str(len(runs)) + ' runs' if ooms else 'none'} |")
    return md + [""]


def main():
    results, markdown, plots_dir = sys.argv[1:4]
    res = Results(load(results))
    os.makedirs(plots_dir, exist_ok=True)
    plot(res, plots_dir)
    wan_plot(res, plots_dir)
    link = os.path.relpath(plots_dir, os.path.dirname(os.path.abspath(markdown)))
    with open(markdown, "w") as f:
        f.write(report(res, plots_dir, link))


if __name__ == "__main__":
    main()
