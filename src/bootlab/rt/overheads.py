"""The framework's overhead per job: measured in a trace, charged in the analysis.

The analysis counts a job's wcet and nothing else, but each job also pays the platform's
and the framework's work around it: the timer interrupt that releases it, the wake-up, the
switch to it and away from it, its wait system call: about 12 µs a job in the reference
device under -icount, a fraction of a millisecond in a guest without it (the clock is the
host's but every instruction is emulated), where a response time the analysis bounds
exactly (fp) is then always above its bound.

Measured: a job that ran alone on its CPU (nothing else of its CPU held the CPU between its
release and its completion but the job it preempted, until the switch to it; it was never
preempted itself, its server did not run out of budget) took `response - wcet` more than the
analysis counts; that is its overhead.  Per CPU, the distribution over such jobs (`measure`).
A job that preempts is measured as one that starts on an idle CPU: the accounting charges it
the preemption's switches, and they cost more than a wake-up from idle (in the two-vCPU
guest a preempting job paid 48 us where no job that found its CPU idle paid more than 33).

Charged: the usual overhead accounting (Brandenburg's, as in LITMUS^RT's studies) inflates
each task's wcet by the overhead of one job, which covers its release and its two switches
(a preemption's switches are charged to the job that preempts).  The tasks stay where the
configuration's own analysis placed them (the kernel placed them so), only their
bounds grow (`with_overhead`).
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from dataclasses import dataclass, replace

from .config import Config
from .schedulability import analyze
from .schedule import Schedule, Segment


@dataclass(frozen=True)
class CpuOverhead:
    cpu: int
    jobs: int            # jobs that ran alone, measured
    median: int          # ns
    p90: int
    worst: int


def measure(schedule: Schedule) -> list[CpuOverhead]:
    """Per CPU, `response - wcet` of the jobs that ran alone (see the module's text); CPUs
    without such a job are left out."""
    own: dict[tuple[int, int], list[Segment]] = {}
    by_cpu: dict[int, list[Segment]] = {}
    for g in schedule.segments:
        own.setdefault((g.owner, g.job), []).append(g)
        by_cpu.setdefault(g.cpu, []).append(g)
    # One job holds a CPU at a time, so a CPU's segments sorted by start end in that order
    # too; the running maximum keeps the ends sorted where a damaged trace overlaps them
    # (a job is then rather not taken as alone).
    starts, ends = {}, {}
    for cpu, segments in by_cpu.items():
        segments.sort(key=lambda g: g.start)
        starts[cpu] = [g.start for g in segments]
        ends[cpu] = list(itertools.accumulate((g.end for g in segments), max))
    depleted: dict[int, list[int]] = {}
    for p in schedule.periods:
        if p.depleted_at is not None:
            depleted.setdefault(p.server, []).append(p.depleted_at)
    found: dict[int, list[int]] = {}
    for (task, job), j in schedule.jobs.items():
        wcet = schedule.tasks.get(task, {}).get("wcet")
        mine = own.get((task, job), [])
        if j.release is None or j.completion is None or not isinstance(wcet, int) or len(mine) != 1:
            continue
        cpu = mine[0].cpu
        # Its own segment is the only one on its CPU between its release and its completion,
        # but for the one it preempted.
        lo = bisect.bisect_right(ends[cpu], j.release)
        hi = bisect.bisect_left(starts[cpu], j.completion)
        others = [g for g in by_cpu[cpu][lo:hi] if g is not mine[0] and g.end > j.release]
        if others and not (len(others) == 1 and _preempted_at(others[0], mine[0].start, schedule)):
            continue
        server = schedule.task_server(task)
        if server is not None and any(j.release <= t <= j.completion for t in depleted.get(server, ())):
            continue
        found.setdefault(cpu, []).append(max(0, j.response - wcet))
    return [CpuOverhead(cpu, len(values), int(statistics.median(values)), _percentile(values, 0.9), max(values))
            for cpu, values in sorted(found.items())]


def _preempted_at(g: Segment, at: int, schedule: Schedule) -> bool:
    """Whether segment `g` is a job preempted at `at` (its job goes on after it), not one
    that completed there: a job that waited for another to complete paid for its work."""
    held = schedule.jobs.get((g.owner, g.job))
    return g.end == at and held is not None and (held.completion is None or held.completion > g.end)


def _percentile(values: list[int], fraction: float) -> int:
    """The smallest value at least `fraction` of the values do not exceed (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * fraction) - 1)]


def with_overhead(config: Config, overhead_us: int) -> Config:
    """The configuration charged `overhead_us` more a job (its overhead_us, which the analysis
    charges: schedulability.charged), its tasks kept on the CPUs the configuration itself
    gives them (partitioned plugins)."""
    if overhead_us <= 0:
        return config
    if config.multicore == "semi-partitioned":
        raise ValueError("a semi-partitioned configuration charged afterwards would be split otherwise than "
                         "the kernel split it: give it overhead_us instead (rtctl splits with it)")
    tasks = config.tasks
    if config.multicore == "partitioned":
        placed = analyze(config).placement.cpu_of
        tasks = tuple(replace(t, cpu=placed[t.id]) for t in tasks)
    return replace(config, tasks=tasks, overhead_us=config.overhead_us + overhead_us)


@dataclass(frozen=True)
class Above:
    """A completed job whose response time is above its task's bound."""

    task: int
    job: int
    by: int             # ns above the bound
    start_latency: int  # ns from its release to its start


def above_bounds(schedule: Schedule, config: Config, overhead_us: int = 0) -> tuple[list[Above], int]:
    """The completed jobs above their bound with `overhead_us` charged (with_overhead), and
    how many completed jobs belong to tasks the charged analysis leaves without a bound."""
    analysis = analyze(with_overhead(config, overhead_us))
    above, unbounded = [], 0
    for job in schedule.jobs.values():
        if job.completion is None:
            continue
        bound = analysis.task_bound_ns(job.task)
        if bound is None:
            unbounded += 1
        elif job.response > bound:
            above.append(Above(job.task, job.job, job.response - bound, job.start - job.release))
    return above, unbounded
