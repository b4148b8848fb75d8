"""The blame lists' column arithmetic against the rule it stands for, spelled out in
plain Python (analysis/blame.py sorts only what it must on a big log)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.analysis.blame import Outcome, outcome, top
from bootlab.timeline import Boot, Clock, Event, Kind, ranked

spans = st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from([None, "m1", "m2"]),
                           st.integers(0, 4), st.booleans()), max_size=40)


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(0, 3000))
def test_ranking_is_numpys_unique(values, extra):
    # Both ways (a dense table of the values' range, or sorting when the range is wide).
    bound = (max(values) + 1 if values else 1) + extra
    got_values, got_key = ranked(np.asarray(values, dtype=np.int64), bound)
    want_values, want_key = np.unique(np.asarray(values, dtype=np.int64), return_inverse=True)
    assert got_values.tolist() == want_values.tolist() and got_key.tolist() == want_key.reshape(-1).tolist()


@settings(max_examples=200)
@given(spans)
def test_top_keeps_each_functions_longest_the_timed_then_the_first_of_equals(rows):
    boot = Boot()
    for line, (name, module, dur, timed) in enumerate(rows, 1):
        boot.add(Event(Kind.INITCALL, name, Clock.PRINTK, line * 10 if timed else None, dur, "log", line,
                       attrs={"module": module} if module else None))
    kept: dict[tuple, tuple] = {}
    for line, (name, module, dur, timed) in enumerate(rows, 1):
        best = kept.get((name, module))
        if best is None or (dur, timed) > (best[0], best[1]):  # longer, or as long and timed
            kept[(name, module)] = (dur, timed, line)
    want = sorted(((-dur, name, line) for (name, _m), (dur, _t, line) in kept.items()))
    assert [(b.name, b.where) for b in top(boot, Kind.INITCALL, None)] == [(name, f"log:{line}")
                                                                           for _d, name, line in want]


def test_positive_returns_are_read_as_the_kernel_means_them():
    """A public 6.18 VM's initcall_debug: `crash_hotplug_init returned 64` (the CPU-hotplug
    state it got) and `set_hardened_usercopy returned 1` were failures ("ENONET", "EPERM"),
    and a probe's `returned 19` (the driver core's rejected match) a failure, not absent."""
    assert outcome(Kind.INITCALL, 64) == Outcome.OK and outcome(Kind.INITCALL, 1) == Outcome.OK
    assert outcome(Kind.INITCALL, -19) == Outcome.ABSENT and outcome(Kind.INITCALL, -5) == Outcome.FAILED
    assert outcome(Kind.PROBE, 19) == Outcome.ABSENT and outcome(Kind.PROBE, 6) == Outcome.ABSENT
    assert outcome(Kind.PROBE, 1) == Outcome.OK and outcome(Kind.PROBE, 517) == Outcome.DEFERRED
    assert outcome(Kind.PROBE, 5) == Outcome.FAILED
