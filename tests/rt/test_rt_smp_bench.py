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


def _host_steal(lags_ms: list[float], stall: tuple[float, float]) -> object:
    """A capture whose clock lines (guest second 1, 2, ...) arrive 2 s + lag later on the
    host, and host samples every millisecond in which vCPU 0 stands still over `stall`
    (guest seconds) while vCPU 1 runs throughout."""
    zero = 5_000_000_000_000
    lines = ["#bootlab-capture 1 {}", f"0.000000000 ! zero monotonic_ns={zero}"]
    for i, lag in enumerate(lags_ms, 1):
        lines.append(f"{2 + i + lag / 1000:.9f} | ==== rt_smp clock now at {i * 10**9} nsecs ====\\r")
    samples = ["# host_steal 1 cpus=0:100,1:101"]
    run0 = 0
    for ms in range(1000, 1000 * len(lags_ms) + 1):
        if not stall[0] * 1000 < ms <= stall[1] * 1000:
            run0 += 1_000_000
        samples.append(f"{zero + 2 * 10**9 + ms * 10**6} {run0} {(ms - 1000) * 10**6}")
    return bench.HostSteal("\n".join(lines).encode(), "\n".join(samples))


def test_the_hosts_steal_is_placed_in_guest_time():
    # The late lines (5 and 40 ms) do not tilt the match (a least-squares line would be
    # 3e-3 off): the least delayed ones make it.
    steal = _host_steal([0, 0.3, 5, 0.1, 40, 0], (1.5, 1.503))
    assert abs(steal.rate - 1) < 1e-9
    assert round(steal.lag_us) == 200  # the median line's lag
    assert steal.stolen(0, 1_400_000_000, 1_600_000_000) == 3_000_000
    assert steal.stolen(0, 1_500_500_000, 1_600_000_000) == 2_000_000  # its part in the window
    assert steal.stolen(1, 1_400_000_000, 1_600_000_000) == 0
    assert steal.stolen(0, 1_600_000_000, 1_700_000_000) == 0


def test_a_capture_without_clock_lines_is_refused(tmp_path):
    capture, samples = tmp_path / "guest.capture", tmp_path / "steal.txt"
    capture.write_text("#bootlab-capture 1 {}\n0.000000000 ! zero monotonic_ns=5\n"
                       "1.000000000 | ==== rt_smp global-fp calibrate begin ====\\r\n"
                       "1.100000000 | ==== rt_smp global-fp calibrate end rc=0 ====\\r\n")
    samples.write_text("# host_steal 1 cpus=0:1\n1 1\n2 2\n")
    done = subprocess.run([sys.executable, str(BENCH / "analyze.py"), str(capture), str(samples)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "fewer than two clock lines" in done.stderr
