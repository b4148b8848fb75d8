"""Booting the reference device: launching QEMU is power-on; its serial console (stdio) is
captured, drained at the console's baud rate, until the ready marker.

A boot that prints nothing for `silence` seconds or runs past its deadline is killed and
reported as failed, with everything it printed.  KVM is refused when it hangs (on some
hosts a KVM guest never leaves the firmware): a short probe decides.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from datetime import datetime, timezone

from ..capture import priority, session
from ..capture.pacing import PacedSource
from ..capture.power import mark_zero
from ..capture.process import ProcessSource
from ..capture.writer import NativeWriter
from .reference import Built, TargetError
from .result import BootResult, classify

AFTER_READY = 15.0  # seconds to keep reading after ready (the kernel log dump, poweroff)


@functools.lru_cache(maxsize=None)
def kvm_usable(kernel: str, timeout: float = 10.0) -> tuple[bool, str]:
    """Whether a KVM guest gets as far as the kernel's first message here (on some hosts it
    hangs once the firmware hands over: SeaBIOS prints, the kernel never does).  Asked once
    per kernel and process: a campaign does not boot a probe before every boot."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is missing or not accessible"
    argv = ["qemu-system-x86_64", "-accel", "kvm", "-nographic", "-no-reboot", "-m", "256", "-kernel", kernel,
            "-append", "console=ttyS0 panic=-1"]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        return False, "qemu-system-x86_64 is not installed"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    if b"Linux version" in out:
        return True, "a KVM guest reached the kernel's first message"
    if b"SeaBIOS" in out:
        return False, f"a KVM guest ran the firmware but its kernel printed nothing in {timeout:g} s (it hangs)"
    reason = err.decode(errors="replace").strip().splitlines()
    return False, reason[-1] if reason else f"a KVM guest printed nothing in {timeout:g} s"


def boot(built: Built, capture_path: str, echo=None) -> BootResult:
    """One boot of a built target; the capture is written to capture_path as it arrives."""
    t = built.target
    if t.target.accel == "kvm":
        ok, why = kvm_usable(str(built.image))
        if not ok:
            raise TargetError(f"KVM refused: {why}; use accel = \"tcg\"")
    baud = t.target.console_baud
    stderr_path = capture_path + ".stderr"
    proc = ProcessSource(built.qemu_argv(), small_buffer=bool(baud), stderr_path=stderr_path,
                         main_priority=priority.DEFAULT_PRIORITY)
    source = PacedSource(proc, baud) if baud else proc
    stop = session.Stop(ready=re.compile(t.boot.ready.encode()), after_ready=AFTER_READY,
                        silence=t.boot.silence, deadline=t.boot.deadline)
    wall = time.monotonic_ns()
    # Reader and QEMU's main loop at SCHED_FIFO: see capture/priority.py (no byte lost).
    with priority.raised(priority.DEFAULT_PRIORITY) as reader_policy:
        try:
            source.open()
        except OSError as err:
            raise TargetError(f"cannot start QEMU: {err}") from None
        meta = {"started": datetime.now(timezone.utc).isoformat(timespec="microseconds"), "zero": "power-on",
                "source": "exec", "argv": proc.argv, "baud": baud or None, "target": t.name,
                "cmdline": built.cmdline, "digest": built.digest, "scheduling": reader_policy,
                "qemu_main_loop_scheduling": proc.main_policy}
        writer = NativeWriter(capture_path, meta)
        writers = [writer] + ([echo] if echo is not None else [])
        t0 = proc.started_ns
        mark_zero([writer], t0, True)
        try:
            result = session.run(source, writers, t0, stop)
        finally:
            proc.stop()
            end = time.monotonic_ns() - t0
    writer.event(end, f"end {result.reason}")
    writer.close()
    stderr = _read(stderr_path)
    ended = f"QEMU ended without the ready marker ({result.detail})"
    if stderr.strip():
        ended += f": {stderr.strip().splitlines()[-1]}"
    status, reason = classify(result, t.boot.deadline, ended)
    return BootResult(status, reason, capture_path, result.ready_line_ns, time.monotonic_ns() - wall)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""
