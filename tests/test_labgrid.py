"""`bootlab capture --labgrid-env`: labgrid's power driver is the power switch (t = 0) and
its serial driver the console; here the board is a pty and the power switch two commands."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tty

from bootlab.sources import read

ENV = """targets:
  main:
    resources:
      RawSerialPort:
        port: {port}
        speed: 115200
    drivers:
      ExternalPowerDriver:
        cmd_on: "touch {flag}"
        cmd_off: "rm -f {flag}"
        delay: 0.1
      SerialDriver: {{}}
"""


def test_labgrid_power_and_console(tmp_path):
    master, slave = os.openpty()
    tty.setraw(slave)
    flag = tmp_path / "powered"
    env = tmp_path / "env.yaml"
    env.write_text(ENV.format(port=os.ttyname(slave), flag=flag))

    def board():
        deadline = time.monotonic() + 20
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        for line in (b"U-Boot 2024.01 (Jan 01 2024)\r\n", b"Starting kernel ...\r\n", b"QUIT\r\n"):
            os.write(master, line)
            time.sleep(0.1)

    th = threading.Thread(target=board)
    th.start()
    out = tmp_path / "b.capture"
    done = subprocess.run([sys.executable, "-m", "bootlab", "capture", "--labgrid-env", str(env), "-o", str(out),
                           "-q", "QUIT", "-e", "30", "-Q"], capture_output=True, text=True)
    th.join()
    os.close(master)
    os.close(slave)
    assert done.returncode == 0, done.stderr
    boot = read([str(out)])
    assert boot.meta["host_zero"] == "power-on"
    power, loader = boot.first_mark("power-on"), boot.first_mark("bootloader.start")
    # Power was applied (the board only speaks once the flag exists) before the first byte.
    assert power.t == 0 and 0 < loader.t < 5_000_000_000


def test_labgrid_bad_environment(tmp_path):
    env = tmp_path / "bad.yaml"
    env.write_text("targets: {main: {resources: {}, drivers: {}}}\n")
    done = subprocess.run([sys.executable, "-m", "bootlab", "capture", "--labgrid-env", str(env), "-o",
                           str(tmp_path / "x.capture")], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_a_strategy_needs_labgrids_uboot_driver(tmp_path):
    """[labgrid] strategy: the strategy stops autoboot with the environment's UBootDriver,
    which must then boot the board (tests/targets/test_labgrid_board.py boots one)."""
    import pytest

    from bootlab.targets import kinds
    from bootlab.targets.description import TargetError

    (tmp_path / "t.toml").write_text('[labgrid]\nenv = "env.yaml"\nready = "x"\nstrategy = "uboot"\n'
                                     '[bootloader]\nboot_command = "boot"\n')
    with pytest.raises(TargetError, match=r'labgrid.strategy: .* it needs \[bootloader\] driver = "labgrid"'):
        kinds.load(str(tmp_path / "t.toml"))
    (tmp_path / "t.toml").write_text('[labgrid]\nenv = "env.yaml"\nready = "x"\nstrategy = "uboot"\n'
                                     '[bootloader]\ndriver = "labgrid"\n')
    assert kinds.load(str(tmp_path / "t.toml")).strategy == "uboot"
