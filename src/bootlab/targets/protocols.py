"""The parts a boot is composed of, as labgrid has them: small protocols that drivers
implement and one strategy (strategy.py) that boots any target from them.

- power: `on()` applies power and returns the instant it did (host monotonic ns: time
  zero), `off()` removes it.  Drivers: a shell command (shell_power.py), launching a process
  (QEMU: qemu.py), labgrid's power drivers (capture/labgrid_console.py) or a
  labgrid strategy's transition (labgrid_strategy.py), none (`bootlab capture` of a
  running console).
- console: a byte stream (capture.source.Source) that can also be written to.  Drivers:
  serial ports, ptys, TCP, a process's stdio, labgrid's console drivers.
- bootloader: talks to the bootloader on the console from power-on to the handover
  (uboot.py: stop autoboot, set the environment, run the boot command).

A part that fails raises StepFailed naming the step of the sequence; the run is then
recorded as failed with that reason and the console it printed.
"""

from __future__ import annotations

import time
from typing import Protocol

from ..capture.source import Source


class StepFailed(Exception):
    """`t0`: time zero, when the step failed after power was applied inside it (a labgrid
    strategy powers the board and stops its bootloader in one transition)."""

    def __init__(self, step: str, detail: str, t0: int | None = None):
        super().__init__(f"{step}: {detail}")
        self.step = step
        self.detail = detail
        self.t0 = t0


class PowerProtocol(Protocol):
    def on(self) -> int:
        """Apply power; the host's monotonic clock (ns) when it was applied: time zero.
        A power part that reads the console itself while switching on (a labgrid strategy
        that also stops the bootloader) keeps what it read as `early` (strategy.Early), which
        the sequence writes into the capture once time zero is known."""

    def off(self) -> None:
        """Remove power (a no-op when it is off)."""


class ConsoleProtocol(Source):
    """A Source that can be typed at (a bootloader's prompt)."""

    def write(self, data: bytes) -> None:
        raise StepFailed("console", f"{self.name} cannot be written to")


class BootloaderProtocol(Protocol):
    def run(self, link) -> None:
        """From power-on to the handover to the kernel, on the console (link.Link)."""


class NoPower:
    """A console that is already running (`bootlab capture` without a power command):
    time zero is when the capture starts."""

    powered = False

    def on(self) -> int:
        return time.monotonic_ns()

    def off(self) -> None:
        pass
