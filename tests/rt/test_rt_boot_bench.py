"""bench/rt_boot/analyze.py on a real console of the boot-cost benchmark.

data/rt_boot_console.log is the console of `make -C bench/rt_boot run` (the x86 reference
device, one CPU, -icount shift=0,sleep=off): five measured rounds between kernel-log marks,
then one round under ftrace (system calls, fork/exec/exit, the module loader's phases).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
ANALYZE = Path(__file__).parents[2] / "bench" / "rt_boot" / "analyze.py"
CONSOLE = DATA / "rt_boot_console.log"


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


def test_rounds_against_the_empty_module():
    done = analyze(CONSOLE)
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


def test_the_traced_round_splits_each_step():
    out = analyze(CONSOLE).stdout
    onestep = traced(out, "onestep")
    for part in ("exec", "C library start-up (exec to its first openat)",
                 "finit_module rtsched.ko (open to return)", "finit_module rtsched_hsf.ko (open to return)",
                 "configuration: open and read", "configuration: parse and admission (user time)",
                 "9 ioctls on /dev/rtsched (open to the last)"):
        assert onestep[part] > 0, part
    # The loader's phases inside rtsched.ko's load, its ORC sort among them.
    assert onestep["    unwind_module_init"] > 0 and onestep["    do_one_initcall"] > 0
    top = [us for label, us in onestep.items() if not label.startswith(" ") and label != "total"]
    assert all(us >= 0 for us in top)
    assert abs(sum(top) - onestep["total"]) <= len(top)   # rounding of each row
    # busybox's insmod runs in the forked shell: no exec, one module.
    empty = traced(out, "empty")
    assert "exec" not in empty and "finit_module rtboot_empty.ko (open to return)" in empty
    assert "exec" in traced(out, "rtctl")


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
