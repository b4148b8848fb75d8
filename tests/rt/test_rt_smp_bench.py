"""bench/rt_smp/analyze.py: each plugin's calibration and judged runs read from a console,
the overhead measured in the first charged in the second's bounds.  Simulated traces have
no overhead: every job is within its plain bound and nothing is charged."""

from __future__ import annotations

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


def test_simulated_runs_are_within_their_bounds(tmp_path):
    console = ["booting...", "[    1.234567] rtsched: loaded"]
    for plugin in PLUGINS:
        config = bench.configuration(plugin)
        trace = format_trace(simulate(config, 1_000_000_000), plugin)
        for round_ in ("calibrate", "judge"):
            console += [f"==== rt_smp {plugin} {round_} begin ====", trace.rstrip("\n"),
                        f"==== rt_smp {plugin} {round_} end rc=0 ===="]
    path = tmp_path / "console.log"
    path.write_text("\r\n".join(console) + "\r\n")
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert sorted(rows) == sorted(PLUGINS)
    for plugin, row in rows.items():
        # jobs, misses, above the plain bound; p90 overhead, above; worst overhead, above
        assert row[1:9] == ["205", "0", "0", "0", "0", "-", "0", "0"], (plugin, row)


def test_a_console_without_runs_is_refused(tmp_path):
    path = tmp_path / "console.log"
    path.write_text("no benchmark here\n")
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and "no rt_smp run found" in done.stderr
