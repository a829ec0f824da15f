"""BENCHMARKS.md on collector replicas taking turns through the store's lease (bench/lease.py)."""
from report_common import median, num, spread


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
