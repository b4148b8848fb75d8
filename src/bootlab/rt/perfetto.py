"""Export a schedule as a Perfetto / chrome://tracing trace through the shared
Trace Event writer: a track per server (active windows, remaining budget as a counter),
a track per task (one slice per execution segment, instants for releases and misses),
and the kernel's sched_switch view when the trace has it."""

from __future__ import annotations

from bisect import bisect_right

from ..render.trace_events import TraceEvents
from .schedule import Schedule

SERVERS = "rt servers"
TASKS = "rt tasks"
KERNEL = "sched_switch"


def perfetto_json(schedule: Schedule) -> str:
    out = TraceEvents()
    origin = schedule.start
    left: dict[tuple[int, int], int] = {}          # (server, period start) -> budget left
    starts: dict[int, list[int]] = {}
    for period in schedule.periods:
        label = schedule.server_label(period.server)
        left[(period.server, period.start)] = period.budget
        starts.setdefault(period.server, []).append(period.start)
        out.instant(SERVERS, label, "replenish", period.start - origin, {"budget_ns": period.budget})
        out.counter(SERVERS, f"{label} budget", period.start - origin, {"budget_ms": period.budget / 1e6})
        if period.depleted_at is not None:
            out.instant(SERVERS, label, "deplete", period.depleted_at - origin)
    for window in schedule.windows:
        label = schedule.server_label(window.owner)
        out.slice(SERVERS, label, label, window.start - origin, window.length, category="server")
        index = bisect_right(starts.get(window.owner, []), window.start) - 1
        if index >= 0:
            key = (window.owner, starts[window.owner][index])
            left[key] -= window.length
            out.counter(SERVERS, f"{label} budget", window.end - origin, {"budget_ms": left[key] / 1e6})
    for segment in schedule.segments:
        label = schedule.task_label(segment.owner)
        job = schedule.jobs.get((segment.owner, segment.job))
        args = {"job": segment.job}
        if job is not None and job.release is not None:
            args.update(release_ms=(job.release - origin) / 1e6, deadline_ms=(job.deadline - origin) / 1e6)
        out.slice(TASKS, label, f"{label} job {segment.job}", segment.start - origin, segment.length, args, category="task")
    for job in schedule.jobs.values():
        label = schedule.task_label(job.task)
        if job.release is not None:
            out.instant(TASKS, label, f"release job {job.job}", job.release - origin)
        if job.missed(schedule.end) and job.deadline is not None:
            out.instant(TASKS, label, f"deadline miss job {job.job}", job.deadline - origin)
    for piece in schedule.cpu:
        name = f"{piece.comm or 'pid'} {piece.pid}"
        out.slice(KERNEL, "cpu", name, piece.start - origin, piece.end - piece.start,
                  {"pid": piece.pid, **({"task": piece.task} if piece.task is not None else {})}, category="switch")
    return out.to_json({"source": "bootlab rt", "plugin": schedule.plugin or ""})
