"""Board targets: a console on a serial line, power by commands.  The board here is the
reference device behind a pty: its power-on command starts QEMU (daemonized, console into a
FIFO) and a relay copies that console into the pty's far end, as a USB-serial cable would."""

from __future__ import annotations

import json
import os
import shlex
import threading
import tty

import pytest

from bootlab.cli import main
from bootlab.lab.store import Store
from bootlab.targets import board as board_target
from bootlab.targets import strategy
from bootlab.targets import reference
from bootlab.targets.reference import Target


@pytest.fixture
def line():
    """A serial line: the board writes into `far`, bootlab opens `device`."""
    far, near = os.openpty()
    tty.setraw(near)
    yield far, os.ttyname(near)
    os.close(far)
    os.close(near)


def test_a_board_that_stays_silent_is_a_timeout(line, tmp_path):
    _, device = line
    b = board_target.Board(device=device, power_on="true", ready="READY", silence=1.0, deadline=10.0)
    result = strategy.boot(b, str(tmp_path / "silent.capture"))
    assert result.status == "timeout" and "silence" in result.reason
    assert b"power-on" in (tmp_path / "silent.capture").read_bytes()


def test_a_failing_power_command_fails_the_boot(line, tmp_path):
    _, device = line
    b = board_target.Board(device=device, power_on="echo relay unplugged >&2; exit 3", ready="READY")
    result = strategy.boot(b, str(tmp_path / "nopower.capture"))
    assert result.status == "failed" and "status 3" in result.reason and "relay unplugged" in result.reason


def _relay(fifo: str, far: int) -> None:
    """Copy every console byte the emulated board writes into the serial line."""
    while True:
        with open(fifo, "rb", buffering=0) as console:
            while data := console.read(4096):
                os.write(far, data)


def _emulated_board(line, tmp_path, resets: bool = False):
    """The reference device as a board behind the serial line: (its Target, a power-on command
    for kernel arguments added, the power-off command).  With `resets`, a reset of the guest
    restarts it, as a board's watchdog would, instead of ending QEMU."""
    far, _ = line
    fifo, pidfile = str(tmp_path / "console"), str(tmp_path / "qemu.pid")
    os.mkfifo(fifo)
    threading.Thread(target=_relay, args=(fifo, far), daemon=True).start()
    t = Target()
    t.target.kernel = "cloud"
    built = reference.build(t)
    argv = built.qemu_argv()
    argv[argv.index("-nographic")] = "-daemonize"
    if resets:
        argv.remove("-no-reboot")
    argv += ["-display", "none", "-monitor", "none", "-serial", f"file:{fifo}", "-pidfile", pidfile]

    def power_on(append: str) -> str:
        changed = list(argv)
        changed[changed.index("-append") + 1] += append
        return shlex.join(changed)

    power_off = f"if [ -f {pidfile} ]; then kill $(cat {pidfile}) 2>/dev/null; rm -f {pidfile}; sleep 0.2; fi; true"
    return t, power_on, power_off


@pytest.mark.qemu
def test_a_board_that_resets_before_ready_is_failed(line, tmp_path):
    """A board whose watchdog resets it before the application is ready boots again on the
    same power-on: a capture that reads on to a ready line holds two boots' time, and one
    that loops until the deadline was a timeout.  Here the initramfs's init reboots at once
    (busybox's `reboot -f`: `reboot: Restarting system`), the kernel QEMU loads speaks again,
    and the boot is failed, naming the reset."""
    _, device = line
    t, power_on, power_off = _emulated_board(line, tmp_path, resets=True)
    b = board_target.Board(device=device, power_on=power_on(" rdinit=/bin/busybox reboot -f"), power_off=power_off,
                           ready=t.boot.ready, silence=20.0, deadline=25.0)
    try:
        result = strategy.boot(b, str(tmp_path / "reset.capture"))
    finally:
        os.system(power_off)
    assert result.status == "failed", result.reason
    assert result.reason.startswith("the board was reset before ready: its boot began again at ")
    assert "([    0.000000] Linux version 6.1.0" in result.reason and "; then killed: deadline" in result.reason
    assert (tmp_path / "reset.capture").read_bytes().count(b"Linux version ") >= 2


@pytest.mark.qemu
def test_board_campaign_boots_a_device_behind_a_serial_line(line, tmp_path, capsys):
    _, device = line
    t, power_on, power_off = _emulated_board(line, tmp_path)
    path = tmp_path / "board.toml"
    path.write_text(f"""
name = "board"
runs = 2
[board]
device = {json.dumps(device)}
power_off = {json.dumps(power_off)}
power_on = {json.dumps(power_on(""))}
ready = {json.dumps(t.boot.ready)}
silence = 30
deadline = 120
[variant.quiet]
power_on = {json.dumps(power_on(" quiet"))}
""")
    db = str(tmp_path / "lab.db")
    try:
        assert main(["lab", "run", str(path), "--db", db, "-f", "json"]) == 0
    finally:
        os.system(power_off)
    report = json.loads(capsys.readouterr().out)
    runs = Store(db).runs(campaign="board")
    assert [r.status for r in runs] == ["ok"] * 4, [r.reason for r in runs]
    assert [v["name"] for v in report["variants"]] == ["baseline", "quiet"]
    assert all(len(v["runs"]["ok"]) == 2 for v in report["variants"])
    # The kernel's own messages came through the line and were analysed into phases; the
    # quiet variant printed less.
    loud, quiet = runs[:2]
    assert loud.metrics["total"] > 0 and "phase:kernel init" in loud.metrics
    assert loud.metrics["console:bytes"] > 5 * quiet.metrics["console:bytes"]
