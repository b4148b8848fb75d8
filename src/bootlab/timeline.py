"""The boot timeline: the one model every source writes and every analysis reads.

A boot is seen through several clocks (the host's clock at the console, the kernel's
printk clock, the bootloader's timer, systemd's userspace clock).  Every event keeps the
time of its own clock; `Boot.align()` finds how the clocks relate, through anchors
(the same occurrence seen in two clocks), and `Boot.at()` gives an event's time on the
reference clock, whose zero is power-on when a host capture provides it.

Times are integer nanoseconds, so anchors compare exactly and a million events stay small.
"""

from __future__ import annotations

import bisect
import gc
from array import array
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from typing import Iterable, Iterator

from .clock_map import RATE_SPREAD, RATE_TOLERANCE, ClockMap, Rate, arrival, envelope, lower, rate_of, steady

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
NS_PER_US = 1_000


class Clock(StrEnum):
    HOST = "host"  # host monotonic clock at the console; zero = power-on or capture start
    PRINTK = "printk"  # kernel local_clock: printk, ftrace, journal monotonic, bootchart uptime
    BOOTLOADER = "bootloader"  # bootloader timer: U-Boot bootstage, vendor per-line stamps
    USERSPACE = "userspace"  # systemd-analyze times: zero = start of userspace (PID 1)


class Kind(StrEnum):
    MARKER = "marker"  # a boundary or milestone (see Mark)
    INITCALL = "initcall"  # a kernel initcall (span)
    PROBE = "probe"  # a driver probe reported by initcall_debug (span)
    ASYNC_WAIT = "async_wait"  # a thread waiting for async initcalls (span)
    LEVEL = "level"  # "entering initcall level: X"
    STAGE = "stage"  # a bootloader stage (bootstage record, SPL/U-Boot proper)
    UNIT = "unit"  # a systemd unit activation (span)
    PROCESS = "process"  # a process seen by bootchart (span)
    PHASE = "phase"  # a phase duration reported directly by a tool (systemd-analyze time)
    STEP = "step"  # a named step of the boot, between bootlab-mark NAME.start and NAME.end


class Mark(StrEnum):
    """Boundary markers; their aligned times split the boot into phases."""

    POWER_ON = "power-on"
    FIRMWARE_START = "firmware.start"  # first firmware output (BootROM, TF-A, SeaBIOS)
    BOOTLOADER_START = "bootloader.start"  # U-Boot SPL / U-Boot / GRUB banner
    KERNEL_LOAD = "kernel.load"  # "Starting kernel ...", "Booting from ROM..."
    KERNEL_START = "kernel.start"  # printk clock zero ("Linux version")
    INITCALLS_START = "initcalls.start"  # first initcall or "devtmpfs: initialized"
    USERSPACE_START = "userspace.start"  # "Run /init as init process", "Freeing unused kernel"
    SERVICES_START = "services.start"  # init starts running services
    APP_START = "app.start"  # the application is started
    READY = "ready"  # the application is ready: the end of the boot


class Phase(StrEnum):
    FIRMWARE = "firmware"
    BOOTLOADER = "bootloader"
    KERNEL_LOAD = "kernel load/decompress"
    KERNEL_INIT = "kernel init"
    INITCALLS = "initcalls"
    INIT = "rootfs/init"
    SERVICES = "services"
    APPLICATION = "application"


# Each phase starts at its marker and ends where the next present marker starts.
PHASE_STARTS: tuple[tuple[Phase, Mark], ...] = (
    (Phase.FIRMWARE, Mark.POWER_ON),
    (Phase.BOOTLOADER, Mark.BOOTLOADER_START),
    (Phase.KERNEL_LOAD, Mark.KERNEL_LOAD),
    (Phase.KERNEL_INIT, Mark.KERNEL_START),
    (Phase.INITCALLS, Mark.INITCALLS_START),
    (Phase.INIT, Mark.USERSPACE_START),
    (Phase.SERVICES, Mark.SERVICES_START),
    (Phase.APPLICATION, Mark.APP_START),
)


@dataclass(slots=True)
class Event:
    """An instant (dur is None) or a span, in its own clock.

    t is None for an event whose time is unknown (a bootloader line without stamps):
    its order in the file is still known.
    """

    kind: str
    name: str
    clock: str
    t: int | None
    dur: int | None = None
    file: str | None = None
    line: int = 0
    track: str | None = None  # swim lane: "pid 1", a unit, a process
    phase: str | None = None
    attrs: dict | None = None

    @property
    def end(self) -> int | None:
        if self.t is None:
            return None
        return self.t + (self.dur or 0)

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "?"


@dataclass(slots=True)
class Diagnostic:
    """A warning or error about an input, naming file and line."""

    file: str
    line: int
    message: str
    severity: str = "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message}"


NO_TIME = -(2**63)  # how a line without a time is stored in Times
# meta: the host's stamps' resolution in ns, when a reader knows it coarse (whole seconds:
# LAVA's rendered log, a terminal program's `[2022-08-15 10:36:02]`).
HOST_RESOLUTION = "host_resolution_ns"
# Times and durations beyond this (146 years) are garbage, not a boot: they would not fit
# the 64-bit columns (a log's `[123456789012345678901234567890.000000]`).
MAX_NS = 2**62


def ranked(values, bound: int):
    """np.unique(values, return_inverse=True) of values in [0, bound): without sorting
    them when the bound is not much more than their count (a million-line log's 400,000
    initcalls have a few hundred functions, and a few dozen sets of attributes)."""
    import numpy as np

    if bound > 4 * len(values) + 1024:
        pairs, key = np.unique(values, return_inverse=True)
        return pairs, key.reshape(-1)
    present = np.zeros(bound, dtype=bool)
    present[values] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[values]


def in_range(ns: int | None) -> bool:
    return ns is None or -MAX_NS < ns < MAX_NS


class Times(Sequence):
    """A column of times (ns, or None for a line without one), stored compactly; `numpy()`
    gives the raw int64 values (None as NO_TIME) for vectorised analyses."""

    __slots__ = ("raw",)

    def __init__(self, values: Iterable[int | None] = ()):
        self.raw = array("q", (NO_TIME if v is None else v for v in values))

    def append(self, t: int | None) -> None:
        self.raw.append(NO_TIME if t is None else t)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [None if v == NO_TIME else v for v in self.raw[i]]
        v = self.raw[i]
        return None if v == NO_TIME else v

    def __len__(self) -> int:
        return len(self.raw)

    def __iter__(self) -> Iterator[int | None]:
        return (None if v == NO_TIME else v for v in self.raw)

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def numpy(self):
        import numpy as np

        return np.frombuffer(self.raw, dtype=np.int64) if len(self.raw) else np.zeros(0, dtype=np.int64)


class SlicedText(Sequence):
    """Line texts kept as one string and the offsets of each line (a million lines, one copy)."""

    __slots__ = ("whole", "starts", "ends")

    def __init__(self, whole: str, starts, ends):
        self.whole, self.starts, self.ends = whole, starts, ends

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return self.whole[self.starts[i]:self.ends[i]]

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[str]:
        whole = self.whole
        return (whole[a:b] for a, b in zip(self.starts.tolist(), self.ends.tolist()))


class ConsoleLog:
    """The lines of one console or kernel log, kept as columns.

    A boot log can have a million lines; compact columns keep that small and fast.  `t` is
    the line's time in `clock` (None when the line carries no time), `text` the line as
    read (cleaned of escapes), `nbytes` the bytes the line took on the console, which is
    what console cost is computed from.
    """

    __slots__ = ("file", "clock", "printed", "consoled", "t", "text", "lineno", "nbytes")

    def __init__(self, file: str, clock: str, printed: bool, consoled: bool = True):
        self.file = file
        self.clock = clock
        # printed: the lines went through the console (a capture), rather than being
        # read back from the ring buffer (dmesg), where quiet lines are also present.
        self.printed = printed
        # consoled: False for a log that no console printed and whose printing rules are not
        # the kernel's (a bootloader's log read from its memory over USB): no console cost.
        self.consoled = consoled
        self.t = Times()
        self.text: list[str] = []
        self.lineno = array("i")
        self.nbytes = array("i")

    @classmethod
    def from_columns(cls, file: str, clock: str, printed: bool, times, text: Sequence[str], lineno,
                     nbytes, consoled: bool = True) -> "ConsoleLog":
        """A log built at once from numpy columns (int64 times with NO_TIME, int32 rest)."""
        log = cls(file, clock, printed, consoled)
        log.t.raw.frombytes(times.astype("int64").tobytes())
        log.text = text
        log.lineno.frombytes(lineno.astype("int32").tobytes())
        log.nbytes.frombytes(nbytes.astype("int32").tobytes())
        return log

    def append(self, t: int | None, text: str, lineno: int, nbytes: int) -> None:
        """A line; one whose time is out of range (garbage) is kept without a time."""
        self.t.raw.append(NO_TIME if t is None or not -MAX_NS < t < MAX_NS else t)  # a million calls: inlined
        self.text.append(text)
        self.lineno.append(lineno)
        self.nbytes.append(nbytes)

    def __len__(self) -> int:
        return len(self.text)

    def drop_before(self, lineno: int) -> None:
        """Forget the lines numbered below `lineno` (a log's lines are in file order)."""
        k = bisect.bisect_left(self.lineno, lineno)
        if k == 0:
            return
        self.t.raw = self.t.raw[k:]
        text = self.text
        self.text = SlicedText(text.whole, text.starts[k:], text.ends[k:]) if isinstance(text, SlicedText) else text[k:]
        self.lineno = self.lineno[k:]
        self.nbytes = self.nbytes[k:]

    def timed(self) -> bool:
        return any(v != NO_TIME for v in self.t.raw)


class SpanTable:
    """Spans kept as columns: a million-line log's initcalls as a few arrays, not 400,000
    objects.  The analyses read the columns; `events()` makes Event objects, which
    Boot.events asks for only when something needs every event (a renderer drawing each
    span).  Text values are ids into vocabularies (kind, name, clock, file, track, attrs:
    one shared dict per set of attributes); a time not known is NO_TIME, as is a
    duration not known.  A log's table has its rows in line order; Boot.columns() gives
    them in the order of Boot.events.  Once the phases are assigned, `phase` is an id
    column too, into vocab["phase"] (a list of 400,000 names cost more to copy than
    the table's other columns together)."""

    __slots__ = ("vocab", "kind", "name", "clock", "file", "track", "attrs", "t", "dur", "line", "phase", "at", "until")
    COLUMNS = ("kind", "name", "clock", "file", "track", "attrs")

    def __init__(self, vocab: dict[str, list], ids: dict, t, dur, line):
        import numpy as np

        self.vocab = vocab  # column -> list of values
        for column in self.COLUMNS:
            setattr(self, column, np.asarray(ids[column], dtype=np.int32))
        self.t = np.asarray(t, dtype=np.int64)
        self.dur = np.asarray(dur, dtype=np.int64)
        self.line = np.asarray(line, dtype=np.int64)
        self.phase = None  # per row, ids into vocab["phase"], once Boot's phases are assigned (set_phases)
        # Where the spans go among the boot's event objects: merged by line into
        # objects[at:until], the events of the same log.
        self.at = self.until = 0

    def __len__(self) -> int:
        return len(self.t)

    def set_phases(self, names: list[str | None], ids) -> None:
        """Each row's phase: names[ids[row]]."""
        import numpy as np

        self.vocab = {**self.vocab, "phase": list(names)}  # (the vocabularies may be another table's too)
        self.phase = np.asarray(ids, dtype=np.int32)

    @classmethod
    def from_events(cls, events: list[Event]) -> "SpanTable":
        vocab: dict[str, list] = {}
        ids: dict[str, list[int]] = {}
        # A column at a time, each value's id by a dict (its first object kept, as the
        # values first come: a set of attributes by its identity): no loop in Python.
        for column in (*cls.COLUMNS, "phase"):
            values = list(map(attrgetter(column), events))
            keys = list(map(id, values)) if column == "attrs" else values
            first = dict(zip(keys, values)) if column == "attrs" else None  # (one object per id)
            index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
            vocab[column] = list(index) if first is None else [first[key] for key in index]
            ids[column] = list(map(index.__getitem__, keys))
        table = cls(vocab, ids, [NO_TIME if ev.t is None else ev.t for ev in events],
                    [NO_TIME if ev.dur is None else ev.dur for ev in events], [ev.line for ev in events])
        table.set_phases(vocab["phase"], ids["phase"])
        return table

    @classmethod
    def concat(cls, tables: list["SpanTable"], positions: list) -> "SpanTable":
        """One table of several, its rows ordered by `positions` (one array per table)."""
        import numpy as np

        phased = all(t.phase is not None for t in tables)
        columns = (*cls.COLUMNS, "phase") if phased else cls.COLUMNS
        vocab: dict[str, list] = {c: [] for c in columns}
        ids: dict[str, list] = {c: [] for c in columns}
        for column in columns:
            known: dict = {}
            for table in tables:
                remap = []
                for value in table.vocab[column]:
                    key = id(value) if column == "attrs" else value
                    if key not in known:
                        known[key] = len(vocab[column])
                        vocab[column].append(value)
                    remap.append(known[key])
                ids[column].append(np.asarray(remap, dtype=np.int32)[getattr(table, column)] if len(table)
                                   else np.zeros(0, dtype=np.int32))
        out = cls(vocab, {c: np.concatenate(ids[c]) for c in cls.COLUMNS}, np.concatenate([t.t for t in tables]),
                  np.concatenate([t.dur for t in tables]), np.concatenate([t.line for t in tables]))
        if phased:
            out.phase = np.concatenate(ids["phase"])
        return out.take(np.argsort(np.concatenate(positions), kind="stable"))

    def take(self, rows) -> "SpanTable":
        out = SpanTable(self.vocab, {c: getattr(self, c)[rows] for c in self.COLUMNS}, self.t[rows], self.dur[rows],
                        self.line[rows])
        if self.phase is not None:
            out.phase = self.phase[rows]
        return out

    def value(self, column: str, i: int):
        return self.vocab[column][int(getattr(self, column)[i])]

    def event(self, i: int) -> Event:
        t, dur = int(self.t[i]), int(self.dur[i])
        return Event(self.value("kind", i), self.value("name", i), self.value("clock", i),
                     None if t == NO_TIME else t, None if dur == NO_TIME else dur, self.value("file", i),
                     int(self.line[i]), self.value("track", i), None if self.phase is None else self.value("phase", i),
                     self.value("attrs", i))

    def events(self) -> list[Event]:
        vocab = self.vocab
        kinds, names, clocks, files = vocab["kind"], vocab["name"], vocab["clock"], vocab["file"]
        tracks, attrs = vocab["track"], vocab["attrs"]
        phases = [None] * len(self) if self.phase is None else [vocab["phase"][p] for p in self.phase.tolist()]
        return [Event(kinds[k], names[n], clocks[c], None if t == NO_TIME else t, None if d == NO_TIME else d,
                      files[f], line, tracks[tr], ph, attrs[a])
                for k, n, c, t, d, f, line, tr, ph, a in zip(
                    self.kind.tolist(), self.name.tolist(), self.clock.tolist(), self.t.tolist(), self.dur.tolist(),
                    self.file.tolist(), self.line.tolist(), self.track.tolist(), phases, self.attrs.tolist())]

    def attr_column(self, key: str, default=None) -> list:
        """Per attribute set (an `attrs` id), the value of one attribute."""
        return [(a or {}).get(key, default) for a in self.vocab["attrs"]]

    def where(self, column: str, test):
        """Per row, whether its value in a text column passes `test` (tested once per value)."""
        import numpy as np

        return np.asarray([bool(test(v)) for v in self.vocab[column]], dtype=bool)[getattr(self, column)]

    def flagged(self, key: str):
        """Per row, whether its attributes set `key` (a fixup, an async initcall)."""
        return self.where("attrs", lambda a: (a or {}).get(key))


@dataclass(slots=True)
class Anchors:
    """Evidence that two clocks relate: the same occurrences seen in both.

    `observed` anchors come from a later clock seeing an earlier one (the host capture sees
    a printk line only after it is printed, after the console's backlog): the relation is
    the lower envelope of the samples (clock_map.envelope), and `probes` (lines printed
    with the console idle) measure the rate.  `exact` anchors state the relation and are
    averaged.
    """

    a: str
    b: str
    observed: bool
    best: int | None = None
    total: int = 0
    count: int = 0
    evidence: str = ""
    samples: list[tuple[int, int]] = field(default_factory=list)  # (t_a, t_b) of observed anchors
    prompt: list[tuple[int, int]] = field(default_factory=list)  # those seen with nothing queued before
    probes: list[tuple[int, int]] = field(default_factory=list)

    def add(self, t_a: int, t_b: int, evidence: str, probe: bool = False, prompt: bool = True) -> None:
        diff = t_b - t_a
        self.count += 1
        self.total += diff
        if self.observed:
            self.samples.append((t_a, t_b))
            if prompt or probe:
                self.prompt.append((t_a, t_b))
            if probe:
                self.probes.append((t_a, t_b))
        if self.best is None or (self.observed and diff < self.best):
            self.best = diff
            self.evidence = evidence

    def merge(self, other: "Anchors") -> None:
        self.count += other.count
        self.total += other.total
        self.samples += other.samples
        self.prompt += other.prompt
        self.probes += other.probes
        if other.best is not None and (
            self.best is None or (self.observed and other.best < self.best)
        ):
            self.best, self.evidence = other.best, other.evidence

    def rate(self) -> Rate | None:
        """The rate the probes measured, when they agree."""
        measured = self.measured_rate()
        return measured if measured is not None and measured.agrees else None

    def measured_rate(self) -> Rate | None:
        return rate_of(self.probes) if self.observed else None

    def relation(self, keeps_no_rate: bool = False, coarse: bool = False) -> ClockMap:
        """t_b as a function of t_a: the envelope of what b saw promptly (a line behind a
        backlog, such as a loud boot's last one, says only that it came later), a steady
        line when the probes say a ran at the wrong speed throughout, or the mean offset.
        A clock known to keep no rate (`keeps_no_rate`: a guest's clock counting
        instructions) is placed at its sightings, the only bound it admits.  One seen by a
        clock `coarse` beside it (b's stamps whole seconds: LAVA's rendered log, `ts` to the
        second) keeps its own speed, under every sighting: between two of them it is the
        better measure (the envelope put a kernel's steps on whole seconds)."""
        assert self.best is not None
        if not self.observed:
            return ClockMap.offset(self.total // self.count)
        if keeps_no_rate:
            return arrival(self.samples)
        if coarse:
            return steady(self.samples, 1.0)
        rate = self.rate()
        if rate is not None and rate.rate < 1 - RATE_TOLERANCE:
            # a clock that ran fast throughout: the envelope (which lets a clock run slow
            # between two sightings, never fast) cannot follow it
            return steady(self.samples, rate.rate)
        # What b saw promptly gives the relation; every sighting bounds it: nothing is
        # placed after its own line was seen.
        return lower(envelope(self.prompt if len(self.prompt) >= 2 else self.samples), arrival(self.samples))


@dataclass(slots=True)
class ClockInfo:
    """How a clock maps onto the reference clock: ref_time = map(own_time)."""

    map: ClockMap
    method: str  # "reference", "anchors", "sequence"
    evidence: str = ""
    anchors: int = 0
    rate: Rate | None = None  # measured against the clock it was anchored to (observed anchors)
    at_sightings: bool = False  # it keeps no rate: placed where it was seen (clock_map.arrival)
    own_speed: bool = False  # seen by a clock coarser than it: at its own speed, under every sighting

    @property
    def offset(self) -> int:
        """Where the clock's zero falls on the reference clock."""
        return self.map(0)

    def ref(self, t: int) -> int:
        return self.map(t)


@dataclass
class SourceInfo:
    file: str
    format: str
    lines: int = 0
    events: int = 0


@dataclass
class Boot:
    """Everything known about one boot, from any number of sources."""

    objects: list[Event] = field(default_factory=list)  # events held one by one
    tables: list[SpanTable] = field(default_factory=list)  # events held as columns (a big log's initcalls)
    logs: list[ConsoleLog] = field(default_factory=list)
    sources: list[SourceInfo] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    anchors: dict[tuple[str, str], Anchors] = field(default_factory=dict)
    clocks: dict[str, ClockInfo] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # kernel version, command line, baud ...
    # Sampled values (CPU busy %, disk throughput): name -> (clock, [(t, value)])
    series: dict[str, tuple[str, list[tuple[int, float]]]] = field(default_factory=dict)
    reference: str | None = None
    repeats: bool = False  # a source went back in time: it may report some events twice
    _event_index: tuple | None = field(default=None, repr=False, compare=False)

    # -- writing ------------------------------------------------------------------

    def add(self, ev: Event) -> None:
        """Add an event; one whose time or duration is out of range is garbage: a warning."""
        if in_range(ev.t) and in_range(ev.dur):
            self.objects.append(ev)
        else:
            self.warn(ev.file or "?", ev.line, f"{ev.kind} {ev.name!r}: a time out of range, not read")

    @property
    def events(self) -> list[Event]:
        """Every event in order, a table's spans among the events of their log by line
        (made into objects when first asked for: the analyses read the columns)."""
        self.materialize()
        return self.objects

    def materialize(self) -> None:
        """Make the tables' spans Event objects, among the others where they belong."""
        for table in sorted(self.tables, key=lambda t: t.at, reverse=True):
            mine = self.objects[table.at:table.until]
            self.objects[table.at:table.until] = merge_by_line(mine, table.events())
        self.tables = []

    @events.setter
    def events(self, events: list[Event]) -> None:
        self.objects, self.tables = events, []

    def slots(self, table: SpanTable, lines):
        """Where spans of this table on these lines stand among the event objects (as in
        Boot.events): before the first of their log's events on a later line."""
        import numpy as np

        later = np.maximum.accumulate(np.asarray([ev.line for ev in self.objects[table.at:table.until]] or [0]))
        return np.minimum(table.at + np.searchsorted(later, lines, side="right"), table.until)

    def columns(self, *kinds: str, keep=None) -> SpanTable | None:
        """The spans of these kinds as one table, in the order of Boot.events; None if
        there are none.  `keep`: which rows of a table to keep (a mask per row), asked of
        each part before they are put together (a big log's 400,000 spans are not copied
        into one table to keep a few thousand)."""
        import numpy as np

        parts, tables = [], []
        for table in self.tables:
            if not set(table.vocab["kind"]) & set(kinds):
                continue
            parts.append(table if set(table.vocab["kind"]) <= set(kinds) else table.take(
                np.flatnonzero(table.where("kind", lambda k: k in kinds))))
            tables.append(table)
        where = self._index()[2]
        picked = sorted(i for kind in set(kinds) for i in where.get(kind, ()))
        if picked:
            parts.append(SpanTable.from_events([self.objects[i] for i in picked]))
        if keep is not None:
            masks = [keep(part) for part in parts]
            parts = [part.take(np.flatnonzero(mask)) for part, mask in zip(parts, masks)]
            picked = np.asarray(picked, dtype=np.int64)[masks[-1]].tolist() if picked else []
        if len(parts) <= 1:  # (one part is in order already: no slots to find)
            return parts[0] if parts else None
        positions = [2 * self.slots(table, part.line) for table, part in zip(tables, parts)]
        if picked:
            positions.append(2 * np.asarray(picked, dtype=np.int64) + 1)
        return SpanTable.concat(parts, positions)

    def warn(self, file: str, line: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(file, line, message))

    def anchor(self, a: str, t_a: int, b: str, t_b: int, evidence: str, observed: bool = True,
               probe: bool = False, prompt: bool = True) -> None:
        """Record that t_a on clock a is the instant t_b on clock b (or b saw it later:
        `prompt` when nothing was queued before it, a probe was printed to be seen so)."""
        key = (a, b)
        anchors = self.anchors.get(key)
        if anchors is None:
            anchors = self.anchors[key] = Anchors(a, b, observed)
        anchors.add(t_a, t_b, evidence, probe, prompt)

    # -- clocks -------------------------------------------------------------------

    def clocks_used(self) -> set[str]:
        used = {ev.clock for ev in self.objects if ev.t is not None}
        used.update(clock for table in self.tables for clock in _timed_clocks(table))
        used.update(log.clock for log in self.logs if log.timed())
        return used

    def align(self) -> None:
        """Map every clock onto the reference clock.

        The host clock is the reference when present: its zero is power-on.  Otherwise the
        earliest clock in boot order is.  Clocks join the reference through anchors
        (breadth first); a clock with no anchor is placed after the clocks that run
        before it in boot order (a lower bound), and a warning says so.
        """
        used = self.clocks_used()
        order = [Clock.HOST, Clock.BOOTLOADER, Clock.PRINTK, Clock.USERSPACE]
        order += sorted(c for c in used if c not in order)
        present = [c for c in order if c in used]
        self.clocks = {}
        if not present:
            self.reference = None
            return
        self.reference = present[0]
        self.clocks[self.reference] = ClockInfo(ClockMap.offset(0), "reference")
        frontier = [self.reference]
        # The guest's clocks against the host's, when the guest's count its instructions
        # (QEMU's -icount): what its lines' arrival bounds, no rate (see clock_map.arrival).
        virtual = self.meta.get("virtual_clock")
        # The host's stamps, when they are coarser than the clocks it sees (HOST_RESOLUTION).
        coarse_host = self.meta.get(HOST_RESOLUTION, 0) >= NS_PER_S
        while frontier:
            known = frontier.pop(0)
            for (a, b), anchors in self.anchors.items():
                keeps_no_rate = bool(virtual) and anchors.observed
                coarse = coarse_host and b == Clock.HOST
                rate = None if keeps_no_rate or coarse else anchors.rate()
                if a == known and b not in self.clocks:
                    # t_b = h(t_a), ref = M_a(t_a)  =>  M_b = M_a after h's inverse
                    mapped = anchors.relation(keeps_no_rate, coarse).inverse().then(self.clocks[a].map)
                    self.clocks[b] = ClockInfo(mapped, "anchors", anchors.evidence, anchors.count, rate, keeps_no_rate,
                                               coarse)
                elif b == known and a not in self.clocks:
                    mapped = anchors.relation(keeps_no_rate, coarse).then(self.clocks[b].map)
                    self.clocks[a] = ClockInfo(mapped, "anchors", anchors.evidence, anchors.count, rate, keeps_no_rate,
                                               coarse)
                else:
                    continue
                frontier.append(b if a == known else a)
        for clock in present:
            if clock in self.clocks:
                continue
            # Lower bound: this clock starts after everything already placed ended.
            latest = self._latest_ref()
            first = self._earliest(clock)
            offset = (latest if latest is not None else 0) - (min(first, 0) if first is not None else 0)
            self.clocks[clock] = ClockInfo(ClockMap.offset(offset), "sequence", "placed after the preceding clock")
            self.diagnostics.append(
                Diagnostic(
                    "<alignment>",
                    0,
                    f"no event links the {clock} clock to the {self.reference} clock; "
                    f"it is placed right after the last {self.reference} event, so the time "
                    "between them is unknown (capture the console with `bootlab capture` to measure it)",
                )
            )
        for (a, b), anchors in self.anchors.items():
            if virtual and anchors.observed:
                self.diagnostics.append(Diagnostic("<alignment>", 0, _no_rate_warning(a, b, anchors, virtual)))
                continue
            measured = anchors.measured_rate()
            if measured is not None and not measured.agrees:
                self.diagnostics.append(Diagnostic("<alignment>", 0, _disagreeing_probes(a, b, measured)))
            elif measured is not None and abs(measured.rate - 1) > RATE_TOLERANCE:
                self.diagnostics.append(Diagnostic("<alignment>", 0, _rate_warning(a, b, measured, self.meta)))

    def _latest_ref(self) -> int | None:
        latest = None
        for ev in self.events:
            at = self.at_end(ev)
            if at is not None and (latest is None or at > latest):
                latest = at
        for log in self.logs:
            info = self.clocks.get(log.clock)
            if info is None:
                continue
            for t in log.t:
                if t is not None and (latest is None or info.ref(t) > latest):
                    latest = info.ref(t)
        return latest

    def _earliest(self, clock: str) -> int | None:
        times = [ev.t for ev in self.events if ev.clock == clock and ev.t is not None]
        for log in self.logs:
            if log.clock == clock:
                times.extend(t for t in log.t if t is not None)
        return min(times) if times else None

    def at(self, ev: Event) -> int | None:
        """The event's start on the reference clock, or None if it cannot be placed."""
        if ev.t is None:
            return None
        info = self.clocks.get(ev.clock)
        return None if info is None else info.ref(ev.t)

    def at_end(self, ev: Event) -> int | None:
        if ev.t is None:
            return None
        info = self.clocks.get(ev.clock)
        return None if info is None else info.ref(ev.t + (ev.dur or 0))

    def ref_times(self, spans: SpanTable, end: bool = False):
        """Each span's start (or end) on the reference clock; NO_TIME where not placed."""
        import numpy as np

        length = np.where(spans.dur != NO_TIME, spans.dur, 0) if end else 0
        own = np.where(spans.t != NO_TIME, spans.t + length, 0)
        out = np.full(len(spans.t), NO_TIME, dtype=np.int64)
        for k, clock in enumerate(spans.vocab["clock"]):
            info = self.clocks.get(clock)
            rows = (spans.clock == k) & (spans.t != NO_TIME)
            if info is not None and rows.any():
                out[rows] = info.map.many(own[rows])
        return out

    def to_ref(self, clock: str, t: int | None) -> int | None:
        info = self.clocks.get(clock)
        return None if info is None or t is None else info.ref(t)

    # -- reading ------------------------------------------------------------------

    def of_kind(self, *kinds: str) -> list[Event]:
        """The events of some kinds, in list order (indexed once per state of the list;
        a table of those kinds is made into objects first)."""
        if any(set(t.vocab["kind"]) & set(kinds) for t in self.tables):
            self.materialize()
        index = self._index()[1]
        if len(kinds) == 1:
            return index.get(kinds[0], [])
        wanted = set(kinds)
        return [ev for ev in self.events if ev.kind in wanted]

    def _index(self) -> tuple[dict[str, list[Event]], dict[str, list[Event]], dict[str, list[int]]]:
        """(markers by name, events by kind, their places in the list by kind); rebuilt when
        the event list changes."""
        key = (id(self.objects), len(self.objects))
        if self._event_index is None or self._event_index[0] != key:
            marks: dict[str, list[Event]] = {}
            kinds: dict[str, list[Event]] = {}
            where: dict[str, list[int]] = {}
            for i, ev in enumerate(self.objects):
                kinds.setdefault(ev.kind, []).append(ev)
                where.setdefault(ev.kind, []).append(i)
                if ev.kind == Kind.MARKER:
                    marks.setdefault(ev.name, []).append(ev)
            self._event_index = (key, (marks, kinds, where))
        return self._event_index[1]

    def marks(self, mark: str) -> list[Event]:
        return self._index()[0].get(mark, [])

    def first_mark(self, mark: str) -> Event | None:
        """The earliest placed occurrence of a marker (the first in file order if untimed)."""
        best, best_at = None, None
        for ev in self.marks(mark):
            at = self.at(ev)
            if at is None:
                if best is None:
                    best = ev
                continue
            if best_at is None or at < best_at:
                best, best_at = ev, at
        return best

    def dedupe(self) -> None:
        """Drop structured events reported twice (by a capture and a dmesg, or by one log
        printed again).

        Events are the same when kind, name, clock and times agree, and, in one file, their
        attributes too (one log's distinct events can share a time: a board's three boot
        consoles all at printk time zero); the first is kept and gains what another source's
        knew (its attributes).
        """
        seen: dict[tuple, list[Event]] = {}
        kept = []
        for ev in self.events:
            key = (ev.kind, ev.name, ev.clock, ev.t, ev.dur, ev.track)
            same = seen.setdefault(key, []) if ev.t is not None else []
            first = next((f for f in same if f.file != ev.file or f.attrs == ev.attrs), None)
            if first is not None:
                if ev.attrs:
                    first.attrs = {**ev.attrs, **(first.attrs or {})}
                continue
            same.append(ev)
            kept.append(ev)
        self.events = kept


def merge(boots: Iterable[Boot], link=None) -> Boot:
    """Combine the partial boots read from several files of the same boot, then align
    their clocks (`link(boot)` may add anchors found across files first)."""
    out = Boot()
    for boot in boots:
        for table in boot.tables:
            table.at += len(out.objects)
            table.until += len(out.objects)
        out.tables.extend(boot.tables)
        out.objects.extend(boot.objects)
        out.logs.extend(boot.logs)
        out.sources.extend(boot.sources)
        out.diagnostics.extend(boot.diagnostics)
        out.series.update(boot.series)
        for key, anchors in boot.anchors.items():
            mine = out.anchors.get(key)
            if mine is None:
                out.anchors[key] = anchors
            else:
                mine.merge(anchors)
        for key, value in boot.meta.items():
            out.meta.setdefault(key, value)
        out.repeats |= boot.repeats
    if len(out.sources) > 1 or out.repeats:
        out.dedupe()
    if link is not None:
        link(out)
    out.align()
    return out


@contextmanager
def no_cycle_collection():
    """Build or walk a big boot without the cyclic garbage collector.  A boot is many small
    objects and no cycles; the collector would walk the growing model again and again
    (reading a million-line log: a third of the time), and once more after it is built
    (the analyses' new objects trigger it).  For one-shot work: reading, analysing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def merge_by_line(events: list[Event], spans: list[Event]) -> list[Event]:
    """Both lists in file order; on the same line the other event came first (the ready
    marker is seen before the line is read as an initcall)."""
    span_lines = [ev.line for ev in spans]
    out: list[Event] = []
    j = 0
    for ev in events:
        k = bisect.bisect_left(span_lines, ev.line, j)
        out += spans[j:k]
        out.append(ev)
        j = k
    out += spans[j:]
    return out


def _timed_clocks(table: SpanTable) -> set[str]:
    return {table.vocab["clock"][c] for c in set(table.clock[table.t != NO_TIME].tolist())}


def _disagreeing_probes(a: str, b: str, rate: Rate) -> str:
    return (f"the {a} clock's rate is not measured: its {rate.probes} probe lines disagree (their pairwise "
            f"speeds against the {b} clock differ by {rate.spread:.1%}, more than {RATE_SPREAD:.0%}): the host "
            "saw some of them late, as a busy host does")


def _rate_warning(a: str, b: str, rate: Rate, meta: dict) -> str:
    """A clock that ran at the wrong speed, and the likely reason."""
    cmdline = f" {meta.get('cmdline') or meta.get('capture_cmdline') or ''} "
    given = [arg for arg in cmdline.split() if arg.startswith(("tsc_early_khz=", "lpj="))]
    if given:
        cause = (f"{' '.join(given)} on the kernel command line is not this host's: a guest's TSC runs at its "
                 "host's rate, so give the host's own (tsc_early_khz=host in a bootlab target)")
    else:
        cause = ("the kernel calibrated its clock wrong (its TSC rate, or a wrong clock-frequency in the device "
                 "tree)")
    # rate is the seeing clock's ns per own ns: the own clock's speed is its inverse
    return (f"the {a} clock ran at {1 / rate.rate:.4f} times the {b} clock's speed (from {rate.probes} probe "
            f"lines over {(rate.end - rate.start) / NS_PER_S:.2f} s of its own time), more than "
            f"{RATE_TOLERANCE:.1%} off: its durations are {abs(1 / rate.rate - 1):.1%} "
            f"{'short' if rate.rate > 1 else 'long'}; times are aligned "
            f"{'at the measured rate' if rate.rate < 1 else 'along what the host saw'}. Likely cause: {cause}")


SPEED_WINDOW = 250_000_000  # ns of either clock a speed is read over, at least


def _no_rate_warning(a: str, b: str, anchors: Anchors, virtual: str) -> str:
    """A guest clock that counts instructions: how far from the host's its speed went, and
    what its times mean here."""
    m = arrival(anchors.samples)
    speeds = []
    x0, y0 = m.xs[0], m.ys[0]
    for x, y in zip(m.xs, m.ys):
        if max(x - x0, y - y0) >= SPEED_WINDOW:
            speeds.append((x - x0) / max(y - y0, 1))
            x0, y0 = x, y
    measured = (f" (read over stretches of {SPEED_WINDOW / NS_PER_S:.2f} s, from the lines' arrival: between "
                f"{min(speeds):.3g} and {max(speeds):.3g} times the {b} clock's speed)") if speeds else ""
    return (f"the guest ran with QEMU's {virtual}: its {a} clock counts executed instructions, not time, and keeps no "
            f"rate against the {b} clock{measured}. Its events are placed when their lines reached the host "
            f"(upper bounds); durations the kernel measured itself (initcalls, probes, its steps) are guest time")
