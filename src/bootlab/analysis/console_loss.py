"""Bytes the console lost: each kernel line of a console capture against the same record in
the kernel log printed after it (the reference device's init prints `dmesg` after ready,
between DMESG_DUMP_BEGIN and DMESG_DUMP_END).

A UART drops characters when its reader stalls: the kernel's console driver waits about
10 ms for the transmitter, then writes over it.  What is lost is gone from the console
capture only: the ring buffer keeps every byte.  So a console line that is not in the
kernel log but is what remains of one of its records once some bytes are taken out (a
subsequence of it) is a damaged line, and the difference in length is the bytes lost.  The
printed log goes through the same console, so it can be the damaged one: the shorter of
the two is what lost bytes.

A program that logs a line to the kernel and also writes it to the console itself (the
reference application's ready line, bootlab's markers) puts it there twice: the kernel's
copy with its stamp, and its own without (only its own when the console's log level
filters the kernel's, as `quiet` does); its own is not a record that lost its stamp.

The console prints a subset of the records (its log level filters some) in the ring
buffer's order, so records are looked for from the last one matched onwards.  Console
lines printed before the oldest record still in the ring buffer cannot be checked.

A console with no kernel log printed after it (a board's own boot, a device whose init does
not print one) is checked by the shape of its kernel lines instead, which shows part of the
damage: every record starts with a printk stamp of a fixed shape (`[%5lu.%06lu] `), so what
is left of one that lost bytes (`[    0.000000inux version`, `[    .067232] clocksource`)
is damage, and so is a kernel line holding a second record's stamp: the console reaches a
record only after the one before it has gone out whole with its newline, so the newline
was lost.  Bytes lost inside a record's text leave no such trace: the shape check gives a
lower bound, and says so.  Only lines between the console's first and last kernel line are
looked at (a bootloader's own stamps, `[   0.114] DDR type`, come before the kernel's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..sources.bootlab_capture import stalled_ns
from ..sources.console import (DMESG_DUMP_BEGIN, DMESG_DUMP_END, OTHER_CPU_FIRMWARE, PRINTK_AT_START, PRINTK_INSIDE,
                               stamp_ns)
from ..timeline import Boot, ConsoleLog, Kind

WINDOW = 200  # ring-buffer records looked at past the last match (lines the console did not print)
ENDS = 12  # a damaged line keeps its start or its end: a cheap test before the full one
STALL = "capture.stalled"
# A stall explains a damaged line that started this long after the stall ended (the guest
# gave up on the byte then; the bytes queued before it drain first) or this long before it
# began (a long line's tail: 200 bytes at 115200 baud).
STALL_AFTER, STALL_BEFORE = 20_000_000, 20_000_000
# What is left at a line's start of a printk stamp that lost bytes: brackets, blanks, digits
# and a dot, opened by its "[" or closed by its "]" (the dot is checked apart).
STAMP_DEBRIS = re.compile(r"(?:\[[\s\d.]*\d[\s\d.\]]*|[\s\d.]*\d[\s\d.]*\])")
STAMP_WIDTH = len("[    0.000000] ")  # printk's "[%5lu.%06lu] " for a boot shorter than 27 hours
# What a stamp keeps of its 14 characters when it loses a few, and not a program's own
# bracketed numbers in the kernel's lines (a progress count: `[12.5%]`, `[   12.5%] Loading`).
MIN_DEBRIS = 8
KERNEL_LOG, LINE_SHAPES = "kernel log", "line shapes"  # what a console was checked against


@dataclass
class Damage:
    line: int  # the damaged line's number in the capture (the console's, or the printed log's)
    lost: int  # bytes missing (at least, for a line found by its shape)
    shorter: str
    longer: str | None  # the line as the kernel log has it; None for a line found by its shape
    host_stall: str | None = None  # the reader's stall the damaged line arrived in, as recorded
    shape: str | None = None  # what shows the damage when there was no kernel log to compare with


@dataclass
class ConsoleLoss:
    """What comparing the console with the kernel log found."""

    source: str
    against: str = KERNEL_LOG  # or LINE_SHAPES: lost_bytes is then a lower bound
    checked: int = 0  # console lines found in the kernel log (or kernel lines looked at), intact or damaged
    damaged: list[Damage] = field(default_factory=list)
    unchecked: int = 0  # kernel lines older than the kernel log's oldest record

    @property
    def lost_bytes(self) -> int:
        return sum(d.lost for d in self.damaged)

    @property
    def host_stalled(self) -> int:
        """Damaged lines that arrived while the host kept the console waiting."""
        return sum(1 for d in self.damaged if d.host_stall)


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)


def _damaged(a: str, b: str) -> bool:
    """Whether one of two different lines is the other with some bytes taken out."""
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) == len(long) or 2 * len(short) < len(long) or len(short) < ENDS:
        return False
    if short[:ENDS] != long[:ENDS] and short[-ENDS:] != long[-ENDS:]:
        return False
    return _is_subsequence(short, long)


def _compare(text: str, records: list[str], k: int) -> tuple[bool, int, int] | None:
    """Whether a console line is record k damaged (or two records run together: the newline
    between them lost), or record k is the console line damaged: (the console lost the bytes,
    how many, records taken), or None.  A kernel message printed while the log was being
    printed after ready goes out between a record's text and its newline: that line of the
    log holds both, and the console lost nothing (0 bytes; `... kernel.yama.*[    3.368551]
    tsc: Refined TSC ...`)."""
    record = records[k]
    if record.startswith(text) and PRINTK_AT_START.match(record[len(text):]):
        return True, 0, 1
    if len(text) < len(record):
        return (True, len(record) - len(text), 1) if _damaged(text, record) else None
    if k + 1 < len(records):
        joined = record + records[k + 1]
        if _damaged(text, joined):
            return True, len(joined) + 1 - len(text), 2
    return (False, len(text) - len(record), 1) if _damaged(text, record) else None


def _split(log: ConsoleLog) -> tuple[list[int], list[int]] | None:
    """Indexes of the console's lines and of the printed kernel log's, or None."""
    begin = end = None
    for i, text in enumerate(log.text):
        if begin is None and text.startswith(DMESG_DUMP_BEGIN):
            begin = i
        elif begin is not None and text.startswith(DMESG_DUMP_END):
            end = i
            break
    if begin is None or end is None:
        return None
    return list(range(begin)), list(range(begin + 1, end))


def stall_explaining(stalls: list[tuple[int, int, str]], t: int | None) -> str | None:
    """The recorded stall that explains a damaged line arriving at t."""
    if t is None:
        return None
    return next((text for start, end, text in stalls
                 if start - STALL_BEFORE <= t <= end + STALL_AFTER), None)


def stalls(boot: Boot) -> list[tuple[int, int, str]]:
    """The recorded stalls: (start, end, what it said), host times."""
    out = []
    for ev in boot.objects:  # markers are never in the span tables (boot.events would make those objects)
        if ev.kind == Kind.MARKER and ev.name == STALL and ev.t is not None:
            detail = ev.attrs.get("detail", "")
            away = stalled_ns(detail)
            if away is not None:
                out.append((ev.t, ev.t + away, detail))
    return out


BROKEN_STAMP = "starts with a broken printk stamp"
TWO_RECORDS = "holds a second kernel record (the newline before it lost)"


def _misshapen(text: str, stamp: re.Match | None) -> tuple[str, int] | None:
    """What shows that a kernel-section line lost bytes, and at least how many, or None
    (`stamp`: its printk stamp, matched by the caller)."""
    if stamp:
        return (TWO_RECORDS, 1) if PRINTK_INSIDE.search(text, stamp.end()) else None
    debris = STAMP_DEBRIS.match(text)
    if (debris and "." in debris.group() and len(debris.group()) >= MIN_DEBRIS
            and not text.startswith("%", debris.end())):
        return BROKEN_STAMP, max(1, STAMP_WIDTH - len(debris.group()))
    return None


def _by_shape(log: ConsoleLog, host_stalls: list[tuple[int, int, str]]) -> ConsoleLoss | None:
    """The kernel lines of a console without a kernel log to compare with, checked by their
    shape, in one pass; None when it has no kernel lines."""
    kernel = 0
    first = last = None  # the first and last kernel line
    found: list[tuple[int, str, int]] = []
    for i, text in enumerate(log.text):
        stamp = PRINTK_AT_START.match(text)
        if stamp and OTHER_CPU_FIRMWARE.match(text, stamp.end()):
            continue  # another processor's firmware, stamped like the kernel: not a kernel line
        if stamp:
            kernel += 1
            first = i if first is None else first
            last = i
        if (damage := _misshapen(text, stamp)) is not None:
            found.append((i, *damage))
    if first is None:
        return None
    result = ConsoleLoss(log.file, against=LINE_SHAPES, checked=kernel)
    for i, shape, lost in found:
        if first <= i <= last:
            if shape == BROKEN_STAMP:
                result.checked += 1  # a kernel line too, whose stamp was damaged
            result.damaged.append(Damage(log.lineno[i], lost, log.text[i], None,
                                         stall_explaining(host_stalls, log.t[i]), shape))
    return result


def console_loss(log: ConsoleLog, host_stalls: list[tuple[int, int, str]] = ()) -> ConsoleLoss | None:
    """Compare a console capture with the kernel log it printed, or, when it printed none,
    check its kernel lines' shapes; None for a log that is not a console's or has no kernel
    lines.  `host_stalls`: the reader's stalls (see stalls()), to name beside the lines they
    explain."""
    if not log.printed:
        return None
    parts = _split(log)
    if parts is None:
        return _by_shape(log, host_stalls)
    console, dump = parts
    records = [log.text[i] for i in dump]
    where: dict[str, list[int]] = {}
    for k, text in enumerate(records):
        where.setdefault(text, []).append(k)
    oldest = next((stamp_ns(m) for m in map(PRINTK_AT_START.match, records) if m), None)
    # what the records say without their stamps: a console line saying the same is the
    # logging program's own copy, not a record that lost exactly its stamp
    own_copies = {text[m.end():] for text in records if (m := PRINTK_AT_START.match(text))}
    result = ConsoleLoss(log.file)
    last = 0  # the record after the last one matched
    for i in console:
        text = log.text[i]
        if not text.strip():
            # Nothing to compare, and an empty record far on must not be taken for it: a
            # banner split by a stall left an empty line that matched the dump's 118th record
            # (two records on one line of the dump), and the 117 lines before went unchecked.
            continue
        exact = [k for k in where.get(text, ()) if k >= last]
        if exact:
            last = exact[0] + 1
            result.checked += 1
            continue
        if text in own_copies:
            continue
        for k in range(last, min(last + WINDOW, len(records))):
            found = _compare(text, records, k)
            if found is not None:
                console_lost, lost, taken = found
                at = i if console_lost else dump[k]
                short, long = (text, records[k]) if console_lost else (records[k], text)
                if lost:
                    result.damaged.append(Damage(log.lineno[at], lost, short, long,
                                                 stall_explaining(host_stalls, log.t[at])))
                result.checked += 1
                last = k + taken
                break
        else:
            m = PRINTK_AT_START.match(text)
            if m and oldest is not None and stamp_ns(m) < oldest:
                result.unchecked += 1
    return result


def warn(boot: Boot, loss: ConsoleLoss) -> None:
    """Each damaged line as a warning on the capture's line."""
    for d in loss.damaged:
        why = f" (while the host kept the console waiting: {d.host_stall})" if d.host_stall else ""
        bytes_lost = f"{'at least ' if d.shape else ''}{d.lost} byte{'s' if d.lost != 1 else ''}"
        what = d.shape if d.shape else f"is {d.longer!r} in the kernel log"
        boot.warn(loss.source, d.line, f"the console lost {bytes_lost}{why}: {d.shorter!r} {what}")
