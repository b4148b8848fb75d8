"""The C side against the Python side on the same random configurations:

- the policy core (rt/core, driven by rt/tests/unit/core_replay on its host executor) must
  give the simulator's events, budget enforcement included (the example from the review: a
  job completing exactly at its deadline; a task spinning forever, throttled or signalled);
- rtctl's admission control (rt/lib/rtadmit.c, `rtctl check`) must give the verdict of
  `bootlab rt analyze`."""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.rt.config import HIERARCHICAL, Config, Server, Task, load_config
from bootlab.rt.schedulability import analyze
from bootlab.rt.simulate import ExecOverride, hyperperiod_ns, simulate
from bootlab.rt.trace import parse_trace

RT = Path(__file__).resolve().parents[2] / "rt"
REPLAY = RT / "build" / "core_replay"
RTCTL = RT / "build" / "rtctl"
# Milliseconds dividing 120: short hyperperiods, and many instants where events coincide.
PERIODS_MS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120)
MS = 1000


@pytest.fixture(scope="module", autouse=True)
def c_programs():
    subprocess.run(["make", "-s", "-C", str(RT), "build/core_replay", "build/rtctl"], check=True)


def to_toml(config: Config) -> str:
    lines = [f'plugin = "{config.plugin}"', 'unit = "us"']
    if config.overhead_us:
        lines.append(f"overhead_us = {config.overhead_us}")
    if config.multicore:
        lines.append(f"cpus = {config.cpus}")
    if config.multicore == "partitioned":
        lines.append(f'assignment = "{config.assignment}"')
    for s in config.servers:
        lines += ["[[server]]", f"id = {s.id}", f"period = {s.period}", f"budget = {s.budget}",
                  f"priority = {s.priority}"]
    for t in config.tasks:
        lines += ["[[task]]", f"id = {t.id}", f"period = {t.period}", f"wcet = {t.wcet}",
                  f"deadline = {t.deadline}", f"priority = {t.priority}", f"offset = {t.offset}",
                  f'overrun = "{t.overrun}"']
        if t.server is not None:
            lines.append(f"server = {t.server}")
        if t.cpu is not None:
            lines.append(f"cpu = {t.cpu}")
    return "\n".join(lines) + "\n"


def written(config: Config, tmp: Path) -> Path:
    path = tmp / "config.toml"
    path.write_text(to_toml(config))
    return path


# Longer than any simulated span: a job that never completes.
FOREVER = 10**15


def core_events(config: Config, until: int, tmp: Path, spin: int | None = None) -> Counter:
    extra = [] if spin is None else [str(spin)]
    out = subprocess.run([str(REPLAY), str(written(config, tmp)), str(until), *extra], capture_output=True,
                         text=True, check=True)
    return events_of(parse_trace(out.stdout).events, until)


def events_of(events, until: int) -> Counter:
    """The comparable events: everything but the configuration, before until."""
    return Counter((e.time, e.name, tuple(sorted(e.fields.items()))) for e in events
                   if e.time < until and e.name not in ("server_create", "task_create"))


def assert_same(config: Config, tmp: Path, spin: int | None = None) -> None:
    until = hyperperiod_ns(config) * 2
    core = core_events(config, until, tmp, spin)
    spinning = [] if spin is None else [ExecOverride(spin, FOREVER)]
    sim = events_of(simulate(config, until, spinning, enforce=True), until)
    assert core - sim == Counter() and sim - core == Counter(), (
        f"only in the core: {sorted(core - sim)[:8]}\nonly in the simulator: {sorted(sim - core)[:8]}")


@st.composite
def tasks(draw, servers: tuple[int, ...] = ()) -> tuple[Task, ...]:
    count = draw(st.integers(1, 4))
    ids = draw(st.lists(st.integers(0, 255), min_size=count, max_size=count, unique=True))
    out = []
    for ident in ids:
        period = draw(st.sampled_from(PERIODS_MS))
        deadline = draw(st.integers(1, period))
        out.append(Task(ident, period * MS, draw(st.integers(1, deadline)) * MS, deadline * MS,
                        priority=draw(st.integers(0, 3)), offset=draw(st.integers(0, 3)) * MS,
                        server=draw(st.sampled_from(servers)) if servers else None,
                        overrun=draw(st.sampled_from(("throttle", "signal")))))
    return tuple(out)


# A configuration's overhead_us, charged by the analysis and by rtctl's admission alike (0
# most often: the plain analysis).
OVERHEADS = st.sampled_from((0, 0, 0, 1, 40, 700))


@st.composite
def configs(draw) -> Config:
    plugin = draw(st.sampled_from(("fp", "edf", *HIERARCHICAL)))
    if plugin not in HIERARCHICAL:
        return Config(plugin, "us", (), draw(tasks()), overhead_us=draw(OVERHEADS))
    servers = []
    for ident in range(draw(st.integers(1, 3))):
        period = draw(st.sampled_from(PERIODS_MS[:11]))
        servers.append(Server(ident, period * MS, draw(st.integers(1, period)) * MS, draw(st.integers(0, 2))))
    return Config(plugin, "us", tuple(servers), draw(tasks(tuple(range(len(servers))))), overhead_us=draw(OVERHEADS))


def test_completion_at_the_deadline_meets_it(tmp_path):
    config = Config("fp", "us", (), (Task(0, 37 * MS, 12 * MS, 37 * MS, priority=0),
                                      Task(1, 31 * MS, 19 * MS, 31 * MS, priority=1)))
    events = core_events(config, 2 * 31 * 37 * MS * 1000, tmp_path)
    assert not [e for e in events if e[1] == "miss"]
    assert_same(config, tmp_path)


def test_a_spinning_task_is_throttled_alike(tmp_path):
    config = Config("fp", "us", (), (Task(0, 10 * MS, 2 * MS, 10 * MS, priority=0),
                                      Task(1, 10 * MS, 5 * MS, 10 * MS, priority=1)))
    events = core_events(config, 40 * MS * 1000, tmp_path, spin=0)
    assert sorted(e[0] for e in events if e[1] == "overrun") == [k * MS * 1000 for k in (2, 12, 22, 32)]
    assert not [e for e in events if e[1] == "miss" and dict(e[2])["task"] == 1]
    assert_same(config, tmp_path, spin=0)


@st.composite
def global_configs(draw) -> Config:
    """Global fp or edf on 2 to 4 CPUs, with up to 6 tasks: more tasks than CPUs often."""
    more = draw(tasks())
    taken = {t.id for t in more}
    extra = tuple(t for t in draw(tasks()) if t.id not in taken)
    return Config(draw(st.sampled_from(("global-fp", "global-edf"))), "us", (), more + extra,
                  cpus=draw(st.integers(2, 4)), overhead_us=draw(OVERHEADS))


@settings(max_examples=300, deadline=None)
@given(configs(), st.data())
def test_core_and_simulator_agree(config, data):
    spin = data.draw(st.none() | st.sampled_from([t.id for t in config.tasks]))
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(config, Path(tmp), spin)


@settings(max_examples=300, deadline=None)
@given(global_configs(), st.data())
def test_global_core_and_simulator_agree(config, data):
    """One run queue over the CPUs: the same jobs run, on the same CPUs (migrations
    included: job events carry cpu=), with the same budget enforcement."""
    spin = data.draw(st.none() | st.sampled_from([t.id for t in config.tasks]))
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(config, Path(tmp), spin)


def test_global_example_migrates_alike(tmp_path):
    config = load_config(RT / "examples" / "global.toml")
    until = hyperperiod_ns(config)
    core = core_events(config, until, tmp_path)
    cpus_of_job: dict[tuple[int, int], set[int]] = {}
    for _, name, fields in core:
        fields = dict(fields)
        if name in ("start", "resume"):
            cpus_of_job.setdefault((fields["task"], fields["job"]), set()).add(fields["cpu"])
    assert any(len(cpus) > 1 for cpus in cpus_of_job.values())
    assert_same(config, tmp_path)


@st.composite
def semi_partitioned_configs(draw) -> Config:
    """Semi-partitioned EDF on 2 to 4 CPUs with up to 8 tasks: heavy enough that tasks are
    split often."""
    more = draw(tasks())
    taken = {t.id for t in more}
    extra = tuple(t for t in draw(tasks()) if t.id not in taken)
    return Config("semi-partitioned-edf", "us", (), more + extra, cpus=draw(st.integers(2, 4)),
                  overhead_us=draw(OVERHEADS))


@settings(max_examples=300, deadline=None)
@given(semi_partitioned_configs(), st.data())
def test_semi_partitioned_core_and_simulator_agree(config, data):
    """Each job runs its parts on their CPUs: a split job moves to its second CPU when its
    first part ends (a preempt on one CPU, a resume on the other: cpu= says), with the same
    EDF order by part deadlines and the same budget enforcement."""
    spin = data.draw(st.none() | st.sampled_from([t.id for t in config.tasks]))
    with tempfile.TemporaryDirectory() as tmp:
        assert_same(config, Path(tmp), spin)


def test_semi_partitioned_example_migrates_alike(tmp_path):
    """examples/semi.toml: fusion's every job runs its first 4 ms on CPU 0 at once (part
    deadline 4 ms), leaves it then, and resumes on CPU 1 after control (same deadline, lower
    id), completing at 8 ms: the analysis' bound."""
    config = load_config(RT / "examples" / "semi.toml")
    until = hyperperiod_ns(config) * 4
    core = core_events(config, until, tmp_path)
    fusion = sorted((time, name, dict(fields)["cpu"]) for time, name, fields in core
                    if dict(fields).get("task") == 2 and name in ("start", "preempt", "resume", "complete"))
    period = 10 * MS * 1000
    assert fusion == sorted(
        event for k in range(4) for event in ((k * period, "start", 0), (k * period + 4 * MS * 1000, "preempt", 0),
                                              (k * period + 6 * MS * 1000, "resume", 1),
                                              (k * period + 8 * MS * 1000, "complete", 1)))
    assert_same(config, tmp_path)


def test_semi_partitioned_signalled_spinner_alike(tmp_path):
    """The split task spinning forever, signalled rather than throttled: it runs past its
    last part's end (the simulator once took that instant, now in the past, for its next
    event and never returned)."""
    config = load_config(RT / "examples" / "semi.toml")
    config = replace(config, tasks=tuple(replace(t, overrun="signal") if t.id == 2 else t for t in config.tasks))
    assert_same(config, tmp_path, spin=2)


def admitted(config: Config, tmp: Path) -> bool:
    done = subprocess.run([str(RTCTL), "check", str(written(config, tmp))], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode == 0


@pytest.mark.parametrize("name", ["fp", "edf", "table3", "hsf-edf", "global"])
def test_admission_accepts_the_examples(name, tmp_path):
    path = RT / "examples" / f"{name}.toml"
    assert subprocess.run([str(RTCTL), "check", str(path)], capture_output=True).returncode == 0


def test_admission_refuses_the_hsf_edf_example_under_the_other_orders(tmp_path):
    text = (RT / "examples" / "hsf-edf.toml").read_text()
    reasons = {}
    for plugin in ("hsf-fp", "hsf-fp-edf", "hsf-edf-fp"):
        path = tmp_path / f"{plugin}.toml"
        path.write_text(text.replace('plugin = "hsf-edf"', f'plugin = "{plugin}"'))
        done = subprocess.run([str(RTCTL), "check", str(path)], capture_output=True, text=True)
        assert done.returncode == 1
        reasons[plugin] = done.stderr.split("not schedulable: ", 1)[1].strip()
    assert reasons == {
        "hsf-fp": "server 1: worst-case response beyond its period 15000 us",
        "hsf-fp-edf": "server 1: worst-case response beyond its period 15000 us",
        "hsf-edf-fp": "task 3: worst-case response beyond its period 60000 us",
    }


def test_admission_refuses_with_the_reason(tmp_path):
    config = Config("fp", "us", (), (Task(0, 10 * MS, 6 * MS, 10 * MS, priority=0),
                                      Task(1, 20 * MS, 6 * MS, 15 * MS, priority=1)))
    done = subprocess.run([str(RTCTL), "check", str(written(config, tmp_path))], capture_output=True, text=True)
    assert done.returncode == 1
    assert "not schedulable: task 1: worst-case response 18000 us > deadline 15000 us" in done.stderr


@st.composite
def partitioned_configs(draw) -> Config:
    cpus = draw(st.integers(1, 3))
    placed = tuple(replace(t, cpu=draw(st.none() | st.integers(0, cpus - 1))) for t in draw(tasks()))
    return Config(draw(st.sampled_from(("partitioned-fp", "partitioned-edf"))), "us", (), placed, cpus=cpus,
                  assignment=draw(st.sampled_from(("first-fit", "worst-fit"))), overhead_us=draw(OVERHEADS))


@settings(max_examples=400, deadline=None)
@given(partitioned_configs())
def test_partitioned_placement_and_verdict_are_the_analysis(config):
    """rtctl places the tasks without a cpu as bootlab does, and gives the same verdict."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([str(RTCTL), "check", str(written(config, Path(tmp)))], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    result = analyze(config)
    placed = {int(task): int(cpu) for task, cpu in re.findall(r"^task (\d+) cpu (\d+)$", done.stdout, re.M)}
    assert placed == result.placement.cpu_of
    assert (done.returncode == 0) == result.schedulable


@settings(max_examples=400, deadline=None)
@given(semi_partitioned_configs())
def test_semi_partitioned_split_and_verdict_are_the_analysis(config):
    """rtctl places and splits the tasks as bootlab's C=D splitting does (the same CPUs, the
    same first part's execution and deadline, the configuration's overhead charged alike),
    and gives the same verdict."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([str(RTCTL), "check", str(written(config, Path(tmp)))], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    placed = {int(task): (int(cpu), int(split or 0), int(due or 0), int(then) if then else None)
              for task, cpu, split, due, then in
              re.findall(r"^task (\d+) cpu (\d+)(?: split (\d+) us due (\d+) us then cpu (\d+))?$", done.stdout, re.M)}
    split = analyze(config).split
    expected = {}
    for task in config.tasks:
        parts = split.of(task.id)
        expected[task.id] = ((parts[0].cpu, parts[1].start, parts[0].deadline, parts[1].cpu) if len(parts) == 2
                             else (parts[0].cpu, 0, 0, None))
    assert placed == expected
    assert (done.returncode == 0) == analyze(config).schedulable


@settings(max_examples=400, deadline=None)
@given(global_configs())
def test_global_admission_is_the_analysis_verdict(config):
    """GFB for global-edf, Bertogna & Cirinei for global-fp, as bootlab rt analyze."""
    with tempfile.TemporaryDirectory() as tmp:
        assert admitted(config, Path(tmp)) == analyze(config).schedulable


@settings(max_examples=400, deadline=None)
@given(configs())
def test_admission_is_the_analysis_verdict(config):
    with tempfile.TemporaryDirectory() as tmp:
        assert admitted(config, Path(tmp)) == analyze(config).schedulable


def test_rtctl_warns_of_a_cpu_loaded_beyond_real_time_throttling(tmp_path):
    """Linux stops a CPU's SCHED_FIFO tasks for the rest of a period once they have run
    sched_rt_runtime_us of it (950 ms of a second by default): rtctl says which CPU a
    configuration loads beyond that share (semi.toml's C=D split fills CPU 0; edf.toml takes
    0.971 of its CPU; table3.toml's servers 0.819), as the machine it runs on has it set."""
    runtime = int(Path("/proc/sys/kernel/sched_rt_runtime_us").read_text())
    share = runtime / int(Path("/proc/sys/kernel/sched_rt_period_us").read_text())
    loads = {"semi": 1.0, "edf": 34 / 35, "table3": 4 / 12 + 4 / 20 + 8 / 28}  # CPU 0's
    for name, load in loads.items():
        done = subprocess.run([str(RTCTL), "check", str(RT / "examples" / f"{name}.toml")], capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        warned = re.findall(r"warning: CPU (\d) is ([\d.]+) loaded", done.stderr)
        assert warned == ([("0", f"{load:.3f}")] if runtime >= 0 and load > share else []), (name, done.stderr)
