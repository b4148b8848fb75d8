"""The critical path: what the boot actually waited for.

In the kernel, PID 1 runs the initcalls one after another; other threads run asynchronous
work, and PID 1 waits for it only where it says `async_waiting`.  So the kernel's critical
path is PID 1's initcalls and async waits, in time order, with what ran between them; it
is summarised by its total and its longest steps (a million-line log has hundreds of
thousands of them: `--events` lists every one).
In userspace, systemd's critical-chain names the units the default target waited for.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..timeline import Boot, Kind


@dataclass
class Step:
    name: str
    start: int | None  # for a unit in the chain: when it became active
    duration: int
    kind: str
    where: str


@dataclass
class CriticalPath:
    kernel_track: str | None = None
    kernel_steps: int = 0
    kernel_total: int = 0  # time in initcalls and async waits on the path
    kernel_span: int = 0  # from the path's first step to its last one's end
    kernel_top: list[Step] = field(default_factory=list)  # longest first
    userspace: list[Step] = field(default_factory=list)


def _main_track(boot: Boot) -> str | None:
    """PID 1 (which runs the initcalls on every kernel seen so far) if it ran one, else
    the thread that ran the most initcall time."""
    initcalls = boot.of_kind(Kind.INITCALL)
    if any(ev.track == "pid 1" and ev.dur and not (ev.attrs or {}).get("async") for ev in initcalls):
        return "pid 1"
    totals: dict[str, int] = {}
    for ev in initcalls:
        if ev.track and ev.dur and not (ev.attrs or {}).get("async"):
            totals[ev.track] = totals.get(ev.track, 0) + ev.dur
    return max(totals, key=totals.get) if totals else None


def find_critical_path(boot: Boot, top: int = 10) -> CriticalPath:
    path = CriticalPath(kernel_track=_main_track(boot))
    if path.kernel_track:
        track, kinds = path.kernel_track, (Kind.INITCALL, Kind.ASYNC_WAIT)
        on_path = [ev for ev in boot.events
                   if ev.track == track and ev.kind in kinds and ev.dur is not None and ev.t is not None
                   and not (ev.attrs or {}).get("fixup")]  # a fixup runs inside a driver's initcall
        path.kernel_steps = len(on_path)
        path.kernel_total = sum(ev.dur for ev in on_path)
        # First start and last end per clock, then on the reference clock (an event on a
        # clock that could not be placed has no say).
        by_clock: dict[str, list] = {}
        for ev in on_path:
            by_clock.setdefault(ev.clock, []).append(ev)
        placed = [(boot.to_ref(c, min(ev.t for ev in evs)), boot.to_ref(c, max(ev.t + ev.dur for ev in evs)))
                  for c, evs in by_clock.items() if c in boot.clocks]
        if placed:
            path.kernel_span = max(hi for _, hi in placed) - min(lo for lo, _ in placed)
        path.kernel_top = [Step(ev.name, boot.at(ev), ev.dur, ev.kind, ev.where())
                           for ev in heapq.nlargest(top, on_path, key=lambda ev: ev.dur)]
    chain = [ev for ev in boot.of_kind(Kind.UNIT) if (ev.attrs or {}).get("critical_chain")]
    chain.sort(key=lambda ev: (ev.attrs or {}).get("depth", 0))
    for ev in chain:
        path.userspace.append(Step(ev.name, boot.at_end(ev), ev.dur or 0, ev.kind, ev.where()))
    return path
