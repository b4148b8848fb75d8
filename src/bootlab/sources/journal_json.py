"""The systemd journal as JSON: `journalctl -b -o json` (one entry a line) or `-o json-pretty`.

    {"_TRANSPORT":"kernel","_SOURCE_MONOTONIC_TIMESTAMP":"1234567","MESSAGE":"...", ...}
    {"SYSLOG_IDENTIFIER":"systemd","_PID":"1","__MONOTONIC_TIMESTAMP":"5123456",
     "MESSAGE":"Started foo.service - Foo.", "_BOOT_ID":"b0c7...", ...}

A kernel entry's `_SOURCE_MONOTONIC_TIMESTAMP` is its printk time (microseconds); other
entries are placed by `__MONOTONIC_TIMESTAMP`, the clock the journal stamps them with,
which also counts from boot (as journalctl -o short-monotonic shows them).  A MESSAGE
that is not valid UTF-8 comes as a list of bytes.  A journal of several boots is read for
its last one (journalctl's -b) unless another is asked for, with a warning.
"""

from __future__ import annotations

import json

from ..timeline import Boot, Clock, ConsoleLog, SourceInfo
from .console import Interpreter
from .lines import clean
from .multiboot import choose, say_which
from .printk import journal_entry
from .userspace import Patterns

FORMAT = "journal-json"
_KEYS = ('"__MONOTONIC_TIMESTAMP"', '"_SOURCE_MONOTONIC_TIMESTAMP"', '"__CURSOR"')


def sniff(lines: list[str]) -> bool:
    return bool(lines) and lines[0].lstrip().startswith("{") and any(
        key in line for line in lines[:50] for key in _KEYS)


def _entries(text: str):
    """(line number, entry or None when unreadable), for JSON objects one after another."""
    decoder = json.JSONDecoder()
    at, lineno, end = 0, 1, len(text)
    while True:
        start = at
        while at < end and text[at] in " \t\r\n":
            at += 1
        lineno += text.count("\n", start, at)
        if at == end:
            return
        try:
            entry, stop = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):  # not JSON, or nested past what json can read
            stop = text.find("\n", at)
            stop = end if stop < 0 else stop
            entry = None
        yield lineno, entry if isinstance(entry, dict) else None
        lineno += text.count("\n", at, stop)
        at = stop


def _message(value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value).decode("utf-8", errors="replace")
    return None


def _time(entry: dict, kernel: bool) -> int | None:
    """The entry's time in ns: a kernel entry's printk time, else the journal's stamp."""
    for key in ("_SOURCE_MONOTONIC_TIMESTAMP", "__MONOTONIC_TIMESTAMP") if kernel else ("__MONOTONIC_TIMESTAMP",):
        value = entry.get(key)
        if isinstance(value, str) and value.isascii() and value.isdigit():
            return int(value) * 1000
    return None


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, which: int | None = None) -> None:
    """The entries of boot `which` (1-based, negative from the end; None: the last)."""
    read_entries(boot, file, list(_entries(data.decode("utf-8", errors="replace"))), patterns, which, FORMAT)


def read_entries(boot: Boot, file: str, entries: list[tuple[int, dict | None]], patterns: Patterns,
                 which: int | None, fmt: str) -> None:
    """Journal entries however they were saved ((line, fields) each; None: unreadable), of
    boot `which` (1-based, negative from the end; None: the last)."""
    order: dict[str, int] = {}  # boot id -> line of its first entry, in the order they come
    for lineno, e in entries:
        if e is not None and isinstance(e.get("_BOOT_ID"), str):
            order.setdefault(e["_BOOT_ID"], lineno)
    ids = list(order)
    chosen = None
    if ids:
        n = len(ids)
        k = choose(n, which)
        chosen = ids[k - 1]
        say_which(boot, file, list(order.values()), k, chosen)
    log = ConsoleLog(file, Clock.PRINTK, printed=False)
    interp = Interpreter(boot, file, patterns, log)
    unreadable, first_bad = 0, 0
    for lineno, entry in entries:
        kernel = entry is not None and entry.get("_TRANSPORT") == "kernel"
        message = _message(entry.get("MESSAGE")) if entry is not None else None
        t = _time(entry, kernel) if entry is not None else None
        if message is None or t is None:
            unreadable += 1
            first_bad = first_bad or lineno
            continue
        if chosen is not None and entry.get("_BOOT_ID", chosen) != chosen:
            continue
        ident = "kernel" if kernel else str(entry.get("SYSLOG_IDENTIFIER") or entry.get("_COMM") or "?")
        pid = entry.get("SYSLOG_PID") or entry.get("_PID")
        for k, line in enumerate(message.split("\n")):
            text = clean(line)
            if k == 0:
                journal_entry(interp, t, ident, pid if isinstance(pid, str) else None, text, lineno)
            log.append(t, text if k or kernel else f"{ident}: {text}", lineno, len(line.encode()) + 1)
    interp.close()
    if unreadable:
        boot.warn(file, first_bad, f"{unreadable} of {len(entries)} entries are not journal entries "
                                   "with a message and a time")
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, fmt, len(entries), 0))
