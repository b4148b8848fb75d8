"""Writing a capture as it arrives: bootlab's native format, or grabserial's.

Both stamp a line with the arrival time of its first byte.  The native writer keeps every
byte (see sources/bootlab_capture.py for the format) and writes each chunk the moment it
is read, so a crash or a kill loses nothing already read.  The grabserial writer produces
what `grabserial -t` (or `-T`) writes: `[abs delta] ` before each line; unlike grabserial
it keeps bytes that are not valid UTF-8.
"""

from __future__ import annotations

import os
import re
from datetime import datetime

from ..sources import bootlab_capture


class NativeWriter:
    """One record per console line, its bytes appended the moment they are read."""

    PAUSE_NS = 10_000_000  # a pause this long inside a line gets a time mark

    def __init__(self, path: str, meta: dict):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.in_line = False
        self.last = 0
        os.write(self.fd, bootlab_capture.header(meta))

    def chunk(self, t: int, data: bytes) -> None:
        out = bytearray()
        parts = data.split(b"\n")
        for i, part in enumerate(parts):
            ends_line = i < len(parts) - 1
            if not part and not ends_line:
                break  # the chunk ended with its LF
            if not self.in_line:
                out += bootlab_capture.format_time(t).encode() + b" | "
                self.in_line = True
            elif i == 0 and t - self.last > self.PAUSE_NS:
                out += bootlab_capture.time_mark(t)
            out += bootlab_capture.escape(part)
            if ends_line:
                out += b"\n"
                self.in_line = False
        self.last = t
        os.write(self.fd, out)

    def event(self, t: int, text: str) -> None:
        out = bootlab_capture.CONTINUES + b"\n" if self.in_line else b""
        self.in_line = False
        os.write(self.fd, out + bootlab_capture.record(t, "!", text.encode()))

    def inline(self, t: int, pattern: str) -> None:
        self.event(t, f"inline {pattern}")

    def close(self) -> None:
        if self.fd is not None:
            if self.in_line:
                os.write(self.fd, bootlab_capture.CONTINUES + b"\n")
            os.fsync(self.fd)
            os.close(self.fd)
            self.fd = None


class GrabserialWriter:
    """grabserial's -t / -T output, byte for byte, plus the bytes it would drop."""

    def __init__(self, out, systime: bool = False, match: str | None = None, crtonewline: bool = False,
                 time_format: str = "%H:%M:%S.%f"):
        self.out = out  # a binary file object
        self.systime = systime
        self.match = re.compile(match.encode()) if match else None
        self.crtonewline = crtonewline
        self.time_format = time_format
        self.newline = True
        self.base: int | None = None
        self.previous = 0.0
        self.line_start = 0
        self.line = bytearray()

    def chunk(self, t: int, data: bytes) -> None:
        if self.crtonewline:
            data = data.replace(b"\r", b"\n")
        else:
            data = data.replace(b"\r", b"")
        out = bytearray()
        for i in range(len(data)):
            byte = data[i:i + 1]
            if self.base is None:
                self.base = t
            if self.newline:
                self.line_start = t
                elapsed = (t - self.base) / 1e9
                if self.systime:
                    out += b"[%s %2.6f] " % (datetime.now().strftime(self.time_format).encode(), elapsed - self.previous)
                else:
                    out += b"[%4.6f %2.6f] " % (elapsed, elapsed - self.previous)
                self.previous = elapsed
                self.newline = False
            out += byte
            self.line += byte
            if byte == b"\n":
                self.newline = True
                if self.match and self.match.match(bytes(self.line)):
                    self.base = self.line_start  # -m: times restart at the matching line
                    self.previous = 0.0
                self.line.clear()
        self.out.write(bytes(out))
        self.out.flush()

    def event(self, t: int, text: str) -> None:
        pass  # grabserial's format has no place for capture events

    def inline(self, t: int, pattern: str) -> None:
        base = self.base or 0
        self.out.write(b'\nThe inlinepat: "%s" was matched at %4.6f\n' % (pattern.encode(), (t - base) / 1e9))

    def close(self) -> None:
        self.out.flush()
