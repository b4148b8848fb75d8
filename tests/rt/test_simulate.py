"""The simulator follows docs/rt-formats.md exactly: priorities, tie-breaking, idling
servers, misses, the order of events at one instant, and what-if execution times."""

from __future__ import annotations

from pathlib import Path

from bootlab.rt.config import Config, Server, Task, load_config
from bootlab.rt.schedule import Schedule
from bootlab.rt.multicore import split_cd
from bootlab.rt.simulate import ExecOverride, hyperperiod_ns, simulate
from bootlab.rt.trace import format_trace, parse_trace

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
MS = 1_000_000


def runs(config: Config, until_ms: int, overrides=()) -> list[tuple[int, int, int, int]]:
    """(task, job, start, end) of every execution segment, in ms."""
    schedule = Schedule.from_events(simulate(config, until_ms * MS, overrides), config.plugin)
    return [(g.owner, g.job, g.start // MS, g.end // MS) for g in schedule.segments]


def at(events, time_ms: int) -> list[str]:
    return [e.format().split(" ", 1)[1] for e in events if e.time == time_ms * MS]


def fp(*tasks: Task) -> Config:
    return Config("fp", "ms", (), tasks)


def test_fp_higher_priority_first_and_preempts():
    config = fp(Task(1, 10_000, 3_000, 10_000, priority=1), Task(2, 4_000, 1_000, 4_000, priority=0))
    assert runs(config, 9) == [(2, 0, 0, 1), (1, 0, 1, 4), (2, 1, 4, 5), (2, 2, 8, 9)]


def test_fp_equal_priorities_go_to_the_lower_id_even_by_preemption():
    # Task 2 runs alone until task 1, same priority and lower id, is released at 2 ms.
    config = fp(Task(2, 20_000, 5_000, 20_000, priority=3), Task(1, 20_000, 1_000, 20_000, priority=3, offset=2_000))
    assert runs(config, 20) == [(2, 0, 0, 2), (1, 0, 2, 3), (2, 0, 3, 6)]


def test_edf_earliest_deadline_then_lower_id_priority_ignored():
    config = Config("edf", "ms", (), (
        Task(5, 10_000, 2_000, 6_000, priority=0),
        Task(3, 10_000, 2_000, 6_000, priority=9),
        Task(4, 10_000, 1_000, 3_000, priority=99),
    ))
    assert runs(config, 10) == [(4, 0, 0, 1), (3, 0, 1, 3), (5, 0, 3, 5)]


def test_hsf_servers_tie_to_lower_id_and_tasks_by_local_priority():
    config = Config("hsf-fp", "ms", (Server(1, 10_000, 2_000, 5), Server(0, 10_000, 3_000, 5)), (
        Task(7, 10_000, 1_000, 10_000, priority=2, server=0),
        Task(8, 10_000, 1_000, 10_000, priority=1, server=0),
        Task(9, 10_000, 5_000, 10_000, priority=0, server=1),
    ))
    schedule = Schedule.from_events(simulate(config, 10 * MS), config.plugin)
    assert [(w.owner, w.start // MS, w.end // MS) for w in schedule.windows] == [(0, 0, 3), (1, 3, 5)]
    assert runs(config, 10) == [(8, 0, 0, 1), (7, 0, 1, 2), (9, 0, 3, 5)]


def test_idling_server_spends_its_budget_without_work():
    # Server 0 has no task: it is still active for its budget and server 1 waits.
    config = Config("hsf-fp", "ms", (Server(0, 10_000, 4_000, 0), Server(1, 10_000, 6_000, 1)),
                    (Task(1, 10_000, 2_000, 10_000, server=1),))
    schedule = Schedule.from_events(simulate(config, 20 * MS), config.plugin)
    assert [(w.owner, w.start // MS, w.end // MS) for w in schedule.windows][:2] == [(0, 0, 4), (1, 4, 10)]
    assert runs(config, 10) == [(1, 0, 4, 6)]


def test_edf_servers_by_the_end_of_their_period_then_lower_id():
    # Server 1 has the higher priority but the later period end: under hsf-edf server 0 runs
    # first; at 10 ms both periods end together (20 ms) and the tie goes to server 0 again.
    servers = (Server(0, 10_000, 3_000, 9), Server(1, 20_000, 4_000, 0))
    tasks = (Task(1, 10_000, 3_000, 10_000, server=0), Task(2, 20_000, 4_000, 20_000, server=1))
    schedule = Schedule.from_events(simulate(Config("hsf-edf", "ms", servers, tasks), 20 * MS), "hsf-edf")
    assert [(w.owner, w.start // MS, w.end // MS) for w in schedule.windows] == [(0, 0, 3), (1, 3, 7), (0, 10, 13)]
    fixed = Schedule.from_events(simulate(Config("hsf-fp", "ms", servers, tasks), 20 * MS), "hsf-fp")
    assert [(w.owner, w.start // MS, w.end // MS) for w in fixed.windows][:2] == [(1, 0, 4), (0, 4, 7)]


def test_tasks_inside_a_server_by_deadline_or_by_priority():
    # One server; task 2 has the higher priority, task 1 the earlier deadline.
    servers = (Server(0, 10_000, 10_000, 0),)
    tasks = (Task(1, 20_000, 2_000, 5_000, priority=1, server=0), Task(2, 20_000, 2_000, 20_000, priority=0, server=0))
    assert runs(Config("hsf-fp-edf", "ms", servers, tasks), 10) == [(1, 0, 0, 2), (2, 0, 2, 4)]
    assert runs(Config("hsf-edf-fp", "ms", servers, tasks), 10) == [(2, 0, 0, 2), (1, 0, 2, 4)]


def test_table3_server_windows_and_responses():
    config = load_config(DATA / "table3.toml")
    schedule = Schedule.from_events(simulate(config, hyperperiod_ns(config)), config.plugin)
    first = {p.server: p.depleted_at // MS for p in schedule.periods if p.start == 0}
    assert first == {0: 4, 1: 8, 2: 20}
    worst = {}
    for p in schedule.periods:
        if p.complete:
            worst[p.server] = max(worst.get(p.server, 0), (p.depleted_at - p.start) // MS)
    assert worst == {0: 4, 1: 8, 2: 20}
    assert all(p.used == p.budget for p in schedule.periods if p.complete)


def test_miss_keeps_running_and_jobs_stay_in_order():
    config = fp(Task(1, 4_000, 3_000, 4_000, priority=0))
    events = simulate(config, 8 * MS, [ExecOverride(1, 5 * MS, job=0)])
    assert at(events, 4) == ["miss task=1 job=0 deadline=4000000", "release task=1 job=1 deadline=8000000"]
    assert at(events, 5) == ["complete task=1 job=0", "start task=1 job=1"]
    assert at(events, 8) == ["complete task=1 job=1", "release task=1 job=2 deadline=12000000", "start task=1 job=2"]


def test_completion_at_the_deadline_is_not_a_miss():
    events = simulate(fp(Task(1, 4_000, 4_000, 4_000)), 8 * MS)
    assert not [e for e in events if e.name == "miss"]


def test_order_of_events_at_one_instant():
    config = Config("hsf-fp", "ms", (Server(0, 4_000, 2_000, 0), Server(1, 4_000, 2_000, 1)), (
        Task(1, 4_000, 2_000, 4_000, server=0),
        Task(2, 8_000, 3_000, 4_000, server=1),
    ))
    events = simulate(config, 8 * MS)
    assert at(events, 2) == ["complete task=1 job=0", "deplete server=0", "server_resume server=1", "start task=2 job=0"]
    assert at(events, 4) == [
        "deplete server=1", "replenish server=0 budget=2000000", "replenish server=1 budget=2000000",
        "release task=1 job=1 deadline=8000000", "miss task=2 job=0 deadline=4000000",
        "preempt task=2 job=0", "server_resume server=0", "start task=1 job=1"]


def test_offsets_and_job_limits():
    config = fp(Task(1, 5_000, 1_000, 5_000, offset=2_000, jobs=2))
    events = simulate(config, 30 * MS)
    assert [e.time // MS for e in events if e.name == "release"] == [2, 7]


def test_exec_override_for_all_jobs():
    config = fp(Task(1, 10_000, 2_000, 10_000))
    assert runs(config, 20, [ExecOverride(1, 3 * MS)]) == [(1, 0, 0, 3), (1, 1, 10, 13)]


def test_deterministic_and_round_trips_through_the_trace_format():
    config = load_config(DATA / "table3_tasks.toml")
    first = format_trace(simulate(config, 200 * MS), config.plugin)
    assert first == format_trace(simulate(config, 200 * MS), config.plugin)
    trace = parse_trace(first)
    assert trace.problems == [] and trace.plugin == "hsf-fp"
    assert format_trace(trace.events, "hsf-fp") == first


def test_cli_simulate_writes_a_trace(rt_cli, tmp_path):
    out = tmp_path / "sim.trace"
    status, _, _ = rt_cli("simulate", DATA / "table3_tasks.toml", "--until", "56", "-o", out,
                          "--exec", "grabber@1=7.5ms")
    assert status == 0
    text = out.read_text()
    assert text.startswith("# rtsched-trace 1 plugin=hsf-fp\n")
    assert text.splitlines()[-1].startswith("56000000 ")


def test_cli_simulate_defaults_to_one_hyperperiod_and_checks_exec(rt_cli):
    status, out, _ = rt_cli("simulate", DATA / "table3.toml")
    assert status == 0 and out.splitlines()[-1].startswith("420000000 ")
    status, _, err = rt_cli("simulate", DATA / "table3_tasks.toml", "--exec", "nobody=1ms")
    assert status == 2 and "TASK[@JOB]=TIME" in err
    status, _, err = rt_cli("simulate", DATA / "table3_tasks.toml", "--until", "soon")
    assert status == 2 and "not a duration" in err


def test_cli_simulate_enforces_budgets_as_the_kernel_does(rt_cli):
    """--enforce: a runaway job (task 0 asks 100 ms of a 2 ms wcet) is throttled at its wcet,
    so the lower priorities keep their deadlines; without it they miss."""
    args = ("simulate", ROOT / "rt" / "examples" / "fp.toml", "--until", "80ms", "--exec", "0@0=100ms")
    status, ideal, _ = rt_cli(*args)
    assert status == 0 and "miss task=1 " in ideal and "overrun" not in ideal
    status, enforced, _ = rt_cli(*args, "--enforce")
    assert status == 0 and "2000000 overrun task=0 job=0" in enforced
    assert "miss task=1 " not in enforced and "miss task=2 " not in enforced


def cpu_runs(config: Config, until_ms: int) -> list[tuple[int, int, int, int, int]]:
    """(task, job, cpu, start, end) of every execution segment, in ms."""
    schedule = Schedule.from_events(simulate(config, until_ms * MS), config.plugin)
    assert schedule.anomalies == []
    return sorted((g.owner, g.job, g.cpu, g.start // MS, g.end // MS) for g in schedule.segments)


def test_global_fp_runs_the_first_jobs_and_a_preempted_job_migrates():
    # Two CPUs.  Task 3 (lowest) starts on CPU 1; at 2 ms task 2 takes it; when task 1
    # completes at 3 ms, CPU 0 frees and task 3 resumes there: one migration.
    config = Config("global-fp", "ms", (), (
        Task(1, 20_000, 3_000, 20_000, priority=0),
        Task(2, 20_000, 2_000, 20_000, priority=1, offset=2_000),
        Task(3, 20_000, 4_000, 20_000, priority=2),
    ), cpus=2)
    assert cpu_runs(config, 10) == [(1, 0, 0, 0, 3), (2, 0, 1, 2, 4), (3, 0, 0, 3, 5), (3, 0, 1, 0, 2)]
    schedule = Schedule.from_events(simulate(config, 10 * MS), config.plugin)
    assert schedule.jobs[(3, 0)].migrations == 1 and schedule.jobs[(1, 0)].migrations == 0
    events = simulate(config, 10 * MS)
    assert at(events, 3) == ["complete task=1 job=0 cpu=0", "resume task=3 job=0 cpu=0"]


def test_global_edf_by_deadline_and_a_resumed_job_keeps_its_last_cpu_when_free():
    config = Config("global-edf", "ms", (), (
        Task(1, 10_000, 4_000, 10_000),
        Task(2, 10_000, 2_000, 5_000, offset=1_000),
        Task(3, 20_000, 6_000, 20_000),
    ), cpus=2)
    # At 1 ms task 2 (deadline 6) preempts task 3 (deadline 20) on CPU 1; task 3 resumes on
    # CPU 1, where it ran, when task 2 completes at 3 ms.
    assert cpu_runs(config, 9) == [(1, 0, 0, 0, 4), (2, 0, 1, 1, 3), (3, 0, 1, 0, 1), (3, 0, 1, 3, 8)]


def test_partitioned_tasks_stay_on_their_cpus():
    config = Config("partitioned-edf", "ms", (), (
        Task(1, 10_000, 6_000, 10_000), Task(2, 10_000, 6_000, 10_000), Task(3, 10_000, 3_000, 10_000),
    ), cpus=2, assignment="worst-fit")
    # Worst-fit decreasing: task 1 on CPU 0, task 2 on CPU 1 (empty), task 3 on CPU 0 (ties: lower index).
    assert cpu_runs(config, 10) == [(1, 0, 0, 0, 6), (2, 0, 1, 0, 6), (3, 0, 0, 6, 9)]


def test_semi_partitioned_split_task_runs_its_first_part_at_once_then_migrates():
    # U = 1.7 on two CPUs: no partition fits, C=D splitting does.  Task 2 (10 of 20 ms) is
    # split: 4 ms with C = D on CPU 0, where it runs at each release, then 6 ms on CPU 1.
    config = Config("semi-partitioned-edf", "ms", (), (
        Task(0, 10_000, 6_000, 10_000), Task(1, 10_000, 6_000, 10_000), Task(2, 20_000, 10_000, 20_000),
    ), cpus=2)
    assert [(p.task, p.cpu, p.wcet, p.deadline, p.start) for p in split_cd(config).pieces] == [
        (0, 0, 6_000, 10_000, 0), (1, 1, 6_000, 10_000, 0), (2, 0, 4_000, 4_000, 0), (2, 1, 6_000, 16_000, 4_000)]
    assert [r for r in cpu_runs(config, 20) if r[0] == 2] == [(2, 0, 0, 0, 4), (2, 0, 1, 6, 10), (2, 0, 1, 16, 18)]


def test_multicore_trace_reads_back_with_its_cpus():
    config = load_config(Path(__file__).parents[2] / "rt" / "examples" / "global.toml")
    events = simulate(config, hyperperiod_ns(config))
    trace = parse_trace(format_trace(events, config.plugin))
    assert trace.problems == []
    direct, read = Schedule.from_events(events, config.plugin), Schedule.from_trace(trace)
    assert read.segments == direct.segments and {g.cpu for g in read.segments} == {0, 1}
    assert sum(j.migrations for j in read.jobs.values()) == sum(j.migrations for j in direct.jobs.values()) > 0
