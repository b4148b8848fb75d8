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

Time zero is the moment the power-on (or power-cycle) command returns, as with
`bootlab capture --power-cycle`; the console is opened before that so no byte of the boot
is missed.  A campaign's variants patch these keys (usually `prepare`).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

from ..capture import session
from ..capture.power import device_source, mark_zero, switch
from ..capture.source import SourceLost
from ..capture.writer import NativeWriter
from .reference import TargetError, _section
from .result import BootResult, classify

AFTER_READY = 1.0  # seconds of console kept after the ready line


@dataclass
class Board:
    device: str = ""
    baud: int = 115200
    power_cycle: str = ""
    power_off: str = ""
    power_on: str = ""
    prepare: str = ""
    ready: str = ""
    silence: float = 30.0
    deadline: float = 120.0

    def to_dict(self) -> dict:
        return {"board": asdict(self)}

    def validate(self, where=lambda *path: "") -> None:
        checks = [
            (bool(self.device), "device", "the serial device (or /dev/pts/N) of the board's console is required"),
            (self.baud > 0, "baud", "baud must be positive"),
            (bool(self.power_cycle) != bool(self.power_on), "power_cycle",
             "give power_cycle, or power_on (with an optional power_off)"),
            (not (self.power_cycle and self.power_off), "power_off", "power_off goes with power_on, not power_cycle"),
            (bool(self.ready), "ready", "the ready line's regular expression is required"),
            (self.silence > 0, "silence", "silence must be positive"),
            (self.deadline > 0, "deadline", "deadline must be positive"),
        ]
        for ok, key, message in checks:
            if not ok:
                raise TargetError(f"{where('board', key)}board.{key}: {message}")
        try:
            re.compile(self.ready)
        except re.error as err:
            raise TargetError(f"{where('board', 'ready')}board.ready: bad regular expression: {err}") from None


def from_dict(data: dict, where=lambda *path: "") -> Board:
    """A board from its description ({"board": {...}}); errors name the key and line."""
    for key in data:
        if key != "board":
            raise TargetError(f"{where(key)}{key}: unknown key (a board description has one table, [board])")
    board = _section(Board, data.get("board", {}), "board", where)
    board.validate(where)
    return board


def boot(board: Board, capture_path: str, echo=None) -> BootResult:
    """One boot: prepare, power off, open the console, power on, capture until ready."""
    wall = time.monotonic_ns()
    meta = {"started": datetime.now(timezone.utc).isoformat(timespec="microseconds"), "zero": "power-on",
            "baud": board.baud, "target": "board", "prepare": board.prepare}
    writer = NativeWriter(capture_path, meta)
    try:
        return _powered_boot(board, writer, echo, wall)
    finally:
        writer.close()


def _powered_boot(board: Board, writer: NativeWriter, echo, wall: int) -> BootResult:
    def failed(reason: str) -> BootResult:
        return BootResult("failed", reason, writer.path, None, time.monotonic_ns() - wall)

    for cmd, what in ((board.prepare, "prepare"), (board.power_off, "power-off")):
        if cmd and (why := switch(cmd, what)):
            return failed(why)
    source = device_source(board.device, board.baud)
    try:
        source.open()
    except SourceLost as err:
        return failed(str(err))
    try:
        issued = time.monotonic_ns()
        why = switch(board.power_cycle or board.power_on, "power")
        t0 = time.monotonic_ns()
        if why:
            return failed(why)
        mark_zero([writer], t0, True, issued)
        stop = session.Stop(ready=re.compile(board.ready.encode()), after_ready=AFTER_READY, silence=board.silence,
                            deadline=board.deadline)
        result = session.run(source, [writer] + ([echo] if echo is not None else []), t0, stop)
        writer.event(time.monotonic_ns() - t0, f"end {result.reason}")
    finally:
        source.close()
    status, reason = classify(result, board.deadline,
                              f"the console ended without the ready line ({result.reason} {result.detail})")
    return BootResult(status, reason, writer.path, result.ready_line_ns, time.monotonic_ns() - wall)
