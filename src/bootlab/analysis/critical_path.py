"""The critical path: what the boot actually waited for.

In the kernel, PID 1 runs the initcalls one after another; other threads run asynchronous
work, and PID 1 waits for it only where it says `async_waiting`.  So the kernel's critical
path is PID 1's initcalls and async waits, in time order, with what ran between them.
In userspace, systemd's critical-chain names the units the default target waited for.
"""

from __future__ import annotations

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
    kernel: list[Step] = field(default_factory=list)
    kernel_track: str | None = None
    userspace: list[Step] = field(default_factory=list)

    def top_kernel(self, n: int = 10) -> list[Step]:
        return sorted(self.kernel, key=lambda s: -s.duration)[:n]


def _main_track(boot: Boot) -> str | None:
    """The thread that ran the most initcall time: PID 1 on every kernel seen so far."""
    totals: dict[str, int] = {}
    for ev in boot.of_kind(Kind.INITCALL):
        if ev.track and ev.dur and not (ev.attrs or {}).get("async"):
            totals[ev.track] = totals.get(ev.track, 0) + ev.dur
    if "pid 1" in totals:
        return "pid 1"
    return max(totals, key=totals.get) if totals else None


def find_critical_path(boot: Boot) -> CriticalPath:
    path = CriticalPath()
    track = _main_track(boot)
    path.kernel_track = track
    if track:
        for ev in boot.events:
            if ev.track != track or ev.kind not in (Kind.INITCALL, Kind.ASYNC_WAIT) or ev.dur is None:
                continue
            if (ev.attrs or {}).get("fixup"):
                continue  # runs inside a driver's initcall: already counted there
            at = boot.at(ev)
            if at is None:
                continue
            path.kernel.append(Step(ev.name, at, ev.dur, ev.kind, ev.where()))
        path.kernel.sort(key=lambda s: s.start)
    chain = [ev for ev in boot.of_kind(Kind.UNIT) if (ev.attrs or {}).get("critical_chain")]
    chain.sort(key=lambda ev: (ev.attrs or {}).get("depth", 0))
    for ev in chain:
        path.userspace.append(Step(ev.name, boot.at_end(ev), ev.dur or 0, ev.kind, ev.where()))
    return path
