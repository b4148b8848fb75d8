"""The systemd journal's export format: `journalctl -b -o export` (what systemd-journal-remote
and `journalctl --output=export` exchange).

Entries are separated by an empty line; each field is `KEY=value` on a line of its own, or,
when the value is not printable text (a message with a newline in it, binary data), the
key alone on its line, then the value's length as 64 bits little-endian, the value's bytes
and a newline:

    __CURSOR=s=6902e4...;i=1;b=d1e3...
    __MONOTONIC_TIMESTAMP=11257979
    _BOOT_ID=d1e326f13aa74b008b67d6579d661d2a
    _SOURCE_MONOTONIC_TIMESTAMP=0
    _TRANSPORT=kernel
    MESSAGE=Linux version 6.1.0-56-amd64 ...
    <empty line>
    MESSAGE
    <8 bytes: 13 0 0 0 0 0 0 0>two
    lines
    <newline>

The fields are the JSON output's (journal_json.py reads them the same way: a kernel entry
at its printk time, the others at the journal's monotonic stamp, the last boot unless
another is asked for).
"""

from __future__ import annotations

import re

from ..timeline import Boot
from .journal_json import read_entries
from .userspace import Patterns

FORMAT = "journal-export"
_KEY = re.compile(rb"^[A-Z0-9_]+$")
_LENGTH = 8  # a binary field's length: 64 bits, little-endian


def sniff(data: bytes | None) -> float:
    """An export starts with an entry's fields: its cursor, or a timestamp field."""
    if not data:
        return 0.0
    head = data[:4096]
    first = head.split(b"\n", 1)[0]
    if not (first.startswith((b"__CURSOR=", b"__REALTIME_TIMESTAMP=", b"__MONOTONIC_TIMESTAMP="))):
        return 0.0
    return 1.0 if b"\n__MONOTONIC_TIMESTAMP=" in head or first.startswith(b"__MONOTONIC_TIMESTAMP=") else 0.5


def entries(data: bytes):
    """(line of its first field, {key: value} or None when damaged), entry by entry.  A
    damaged entry is skipped to the next empty line: the next entry is read again."""
    at, lineno, end = 0, 1, len(data)
    fields: dict[str, str] | None = {}
    first = 1
    while at < end:
        stop = data.find(b"\n", at)
        stop = end if stop < 0 else stop
        line = data[at:stop]
        if not line:  # the empty line after an entry
            if fields:
                yield first, fields
            elif fields is None:
                yield first, None
            fields, at, lineno = {}, stop + 1, lineno + 1
            first = lineno
            continue
        if fields is None:  # damaged: skip to the entry's end
            at, lineno = stop + 1, lineno + 1
            continue
        key, eq, value = line.partition(b"=")
        if eq and _KEY.match(key):
            fields[key.decode()] = value.decode("utf-8", errors="replace")
            at, lineno = stop + 1, lineno + 1
            continue
        start = stop + 1
        if not _KEY.match(line) or start + _LENGTH > end:
            fields, at, lineno = None, stop + 1, lineno + 1
            continue
        size = int.from_bytes(data[start:start + _LENGTH], "little")
        tail = start + _LENGTH + size
        if tail >= end or data[tail] != 0x0A:  # the value's newline
            fields, at, lineno = None, stop + 1, lineno + 1
            continue
        fields[line.decode()] = data[start + _LENGTH:tail].decode("utf-8", errors="replace")
        lineno += data.count(b"\n", at, tail + 1)
        at = tail + 1
    if fields:
        yield first, fields
    elif fields is None:
        yield first, None


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, which: int | None = None) -> None:
    read_entries(boot, file, list(entries(data)), patterns, which, FORMAT)
