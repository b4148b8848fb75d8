"""What the rules share: citing log lines, reading the console logs, the command line and
the target, phase spans, and the arithmetic of savings.

Every saving is integer nanoseconds, like the timeline.  A rule that measures less than
MIN_SAVING_NS stays silent: a change that small is lost in boot-to-boot noise.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..analysis import Analysis
from ..analysis.console_cost import console_log
from ..analysis.phases import PhaseSpan
from ..render.fmt import span
from ..sources.console import PRINTK_AT_START, stamp_ns
from ..timeline import NS_PER_MS, Boot, Clock, ConsoleLog, Event, Kind, Phase
from . import Context

MIN_SAVING_NS = 10 * NS_PER_MS
TEXT_WIDTH = 120  # evidence lines are cut here: enough to recognise the line


# -- log lines ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    """One line of a console or kernel log."""

    log: ConsoleLog
    i: int

    @property
    def text(self) -> str:
        return self.log.text[self.i].strip()

    @property
    def message(self) -> str:
        """The text without its printk stamp (captures keep the stamp in the text)."""
        m = PRINTK_AT_START.match(self.text)
        return self.text[m.end():] if m else self.text

    def cite(self) -> str:
        return f"{self.log.file}:{self.log.lineno[self.i]}: {self.text[:TEXT_WIDTH]}"

    def logged(self) -> int | None:
        """The line's time on its log's clock."""
        return self.log.t[self.i]

    def printk(self) -> int | None:
        """The line's printk time: its own clock in a kernel log, its stamp in a capture."""
        if self.log.clock == Clock.PRINTK:
            return self.log.t[self.i]
        m = PRINTK_AT_START.match(self.text)
        return stamp_ns(m) if m else None


class LineIndex:
    """The boot being advised, read once for every rule: where an event's line is, and each
    line's message for the searches."""

    def __init__(self, boot: Boot):
        self.boot = boot
        self.where: dict[tuple[str, int], Line] = {}
        self.messages: list[tuple[Line, str]] = []
        self._starts: dict[str, Starts] = {}
        for log in boot.logs:
            for i, lineno in enumerate(log.lineno):
                line = Line(log, i)
                self.where.setdefault((log.file, lineno), line)
                self.messages.append((line, line.message))

    def of(self, ev: Event) -> Line | None:
        return self.where.get((ev.file, ev.line)) if ev.file else None

    def starts(self, kind: str) -> "Starts":
        found = self._starts.get(kind)
        if found is None:
            found = self._starts[kind] = Starts(spans(self.boot, kind))
        return found


class Starts:
    """Spans by clock, sorted by start: which contain a given instant, without trying them all."""

    def __init__(self, events: Iterable[Event]):
        by_clock: dict[str, list[tuple[int, int, Event]]] = {}
        for order, ev in enumerate(events):
            if ev.t is not None:
                by_clock.setdefault(ev.clock, []).append((ev.t, order, ev))
        self.spans = {clock: sorted(found, key=lambda x: (x[0], x[1])) for clock, found in by_clock.items()}
        self.t = {clock: [t for t, _, _ in found] for clock, found in self.spans.items()}
        self.longest = {clock: max(ev.dur for _, _, ev in found) for clock, found in self.spans.items()}

    def any_starting_in(self, clock: str, lo: int, hi: int) -> bool:
        """Whether a span starts in [lo, hi)."""
        t = self.t.get(clock, [])
        i = bisect_left(t, lo)
        return i < len(t) and t[i] < hi

    def containing(self, inner: Event) -> Event | None:
        """The first span (in event order) that `contains` inner."""
        if inner.t is None or inner.clock not in self.t:
            return None
        t, found = self.t[inner.clock], self.spans[inner.clock]
        window = found[bisect_left(t, inner.t - self.longest[inner.clock]):bisect_right(t, inner.t)]
        hits = [(order, ev) for _, order, ev in window if contains(ev, inner)]
        return min(hits, key=lambda x: x[0])[1] if hits else None


_index: LineIndex | None = None


def line_index(boot: Boot) -> LineIndex:
    """The index of the boot being advised (built once: every rule cites lines)."""
    global _index
    if _index is None or _index.boot is not boot:
        _index = LineIndex(boot)
    return _index


def find_lines(boot: Boot, pattern: re.Pattern) -> list[tuple[Line, re.Match]]:
    """Lines whose message (printk stamp removed) matches `pattern` at its start."""
    match = pattern.match
    return [(line, m) for line, message in line_index(boot).messages if (m := match(message))]


def cite(boot: Boot, ev: Event, derived: str | None = None) -> str:
    """"file:line: text" for an event; `derived` describes it when its line is not in a
    console log (systemd-analyze blame, bootstage reports)."""
    line = line_index(boot).of(ev)
    if line is not None:
        return line.cite()
    return f"{ev.where()}: {derived or ev.name}"


def line_of(boot: Boot, ev: Event) -> Line | None:
    return line_index(boot).of(ev)


def at(boot: Boot, line: Line) -> int | None:
    """A line's time on the reference clock."""
    return boot.to_ref(line.log.clock, line.log.t[line.i])


def nearest(line: Line, step: int, when=Line.logged) -> Line | None:
    """The closest line after (step 1) or before (step -1) this one in the same log that has
    a time (`when`: Line.logged for the log's clock, Line.printk for kernel messages)."""
    j = line.i + step
    while 0 <= j < len(line.log):
        other = Line(line.log, j)
        if when(other) is not None:
            return other
        j += step
    return None


def time_to_next(line: Line) -> int | None:
    """How long until the log's next timed line: what the work after this line took."""
    nxt = nearest(line, 1)
    if nxt is None or line.logged() is None:
        return None
    return max(0, nxt.logged() - line.logged())


def printk_lines(boot: Boot, until: int | None) -> list[Line]:
    """Kernel messages before `until` (the ready time) in the log that best shows what
    reached the console: the printed log when there is one (a capture), else the longest
    kernel log.  (A kernel log printed after ready, for initcall_debug, is not the boot's.)"""
    log = console_log(boot)
    if log is None:
        return []
    found = []
    for line in (Line(log, i) for i in range(len(log))):
        when = at(boot, line)
        if until is not None and when is not None and when > until:
            break
        if line.printk() is not None:
            found.append(line)
    return found


# -- the kernel command line and the target ------------------------------------------------

def cmdline_args(ctx: Context) -> list[str]:
    """The kernel's arguments as the kernel saw them (its log), else as the target sets them."""
    text = ctx.boot.meta.get("cmdline")
    if text is None and ctx.target:
        section = ctx.target.get("target", {})
        text = " ".join(p for p in (section.get("cmdline", ""), section.get("append", "")) if p)
    return (text or "").split()


def arg_value(ctx: Context, name: str) -> str | None:
    """The value of `name=value` (the last one wins, as in the kernel); "" for a bare flag."""
    value = None
    for arg in cmdline_args(ctx):
        if arg == name:
            value = ""
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1:]
    return value


def target_value(ctx: Context, section: str, key: str):
    """A key of the reference device's target description, None without a target."""
    if not ctx.target:
        return None
    return ctx.target.get(section, {}).get(key)


def for_reference(ctx: Context, patch: dict) -> dict | None:
    """The patch when the boot is a run of the reference device (the optimizer can try it)."""
    return patch if ctx.target else None


def append_patch(ctx: Context, argument: str) -> dict | None:
    """A kernel argument added at the end of the reference device's command line."""
    return for_reference(ctx, {"target": {"append": argument}})


# -- the timeline ---------------------------------------------------------------------------

def phase_span(analysis: Analysis, phase: Phase) -> PhaseSpan | None:
    """The span of one phase, when the logs show both its ends (not merged with others)."""
    for s in analysis.phases.spans:
        if s.phases == [phase]:
            return s
    return None


def mark_at(boot: Boot, mark: str) -> tuple[int | None, Event | None]:
    ev = boot.first_mark(mark)
    return (None, None) if ev is None else (boot.at(ev), ev)


def between(boot: Boot, first: str, second: str) -> tuple[int | None, Event | None, Event | None]:
    """Time from the first occurrence of one marker to the first of another."""
    a_at, a = mark_at(boot, first)
    b_at, b = mark_at(boot, second)
    if a_at is None or b_at is None or b_at < a_at:
        return None, a, b
    return b_at - a_at, a, b


def contains(outer: Event, inner: Event) -> bool:
    """Whether a span started inside another (same clock): a probe run by the initcall that
    registered its driver.  (Its end can print a little after the initcall's own
    measurement stops, so only the start is compared.)"""
    return (outer is not inner and outer.clock == inner.clock and outer.t is not None and inner.t is not None
            and outer.t <= inner.t < outer.end)


def systemd_part(ctx: Context, part: str, minimum: int, mark: str) -> tuple[int, list[str]] | None:
    """A part of `systemd-analyze time` before the kernel (firmware, loader) when it is at
    least `minimum`, with the line it was read from."""
    ns = ctx.boot.meta.get("systemd_time", {}).get(part)
    if not ns or ns < minimum:
        return None
    ev = ctx.boot.first_mark(mark)
    return ns, [cite(ctx.boot, ev, f"systemd-analyze time: {took(ns)} ({part})")] if ev else []


def ready_at(analysis: Analysis) -> int | None:
    """When the boot ended: the ready marker (or the last event)."""
    return analysis.phases.end.at if analysis.phases.end else None


def before_ready(boot: Boot, analysis: Analysis, ev: Event) -> bool:
    end = ready_at(analysis)
    start = boot.at(ev)
    return end is None or start is None or start < end


def spans(boot: Boot, *kinds: str) -> Iterator[Event]:
    """Events of these kinds that have a measured duration (not an upper bound: the oldest
    initcall form is timed until the next call, which says nothing about its own cost)."""
    return (ev for ev in boot.of_kind(*kinds) if ev.dur is not None and not (ev.attrs or {}).get("upper_bound"))


def units(boot: Boot) -> Iterator[Event]:
    return boot.of_kind(Kind.UNIT)


# -- savings --------------------------------------------------------------------------------

def scaled(ns: int, fraction: float) -> int:
    return int(round(ns * fraction))


def total(durations: Iterable[int | None]) -> int:
    return sum(d for d in durations if d)


def worth_it(saving: int | None) -> bool:
    return saving is not None and saving >= MIN_SAVING_NS


def took(ns: int | None) -> str:
    """A duration in evidence text."""
    return span(ns)


def mib(nbytes: int) -> str:
    return f"{nbytes / 1048576:.1f} MiB"


# -- userspace work: units and init-script lines ------------------------------------------

@dataclass
class Work:
    """One service (or script step) seen in the logs, with what it cost."""

    name: str
    evidence: str
    duration: int | None
    on_chain: bool  # in systemd's critical chain
    sequential: bool  # an rc script step: nothing else ran meanwhile


def critical_units(boot: Boot) -> set[str]:
    return {ev.name for ev in units(boot) if (ev.attrs or {}).get("critical_chain")}


def userspace_work(ctx: Context, names: re.Pattern, script_lines: re.Pattern | None = None) -> list[Work]:
    """Units whose name or description matches `names` (the longest sighting of each), and
    init-script lines matching `script_lines` (each costing the time to the next line)."""
    chain = critical_units(ctx.boot)
    best: dict[str, Event] = {}
    for ev in units(ctx.boot):
        if names.search(ev.name) and (ev.name not in best or (ev.dur or 0) > (best[ev.name].dur or 0)):
            best[ev.name] = ev
    found = [Work(name, cite(ctx.boot, ev, f"{name} +{took(ev.dur)}" if ev.dur else name), ev.dur, name in chain,
                  False) for name, ev in best.items()]
    if script_lines is not None:
        seen = {(ev.file, ev.line) for ev in units(ctx.boot)}
        for line, m in find_lines(ctx.boot, script_lines):
            if (line.log.file, line.log.lineno[line.i]) not in seen:
                found.append(Work(m.group(0), line.cite(), time_to_next(line), False, True))
    return found


def work_saving(ctx: Context, work: list[Work]) -> tuple[int | None, str, list[str]]:
    """(saving, confidence, notes): a unit saves its activation time when the boot waited
    for it (critical chain), nothing certain when it ran beside the chain, and at most its
    time when no chain is known; an rc script step saves its time."""
    chain_known = bool(critical_units(ctx.boot))
    counted = [w for w in work if w.duration and (w.on_chain or w.sequential or not chain_known)]
    beside = [w.name for w in work if w.duration and w not in counted]
    unsure = [w.name for w in counted if not (w.on_chain or w.sequential)]
    notes = []
    if beside:
        notes.append(f"not on the critical chain: {', '.join(beside)} (stopping it frees CPU and I/O rather than "
                     "time the boot waits for)")
    if unsure:
        notes.append(f"an upper bound: without `systemd-analyze critical-chain` it is unknown how much of "
                     f"{', '.join(unsure)} the boot waited for")
    saving = total(w.duration for w in counted)
    return (saving if worth_it(saving) else None), ("low" if unsure else "medium"), notes
