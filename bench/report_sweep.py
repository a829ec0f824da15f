"""BENCHMARKS.md on the collector's retention sweep under ingest (bench/sweep.py)."""
from report_common import median, num, spread


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
