"""A raw TCP console (ser2net, a terminal server, QEMU's -serial tcp:)."""

from __future__ import annotations

import socket

from .source import FdSource, SourceLost


class TcpSource(FdSource):
    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.name = f"tcp:{host}:{port}"
        self.sock: socket.socket | None = None

    def open(self) -> None:
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=5)
        except OSError as err:
            raise SourceLost(f"cannot connect to {self.host}:{self.port}: {err}") from None
        self.sock.setblocking(False)
        self.fd = self.sock.fileno()

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.fd = None

    def describe(self) -> dict:
        return {"source": "tcp", "host": self.host, "port": self.port}
