"""Blame: the slowest initcalls, driver probes, units and processes, like
`systemd-analyze blame` but for every part of the boot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..timeline import NO_TIME, Boot, Kind, SpanTable


@dataclass
class Blamed:
    name: str
    duration: int
    start: int | None  # reference clock, None when only the duration is known
    where: str
    detail: str = ""


def _detail(attrs: dict | None, kind: str, track: str | None) -> str:
    attrs = attrs or {}
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
    if track and kind == Kind.PROCESS:
        parts.append(track)
    return " ".join(parts)


def _blamed(boot: Boot, spans: SpanTable, rows) -> list[Blamed]:
    """Rows of a table as blame entries (made from the columns: there may be thousands)."""
    rows = np.asarray(rows, dtype=np.int64)
    v = spans.vocab
    offsets = [boot.clocks[c].offset if c in boot.clocks else None for c in v["clock"]]
    details: dict[tuple, str] = {}  # attributes are shared by many spans: each set is described once
    out = []
    for name, dur, t, clock, file, line, kind, track, attrs in zip(
            spans.name[rows].tolist(), spans.dur[rows].tolist(), spans.t[rows].tolist(), spans.clock[rows].tolist(),
            spans.file[rows].tolist(), spans.line[rows].tolist(), spans.kind[rows].tolist(),
            spans.track[rows].tolist(), spans.attrs[rows].tolist()):
        key = (attrs, kind, track)
        detail = details.get(key)
        if detail is None:
            detail = details[key] = _detail(v["attrs"][attrs], v["kind"][kind], v["track"][track])
        offset = offsets[clock]
        where = f"{v['file'][file]}:{line}" if v["file"][file] else "?"
        out.append(Blamed(v["name"][name], 0 if dur == NO_TIME else dur,
                          None if t == NO_TIME or offset is None else t + offset, where, detail))
    return out


def identities(spans: SpanTable, rows) -> tuple[np.ndarray, list[str]]:
    """Per row, which function it is, as an id, and each id's label: a name and its module
    (`__cfi_check [a]` and `__cfi_check [b]` are two functions of two modules)."""
    modules: dict[str | None, int] = {None: 0}
    module_of_set = np.asarray([modules.setdefault(m, len(modules)) for m in spans.attr_column("module")],
                               dtype=np.int64)
    pair = spans.name[rows].astype(np.int64) * len(modules) + module_of_set[spans.attrs[rows]]
    pairs, key = np.unique(pair, return_inverse=True)
    names, module_names = spans.vocab["name"], list(modules)
    labels = [names[p // len(modules)] + (f" [{module_names[p % len(modules)]}]" if p % len(modules) else "")
              for p in pairs.tolist()]
    return key.reshape(-1), labels


def top(boot: Boot, kind: str, n: int | None = 10) -> list[Blamed]:
    """The n longest spans of one kind (all with None); a function seen twice keeps its
    longest (the first of equals with a known start)."""
    spans = boot.columns(kind)
    if spans is None:
        return []
    rows = np.flatnonzero(spans.dur != NO_TIME)
    key = identities(spans, rows)[0]
    if kind == Kind.PROCESS:
        key = key * (len(spans.vocab["track"]) + 1) + spans.track[rows]
    # Per key, the longest; of equals, a timed one, then the first.
    best = rows[np.lexsort((rows, spans.t[rows] == NO_TIME, -spans.dur[rows], key))]
    best_key = key[np.searchsorted(rows, best)]
    first = np.ones(len(best), dtype=bool)
    first[1:] = best_key[1:] != best_key[:-1]
    best = np.sort(best[first])  # in file order: equals rank as they came
    names = spans.vocab["name"]
    ranked = sorted(best.tolist(), key=lambda i: (-int(spans.dur[i]), names[spans.name[i]]))[:n]
    return _blamed(boot, spans, ranked)


def level_totals(boot: Boot) -> list[tuple[str, int, int]]:
    """(initcall level, total time, count), in boot order."""
    spans = boot.columns(Kind.INITCALL)
    if spans is None:
        return []
    rows = np.flatnonzero((spans.dur != NO_TIME) & ~spans.flagged("fixup"))
    levels = spans.attr_column("level", "unknown")
    level_of = np.unique(np.asarray(levels, dtype=object), return_inverse=True)
    names, per_set = level_of[0].tolist(), level_of[1]
    level = per_set[spans.attrs[rows]]
    totals = np.bincount(level, minlength=len(names))
    time = np.zeros(len(names), dtype=np.int64)
    np.add.at(time, level, spans.dur[rows])
    seen = np.full(len(names), len(rows), dtype=np.int64)
    np.minimum.at(seen, level, np.arange(len(rows)))
    order = [k for k in np.argsort(seen, kind="stable").tolist() if totals[k]]
    return [(names[k], int(time[k]), int(totals[k])) for k in order]


def failures(boot: Boot) -> list[Blamed]:
    """Initcalls and probes that returned an error (absent hardware, deferred probes)."""
    spans = boot.columns(Kind.INITCALL, Kind.PROBE)
    if spans is None:
        return []
    failed = spans.where("attrs", lambda a: (a or {}).get("ret") not in (None, 0))
    return _blamed(boot, spans, np.flatnonzero(failed).tolist())
