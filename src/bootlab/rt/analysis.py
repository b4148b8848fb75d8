"""Schedulability analysis on plain integers (any time unit, as long as it is one unit).

A *supply* says how much processor time a set of tasks is guaranteed in any interval:
the whole processor (`DedicatedSupply`), or a periodic server (`PeriodicSupply`, the
periodic resource model of Shin & Lee).  The fixed-priority and EDF tests take a supply,
so the flat plugins and the tasks inside a server share one implementation:

- `fp_response_time`: response-time analysis (Joseph & Pandya; Audsley et al.) with the
  request bound compared to the supply bound (Shin & Lee, RTSS 2003; Lipari & Bini);
- `edf_demand_test`: processor demand criterion (Baruah et al.) evaluated with Quick
  Processor-demand Analysis (Zhang & Burns, 2009), generalised from sbf(t) = t to any sbf;
- `edf_response_times`: worst-case response times under EDF (Spuri, 1996) on any supply,
  an upper bound for periodic tasks and for tasks inside a server.

Formulas and references are in docs/rt-analysis.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol, Sequence


@dataclass(frozen=True)
class PeriodicTask:
    wcet: int
    period: int
    deadline: int


class Supply(Protocol):
    rate: Fraction   # long-run share of the processor
    delay: int       # sbf(t) >= rate * (t - delay) for every t
    cycle: int       # sbf(t + cycle) = sbf(t) + rate * cycle once t >= delay

    def sbf(self, t: int) -> int: ...

    def time_to_supply(self, amount: int) -> int:
        """The shortest interval length t with sbf(t) >= amount."""
        ...


@dataclass(frozen=True)
class DedicatedSupply:
    rate: Fraction = Fraction(1)
    delay: int = 0
    cycle: int = 1

    def sbf(self, t: int) -> int:
        return max(t, 0)

    def time_to_supply(self, amount: int) -> int:
        return max(amount, 0)


@dataclass(frozen=True)
class PeriodicSupply:
    """Γ(Π, Θ): `budget` every `period`, delivered within `deadline` of each period start.

    With deadline = period this is Shin & Lee's periodic resource model: the longest
    interval without supply is 2(Π − Θ).  A fixed-priority server whose worst-case response
    time R is known delivers each budget within R of its period start, which shortens that
    blackout to Π + R − 2Θ (the explicit-deadline periodic model, Easwaran et al. 2007).
    """

    period: int
    budget: int
    deadline: int

    @classmethod
    def shin_lee(cls, period: int, budget: int) -> PeriodicSupply:
        return cls(period, budget, period)

    @property
    def blackout(self) -> int:
        return self.period + self.deadline - 2 * self.budget

    @property
    def rate(self) -> Fraction:
        return Fraction(self.budget, self.period)

    @property
    def delay(self) -> int:
        return self.blackout

    @property
    def cycle(self) -> int:
        return self.period

    def sbf(self, t: int) -> int:
        if t <= self.blackout:
            return 0
        periods, into = divmod(t - self.blackout, self.period)
        return periods * self.budget + min(into, self.budget)

    def time_to_supply(self, amount: int) -> int:
        if amount <= 0:
            return 0
        periods = (amount - 1) // self.budget
        return self.blackout + periods * self.period + amount - periods * self.budget


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def fp_response_time(wcet: int, higher: Sequence[PeriodicTask], supply: Supply, limit: int) -> int | None:
    """Worst-case response time of a job with `wcet` below the tasks `higher`, when all are
    released together at the worst moment of `supply`: the least t > 0 with
    sbf(t) >= wcet + Σ ceil(t / T_j) C_j.  None when it would exceed `limit`."""
    t = supply.time_to_supply(wcet + sum(h.wcet for h in higher))
    while t <= limit:
        demand = wcet + sum(_ceil_div(t, h.period) * h.wcet for h in higher)
        settled = supply.time_to_supply(demand)
        if settled == t:
            return t
        t = settled
    return None


def utilization(tasks: Sequence[PeriodicTask]) -> Fraction:
    return sum((Fraction(t.wcet, t.period) for t in tasks), Fraction(0))


def liu_layland_bound(n: int) -> float:
    """n(2^(1/n) − 1): rate-monotonic utilisation bound for n implicit-deadline tasks."""
    return n * (2 ** (1 / n) - 1) if n else 1.0


def hyperbolic_product(tasks: Sequence[PeriodicTask]) -> Fraction:
    """Π(U_i + 1); at most 2 is sufficient under rate-monotonic priorities (Bini et al.)."""
    return math.prod((Fraction(t.wcet, t.period) + 1 for t in tasks), start=Fraction(1))


def demand_bound(tasks: Sequence[PeriodicTask], t: int) -> int:
    """dbf(t): execution of the jobs released and due within any interval of length t."""
    return sum(max(0, (t - k.deadline) // k.period + 1) * k.wcet for k in tasks)


def _last_deadline_before(tasks: Sequence[PeriodicTask], t: int) -> int | None:
    """The largest absolute deadline k·T + D (k >= 0) strictly before t."""
    best = None
    for task in tasks:
        if task.deadline < t:
            d = (t - task.deadline - 1) // task.period * task.period + task.deadline
            best = d if best is None else max(best, d)
    return best


@dataclass(frozen=True)
class DemandTest:
    schedulable: bool
    failure_at: int | None = None   # an interval length where demand exceeds supply
    checked_up_to: int = 0


def edf_demand_test(tasks: Sequence[PeriodicTask], supply: Supply) -> DemandTest:
    """EDF is schedulable on `supply` iff dbf(t) <= sbf(t) for every t.

    Only deadlines below L need checking: beyond it the linear bounds
    dbf(t) <= U t + Σ (T_i − D_i) U_i and sbf(t) >= α (t − delay) cannot cross (α > U),
    or the pattern repeats every lcm(periods, supply cycle) (α = U).  Walking down from L,
    QPA jumps from t to the least time the supply covers dbf(t): every deadline in between
    is safe, because dbf does not grow and sbf does not shrink there."""
    if not tasks:
        return DemandTest(True)
    load = utilization(tasks)
    if load > supply.rate:
        return DemandTest(False)
    longest = max(t.deadline for t in tasks)
    if load < supply.rate:
        slack = sum((Fraction((t.period - t.deadline) * t.wcet, t.period) for t in tasks), Fraction(0))
        horizon = max(longest, math.ceil((slack + supply.rate * supply.delay) / (supply.rate - load)))
    else:
        horizon = max(longest, supply.delay) + math.lcm(supply.cycle, *(t.period for t in tasks))
    earliest = min(t.deadline for t in tasks)
    t = _last_deadline_before(tasks, horizon + 1)
    while t is not None and t >= earliest:
        demand = demand_bound(tasks, t)
        if demand > supply.sbf(t):
            return DemandTest(False, t, horizon)
        covered = supply.time_to_supply(demand)
        t = covered if covered < t else _last_deadline_before(tasks, t)
    return DemandTest(True, None, horizon)


def busy_period(tasks: Sequence[PeriodicTask], supply: Supply = DedicatedSupply()) -> int | None:
    """Length of the longest busy period of synchronously released tasks on `supply` (from
    the worst moment of the supply): the least t > 0 with sbf(t) >= Σ ceil(t / T_i) C_i.
    Below the supply's rate it exists (the arrivals grow as U t + Σ C, the supply as
    α (t − delay)); at the rate it may not close: then it is looked for up to a common
    period of both after the delay, and None beyond; above the rate None."""
    load = utilization(tasks) if tasks else None
    if load is None or load > supply.rate:
        return None
    limit = supply.delay + math.lcm(supply.cycle, *(t.period for t in tasks)) if load == supply.rate else None
    length = supply.time_to_supply(sum(t.wcet for t in tasks))
    while limit is None or length <= limit:
        longer = supply.time_to_supply(sum(_ceil_div(length, t.period) * t.wcet for t in tasks))
        if longer == length:
            return length
        length = longer
    return None


def edf_response_times(tasks: Sequence[PeriodicTask], supply: Supply = DedicatedSupply()) -> list[int | None]:
    """Worst-case response time of each task under preemptive EDF on `supply`.

    For each task i and each candidate release a of one of its jobs inside the busy period
    L, the deadline-a busy period L_i(a) is the least fixed point of
        L = sbf⁻¹((1 + floor(a / T_i)) C_i + Σ_{j≠i, D_j <= a + D_i} min(ceil(L / T_j), 1 + floor((a + D_i − D_j) / T_j)) C_j)
    and R_i = max over a of max(sbf⁻¹(C_i), L_i(a) − a).  Candidates: a = k T_j + D_j − D_i in
    [0, L).  On a dedicated processor (sbf(t) = t) this is Spuri's analysis (1996), exact for
    sporadic tasks; on a server the busy period starts at the worst moment of its supply, so
    the result is an upper bound.  Ties in deadlines are counted against task i, so the
    result bounds any tie-breaking.  None for every task when there is no busy period bound."""
    length = busy_period(tasks, supply)
    if length is None:
        return [None] * len(tasks)
    results: list[int | None] = []
    for i, task in enumerate(tasks):
        candidates = sorted({
            k * other.period + other.deadline - task.deadline
            for other in tasks
            for k in range(max(0, _ceil_div(task.deadline - other.deadline, other.period)), _ceil_div(length + task.deadline - other.deadline, other.period))
        })
        worst = supply.time_to_supply(task.wcet)
        for release in candidates:
            due = release + task.deadline
            own = (release // task.period + 1) * task.wcet
            span = supply.time_to_supply(own)
            while True:
                longer = supply.time_to_supply(own + sum(
                    min(_ceil_div(span, other.period), (due - other.deadline) // other.period + 1) * other.wcet
                    for j, other in enumerate(tasks)
                    if j != i and other.deadline <= due
                ))
                if longer == span:
                    break
                span = longer
            worst = max(worst, span - release)
        results.append(worst)
    return results
