"""The one error a reader raises: the input cannot be read (exit 2, naming file and line)."""

from __future__ import annotations


class NotALog(Exception):
    """The input cannot be read as any boot log."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")
        self.file = file
        self.line = line
