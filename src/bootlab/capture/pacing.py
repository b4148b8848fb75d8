"""Drain a console at a UART's speed.

QEMU's emulated UART accepts bytes as fast as the host takes them, so a loud console costs
a guest almost nothing and `quiet` looks useless.  Reading the guest's serial output at N
baud (10 bits a byte: start, 8 data, stop) through a channel that holds only a few bytes
makes the guest wait on its UART as it would on a board: while the channel is full, QEMU's
UART keeps its transmitter busy and the kernel's console driver spins on it.

The channel must refill a byte at a time, as a UART's FIFO does: a pipe won't do (a pipe
of one page becomes writable only when the whole page is drained, the guest's console
driver gives up after 10 ms per character, and QEMU drops what overflows its FIFO).  A
Unix socket with the smallest send buffer holds about 6 bytes and is writable again once
5 are read (see process.ProcessSource): at 9600 baud the guest waits at most ~5 ms a byte.

Draining at the line's speed makes the guest depend on the host: a reader kept away for
10 ms while the guest prints loses characters on the guest's side.  The reader wakes every
few bytes while the console is busy, so it notices when it was away: a stall of STALL or
more is reported as a capture event with what kept it away (the CPU time it used meanwhile
and the time it waited for a CPU, from the kernel's schedstat, the rest being time it
slept or was blocked; and the host's steal time: a virtual machine's CPU taken by its
hypervisor), so that a loss can be told to be the host's doing, not the device's.
"""

from __future__ import annotations

import os
import time

from .source import Source

BITS_PER_BYTE = 10
FIFO = 6  # bytes the host-side channel holds: an idle line banks no more than this
STALL = 0.005  # half the guest console driver's patience: an absence worth reporting
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def host_steal_ms() -> float | None:
    """CPU time this host's hypervisor took from it since boot (/proc/stat), or None."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return int(fields[8]) * TICK_MS
    except (OSError, IndexError, ValueError):
        return None


class SchedStat:
    """This thread's time on a CPU and waiting for one, in ns (/proc/thread-self/schedstat),
    read without reopening; (0, 0) where the kernel keeps no such figures."""

    def __init__(self):
        try:
            self.fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
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


class PacedSource(Source):
    def __init__(self, inner, baud: int):
        self.inner = inner
        self.baud = baud
        self.name = inner.name
        self.rate = baud / BITS_PER_BYTE  # bytes per second
        self.credit = 0.0
        self.last = 0.0
        self.returned: tuple[float, tuple[int, int]] | None = None  # (monotonic, schedstat) at the last read's end
        self.steal = host_steal_ms()
        self.events: list[tuple[int, str]] = []
        self.schedstat: SchedStat | None = None

    def open(self) -> None:
        self.inner.open()
        self.schedstat = SchedStat()  # the reading thread's: the one that opens
        self.last = time.monotonic()

    def unthrottle(self) -> None:
        self.rate = float("inf")

    def _accrue(self) -> None:
        now = time.monotonic()
        self.credit = min(self.credit + (now - self.last) * self.rate, float(FIFO))
        self.last = now

    def read(self, timeout: float) -> bytes:
        if self.rate == float("inf"):
            return self.inner.read(timeout)
        self._accrue()
        away = self.last - self.returned[0] if self.returned else 0.0  # the caller's turn
        if self.credit < 1:
            wait = (1 - self.credit) / self.rate
            if wait > timeout:
                time.sleep(timeout)
                self.returned = None
                return b""
            time.sleep(wait)
            before = self.last
            self._accrue()
            away += max(0.0, self.last - before - wait)  # woken late
        if away >= STALL:
            self._stalled(away)
        data = self.inner.read(timeout, max(1, int(self.credit)))
        self.credit -= len(data)
        self.returned = (time.monotonic(), self.schedstat.read()) if data else None
        return data

    def _stalled(self, away: float) -> None:
        detail = []
        if self.returned and self.schedstat.fd is not None:
            (ran0, waited0), (ran, waited) = self.returned[1], self.schedstat.read()
            detail += [f"ran {(ran - ran0) / 1e6:.1f} ms", f"waited {(waited - waited0) / 1e6:.1f} ms for a CPU"]
        steal, self.steal = self.steal, host_steal_ms()
        if steal is not None and self.steal is not None:
            detail.append(f"host steal {self.steal - steal:.0f} ms since the last report")
        at = time.monotonic_ns() - int(away * 1e9)
        self.events.append((at, f"stalled {away * 1e3:.1f} ms ({', '.join(detail)})"))

    def take_events(self) -> list[tuple[int, str]]:
        events, self.events = self.events, []
        return events

    def write(self, data: bytes) -> None:
        self.inner.write(data)

    def close(self) -> None:
        self.inner.close()
        if self.schedstat is not None:
            self.schedstat.close()

    def describe(self) -> dict:
        return {**self.inner.describe(), "paced_baud": self.baud}
