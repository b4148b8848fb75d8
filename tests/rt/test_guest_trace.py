"""A trace recorded in each board's guest, checked against its configuration.

data/guest_table3.trace is the recorder's output (`rtctl trace`) of the Table III scenario
of rt/tests/guest/scenarios.sh, run in the x86 reference device (QEMU TCG, one CPU, -icount
shift=0,sleep=off) by tests/test_guest.py; data/guest_table3_arm64.trace is the same
scenario's on the ARM64 board (QEMU virt, cortex-a57, -icount shift=2,sleep=off, booted
through U-Boot); data/guest_table3.toml is the configuration both loaded (rt/examples/table3.toml).
tests/test_guest.py checks a fresh trace the same way on every run.  GUEST_TOLERANCE_US is
the timing slack allowed to the guest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.rt.check import check
from bootlab.rt.config import load_config
from bootlab.rt.report import server_stats, task_stats
from bootlab.rt.schedulability import analyze
from bootlab.rt.schedule import Schedule
from bootlab.rt.trace import read_trace

DATA = Path(__file__).parent / "data"
GUEST_TOLERANCE_US = 500
TOLERANCE = GUEST_TOLERANCE_US * 1_000
TRACES = {"x86": "guest_table3.trace", "arm64": "guest_table3_arm64.trace"}


@pytest.fixture(scope="module", params=TRACES)
def guest(request):
    config = load_config(DATA / "guest_table3.toml")
    trace = read_trace(DATA / TRACES[request.param])
    schedule = Schedule.from_trace(trace)
    schedule.name_from(config)
    return config, trace, schedule


def test_trace_is_whole_and_of_the_configured_plugin(guest):
    config, trace, schedule = guest
    assert trace.damage is None, str(trace.damage)
    assert trace.plugin == config.plugin
    assert not schedule.overflows and not schedule.anomalies


def test_every_server_and_task_was_created(guest):
    config, _, schedule = guest
    assert set(schedule.servers) == {s.id for s in config.servers}
    assert set(schedule.tasks) == {t.id for t in config.tasks}


def test_servers_stay_within_budget(guest):
    _, _, schedule = guest
    for stats in server_stats(schedule):
        assert stats.periods > 0
        assert stats.worst_used <= stats.budget + TOLERANCE, stats


def test_response_times_within_the_analysis(guest):
    config, _, schedule = guest
    stats = task_stats(schedule, analyze(config))
    assert stats and all(s.completed > 0 for s in stats)
    for s in stats:
        assert s.misses == 0, s
        assert s.worst_response <= s.bound + TOLERANCE, s


def test_schedule_matches_the_simulation(guest):
    config, trace, _ = guest
    result = check(config, trace, TOLERANCE)
    assert result.ok, result.violations[0].explain(result.origin)
    assert result.segments_compared > 0
