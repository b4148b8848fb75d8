"""`bootlab rt check`: a simulated trace passes, an injected overrun or a budget overrun
fails with the first violation explained, boundaries move within the tolerance only."""

from __future__ import annotations

from pathlib import Path

from bootlab.rt.check import check
from bootlab.rt.config import load_config
from bootlab.rt.simulate import ExecOverride, simulate
from bootlab.rt.trace import Event, format_trace, parse_trace

DATA = Path(__file__).parent / "data"
MS = 1_000_000
US = 1_000
BOOT = 1_500_000_000   # a recorder's clock does not start at 0


def recorded(config_name: str = "table3_tasks.toml", until_ms: int = 336, overrides=(), shift: int = BOOT):
    """A simulated trace as the recorder would write it: on another clock, with pids."""
    config = load_config(DATA / config_name)
    events = []
    for e in simulate(config, until_ms * MS, overrides):
        fields = dict(e.fields)
        if e.name == "task_create":
            fields = {"task": fields.pop("task"), "pid": 1000 + e["task"], **fields}
        events.append(Event(e.time + shift, e.name, fields))
    return config, events


def as_trace(events, plugin="hsf-fp"):
    return parse_trace(format_trace(events, plugin), "recorded.trace")


def test_simulated_trace_passes_exactly():
    config, events = recorded()
    result = check(config, as_trace(events), 0)
    assert result.ok, [v.explain(result.origin) for v in result.violations]
    assert result.origin == BOOT
    assert result.jobs_checked > 20 and result.periods_checked > 40 and result.segments_compared > 100


def test_flat_plugins_pass_too():
    for name, plugin in (("flat_fp.toml", "fp"), ("flat_edf.toml", "edf")):
        config, events = recorded(name, 200)
        result = check(config, as_trace(events, plugin), 0)
        assert result.ok, (name, [v.explain(result.origin) for v in result.violations])


def test_injected_overrun_fails_with_the_first_violation():
    config, events = recorded(overrides=[ExecOverride(4, 9 * MS, job=1)])   # grabber job 1: 9 ms, not 6
    result = check(config, as_trace(events), 0)
    assert not result.ok
    first = result.violations[0]
    # Simulated: grabber job 1 runs [56, 60) then, after Server0 and Server1, [68, 70) ms;
    # with 9 ms it is still running when Server2's budget runs out at 72.
    assert first.subject == "grabber job 1"
    assert first.what == "the job on the CPU starts or stops at other times than in the simulation"
    assert first.expected == "grabber job 1 over [68, 70) ms ±0 ms" and first.found == "grabber job 1 over [68, 72) ms"
    assert first.explain(result.origin).startswith("at 68 ms from the trace's start: grabber job 1:")


def test_overrun_past_the_bound_is_reported_as_a_response_violation():
    config, events = recorded(overrides=[ExecOverride(3, 15 * MS, job=0)])   # logger: 15 ms, not 3
    result = check(config, as_trace(events), 1 * MS)
    kinds = {(v.subject, v.what) for v in result.violations}
    assert ("logger job 0", "response time above the analytical bound") in kinds


def test_boundaries_within_the_tolerance_pass():
    config, events = recorded()
    jittered = [Event(e.time + (i % 5) * 20 * US, e.name, e.fields) for i, e in enumerate(events)]
    assert check(config, as_trace(jittered), 100 * US).ok
    assert not check(config, as_trace(jittered), 10 * US).ok


def test_server_running_over_its_budget():
    config, events = recorded()
    # Server0's first depletion (at 4 ms) comes 1 ms late: it ran 5 ms of a 4 ms budget.
    late = [Event(e.time + MS, e.name, e.fields) if e.time == BOOT + 4 * MS and e.name in ("deplete", "server_resume") and e.fields.get("server") in (0, 1) else e
            for e in events]
    result = check(config, as_trace(late), 100 * US)
    budget = [v for v in result.violations if v.what == "active longer than its budget"]
    assert budget and budget[0].subject == "Server0 period from 0 ms" and budget[0].found == "5 ms"


def test_configuration_mismatch_is_reported():
    config, events = recorded()
    other = load_config(DATA / "table3.toml")
    result = check(other, as_trace(events), 0)
    assert any(v.what == "created but not in the configuration" for v in result.violations)


def test_overflow_limits_the_comparison():
    config, events = recorded()
    cut = BOOT + 100 * MS
    kept = [e for e in events if e.time < cut] + [Event(cut + 50 * MS, "overflow", {"lost": 12})]
    kept += [e for e in events if e.time > cut + 50 * MS]
    result = check(config, as_trace(kept), 0)
    assert result.ok and any("lost events" in n for n in result.notes)


def test_cli_check(rt_cli, tmp_path):
    config, events = recorded()
    good = tmp_path / "good.trace"
    good.write_text(format_trace(events, "hsf-fp"))
    status, out, _ = rt_cli("check", DATA / "table3_tasks.toml", good, "--tolerance-us", "0")
    assert status == 0 and out.startswith("ok: ")
    _, events = recorded(overrides=[ExecOverride(1, 5 * MS, job=2)])
    bad = tmp_path / "bad.trace"
    bad.write_text(format_trace(events, "hsf-fp"))
    status, out, _ = rt_cli("check", DATA / "table3_tasks.toml", bad)
    assert status == 1
    assert out.startswith("FAILED: at 48 ms from the trace's start: control job 2: the job on the CPU starts or stops "
                          "at other times than in the simulation: expected control job 2 over [48, 50) ms ±0.1 ms, "
                          "found control job 2 over [48, 52) ms\n")
    status, out, _ = rt_cli("check", DATA / "table3_tasks.toml", bad, "--all")
    assert status == 1 and "\nalso: at " in out
    status, _, err = rt_cli("check", DATA / "table3_tasks.toml", bad, "--tolerance-us", "-1")
    assert status == 2


def test_partitioned_trace_is_compared_cpu_by_cpu():
    config = load_config(Path(__file__).parents[2] / "rt" / "examples" / "partitioned.toml")
    events = simulate(config, 200 * MS)
    assert check(config, as_trace(events, config.plugin), 0).ok
    # CPU 0's switches recorded 50 µs late, as a second CPU's clock may be: within the
    # tolerance on each CPU, though jobs starting together on the two CPUs change order.
    late = sorted((Event(e.time + 50_000, e.name, e.fields) if e.fields.get("cpu") == 0 and e.name != "task_create"
                   else e for e in events), key=lambda e: e.time)
    assert check(config, as_trace(late, config.plugin), 100_000).ok
    # The same schedule with every job of "camera" (CPU 1) recorded on CPU 0: wrong CPU.
    moved = [Event(e.time, e.name, {**e.fields, "cpu": 0}) if e.fields.get("task") == 0 and "cpu" in e.fields
             and e.name != "task_create" else e for e in events]
    result = check(config, as_trace(moved, config.plugin), 0)
    assert not result.ok and "job on the CPU" in result.violations[0].what
