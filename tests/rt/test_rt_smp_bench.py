"""bench/rt_smp/analyze.py: each plugin's calibration and judged runs read from a console,
the overhead measured in the first charged in the second's bounds.  Simulated traces have
no overhead: every job is within its plain bound and nothing is charged."""

from __future__ import annotations

import re
import subprocess
import sys
import importlib.util
from pathlib import Path

from bootlab.rt.simulate import simulate
from bootlab.rt.trace import format_trace

BENCH = Path(__file__).parents[2] / "bench" / "rt_smp"
PLUGINS = ("partitioned-fp", "partitioned-edf", "global-fp", "global-edf")
# The bench's own reading of timing.toml per plugin (bench/ is not a package).
_spec = importlib.util.spec_from_file_location("rt_smp_analyze", BENCH / "analyze.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _console(plugin: str, judge_trace: str, metronome: str = "") -> str:
    calibrate = format_trace(simulate(bench.configuration(plugin), 1_000_000_000), plugin).rstrip("\n")
    return "\n".join([metronome,
                      f"==== rt_smp {plugin} calibrate begin ====", calibrate, f"==== rt_smp {plugin} calibrate end rc=0 ====",
                      f"==== rt_smp {plugin} judge begin ====", judge_trace.rstrip("\n"),
                      f"==== rt_smp {plugin} judge end rc=0 ===="]) + "\n"


def test_simulated_runs_are_within_their_bounds(tmp_path):
    console = "booting...\n[    1.234567] rtsched: loaded\n" + "".join(
        _console(plugin, format_trace(simulate(bench.configuration(plugin), 1_000_000_000), plugin))
        for plugin in PLUGINS)
    path = tmp_path / "console.log"
    path.write_text(console.replace("\n", "\r\n"))
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert sorted(rows) == sorted(PLUGINS)
    for plugin, row in rows.items():
        # jobs, misses, above the plain bound; p90 overhead, above, by how much, their start;
        # the same for the worst overhead
        assert row[1:12] == ["205", "0", "0", "0", "0", "-", "-", "0", "0", "-", "-"], (plugin, row)


def test_a_console_without_runs_is_refused(tmp_path):
    path = tmp_path / "console.log"
    path.write_text("no benchmark here\n")
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and "no rt_smp run found" in done.stderr


def test_jobs_above_their_bound_by_less_than_the_grain_are_told_apart(tmp_path):
    """The metronome's line gives the grain (50 us over 2 vCPUs: 25 us); of two jobs late
    by 10 and 40 us, the first is above its bound within the grain."""
    trace = format_trace(simulate(bench.configuration("partitioned-fp"), 1_000_000_000), "partitioned-fp")
    late = {"991000000 complete task=0 job=99 cpu=0": "991010000 complete task=0 job=99 cpu=0",
            "983000000 complete task=1 job=49 cpu=1": "983040000 complete task=1 job=49 cpu=1"}
    for was, now in late.items():
        assert was in trace
        trace = trace.replace(was, now)
    path = tmp_path / "console.log"
    path.write_text(_console("partitioned-fp", trace, "==== rt_smp metronome period_us=50 cpus=2 ===="))
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "a vCPU waits up to 25 us for its turn" in done.stdout
    row = done.stdout.splitlines()[-1]
    # above the plain bound: 2; the worst overhead charged (0: simulated): 2, one within the grain, 40 us at most
    assert row.split()[:4] == ["partitioned-fp", "205", "0", "2"], row
    assert re.search(r" 0 +2 \(1 within the grain\) +40\.0 ", row), row


def test_the_grain_is_the_other_vcpus_shares_of_a_beat():
    assert bench.platform("==== rt_smp metronome period_us=20 cpus=2 ====") == (2, 10_000)
    assert bench.platform("==== rt_smp metronome period_us=20 cpus=4 ====") == (4, 15_000)
    assert bench.platform("no metronome") == (None, 0)
