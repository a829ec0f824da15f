"""BENCHMARKS.md on the relay's features measured one at a time: large bodies, OTLP/gRPC, HTTPS, the delivery
barrier, health checks, dead letters."""
from report_common import median, num, ratio, spread


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


def side_by_side(rows, first, second, **match):
    """The rows of two protocols measured in turn under the same shape (the fields in match)."""
    same = [r for r in rows if all(r[k] == v for k, v in match.items())]
    return [r for r in same if r["protocol"] == first], [r for r in same if r["protocol"] == second]


def rates_side_by_side(first, second):
    """Three cells: each protocol's requests/s and the second's against the first's."""
    return (f"{spread(r['rps'] for r in first)} | {spread(r['rps'] for r in second)} | "
            f"{ratio(median(r['rps'] for r in second), median(r['rps'] for r in first))}")


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
        http, grpc = side_by_side(rows, "http", "grpc", connections=connections, streams=streams)
        accepted = sum(r["accepted"] for r in http + grpc)
        completed = sum(r["requests"] for r in http + grpc)
        md.append(f"| {connections} connections × {streams} stream{'s' if streams > 1 else ''} | "
                  f"{rates_side_by_side(http, grpc)} | "
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
        http, https = side_by_side(rows, "http", "https", shape=shape)
        if not http or not https:
            continue
        errors = sum(r["non2xx"] + r["socket_errors"] for r in http + https)
        md.append(f"| {names[shape]} | {rates_side_by_side(http, https)} | "
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
