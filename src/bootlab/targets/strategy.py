"""The boot sequence, written once for every kind of target: prepare, power off, open the
console, power on (time zero), let the bootloader do its part, read the console until the
ready line, and say what came of it.

A target kind (kinds.py) only supplies the parts (protocols.py).  Whatever fails is a step
of this sequence, and the run says which (StepFailed); the console read until then is kept.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..capture import priority, session
from ..capture.power import mark_zero
from ..capture.source import SourceLost
from ..capture.writer import NativeWriter
from .link import Link
from .protocols import BootloaderProtocol, ConsoleProtocol, PowerProtocol, StepFailed
from .result import BootResult, classify, declared_hung, reset_before_ready


@dataclass
class Parts:
    console: ConsoleProtocol
    power: PowerProtocol
    stop: session.Stop  # the ready line, and when to give up
    meta: dict = field(default_factory=dict)  # for the capture's header
    bootloader: BootloaderProtocol | None = None
    prepare: Callable[[], None] | None = None  # puts the variant in place; raises StepFailed
    reader_priority: int | None = priority.DEFAULT_PRIORITY  # see capture/priority.py
    # How a console that ended before the ready line ended (a QEMU error, ...).
    ended: Callable[[session.Result], str] = lambda r: (
        f"the console ended without the ready line ({r.reason}{' ' + r.detail if r.detail else ''})")
    # Where the device stood when it was declared hung (a line), asked before power-off by
    # a target that can tell (QEMU's monitor: qemu_cpus.py).
    hung: Callable[[], str] | None = None


@dataclass
class Sequence:
    """What one pass through the sequence came to: the session's result, or the step that
    failed before the console could be read to the end."""

    t0: int | None
    result: session.Result | None
    failed: StepFailed | None
    hung: str = ""  # where the device stood when it was declared hung, if it could say


def run(parts: Parts, writers_for: Callable[[dict], list], reconnect: bool = False) -> Sequence:
    """The sequence with the writers `writers_for(header)` makes (once the console and power
    are known to work, or to report the failed step in)."""
    writers = None

    def open_writers(extra: dict) -> list:
        nonlocal writers
        if writers is None:
            speed = {"line_byte_ns": parts.console.byte_ns} if parts.console.byte_ns else {}
            writers = writers_for({**parts.meta, **parts.console.describe(), **speed, **extra})
        return writers

    t0 = None
    policy = "SCHED_OTHER"
    try:
        with priority.raised(parts.reader_priority) if parts.reader_priority else contextlib.nullcontext() as p:
            policy = p or policy
            if parts.prepare is not None:
                parts.prepare()
            try:
                parts.power.off()  # a board may still be on from the last boot
            except SourceLost as err:
                raise StepFailed("power-off", str(err)) from None
            try:
                parts.console.open()  # before power-on: no byte of the boot may be missed
            except SourceLost as err:
                raise StepFailed("console", str(err)) from None
            try:
                t0 = parts.power.on()
            except SourceLost as err:
                raise StepFailed("power-on", str(err)) from None
            out = open_writers({"scheduling": policy, **_power_meta(parts.power)})
            mark_zero(out, t0, getattr(parts.power, "powered", True), getattr(parts.power, "issued_ns", None))
            _replay_early(parts.power, out, t0)
            try:
                if parts.bootloader is not None:
                    parts.bootloader.run(Link(parts.console, out, t0, parts.stop))
            except KeyboardInterrupt:
                return Sequence(t0, session.Result("interrupted"), None)
            result = session.run(parts.console, out, t0, parts.stop, reconnect=reconnect)
            hung = ""
            if declared_hung(result) and parts.hung is not None:
                hung = parts.hung()
                for w in out:
                    w.event(time.monotonic_ns() - t0, f"hung {hung}")
        return Sequence(t0, result, None, hung)
    except StepFailed as failed:
        out = open_writers({"scheduling": policy})
        if t0 is None and failed.t0 is not None:  # power came on inside the step that failed
            t0 = failed.t0
            mark_zero(out, t0, getattr(parts.power, "powered", True))
        if t0 is not None:
            _replay_early(parts.power, out, t0)
        for w in out:
            w.event(time.monotonic_ns() - t0 if t0 is not None else 0, f"failed {failed}")
        return Sequence(t0, None, failed)
    finally:
        parts.console.close()


def _replay_early(power, writers: list, t0: int) -> None:
    """What the power part read and typed while it switched on (link.Early), into the capture."""
    early = getattr(power, "early", None)
    if early is not None:
        early.replay(writers, t0)


def _power_meta(power) -> dict:
    policy = getattr(power, "main_policy", None)  # QEMU's main loop: see capture/priority.py
    return {"qemu_main_loop_scheduling": policy} if policy else {}


def boot(machine, capture_path: str, echo=None) -> BootResult:
    """One boot of a target of any kind (a kinds.Bootable); the capture is written to
    capture_path as it arrives."""
    wall = time.monotonic_ns()
    parts = machine.parts(capture_path)
    writer: NativeWriter | None = None

    def writers_for(header: dict) -> list:
        nonlocal writer
        writer = NativeWriter(capture_path, header)
        return [writer] + ([echo] if echo is not None else [])

    seq = run(parts, writers_for)
    try:
        if seq.failed is not None:
            return BootResult("failed", str(seq.failed), capture_path, None, time.monotonic_ns() - wall)
        writer.event(time.monotonic_ns() - seq.t0, f"end {seq.result.reason}")
        status, reason = classify(seq.result, parts.stop.deadline, parts.ended(seq.result))
        if seq.hung:
            reason += f"; {seq.hung}"
    finally:
        writer.close()
    if status in ("ok", "timeout"):  # (a board that reset itself read on: QEMU's targets exit instead)
        reset = reset_before_ready(Path(capture_path).read_bytes(), seq.result.ready_line_ns)
        if reset:
            status, reason = "failed", reset + ("" if status == "ok" else f"; then {reason}")
    return BootResult(status, reason, capture_path, seq.result.ready_line_ns, time.monotonic_ns() - wall)
