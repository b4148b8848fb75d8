"""Real boots of the reference device in QEMU (TCG): about 5-8 s each."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bootlab.analysis import analyze, phases
from bootlab.analysis.diff import diff
from bootlab.cli import main
from bootlab.lab.boots import boot_and_store
from bootlab.lab.stats import summarize
from bootlab.lab.store import Store
from bootlab.sources import bootlab_capture, read
from bootlab.targets import host_facts, qemu, strategy
from bootlab.targets.reference import Target, TargetError, build
from bootlab.timeline import Clock, Mark, Phase

pytestmark = pytest.mark.qemu


def test_boot_record_show_export(tmp_path, capsys):
    db = str(tmp_path / "b.db")
    assert main(["boot", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "run 1: ready " in out and "total (power-on to ready)" in out
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
    assert 0 <= run.result.ready_line_ns - a.phases.end.at < 2_000_000_000
    assert a.console.ready_line_at == run.result.ready_line_ns


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
        strategy.boot(built, "/dev/null")


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
    runs = {"loud": [], "quiet": []}
    for _ in range(2):  # interleaved, so that a change in the host's load falls on both
        for name, t in (("loud", loud), ("quiet", quiet)):
            runs[name].append(boot_and_store(build(t), store, variant=name))
    saved = summarize([_kernel_time(r) for r in runs["loud"]]).median - summarize(
        [_kernel_time(r) for r in runs["quiet"]]).median

    def kernel_bytes(run) -> int:
        per = run.analysis.console.per_phase
        return sum(n for name, (n, _) in per.items() if name in ("kernel init", "initcalls"))

    predicted = (summarize([kernel_bytes(r) for r in runs["loud"]]).median -
                 summarize([kernel_bytes(r) for r in runs["quiet"]]).median) * 10 / 115200 * 1e9
    assert predicted > 1e9  # a loud kernel prints tens of kilobytes
    assert 0.6 * predicted < saved < 1.4 * predicted, (saved, predicted)
    # bootlab diff of one loud and one quiet boot shows where it went.  (Not that this pair's
    # total fell: one boot's kernel loading under TCG moves by seconds with the host's load.)
    d = diff(runs["loud"][0].analysis, runs["quiet"][0].analysis)
    phases = {c.name: c for c in d.phases}
    assert phases["kernel init"].delta + phases["initcalls"].delta < -0.5 * predicted
    assert abs(d.total.delta - sum(c.delta for c in d.phases)) < 1_000_000  # the phases account for it
    assert d.console_bytes.delta < -20_000 and not d.notes


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


def _header(capture: str) -> dict:
    return json.loads(Path(capture).read_bytes().split(b"\n", 1)[0][len(bootlab_capture.MAGIC):])


def test_no_console_byte_lost_beside_four_cpu_hogs(tmp_path, kept_from_a_cpu):
    """The whole chain keeps every byte on a loaded host: the guest's UART (whose console
    driver overwrites its transmitter after waiting 10 ms), QEMU's main loop and the reader.
    Every kernel line of the console capture is compared, byte for byte, with the same
    record of the kernel log printed after ready (before the fix, one boot beside four hogs
    lost 480 bytes in 45 lines).  A SCHED_FIFO thread can still be kept from a CPU by the
    host (a virtual machine's hypervisor; once in CI, one byte): a damaged line is allowed
    only where the reader recorded that it, or QEMU's main loop, waited for a CPU then."""
    t = Target()
    t.initramfs.init = "script"
    t.initramfs.dmesg = True
    built = build(t)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        result = strategy.boot(built, str(tmp_path / "loaded.capture"))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert result.status == "ok", result.reason
    header = _header(result.capture)
    assert header["scheduling"].startswith("SCHED_FIFO"), header
    assert header["qemu_main_loop_scheduling"].startswith("SCHED_FIFO"), header
    a = analyze(read([result.capture]))
    loss = a.console.loss
    assert loss is not None and loss.checked > 300, loss
    stalls = [ev.attrs["detail"] for ev in a.boot.events if ev.name == "capture.stalled"]
    lost = [(d.line, d.shorter, d.longer, d.host_stall) for d in loss.damaged
            if not (d.host_stall and kept_from_a_cpu(d.host_stall))]
    assert not lost, (lost[:5], stalls[:10])


def test_one_ready_time_everywhere_for_a_loud_and_a_quiet_boot(tmp_path, capsys):
    """Ready is when the device was ready (its ready line on its own clock, from power-on):
    the same number in the progress line, `runs`, `show` and the statistics; when the line
    reached the host after the console's backlog is shown beside it under its own name."""
    db = str(tmp_path / "r.db")
    assert main(["boot", "--db", db, "--label", "loud", "--init", "script"]) == 0
    assert main(["boot", "--db", db, "--label", "quiet", "--init", "script", "--append", "quiet"]) == 0
    out, err = capsys.readouterr()
    progress = {int(m.group(1)): (round(float(m.group(2)) * 1e9), m.group(3) and round(float(m.group(3)) * 1e9))
                for m in re.finditer(r"booting 1/1: run (\d+): ready ([\d.]+) s(?: \(its line reached the host at "
                                     r"([\d.]+) s: console backlog)?", err)}
    assert sorted(progress) == [1, 2], err
    store = Store(db)
    assert main(["runs", "--db", db, "-f", "json"]) == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert main(["compare", "--db", db, "loud", "quiet", "-f", "json"]) == 0
    stats = {m["metric"]: m for m in json.loads(capsys.readouterr().out)["metrics"]}
    for run_id, label in ((1, "a"), (2, "b")):
        run = store.get(run_id)
        assert main(["show", str(run_id), "--db", db, "-f", "json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        ready = shown["end"]["at_ns"]
        assert run.ready_ns == listed[run_id]["ready_ns"] == ready == int(stats["at:ready"][label]["median"])
        assert abs(progress[run_id][0] - ready) < 1_000_000  # printed to the millisecond
        # The line reached the host later; the store and `show` name it for what it is.
        assert run.ready_line_ns == listed[run_id]["ready_line_ns"] >= ready - 1_000_000
        if progress[run_id][1] is not None:  # shown when the line waited behind others
            assert run.ready_line_ns == shown["console"]["ready_line_at_ns"]
            assert abs(progress[run_id][1] - run.ready_line_ns) < 1_000_000
    # quiet: the kernel did not print the ready line, init's own copy ended the boot on the
    # host's clock.
    quiet = store.get(2)
    assert abs(quiet.ready_line_ns - quiet.ready_ns) < 5_000_000


def _microvm(append: str) -> Target:
    t = Target()
    t.target.kernel, t.target.machine, t.target.firmware = "cloud", "microvm", "qboot"
    t.initramfs.init = "script"
    t.target.append = append
    return t


def test_host_facts_are_resolved_where_it_boots_and_a_foreign_rate_is_caught(tmp_path):
    """tsc_early_khz=host is this host's TSC rate: the guest's printk clock keeps the host's
    time (measured on the probe lines printed after ready).  A rate from another host (here
    0.886 of ours, as a 2596 MHz value given on a 2300 MHz host) makes the guest's clock run
    at the wrong speed: a warning names the cause, and the alignment follows the rate."""
    own = host_facts.tsc_khz()
    built = build(_microvm("quiet tsc_early_khz=host lpj=host"))
    assert f"tsc_early_khz={own} " in built.cmdline + " " and "=host" not in built.cmdline
    result = strategy.boot(built, str(tmp_path / "own.capture"))
    assert result.status == "ok", result.reason
    boot = read([result.capture])
    rate = boot.clocks[Clock.PRINTK].rate
    # Measured within 0.5%, or not measured because a busy host saw probes late (then it
    # says so); never a rate that is not the clock's.
    disagree = [d for d in boot.diagnostics if "probe lines disagree" in d.message]
    assert (rate is not None and abs(rate.rate - 1) < 0.005) or (rate is None and disagree), (rate, disagree)
    assert not [d for d in boot.diagnostics if "clock ran at" in d.message]

    foreign = round(own * 0.886)
    # tsc=reliable: with a rate this far off, the guest's clocksource watchdog marks the TSC
    # unstable at about 1.9 s, and the printk clock then partly follows the guest's jiffies,
    # which a loaded host delays (a CI run with two guests booting side by side measured
    # 0.933, its probes in agreement): the rate of that clock is the host's load's, not
    # the rate given, so bootlab measures it and this test keeps the guest on its TSC.
    result = strategy.boot(build(_microvm(f"quiet tsc=reliable tsc_early_khz={foreign}")),
                           str(tmp_path / "foreign.capture"))
    assert result.status == "ok", result.reason
    boot = read([result.capture])
    printk = boot.clocks[Clock.PRINTK]
    assert abs(printk.rate.rate - 0.886) < 0.01, printk.rate
    warning = next(d.message for d in boot.diagnostics if "clock ran at" in d.message)
    assert f"tsc_early_khz={foreign}" in warning and "tsc_early_khz=host" in warning
    # 0.886 host seconds per printk second: the printk clock ran 1.13 times as fast, and its
    # durations are 12.9% long
    assert f"ran at {1 / printk.rate.rate:.4f} times" in warning and f"{1 / printk.rate.rate - 1:.1%} long" in warning
    # The alignment follows the measured rate: a printk second is 0.886 s of the host's.
    assert abs((printk.ref(2_000_000_000) - printk.ref(1_000_000_000)) / 1e9 - printk.rate.rate) < 1e-3


def test_an_icount_guest_is_not_paced_and_is_timed_where_its_lines_were_seen(tmp_path):
    """Under -icount the guest's clock counts instructions: the host does not drain its
    console at the baud rate, nor run QEMU's main loop at SCHED_FIFO (a UART drained on the host's clock made the guest's console
    writer give up waiting and write over QEMU's FIFO: 64-154 bytes lost per boot of the
    camera), and its events are placed where their lines reached the host."""
    t = _microvm("quiet")
    t.target.icount = "shift=0,sleep=off"
    built = build(t)
    assert built.baud is None
    result = strategy.boot(built, str(tmp_path / "icount.capture"))
    assert result.status == "ok", result.reason
    header = _header(result.capture)
    assert header["baud"] is None and "paced_baud" not in header and "-icount" in header["argv"]
    # Its main loop is not raised to SCHED_FIFO: nothing of the guest's timing waits for it.
    assert header["qemu_main_loop_scheduling"] == "SCHED_OTHER"
    boot = read([result.capture])
    assert boot.clocks[Clock.PRINTK].at_sightings
    assert any("QEMU's -icount shift=0,sleep=off" in d.message for d in boot.diagnostics)
    a = analyze(boot)
    assert a.console.ready_line_at is None or a.console.ready_line_at - a.phases.end.at < 10_000_000


def test_the_ready_line_is_never_placed_after_it_arrived():
    """A real capture (make test, 2026-11-23) whose ready line's printk stamp, mapped onto the
    host's clock, came 22 µs after the line's own bytes reached the host: the line was
    printed no later than it arrived, so ready is its arrival."""
    capture = Path(__file__).resolve().parent / "data" / "real" / "ready-mapped-after-arrival.capture.gz"
    a = analyze(read([str(capture)]))
    assert a.phases.end.at == 7_069_155_305  # the console copy's arrival


REAL = Path(__file__).resolve().parent / "data" / "real"


@pytest.mark.parametrize("capture", sorted(p.name for p in REAL.glob("*.capture.gz")))
def test_no_boundary_is_placed_after_its_line_arrived(capture):
    """Every phase boundary taken from a captured line (kernel handover, devtmpfs or the
    first initcall, init, services, the application, ready) is no later than the line's
    bytes reached the host.  Before, only ready was bounded: init's start came 15-60 µs
    after its arrival in 51 of 1,041 boundaries of 200 real captures (generic.capture.gz
    among them)."""
    boot = read([str(REAL / capture)])
    a = analyze(boot)
    checked = 0
    for mark, boundary in [*a.phases.boundaries.items(), ("end", a.phases.end)]:
        where = re.match(r"(\S+):(\d+)\b", boundary.evidence)
        if not where or not where.group(1).endswith(capture):
            continue
        arrived = phases.line_arrival(boot, SimpleNamespace(file=where.group(1), line=int(where.group(2))))
        assert arrived is None or boundary.at <= arrived, (mark, boundary)
        checked += 1
    assert checked >= 2


def test_a_mark_sharing_a_line_with_firmware_output_keeps_its_own_arrival():
    """A real capture (the real-time guest's) whose `bootlab-mark: app.start` arrived 12 s after
    `Booting from ROM..` on the same console line: the line's first byte is not the mark's
    arrival, and bounding by it dropped the application's start."""
    a = analyze(read([str(REAL / "mark-after-firmware-on-one-line.capture.gz")]))
    assert abs(a.phases.boundaries["app.start"].at - 12_883_101_989) < 1_000_000
    assert not [n for n in a.phases.notes if "comes before the previous boundary" in n]


@pytest.mark.parametrize("init,append", [("script", ""), ("rc", ""), ("script", "loglevel=3")])
def test_a_step_that_fails_stops_the_boot_and_says_which(tmp_path, init, append):
    """A timed step that fails (here a module that is not there; in an optimizer run, the
    real-time scheduler's module refused by a kernel rebuilt under it) leaves a device that is
    not the one described: the boot stops there and is a failed run naming the step, never
    a boot that reaches ready without it.  The reason goes through the kernel log, whole; on a
    console too quiet to show a kernel error (loglevel=3), the init prints it itself."""
    t = Target()
    t.initramfs.init = init
    t.target.append = append
    t.initramfs.steps = {"scheduler": "insmod /rt/missing.ko && echo went-on-after-the-step"}
    capture = tmp_path / "step.capture"
    result = strategy.boot(build(t), str(capture))
    assert result.status == "failed", result
    assert result.reason.startswith("bootlab: stopped: step scheduler failed (exit "), result.reason
    text = bootlab_capture.console_bytes(capture.read_bytes())
    assert b"BOOTLAB READY" not in text and b"went-on-after-the-step" not in text
