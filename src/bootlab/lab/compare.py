"""Two sets of runs side by side: per-metric medians, differences, intervals, tests.

A set is named the way a user names runs: a run id (`12`), a uuid prefix, a label, a
campaign (`seed-quiet`, when it has one variant) or `campaign:variant`.  Only runs that
reached the ready marker carry numbers; the others are counted and reported as failed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

from ..timeline import Mark, Phase
from .stats import Comparison, Summary, compare, significant, summarize
from .store import Run, Store, StoreError

INTERRUPTED = "interrupted"  # the status of a boot stopped by Ctrl-C: not a result


class RefError(Exception):
    pass


def counts(run: Run) -> bool:
    """Whether a stored run is a result (a boot interrupted by the user is not)."""
    return run.status != INTERRUPTED


@dataclass
class RunSet:
    name: str
    runs: list[Run]

    @property
    def ok(self) -> list[Run]:
        return [r for r in self.runs if r.status == "ok" and r.metrics]

    @property
    def failed(self) -> list[Run]:
        return [r for r in self.runs if not (r.status == "ok" and r.metrics)]

    def values(self, metric: str) -> list[float]:
        return [r.metrics[metric] for r in self.ok if metric in r.metrics]


def resolve(store: Store, ref: str) -> RunSet:
    """The runs a reference names (see the module's docstring)."""
    if ref.isascii() and ref.isdigit():
        try:
            return RunSet(f"run {ref}", [store.get(ref)])
        except StoreError as err:
            raise RefError(str(err)) from None
    campaign, colon, variant = ref.partition(":")
    if colon:
        runs = [r for r in store.runs(campaign=campaign) if r.variant == variant and counts(r)]
        if not runs:
            raise RefError(f"no runs of variant {variant!r} in campaign {campaign!r} in {store.path}")
        return RunSet(ref, runs)
    labelled = [r for r in store.runs(label=ref) if counts(r)]
    if labelled:
        return RunSet(ref, labelled)
    in_campaign = [r for r in store.runs(campaign=ref) if counts(r)]
    if in_campaign:
        variants = sorted({r.variant or "" for r in in_campaign})
        if len(variants) > 1:
            raise RefError(f"campaign {ref!r} has {len(variants)} variants: name one, e.g. "
                           f"{ref}:{variants[0]} (variants: {', '.join(variants)})")
        return RunSet(ref, in_campaign)
    try:
        return RunSet(f"run {ref}", [store.get(ref)])
    except StoreError:
        raise RefError(f"{ref!r} is not a run id, uuid, label, campaign or campaign:variant in {store.path}") from None


def metric_order(name: str) -> tuple:
    """Phases in boot order, then named steps, the total, boundaries, the rest."""
    kind, _, rest = name.partition(":")
    if kind == "phase":
        phases = [p.value for p in Phase]
        first = rest.split(" + ")[0]
        return (0, phases.index(first) if first in phases else len(phases), rest)
    if kind == "step":
        return (1, 0, rest)
    if name == "total":
        return (2, 0, "")
    if kind == "at":
        marks = [m.value for m in Mark]
        return (3, marks.index(rest) if rest in marks else len(marks), rest)
    return (4, 0, name)


@dataclass
class MetricRow:
    metric: str
    a: Summary | None
    b: Summary | None
    comparison: Comparison | None  # None unless both sides have values
    p_adjusted: float | None = None  # Holm-adjusted over a campaign's variants (primary metric only)

    @property
    def p(self) -> float | None:
        if self.comparison is None:
            return None
        return self.p_adjusted if self.p_adjusted is not None else self.comparison.p_value

    def significant(self, confidence: float) -> bool:
        c = self.comparison
        return c is not None and self.p is not None and significant(self.p, c.low, c.high, confidence)


@dataclass
class SetComparison:
    a: RunSet
    b: RunSet
    rows: list[MetricRow]
    primary: str = "total"
    confidence: float = 0.95
    notes: list[str] = field(default_factory=list)

    def row(self, metric: str | None = None) -> MetricRow | None:
        metric = metric or self.primary
        return next((r for r in self.rows if r.metric == metric), None)

    @property
    def testable(self) -> bool:
        """Whether the test could reach significance at all with these sample sizes."""
        return can_be_significant(len(self.a.values(self.primary)), len(self.b.values(self.primary)),
                                  self.confidence)

    def verdict(self) -> str:
        row = self.row()
        if row is None or row.comparison is None:
            return "no numbers to compare"
        if not row.significant(self.confidence):
            return "no significant difference" if self.testable else "too few runs to test"
        return "faster" if row.comparison.difference < 0 else "slower"


def can_be_significant(n_a: int, n_b: int, confidence: float) -> bool:
    """The smallest two-sided Mann-Whitney p-value is 2 / C(n_a + n_b, n_a) (complete
    separation): below the level only with enough runs (3 + 3 never are, 4 + 4 are)."""
    if n_a < 1 or n_b < 1:
        return False
    return 2 / math.comb(n_a + n_b, n_a) < 1 - confidence


def compare_sets(a: RunSet, b: RunSet, primary: str = "total", confidence: float = 0.95) -> SetComparison:
    names = {m for r in a.ok + b.ok for m in r.metrics if m != f"at:{Mark.POWER_ON}"}
    rows = []
    for metric in sorted(names, key=metric_order):
        va, vb = a.values(metric), b.values(metric)
        c = compare(va, vb, confidence) if va and vb else None
        rows.append(MetricRow(metric, c.baseline if c else summarize(va, confidence) if va else None,
                              c.candidate if c else summarize(vb, confidence) if vb else None, c))
    notes = []
    for s in (a, b):
        if s.failed:
            notes.append(f"{s.name}: {len(s.failed)} of {len(s.runs)} runs failed and are left out of the statistics")
    result = SetComparison(a, b, rows, primary, confidence, notes)
    if result.row() is not None and not result.testable:
        na, nb = len(a.values(primary)), len(b.values(primary))
        notes.append(f"{na} + {nb} runs: the Mann-Whitney test cannot reach p < {1 - confidence:g} with so few "
                     "(use 5 or more runs per side)")
    return result


def holm(p_values: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone), in the input's order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def ratio_interval(a: list[float], b: list[float], confidence: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """median(a) / median(b) (a speed-up when a is the baseline) with a bootstrap interval."""
    point = float(np.median(a) / np.median(b))
    if len(a) < 2 or len(b) < 2:
        return point, math.nan, math.nan
    res = scipy_stats.bootstrap((np.asarray(a, float), np.asarray(b, float)),
                                lambda x, y, axis=-1: np.median(x, axis=axis) / np.median(y, axis=axis),
                                confidence_level=confidence, n_resamples=2000, method="percentile",
                                random_state=np.random.default_rng(seed), vectorized=True)
    return point, float(res.confidence_interval.low), float(res.confidence_interval.high)
