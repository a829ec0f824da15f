"""What every section of BENCHMARKS.md shares: the result rows, medians with their spread, number formats and
gnuplot."""
import json
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


def target_row(target, measured, met):
    """A row of the targets table: what is aimed at, what was measured, and whether it was met."""
    return f"| {target} | {measured} | {'yes' if met else 'no'} |"


def gnuplot(script):
    """Runs a gnuplot script on the PNG terminal every plot uses; a missing gnuplot costs the plot, not the report."""
    try:
        subprocess.run(["gnuplot"], input="set terminal pngcairo size 960,600 font ',10'\n" + script, text=True,
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"report: no plot ({e}: {getattr(e, 'stderr', '')})", file=sys.stderr)
