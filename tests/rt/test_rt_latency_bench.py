"""bench/rt_latency/analyze.py's server switches: from a planned server boundary to the next
server's task running a job there.  At the end of a run a task that has done its jobs is
switched in to exit, long after its server resumed (1.9 ms in the two-vCPU guest, 2026-11-28):
that is no server switch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).parents[2] / "bench" / "rt_latency"
_spec = importlib.util.spec_from_file_location("rt_latency_analyze", BENCH / "analyze.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

TRACE = """==== rtsched-trace begin ====
0 task_create task=0 pid=100 server=0 period=8000000 wcet=1000000
0 task_create task=1 pid=101 server=1 period=8000000 wcet=1000000
1000 server_resume server=0
1000 release task=0 job=0
6000 switch cpu=0 prev_comm=sh prev_state=R next_pid=100 next_comm=rtctl
6000 start task=0 job=0 cpu=0
2001000 deplete server=0
2001000 server_resume server=1
2023000 switch cpu=0 prev_comm=rtctl prev_state=S next_pid=101 next_comm=rtctl
2023000 resume task=1 job=0 cpu=0
4001000 deplete server=1
4001000 server_resume server=0
5911000 switch cpu=0 prev_comm=sh prev_state=R next_pid=100 next_comm=rtctl
==== rtsched-trace end ===="""


def test_a_server_switch_counts_only_when_its_task_goes_on_with_a_job():
    events = bench.parse_trace(TRACE.splitlines())
    # The first resume follows no boundary; the second is a switch (22 us); the third's task
    # came in without a job, to exit.
    assert bench.server_switches(events) == [22_000]
