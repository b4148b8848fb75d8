"""Writing a verb's result to standard output or a file."""

from __future__ import annotations

import os
import sys

from . import UsageError


def write_output(content: str | bytes, path: str | None) -> None:
    """Write atomically (a reader never sees half a report); '-' or None is stdout."""
    if path in (None, "-"):
        if isinstance(content, bytes):
            sys.stdout.buffer.write(content)
        else:
            sys.stdout.write(content)
        return
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(content.encode() if isinstance(content, str) else content)
        os.replace(tmp, path)
    except OSError as err:
        raise UsageError(f"cannot write {path}: {err.strerror}") from None
