"""Real boots of the reference device in QEMU (TCG): about 5-8 s each."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.lab.boots import boot_and_store
from bootlab.lab.stats import summarize
from bootlab.lab.store import Store
from bootlab.sources import read
from bootlab.targets import qemu
from bootlab.targets.reference import Target, TargetError, build
from bootlab.timeline import Clock, Mark, Phase

pytestmark = pytest.mark.qemu


def test_boot_record_show_export(tmp_path, capsys):
    db = str(tmp_path / "b.db")
    assert main(["boot", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "run 1: ok" in out and "total (power-on to ready)" in out
    run = Store(db).get(1)
    assert run.status == "ok" and run.metrics["total"] > 1e9
    assert run.target["target"]["kernel"] == "generic" and run.command[0] == "qemu-system-x86_64"
    assert main(["show", "1", "--db", db, "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [p["phases"][0] for p in doc["phases"]]
    assert names[:3] == [Phase.FIRMWARE, Phase.KERNEL_LOAD, Phase.KERNEL_INIT]
    assert doc["end"]["mark"] == Mark.READY
    assert main(["export", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["status"] == "ok"
    assert main(["runs", "--db", db]) == 0
    capsys.readouterr()
    assert main(["diff", "--db", db, "-f", "json", "1", "1"]) == 0  # a run against itself: nothing changed
    doc = json.loads(capsys.readouterr().out)
    assert doc["total_ns"]["delta"] == 0 and doc["total_ns"]["before"] > 1e9


def test_capture_from_exec_aligns_clocks(tmp_path):
    built = build(Target())
    store = Store(str(tmp_path / "c.db"))
    run = boot_and_store(built, store)
    boot = read([run.result.capture])
    assert boot.reference == Clock.HOST and boot.meta["host_zero"] == "power-on"
    printk = boot.clocks[Clock.PRINTK]
    assert printk.method == "anchors" and printk.anchors > 100
    a = run.analysis
    # Firmware, decompression, kernel, init, ready: in order, each boundary from a real line.
    b = a.phases.boundaries
    assert 0 < b[Mark.KERNEL_LOAD].at < b[Mark.KERNEL_START].at < b[Mark.USERSPACE_START].at < a.phases.end.at
    # The analysis times ready by the kernel-log copy of the line (printk clock), the capture
    # loop when the console copy arrived, behind whatever the UART still had queued.
    assert 0 <= run.result.ready_ns - a.phases.end.at < 2_000_000_000


def test_hung_boot_is_killed_recorded_and_the_next_run_continues(tmp_path):
    t = Target()
    t.initramfs.init = "script"
    t.initramfs.app = "sleep 1000"
    t.boot.silence = 12  # longer than the silent decompression on a loaded host
    built = build(t)
    store = Store(str(tmp_path / "h.db"))
    runs = [boot_and_store(built, store, sequence=i) for i in range(2)]
    for r in runs:
        assert r.result.status == "timeout" and "silence" in r.result.reason
        stored = store.get(r.run_id)
        assert stored.status == "timeout" and b"Run /init" in store.capture(r.run_id)


def test_boot_that_panics_is_failed(tmp_path):
    t = Target()
    t.target.append = "rdinit=/nonexistent init=/nonexistent"
    t.boot.silence = 20
    built = build(t)
    r = boot_and_store(built, Store(str(tmp_path / "p.db")))
    assert r.result.status == "failed"
    assert b"Kernel panic" in open(r.result.capture, "rb").read()


def test_kvm_is_refused_when_it_hangs():
    t = Target()
    t.target.accel = "kvm"
    built = build(t)
    usable, why = qemu.kvm_usable(str(built.image))
    if usable:
        pytest.skip("KVM works on this host")
    with pytest.raises(TargetError, match="KVM refused"):
        qemu.boot(built, "/dev/null")


def _kernel_time(run) -> int:
    b = run.analysis.phases.boundaries
    return b[Mark.USERSPACE_START].at - b[Mark.KERNEL_START].at


def test_quiet_saves_what_the_console_bytes_predict(tmp_path):
    """With the console drained at 115200 baud, the guest waits on its UART as on a board:
    `quiet` then saves about the serial time of the kernel's messages."""
    store = Store(str(tmp_path / "q.db"))
    loud, quiet = Target(), Target()
    for t in (loud, quiet):
        t.initramfs.init = "script"
        t.initramfs.dmesg = True  # the kernel log, printed after ready, says when init started
    quiet.target.append = "quiet"
    runs = {name: [boot_and_store(build(t), store, variant=name) for _ in range(2)]
            for name, t in (("loud", loud), ("quiet", quiet))}
    saved = summarize([_kernel_time(r) for r in runs["loud"]]).median - summarize(
        [_kernel_time(r) for r in runs["quiet"]]).median

    def kernel_bytes(run) -> int:
        per = run.analysis.console.per_phase
        return sum(n for name, (n, _) in per.items() if name in ("kernel init", "initcalls"))

    predicted = (summarize([kernel_bytes(r) for r in runs["loud"]]).median -
                 summarize([kernel_bytes(r) for r in runs["quiet"]]).median) * 10 / 115200 * 1e9
    assert predicted > 1e9  # a loud kernel prints tens of kilobytes
    assert 0.6 * predicted < saved < 1.4 * predicted, (saved, predicted)
    # bootlab diff of one loud and one quiet boot shows where it went.
    d = diff(runs["loud"][0].analysis, runs["quiet"][0].analysis)
    phases = {c.name: c for c in d.phases}
    assert phases["kernel init"].delta + phases["initcalls"].delta < -0.5 * predicted
    assert d.console_bytes.delta < -20_000 and d.total.delta < 0 and not d.notes


def test_sigterm_during_a_boot_powers_off_and_records_it_interrupted(tmp_path):
    """`kill`, `timeout` or a CI job limit in the middle of a boot: QEMU goes with bootlab,
    and the run is stored as interrupted (it never counts in statistics)."""
    db = str(tmp_path / "t.db")
    proc = subprocess.Popen([sys.executable, "-m", "bootlab", "boot", "--kernel", "cloud", "--db", db],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    captures = tmp_path / "t-captures"
    deadline = time.monotonic() + 120
    while not any(p.stat().st_size > 2000 for p in captures.glob("*.capture")):  # the kernel is printing
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.1)
    qemu_pids = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"interrupted" in stderr
    run = Store(db).get(1)
    assert (run.status, run.reason) == ("interrupted", "interrupted")
    for pid in qemu_pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_kernel_without_printk_times_is_split_at_its_lines_arrival(tmp_path):
    """printk.time=0 (as with CONFIG_PRINTK_TIME off on many boards): no printk clock, so
    the kernel's phases come from when its lines reached the console, and initcall_debug
    spans sit on the host clock; the log printed again after ready adds nothing."""
    t = Target()
    t.target.append = "printk.time=0 initcall_debug ignore_loglevel"
    t.initramfs.dmesg = True
    run = boot_and_store(build(t), Store(str(tmp_path / "n.db")))
    a = run.analysis
    assert Clock.PRINTK not in a.boot.clocks
    b = a.phases.boundaries
    assert b[Mark.KERNEL_START].evidence.endswith("(kernel banner arrived)")
    assert b[Mark.KERNEL_LOAD].at < b[Mark.KERNEL_START].at < b[Mark.INITCALLS_START].at < \
        b[Mark.USERSPACE_START].at < a.phases.end.at
    assert any("no printk times" in note for note in a.phases.notes)
    spans = a.boot.of_kind("initcall")
    assert len(spans) > 300 and {ev.clock for ev in spans} == {Clock.HOST}
    assert all(b[Mark.KERNEL_START].at <= a.boot.at(ev) <= b[Mark.USERSPACE_START].at for ev in spans)
    assert len({ev.name for ev in spans}) > 0.9 * len(spans)  # each once: not again from the dump
    assert a.initcalls[0].duration > 10_000_000
