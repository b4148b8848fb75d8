"""grabserial captures: `-t` (`[2.391972 2.384627] text`) and `-T` (`[11:23:00.123456 0.002] text`).

The first number is the host time of the line's first byte, from grabserial's start (or
from the last line matching `-m`, which resets the base time: the times then restart near
zero and are put back on one clock here, with a warning).  With `-T` the time is the wall
clock; the first line becomes zero.  The console text may itself carry printk stamps,
which link the host clock to the kernel's.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..timeline import NS_PER_S, Boot, Clock, ConsoleLog, Event, Kind, SourceInfo
from .console import Interpreter, Segment
from .lines import clean, seconds_to_ns, split
from .userspace import Patterns

TIMED = re.compile(r"^\[(?P<abs>\d+\.\d{6}) (?P<delta>-?\d+\.\d{6})\] ?")
SYSTIME = re.compile(r"^\[(?P<wall>(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d\.\d{6})(?: (?P<delta>-?\d+\.\d{6}))?\] ?")
INLINE = re.compile(r'^The (?:inlinepat|instantpat): "(?P<pat>.*)" was matched at (?P<t>\d+\.\d+)')

FORMAT = "grabserial"


def sniff(lines: list[str]) -> float:
    if not lines:
        return 0.0
    hits = sum(1 for line in lines if TIMED.match(line) or SYSTIME.match(line))
    return hits / len(lines)


def _wall_ns(text: str) -> int:
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%f", "%H:%M:%S.%f"):
        try:
            when = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if fmt == "%H:%M:%S.%f":
            seconds = when.hour * 3600 + when.minute * 60 + when.second
            return seconds * NS_PER_S + when.microsecond * 1000
        return int(when.timestamp()) * NS_PER_S + when.microsecond * 1000
    raise ValueError(text)


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
            if m:
                wall = _wall_ns(m.group("wall"))
                if wall_zero is None:
                    wall_zero = wall
                    boot.meta.setdefault("host_zero", "first line (grabserial -T wall clock)")
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
