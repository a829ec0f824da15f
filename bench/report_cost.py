"""BENCHMARKS.md on the cost of one request beside nginx proxy_pass (bench/cost.py)."""
from report_common import median, num, ratio, spread, target_row


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


def limit_windows(res, subject, mode, window):
    return res.kind("cost-limit", subject=subject, mode=mode, window=window)


def limit_figures(res):
    """The relay against the limit of its job (bench/cost.py's limit phase): medians per subject, mode and window."""
    if not res.kind("cost-limit"):
        return None

    def med(subject, mode, window, key):
        return median((r[key] for r in limit_windows(res, subject, mode, window)), 0)
    figures = {}
    for mode in ("delivering", "accepting"):
        for subject in ("limit", "relay"):
            figures[subject, mode] = {
                "first": med(subject, mode, "first", "accepted_per_s"),
                "second": med(subject, mode, "second", "accepted_per_s"),
                "steady": med(subject, mode, "steady", "accepted_per_s"),
                "delivered": med(subject, mode, "steady", "delivered_per_s"),
                "cpu": med(subject, mode, "steady", "cpu_us_per_req_drained"),
                "p99": med(subject, mode, "steady", "p99_ms"),
                "half_rate": med(subject, mode, "half", "accepted_per_s"),
                "half_p99": med(subject, mode, "half", "p99_ms"),
                "rss": max((r["peak_rss_mib"] for r in res.kind("cost-limit-process", subject=subject, mode=mode)),
                           default=0)}
    return figures


def limit_section(res):
    """The relay beside the engineering limit of its job on the JVM, with the cost targets."""
    f = limit_figures(res)
    if f is None:
        return []
    reps = len({r["rep"] for r in res.kind("cost-limit")})
    md = ["## Beside the limit of the job", "",
          "`bench/cost.py` (its limit phase): the relay beside `bench/DurableLimit.java` — bare Vert.x from the "
          "relay's own jar that appends each body to one file, fdatasyncs in groups, answers 202 once its group is on "
          "disk and then POSTs the body upstream: the least the relay's job costs with the same libraries on the same "
          "disk (no Camel, no idempotency key, no metrics, no failover, no recovery). Both with the JVM options "
          "`bin/mcpd` gives the relay; each started fresh and alone, delivering to nginx `return 200`, then with its "
          f"upstream down (accept only); wrk `-t2 -c64`, 1 KiB POSTs, {reps} repetition(s), medians with (min–max). "
          "Windows: the first 10 s from a cold start, the 10 s after it, two steady windows after 40 s of load, and "
          "one paced at about half the steady rate. CPU per request counts every thread (JIT and GC too) until the "
          "upstream has everything accepted in the window.", "",
          "| subject | first 10 s /s | next 10 s /s | steady accepted /s | steady delivered /s | CPU µs per request "
          "| JIT share (steady) | p50 / p99 ms (steady) | half rate /s: p99 ms | peak RSS MiB |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for mode, label in (("delivering", "→ nginx"), ("accepting", "upstream down")):
        for subject in ("limit", "relay"):
            rows = {w: limit_windows(res, subject, mode, w) for w in ("first", "second", "steady", "half")}
            md.append(f"| {subject} {label} | {spread(r['accepted_per_s'] for r in rows['first'])} | "
                      f"{spread(r['accepted_per_s'] for r in rows['second'])} | "
                      f"{spread(r['accepted_per_s'] for r in rows['steady'])} | "
                      f"{spread(r['delivered_per_s'] for r in rows['steady'])} | "
                      f"{spread(r['cpu_us_per_req_drained'] for r in rows['steady'])} | "
                      f"{spread((100 * r['jit_share'] for r in rows['steady']), '{:.1f}')} % | "
                      f"{spread((r['p50_ms'] for r in rows['steady']), '{:.1f}')} / "
                      f"{spread((r['p99_ms'] for r in rows['steady']), '{:.1f}')} | "
                      f"{spread(r['accepted_per_s'] for r in rows['half'])}: "
                      f"{spread((r['p99_ms'] for r in rows['half']), '{:.1f}')} | {f[subject, mode]['rss']:.0f} |")
    limit, relay = f["limit", "delivering"], f["relay", "delivering"]
    peaks = [v["rss"] for v in f.values()] + [p["peak_rss_mib"] for p in res.kind("cost-process")] + [
        max(b["peak_rss_mib"], b.get("peak_rss_warm_mib", 0)) for b in res.kind("cost-backlog")]
    md += ["", "| target (delivering to nginx, beside the limit in the same run) | measured | met |", "|---|---|---|",
           target_row("accepted = delivered after a 10 s warm-up ≥ 0.8 × the limit",
                      f"{ratio(relay['second'], limit['second'])} ({num(relay['second'])} vs "
                      f"{num(limit['second'])}/s; steady {ratio(relay['steady'], limit['steady'])})",
                      relay["second"] >= 0.8 * limit["second"]),
           target_row("CPU per delivered request ≤ 1.5 × the limit's",
                      f"{ratio(relay['cpu'], limit['cpu'])} ({relay['cpu']:.0f} vs {limit['cpu']:.0f} µs)",
                      relay["cpu"] <= 1.5 * limit["cpu"]),
           target_row("p99 at saturation ≤ 2 × the limit's",
                      f"{ratio(relay['p99'], limit['p99'])} ({relay['p99']:.1f} vs {limit['p99']:.1f} ms)",
                      relay["p99"] <= 2 * limit["p99"]),
           target_row("p99 at half the saturating rate ≤ 10 ms",
                      f"{relay['half_p99']:.1f} ms at {num(relay['half_rate'])}/s", relay["half_p99"] <= 10),
           target_row("first 10 s under load ≥ 0.8 × the steady rate",
                      f"{ratio(relay['first'], relay['steady'])} ({num(relay['first'])} vs {num(relay['steady'])}/s; "
                      f"the limit {ratio(limit['first'], limit['steady'])})", relay["first"] >= 0.8 * relay["steady"]),
           target_row("peak RSS < 300 MiB in every phase of this section and the next",
                      f"{max(peaks):.0f} MiB", max(peaks) < 300)]
    return md + [""]
