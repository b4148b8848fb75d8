"""Noticing when the host kept a console's bytes waiting.

A stamp is taken when the reader runs: a reader kept from a CPU stamps late, and says so.
A console drained at its line's speed (pacing.py) also makes the guest depend on the host:
the guest's console driver waits about 10 ms for its UART, then writes over it, so a reader
or a QEMU main loop kept from a CPU that long while the guest prints loses characters on
the guest's side.  SCHED_FIFO makes that rare, not impossible (a virtual machine's
hypervisor takes the host's CPUs when it likes).  So the capture loop reports each such
stall as a capture event, and a late stamp or a damaged line can be told to be the host's
doing, not the device's (analysis/console_loss.py).

Two measures:
- at each read that returns bytes, every relay's time waiting for a CPU since the last one
  (the kernel's schedstat): the reader's own (a late wake-up when bytes came), and those of
  the threads before it (QEMU's main loop, which moves the UART's bytes out, cannot tell of
  itself);
- on a paced line, the reader's own absence: the time its caller kept it (writing the
  capture, matching patterns) plus how late it woke from a sleep between bytes, with what
  it did meanwhile: its CPU time and its time waiting for a CPU (the rest is time it slept
  or was blocked).
Stalls in series add up, so STALL is a fifth of the guest's patience.  Each report also
gives the host's steal time since the previous one (a virtual machine's CPU taken by its
hypervisor; /proc/stat counts it in ticks).
"""

from __future__ import annotations

import os
import time

from ..sources.bootlab_capture import stalled

STALL = 2_000_000  # ns
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
READER = "bootlab's reader"


def host_steal_ms() -> float | None:
    """CPU time this host's hypervisor took from it since boot (/proc/stat), or None."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return int(fields[8]) * TICK_MS
    except (OSError, IndexError, ValueError):
        return None


class SchedStat:
    """A thread's time on a CPU and waiting for one, in ns (its /proc schedstat; the calling
    thread's by default), read without reopening; (0, 0) where the kernel keeps no such
    figures or the thread is gone."""

    def __init__(self, tid: int | None = None):
        path = f"/proc/{tid}/task/{tid}/schedstat" if tid else "/proc/thread-self/schedstat"
        try:
            self.fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self.fd = None

    def read(self) -> tuple[int, int]:
        if self.fd is None:
            return 0, 0
        try:
            ran, waited, _ = os.pread(self.fd, 128, 0).split()
            return int(ran), int(waited)
        except (OSError, ValueError):
            return 0, 0

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class StallWatch:
    """Made by the reading thread (its schedstat is the one read).  `away()` when the reader
    knows it was kept away; `look()` at each read that returned bytes (`mark` is then the
    reader's schedstat); `take()` the events so far."""

    def __init__(self):
        self.reader = SchedStat()
        self.relays: list[tuple[str, SchedStat]] = [(READER, self.reader)]
        self.mark = self.reader.read()  # the reader's schedstat at the last look
        self.waited = [self.mark[1]]
        self.since = time.monotonic_ns()  # the last look
        self.steal = host_steal_ms()
        self.events: list[tuple[int, str]] = []

    def add_relay(self, name: str, tid: int) -> None:
        stat = SchedStat(tid)
        self.relays.append((name, stat))
        self.waited.append(stat.read()[1])

    def _report(self, at: int, ns: int, what: str) -> None:
        steal, self.steal = self.steal, host_steal_ms()
        if steal is not None and self.steal is not None:
            what += f", host steal {self.steal - steal:.0f} ms since the last report"
        self.events.append((at, stalled(ns, what)))

    def away(self, ns: int, before: tuple[int, int]) -> None:
        """The reader was away `ns` until now; `before`: its schedstat when it left."""
        if ns < STALL:
            return
        ran, waited = self.reader.read()
        self._report(time.monotonic_ns() - ns, ns, f"{READER} ran {(ran - before[0]) / 1e6:.1f} ms, "
                                                    f"waited {(waited - before[1]) / 1e6:.1f} ms for a CPU")
        self.waited[0] = waited  # told once

    def look(self) -> None:
        now = time.monotonic_ns()
        for i, (name, stat) in enumerate(self.relays):
            ran, waited = stat.read()
            if stat is self.reader:
                self.mark = ran, waited
            if waited - self.waited[i] >= STALL:
                ns = waited - self.waited[i]
                self._report(now - ns, ns, f"{name} waited {ns / 1e6:.1f} ms for a CPU "
                                           f"in the last {(now - self.since) / 1e6:.1f} ms")
            self.waited[i] = max(waited, self.waited[i])
        self.since = now

    def take(self) -> list[tuple[int, str]]:
        events, self.events = self.events, []
        return events

    def close(self) -> None:
        for _, stat in self.relays:
            stat.close()
