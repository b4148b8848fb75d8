"""Capture on a pty: every byte arrives, stamps are ordered and near the truth, a device
that disappears and comes back is reconnected with the gap marked, Ctrl-C and kills keep
what was read, and grabserial's format comes out byte for byte."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

import pytest

from bootlab.capture import session
from bootlab.capture.pty_source import PtySource
from bootlab.capture.writer import GrabserialWriter, NativeWriter
from bootlab.sources import bootlab_capture, read
from bootlab.timeline import Boot

BOOTLAB = [sys.executable, "-m", "bootlab"]


def _pty():
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave, os.ttyname(slave)


def _records(path: Path):
    data = path.read_bytes()
    lines, stamps, cur, first = [], [], b"", None
    for _, t, flag, payload in bootlab_capture.iter_records(data, str(path), Boot()):
        if flag != "|":
            continue
        # a line cut by an event (a stall the reader recorded) goes on in the next record
        continues = payload.endswith(bootlab_capture.CONTINUES) and not payload.endswith(b"\\" + bootlab_capture.CONTINUES)
        pieces = bootlab_capture.segments(t, payload[:-len(bootlab_capture.CONTINUES)] if continues else payload)
        first = t if first is None else first
        cur += b"".join(raw for _, raw in pieces)
        if not continues:
            lines.append(cur)
            stamps.append(first)
            cur, first = b"", None
    return lines, stamps


def _run_capture(path, source, stop, reconnect=False):
    t0 = time.monotonic_ns()
    writer = NativeWriter(str(path), {"zero": "capture start"})
    result = session.run(source, [writer], t0, stop, reconnect=reconnect)
    writer.close()
    return t0, result


def _capture_while(path, source, master, writer):
    """Capture source until QUIT while writer() writes to the pty's master; both closed after."""
    th = threading.Thread(target=writer)
    th.start()
    t0, result = _run_capture(path, source, session.Stop(quit=re.compile(b"QUIT"), deadline=20))
    th.join()
    source.close()
    os.close(master)
    return t0, result


def test_every_byte_stamped_at_first_byte(tmp_path):
    master, slave, name = _pty()
    source = PtySource(name)
    source.open()
    os.close(slave)
    sent: list[tuple[int, bytes]] = []
    payloads = [b"plain line\r\n", b"bad utf8 \xff\xfe\x00 NUL\r\n", b"bare CR\rstill the same line\n",
                b"\x1b[0;32m  OK  \x1b[0m colours\n", b"slow ", b"second half\n"] * 20 + [b"QUIT\n"]

    def writer():
        time.sleep(0.2)
        for p in payloads:
            sent.append((time.monotonic_ns(), p))
            os.write(master, p)
            time.sleep(0.02 if p == b"slow " else 0.003)

    t0, result = _capture_while(tmp_path / "c.capture", source, master, writer)
    assert result.reason == "quit"
    lines, stamps = _records(tmp_path / "c.capture")
    assert b"\n".join(lines) + b"\n" == b"".join(p for _, p in sent)
    assert stamps == sorted(stamps)
    # Each line's stamp is the arrival of its first byte: never before it was sent, and
    # close after (the machine is shared: the bound is loose on purpose).
    starts = []
    fresh = True
    for t, p in sent:
        if fresh:
            starts.append(t - t0)
        fresh = p.endswith(b"\n")
    for stamp, truth in zip(stamps, starts):
        assert 0 <= stamp - truth < 200_000_000


def test_a_serial_port_stamps_lines_by_the_lines_speed_not_the_read(tmp_path):
    """A serial port delivers at most one byte per byte time, so the bytes of one read came
    one byte time apart at the latest: a read after a delay (here a writer that, like a USB
    adapter's latency timer, hands over three lines at once 20 ms after their first byte was
    due) no longer stamps all its lines at the read.  Each stamp stays an upper bound: never
    before the line's first byte was due on the line (a real pty opened as a serial port by
    pyserial, which accepts its speed)."""
    from bootlab.capture.serial_port import SerialSource

    master, slave, name = _pty()
    source = SerialSource(name, 115200)
    assert source.byte_ns == 86_806  # 10 bits at 115200 baud
    source.open()
    byte = source.byte_ns
    lines = [f"burst {k} line {j}: the bytes of a console line\r\n".encode() for k in range(10) for j in range(3)]
    due: list[int] = []

    def writer():
        time.sleep(0.2)
        for k in range(10):
            burst = lines[3 * k:3 * k + 3]
            first = time.monotonic_ns()
            offset = 0
            for line in burst:
                due.append(first + offset * byte)
                offset += len(line)
            time.sleep((offset * byte + 20_000_000) / 1e9)  # held after its last byte was due
            os.write(master, b"".join(burst))
            time.sleep(0.05)
        os.write(master, b"QUIT\n")

    t0, result = _capture_while(tmp_path / "s.capture", source, master, writer)
    os.close(slave)
    assert result.reason == "quit"
    got, stamps = _records(tmp_path / "s.capture")
    assert got[:30] == [line.rstrip(b"\n") for line in lines]
    for stamp, truth in zip(stamps, due):
        assert stamp >= truth - t0  # never before the line's first byte was due
    for k in range(10):
        for j in range(2):  # the next line of a burst: at least its predecessor's bytes later
            i = 3 * k + j
            assert stamps[i + 1] - stamps[i] >= len(lines[i]) * byte


def test_stamps_by_the_lines_speed_never_go_back_in_one_capture():
    """A boot's bootloader steps and the rest of it are read by several sessions on one
    console: a later read is never stamped before the last stamp of the same capture, nor
    any before zero; a new capture (another zero) starts afresh."""
    source = PtySource("/dev/null")
    source.byte_ns = 10
    assert source.arrivals(5, 1000, b"ab\ncd\nef") == [(930, b"ab\n"), (960, b"cd\n"), (990, b"ef")]
    # the next read brought 32 bytes: its first lines would be before the last stamp, 990
    assert source.arrivals(5, 1100, b"gh\n" * 10 + b"ij") == [(990, b"gh\n")] * 7 + [
        (1000, b"gh\n"), (1030, b"gh\n"), (1060, b"gh\n"), (1090, b"ij")]
    assert source.arrivals(5, 1200, b"x" * 300) == [(1090, b"x" * 300)]  # a later session of the same capture
    assert source.arrivals(7, 100, b"x" * 300) == [(0, b"x" * 300)]  # a new capture: from zero, not before
    source.byte_ns = None
    assert source.arrivals(7, 100, b"ab\ncd") == [(100, b"ab\ncd")]


def test_cli_line_baud_declares_a_ptys_line_speed(tmp_path, capsys):
    """`--line-baud N`: a pty (or a TCP console) bridged from a real serial line is stamped by
    that line's speed, recorded in the header; for a console of any other kind it is refused."""
    from bootlab.cli import main
    master, slave, name = _pty()
    out = tmp_path / "l.capture"
    proc = subprocess.Popen(BOOTLAB + ["capture", "--pty", name, "--line-baud", "9600", "-Q", "-o", str(out),
                                       "-q", "done"], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            os.write(master, b"hello\r\ndone\r\n")  # until the reader has opened the pty and seen it
            time.sleep(0.2)
        assert proc.wait(timeout=10) == 0, proc.stderr.read()
    finally:
        proc.kill()
        os.close(master)
        os.close(slave)
    assert read([str(out)]).meta["capture_line_byte_ns"] == 1_041_667  # 10 bits at 9600 baud
    assert main(["capture", "--exec", "true", "--line-baud", "9600"]) == 2
    assert "--line-baud is for a pty or a TCP console" in capsys.readouterr().err
    assert main(["capture", "--pty", name, "--line-baud", "0"]) == 2


def test_reconnect_marks_the_gap(tmp_path):
    link = tmp_path / "ttyUSB0"
    master, slave, name = _pty()
    link.symlink_to(name)
    source = PtySource(str(link))
    source.open()
    os.close(slave)
    state = {}

    def replug():
        time.sleep(0.2)
        os.write(master, b"before unplug\n")
        time.sleep(0.2)
        os.close(master)  # the adapter disappears
        link.unlink()
        time.sleep(0.5)
        m2, s2, n2 = _pty()
        link.symlink_to(n2)
        state["m2"], state["s2"] = m2, s2
        time.sleep(0.5)
        os.write(m2, b"after replug\nQUIT\n")

    th = threading.Thread(target=replug)
    th.start()
    _, result = _run_capture(tmp_path / "r.capture", source, session.Stop(quit=re.compile(b"QUIT"), deadline=20),
                             reconnect=True)
    th.join()
    source.close()
    os.close(state["m2"])
    os.close(state["s2"])
    assert result.reason == "quit" and len(result.gaps) == 1
    lines, _ = _records(tmp_path / "r.capture")
    assert lines == [b"before unplug", b"after replug", b"QUIT"]
    boot = read([str(tmp_path / "r.capture")])
    assert boot.first_mark("capture.disconnected") is not None
    assert boot.first_mark("capture.reconnected") is not None


def test_without_reconnect_a_lost_device_ends_the_capture(tmp_path):
    master, slave, name = _pty()
    source = PtySource(name)
    source.open()
    os.close(slave)

    def unplug():
        os.write(master, b"one line\n")
        time.sleep(0.3)
        os.close(master)

    th = threading.Thread(target=unplug)
    th.start()
    _, result = _run_capture(tmp_path / "l.capture", source, session.Stop(deadline=10))
    th.join()
    assert result.reason == "lost"
    assert _records(tmp_path / "l.capture")[0] == [b"one line"]


def test_silence_stops(tmp_path):
    master, slave, name = _pty()
    source = PtySource(name)
    source.open()
    os.write(master, b"hello\n")
    _, result = _run_capture(tmp_path / "s.capture", source, session.Stop(silence=0.3, deadline=10))
    assert result.reason == "silence"
    os.close(master)
    os.close(slave)


def _cli_capture(args, lines, stop=signal.SIGINT):
    master, slave, name = _pty()
    proc = subprocess.Popen(BOOTLAB + ["capture", "-d", name, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.0)  # the interpreter starts and opens the port
    for line in lines:
        os.write(master, line)
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(stop)  # Ctrl-C, or `kill`/`timeout`: the file must be complete
    stdout, stderr = proc.communicate(timeout=10)
    os.close(master)
    os.close(slave)
    assert proc.returncode == 0, stderr
    return stdout, stderr


LINES = [b"U-Boot 2024.01\r\n", b"Starting kernel ...\r\n", b"Uncompressing Linux... done, booting\r\n",
         b"bad \xff byte\r\n"]


def test_cli_grabserial_format_and_ctrl_c(tmp_path):
    out = tmp_path / "g.log"
    stdout, stderr = _cli_capture(["-t", "-m", "Starting kernel", "--grabserial", "-o", str(out), "-i", "done,"], LINES)
    text = out.read_bytes()
    body, _, inline = text.partition(b"\nThe inlinepat")
    got = body.split(b"\n")[:-1]
    assert [re.sub(rb"^\[\d+\.\d{6} \d+\.\d{6}\] ", b"", line) for line in got] == [
        line.replace(b"\r", b"").rstrip(b"\n") for line in LINES]
    assert b'"done," was matched at' in inline
    assert stdout.startswith(b"[0.000000 0.000000] U-Boot")  # -t on standard output too
    assert b"interrupted" in stderr


def test_cli_native_capture_ended_by_sigterm_and_analyze(tmp_path):
    native = tmp_path / "n.capture"
    _, stderr = _cli_capture(["-Q", "-o", str(native)], LINES, stop=signal.SIGTERM)
    assert b"interrupted" in stderr
    boot = read([str(native)])
    assert boot.sources[0].format == "bootlab-capture"
    assert boot.meta["host_zero"] == "capture start"
    assert boot.first_mark("kernel.load") is not None
    assert _records(native)[0] == [line.rstrip(b"\n") for line in LINES]


def test_grabserial_writer_matches_grabserial(tmp_path):
    out = (tmp_path / "g").open("wb")
    w = GrabserialWriter(out, match="Starting kernel")
    w.chunk(1_000_000_000, b"U-Boot\r\n")
    w.chunk(1_500_000_000, b"Starting kernel ...\r\n")
    w.chunk(1_600_000_000, b"Linux\r\n")
    w.inline(1_600_000_000, "Linux")
    w.close()
    out.close()
    assert (tmp_path / "g").read_bytes() == (
        b"[0.000000 0.000000] U-Boot\n"
        b"[0.500000 0.500000] Starting kernel ...\n"
        b"[0.100000 0.100000] Linux\n"
        b'\nThe inlinepat: "Linux" was matched at 0.100000\n')


def test_cli_needs_one_console(capsys):
    from bootlab.cli import main
    assert main(["capture"]) == 2
    assert "exactly one console" in capsys.readouterr().err


@pytest.mark.parametrize("opts", [["--tcp", "nohost"], ["--pty", "/nonexistent/pts/9"]])
def test_cli_bad_console(opts, capsys):
    from bootlab.cli import main
    assert main(["capture", *opts]) == 2


@pytest.mark.parametrize("opts", [[], ["--rt-priority", "0"]])
def test_cli_reader_priority_and_children_ordinary(tmp_path, opts):
    """By default the reader runs at SCHED_FIFO when it may (stamps are taken at wake-up);
    `--rt-priority 0` keeps it ordinary; the launched command is ordinary either way."""
    out = tmp_path / "p.capture"
    child = f"{sys.executable} -c 'import os; print(\"policy\", os.sched_getscheduler(0))'"
    proc = subprocess.run(BOOTLAB + ["capture", "--exec", child, "-Q", "-o", str(out), *opts],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"policy {os.SCHED_OTHER}".encode() in bootlab_capture.console_bytes(out.read_bytes())
    policy = read([str(out)]).meta["capture_scheduling"]
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(10))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        permitted = True
    except PermissionError:
        permitted = False
    if opts:
        assert policy == "SCHED_OTHER"
    elif permitted:
        assert policy == "SCHED_FIFO 10"
    else:
        assert policy.startswith("SCHED_OTHER (SCHED_FIFO refused")


def test_a_paced_reader_kept_away_records_the_stall(tmp_path):
    """A console drained at a UART's speed (a real child writing a steady stream through the
    small socket QEMU's console goes through): when the reader is kept away for 30 ms, the
    capture says so at that instant, with the CPU time it used and waited for meanwhile."""
    from bootlab.capture.pacing import PacedSource
    from bootlab.capture.process import ProcessSource

    proc = ProcessSource([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 63 + '\\n')"],
                         small_buffer=True)
    source = PacedSource(proc, 115200)
    source.open()
    t0 = proc.on()
    writer = NativeWriter(str(tmp_path / "s.capture"), {"zero": "power-on"})
    kept = []

    def away(t, data):
        if t > 200_000_000 and not kept:
            kept.append(t)
            time.sleep(0.03)

    session.run(source, [writer], t0, session.Stop(deadline=0.5), on_data=away)
    source.close()
    writer.close()
    boot = read([str(tmp_path / "s.capture")])
    stalls = [ev for ev in boot.events if ev.name == "capture.stalled"]
    assert stalls, "no stall recorded"
    ev = min(stalls, key=lambda ev: abs(ev.t - kept[0]))
    assert abs(ev.t - kept[0]) < 5_000_000
    m = re.fullmatch(r"stalled ([\d.]+) ms \(bootlab's reader ran ([\d.]+) ms, waited ([\d.]+) ms for a CPU, .*\)",
                     ev.attrs["detail"])
    assert m and float(m[1]) >= 30 and float(m[2]) < float(m[1])


SPIN = """
import os, time
os.sched_setaffinity(0, {int(os.environ["CPU"])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
end = time.monotonic() + 0.04
while time.monotonic() < end:
    pass
"""
SEND = """
import os, sys, time
os.sched_setaffinity(0, {int(c) for c in os.environ["OTHERS"].split(",")})
for i in range(100):
    sys.stdout.write(f"line {i}\\n")
    sys.stdout.flush()
    time.sleep(0.005)
"""


@pytest.mark.skipif(os.geteuid() != 0 or len(os.sched_getaffinity(0)) < 2,
                    reason="needs SCHED_FIFO for the process that takes the reader's CPU, and a second CPU")
def test_a_reader_kept_from_its_cpu_says_so(tmp_path):
    """Any capture (here a child's output through a pipe, not paced): when the reader waits
    for a CPU, it records how long, so that its late stamps are known to be late.  A
    real-time process takes the reader's only CPU for 40 ms while a writer on another CPU
    keeps sending (through a pipe, which wakes the reader itself: a tty's bytes go through a
    kernel worker, which may wait on the same CPU)."""
    from bootlab.capture.process import ProcessSource

    mask = os.sched_getaffinity(0)
    cpu = min(mask)
    env = {**os.environ, "CPU": str(cpu), "OTHERS": ",".join(str(c) for c in mask - {cpu})}
    source = ProcessSource([sys.executable, "-c", SEND], env=env)
    spinner = []

    def take_the_cpu(t, data):
        if t > 150_000_000 and not spinner:
            spinner.append(subprocess.Popen([sys.executable, "-c", SPIN], env=env))

    os.sched_setaffinity(0, {cpu})
    try:
        source.open()
        t0 = source.on()
        writer = NativeWriter(str(tmp_path / "k.capture"), {"zero": "power-on"})
        session.run(source, [writer], t0, session.Stop(deadline=20), on_data=take_the_cpu)
        writer.close()
    finally:
        os.sched_setaffinity(0, mask)
        source.close()
        for p in spinner:
            p.wait()
    boot = read([str(tmp_path / "k.capture")])
    waits = [float(m[1]) for ev in boot.events if ev.name == "capture.stalled"
             and (m := re.fullmatch(r"stalled ([\d.]+) ms \(bootlab's reader waited [\d.]+ ms for a CPU in the last "
                                    r"[\d.]+ ms, host steal \d+ ms since the last report\)", ev.attrs["detail"]))]
    assert waits and max(waits) >= 30, [ev.attrs["detail"] for ev in boot.events if ev.name == "capture.stalled"]


OWNER = """
import sys, time
from bootlab.capture.process import ProcessSource
source = ProcessSource(["sleep", "300"])
source.on()
print(source.proc.pid, flush=True)
time.sleep(300)
"""


def exited(pid: int) -> bool:
    """Whether process pid has exited (perhaps a zombie its new parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_launched_console_dies_with_a_killed_bootlab():
    """A bootlab killed outright (kill -9) cannot power off: its child (QEMU) is killed by
    the kernel rather than left running, and loading the host, for ever."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    child = int(owner.stdout.readline())
    assert Path(f"/proc/{child}").exists()
    owner.kill()
    owner.wait()
    for _ in range(100):  # the child is reparented, killed, then reaped by its new parent
        if exited(child):
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the launched program outlived the killed bootlab")


def test_a_missing_program_is_reported_by_name():
    from bootlab.capture.process import ProcessSource
    from bootlab.capture.source import SourceLost

    with pytest.raises(SourceLost, match="cannot start no-such-program: No such file or directory"):
        ProcessSource(["no-such-program"]).on()


def test_a_failure_line_printed_by_the_kernel_is_the_reason_without_its_time_stamp(tmp_path):
    """A device's init says why it stopped through the kernel log, whose record arrives whole
    on the console (an echoed line was once cut by `clocksource: Switched to clocksource tsc`
    printed meanwhile): the reason is the line from the failure pattern on."""
    master, slave, name = _pty()
    source = PtySource(name)
    source.open()
    os.write(master, b"[    3.419749] clocksource: Switched to clocksource tsc\r\n"
                     b"[    3.421002] bootlab: stopped: step scheduler failed (exit 2)\r\n"
                     b"[    3.421100] bootlab: stopped: a later line is not the reason\r\n")
    _, result = _run_capture(tmp_path / "f.capture", source,
                             session.Stop(silence=0.3, deadline=10, failure=re.compile(b"bootlab: stopped: ")))
    assert result.failure == "bootlab: stopped: step scheduler failed (exit 2)"
    os.close(master)
    os.close(slave)


def test_a_kernel_panic_or_emergency_mode_fails_the_boot_on_any_target(tmp_path):
    """Every target's capture stops on the same failure lines: the device's init stopping, a
    kernel panic (a board with panic=-1 reboots and reads on until the deadline: it was a
    timeout), systemd's emergency mode (a root password prompt until the deadline), an
    initramfs's shell (initramfs-tools', dracut's) for want of a root, a debug firmware's failed
    assertion (an EDK2 build that loops there ran to the deadline)."""
    from bootlab.targets.result import FAILED_LINE, classify

    for said, reason in ((b"[    3.516603] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(179,4)",
                          "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(179,4)"),
                         (b'You are in emergency mode. After logging in, type "journalctl -xb" to view',
                          'You are in emergency mode. After logging in, type "journalctl -xb" to view'),
                         (b"ALERT!  /dev/sda does not exist.  Dropping to a shell!",
                          "ALERT!  /dev/sda does not exist.  Dropping to a shell!"),
                         (b"Entering emergency mode. Exit the shell to continue.",
                          "Entering emergency mode. Exit the shell to continue."),
                         (b"\x1b[0mASSERT [XhciDxe] /edk2/MdeModulePkg/Bus/Pci/XhciDxe/Xhci.c(1805): !EFI_ERROR (Status)",
                          "ASSERT [XhciDxe] /edk2/MdeModulePkg/Bus/Pci/XhciDxe/Xhci.c(1805): !EFI_ERROR (Status)")):
        master, slave, name = _pty()
        source = PtySource(name)
        source.open()
        os.write(master, b"[    3.401877] mmc0: new HS400 MMC card at address 0001\r\n" + said + b"\r\n")
        _, result = _run_capture(tmp_path / "p.capture", source, session.Stop(silence=0.3, deadline=10, failure=FAILED_LINE))
        assert result.failure == reason
        assert classify(result, 10, "the console closed") == ("failed", reason)
        os.close(master)
        os.close(slave)
