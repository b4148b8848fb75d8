"""Blame: the slowest initcalls, driver probes, units and processes, like
`systemd-analyze blame` but for every part of the boot."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..timeline import NO_TIME, Boot, Kind, SpanTable, ranked

EPROBE_DEFER = 517
# The kernel's own codes (include/linux/errno.h), which the C library's errno does not name.
KERNEL_ERRNO = {512: "ERESTARTSYS", 513: "ERESTARTNOINTR", 514: "ERESTARTNOHAND", 515: "ENOIOCTLCMD",
                516: "ERESTART_RESTARTBLOCK", 517: "EPROBE_DEFER", 518: "EOPENSTALE", 519: "ENOPARAM",
                521: "EBADHANDLE", 522: "ENOTSYNC", 523: "EBADCOOKIE", 524: "ENOTSUPP", 525: "ETOOSMALL",
                526: "ESERVERFAULT", 527: "EBADTYPE", 528: "EJUKEBOX", 529: "EIOCBQUEUED", 530: "ERECALLCONFLICT"}
# What the driver core itself reads as "not this device" (really_probe): absent hardware.
ABSENT = (errno.ENODEV, errno.ENXIO)


class Outcome(StrEnum):
    """What an initcall's or a probe's return code means."""

    OK = "ok"  # 0; a probe's 1 ("bound": older driver cores return 1 when the driver bound)
    DEFERRED = "deferred"  # -517 EPROBE_DEFER (some kernels print 517): retried later, not a failure
    ABSENT = "absent"  # -19 ENODEV, -6 ENXIO: the hardware is not there
    FAILED = "failed"  # any other error


def errno_name(code: int) -> str | None:
    """`ENODEV` for -19 (or 19), `EPROBE_DEFER` for -517; None when the number has no name."""
    return errno.errorcode.get(abs(code)) or KERNEL_ERRNO.get(abs(code))


def described(code: int) -> str:
    """A return code as the kernel's name says it: `-19 ENODEV`, `-517 EPROBE_DEFER`."""
    name = errno_name(code) if code else None
    return f"{code} {name}" if name else str(code)


def outcome(kind: str, code: int | None) -> Outcome:
    """An initcall's positive return is no error (the kernel ignores it: `crash_hotplug_init`
    returns the CPU-hotplug state it got, 64); a probe's is its driver core's: 1 bound,
    19 or 6 the negated "not this device" (really_probe's rejected match), 517 deferred."""
    if code is None or code == 0 or (code > 0 and kind != Kind.PROBE) or (code == 1 and kind == Kind.PROBE):
        return Outcome.OK
    if abs(code) == EPROBE_DEFER:
        return Outcome.DEFERRED
    if abs(code) in ABSENT:
        return Outcome.ABSENT
    return Outcome.FAILED


@dataclass
class Blamed:
    name: str
    duration: int
    start: int | None  # reference clock, None when only the duration is known
    where: str
    detail: str = ""
    ret: int | None = None  # the return code printed, if any
    outcome: Outcome = Outcome.OK
    upper_bound: bool = False  # the duration is at most this (the oldest initcall form)


def _detail(attrs: dict | None, kind: str, track: str | None) -> str:
    attrs = attrs or {}
    parts = []
    if "module" in attrs:
        parts.append(f"[{attrs['module']}]")
    if outcome(kind, attrs.get("ret")) != Outcome.OK:
        parts.append(f"returned {described(attrs['ret'])}")
    if attrs.get("upper_bound"):
        parts.append("upper bound (no return line: until the next call)")
    if attrs.get("timed_by_stamps"):
        parts.append("timed by its lines' stamps (the kernel timed it from another initcall's start)")
    if attrs.get("unfinished"):
        parts.append("never returned")
    if "async" in attrs:
        parts.append("async")
    if "device" in attrs:
        parts.append(f"for {attrs['device']}")
    if track and kind == Kind.PROCESS:
        parts.append(track)
    if kind == Kind.UNIT and attrs.get("status") in UNIT_FAILURES:
        parts.append(UNIT_FAILURES[attrs["status"]])
    return " ".join(parts)


# A unit's status line ([FAILED], [ TIME ], [DEPEND]) or systemd's "Failed to start": the
# time is what it took to fail.
UNIT_FAILURES = {"FAILED": "failed", "TIME": "timed out", "DEPEND": "not started: a dependency failed"}


def _blamed(boot: Boot, spans: SpanTable, rows) -> list[Blamed]:
    """Rows of a table as blame entries (made from the columns: there may be thousands)."""
    rows = np.asarray(rows, dtype=np.int64)
    v = spans.vocab
    maps = [boot.clocks[c].map if c in boot.clocks else None for c in v["clock"]]
    details: dict[tuple, str] = {}  # attributes are shared by many spans: each set is described once
    out = []
    for name, dur, t, clock, file, line, kind, track, attrs in zip(
            spans.name[rows].tolist(), spans.dur[rows].tolist(), spans.t[rows].tolist(), spans.clock[rows].tolist(),
            spans.file[rows].tolist(), spans.line[rows].tolist(), spans.kind[rows].tolist(),
            spans.track[rows].tolist(), spans.attrs[rows].tolist()):
        key = (attrs, kind, track)
        described_set = details.get(key)
        if described_set is None:
            a, k = v["attrs"][attrs] or {}, v["kind"][kind]
            described_set = details[key] = (_detail(a, k, v["track"][track]), a.get("ret"), outcome(k, a.get("ret")),
                                            bool(a.get("upper_bound")))
        to_ref = maps[clock]
        where = f"{v['file'][file]}:{line}" if v["file"][file] else "?"
        out.append(Blamed(v["name"][name], 0 if dur == NO_TIME else dur,
                          None if t == NO_TIME or to_ref is None else to_ref(t), where, *described_set))
    return out


def identities(spans: SpanTable, rows) -> tuple[np.ndarray, list[str]]:
    """Per row, which function it is, as an id, and each id's label: a name and its module
    (`__cfi_check [a]` and `__cfi_check [b]` are two functions of two modules)."""
    modules: dict[str | None, int] = {None: 0}
    module_of_set = np.asarray([modules.setdefault(m, len(modules)) for m in spans.attr_column("module")],
                               dtype=np.int64)
    pair = spans.name[rows].astype(np.int64) * len(modules) + module_of_set[spans.attrs[rows]]
    pairs, key = ranked(pair, len(spans.vocab["name"]) * len(modules))
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
    devices: dict[str | None, int] = {None: 0}
    device_of_set = [devices.setdefault(d, len(devices)) for d in spans.attr_column("device")]
    if len(devices) > 1:  # a PCI fixup runs once per device (`quirk_usb_early_handoff` for two): each a row
        key = np.unique(key * len(devices) + np.asarray(device_of_set, dtype=np.int64)[spans.attrs[rows]],
                        return_inverse=True)[1].reshape(-1)
    # Per key, the longest; of equals, the first timed one, else the first (by the least
    # row per key, not a sort: a log of many copies of a boot has each longest in every copy).
    dur = spans.dur[rows]
    longest = np.full(int(key.max()) + 1 if len(key) else 0, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(longest, key, dur)
    at_most = dur == longest[key]
    rows, key = rows[at_most], key[at_most]
    timed = spans.t[rows] != NO_TIME
    none = np.iinfo(np.int64).max
    first, first_timed = np.full(len(longest), none), np.full(len(longest), none)
    np.minimum.at(first, key, rows)
    np.minimum.at(first_timed, key[timed], rows[timed])
    best = np.where(first_timed != none, first_timed, first)
    best = np.sort(best[best != none])  # in file order: equals rank as they came
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


class BlamedRows(Sequence):
    """Rows of a span table as blame entries, each made when first read: a big log's
    failed and absent lists run to tens of thousands, and the text report reads the first
    few and how many there are.  Reads as a list would (slices, `+`, equality)."""

    def __init__(self, boot: Boot, spans: SpanTable | None, rows: np.ndarray):
        self._boot, self._spans, self._rows = boot, spans, rows
        self._all: list[Blamed] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    def _made(self, rows: np.ndarray) -> list[Blamed]:
        return _blamed(self._boot, self._spans, rows) if len(rows) else []

    def __getitem__(self, i):
        if self._all is not None:
            return self._all[i]
        if isinstance(i, slice):
            return self._made(self._rows[i])
        return self._made(self._rows[[i]])[0]

    def __iter__(self):
        if self._all is None:
            self._all = self._made(self._rows)
        return iter(self._all)

    def __add__(self, other) -> list[Blamed]:
        return list(self) + list(other)

    def __radd__(self, other) -> list[Blamed]:
        return list(other) + list(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


NOT_OK = [o for o in Outcome if o != Outcome.OK]


def _outcomes(spans: SpanTable) -> np.ndarray:
    """Per row, the index of its outcome in NOT_OK (-1: OK), decided once per kind and
    return code: not once per row, nor per attribute set (thousands)."""
    codes = spans.attr_column("ret")
    decided = [{code: NOT_OK.index(o) if (o := outcome(kind, code)) != Outcome.OK else -1 for code in set(codes)}
               for kind in spans.vocab["kind"]]
    of_set = np.asarray([[index[code] for code in codes] for index in decided], dtype=np.int64)
    return of_set.reshape(len(decided), len(codes))[spans.kind, spans.attrs]


def returned(boot: Boot) -> dict[Outcome, BlamedRows]:
    """Initcalls and probes that did not simply succeed, by outcome (failed, absent
    hardware, deferred), in file order."""
    spans = boot.columns(Kind.INITCALL, Kind.PROBE, keep=lambda part: _outcomes(part) >= 0)
    if spans is None:
        return {o: BlamedRows(boot, None, np.zeros(0, dtype=np.int64)) for o in NOT_OK}
    row_outcome = _outcomes(spans)
    return {o: BlamedRows(boot, spans, np.flatnonzero(row_outcome == k)) for k, o in enumerate(NOT_OK)}
