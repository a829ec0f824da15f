"""BENCHMARKS.md on the cost of one request beside nginx proxy_pass (bench/cost.py)."""
from report_common import median, num, ratio, spread


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
