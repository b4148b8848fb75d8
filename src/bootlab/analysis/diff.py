"""Two boots side by side: what a change did, phase by phase and initcall by initcall.

The before/after pair every boot-time change starts with (a dmesg before `quiet`, one
after): phases matched by name, initcalls, driver probes and units matched by name (time
summed over every run of the name), those that appear in one boot only, and the console
bytes.  One boot of each says nothing about noise: repeated boots and `bootlab compare`
give intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..timeline import NO_TIME, PHASE_STARTS, Kind
from . import Analysis
from .blame import identities
from .phases import FAILURE


@dataclass
class Change:
    name: str
    before: int | None  # ns; None: not in the first boot
    after: int | None

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass
class Changes:
    """One kind of span (initcall, probe, unit) in both boots."""

    kind: str
    common: int = 0  # names in both boots
    changed: list[Change] = field(default_factory=list)  # in both, largest change first
    only_before: list[Change] = field(default_factory=list)  # longest first
    only_after: list[Change] = field(default_factory=list)
    total_only_before: int = 0
    total_only_after: int = 0


@dataclass
class BootDiff:
    before: Analysis
    after: Analysis
    total: Change
    phases: list[Change]
    spans: list[Changes]
    console_bytes: Change  # bytes, not ns
    console_cost: Change
    notes: list[str] = field(default_factory=list)


def _totals(a: Analysis, kind: str) -> dict[str, int]:
    """Time per function, a name and its module (read from the columns: a big log's
    initcalls stay arrays)."""
    spans = a.boot.columns(kind)
    if spans is None:
        return {}
    rows = np.flatnonzero((spans.dur != NO_TIME) & ~spans.flagged("fixup"))
    key, labels = identities(spans, rows)
    time = np.zeros(len(labels), dtype=np.int64)
    np.add.at(time, key, spans.dur[rows])
    return dict(zip(labels, time.tolist()))


def _changes(kind: str, before: dict[str, int], after: dict[str, int], top: int) -> Changes:
    common = before.keys() & after.keys()
    changed = sorted((Change(n, before[n], after[n]) for n in common), key=lambda c: (-abs(c.delta), c.name))
    only_before = sorted((Change(n, before[n], None) for n in before.keys() - common), key=lambda c: (c.delta, c.name))
    only_after = sorted((Change(n, None, after[n]) for n in after.keys() - common), key=lambda c: (-c.delta, c.name))
    return Changes(kind, len(common), [c for c in changed if c.delta][:top], only_before[:top], only_after[:top],
                   sum(c.before for c in only_before), sum(c.after for c in only_after))


def _phase_order(name: str) -> int:
    first = name.split(" + ")[0]
    return next((k for k, (phase, _mark) in enumerate(PHASE_STARTS) if phase.value == first), len(PHASE_STARTS))


def diff(before: Analysis, after: Analysis, top: int = 10) -> BootDiff:
    phases_a = {s.name: s.duration for s in before.phases.spans}
    phases_b = {s.name: s.duration for s in after.phases.spans}
    names = sorted(phases_a.keys() | phases_b.keys(), key=lambda n: (_phase_order(n), n))
    ca, cb = before.console, after.console
    starts = [a.phases.spans[0].name if a.phases.spans else None for a in (before, after)]
    notes = []
    if starts[0] != starts[1]:
        notes.append(f"the boots are timed from different starts ({starts[0]}, {starts[1]}): compare phase by "
                     "phase, not the totals")
    for which, a in (("first", before), ("second", after)):
        end = a.phases.end
        if end is not None and end.mark == FAILURE:
            notes.append(f"the {which} boot failed ({end.evidence}): its total is to its failure, not to ready")
    return BootDiff(
        before, after,
        Change("total", before.phases.total, after.phases.total),
        [Change(n, phases_a.get(n), phases_b.get(n)) for n in names],
        [_changes(kind, _totals(before, kind), _totals(after, kind), top) for kind in (Kind.INITCALL, Kind.PROBE,
                                                                                      Kind.UNIT)],
        Change("console bytes", ca.bytes if ca else None, cb.bytes if cb else None),
        Change("console time", ca.cost if ca else None, cb.cost if cb else None),
        notes,
    )
