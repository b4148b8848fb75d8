"""Silent gaps: stretches with no console output longer than a threshold.

A gap is where the boot does something it doesn't talk about: decompressing the kernel,
a driver busy-waiting, a mount, a service starting.  Each gap names the line before and
the line after it, so it can be looked up.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..timeline import Boot, Clock, ConsoleLog

DEFAULT_THRESHOLD_NS = 100_000_000


@dataclass
class Gap:
    start: int
    end: int
    before: str  # "file:line: text"
    after: str

    @property
    def duration(self) -> int:
        return self.end - self.start


def _primary_log(boot: Boot) -> ConsoleLog | None:
    timed = [log for log in boot.logs if log.clock in boot.clocks and any(t is not None for t in log.t)]
    if not timed:
        return None
    printed = [log for log in timed if log.printed]
    return max(printed or timed, key=len)


def _describe(log: ConsoleLog, i: int) -> str:
    return f"{log.file}:{log.lineno[i]}: {log.text[i].strip()[:100]}"


def find_gaps(boot: Boot, threshold: int = DEFAULT_THRESHOLD_NS, limit: int = 20, until: int | None = None) -> list[Gap]:
    """Gaps in the main console log, longest first; none after `until` (the ready time)."""
    log = _primary_log(boot)
    if log is None:
        return []
    offset = boot.clocks[log.clock].offset
    gaps = []
    prev_i = None
    prev_t = None
    for i, t in enumerate(log.t):
        if t is None:
            continue
        if until is not None and prev_t is not None and prev_t + offset >= until:
            break
        if prev_t is not None and t - prev_t > threshold:
            gaps.append(Gap(prev_t + offset, t + offset, _describe(log, prev_i), _describe(log, i)))
        if prev_t is None or t >= prev_t:
            prev_t, prev_i = t, i
    if boot.reference in (Clock.HOST, Clock.BOOTLOADER):
        # The reference clock's zero is power-on: silence before the first line counts too.
        first = next((i for i, t in enumerate(log.t) if t is not None), None)
        if first is not None and log.t[first] + offset > threshold:
            gaps.append(Gap(0, log.t[first] + offset, f"power-on ({boot.reference} clock zero)", _describe(log, first)))
    gaps.sort(key=lambda g: -g.duration)
    return gaps[:limit]
