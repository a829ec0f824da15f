"""BENCHMARKS.md on Kafka between relays and collectors (bench/kafka.py)."""
from report_common import median, num, spread, target_row


def kafka_targets(res):
    out = []
    runs = res.kind("kafka", phase="relay-to-kafka")
    if runs:
        x = median(r["delivered_per_s"] / r["accepted_per_s"] for r in runs)
        out.append(target_row("relay → Kafka at full load: delivered ≥ 0.95 × accepted (the spool flat)",
                              f"{x:.2f}× ({num(median(r['delivered_per_s'] for r in runs))} of "
                              f"{num(median(r['accepted_per_s'] for r in runs))} entries/s; spool at the end "
                              f"{spread(r['spool_at_end'] for r in runs)}; {len(runs)} runs)", x >= 0.95))
    archive = res.kind("kafka", phase="archive")
    if archive:
        x = median(r["two_per_s"] / r["one_per_s"] for r in archive)
        first = archive[0]
        out.append(target_row("two collectors on one topic archive ≥ 1.6 × one collector's rate",
                              f"{x:.2f}× ({num(median(r['two_per_s'] for r in archive))} vs "
                              f"{num(median(r['one_per_s'] for r in archive))} records/s, {first['store']}, "
                              f"{first['partitions']} partitions; bounded by the 2 cores the collectors, the store "
                              "and the broker share)", x >= 1.6))
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
