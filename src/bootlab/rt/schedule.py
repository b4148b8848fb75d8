"""What a trace says happened: execution segments, server windows, jobs and budgets.

Built from any sequence of events without failing: an event that does not fit the state
(a resume of a job that is not preempted, two jobs on one CPU) is noted as an anomaly
and the state repaired the obvious way.  Segments still open at the end of the trace are
closed there and marked open.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from .config import Config
from .trace import Event, Trace


@dataclass(frozen=True)
class Segment:
    """A job holding the CPU (or, for windows, a server being active) over [start, end)."""

    start: int
    end: int
    owner: int          # task id (segments) or server id (windows)
    job: int = 0
    open: bool = False  # cut by the end of the trace
    cpu: int = 0        # the events' cpu= (multicore plugins), else 0

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class Job:
    task: int
    job: int
    release: int | None = None
    deadline: int | None = None
    start: int | None = None
    completion: int | None = None
    miss_event: bool = False
    executed: int = 0
    migrations: int = 0     # times it resumed on another CPU than it last ran on
    last_cpu: int | None = None

    @property
    def response(self) -> int | None:
        if self.completion is None or self.release is None:
            return None
        return self.completion - self.release

    @property
    def lateness(self) -> int | None:
        if self.completion is None or self.deadline is None:
            return None
        return self.completion - self.deadline

    def missed(self, trace_end: int) -> bool:
        """Missed its deadline: said so, finished late, or unfinished past it."""
        if self.miss_event:
            return True
        if self.deadline is None:
            return False
        return self.completion > self.deadline if self.completion is not None else trace_end > self.deadline


@dataclass(frozen=True)
class BudgetPeriod:
    server: int
    start: int              # the replenishment
    end: int                # the next one, or the end of the trace
    budget: int
    used: int               # time the server was active (budget consumed)
    busy: int               # time its tasks executed
    depleted_at: int | None
    complete: bool          # the period ended inside the trace


@dataclass(frozen=True)
class CpuSlice:
    """Who really held the CPU, from the kernel's sched_switch events."""

    start: int
    end: int
    pid: int
    comm: str
    task: int | None
    cpu: int | None = None      # the switch's cpu=


@dataclass
class Schedule:
    plugin: str | None
    servers: dict[int, dict] = field(default_factory=dict)   # server_create fields
    tasks: dict[int, dict] = field(default_factory=dict)     # task_create fields
    segments: list[Segment] = field(default_factory=list)
    windows: list[Segment] = field(default_factory=list)
    jobs: dict[tuple[int, int], Job] = field(default_factory=dict)
    periods: list[BudgetPeriod] = field(default_factory=list)
    cpu: list[CpuSlice] = field(default_factory=list)
    misses: list[Event] = field(default_factory=list)
    overflows: list[Event] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    start: int = 0
    end: int = 0
    server_labels: dict[int, str] = field(default_factory=dict)
    task_labels: dict[int, str] = field(default_factory=dict)

    @classmethod
    def from_trace(cls, trace: Trace) -> Schedule:
        return cls.from_events(trace.events, trace.plugin)

    @classmethod
    def from_events(cls, events: list[Event], plugin: str | None, end: int | None = None) -> Schedule:
        builder = _Builder(cls(plugin))
        for event in events:
            builder.add(event)
        return builder.finish(max((e.time for e in events), default=0) if end is None else end)

    def multicore(self) -> bool:
        """Jobs ran on more than one CPU (their events carry cpu=)."""
        return len({g.cpu for g in self.segments}) > 1

    def task_server(self, task: int) -> int | None:
        server = self.tasks.get(task, {}).get("server")
        return server if isinstance(server, int) else None

    def server_ids(self) -> list[int]:
        return sorted(set(self.servers) | {w.owner for w in self.windows} | {p.server for p in self.periods})

    def task_ids(self) -> list[int]:
        return sorted(set(self.tasks) | {g.owner for g in self.segments} | {task for task, _ in self.jobs})

    def name_from(self, config: Config) -> None:
        """Use the names of a configuration (the trace itself carries only ids)."""
        self.server_labels.update({s.id: s.label for s in config.servers})
        self.task_labels.update({t.id: t.label for t in config.tasks})

    def server_label(self, server: int) -> str:
        return self.server_labels.get(server, f"server{server}")

    def task_label(self, task: int) -> str:
        return self.task_labels.get(task, f"task{task}")


class _Builder:
    def __init__(self, schedule: Schedule) -> None:
        self.s = schedule
        self.running: dict[int, tuple[int, int, int]] = {}    # task -> (job, since, cpu)
        self.active: dict[int, int] = {}                 # server -> since
        self.replenished: dict[int, tuple[int, int]] = {}  # server -> (time, budget)
        self.periods: list[tuple[int, int, int, int | None]] = []  # server, start, budget, end
        self.depletions: dict[int, list[int]] = {}      # server -> times
        self.switches: list[Event] = []
        self.first: int | None = None
        self.by_owner: dict[tuple, tuple[list[Segment], list[int]]] = {}

    def job(self, event: Event) -> Job:
        key = (event["task"], event["job"])
        if key not in self.s.jobs:
            self.s.jobs[key] = Job(*key)
        return self.s.jobs[key]

    def anomaly(self, event: Event, what: str) -> None:
        where = f"line {event.line}, " if event.line else ""
        self.s.anomalies.append(f"{where}t={event.time}: {what}")

    def close_task(self, task: int, at: int, open_: bool = False) -> None:
        job, since, cpu = self.running.pop(task)
        if open_ and at == since:
            return   # started just as the trace ends: nothing ran
        self.s.segments.append(Segment(since, at, task, job, open_, cpu))
        if (task, job) in self.s.jobs:
            self.s.jobs[(task, job)].executed += at - since

    def close_server(self, server: int, at: int, open_: bool = False) -> None:
        since = self.active.pop(server)
        if not (open_ and at == since):
            self.s.windows.append(Segment(since, at, server, 0, open_))

    def add(self, e: Event) -> None:
        if e.name not in ("server_create", "task_create") and self.first is None:
            self.first = e.time
        handler = getattr(self, "on_" + e.name, None)
        if handler is not None:
            handler(e)

    def on_server_create(self, e: Event) -> None:
        self.s.servers[e["server"]] = dict(e.fields)

    def on_task_create(self, e: Event) -> None:
        self.s.tasks[e["task"]] = dict(e.fields)

    def on_replenish(self, e: Event) -> None:
        server = e["server"]
        if server in self.replenished:
            start, budget = self.replenished[server]
            self.periods.append((server, start, budget, e.time))
        self.replenished[server] = (e.time, e["budget"])

    def on_deplete(self, e: Event) -> None:
        self.depletions.setdefault(e["server"], []).append(e.time)
        if e["server"] in self.active:
            self.close_server(e["server"], e.time)

    def on_server_resume(self, e: Event) -> None:
        for other in list(self.active):
            self.anomaly(e, f"server {e['server']} resumes while server {other} is active")
            self.close_server(other, e.time)
        self.active[e["server"]] = e.time

    def on_server_preempt(self, e: Event) -> None:
        # The recorder may also write server_preempt right after deplete: nothing to close.
        if e["server"] in self.active:
            self.close_server(e["server"], e.time)

    def on_release(self, e: Event) -> None:
        job = self.job(e)
        job.release, job.deadline = e.time, e["deadline"]

    def on_start(self, e: Event) -> None:
        task, job, cpu = e["task"], e["job"], e.fields.get("cpu", 0)
        for other, (other_job, _, other_cpu) in list(self.running.items()):
            if other_cpu == cpu or other == task:
                self.anomaly(e, f"task {task} job {job} gets CPU {cpu} while task {other} job {other_job} holds it")
                self.close_task(other, e.time)
        self.running[task] = (job, e.time, cpu)
        record = self.job(e)
        if record.start is None:
            record.start = e.time
        if record.last_cpu is not None and record.last_cpu != cpu:
            record.migrations += 1
        record.last_cpu = cpu

    on_resume = on_start

    def on_preempt(self, e: Event) -> None:
        if self.running.get(e["task"], (None,))[0] != e["job"]:
            self.anomaly(e, f"{e.name} of task {e['task']} job {e['job']}, which does not hold the CPU")
            return
        self.close_task(e["task"], e.time)

    def on_complete(self, e: Event) -> None:
        if self.running.get(e["task"], (None,))[0] == e["job"]:
            self.close_task(e["task"], e.time)
        else:
            self.anomaly(e, f"complete of task {e['task']} job {e['job']}, which does not hold the CPU")
        self.job(e).completion = e.time

    def on_exit(self, e: Event) -> None:
        # The task left the framework (rt_exit, or killed) during this job: it stops there.
        if e["task"] in self.running:
            self.close_task(e["task"], e.time)

    def on_miss(self, e: Event) -> None:
        job = self.job(e)
        job.miss_event = True
        if job.deadline is None:   # its release was not recorded
            job.deadline = e["deadline"]
        self.s.misses.append(e)

    def on_switch(self, e: Event) -> None:
        self.switches.append(e)

    def on_overflow(self, e: Event) -> None:
        self.s.overflows.append(e)

    def finish(self, end: int) -> Schedule:
        s = self.s
        s.start, s.end = (self.first if self.first is not None else end), end
        for task in list(self.running):
            self.close_task(task, max(end, self.running[task][1]), True)
        for server in list(self.active):
            self.close_server(server, max(end, self.active[server]), True)
        s.segments.sort(key=lambda g: g.start)
        s.windows.sort(key=lambda g: g.start)
        for server, (start, budget) in self.replenished.items():
            self.periods.append((server, start, budget, None))
        s.periods = sorted((self.budget_period(*p) for p in self.periods), key=lambda p: (p.start, p.server))
        pids = {fields["pid"]: task for task, fields in s.tasks.items() if isinstance(fields.get("pid"), int)}
        by_cpu: dict[object, list[Event]] = {}
        for e in self.switches:   # each CPU's switches follow each other
            by_cpu.setdefault(e.fields.get("cpu"), []).append(e)
        for on, switches in by_cpu.items():
            for this, following in zip(switches, switches[1:] + [None]):
                stop = following.time if following is not None else end
                pid = this["next_pid"]
                s.cpu.append(CpuSlice(this.time, max(stop, this.time), pid, str(this.fields.get("next_comm", "")),
                                      pids.get(pid), on if isinstance(on, int) else None))
        s.cpu.sort(key=lambda piece: piece.start)
        return s

    def budget_period(self, server: int, start: int, budget: int, end: int | None) -> BudgetPeriod:
        stop = self.s.end if end is None else end
        members = {t for t in self.s.tasks if self.s.task_server(t) == server}
        # Budgets are positive, so a depletion at a replenishment ends the previous period.
        times = self.depletions.get(server, [])
        after = bisect_right(times, start)
        depleted = times[after] if after < len(times) and times[after] <= stop else None
        return BudgetPeriod(
            server, start, stop, budget,
            used=self.overlap(self.s.windows, (server,), start, stop),
            busy=self.overlap(self.s.segments, tuple(sorted(members)), start, stop),
            depleted_at=depleted,
            complete=end is not None,
        )

    def overlap(self, segments: list[Segment], owners: tuple[int, ...], start: int, stop: int) -> int:
        """Time the `owners` spent in `segments` within [start, stop).  Segments of one kind
        never overlap (one CPU), so sorted by start they are sorted by end too."""
        key = (id(segments), owners)
        if key not in self.by_owner:
            mine = [g for g in segments if g.owner in owners]
            self.by_owner[key] = (mine, [g.end for g in mine])
        mine, ends = self.by_owner[key]
        total = 0
        for g in mine[bisect_right(ends, start):]:
            if g.start >= stop:
                break
            total += max(0, min(g.end, stop) - max(g.start, start))
        return total
