"""Blame: the slowest initcalls, driver probes, units and processes, like
`systemd-analyze blame` but for every part of the boot."""

from __future__ import annotations

from dataclasses import dataclass

from ..timeline import Boot, Event, Kind


@dataclass
class Blamed:
    name: str
    duration: int
    start: int | None  # reference clock, None when only the duration is known
    where: str
    detail: str = ""


def _detail(ev: Event) -> str:
    attrs = ev.attrs or {}
    parts = []
    if "module" in attrs:
        parts.append(f"[{attrs['module']}]")
    if attrs.get("ret") not in (None, 0):
        parts.append(f"returned {attrs['ret']}")
    if attrs.get("unfinished"):
        parts.append("never returned")
    if "async" in attrs:
        parts.append("async")
    if "device" in attrs:
        parts.append(f"for {attrs['device']}")
    if ev.track and ev.kind == Kind.PROCESS:
        parts.append(ev.track)
    return " ".join(parts)


def top(boot: Boot, kind: str, n: int | None = 10) -> list[Blamed]:
    """The n longest spans of one kind (all with None); a name seen twice keeps its longest."""
    best: dict[str, Event] = {}
    for ev in boot.of_kind(kind):
        if ev.dur is None:
            continue
        key = ev.name if kind != Kind.PROCESS else f"{ev.name} {ev.track}"
        old = best.get(key)
        if old is None or ev.dur > old.dur or (ev.dur == old.dur and old.t is None and ev.t is not None):
            best[key] = ev
    ranked = sorted(best.values(), key=lambda ev: (-ev.dur, ev.name))[:n]
    return [Blamed(ev.name, ev.dur, boot.at(ev), ev.where(), _detail(ev)) for ev in ranked]


def level_totals(boot: Boot) -> list[tuple[str, int, int]]:
    """(initcall level, total time, count), in boot order."""
    totals: dict[str, list[int]] = {}
    for ev in boot.of_kind(Kind.INITCALL):
        if ev.dur is None or (ev.attrs or {}).get("fixup"):
            continue
        level = (ev.attrs or {}).get("level", "unknown")
        entry = totals.setdefault(level, [0, 0])
        entry[0] += ev.dur
        entry[1] += 1
    return [(level, t, n) for level, (t, n) in totals.items()]


def failures(boot: Boot) -> list[Blamed]:
    """Initcalls and probes that returned an error (absent hardware, deferred probes)."""
    out = []
    details: dict[int, str] = {}  # attributes are shared by many events: each is described once
    for ev in boot.of_kind(Kind.INITCALL, Kind.PROBE):
        attrs = ev.attrs
        if attrs and attrs.get("ret") not in (None, 0):
            detail = details.get(id(attrs))
            if detail is None:
                detail = details[id(attrs)] = _detail(ev)
            out.append(Blamed(ev.name, ev.dur or 0, boot.at(ev), ev.where(), detail))
    return out
