"""The critical path: what the boot actually waited for.

In the kernel, PID 1 runs the initcalls one after another; other threads run asynchronous
work, and PID 1 waits for it only where it says `async_waiting`.  So the kernel's critical
path is PID 1's initcalls and async waits, in time order, with what ran between them; it
is summarised by its total and its longest steps (a million-line log has hundreds of
thousands of them: `--events` lists every one).
In userspace, systemd's critical-chain names the units the default target waited for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..timeline import NO_TIME, Boot, Kind, SpanTable


@dataclass
class Step:
    name: str
    start: int | None  # for a unit in the chain: when it became active
    duration: int
    kind: str
    where: str
    upper_bound: bool = False  # the duration is at most this (the oldest initcall form)


@dataclass
class CriticalPath:
    kernel_track: str | None = None
    kernel_steps: int = 0
    kernel_total: int = 0  # time in initcalls and async waits on the path
    kernel_span: int = 0  # from the path's first step to its last one's end
    kernel_top: list[Step] = field(default_factory=list)  # longest first
    userspace: list[Step] = field(default_factory=list)


def _main_track(initcalls: SpanTable | None) -> str | None:
    """PID 1 (which runs the initcalls on every kernel seen so far) if it ran one, else
    the thread that ran the most initcall time.  A module's initcall is not the kernel's:
    userspace ran it (modprobe, udev; on Android init, which is PID 1 by then)."""
    if initcalls is None:
        return None
    tracks = initcalls.vocab["track"]
    rows = np.flatnonzero(~initcalls.flagged("async") & ~initcalls.flagged("module") & (initcalls.dur != NO_TIME)
                          & (initcalls.dur != 0))
    if "pid 1" in tracks and (initcalls.track[rows] == tracks.index("pid 1")).any():
        return "pid 1"
    named = rows[initcalls.where("track", bool)[rows]]
    if not len(named):
        return None
    totals = np.zeros(len(tracks), dtype=np.int64)
    np.add.at(totals, initcalls.track[named], initcalls.dur[named])
    seen = np.full(len(tracks), len(named), dtype=np.int64)  # of equal totals, the first seen
    np.minimum.at(seen, initcalls.track[named], np.arange(len(named)))
    return tracks[int(np.lexsort((seen, -totals))[0])]


def find_critical_path(boot: Boot, top: int = 10) -> CriticalPath:
    path = CriticalPath(kernel_track=_main_track(boot.columns(Kind.INITCALL)))
    spans = boot.columns(Kind.INITCALL, Kind.ASYNC_WAIT) if path.kernel_track else None
    if spans is not None:
        # A fixup runs inside a driver's initcall: not a step of its own; a module's
        # initcall is userspace's.
        track = spans.where("track", lambda t: t == path.kernel_track)
        on = np.flatnonzero(track & ~spans.flagged("fixup") & ~spans.flagged("module") & (spans.dur != NO_TIME)
                            & (spans.t != NO_TIME))
        path.kernel_steps = len(on)
        path.kernel_total = int(spans.dur[on].sum())
        # First start and last end per clock, then on the reference clock (a span on a
        # clock that could not be placed has no say).
        placed = []
        for c, clock in enumerate(spans.vocab["clock"]):
            mine = on[spans.clock[on] == c]
            if len(mine) and clock in boot.clocks:
                placed.append((boot.to_ref(clock, int(spans.t[mine].min())),
                               boot.to_ref(clock, int((spans.t[mine] + spans.dur[mine]).max()))))
        if placed:
            path.kernel_span = max(hi for _, hi in placed) - min(lo for lo, _ in placed)
        longest = on[np.argsort(-spans.dur[on], kind="stable")[:top]]
        path.kernel_top = [Step(ev.name, boot.at(ev), ev.dur, ev.kind, ev.where(),
                                bool((ev.attrs or {}).get("upper_bound"))) for ev in map(spans.event, longest.tolist())]
    chain = [ev for ev in boot.of_kind(Kind.UNIT) if (ev.attrs or {}).get("critical_chain")]
    chain.sort(key=lambda ev: (ev.attrs or {}).get("depth", 0))
    for ev in chain:
        path.userspace.append(Step(ev.name, boot.at_end(ev), ev.dur or 0, ev.kind, ev.where()))
    return path
