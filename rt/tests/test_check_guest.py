"""The guest checker must catch what it is there to catch (pytest)."""
import io
from contextlib import redirect_stdout

from check_guest import Checker, parse_scenarios, parse_trace

MS = 1_000_000


def trace(stop_ns):
    """Server 0 (4 ms of 10) whose task 100 leaves the CPU at stop_ns."""
    return [
        "==== rtsched-scenario table3 begin ====",
        "==== rtsched-trace begin ====",
        "# rtsched-trace 1 plugin=hsf-fp",
        "0 server_create server=0 period=10000000 budget=4000000 prio=0",
        "0 task_create task=1 pid=100 server=0 period=10000000 wcet=1 deadline=10000000 prio=0",
        "0 replenish server=0 budget=4000000",
        "0 server_resume server=0",
        "0 switch cpu=0 prev_pid=0 prev_comm=swapper/0 prev_state=R next_pid=100 next_comm=t",
        f"{4 * MS} deplete server=0",
        f"{stop_ns} switch cpu=0 prev_pid=100 prev_comm=t prev_state=D next_pid=0 next_comm=swapper/0",
        "==== rtsched-trace end ====",
        "==== rtsched-scenario table3 end rc=0 ====",
    ]


def judge(lines):
    rc, body = parse_scenarios("\n".join(lines))["table3"]
    checker = Checker()
    with redirect_stdout(io.StringIO()) as out:
        checker.hsf("table3", parse_trace(body), tol=100_000)
    return checker.failed, out.getvalue()


def test_prompt_stop_passes():
    failed, out = judge(trace(4 * MS + 50_000))
    assert failed == 0, out


def test_overrun_is_caught():
    failed, out = judge(trace(6 * MS))
    assert "FAIL table3: server 0 within budget" in out
    assert "FAIL table3: tasks run only in their server" in out
    assert failed == 2
