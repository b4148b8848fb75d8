"""A pseudo-terminal (e.g. QEMU's `-serial pty`, or a board behind a pty bridge)."""

from __future__ import annotations

import os
import termios
import tty

from .source import FdSource, SourceLost


class PtySource(FdSource):
    eof_is_loss = True

    def __init__(self, path: str):
        self.path = path
        self.name = f"pty:{path}"

    def open(self) -> None:
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as err:
            raise SourceLost(f"cannot open {self.path}: {err.strerror}") from None
        try:
            tty.setraw(self.fd)  # bytes exactly as sent: no echo, no CR/LF translation
        except termios.error:
            pass  # not a terminal (a FIFO): read it as it is

    def describe(self) -> dict:
        return {"source": "pty", "device": self.path}
