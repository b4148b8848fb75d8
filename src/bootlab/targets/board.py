"""A board on the desk: a serial console, a power switch driven by commands, a ready line.

    [board]
    device = "/dev/ttyUSB0"         # the serial console; a /dev/pts/N path is read as a pty
    baud = 115200
    power_cycle = "relay 1 cycle"   # or power_off + power_on
    prepare = ""                    # run before each boot: puts the variant's configuration
                                    # in place (bootloader environment, kernel, rootfs ...)
    ready = "APP READY"             # regular expression of the line that ends the boot
    silence = 30                    # seconds without output before a boot is declared hung
    deadline = 120                  # seconds before a boot is abandoned

    [bootloader]                    # optional: U-Boot on the console (uboot.py)

Time zero is the moment the power-on (or power-cycle) command returns, as with
`bootlab capture --power-cycle`; the console is opened before that so no byte of the boot
is missed (strategy.py).  A campaign's variants patch these keys (usually `prepare`, or
the bootloader's environment).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path

import tomli_w

from ..capture import session
from ..capture.power import device_source
from . import uboot
from .description import TargetError, section
from .shell_power import ShellPower, run_command
from .result import FAILED_LINE
from .strategy import Parts

AFTER_READY = 1.0  # seconds of console kept after the ready line


@dataclass
class BoardDescription:
    """What every board's description has besides how it is reached: the preparation, the
    ready line, the limits, and an optional bootloader.  A kind of board adds its table's
    keys, `TABLE`, its own checks and its console and power (labgrid_board.py)."""

    TABLE = ""  # the description's own table ([board], [labgrid])
    BOOTLOADER_DRIVERS = ("bootlab",)  # who may talk to its U-Boot (uboot.DRIVERS)
    prepare: str = ""
    ready: str = ""
    silence: float = 30.0
    deadline: float = 120.0
    bootloader: uboot.UBoot | None = field(default=None, repr=False, metadata={"key": False})  # [bootloader]
    # The description's directory (relative file names in it are relative to it).
    base: Path | None = field(default=None, compare=False, repr=False, metadata={"key": False})

    def to_dict(self) -> dict:
        table = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("key", True)}
        return {self.TABLE: table, **({"bootloader": self.bootloader.to_dict()} if self.bootloader else {})}

    def to_toml(self) -> str:
        return tomli_w.dumps(self.to_dict())

    def cmdline(self) -> str:
        """The kernel's command line bootlab sets: U-Boot's bootargs with its append; empty
        when the board boots with the one in its own files."""
        return self.bootloader.cmdline() if self.bootloader is not None else ""

    def standalone(self, name: str):
        """A copy that stands without its description file (`name` is not kept: a board's
        description has no name).  `prepare` is a shell command run where bootlab runs."""
        out = copy.deepcopy(self)
        self._absolute(out)
        return out

    def _absolute(self, out) -> None:
        """Make the kind's own relative paths in `out` absolute."""

    def describe(self) -> dict:
        return self.to_dict()

    def checks(self) -> list[tuple[bool, str, str]]:
        """(ok, key, message) for the keys of the kind's own."""
        return []

    def validate(self, where=lambda *path: "") -> None:
        checks = self.checks() + [
            (bool(self.ready), "ready", "the ready line's regular expression is required"),
            (self.silence > 0, "silence", "silence must be positive"),
            (self.deadline > 0, "deadline", "deadline must be positive"),
        ]
        for ok, key, message in checks:
            if not ok:
                raise TargetError(f"{where(self.TABLE, key)}{self.TABLE}.{key}: {message}")
        try:
            re.compile(self.ready)
        except re.error as err:
            raise TargetError(f"{where(self.TABLE, 'ready')}{self.TABLE}.ready: bad regular expression: {err}") from None

    def sequence_parts(self, console, power, **meta) -> Parts:
        """The parts with what every board shares: its preparation, its bootloader, the stop
        at the ready line."""
        return Parts(console=console, power=power, bootloader=self.bootloader,
                     prepare=(lambda: run_command(self.prepare, "prepare")) if self.prepare else None,
                     stop=session.Stop(ready=re.compile(self.ready.encode()), after_ready=AFTER_READY,
                                       silence=self.silence, deadline=self.deadline, failure=FAILED_LINE),
                     meta={"started": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                           "zero": "power-on", "target": self.TABLE, "prepare": self.prepare, **meta})

    @classmethod
    def from_dict(cls, data: dict, where=lambda *path: ""):
        """A board from its description ({TABLE: {...}, "bootloader": {...}}); errors name the
        key and line."""
        for key in data:
            if key not in (cls.TABLE, "bootloader"):
                raise TargetError(f"{where(key)}{key}: unknown key (a board's description has [{cls.TABLE}] and an "
                                  "optional [bootloader])")
        board = section(cls, data.get(cls.TABLE, {}), cls.TABLE, where)
        board.validate(where)
        if "bootloader" in data:
            board.bootloader = uboot.from_dict(data["bootloader"], where, cls.BOOTLOADER_DRIVERS)
            uboot.refuse_saved_env(board.bootloader, "bootlab cannot write a board's storage before power-on: "
                                   "save the environment on the board (setenv, saveenv) or set it on the console "
                                   "(env with stop_autoboot = true)", where)
        return board


@dataclass
class Board(BoardDescription):
    TABLE = "board"
    device: str = ""
    baud: int = 115200
    power_cycle: str = ""
    power_off: str = ""
    power_on: str = ""

    def command(self) -> list[str]:
        return [c for c in (self.prepare, self.power_off, self.power_cycle or self.power_on) if c]

    def parts(self, capture_path: str) -> Parts:
        """The board's console (opened before power-on, so no byte is missed), its power
        commands (zero is when power-on or power-cycle returns)."""
        return self.sequence_parts(device_source(self.device, self.baud),
                                   ShellPower(self.power_cycle or self.power_on, self.power_off,
                                              bool(self.power_cycle)), baud=self.baud)

    def checks(self) -> list[tuple[bool, str, str]]:
        return [
            (bool(self.device), "device", "the serial device (or /dev/pts/N) of the board's console is required"),
            (self.baud > 0, "baud", "baud must be positive"),
            (bool(self.power_cycle) != bool(self.power_on), "power_cycle",
             "give power_cycle, or power_on (with an optional power_off)"),
            (not (self.power_cycle and self.power_off), "power_off", "power_off goes with power_on, not power_cycle"),
        ]


KEYS = ("board", "bootloader")  # what a board's description holds
from_dict = Board.from_dict
