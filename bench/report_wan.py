"""BENCHMARKS.md on delivery across a long link (bench/wan.py): rates against round-trip time, drains, sustained load."""
import os

from report_common import gnuplot, median, num, ratio, spread


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


def sustained_runs(res):
    """{(upstream, rtt): [sustained runs]}, in the order the upstreams are named, then by RTT."""
    runs = {}
    # OTLP metrics (one ordered stream) have their own section: report_ordered.
    for s in sorted((s for s in res.kind("wan", phase="sustained") if s["upstream"] in WAN_NAMES), key=lambda s: (list(WAN_NAMES).index(s["upstream"]),
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
        later = sorted({WAN_NAMES[r["upstream"]] for r in res.kind("wan")
                        if r.get("at", "")[:10] in apart and r["upstream"] in WAN_NAMES})
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
