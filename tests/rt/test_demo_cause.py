"""Why the demo's Table III check missed its bounds on a quiet host (README, "What is not
done"): two real traces of the camera demo's scenario (rtctl run of rt/examples/table3.toml
after ready), recorded by the same modules on the same host (load 0.9-1.1, the booting QEMU
itself), one under plain TCG as `make demo` boots, one with `-icount shift=0,sleep=off`."""

from __future__ import annotations

import gzip
from pathlib import Path

from bootlab.rt.check import capture_meta, check, likely_cause
from bootlab.rt.config import load_config
from bootlab.rt.trace import read_trace
from bootlab.rt.units import NS_PER

DATA = Path(__file__).parent / "data"
REAL = Path(__file__).parents[1] / "data" / "real"
TABLE3 = Path(__file__).parents[2] / "rt" / "examples" / "table3.toml"


def generic_meta() -> dict:
    """The header of a real capture of a QEMU boot without -icount."""
    return capture_meta(gzip.decompress((REAL / "generic.capture.gz").read_bytes()))


def test_without_icount_the_cause_is_the_throttled_overruns_it_measured():
    trace = read_trace(DATA / "demo_table3_tcg.trace")
    assert not check(load_config(TABLE3), trace, 100 * NS_PER["us"]).ok
    cause = likely_cause(generic_meta(), trace, load_config(TABLE3))
    assert cause.startswith("98 jobs ran past their wcet and the framework's slack and were throttled until their "
                            "next release")
    assert "control's jobs held the CPU a median 2.204 ms for a wcet of 2.000 ms" in cause
    assert "the host's cores" not in cause  # the load was not the cause: a quiet host does the same
    # What the trace measured of the framework's work a job, and how to charge it.
    assert "(in this trace a job that ran alone on its CPU took a median 297 µs more than its wcet)" in cause
    assert cause.endswith("or charge each job the overhead `bootlab rt trace` measures (--overhead-us)")


def test_each_cpu_s_measured_overhead_is_named():
    cause = likely_cause(generic_meta(), read_trace(DATA / "smp_partitioned_fp.trace"))
    assert "a median 414 µs (CPU 0) and 410 µs (CPU 1) more than its wcet" in cause


def test_with_icount_the_same_scenario_meets_the_analysis():
    trace = read_trace(DATA / "demo_table3_icount.trace")
    assert not [e for e in trace.events if e.name == "overrun"]
    result = check(load_config(TABLE3), trace, 100 * NS_PER["us"])
    assert result.ok and result.jobs_checked == 106 and result.segments_compared == 330
    icount = {**generic_meta(), "argv": generic_meta()["argv"] + ["-icount", "shift=0,sleep=off"]}
    assert likely_cause(icount, trace) is None


def test_without_overruns_the_cause_does_not_blame_the_host():
    cause = likely_cause(generic_meta(), read_trace(DATA / "demo_table3_icount.trace"))
    assert cause.startswith("the guest ran under QEMU without -icount") and "host's cores" not in cause
