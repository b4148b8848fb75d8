"""Statistics on synthetic boots, where the truth is known."""

from __future__ import annotations

import numpy as np
import pytest

from bootlab.lab.compare import RunSet, can_be_significant, compare_sets, holm, ratio_interval
from bootlab.lab.store import Run


def runs(values, name="x") -> RunSet:
    return RunSet(name, [Run(i, f"u{i}", 0.0, None, None, None, "ok", "ready", {}, [], {}, "", None, None, i,
                             {"total": v, "phase:kernel init": v / 2}) for i, v in enumerate(values)])


def noisy(mean: float, n: int, rng, sd: float = 0.03) -> list[float]:
    return list(mean * (1 + sd * rng.standard_normal(n)))


@pytest.mark.parametrize("seed", range(5))
def test_ten_percent_faster_is_significant_with_eight_and_eight(seed):
    rng = np.random.default_rng(seed)
    cmp = compare_sets(runs(noisy(5e9, 8, rng)), runs(noisy(4.5e9, 8, rng)))
    row = cmp.row()
    assert row.significant(0.95) and cmp.verdict() == "faster"
    assert row.comparison.high < 0 and -15 < row.comparison.percent < -5


def test_no_difference_is_mostly_not_significant():
    """Under the null the test must be wrong about 5% of the time, no more."""
    rng = np.random.default_rng(42)
    trials = 200
    false = sum(compare_sets(runs(noisy(5e9, 8, rng)), runs(noisy(5e9, 8, rng))).row().significant(0.95)
                for _ in range(trials))
    assert false / trials <= 0.08


def test_no_difference_is_not_significant():
    rng = np.random.default_rng(7)
    cmp = compare_sets(runs(noisy(5e9, 8, rng)), runs(noisy(5e9, 8, rng)))
    assert not cmp.row().significant(0.95) and cmp.verdict() == "no significant difference"


def test_three_and_three_can_never_be_significant():
    assert not can_be_significant(3, 3, 0.95)
    assert not can_be_significant(3, 4, 0.95)
    assert can_be_significant(4, 4, 0.95) and can_be_significant(3, 5, 0.95) and can_be_significant(8, 8, 0.95)
    cmp = compare_sets(runs([5e9, 5.1e9, 5.05e9]), runs([3e9, 3.1e9, 3.05e9]))
    assert cmp.verdict() == "too few runs to test" and any("cannot reach" in n for n in cmp.notes)


def test_failed_runs_are_left_out_and_counted():
    a = runs([5e9] * 5)
    b = runs([4e9] * 5)
    b.runs[0].status = "failed"
    b.runs[0].metrics = {}
    cmp = compare_sets(a, b)
    assert cmp.row().b.n == 4 and any("1 of 5 runs failed" in n for n in cmp.notes)


def test_metrics_in_boot_order():
    cmp = compare_sets(runs([5e9] * 3), runs([4e9] * 3))
    assert [r.metric for r in cmp.rows] == ["phase:kernel init", "total"]


def test_holm_adjustment():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([0.2, 0.9]) == pytest.approx([0.4, 0.9])


def test_speedup_interval_brackets_the_truth():
    rng = np.random.default_rng(3)
    point, low, high = ratio_interval(noisy(6e9, 10, rng), noisy(1e9, 10, rng))
    assert low < point < high and low < 6.0 < high and 5.5 < point < 6.5
