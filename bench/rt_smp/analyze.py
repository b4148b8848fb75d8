"""bench/rt_smp: each multicore plugin's judged run against the analysis of timing.toml with
the overhead a job cost in its calibration run charged (bootlab.rt.overheads).

The overhead charged is the 90th percentile, then the worst, of `response - wcet` of the
jobs that ran alone on their CPU, or alone after preempting, in the calibration run (the
larger of the two CPUs',
rounded up to the µs): measured on the same platform, in the same boot, but not in the run
it judges.  For the jobs still above their bound, how far above (the most) and the median
time from release to start.

The platform's grain: QEMU runs the vCPUs in turn, each its share of the span to the next
timer, which the metronome keeps below its beat (guest.toml, bench.sh): a vCPU may wait
for the others' shares of a beat, beat × (vCPUs − 1) / vCPUs, for its turn at any instant
(10 µs of a 20 µs beat on two), so an overhead measured on some jobs can miss the worst
phase by that much.  A job above its charged bound by no more than that
share is counted apart ("within the grain").

Usage: analyze.py CONSOLE.log"""

from __future__ import annotations

import math
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from bootlab.rt.config import Config, load_config
from bootlab.rt.overheads import above_bounds, measure
from bootlab.rt.schedule import Schedule
from bootlab.rt.texttable import format_table
from bootlab.rt.trace import parse_trace

HERE = Path(__file__).parent
BLOCK = re.compile(r"==== rt_smp (\S+) (calibrate|judge) begin ====\n(.*?)==== rt_smp \1 \2 end rc=(\d+) ====", re.S)
METRONOME = re.compile(r"==== rt_smp metronome period_us=(\d+) cpus=(\d+) ====")


def configuration(plugin: str, cpus: int | None = None) -> Config:
    """timing.toml as bench.sh loads it under `plugin` on the guest's `cpus` (default its
    own): the partitioned plugins place worst-fit (first-fit would put the whole set on CPU 0)."""
    base = load_config(HERE / "timing.toml")
    return replace(base, plugin=plugin, cpus=cpus or base.cpus,
                   assignment="worst-fit" if plugin.startswith("partitioned") else base.assignment)


def runs(text: str) -> dict[str, dict[str, Schedule]]:
    out: dict[str, dict[str, Schedule]] = {}
    for plugin, round_, body, _rc in BLOCK.findall(text):
        out.setdefault(plugin, {})[round_] = Schedule.from_trace(parse_trace(body))
    return out


def platform(text: str) -> tuple[int | None, int]:
    """The guest's CPUs, and the longest a vCPU waits for its turn: the other vCPUs' shares
    of the metronome's beat (None and 0 when the console names no metronome: a simulated
    run)."""
    m = METRONOME.search(text)
    if not m:
        return None, 0
    beat, cpus = int(m[1]) * 1000, int(m[2])
    return cpus, beat * (cpus - 1) // cpus


def charged(calibration: Schedule, judge: Schedule, config: Config, grain: int) -> list:
    """For the calibration's p90 and worst overhead: the overhead (µs), the judged run's jobs
    above their bound (those within the grain apart), the most one is above (µs) and the
    median start latency (ms) of those."""
    overheads = measure(calibration)
    row = []
    for statistic in ("p90", "worst"):
        overhead_us = math.ceil(max(getattr(o, statistic) for o in overheads) / 1000) if overheads else 0
        above, unbounded = above_bounds(judge, config, overhead_us)
        within = sum(a.by <= grain for a in above)
        row += [overhead_us,
                f"{len(above)}" + (f" ({within} within the grain)" if above and grain else "")
                + (f" (+{unbounded} without bound)" if unbounded else ""),
                f"{max(a.by for a in above) / 1000:.1f}" if above else "-",
                f"{statistics.median(a.start_latency for a in above) / 1e6:.2f}" if above else "-"]
    return row


def main(log: str) -> int:
    try:
        text = Path(log).read_text(errors="replace").replace("\r\n", "\n")
    except OSError as err:
        print(f"{err.filename}: cannot read: {err.strerror}", file=sys.stderr)
        return 2
    cpus, grain = platform(text)
    rows = []
    for plugin, rounds in runs(text).items():
        if set(rounds) != {"calibrate", "judge"}:
            print(f"{plugin}: a run is missing from the console", file=sys.stderr)
            continue
        config = configuration(plugin, cpus)
        calibration, judge = rounds["calibrate"], rounds["judge"]
        rows.append([plugin, sum(j.completion is not None for j in judge.jobs.values()),
                     sum(j.missed(judge.end) for j in judge.jobs.values()), len(above_bounds(judge, config)[0]),
                     *charged(calibration, judge, config, grain),
                     sum(j.migrations for j in judge.jobs.values()),
                     " / ".join(f"{(j.median) / 1000:.0f}" for j in measure(judge))])
    if not rows:
        print(f"{log}: no rt_smp run found", file=sys.stderr)
        return 2
    if grain:
        print(f"grain: a vCPU waits up to {grain / 1000:g} us for its turn (the other vCPUs' shares of the metronome's beat)")
    print(format_table(["plugin", "jobs", "misses", "above plain bound",
                        "p90 overhead us", "above", "most us", "their start ms",
                        "worst overhead us", "above", "most us", "their start ms",
                        "migrations", "median overhead us per CPU"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]) if len(sys.argv) == 2 else 2)
