"""Multicore analysis: placing tasks on CPUs (partitioned plugins) and the sufficient tests
of global scheduling (global plugins).

- `partition`: each task on one CPU, as configured (`cpu = N`) or, for the others, by
  first-fit or worst-fit decreasing utilisation, a task going to a CPU only if the CPU's
  uniprocessor test (response-time analysis for fp, the demand test for edf) still holds
  with it;
- `gfb_holds`: global EDF, the density test of Goossens, Funk & Baruah (2003) in the form
  for constrained deadlines: Σ δ_i ≤ m − (m − 1) δ_max, δ_i = C_i / D_i;
- `global_fp_response_times`: global fixed priority, the response-time analysis of
  Bertogna & Cirinei (2007).

Formulas and references are in docs/rt-analysis.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable, Sequence

from .analysis import PeriodicTask
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
