"""bench/rt_boot/analyze.py on a real console of the boot-cost benchmark.

data/rt_boot_console.log is the console of `make -C bench/rt_boot run` (the x86 reference
device, one CPU, -icount shift=0,sleep=off): five measured rounds between kernel-log marks,
then one round under ftrace (system calls, fork/exec/exit, the module loader's phases); it
predates bench.sh's "machine" mark, so it is read as x86_64's.  data/rt_boot_console_arm64.log
is `make -C bench/rt_boot run-arm64`'s (the ARM64 board, one CPU, -icount shift=2): its
system calls are arm64's numbers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ANALYZE = Path(__file__).parents[2] / "bench" / "rt_boot" / "analyze.py"
CONSOLE = DATA / "rt_boot_console.log"
# Each board's console, and a loader phase only its architecture has: x86's sort of the ORC
# unwind table, arm64's count of the PLT entries its branches may need.
BOARDS = pytest.mark.parametrize("console, arch_phase", [
    (CONSOLE, "    unwind_module_init"),   # inside module_finalize
    (DATA / "rt_boot_console_arm64.log", "  module_frob_arch_sections"),
], ids=["x86", "arm64"])


def analyze(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ANALYZE), str(path)], capture_output=True, text=True)


def traced(out: str, step: str) -> dict[str, float]:
    """The traced split of one step: label -> µs (sub-phases keep their indentation)."""
    block = out.split("\ntraced round", 1)[1].split(f"\n{step}:\n", 1)[1]
    rows = {}
    for line in block.splitlines():
        m = re.match(r"^  (\s*\S.*?)\s+(-?\d+)$", line)
        if not m:
            break
        rows[m[1]] = float(m[2])
    return rows


@BOARDS
def test_rounds_against_the_empty_module(console, arch_phase):
    done = analyze(console)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 rounds" in done.stdout
    medians = {m[1]: (int(m[2]), float(m[3])) for m in
               re.finditer(r"^(\w+)\s+\d+\s+(\d+)\s+([\d.]+)", done.stdout, re.M)}
    empty = medians["empty"][0]
    for step in ("core", "plugin", "config", "rtctl", "onestep"):
        median, ratio = medians[step]
        assert ratio == round(median / empty, 2)
    # One program does less than three: the three steps' sum against onestep.
    assert medians["onestep"][0] < medians["scheduler"][0]


@BOARDS
def test_the_traced_round_splits_each_step(console, arch_phase):
    out = analyze(console).stdout
    onestep = traced(out, "onestep")
    for part in ("exec", "C library start-up (exec to its first openat)",
                 "finit_module rtsched.ko (open to return)", "finit_module rtsched_hsf.ko (open to return)",
                 "configuration: open and read", "configuration: parse and admission (user time)"):
        assert onestep[part] > 0, part
    # As many ioctls as that day's rtctl made (9 in the x86 console, 8 in the later arm64 one).
    (ioctls,) = [us for label, us in onestep.items() if re.fullmatch(r"\d ioctls on /dev/rtsched \(open to the last\)", label)]
    assert ioctls > 0
    # The loader's phases inside rtsched.ko's load, its architecture's own among them.
    assert onestep[arch_phase] > 0 and onestep["    do_one_initcall"] > 0
    top = [us for label, us in onestep.items() if not label.startswith(" ") and label != "total"]
    assert all(us >= 0 for us in top)
    assert abs(sum(top) - onestep["total"]) <= len(top)   # rounding of each row
    # busybox's insmod runs in the forked shell: no exec, one module.
    empty = traced(out, "empty")
    assert "exec" not in empty and "finit_module rtboot_empty.ko (open to return)" in empty
    assert "exec" in traced(out, "rtctl")


def test_the_configuration_is_rtctls_first_file_and_the_throttling_check_is_apart():
    """rtctl load reads the kernel's throttling settings after admitting the configuration
    (the arm64 console's rtctl does; the x86 one's predates it): parsing and admission end
    at the first of those files' opens, not at the module's."""
    arm64 = traced(analyze(DATA / "rt_boot_console_arm64.log").stdout, "onestep")
    assert arm64["the throttling settings: 2 files opened and read"] > 0
    assert arm64["configuration: parse and admission (user time)"] > arm64["configuration: open and read"]
    x86 = traced(analyze(CONSOLE).stdout, "onestep")
    assert not any(label.startswith("the throttling settings") for label in x86)
    assert x86["configuration: parse and admission (user time)"] == 66


def test_a_failed_step_is_named(tmp_path):
    log = tmp_path / "console.log"
    log.write_text(CONSOLE.read_text().replace("rtboot: core.end", "rtboot: core failed\nrtboot: core.end", 1))
    done = analyze(log)
    assert done.returncode == 1 and "rtboot: core failed" in done.stdout


def test_without_the_traced_round(tmp_path):
    log = tmp_path / "console.log"
    text = CONSOLE.read_text()
    log.write_text(text.split("==== rtboot trace begin ====")[0] + text.split("==== rtboot trace end ====")[1])
    done = analyze(log)
    assert done.returncode == 0 and "no traced round" in done.stdout


def test_an_unreadable_console_is_exit_2(tmp_path):
    done = analyze(tmp_path / "missing.log")
    assert done.returncode == 2 and "missing.log" in done.stderr and "Traceback" not in done.stderr


def test_a_truncated_trace_is_said_so(tmp_path):
    log = tmp_path / "console.log"
    text = CONSOLE.read_text()
    head, rest = text.split("==== rtboot trace begin ====")
    trace, tail = rest.split("==== rtboot trace end ====")
    # The trace buffer filled up while rtctl load ran: its exit and the rest are missing.
    cut = trace[:trace.index("sys_enter: NR 231", trace.index("child_pid=" + re.findall(r"child_pid=(\d+)", trace)[1]))]
    log.write_text(head + "==== rtboot trace begin ====" + cut + "==== rtboot trace end ====" + tail)
    done = analyze(log)
    assert done.returncode == 0 and "onestep: its trace is incomplete" in done.stdout
    assert "Traceback" not in done.stderr
