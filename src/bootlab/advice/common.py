"""What the rules share: citing log lines, reading the console logs, the command line and
the target, phase spans, and the arithmetic of savings.

Every saving is integer nanoseconds, like the timeline.  A rule that measures less than
MIN_SAVING_NS stays silent: a change that small is lost in boot-to-boot noise.
"""

from __future__ import annotations

import re
import re._constants as _sre
import re._parser as _parser
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Iterable

import numpy as np

from ..analysis import Analysis
from ..analysis.console_cost import console_log
from ..analysis.phases import PhaseSpan
from ..render.fmt import span
from ..sources import kernel_messages as km
from ..sources.console import PRINTK_AT_START, stamp_ns
from ..timeline import NO_TIME, NS_PER_MS, Boot, Clock, ConsoleLog, Event, Kind, Phase, SlicedText, SpanTable
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
    """The boot being advised, read once for every rule: where an event's line is, each
    log's text for the searches, and the spans the rules scan (kept as columns: a big log's
    400,000 initcalls become objects only where a rule picks them)."""

    def __init__(self, boot: Boot):
        self.boot = boot
        self._starts: dict[str, Starts] = {}
        self._texts: dict[tuple[int, bool], tuple[str, list[int]] | None] = {}
        self._holding: dict[tuple[int, str, bool], list[int]] = {}
        self._spans: dict[tuple[str, ...], tuple[SpanTable | None, dict[int, Event]]] = {}

    def of(self, ev: Event) -> Line | None:
        """The line an event was read from (the first log of its file that has it)."""
        if not ev.file:
            return None
        for log in self.boot.logs:
            if log.file == ev.file:
                k = bisect_left(log.lineno, ev.line)
                if k < len(log.lineno) and log.lineno[k] == ev.line:
                    return Line(log, k)
        return None

    def starts(self, kind: str, among: np.ndarray | None = None) -> "Starts":
        """The measured spans of a kind (those of the mask `among` only) by start."""
        found = self._starts.get(kind) if among is None else None
        if found is None:
            found = Starts(self.span_table(kind), lambda i: self.span_event((kind,), i), among)
            if among is None:
                self._starts[kind] = found
        return found

    def span_table(self, *kinds: str) -> SpanTable | None:
        """The measured spans of these kinds as columns, in event order (see spans())."""
        found = self._spans.get(kinds)
        if found is None:
            table = self.boot.columns(*kinds)
            if table is not None:
                measured = (table.dur != NO_TIME) & ~table.flagged("upper_bound")
                table = table if measured.all() else table.take(np.flatnonzero(measured))
            found = self._spans[kinds] = (table, {})
        return found[0]

    def span_event(self, kinds: tuple[str, ...], row: int) -> Event:
        """Row `row` of span_table(*kinds) as an Event (the same object each time asked)."""
        table, made = self._spans[kinds]
        ev = made.get(row)
        if ev is None:
            ev = made[row] = table.event(row)
        return ev

    def text(self, log: ConsoleLog, folded: bool) -> tuple[str, list[int]] | None:
        """A log's lines as one text (lower-cased if `folded`), and where each line starts
        in it; None for a folded text that is not ASCII (lower-casing may change lengths)."""
        key = (id(log), folded)
        if key not in self._texts:
            if isinstance(log.text, SlicedText):
                whole, starts = log.text.whole, log.text.starts.tolist()
            else:
                whole = "\n".join(log.text)
                starts = [0] + list(accumulate(len(text) + 1 for text in log.text))[:-1]
            self._texts[key] = (whole.lower(), starts) if folded and whole.isascii() else \
                None if folded else (whole, starts)
        return self._texts[key]

    def candidates(self, log: ConsoleLog, pattern: re.Pattern) -> Iterable[int]:
        """The lines of a log on which `pattern` may match the message: those that hold a
        string every match holds (found by str.find over the whole text, not by trying
        the pattern on each line); a pattern without such a string is tried on each line."""
        needles, folded = _needles(pattern)
        found = self.text(log, folded) if needles else None
        if found is None or not found[1]:
            return range(len(log))
        return sorted({i for needle in needles for i in self.holding(log, needle.lower() if folded else needle,
                                                                       folded)})

    def holding(self, log: ConsoleLog, needle: str, folded: bool) -> list[int]:
        """The lines of a log that hold a string (in the lower-cased text if `folded`); rules
        look for the same words ("Starting "), so each is looked for once."""
        key = (id(log), needle, folded)
        lines = self._holding.get(key)
        if lines is None:
            whole, starts = self._texts[(id(log), folded)]
            lines = self._holding[key] = []
            at = whole.find(needle, starts[0])
            while at >= 0:
                i = bisect_right(starts, at) - 1
                lines.append(i)
                if i + 1 == len(starts):
                    break
                at = whole.find(needle, starts[i + 1])  # the rest of the line is tried by the match
        return lines


def _needles(pattern: re.Pattern) -> tuple[list[str] | None, bool]:
    """(strings one of which every match of the pattern holds, None if it has none; whether
    it ignores case anywhere).  Read from the pattern's parse: runs of literal characters,
    in groups, in each branch of an alternation, in a repeat that happens at least once."""
    folded = bool(pattern.flags & re.IGNORECASE)

    def needles(parsed) -> list[str] | None:
        nonlocal folded
        best: list[str] | None = None
        run: list[str] = []

        def consider(alternatives: list[str] | None) -> None:
            nonlocal best
            if alternatives and all(alternatives) and (
                    best is None or min(map(len, alternatives)) > min(map(len, best))):
                best = alternatives

        for op, av in parsed:
            if op == _sre.LITERAL:
                run.append(chr(av))
                continue
            consider(["".join(run)] if run else None)
            run = []
            if op == _sre.SUBPATTERN:  # (group, flags added, flags removed, contents)
                folded |= bool(av[1] & re.IGNORECASE)
                consider(needles(av[3]))
            elif op == _sre.BRANCH:
                each = [needles(branch) for branch in av[1]]
                consider(None if any(n is None for n in each) else [x for n in each for x in n])
            elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT) and av[0] >= 1:
                consider(needles(av[2]))
            elif op == _sre.ATOMIC_GROUP:
                consider(needles(av))
        consider(["".join(run)] if run else None)
        return best

    return needles(_parser.parse(pattern.pattern, pattern.flags)), folded


class Starts:
    """Spans by clock, sorted by start: which contain a given instant, without trying them all."""

    def __init__(self, table: SpanTable | None, event, among: np.ndarray | None = None):
        self.event = event  # a row of the table as an Event
        self.rows: dict[str, np.ndarray] = {}
        self.t: dict[str, np.ndarray] = {}
        self.end: dict[str, np.ndarray] = {}
        self.longest: dict[str, int] = {}
        if table is None:
            return
        for k, clock in enumerate(table.vocab["clock"]):
            rows = (table.clock == k) & (table.t != NO_TIME)
            rows = np.flatnonzero(rows if among is None else rows & among)
            if not len(rows):
                continue
            rows = rows[np.argsort(table.t[rows], kind="stable")]  # by start, then event order
            self.rows[clock], self.t[clock] = rows, table.t[rows]
            self.end[clock] = table.t[rows] + table.dur[rows]
            self.longest[clock] = int(table.dur[rows].max())

    def starting_in(self, clock: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per window [lo, hi), whether a span starts in it."""
        t = self.t.get(clock)
        if t is None:
            return np.zeros(len(lo), dtype=bool)
        i = np.searchsorted(t, lo)
        return (i < len(t)) & (t[np.minimum(i, len(t) - 1)] < hi)

    def containing(self, inner: Event) -> Event | None:
        """The first span (in event order) that `contains` inner."""
        if inner.t is None or inner.clock not in self.t:
            return None
        t = self.t[inner.clock]
        lo = int(np.searchsorted(t, inner.t - self.longest[inner.clock], side="left"))
        hi = int(np.searchsorted(t, inner.t, side="right"))
        around = self.end[inner.clock][lo:hi] > inner.t  # (and they started no later)
        for row in np.sort(self.rows[inner.clock][lo:hi][around]).tolist():
            ev = self.event(row)
            if contains(ev, inner):
                return ev
        return None


_index: LineIndex | None = None


def line_index(boot: Boot) -> LineIndex:
    """The index of the boot being advised (built once: every rule cites lines)."""
    global _index
    if _index is None or _index.boot is not boot:
        _index = LineIndex(boot)
    return _index


def find_lines(boot: Boot, pattern: re.Pattern) -> list[tuple[Line, re.Match]]:
    """Lines whose message (printk stamp removed) matches `pattern` at its start."""
    index, match, found = line_index(boot), pattern.match, []
    for log in boot.logs:
        for i in index.candidates(log, pattern):
            line = Line(log, i)
            m = match(line.message)
            if m:
                found.append((line, m))
    return found


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


def printing_in(ctx: Context, start: int | None, end: int | None) -> int:
    """The serial console's printing between two reference times (0 when either is unknown):
    the kernel waited for it there, so a stretch of its log that holds it is that much longer
    than the work it timed (a firmware's console at 9600 baud made a Sun's memory set-up take
    seconds)."""
    console = ctx.analysis.console
    if console is None or start is None or end is None:
        return 0
    return min(console.printing_between(start, end), max(0, end - start))


def one_cpu(boot: Boot) -> bool:
    """Whether the kernel ran on one CPU (`smp: Brought up 1 node, 1 CPU`): its console's
    printing then held up any work it did in the meantime, a worker's too."""
    up = boot.first_mark(km.SMP_UP)
    return up is not None and (up.attrs or {}).get("cpus") == 1


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


def first_lines(log: ConsoleLog, n: int) -> ConsoleLog:
    """The first n lines of a log (what a rule reads up to the end of the boot, when the log
    goes on far past it)."""
    if n >= len(log):
        return log
    return ConsoleLog.from_columns(log.file, log.clock, log.printed, log.t.numpy()[:n], log.text[:n],
                                   np.frombuffer(log.lineno, dtype=np.int32)[:n],
                                   np.frombuffer(log.nbytes, dtype=np.int32)[:n], log.consoled)


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


def spans(boot: Boot, *kinds: str, where: Callable[[SpanTable], np.ndarray] | None = None) -> list[Event]:
    """Events of these kinds that have a measured duration (not an upper bound: the oldest
    initcall form is timed until the next call, which says nothing about its own cost), in
    event order.  `where` picks rows from their columns first (a mask of the SpanTable), so
    that only the spans a rule looks at become objects."""
    index = line_index(boot)
    table = index.span_table(*kinds)
    if table is None:
        return []
    rows = np.flatnonzero(where(table)) if where is not None else range(len(table))
    return [index.span_event(kinds, int(i)) for i in rows]


def named(name: str) -> Callable[[SpanTable], np.ndarray]:
    """For spans(where=): the spans of one name."""
    return lambda table: table.where("name", lambda n: n == name)


def lasting(least: int) -> Callable[[SpanTable], np.ndarray]:
    """For spans(where=): the spans that lasted at least `least` ns."""
    return lambda table: table.dur >= least


def units(boot: Boot) -> list[Event]:
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
