"""The reference device's parts: launching QEMU is power-on; its serial console (stdio) is
captured, drained at the console's baud rate, until the ready marker (strategy.py boots it).

A boot that prints nothing for `silence` seconds or runs past its deadline is killed and
reported as failed, with everything it printed and where its CPUs stood (qemu_cpus.py).
KVM is refused when it hangs (on some hosts a KVM guest never leaves the firmware): a
short probe decides.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from datetime import datetime, timezone

from typing import TYPE_CHECKING

from ..capture import priority, session
from ..capture.pacing import PacedSource
from ..capture.process import ProcessSource, dies_with_us
from . import qemu_cpus, rootfs
from .description import TargetError
from .result import FAILED_LINE
from .strategy import Parts

if TYPE_CHECKING:
    from .reference import Built

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
        proc = subprocess.Popen(dies_with_us(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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


class QemuBootable:
    """What a target booted by launching QEMU offers the boot sequence and the run store
    (kinds.py), for a built target with `target` (its description: boot, [target]-like
    table with console_baud, an optional rootfs) and `qemu_argv()`: the reference device,
    the ARM64 board."""

    @property
    def ready(self) -> str:
        return self.target.boot.ready

    @property
    def baud(self) -> int | None:
        """The speed the host drains the console at; None (not paced) under -icount: the
        guest's clock then counts instructions, and a UART drained on the host's clock would
        make the guest's timing follow the host's (its console writer, waiting for the
        transmitter on its own clock, gave up and wrote over QEMU's FIFO: bytes lost)."""
        t = self.target.target
        return None if t.icount else (t.console_baud or None)

    disk = None  # the root filesystem image (rootfs.py) on a virtio disk, with a [rootfs] table

    @property
    def after_ready(self) -> float:
        """Seconds to keep reading after ready; the guest powers off when done (EOF)."""
        if self.disk is not None and self.target.rootfs.analyze:
            return rootfs.AFTER_READY  # systemd's view is printed after ready
        return AFTER_READY

    def disk_argv(self) -> list[str]:
        """QEMU's arguments for the root filesystem's disk, if any: virtio (on PCI, on both
        machines), in snapshot mode: the guest's writes go to a temporary file, every boot
        starts from the same image."""
        if self.disk is None:
            return []
        drive = f"file={self.disk},if=virtio,format=raw,snapshot=on"
        return ["-drive", drive if self.target.rootfs.disk_writable else drive + ",readonly=on"]

    def command(self) -> list[str]:
        return self.qemu_argv()

    def bootloader(self):
        """The bootloader talked to on the console, if any (uboot.UBoot)."""
        return self.target.bootloader

    def parts(self, capture_path: str) -> Parts:
        return parts(self, capture_path)


def parts(built: Built, capture_path: str) -> Parts:
    """The reference device as boot parts: QEMU's launch is power-on, its stdio the serial
    console (typed on when a bootloader is driven), drained at the console's baud rate."""
    t = built.target
    if t.target.accel == "kvm":
        ok, why = kvm_usable(str(built.image))
        if not ok:
            raise TargetError(f"KVM refused: {why}; use accel = \"tcg\"")
    baud = built.baud
    stderr_path = capture_path + ".stderr"
    loader = built.bootloader()
    monitor = qemu_cpus.Monitor()
    # QEMU's main loop moves the UART's bytes out: at SCHED_FIFO the host's load cannot hold
    # the guest's console writer past its timeout.  Under -icount the guest waits on its own
    # clock and its console is not paced, and a main loop at SCHED_FIFO would take a host core
    # from everything else whenever it is busy, as QEMU 10's is when a guest's vCPUs sleep
    # between a metronome's beats (it warps the clock at each one).
    main_priority = None if t.target.icount else priority.DEFAULT_PRIORITY
    proc = ProcessSource(built.qemu_argv() + monitor.argv(), small_buffer=bool(baud), stderr_path=stderr_path,
                         main_priority=main_priority, typed=loader is not None)

    def ended(result: session.Result) -> str:
        why = f"QEMU ended without the ready marker ({result.detail})"
        stderr = _read(stderr_path).strip()
        return why + (f": {stderr.splitlines()[-1]}" if stderr else "")

    def hung() -> str:
        where, registers = monitor.where(built.kernel.image)
        if registers:
            with open(capture_path + ".cpus", "w") as fh:
                fh.write(registers)
            where += f" (registers in {capture_path}.cpus)"
        return where

    return Parts(console=PacedSource(proc, baud) if baud else proc, power=proc, bootloader=loader,
                 stop=session.Stop(ready=re.compile(t.boot.ready.encode()), after_ready=built.after_ready,
                                   silence=t.boot.silence, deadline=t.boot.deadline,
                                   failure=FAILED_LINE),
                 meta={"started": datetime.now(timezone.utc).isoformat(timespec="microseconds"), "zero": "power-on",
                       "baud": baud or None, "target": t.name, "cmdline": built.cmdline, "digest": built.digest},
                 ended=ended, hung=hung)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""
