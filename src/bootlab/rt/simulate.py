"""The ideal schedule the plugins are meant to produce (docs/rt-formats.md), event by event.

Event-driven in integer nanoseconds: time jumps to the next release, replenishment,
deadline, completion or depletion; nothing is sampled on ticks, so the result is exact and
deterministic.  At one instant the events are handled, and written, in this order:

1. `complete` of the running job whose execution is done;
2. `deplete` of the active server whose budget is exhausted;
3. `replenish` of every server whose period starts now (by server id);
4. for each task by id: `miss` of its unfinished job whose absolute deadline is now, then
   `release` of its job released now;
5. the decision: `preempt` of the job that loses the CPU, `server_preempt` of the server
   that stops being active with budget left, `server_resume` of the newly active server,
   `start` (first time) or `resume` of the job that gets the CPU.

Steps 2-5 are in the order of the C policy core (rt/core); a job that completes exactly at
its deadline meets it.  Events at `until` are included.

With `enforce`, budgets are enforced as the kernel does (docs/rt-formats.md, without the
kernel's slack for its own overheads): a task that has run its wcet since its last release
with a job still unfinished gets an `overrun` event (after step 1) and, unless its
configuration says `overrun = "signal"`, no CPU until its next release.  Jobs that keep to
their wcet never overrun, so this matters for `--exec` what-ifs and backlogs of late jobs.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from math import lcm
from typing import Mapping

from .config import Config, Task
from .multicore import Piece, split_cd
from .schedulability import analyze, charged
from .trace import Event
from .units import NS_PER

US = NS_PER["us"]


@dataclass(eq=False)
class _Job:
    task: Task
    index: int
    release: int
    deadline: int
    remaining: int
    started: bool = False
    missed: bool = False
    executed: int = 0


@dataclass
class _Server:
    id: int
    period: int
    budget: int
    priority: int
    left: int = 0
    next_replenish: int = 0


@dataclass
class _TaskState:
    task: Task
    next_release: int
    released: int = 0
    queue: deque[_Job] = field(default_factory=deque)
    spent: int = 0              # run since its last release (enforcement)
    overran: bool = False

    @property
    def throttled(self) -> bool:
        return self.overran and self.task.overrun == "throttle"


@dataclass(frozen=True)
class ExecOverride:
    """Execution time of a task's jobs in a what-if run (one job when `job` is set)."""

    task: int
    exec_ns: int
    job: int | None = None


def simulate(config: Config, until_ns: int, overrides: list[ExecOverride] | tuple = (),
             enforce: bool = False) -> list[Event]:
    return _Simulation(config, overrides, enforce).run(until_ns)


class _Simulation:
    def __init__(self, config: Config, overrides, enforce: bool = False) -> None:
        self.config = config
        self.enforce = enforce
        self.hierarchical = config.hierarchical
        self.overrides: Mapping[tuple[int, int | None], int] = {(o.task, o.job): o.exec_ns for o in overrides}
        self.servers = [_Server(s.id, s.period * US, s.budget * US, s.priority) for s in sorted(config.servers, key=lambda s: s.id)]
        self.tasks = [_TaskState(t, t.offset * US) for t in sorted(config.tasks, key=lambda t: t.id)]
        self.state_of = {state.task.id: state for state in self.tasks}
        self.events: list[Event] = []
        # The job on each CPU; one CPU but for the multicore plugins.
        self.cpus = config.cpus if config.multicore else 1
        self.running: list[_Job | None] = [None] * self.cpus
        self.active: _Server | None = None
        # Partitioned: the CPU of each task, as the analysis places them (its overhead charged).
        self.cpu_of = analyze(config).placement.cpu_of if config.multicore == "partitioned" else {}
        # Semi-partitioned: each task's parts (ns), split as the analysis splits them (its
        # overhead charged); a job is on the CPU of the part it is in, the part's execution
        # up to the next part's start.
        self.parts: dict[int, list[Piece]] = {}
        if config.multicore == "semi-partitioned":
            for part in split_cd(charged(config)).pieces:
                self.parts.setdefault(part.task, []).append(replace(part, wcet=part.wcet * US, deadline=part.deadline * US,
                                                                    start=part.start * US))
        self.last_cpu: dict[tuple[int, int], int] = {}     # job -> the CPU it ran on last

    def emit(self, t: int, name: str, **fields: int) -> None:
        self.events.append(Event(t, name, fields))

    def on_cpu(self, cpu: int) -> dict[str, int]:
        """The cpu= key of a job's events, written by the multicore plugins only."""
        return {"cpu": cpu} if self.config.multicore else {}

    def run(self, until: int) -> list[Event]:
        for s in self.servers:
            self.emit(0, "server_create", server=s.id, period=s.period, budget=s.budget, prio=s.priority)
        for state in self.tasks:
            t = state.task
            placement = {"server": t.server} if self.hierarchical else (
                {"cpu": self.cpu_of[t.id]} if self.cpu_of else {})
            self.emit(0, "task_create", task=t.id, **placement, period=t.period * US, wcet=t.wcet * US,
                      deadline=t.deadline * US, prio=t.priority)
        now = 0
        while True:
            self.handle_instant(now)
            following = self.next_instant(now)
            if following is None or following > until:
                return self.events
            self.advance(following - now)
            now = following

    def exec_time(self, task: Task, index: int) -> int:
        return self.overrides.get((task.id, index), self.overrides.get((task.id, None), task.wcet * US))

    def handle_instant(self, now: int) -> None:
        for cpu, job in enumerate(self.running):
            if job is not None and job.remaining == 0:
                self.emit(now, "complete", task=job.task.id, job=job.index, **self.on_cpu(cpu))
                self.state_of[job.task.id].queue.popleft()
                self.running[cpu] = None
            if self.enforce and job is not None:
                self.charge_limit(now, self.state_of[job.task.id])
        if self.active is not None and self.active.left == 0:
            self.emit(now, "deplete", server=self.active.id)
            self.active = None
        for server in self.servers:
            if server.next_replenish == now:
                server.left = server.budget
                server.next_replenish += server.period
                self.emit(now, "replenish", server=server.id, budget=server.budget)
        for state in self.tasks:
            for pending in state.queue:
                if pending.deadline == now and not pending.missed:
                    pending.missed = True
                    self.emit(now, "miss", task=state.task.id, job=pending.index, deadline=pending.deadline)
            if state.next_release == now and self.may_release(state):
                task = state.task
                job = _Job(task, state.released, now, now + task.deadline * US, self.exec_time(task, state.released))
                state.queue.append(job)
                state.released += 1
                state.next_release += task.period * US
                state.spent, state.overran = 0, False
                self.emit(now, "release", task=task.id, job=job.index, deadline=job.deadline)
        self.decide(now)

    def charge_limit(self, now: int, state: _TaskState) -> None:
        """The task on the CPU has used its budget with a job unfinished (the next one too,
        after a completion): an overrun, once per period."""
        if state.queue and not state.overran and state.spent >= state.task.wcet * US:
            state.overran = True
            self.emit(now, "overrun", task=state.task.id, job=state.queue[0].index)

    def may_release(self, state: _TaskState) -> bool:
        return state.task.jobs == 0 or state.released < state.task.jobs

    def decide(self, now: int) -> None:
        active = self.choose_server() if self.hierarchical else None
        chosen = self.place(self.choose_jobs(active))
        for cpu, previous in enumerate(self.running):
            if previous is not None and previous is not chosen[cpu]:
                self.emit(now, "preempt", task=previous.task.id, job=previous.index, **self.on_cpu(cpu))
        if self.hierarchical and active is not self.active:
            if self.active is not None:
                self.emit(now, "server_preempt", server=self.active.id)
            if active is not None:
                self.emit(now, "server_resume", server=active.id)
        for cpu, job in enumerate(chosen):
            if job is not None and job is not self.running[cpu]:
                self.emit(now, "resume" if job.started else "start", task=job.task.id, job=job.index,
                          **self.on_cpu(cpu))
                job.started = True
        self.running, self.active = chosen, active

    def part(self, job: _Job) -> Piece:
        """Semi-partitioned: the part of its task the job is executing."""
        return [p for p in self.parts[job.task.id] if p.start <= job.executed][-1]

    def fixed_cpu(self, job: _Job) -> int | None:
        """The CPU a job must run on (partitioned, semi-partitioned), or None (global)."""
        if self.cpu_of:
            return self.cpu_of[job.task.id]
        return self.part(job).cpu if self.parts else None

    def due(self, job: _Job) -> int:
        """The absolute deadline EDF orders by: a split job's first part's (C' = D' but for
        the overhead charged), else the job's (as the policy core's rts_part_deadline)."""
        parts = self.parts.get(job.task.id, ())
        if len(parts) > 1 and self.part(job) is parts[0]:
            return job.release + parts[0].deadline
        return job.deadline

    def place(self, jobs: list[_Job]) -> list[_Job | None]:
        """The CPU of each job to run: its task's (or its part's) when fixed; otherwise a job
        keeps the CPU it holds, and the others take the free CPUs, the one each ran on last
        if free, else the lowest."""
        placed: list[_Job | None] = [None] * self.cpus
        if self.cpu_of or self.parts:
            for job in jobs:
                placed[self.fixed_cpu(job)] = job
            return placed
        waiting = []
        for job in jobs:
            if job in self.running:
                placed[self.running.index(job)] = job
            else:
                waiting.append(job)
        for job in waiting:
            last = self.last_cpu.get((job.task.id, job.index))
            cpu = last if last is not None and placed[last] is None else placed.index(None)
            placed[cpu] = job
        for cpu, job in enumerate(placed):
            if job is not None:
                self.last_cpu[(job.task.id, job.index)] = cpu
        return placed

    def choose_jobs(self, active: _Server | None) -> list[_Job]:
        """The jobs to run now: the first by the policy's order among the eligible, one per
        CPU (partitioned, semi-partitioned: among the jobs on each CPU)."""
        if self.hierarchical and active is None:
            return []
        heads = [s.queue[0] for s in self.tasks
                 if s.queue and not s.throttled and (not self.hierarchical or s.task.server == active.id)]
        if self.config.task_policy == "edf":
            heads.sort(key=lambda j: (self.due(j), j.task.id))
        else:
            heads.sort(key=lambda j: (j.task.priority, j.task.id))
        if self.cpu_of or self.parts:
            firsts: dict[int, _Job] = {}
            for job in heads:
                firsts.setdefault(self.fixed_cpu(job), job)
            return list(firsts.values())
        return heads[:self.cpus]

    def choose_server(self) -> _Server | None:
        ready = [s for s in self.servers if s.left > 0]
        if self.config.server_policy == "edf":   # deadline: the end of its current period
            return min(ready, key=lambda s: (s.next_replenish, s.id), default=None)
        return min(ready, key=lambda s: (s.priority, s.id), default=None)

    def next_instant(self, now: int) -> int | None:
        times = [s.next_release for s in self.tasks if self.may_release(s)]
        times += [s.next_replenish for s in self.servers]
        times += [j.deadline for s in self.tasks for j in s.queue if not j.missed and j.deadline > now]
        for job in filter(None, self.running):
            times.append(now + job.remaining)
            if self.parts and self.part(job) is not self.parts[job.task.id][-1]:
                # The end of its first part, where the next starts: it moves to the next
                # part's CPU.  (Not of its last: a job running past its wcet, signalled,
                # would put that in the past.)
                parts = self.parts[job.task.id]
                times.append(now + parts[parts.index(self.part(job)) + 1].start - job.executed)
            state = self.state_of[job.task.id]
            if self.enforce and not state.overran:
                times.append(now + max(0, job.task.wcet * US - state.spent))
        if self.active is not None:
            times.append(now + self.active.left)
        return min(times, default=None)

    def advance(self, elapsed: int) -> None:
        for job in filter(None, self.running):
            job.remaining -= elapsed
            job.executed += elapsed
            self.state_of[job.task.id].spent += elapsed
        if self.active is not None:
            self.active.left -= elapsed


def hyperperiod_ns(config: Config) -> int:
    """One hyperperiod after the last first release: where a synchronous schedule repeats."""
    periods = [s.period for s in config.servers] + [t.period for t in config.tasks]
    return (max((t.offset for t in config.tasks), default=0) + lcm(*periods)) * US if periods else 0
