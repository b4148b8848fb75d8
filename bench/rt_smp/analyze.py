"""bench/rt_smp: each multicore plugin's judged run against the analysis of timing.toml with
the overhead a job cost in its calibration run charged (bootlab.rt.overheads).

The overhead charged is the 90th percentile, then the worst, of `response - wcet` of the
jobs that ran alone on their CPU in the calibration run (the larger of the two CPUs',
rounded up to the µs): measured on the same platform, in the same boot, but not in the run
it judges.  For the jobs still above their bound, the median time from release to start.

Given the boot's capture (whose console it reads) and host_steal.py's samples, it judges again with the host's share
taken out: the time the host kept a job's vCPU from running between the job's release and
its completion (the most of the vCPUs it ran on) is taken out of its overhead in the
calibration and added to its bound in the judged run.  That is the most the host can have
delayed the job (a stock task spins on its thread's CPU clock, which may go on while its
vCPU stands still): a job still above its bound is late for reasons the host does not
explain.  Only the time between the first and the last sample inside a job's window
counts.  Guest and host clocks are matched by the `==== rt_smp clock now at N nsecs ====`
lines bench.sh prints around every run (the guest's CLOCK_MONOTONIC, the trace's clock) and
their arrival times in the capture.

Usage: analyze.py CONSOLE.log|CAPTURE [HOST_STEAL] (the samples need the capture)"""

from __future__ import annotations

import math
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import linprog

from bootlab.rt.config import Config, load_config
from bootlab.rt.overheads import measure, with_overhead
from bootlab.rt.schedulability import analyze
from bootlab.rt.schedule import Schedule
from bootlab.rt.texttable import format_table
from bootlab.rt.trace import parse_trace
from bootlab.sources.bootlab_capture import console_bytes, iter_records, sniff, unescape
from bootlab.timeline import Boot

HERE = Path(__file__).parent
BLOCK = re.compile(r"==== rt_smp (\S+) (calibrate|judge) begin ====\n(.*?)==== rt_smp \1 \2 end rc=(\d+) ====", re.S)
CLOCK = re.compile(rb"==== rt_smp clock now at (\d+) nsecs ====")
ZERO = re.compile(rb"zero monotonic_ns=(\d+)")


def _lower_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """host = rate * guest + offset from clock lines (guest time read, host arrival time).
    A line reaches the host some time after the guest read its clock, never before, and on
    a busy host often milliseconds after, so a least-squares fit would be pulled up and
    tilted by the late ones: the line is the one below every point that lies closest to
    them all (a linear program, as network clock synchronisation fits one-way delays)."""
    cx, cy = x.mean(), y.min()
    dx, dy = x - cx, y - cy
    # minimise sum(dy - rate*dx - b) under rate*dx + b <= dy: maximise rate*sum(dx) + n*b
    # (sum(dx) is 0 after centring); rate within 1% of 1 (a guest's clock is not further off).
    fit = linprog(c=[-dx.sum(), -len(dx)], A_ub=np.column_stack([dx, np.ones_like(dx)]), b_ub=dy,
                  bounds=[(0.99, 1.01), (None, None)])
    if not fit.success:
        raise ValueError(f"the clock lines cannot be matched: {fit.message}")
    rate, b = fit.x
    return float(rate), float(cy + b - rate * cx)


class HostSteal:
    """What the host took from each vCPU (host_steal.py's samples), in guest time."""

    def __init__(self, capture: bytes, samples: str):
        host_zero, pairs = None, []
        for _lineno, t, flag, payload in iter_records(capture, "", Boot()):
            if flag == "!" and (z := ZERO.search(payload)):
                host_zero = int(z[1])
            elif flag == "|" and (c := CLOCK.search(unescape(payload))):
                pairs.append((int(c[1]), t))
        if host_zero is None or len(pairs) < 2:
            raise ValueError("the capture has no host zero or fewer than two clock lines")
        guest, host = np.array(pairs, dtype=float).T
        host += host_zero
        self.rate, offset = _lower_line(guest, host)
        self.lag_us = float(np.median(host - self.rate * guest - offset)) / 1e3
        rows = [line.split() for line in samples.splitlines() if line and not line.startswith("#")]
        # a sampler stopped mid-line leaves a short last one
        rows = [r for r in rows if len(r) == len(rows[0])] if rows else rows
        if len(rows) < 2:
            raise ValueError("fewer than two samples of the host")
        data = np.array(rows, dtype=np.int64)
        self.at = (data[:, 0] - offset) / self.rate  # each sample's guest ns
        # per vCPU (the header's order: CPU 0, 1, ...), the wall time since the first
        # sample not spent running on the host.  The kernel brings a running thread's CPU
        # time up to date at its ticks and switches only, so one interval's difference can
        # be off by a tick either way; a window's, between two samples, only at its ends.
        wall = data[:, 0] - data[0, 0]
        self.off = [wall - (data[:, 1 + cpu] - data[0, 1 + cpu]) for cpu in range(data.shape[1] - 1)]

    def stolen(self, cpu: int, start: int, end: int) -> int:
        """Time the host kept vCPU `cpu` still within [start, end] (guest ns): between the
        first and the last sample inside it."""
        first = int(np.searchsorted(self.at, start, "left"))
        last = int(np.searchsorted(self.at, end, "right")) - 1
        if cpu >= len(self.off) or last <= first:
            return 0
        return max(0, int(self.off[cpu][last] - self.off[cpu][first]))

    def by_job(self, schedule: Schedule) -> dict[tuple[int, int], int]:
        """Per job, the most the host stole from one of the vCPUs it ran on between its
        release and its completion."""
        cpus: dict[tuple[int, int], set[int]] = {}
        for g in schedule.segments:
            cpus.setdefault((g.owner, g.job), set()).add(g.cpu)
        return {key: max((self.stolen(cpu, j.release, j.completion) for cpu in cpus.get(key, ())), default=0)
                for key, j in schedule.jobs.items() if j.release is not None and j.completion is not None}


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


def _judged(schedule: Schedule, config: Config, overhead_us: int,
            stolen: dict[tuple[int, int], int] | None = None) -> tuple[int, int, list[int]]:
    """Jobs above their bound with `overhead_us` charged (and what the host stole from each),
    jobs of tasks left without a bound, and the start latencies (ns) of the jobs above."""
    analysis = analyze(with_overhead(config, overhead_us))
    above, unbounded, late = 0, 0, []
    for key, job in schedule.jobs.items():
        if job.completion is None:
            continue
        bound = analysis.task_bound_ns(job.task)
        if bound is None:
            unbounded += 1
        elif job.response > bound + (stolen or {}).get(key, 0):
            above += 1
            late.append(job.start - job.release)
    return above, unbounded, late


def _charged(calibration: Schedule, judged: Schedule, config: Config,
             steal: HostSteal | None = None) -> list:
    """For the calibration's p90 and worst overhead: the overhead (µs), the judged run's jobs
    above their bound, and the median start latency (ms) of those; with `steal`, the host's
    share taken out of the overhead and added to each judged job's bound."""
    overheads = measure(calibration, steal.by_job(calibration) if steal else None)
    stolen = steal.by_job(judged) if steal else None
    row = []
    for statistic in ("p90", "worst"):
        overhead_us = math.ceil(max(getattr(o, statistic) for o in overheads) / 1000) if overheads else 0
        above, unbounded, late = _judged(judged, config, overhead_us, stolen)
        row += [overhead_us, f"{above}" + (f" (+{unbounded} without bound)" if unbounded else ""),
                f"{statistics.median(late) / 1e6:.2f}" if late else "-"]
    return row


def main(log: str, samples: str | None = None) -> int:
    try:
        data = Path(log).read_bytes()
        capture = sniff(data) > 0
        if samples and not capture:
            raise ValueError("the host's samples are placed by a capture's arrival times: give the capture")
        text = (console_bytes(data) if capture else data).decode(errors="replace")
        steal = HostSteal(data, Path(samples).read_text()) if samples else None
    except OSError as err:
        print(f"{err.filename}: cannot read: {err.strerror}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"{log}, {samples}: {err}", file=sys.stderr)
        return 2
    rows, host_rows = [], []
    for plugin, rounds in runs(text).items():
        if set(rounds) != {"calibrate", "judge"}:
            print(f"{plugin}: a run is missing from the console", file=sys.stderr)
            continue
        config = configuration(plugin)
        calibration, judged = rounds["calibrate"], rounds["judge"]
        rows.append([plugin, sum(j.completion is not None for j in judged.jobs.values()),
                     sum(j.missed(judged.end) for j in judged.jobs.values()), _judged(judged, config, 0)[0],
                     *_charged(calibration, judged, config),
                     sum(j.migrations for j in judged.jobs.values()),
                     " / ".join(f"{(j.median) / 1000:.0f}" for j in measure(judged))])
        if steal:
            window = [(min(g.start for g in s.segments), s.end) for s in (calibration, judged)]
            host_rows.append([plugin, *(" / ".join(f"{steal.stolen(cpu, a, b) / 1e6:.1f}"
                                                    for cpu in range(len(steal.off))) for a, b in window),
                              *_charged(calibration, judged, config, steal)])
    if not rows:
        print(f"{log}: no rt_smp run found", file=sys.stderr)
        return 2
    print(format_table(["plugin", "jobs", "misses", "above plain bound",
                        "p90 overhead us", "above", "their start ms",
                        "worst overhead us", "above", "their start ms", "migrations", "median overhead us per CPU"], rows))
    if steal:
        print(f"\nWith the host's share taken out (the clock lines arrived a median {steal.lag_us:.0f} us "
              f"after the least delayed one; guest to host rate {steal.rate:.6f}):")
        print(format_table(["plugin", "host stole ms per vCPU, calibration", "judged",
                            "p90 overhead us", "above", "their start ms",
                            "worst overhead us", "above", "their start ms"], host_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]) if len(sys.argv) in (2, 3) else 2)
