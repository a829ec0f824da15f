#!/usr/bin/env python3
"""Writes BENCHMARKS.md and its plots from the result lines of bench/run.sh.

Usage: bench/report.py RESULTS.jsonl BENCHMARKS.md PLOTS_DIR

Every figure is the median of its repetitions with (min–max); ratios are of medians measured in the same run.
"""
import os
import sys

from report_common import Results, gnuplot, load, median, num, ratio, spread
from report_cost import cost_section, limit_figures, limit_section
from report_kafka import kafka_section, kafka_targets
from report_lease import lease_prose, lease_targets
from report_ordered import ordered_section, ordered_targets
from report_relay import (barrier_section, dead_letters_section, grpc_section, health_section, large_bodies,
                          tls_section)
from report_sweep import sweep_section, sweep_targets
from report_wan import sustained_runs, wan_plot, wan_rates, wan_section, wan_targets


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
    out += ordered_targets(res)
    out += lease_targets(res)
    out += sweep_targets(res)
    out += kafka_targets(res)
    # Large bodies in flight are measured for their own sake (BENCHMARKS "Large bodies in flight"), not against this.
    peaks = [r["peak_rss_mib"] for r in res.rows if "peak_rss_mib" in r and not r["kind"].startswith("large-bodies")]
    if peaks:
        out.append(f"| RSS < 300 MiB throughout | peak {max(peaks)} MiB | {'yes' if max(peaks) < 300 else 'no'} |")
    return out


def backlog_rps(res):
    """Accept rates by the number of entries waiting in the spool."""
    backlog = {}
    for r in res.kind("load", subject="relay-backlog"):
        backlog.setdefault(r["backlog"], []).append(r["rps"])
    return backlog


def in_short(res):
    """The figures a reader quotes, in one place: the README points here rather than copying them."""
    out = ["## In short", ""]
    f = limit_figures(res)
    if f:
        when = max(r.get("at", res.machine["date"]) for r in res.kind("cost-limit"))[:10]
        limit, relay = f["limit", "delivering"], f["relay", "delivering"]
        out.append(f"- Beside the least its job costs on the JVM (bare Vert.x on the same disk, same run, {when}): "
                   f"accepts and delivers **{num(relay['steady'])} req/s** (1 KiB, 64 connections), "
                   f"{ratio(relay['steady'], limit['steady'])} the limit's {num(limit['steady'])}; "
                   f"**{relay['cpu']:.0f} µs** of CPU per request against {limit['cpu']:.0f}; p99 "
                   f"{relay['p99']:.1f} against {limit['p99']:.1f} ms; its first 10 s under load reach "
                   f"{ratio(relay['first'], relay['steady'])} of its steady rate (the limit's "
                   f"{ratio(limit['first'], limit['steady'])}).")
        accept_limit, accept_relay = f["limit", "accepting"], f["relay", "accepting"]
        out.append(f"- Accept only (upstream down): **{num(accept_relay['steady'])} req/s**, "
                   f"{ratio(accept_relay['steady'], accept_limit['steady'])} the limit's; "
                   f"{accept_relay['cpu']:.0f} against {accept_limit['cpu']:.0f} µs per request.")
    b, relay, relay_spread = res.rps("B-1k"), res.rps("relay-1k"), spread(r["rps"] for r in res.saturated("relay-1k"))
    if relay:
        out.append(f"- Durable accept, 1 KiB, delivery running: **{relay_spread} req/s**, {ratio(relay, b)} ceiling B "
                   f"(nginx → nginx, no durability; the {res.machine['date'][:10]} run, below).")
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
          ] + in_short(res) + limit_section(res) + cost_section(res) + [
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
    md += [""] + sweep_section(res) + wan_section(res, plots_link) + ordered_section(res) + large_bodies(res) + grpc_section(res) + tls_section(res) + barrier_section(res) + health_section(res) \
        + dead_letters_section(res) + kafka_section(res)
    return "\n".join(md)


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
