"""A pseudo-terminal (e.g. QEMU's `-serial pty`, or a board behind a pty bridge)."""

from __future__ import annotations

import os
import termios
import tty

from .source import FdSource, SourceClosed, SourceLost


class PtySource(FdSource):
    def __init__(self, path: str):
        self.path = path
        self.name = f"pty:{path}"

    def open(self) -> None:
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as err:
            raise SourceLost(f"cannot open {self.path}: {err.strerror}") from None
        try:
            tty.setraw(self.fd)  # bytes exactly as sent: no echo, no CR/LF translation
        except termios.error:
            pass  # not a terminal (a FIFO): read it as it is

    def lost(self, err: OSError) -> Exception:
        # EIO on a pty slave means the master side closed: the writer is gone.
        return SourceClosed(f"{self.path}: the other side closed") if err.errno == 5 else super().lost(err)

    def describe(self) -> dict:
        return {"source": "pty", "device": self.path}
