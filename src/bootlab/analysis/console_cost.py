"""What printing to the console costs: bytes × bits per character ÷ baud.

A UART at 115200 baud with 8N1 framing moves 10 bits per byte, 11520 bytes a second: a
loud kernel (100 KB of messages) spends close to 9 s just waiting for its serial port.
When the log is a capture, the bytes are what really went out; when it is a dmesg, they
are what the ring buffer holds, which is what would go out without `quiet`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..timeline import NO_TIME, NS_PER_S, Boot, ConsoleLog
from .phases import Phases

DEFAULT_BAUD = 115200
BITS_PER_BYTE = 10  # start bit + 8 data bits + stop bit


@dataclass
class ConsoleCost:
    baud: int
    baud_source: str
    bytes: int
    lines: int
    cost: int  # ns
    printed: bool  # measured on the console (True) or estimated from the ring buffer
    per_phase: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (bytes, ns)
    source: str = ""
    note: str = ""


def baud_of(boot: Boot, override: int | None) -> tuple[int, str]:
    if override:
        return override, "--baud"
    if boot.meta.get("console_baud"):
        src = "capture" if "capture_baud" in boot.meta else "kernel command line"
        return int(boot.meta["console_baud"]), src
    return DEFAULT_BAUD, "default (no console speed in the logs)"


def byte_cost(nbytes: int, baud: int) -> int:
    return nbytes * BITS_PER_BYTE * NS_PER_S // baud if baud else 0


def console_log(boot: Boot) -> ConsoleLog | None:
    """The log that best shows what reached the console: the printed one (a capture), else
    the longest."""
    logs = [log for log in boot.logs if log.printed] or list(boot.logs)
    return max(logs, key=len) if logs else None


def console_cost(boot: Boot, phases: Phases, baud: int | None = None) -> ConsoleCost | None:
    log = console_log(boot)
    if log is None:
        return None
    rate, rate_source = baud_of(boot, baud)
    total = sum(log.nbytes)
    result = ConsoleCost(rate, rate_source, total, len(log), byte_cost(total, rate), log.printed, source=log.file)
    info = boot.clocks.get(log.clock)
    if info is not None and phases.spans:
        t = log.t.numpy()
        nbytes = np.frombuffer(log.nbytes, dtype=np.int32).astype(np.int64)
        timed = t != NO_TIME
        starts = np.array([s.start for s in phases.spans], dtype=np.int64)
        ref = t[timed] + info.offset
        which = np.searchsorted(starts, ref, side="right") - 1
        inside = (which >= 0) & (ref <= phases.spans[-1].end)
        per = np.bincount(which[inside], weights=nbytes[timed][inside], minlength=len(starts))
        result.per_phase = {s.name: (int(n), byte_cost(int(n), rate)) for s, n in zip(phases.spans, per) if n}
        untimed = total - int(per.sum())
        if untimed:
            result.per_phase["untimed or after the end"] = (untimed, byte_cost(untimed, rate))
    cmdline = boot.meta.get("cmdline", "")
    if not log.printed:
        if " quiet" in f" {cmdline}":
            result.note = ("estimated from the kernel log: with `quiet` these messages were kept in the "
                           "ring buffer, not printed")
        else:
            result.note = "estimated from the kernel log: what the console printed if every message reached it"
    return result
