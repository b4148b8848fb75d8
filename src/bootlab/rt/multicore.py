"""Multicore analysis: placing tasks on CPUs (partitioned plugins) and the sufficient tests
of global scheduling (global plugins).

- `partition`: each task on one CPU, as configured (`cpu = N`) or, for the others, by
  first-fit or worst-fit decreasing utilisation, a task going to a CPU only if the CPU's
  uniprocessor test (response-time analysis for fp, the demand test for edf) still holds
  with it;
- `gfb_holds`: global EDF, the density test of Goossens, Funk & Baruah (2003) in the form
  for constrained deadlines: Σ δ_i ≤ m − (m − 1) δ_max, δ_i = C_i / D_i;
- `global_fp_response_times`: global fixed priority, the response-time analysis of
  Bertogna & Cirinei (2007);
- `split_cd`: semi-partitioned EDF with C=D splitting (Burns, Davis, Wang & Zhang 2012):
  first-fit decreasing, and a task that fits on no CPU is split into a first part with
  C' = D' on one CPU (it runs at once at each release) and the rest, C − C' due D − C'
  after it, on another.

Formulas and references are in docs/rt-analysis.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable, Sequence

from . import analysis
from .analysis import DedicatedSupply, PeriodicTask
from .config import Config, Task


@dataclass(frozen=True)
class Placement:
    cpu_of: dict[int, int]          # task id -> CPU, for every task
    unfit: tuple[int, ...] = ()     # tasks no CPU's test accepted (placed on the least loaded)


def _utilization(task: Task) -> Fraction:
    return Fraction(task.wcet, task.period)


def partition(config: Config, fits: Callable[[Config], bool]) -> Placement:
    """Configured tasks first, then the others by decreasing utilisation (ties: lower id),
    each on the first CPU (first-fit) or the least loaded CPU (worst-fit; ties: lower
    index) where `fits` still holds for the CPU's tasks as a one-CPU configuration."""
    on: list[list[Task]] = [[] for _ in range(config.cpus)]
    for task in config.tasks:
        if task.cpu is not None:
            on[task.cpu].append(task)
    unfit = []
    for task in sorted((t for t in config.tasks if t.cpu is None), key=lambda t: (-_utilization(t), t.id)):
        order = list(range(config.cpus))
        if config.assignment == "worst-fit":
            order.sort(key=lambda cpu: (sum(map(_utilization, on[cpu])), cpu))
        chosen = next((cpu for cpu in order if fits(cpu_config(config, on[cpu] + [task]))), None)
        if chosen is None:
            unfit.append(task.id)
            chosen = min(range(config.cpus), key=lambda cpu: (sum(map(_utilization, on[cpu])), cpu))
        on[chosen].append(task)
    return Placement({t.id: cpu for cpu, tasks in enumerate(on) for t in tasks}, tuple(sorted(unfit)))


def cpu_config(config: Config, tasks: Sequence[Task]) -> Config:
    """The tasks of one CPU as a one-CPU configuration of the same task policy."""
    return replace(config, plugin=config.task_policy, cpus=1, assignment="first-fit",
                   tasks=tuple(replace(t, cpu=None) for t in sorted(tasks, key=lambda t: t.id)))


def density(task: PeriodicTask) -> Fraction:
    return Fraction(task.wcet, min(task.deadline, task.period))


def gfb_holds(tasks: Sequence[PeriodicTask], cpus: int) -> bool:
    """Global EDF meets every deadline on `cpus` identical CPUs if Σ δ ≤ m − (m − 1) δ_max
    (Goossens, Funk & Baruah 2003; with densities for constrained deadlines)."""
    if not tasks:
        return True
    densities = [density(t) for t in tasks]
    return sum(densities) <= cpus - (cpus - 1) * max(densities)


def _workload(task: PeriodicTask, response: int, length: int) -> int:
    """Most execution of `task` inside any window of `length` when its jobs finish within
    `response` of their release: N C + min(C, L + R − C − N T), N = ⌊(L + R − C) / T⌋."""
    jobs = (length + response - task.wcet) // task.period
    return jobs * task.wcet + min(task.wcet, length + response - task.wcet - jobs * task.period)


def global_fp_response_times(tasks: Sequence[PeriodicTask], cpus: int) -> list[int | None]:
    """Response-time bounds under global preemptive fixed priority on `cpus` CPUs, tasks
    given from the highest priority down (Bertogna & Cirinei 2007): the least fixed point of

        R_k = C_k + ⌊ Σ_{i < k} min(W_i(R_k), R_k − C_k + 1) / m ⌋

    with W_i the workload of a higher-priority task whose jobs finish within R_i.  None from
    the first task whose bound passes its deadline (those below have no bound either)."""
    bounds: list[int | None] = []
    for k, task in enumerate(tasks):
        higher = list(zip(tasks[:k], bounds))
        if any(r is None for _, r in higher):
            bounds.append(None)
            continue
        response = task.wcet
        while response <= task.deadline:
            interference = sum(min(_workload(h, r, response), response - task.wcet + 1) for h, r in higher)
            longer = task.wcet + interference // cpus
            if longer == response:
                break
            response = longer
        bounds.append(response if response <= task.deadline else None)
    return bounds


@dataclass(frozen=True)
class Piece:
    """Part of a task's every job on one CPU: `wcet` of demand (its execution, and the
    configuration's overhead a job), from `start` of the job's execution on (0 for the first
    part), due `deadline` after the part's release (a first part's: the job's)."""

    task: int
    cpu: int
    wcet: int
    deadline: int
    start: int = 0


@dataclass(frozen=True)
class Split:
    pieces: tuple[Piece, ...]       # one per task, two for a split task (by start)
    unfit: tuple[int, ...] = ()     # tasks not placed even by splitting (on the least loaded CPU)

    def of(self, task: int) -> list[Piece]:
        return [p for p in self.pieces if p.task == task]


def _edf_fits(pieces: Sequence[Piece], periods: dict[int, int]) -> bool:
    models = [PeriodicTask(p.wcet, periods[p.task], p.deadline) for p in pieces]
    return analysis.edf_demand_test(models, DedicatedSupply()).schedulable


def split_cd(config: Config) -> Split:
    """Tasks by decreasing utilisation (ties: lower id) on the first CPU whose EDF demand
    test still holds; a task that fits nowhere is split once: on the first CPU that takes
    some of it, the largest C' with C' = D' that keeps the CPU schedulable, and the rest
    (C − C', due D − C' after the first part's end) on the first other CPU that takes it.
    A charged configuration (schedulability.charged: each wcet counts overhead_us) charges
    the rest its own overhead too, C − C' + o, and its first part executes C' − o of the job:
    the overhead-aware C=D of the literature, rtctl's split (rtadmit.c) the same."""
    periods = {t.id: t.period for t in config.tasks}
    on: list[list[Piece]] = [[] for _ in range(config.cpus)]
    unfit = []
    for task in sorted(config.tasks, key=lambda t: (-_utilization(t), t.id)):
        whole = [Piece(task.id, cpu, task.wcet, task.deadline) for cpu in range(config.cpus)]
        cpu = next((p.cpu for p in whole if _edf_fits(on[p.cpu] + [p], periods)), None)
        if cpu is not None:
            on[cpu].append(whole[cpu])
            continue
        pieces = _split(task, on, periods, config.overhead_us)
        if pieces is None:
            unfit.append(task.id)
            least = min(range(config.cpus), key=lambda c: (sum(Fraction(p.wcet, periods[p.task]) for p in on[c]), c))
            pieces = (whole[least],)
        for piece in pieces:
            on[piece.cpu].append(piece)
    return Split(tuple(sorted((p for cpu in on for p in cpu), key=lambda p: (p.task, p.start))), tuple(sorted(unfit)))


def _split(task: Task, on: list[list[Piece]], periods: dict[int, int], overhead: int) -> tuple[Piece, Piece] | None:
    for first in range(len(on)):
        # A large C' with C' = D' that the CPU still schedules, by bisection over
        # [1, min(C, D) - 1] (a part's demand grows with C' from its deadline on; charged, C
        # may exceed D, and the rest must keep some of the deadline).  Whatever C' is found
        # has passed the demand test with the CPU's other parts, so a larger one missed costs
        # capacity, never safety.
        low, high = 0, min(task.wcet, task.deadline) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if _edf_fits(on[first] + [Piece(task.id, first, middle, middle)], periods):
                low = middle
            else:
                high = middle - 1
        if low <= overhead:  # no execution left in the part
            continue
        for cpu in range(len(on)):
            rest = Piece(task.id, cpu, task.wcet - low + overhead, task.deadline - low, low - overhead)
            if cpu != first and _edf_fits(on[cpu] + [rest], periods):
                return Piece(task.id, first, low, low), rest
    return None
