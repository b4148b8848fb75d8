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

What the host's delays cost a paced console is watched in stalls.py.
"""

from __future__ import annotations

import time

from .source import Source
from .stalls import StallWatch

BITS_PER_BYTE = 10
FIFO = 6  # bytes the host-side channel holds: an idle line banks no more than this


class PacedSource(Source):
    def __init__(self, inner, baud: int):
        self.inner = inner
        self.baud = baud
        self.name = inner.name
        self.rate = baud / BITS_PER_BYTE  # bytes per second
        self.credit = 0.0
        self.last = 0.0
        self.returned: float | None = None  # when the last read that brought bytes ended
        self.watch: StallWatch | None = None

    def open(self) -> None:
        self.inner.open()
        self.last = time.monotonic()

    def watched(self, watch: StallWatch | None) -> None:
        self.watch = watch

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
        away = self.last - self.returned if self.returned else 0.0  # the caller's turn
        # the reader's schedstat when it left: the capture loop's look right after bytes came
        left = None if self.watch is None else self.watch.mark if self.returned else self.watch.reader.read()
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
        if self.watch is not None:
            self.watch.away(int(away * 1e9), left)
        data = self.inner.read(timeout, max(1, int(self.credit)))
        self.credit -= len(data)
        self.returned = time.monotonic() if data else None
        return data

    def relays(self) -> list[tuple[str, int]]:
        return self.inner.relays()

    def write(self, data: bytes) -> None:
        self.inner.write(data)

    def close(self) -> None:
        self.inner.close()

    def describe(self) -> dict:
        return {**self.inner.describe(), "paced_baud": self.baud}
