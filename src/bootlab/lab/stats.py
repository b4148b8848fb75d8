"""Statistics over repeated boots: medians with confidence intervals, differences, and a
significance test.

Boot times are skewed and samples are small, so nothing here assumes a normal
distribution: the median's interval comes from order statistics (a binomial argument,
exact for any continuous distribution), the difference of two medians gets a bootstrap
interval, and significance is the Mann-Whitney U test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass
class Summary:
    n: int
    median: float
    low: float  # confidence interval of the median
    high: float
    min: float
    max: float
    confidence: float


def summarize(values: list[float], confidence: float = 0.95) -> Summary:
    if not values:
        raise ValueError("no values")
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    low, high = median_interval(n, confidence)
    return Summary(n, float(np.median(x)), float(x[low]), float(x[high]), float(x[0]), float(x[-1]), confidence)


def median_interval(n: int, confidence: float) -> tuple[int, int]:
    """Indices (0-based) of the order statistics bounding the median with at least the
    given confidence; the whole range when n is too small to do better."""
    alpha = 1 - confidence
    best = (0, n - 1)
    for k in range(0, n // 2):
        # P(X_(k+1) <= median <= X_(n-k)) = 1 - 2 * P(Binomial(n, 1/2) <= k)
        if 1 - 2 * stats.binom.cdf(k, n, 0.5) >= 1 - alpha:
            best = (k, n - 1 - k)
        else:
            break
    return best


@dataclass
class Comparison:
    baseline: Summary
    candidate: Summary
    difference: float  # candidate median - baseline median
    low: float  # bootstrap interval of the difference
    high: float
    p_value: float

    @property
    def percent(self) -> float:
        return 100.0 * self.difference / self.baseline.median if self.baseline.median else math.nan


def compare(baseline: list[float], candidate: list[float], confidence: float = 0.95, seed: int = 0) -> Comparison:
    a = np.asarray(baseline, dtype=float)
    b = np.asarray(candidate, dtype=float)
    diff = float(np.median(b) - np.median(a))
    if len(a) >= 2 and len(b) >= 2:
        p = float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
        rng = np.random.default_rng(seed)
        boot = stats.bootstrap((a, b), lambda x, y, axis=-1: np.median(y, axis=axis) - np.median(x, axis=axis),
                               confidence_level=confidence, n_resamples=2000, method="percentile",
                               random_state=rng, vectorized=True)
        low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    else:
        p, low, high = 1.0, math.nan, math.nan
    return Comparison(summarize(list(a), confidence), summarize(list(b), confidence), diff, low, high, p)


def significant(p: float, low: float, high: float, confidence: float) -> bool:
    """The test rejects at the level and the bootstrap interval of the difference excludes zero."""
    return p < 1 - confidence and not (low <= 0 <= high)


def failure_rate(failed: int, boots: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a failure probability seen `failed` times in
    `boots`: with none seen, its upper end is how rare a failure could still be (about
    3.7/boots)."""
    ci = stats.binomtest(failed, boots).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)
