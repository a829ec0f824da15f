"""BENCHMARKS.md on ordered streams: Prometheus remote write through the relay to a Prometheus (bench/remote_write.py)
and OTLP metrics as one ordered stream across a long link (bench/wan.py, upstream otlp-metrics)."""
from report_common import median, num, spread, target_row


def metrics_runs(res):
    """{(label, rtt): [sustained runs]} of OTLP metrics exports to /v1/metrics, one ordered stream."""
    runs = {}
    for s in res.kind("wan", phase="sustained", upstream="otlp-metrics"):
        runs.setdefault((s.get("label", "relay"), s["rtt_ms"]), []).append(s)
    return runs


def ordered_targets(res):
    out = []
    outages = res.kind("remote-write", phase="outages")
    if outages:
        missing = median(r["missing"] for r in outages)
        refused = median(r["dead_letters"] + r["out_of_order_lines"] for r in outages)
        out.append(target_row(
            "Prometheus remote write through the relay: 0 samples missing, 0 requests refused across an outage of "
            "the receiver, a kill -9 and a restart with a backlog (median of 3)",
            f"missing {spread(r['missing'] for r in outages)} of {spread(r['samples_in_a'] for r in outages)} "
            f"samples, refused {spread(r['dead_letters'] + r['out_of_order_lines'] for r in outages)} "
            f"({len(outages)} runs)", len(outages) >= 3 and missing == 0 and refused == 0))
    for r in [s for s in res.kind("remote-write", phase="sustained") if s["rtt_ms"] == 80]:
        out.append(target_row(
            f"one ordered stream at 80 ms: remote write of {num(r['samples_sent_per_s'])} samples/s delivered "
            "≥ 0.95 × accepted", f"{r['delivered_ratio']:.2f}× ({num(r['accepted'] / r['seconds'])} entries/s)",
            r["delivered_ratio"] >= 0.95))
    for (label, rtt), runs in metrics_runs(res).items():
        if rtt == 80:
            ratio = median(s["delivered_ratio"] for s in runs)
            out.append(target_row(
                f"one ordered stream at 80 ms: OTLP metrics at the OTLP bench's load ({label}) delivered ≥ 0.95 × "
                "accepted", f"{ratio:.2f}× ({spread(s['entries'] / s['seconds'] for s in runs)} accepted/s)",
                ratio >= 0.95))
    return out


def ordered_section(res):
    outages = res.kind("remote-write", phase="outages")
    sustained = res.kind("remote-write", phase="sustained")
    metrics = metrics_runs(res)
    if not (outages or sustained or metrics):
        return []
    md = ["## Ordered streams: Prometheus remote write and OTLP metrics", "",
          "`bench/remote_write.py`: Prometheus A (Debian's `prometheus`) scrapes a load of gauges every second and "
          "remote-writes it to the relay (`bin/mcpd`, default options); the relay's only upstream is Prometheus B "
          "(`--web.enable-remote-write-receiver`, no out-of-order window: it refuses an old sample for good), "
          "through `bench/delay_proxy.py` at the RTT given. `/api/v1/write` is an ordered path, so A's requests are "
          "one ordered stream: each request leaves only once the one before it is delivered and its delivery is on "
          "disk, and the requests waiting travel merged into one. `bench/run.sh --only ordered` measures this "
          "section alone.", ""]
    if outages:
        md += ["**Outages**: 20 s steady; B stopped for 20 s and started again; a backlog, then the relay killed "
               "(`kill -9`) and started on it; a backlog, then the relay stopped and started on it. Then every sample "
               "of the load in A over the whole window is counted in A and in B (PromQL `count_over_time`), and what "
               "B refused is counted: the relay's dead letters and B's `out of order` log lines.", "",
               "| run | RTT ms | series | window s | samples in A | missing in B | dead letters | B's out-of-order "
               "lines | backlog at the kill | backlog at the restart | last relay: entries / requests |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for i, r in enumerate(outages, 1):
            md.append(f"| {i} ({r['at']}) | {r['rtt_ms']:g} | {num(r['series'])} | {r['window_s']} | "
                      f"{num(r['samples_in_a'])} | {num(r['missing'])} | {r['dead_letters']} | "
                      f"{r['out_of_order_lines']} | {num(r['backlog_killed'])} | {num(r['backlog_restarted'])} | "
                      f"{num(r['last_relay_delivered'])} / {num(r['last_relay_requests'])} |")
        md.append("")
    if sustained:
        md += ["**Sustained**: A's load for the whole run with delivery running, after a warm-up; the relay's "
               "entries (A's requests) accepted and delivered, A's samples sent and B's samples appended per second.",
               "", "| RTT ms | series | seconds | samples sent/s | appended by B/s | entries accepted/s | "
               "delivered / accepted | spool entries after | requests per entry | dead letters | relay peak RSS MiB |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in sustained:
            md.append(f"| {r['rtt_ms']:g} | {num(r['series'])} | {r['seconds']:.0f} | {num(r['samples_sent_per_s'])} "
                      f"| {num(r['samples_appended_per_s'])} | {num(r['accepted'] / r['seconds'])} | "
                      f"{r['delivered_ratio']:.2f} | {num(r['entries_after'])} | {r['requests_per_entry']:.3f} | "
                      f"{r['dead_letters']} | {r.get('relay_peak_rss_mib', '–')} |")
        md.append("")
    if metrics:
        md += ["**OTLP metrics, one ordered stream** (`bench/wan.py --upstreams otlp-metrics --phases sustained`): "
               "32 senders post 1 KiB protobuf metrics exports to `/v1/metrics` as fast as the relay takes them, "
               "as the OTLP trace rows of \"Delivery across a long link\" do to `/v1/traces`; every sender shares "
               "one credential, so all of it is one ordered stream, delivered to `bench/otlp_upstream.py` through "
               "the delay proxy. One shipment of a stream is in flight at a time, so a stream passes at most one "
               "merged request per round trip (plus the forced write of its delivery record): "
               "`--batch-max-entries` and `--batch-max-bytes` bound what one request carries.", "",
               "| relay | RTT ms | runs | accepted/s | delivered/s | delivered / accepted | spool entries after | "
               "entries per request | relay peak RSS MiB |", "|---|---|---|---|---|---|---|---|---|"]
        for (label, rtt), runs in sorted(metrics.items(), key=lambda item: (item[0][1], item[0][0])):
            md.append(f"| {label} | {rtt:g} | {len(runs)} × {runs[0]['seconds']:.0f} s | "
                      f"{spread(s['entries'] / s['seconds'] for s in runs)} | "
                      f"{spread(s['delivered'] / s['seconds'] for s in runs)} | "
                      f"{median(s['delivered_ratio'] for s in runs):.2f} | "
                      f"{spread(s['entries_after'] for s in runs)} | "
                      f"{spread(1 / max(s['requests_per_entry'], 1e-9) for s in runs)} | "
                      f"{max(s['peak_rss_mib'] for s in runs)} |")
        md.append("")
    return md
