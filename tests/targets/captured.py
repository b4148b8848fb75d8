"""Reading a real boot's capture in tests: the console's text as the board printed it (a
phrase may span two timestamped records of the file), and the capture's own events (what
bootlab typed, a failed step) with the console text on either side of them."""

from __future__ import annotations

from pathlib import Path

from bootlab.sources import bootlab_capture


def console(capture: Path) -> bytes:
    return bootlab_capture.console_bytes(capture.read_bytes())


def around(capture: Path, event: bytes) -> tuple[bytes, bytes]:
    """The console's bytes before and after the first event record that starts with `event`."""
    records = capture.read_bytes()
    at = records.index(b" ! " + event)
    start = records.rindex(b"\n", 0, at) + 1
    return bootlab_capture.console_bytes(records[:start]), bootlab_capture.console_bytes(records[start:])
