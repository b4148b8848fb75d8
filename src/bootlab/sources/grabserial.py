"""grabserial captures: `-t` (`[2.391972 2.384627] text`) and `-T` (`[11:23:00.123456 0.002] text`),
and consoles a terminal program stamped with the host's wall clock to the millisecond or
finer (`[2023-06-16 12:05:50.699]`, `[2023/06/16-12:05:50:699]`, `[12:05:50.699]`) or to the
second (`[2022-08-15 10:36:02]`).

The first number is the host time of the line's first byte, from grabserial's start (or
from the last line matching `-m`, which resets the base time: the times then restart near
zero and are put back on one clock here, with a warning).  With a wall clock the first
line becomes zero.  The console text may itself carry printk stamps, which link the host
clock to the kernel's.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..timeline import HOST_RESOLUTION, NS_PER_S, Boot, Clock, ConsoleLog, Event, Kind, SourceInfo
from .console import Interpreter, Segment
from .lines import clean, seconds_to_ns, split
from .userspace import Patterns

TIMED = re.compile(r"^\[(?P<abs>\d+\.\d{6}) (?P<delta>-?\d+\.\d{6})\] ?")
# A wall clock with a date or without; the fraction after ".", "," or (some terminal
# loggers) ":", milliseconds or finer.  Without a fraction (moreutils' `ts "[%F %T]"`) a
# stamp says only that the line had come by the end of its second: it is read so, with a
# warning (the steps of a boot that takes seconds still show, to a second).
SYSTIME = re.compile(r"^\[(?:(?P<date>\d{4}[-/]\d\d[-/]\d\d)[ T-])?(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)"
                     r"(?:[.,:](?P<frac>\d{3,9}))?(?: (?P<delta>-?\d+\.\d{6}))?\] ?")
TO_THE_SECOND = ("host stamps to the second: a line is placed at the end of its second, when it had come by "
                 "(printk stamps time the kernel within it); stamp the console to the millisecond "
                 "(`bootlab capture`, `grabserial -t`, `ts \"%.T\"`) to time the boot's steps")
INLINE = re.compile(r'^The (?:inlinepat|instantpat): "(?P<pat>.*)" was matched at (?P<t>\d+\.\d+)')

FORMAT = "grabserial"


def sniff(lines: list[str]) -> float:
    if not lines:
        return 0.0
    hits = sum(1 for line in lines if TIMED.match(line) or SYSTIME.match(line))
    return hits / len(lines)


def _wall_ns(m: re.Match) -> int:
    """A SYSTIME stamp in ns: since the epoch (in the host's zone) with a date, since
    midnight without; ValueError for an impossible date or time."""
    h, mi, sec = int(m.group("h")), int(m.group("m")), int(m.group("s"))
    if h > 23 or mi > 59 or sec > 60:
        raise ValueError(m.group(0))
    frac = int(m.group("frac").ljust(9, "0")) if m.group("frac") else NS_PER_S  # (the end of its second)
    if m.group("date") is None:
        return (h * 3600 + mi * 60 + sec) * NS_PER_S + frac
    day = datetime.strptime(m.group("date").replace("/", "-"), "%Y-%m-%d")
    return int(day.replace(hour=h, minute=mi, second=min(sec, 59)).timestamp()) * NS_PER_S + frac


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    log = ConsoleLog(file, Clock.HOST, printed=True)
    interp = Interpreter(boot, file, patterns, log)
    base = 0  # added to times after a -m reset
    previous: int | None = None
    wall_zero: int | None = None
    n = 0
    for line in split(data):
        n += 1
        raw = line.text
        m = TIMED.match(raw)
        if m:
            t = seconds_to_ns(m.group("abs")) + base
            if previous is not None and t < previous:
                # -m matched the previous line: the clock restarted from its start.
                boot.warn(file, line.lineno, "grabserial base time was reset here (-m); "
                          "later times are re-based onto the first clock")
                base = previous
                t = seconds_to_ns(m.group("abs")) + base
        else:
            m = SYSTIME.match(raw)
            try:
                wall = _wall_ns(m) if m else None
            except ValueError:
                boot.warn(file, line.lineno, f"not a time of day: {m.group(0).strip()!r}; the line is read untimed")
                m = wall = None
            if m:
                if wall_zero is None:
                    wall_zero = wall
                    boot.meta.setdefault("host_zero", "first line (host wall clock stamps)")
                    if not m.group("frac"):
                        boot.meta[HOST_RESOLUTION] = NS_PER_S
                        boot.warn(file, line.lineno, TO_THE_SECOND)
                t = wall - wall_zero
                if t < 0:  # the capture ran over midnight
                    t += 86400 * NS_PER_S
            else:
                inline = INLINE.match(clean(raw))
                if inline:
                    boot.add(Event(Kind.MARKER, "grabserial.inline", Clock.HOST, seconds_to_ns(inline.group("t")),
                                   None, file, line.lineno, attrs={"pattern": inline.group("pat")}))
                elif raw.strip():
                    interp.console_line(None, raw, line.lineno, line.nbytes)
                continue
        previous = t
        payload = raw[m.end():]
        interp.console_line([Segment(t, payload)], payload, line.lineno, line.nbytes - m.end())
    interp.close()
    boot.meta.setdefault("host_zero", "grabserial start (first byte received, or -l launch)")
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, n, 0))
