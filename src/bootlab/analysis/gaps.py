"""Silent gaps: stretches with no console output longer than a threshold.

A gap is where the boot does something it doesn't talk about: decompressing the kernel,
a driver busy-waiting, a mount, a service starting.  Each gap names the line before and
the line after it, so it can be looked up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..timeline import NO_TIME, Boot, Clock, ConsoleLog

DEFAULT_THRESHOLD_NS = 100_000_000
# Logs whose programs' lines carry only a wall clock (to the second), not placed on the boot's.
WALL_CLOCK_FORMATS = ("journal-short", "syslog")


@dataclass
class Gap:
    start: int
    end: int
    before: str  # "file:line: text"
    after: str
    cause: str = ""  # what filled it when that is known not to be silence (a console printing)

    @property
    def duration(self) -> int:
        return self.end - self.start


def _primary_log(boot: Boot) -> ConsoleLog | None:
    timed = [log for log in boot.logs if log.clock in boot.clocks and log.timed()]
    if not timed:
        return None
    printed = [log for log in timed if log.printed]
    return max(printed or timed, key=len)


def _describe(log: ConsoleLog, i: int) -> str:
    return f"{log.file}:{log.lineno[i]}: {log.text[i].strip()[:100]}"


def _untimed_inside(log: ConsoleLog, before: int, after: int) -> str:
    """The lines between two timed ones that carry no time (a console stamped by printk
    alone prints systemd's status lines so): printed somewhere in the gap, so it is not
    known to be silent."""
    inside = [i for i in range(before + 1, after) if log.text[i].strip()]
    if not inside:
        return ""
    where = f"{log.lineno[inside[0]]}" + (f"-{log.lineno[inside[-1]]}" if len(inside) > 1 else "")
    return (f"{len(inside)} line{'s' if len(inside) > 1 else ''} without a time of {'their' if len(inside) > 1 else 'its'} "
            f"own printed in it ({log.file}:{where}), the first: {log.text[inside[0]].strip()[:80]}")


def unplaced(boot: Boot, gaps: list[Gap]) -> str:
    """When the gaps are one log's and another log of the boot holds lines with no time
    that places them (a wall-clock journal's programs, a syslog's): they may fall in the
    gaps, which are then silent in the first log only."""
    primary = _primary_log(boot)
    if not gaps or primary is None:
        return ""
    walls = {src.file for src in boot.sources if src.format in WALL_CLOCK_FORMATS}
    others = [(log.file, int(np.count_nonzero(log.t.numpy() == NO_TIME)))
              for log in boot.logs if log is not primary and log.file in walls]
    others = [(file, n) for file, n in others if n]
    if not others:
        return ""
    return (f"the silent gaps are {primary.file}'s: " + ", ".join(f"{file}'s {n} lines" for file, n in others)
            + " carry no time that places them (a wall clock to the second, or none) and may fall in them")


def find_gaps(boot: Boot, threshold: int = DEFAULT_THRESHOLD_NS, limit: int = 20, until: int | None = None) -> list[Gap]:
    """Gaps in the main console log, longest first; none after `until` (the ready time)."""
    log = _primary_log(boot)
    if log is None:
        return []
    to_ref = boot.clocks[log.clock].map.many
    t = log.t.numpy()
    index = np.nonzero(t != NO_TIME)[0]
    times = to_ref(t[index])  # the map is monotone: running maxima stay maxima
    gaps = []
    if len(times) > 1:
        # A line earlier than the latest one before it (printk stamps can go back) does not
        # end a gap: each line is compared with the running maximum, and the line that set
        # it is the gap's "before".
        latest = np.maximum.accumulate(times)
        setter = np.maximum.accumulate(np.where(times == latest, np.arange(len(times)), 0))
        width = times[1:] - latest[:-1]
        wide = np.nonzero(width > threshold)[0]
        if until is not None:
            wide = wide[latest[wide] < until]
        for k in wide[np.argsort(-width[wide], kind="stable")][:limit]:
            gaps.append(Gap(int(latest[k]), int(times[k + 1]),
                            _describe(log, int(index[setter[k]])), _describe(log, int(index[k + 1])),
                            _untimed_inside(log, int(index[k]), int(index[k + 1]))))
    if boot.reference in (Clock.HOST, Clock.BOOTLOADER):
        # The reference clock's zero is power-on: silence before the first line counts too.
        # Lines before the first timed one (a bootloader's, on a clock of its own or on none)
        # are output the log holds no times for, not silence.
        first = int(index[0]) if len(index) else None
        if first is not None and times[0] > threshold and not any(text.strip() for text in log.text[:first]):
            gaps.append(Gap(0, int(times[0]), f"power-on ({boot.reference} clock zero)", _describe(log, first)))
    gaps.sort(key=lambda g: -g.duration)
    return gaps[:limit]
