"""Reading a big plain dmesg fast: a million lines of initcall_debug in a few seconds.

The per-line path (printk.parse) costs a few microseconds a line.  Most lines of a big
kernel log have the kernel's fixed stamp layout (`[%5lu.%06lu] `) and most of those are
`calling` / `initcall ... returned` lines, so here the stamps are read with numpy, the
lines whose message starts like an initcall line are found with numpy too and matched on
their own, and only the other lines go through the general interpreter.  Everything still
happens in file order through the same InitcallReader and Interpreter, so the results are
the same as the per-line path's (tests/test_dmesg_bulk.py compares them).  Logs that do
not fit (not ASCII, control characters, other stamp layouts) are left to the per-line
path.  printk.py imports this module (and numpy) only for a log big enough to be worth it.
"""

from __future__ import annotations

import re

import numpy as np

from ..timeline import NO_TIME, Boot, Clock, ConsoleLog, SlicedText, SourceInfo
from .console import Interpreter, stamp_ns
from .initcall import CALLING_AT_START, RETURNED_AT_START
from .userspace import Patterns

# Only worth its set-up on big logs (printk.py also sends only big files here).
MIN_LINES = 20_000
CHUNK = 65536


def _stamps(arr: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(times in ns or NO_TIME, message offsets) of lines in the "[sssss.uuuuuu] " layout;
    other lines get NO_TIME and are read by a regular expression afterwards."""
    n = len(starts)
    t = np.full(n, NO_TIME, dtype=np.int64)
    fits = np.nonzero(ends - starts >= 15)[0]
    s = starts[fits]
    fits = fits[(arr[s] == ord("[")) & (arr[s + 6] == ord(".")) & (arr[s + 13] == ord("]")) & (arr[s + 14] == ord(" "))]
    s = starts[fits]
    whole = np.zeros(len(fits), dtype=np.int64)
    good = np.ones(len(fits), dtype=bool)
    for k in range(1, 6):  # seconds: digits, padded with spaces on the left
        d = arr[s + k].astype(np.int64)
        digit = (d >= 48) & (d <= 57)
        good &= digit | (d == 32)
        whole = whole * 10 + np.where(digit, d - 48, 0)
    micro = np.zeros(len(fits), dtype=np.int64)
    for k in range(7, 13):
        d = arr[s + k].astype(np.int64)
        good &= (d >= 48) & (d <= 57)
        micro = micro * 10 + (d - 48)
    t[fits[good]] = whole[good] * 1_000_000_000 + micro[good] * 1_000
    offsets = starts + 15
    return t, offsets


def _dirty(arr: np.ndarray) -> bool:
    """Control characters other than tab, LF and a CR before LF: such a log needs the
    per-line cleaning."""
    control = (arr < 32) & (arr != 9) & (arr != 10) & (arr != 13)
    if control.any() or (arr == 127).any():
        return True
    cr = np.flatnonzero(arr == 13)
    if len(cr) == 0:
        return False
    return bool(cr[-1] == len(arr) - 1 or (arr[cr + 1] != 10).any())


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, printk_line: re.Pattern) -> bool:
    """Read a plain dmesg in bulk; False (nothing done) when it does not fit.  Lines out of
    the fixed layout are read with `printk_line`, the per-line path's expression."""
    if not data.isascii():
        return False
    arr = np.frombuffer(data, dtype=np.uint8)
    if _dirty(arr):
        return False
    text = data.decode("ascii")
    ends = np.flatnonzero(arr == 10)
    nbytes_end = ends + 1
    if len(ends) == 0 or ends[-1] != len(arr) - 1:
        ends = np.append(ends, len(arr))
        nbytes_end = np.append(nbytes_end, len(arr))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if len(starts) < MIN_LINES:
        return False
    nbytes = nbytes_end - starts
    ends = ends - (arr[np.maximum(ends - 1, 0)] == 13)  # a CRLF log: the CR is not text
    t, offsets = _stamps(arr, starts, ends)
    if np.count_nonzero(t == NO_TIME) > len(t) // 10:
        return False  # another layout (caller id, wide stamps ...): the per-line path reads it

    # Lines the ready and app-start patterns could match: those holding a pattern's required
    # text (every line when a pattern has none).
    interp = Interpreter(boot, file, patterns, ConsoleLog(file, Clock.PRINTK, printed=False))
    candidates = _candidates(text, starts, interp)
    reader, kernel, user = interp.initcalls, interp.kernel, interp.user
    # Lines whose message starts as an initcall_debug line does (numpy, for all lines at
    # once); such a line must still match the whole expression, or it is read as any other.
    kind = (_starts_with(arr, offsets, ends, b"calling  ") + 2 * _starts_with(arr, offsets, ends, b"initcall "))
    kind[t == NO_TIME] = 0
    call_match, ret_match = CALLING_AT_START.fullmatch, RETURNED_AT_START.fullmatch
    for first in range(0, len(starts), CHUNK):
        # A chunk at a time as Python lists: fast to index, and never a million at once.
        chunk = slice(first, first + CHUNK)
        for i, k, ti, off, end in zip(range(first, first + CHUNK), kind[chunk].tolist(), t[chunk].tolist(),
                                      offsets[chunk].tolist(), ends[chunk].tolist()):
            if k:
                m = (call_match if k == 1 else ret_match)(text, off, end)
                if m is not None:
                    interp.stamp(ti, i + 1)
                    if candidates is None or i in candidates:
                        user.patterns_seen(Clock.PRINTK, ti, text[off:end], i + 1)
                    (reader.call if k == 1 else reader.returned)(ti, i + 1, *m.groups())
                    continue
            if ti != NO_TIME:
                kernel(ti, text[off:end], i + 1)
                continue
            line = text[starts[i]:end]
            m = printk_line.match(line)
            if m is None:
                if line.strip():
                    interp.text(None, None, line, i + 1)
                continue
            ti = t[i] = stamp_ns(m)
            kernel(ti, line[m.end():], i + 1)
    interp.close()
    boot.logs.append(ConsoleLog.from_columns(file, Clock.PRINTK, False, t, SlicedText(text, starts, ends),
                                             np.arange(1, len(starts) + 1), nbytes))
    boot.sources.append(SourceInfo(file, "dmesg", len(starts), 0))
    return True


def _starts_with(arr: np.ndarray, offsets: np.ndarray, ends: np.ndarray, prefix: bytes) -> np.ndarray:
    """Per line, 1 where the text from its offset starts with `prefix`, else 0."""
    hit = ends - offsets >= len(prefix)
    at = offsets[hit]
    sub = np.ones(len(at), dtype=bool)
    for k, b in enumerate(prefix):
        sub &= arr[at + k] == b
    out = np.zeros(len(offsets), dtype=np.int8)
    out[np.flatnonzero(hit)[sub]] = 1
    return out


def _candidates(text: str, starts: np.ndarray, interp: Interpreter) -> set[int] | None:
    hints = [hint for hint, _rank, _p in interp.user.ready] + [hint for hint, _p in interp.user.app_start]
    if any(h is None for h in hints):
        return None
    lines: set[int] = set()
    for hint in hints:
        at = text.find(hint)
        while at >= 0:
            lines.add(int(np.searchsorted(starts, at, side="right")) - 1)
            at = text.find(hint, at + 1)
    return lines
