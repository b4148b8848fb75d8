"""bench/rt_smp: each multicore plugin's judged run against the analysis of timing.toml with
the overhead a job cost in its calibration run charged (bootlab.rt.overheads).

The overhead charged is the 90th percentile, then the worst, of `response - wcet` of the
jobs that ran alone on their CPU in the calibration run (the larger of the two CPUs',
rounded up to the µs): measured on the same platform, in the same boot, but not in the run
it judges.  For the jobs still above their bound, the median time from release to start.

Usage: analyze.py CONSOLE.log"""

from __future__ import annotations

import math
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from bootlab.rt.config import Config, load_config
from bootlab.rt.overheads import measure, with_overhead
from bootlab.rt.schedulability import analyze
from bootlab.rt.schedule import Schedule
from bootlab.rt.texttable import format_table
from bootlab.rt.trace import parse_trace

HERE = Path(__file__).parent
BLOCK = re.compile(r"==== rt_smp (\S+) (calibrate|judge) begin ====\n(.*?)==== rt_smp \1 \2 end rc=(\d+) ====", re.S)


def configuration(plugin: str) -> Config:
    """timing.toml as bench.sh loads it under `plugin`: the partitioned plugins place
    worst-fit (first-fit would put the whole set on CPU 0)."""
    base = load_config(HERE / "timing.toml")
    return replace(base, plugin=plugin, assignment="worst-fit" if plugin.startswith("partitioned") else base.assignment)


def runs(text: str) -> dict[str, dict[str, Schedule]]:
    out: dict[str, dict[str, Schedule]] = {}
    for plugin, round_, body, _rc in BLOCK.findall(text.replace("\r\n", "\n")):
        out.setdefault(plugin, {})[round_] = Schedule.from_trace(parse_trace(body))
    return out


def _judged(schedule: Schedule, config: Config, overhead_us: int) -> tuple[int, int, list[int]]:
    """Jobs above their bound with `overhead_us` charged, jobs of tasks left without a bound,
    and the start latencies (ns) of the jobs above."""
    analysis = analyze(with_overhead(config, overhead_us))
    above, unbounded, late = 0, 0, []
    for job in schedule.jobs.values():
        if job.completion is None:
            continue
        bound = analysis.task_bound_ns(job.task)
        if bound is None:
            unbounded += 1
        elif job.response > bound:
            above += 1
            late.append(job.start - job.release)
    return above, unbounded, late


def main(console: str) -> int:
    rows = []
    try:
        text = Path(console).read_text(errors="replace")
    except OSError as err:
        print(f"{console}: cannot read: {err.strerror}", file=sys.stderr)
        return 2
    for plugin, rounds in runs(text).items():
        if set(rounds) != {"calibrate", "judge"}:
            print(f"{plugin}: a run is missing from the console", file=sys.stderr)
            continue
        config = configuration(plugin)
        calibration = measure(rounds["calibrate"])
        judged = rounds["judge"]
        row = [plugin, sum(j.completion is not None for j in judged.jobs.values()),
               sum(j.missed(judged.end) for j in judged.jobs.values()), _judged(judged, config, 0)[0]]
        for statistic in ("p90", "worst"):
            overhead_us = math.ceil(max(getattr(o, statistic) for o in calibration) / 1000) if calibration else 0
            above, unbounded, late = _judged(judged, config, overhead_us)
            row += [overhead_us, f"{above}" + (f" (+{unbounded} without bound)" if unbounded else ""),
                    f"{statistics.median(late) / 1e6:.2f}" if late else "-"]
        row += [sum(j.migrations for j in judged.jobs.values()),
                " / ".join(f"{(j.median) / 1000:.0f}" for j in measure(judged))]
        rows.append(row)
    if not rows:
        print(f"{console}: no rt_smp run found", file=sys.stderr)
        return 2
    print(format_table(["plugin", "jobs", "misses", "above plain bound",
                        "p90 overhead us", "above", "their start ms",
                        "worst overhead us", "above", "their start ms", "migrations", "median overhead us per CPU"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]) if len(sys.argv) == 2 else 2)
