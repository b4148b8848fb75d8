"""`bootlab rt check`: a recorded trace against the analysis and the simulation.

1. The trace's server_create / task_create lines match the configuration.
2. Every job's response time is at most its analytical bound (+ tolerance; the bounds of
   `charged`, the configuration with each job's overhead charged, when given: overheads.py);
   a job still
   unfinished at the end of the trace must not already be past it.
3. Every complete server period uses at most the budget (+ tolerance), and the budget is
   exhausted no later than the server's analytical response time (+ tolerance).
4. The schedule equals the simulated one, as defined in docs/rt-analysis.md ("check"):
   after moving the trace's common start to 0, both are reduced to execution segments
   (one job on the CPU) and, for the hierarchical plugins, server windows (one server active); segments no
   longer than the tolerance are dropped and same-job segments separated by at most the
   tolerance merged; then the k-th segments must name the same job (server) and their
   boundaries differ by at most the tolerance.  Segments starting within the tolerance of
   the end of the comparison are ignored, as is the end of a segment cut by it.

The comparison stops at the last event recorded before the first `overflow` (events lost).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..sources.bootlab_capture import MAGIC

from .config import Config
from .overheads import measure as measure_overheads
from .schedulability import Analysis, analyze
from .schedule import Schedule, Segment
from .simulate import simulate
from .trace import Trace
from .units import NS_PER, format_duration

US = NS_PER["us"]


@dataclass(frozen=True)
class Violation:
    time: int        # on the trace's clock
    subject: str
    what: str
    expected: str
    found: str

    def explain(self, origin: int) -> str:
        when = (f"at {format_duration(self.time - origin, 'ms')} ms from the trace's start" if self.time >= origin
                else "before the trace's start")
        return f"{when}: {self.subject}: {self.what}: expected {self.expected}, found {self.found}"


@dataclass
class CheckResult:
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    origin: int = 0          # the trace time taken as the common start
    jobs_checked: int = 0
    periods_checked: int = 0
    segments_compared: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations


def capture_meta(data: bytes) -> dict:
    """The header of a bootlab console capture (how the boot was run), or {}."""
    first = data.split(b"\n", 1)[0]
    if not first.startswith(MAGIC):
        return {}
    try:
        meta = json.loads(first[len(MAGIC):].decode() or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def likely_cause(meta: dict, trace: Trace | None = None, config: Config | None = None) -> str | None:
    """Why measured times can exceed the analysis, from what the boot's capture header and
    the trace measured.  A QEMU guest without -icount keeps the host's time while its CPU is
    emulated, many times slower than the host's: the framework's own work for each job (the
    timer interrupt, the wake-up, the switch, the system calls) then takes a real fraction of
    a millisecond that the analysis does not count.  Where the trace holds `overrun` events
    that cost threw jobs past their wcet and the framework's slack, and each one was throttled
    until its next release: a period late, a miss.  (A quiet host made the same misses as a
    busy one: the host's load is not the cause to name.)"""
    argv = meta.get("argv") or []
    if not argv or "qemu" not in Path(str(argv[0])).name or "-icount" in argv:
        return None
    advice = ("boot the target with icount (e.g. icount = \"shift=0,sleep=off\"), where the guest's clock counts "
              "its instructions, to check the schedule itself, or charge each job the overhead `bootlab rt trace` "
              "measures (--overhead-us)")
    overruns = [e for e in trace.events if e.name == "overrun"] if trace is not None else []
    schedule = Schedule.from_trace(trace) if trace is not None else None
    if not overruns:
        return ("the guest ran under QEMU without -icount: its clock is the host's while its CPU is emulated, so "
                "timer interrupts, wake-ups and the framework's own work take real time the analysis does not count"
                + _overhead_note(schedule) + "; " + advice)
    if config is not None:
        schedule.name_from(config)
    counts: dict[int, int] = {}
    for e in overruns:
        counts[e["task"]] = counts.get(e["task"], 0) + 1
    task = max(counts, key=lambda t: (counts[t], -t))
    held = sorted(j.executed for j in schedule.jobs.values() if j.task == task and j.completion is not None)
    wcet = schedule.tasks.get(task, {}).get("wcet")
    measured = (f"; {schedule.task_label(task)}'s jobs held the CPU a median {held[len(held) // 2] / NS_PER['ms']:.3f} ms for a wcet of {wcet / NS_PER['ms']:.3f} ms"
                if held and wcet is not None else "")
    return (f"{len(overruns)} job{'s' * (len(overruns) != 1)} ran past their wcet and the framework's slack and were "
            f"throttled until their next release (overrun events){measured}: the guest ran under QEMU without -icount, "
            "where its clock is the host's but its CPU is emulated, so the framework's own work for each job (timer "
            "interrupt, wake-up, switch, system calls) takes a fraction of a millisecond the analysis does not count"
            + _overhead_note(schedule) + "; " + advice)


def _overhead_note(schedule: Schedule | None) -> str:
    """What the trace measured of that overhead (overheads.measure), when a job ran alone."""
    measured = measure_overheads(schedule) if schedule is not None else []
    if not measured:
        return ""
    medians = " and ".join(f"{round(o.median / NS_PER['us'])} µs" + (f" (CPU {o.cpu})" if len(measured) > 1 else "")
                           for o in measured)
    return f" (in this trace a job that ran alone on its CPU took a median {medians} more than its wcet)"


def _ms(ns: int) -> str:
    return f"{format_duration(ns, 'ms')} ms"


def check(config: Config, trace: Trace, tolerance_ns: int, charged: Config | None = None) -> CheckResult:
    """`charged`: `config` with each job's overhead charged (overheads.with_overhead), whose
    analysis bounds the responses and budgets; the simulation stays `config`'s."""
    result = CheckResult()
    schedule = Schedule.from_trace(trace)
    schedule.name_from(config)
    if trace.damage:
        result.notes.append(f"trace damaged, checking the readable part: {trace.damage}")
    _check_declarations(config, trace, result)
    origin = _common_start(config, trace)
    if origin is None:
        result.notes.append("the trace has no release or replenishment: nothing to compare")
        return result
    result.origin = origin
    limit = schedule.end
    if schedule.overflows:
        # Events were lost somewhere after the last one recorded before the overflow.
        lost_at = schedule.overflows[0].time
        limit = max((e.time for e in trace.events if e.time < lost_at), default=lost_at)
        result.notes.append(f"the recorder lost events before {_ms(lost_at - origin)}: compared up to {_ms(limit - origin)}")
    finished = _workload_end(config, trace)
    if finished is not None and finished < limit:
        # The canonical task loop waits for one more period after its last job, is released
        # once more and exits: past that point the system no longer runs the configuration.
        limit = finished
        result.notes.append(f"compared up to {_ms(limit - origin)}, where a task has run its configured jobs")
    analysis = analyze(charged or config)
    _check_responses(schedule, analysis, limit, tolerance_ns, result)
    _check_budgets(schedule, analysis, limit, tolerance_ns, result)
    _check_against_simulation(config, schedule, origin, limit, tolerance_ns, result)
    result.violations.sort(key=lambda v: v.time)
    return result


def _check_declarations(config: Config, trace: Trace, result: CheckResult) -> None:
    if trace.plugin and trace.plugin != config.plugin:
        result.violations.append(Violation(0, "trace header", "plugin differs from the configuration", config.plugin, trace.plugin))
    expected = {("server", s.id): {"period": s.period * US, "budget": s.budget * US, "prio": s.priority} for s in config.servers}
    expected |= {("task", t.id): {"period": t.period * US, "wcet": t.wcet * US, "deadline": t.deadline * US, "prio": t.priority,
                                  **({"server": t.server} if t.server is not None else {})} for t in config.tasks}
    seen = set()
    for event in trace.events:
        if event.name not in ("server_create", "task_create"):
            continue
        kind = event.name.removesuffix("_create")
        key = (kind, event[kind])
        seen.add(key)
        if key not in expected:
            result.violations.append(Violation(event.time, f"{kind} {key[1]}", "created but not in the configuration", "absent", "created"))
            continue
        for name, value in expected[key].items():
            if event.fields.get(name) != value:
                result.violations.append(Violation(event.time, f"{kind} {key[1]}", f"{name} differs from the configuration",
                                                   str(value), str(event.fields.get(name, "nothing"))))
    missing = sorted(set(expected) - seen)
    if missing and seen:
        result.notes.append("not created in the trace: " + ", ".join(f"{k} {i}" for k, i in missing))


def _common_start(config: Config, trace: Trace) -> int | None:
    """The trace time of the common start: the first replenishment (hierarchical plugins), or the earliest
    release less its offset and the periods of the task's earlier jobs."""
    if config.hierarchical:
        return next((e.time for e in trace.events if e.name == "replenish"), None)
    tasks = {t.id: t for t in config.tasks}
    starts = [e.time - (tasks[e["task"]].offset + e["job"] * tasks[e["task"]].period) * US
              for e in trace.events if e.name == "release" and e["task"] in tasks]
    return min(starts, default=None)


def _workload_end(config: Config, trace: Trace) -> int | None:
    """The first release of a job beyond a task's configured `jobs`."""
    last = {t.id: t.jobs for t in config.tasks if t.jobs}
    beyond = [e.time for e in trace.events if e.name == "release" and e["task"] in last and e["job"] >= last[e["task"]]]
    return min(beyond, default=None)


def _check_responses(schedule: Schedule, analysis: Analysis, limit: int, tolerance: int, result: CheckResult) -> None:
    unbounded = set()
    for job in sorted(schedule.jobs.values(), key=lambda j: (j.task, j.job)):
        if job.release is None or job.release >= limit:
            continue
        bound = analysis.task_bound_ns(job.task)
        if bound is None:
            unbounded.add(job.task)
            continue
        result.jobs_checked += 1
        subject = f"{schedule.task_label(job.task)} job {job.job}"
        if job.completion is not None and job.completion <= limit:
            if job.response > bound + tolerance:
                result.violations.append(Violation(job.completion, subject, "response time above the analytical bound",
                                                   f"<= {_ms(bound)}", _ms(job.response)))
        elif limit - job.release > bound + tolerance:
            result.violations.append(Violation(job.release + bound, subject, "unfinished past its analytical bound",
                                               f"done by {_ms(bound)} after release", f"still running {_ms(limit - job.release)} after"))
    for task in sorted(unbounded):
        result.notes.append(f"{schedule.task_label(task)}: no analytical bound (not schedulable by the analysis)")


def _check_budgets(schedule: Schedule, analysis: Analysis, limit: int, tolerance: int, result: CheckResult) -> None:
    for period in schedule.periods:
        if not period.complete or period.end > limit:
            continue
        result.periods_checked += 1
        subject = f"{schedule.server_label(period.server)} period from {_ms(period.start - result.origin)}"
        if period.used > period.budget + tolerance:
            result.violations.append(Violation(period.start + period.budget, subject, "active longer than its budget",
                                               f"<= {_ms(period.budget)}", _ms(period.used)))
        bound = analysis.server_bound_ns(period.server)
        if bound is None:
            continue
        took = None if period.depleted_at is None else period.depleted_at - period.start
        if took is None or took > bound + tolerance:
            result.violations.append(Violation(period.start + bound, subject, "budget not exhausted within the server's response time",
                                               f"depleted by {_ms(bound)}", "no depletion" if took is None else f"depleted after {_ms(took)}"))


def _check_against_simulation(config: Config, schedule: Schedule, origin: int, limit: int, tolerance: int, result: CheckResult) -> None:
    span = limit - origin
    ideal = Schedule.from_events(simulate(config, span), config.plugin, end=span)
    ideal.name_from(config)
    recorded = [Segment(g.start - origin, g.end - origin, g.owner, g.job, g.open, g.cpu)
                for g in schedule.segments if g.start < limit]
    # Several CPUs: each one's sequence of jobs, where jobs have their CPU (partitioned,
    # semi-partitioned); each job's own segments wherever they ran (global).
    groups = (lambda g: g.cpu) if config.multicore in ("partitioned", "semi-partitioned") else (
        (lambda g: (g.owner, g.job)) if config.multicore == "global" else (lambda g: 0))
    for key in sorted({groups(g) for g in ideal.segments + recorded}):
        _compare([g for g in ideal.segments if groups(g) == key], [g for g in recorded if groups(g) == key],
                 span, tolerance, origin, result, "job on the CPU", lambda g: f"{schedule.task_label(g.owner)} job {g.job}")
    if config.hierarchical:
        windows = [Segment(g.start - origin, g.end - origin, g.owner, 0, g.open) for g in schedule.windows if g.start < limit]
        _compare(ideal.windows, windows, span, tolerance, origin, result, "active server",
                 lambda g: schedule.server_label(g.owner))


def _normalized(segments: list[Segment], span: int, tolerance: int) -> list[Segment]:
    merged: list[Segment] = []
    for g in segments:
        if g.end - g.start <= tolerance or g.start >= span - tolerance:
            continue
        last = merged[-1] if merged else None
        if last is not None and (last.owner, last.job) == (g.owner, g.job) and g.start - last.end <= tolerance:
            merged[-1] = Segment(last.start, g.end, g.owner, g.job, g.open, g.cpu)
        else:
            merged.append(g)
    return merged


def _compare(expected: list[Segment], found: list[Segment], span: int, tolerance: int, origin: int,
             result: CheckResult, holder: str, name: Callable[[Segment], str]) -> None:
    """Adds the first difference between the two segment sequences, if any."""
    ideal, real = _normalized(expected, span, tolerance), _normalized(found, span, tolerance)

    def interval(g: Segment) -> str:
        return f"{name(g)} over [{format_duration(g.start, 'ms')}, {format_duration(g.end, 'ms')}) ms"

    for want, got in zip(ideal, real):
        result.segments_compared += 1
        same_job = (want.owner, want.job) == (got.owner, got.job)
        ends_cut = min(want.end, got.end) >= span - tolerance
        if not same_job or abs(want.start - got.start) > tolerance or (not ends_cut and abs(want.end - got.end) > tolerance):
            what = f"the {holder} differs from the simulation" if not same_job else f"the {holder} starts or stops at other times than in the simulation"
            result.violations.append(Violation(origin + min(want.start, got.start), name(got), what,
                                               f"{interval(want)} ±{_ms(tolerance)}", interval(got)))
            return
    if len(ideal) != len(real):
        extra = real[len(ideal)] if len(real) > len(ideal) else None
        missing = ideal[len(real)] if len(ideal) > len(real) else None
        subject = extra or missing
        result.violations.append(Violation(
            origin + subject.start, name(subject), f"the trace has {'more' if extra else 'fewer'} intervals of {holder} than the simulation",
            interval(missing) if missing else "nothing", interval(extra) if extra else "nothing"))
