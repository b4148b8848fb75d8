"""The reader interface every console source implements.

A source is opened, read in chunks (whatever bytes are available, as soon as the first
one arrives), and closed.  `read` returns b"" when nothing arrived within the timeout;
it raises SourceClosed when the stream ended for good (a child exited, the peer closed)
and SourceLost when the device went away and may come back (a USB adapter unplugged).
"""

from __future__ import annotations

import os
import select


def byte_time_ns(baud: int, bytesize: int = 8, parity: str = "none", stopbits: float = 1) -> int:
    """One character's time on a serial line: its start bit, data bits, parity and stop bits."""
    return round((1 + bytesize + (parity != "none") + stopbits) * 1e9 / baud)


class SourceClosed(Exception):
    pass


class SourceLost(Exception):
    pass


class Source:
    name = "source"
    # One byte's time on the line, when the device delivers at most one byte in that time (a
    # serial port at its baud); None when bytes can come faster (a pty, a socket, a child).
    byte_ns: int | None = None
    _stamped = (None, 0)  # (the capture's zero, the last stamp given in it): stamps never go back

    def open(self) -> None:
        raise NotImplementedError

    def read(self, timeout: float) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        """Type on the console (a bootloader's prompt); OSError when it cannot be written."""
        raise OSError(95, f"{self.name} is read-only")

    def unthrottle(self) -> None:
        """Stop emulating a slow line (after the boot's end, to collect the rest quickly)."""

    def arrivals(self, t0: int, t: int, data: bytes) -> list[tuple[int, bytes]]:
        """The bytes of a read at t (ns since the capture's zero t0), cut where lines start,
        each piece with the latest time its first byte can have reached the host.  A line
        that delivers at most one byte per byte_ns (a serial port at its baud) brought the
        i-th of n bytes no later than (n - 1 - i) byte times before the read: a read after a
        delay (a USB adapter's latency timer, a kernel worker kept from the CPU, the reader's
        own wait) then leaves the lines it brought stamped about when they came, not all at
        the read.  Never before the last stamp given in the same capture (each is an upper
        bound, and a later byte is not stamped before an earlier one; a boot's bootloader
        steps and the rest of it are read by several sessions), nor before zero.  Without a
        line speed, the whole read at t."""
        if self.byte_ns is None:
            return [(t, data)]
        zero, floor = self._stamped
        if zero != t0:
            floor = 0
        n = len(data)
        starts = [0]
        i = data.find(b"\n")
        while 0 <= i < n - 1:
            starts.append(i + 1)
            i = data.find(b"\n", i + 1)
        out = []
        for a, b in zip(starts, starts[1:] + [n]):
            floor = max(floor, t - (n - 1 - a) * self.byte_ns)
            out.append((floor, data[a:b]))
        self._stamped = (t0, floor)
        return out

    def relays(self) -> list[tuple[str, int]]:
        """Host threads the console's bytes pass through before the reader, (name, tid),
        once the device is powered: QEMU's main loop moves an emulated UART's bytes."""
        return []

    def watched(self, watch) -> None:
        """The capture's stalls.StallWatch, for a source that can tell when it was kept away."""

    def describe(self) -> dict:
        return {"source": self.name}


class FdSource(Source):
    """A source whose bytes come from a file descriptor (pty, pipe, socket, tty)."""

    fd: int | None = None
    chunk = 4096
    # A terminal reads end-of-file when it is hung up (a USB adapter unplugged, the other
    # side of a pty closed): the device is lost, and may come back.
    eof_is_loss = False

    def read(self, timeout: float, limit: int | None = None) -> bytes:
        if self.fd is None:
            raise SourceLost(f"{self.name} is not open")
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout)
        except (OSError, ValueError) as err:
            raise SourceLost(f"{self.name}: {err}") from None
        if not ready:
            return b""
        try:
            data = os.read(self.fd, limit or self.chunk)
        except BlockingIOError:
            return b""
        except OSError as err:
            # EIO: the other side of a pty closed, or the tty device vanished.
            raise self.lost(err) from None
        if not data:
            if self.eof_is_loss:
                raise SourceLost(f"{self.name}: hung up")
            raise SourceClosed(f"{self.name}: end of stream")
        return data

    # The descriptor typed on: the same one, except for a process (its stdin).
    def _write_fd(self) -> int | None:
        return self.fd

    def write(self, data: bytes, timeout: float = 5.0) -> None:
        fd = self._write_fd()
        if fd is None:
            raise OSError(9, f"{self.name} is not open")
        view = memoryview(data)
        while view:
            _, writable, _ = select.select([], [fd], [], timeout)
            if not writable:
                raise OSError(110, f"{self.name} took nothing for {timeout:g} s")
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue

    def lost(self, err: OSError) -> Exception:
        return SourceLost(f"{self.name}: {err.strerror}")

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
