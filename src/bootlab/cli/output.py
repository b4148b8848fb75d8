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
    data = content.encode() if isinstance(content, str) else content
    # A device or a pipe (-o /dev/stdout, a FIFO) is written in place: replacing it would
    # put a plain file where /dev/null was.
    in_place = os.path.exists(path) and not os.path.isfile(path)
    tmp = path if in_place else f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        if not in_place:
            os.replace(tmp, path)
    except OSError as err:
        raise UsageError(f"cannot write {path}: {err.strerror}") from None
