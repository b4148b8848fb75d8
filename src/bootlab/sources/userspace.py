"""Userspace on the console or in the kernel log: init, services and the ready marker.

Recognises systemd's console status lines (`[  OK  ] Started X.`, `Starting X...`,
`[FAILED]`, with or without ANSI colour), the same messages logged as `systemd[1]: ...`
in the kernel log, bootlab's own markers (`bootlab-mark: NAME`, printed by the reference
device's init), and the line that says the application is ready.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..timeline import Boot, Clock, Event, Kind, Mark

STATUS = re.compile(r"^\[\s*(?P<status>OK|FAILED|TIME|DEPEND|SKIP|\*+\s*)\s*\] (?P<verb>Started|Finished|Reached target|Mounted|Listening on|Created slice|Activated swap|Failed to start|Stopped|Found device|Timed out waiting for|Dependency failed for|Condition check resulted in)? ?(?P<what>.*?)\.?\s*$")
STARTING = re.compile(r"^\s+(?:Starting|Mounting|Activating swap|Listening on) (?P<what>.*?)\.{0,3}\s*$")
SYSTEMD_MSG = re.compile(r"^systemd\[1\]: (?P<verb>Starting|Started|Finished|Reached target|Mounting|Mounted|Listening on|Failed to start|Startup finished in|Queued start job for default target) ?(?P<what>.*?)\.{0,3}\s*$")
BOOTLAB_MARK = re.compile(r"bootlab-mark: (?P<name>[\w.\-]+)(?P<rest>.*)$")
# What feed() looks for first: anything else it leaves alone.
WORDS = ("bootlab-mark: ",)
STARTS = ("systemd[1]: ", "[", " ")
_UNIT_NAME = re.compile(r"^(?P<unit>[\w@.\\\-:]+\.(?:service|target|mount|socket|device|slice|swap|path|timer|scope|automount)) - ")

# Ready candidates, best first: the first match of the best-ranked pattern ends the boot.
DEFAULT_READY = (
    r"\bBOOTLAB[- ]READY\b",
    r"Startup finished in ",
    r"Reached target (?:Multi-User System|Graphical Interface|multi-user\.target|graphical\.target)",
    r"\blogin: ?$",
    r"Please press Enter to activate this console",
)


def required_literal(pattern: re.Pattern) -> str | None:
    """The longest run of plain characters every match of `pattern` contains, if there is
    one: a cheap `in` test before the (far dearer) search, for every line of a big log."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        from re import _parser  # the stdlib's own pattern parser

        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # a private module: if it ever changes, lines are simply searched
        return None
    best, run = "", ""
    for op, arg in parsed:
        if op is _parser.LITERAL:
            run += chr(arg)
            best = max(best, run, key=len)
        else:
            run = ""
    return best or None


@dataclass
class Patterns:
    """Which lines mean "application started" and "application ready"."""

    ready: list[re.Pattern] = field(default_factory=lambda: [re.compile(p) for p in DEFAULT_READY])
    app_start: list[re.Pattern] = field(default_factory=list)

    @classmethod
    def from_options(cls, ready: str | None = None, app_start: str | None = None) -> "Patterns":
        patterns = cls()
        if ready:
            patterns.ready = [re.compile(ready)]
        if app_start:
            patterns.app_start = [re.compile(app_start)]
        return patterns


class UserspaceReader:
    """Turns status lines into unit spans and markers, for one log."""

    def __init__(self, boot: Boot, file: str, patterns: Patterns):
        self.boot = boot
        self.file = file
        self.patterns = patterns
        # Each pattern's required text, tested with `in` before its search (None: always search).
        self.ready = [(required_literal(p), rank, p) for rank, p in enumerate(patterns.ready)]
        self.app_start = [(required_literal(p), p) for p in patterns.app_start]
        self.starting: dict[str, tuple[str, int | None, int]] = {}  # what -> (clock, t, line)
        self.services_started = False

    def _mark(self, name: str, clock: str, t: int | None, lineno: int, **attrs) -> None:
        self.boot.add(Event(Kind.MARKER, name, clock, t, None, self.file, lineno, attrs=attrs or None))

    def patterns_seen(self, clock: str, t: int | None, text: str, lineno: int) -> None:
        """The ready and app-start patterns: checked on every line, whatever else it is.
        The best-ranked (first-listed) matching ready pattern names the line's rank."""
        for hint, rank, pattern in self.ready:
            if (hint is None or hint in text) and pattern.search(text):
                self._mark(Mark.READY, clock, t, lineno, rank=rank, text=text.strip()[:120])
                break
        for hint, pattern in self.app_start:
            if (hint is None or hint in text) and pattern.search(text):
                self._mark(Mark.APP_START, clock, t, lineno)

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        """Interpret one cleaned line (or kernel-log message); True if recognised.  Only a
        text holding one of WORDS or starting with one of STARTS can be."""
        if "bootlab-mark: " in text:
            m = BOOTLAB_MARK.search(text)
            if m:
                self._mark(m.group("name"), clock, t, lineno, bootlab=True,
                           detail=m.group("rest").strip() or None)
                return True
        if text.startswith("systemd[1]: "):
            m = SYSTEMD_MSG.match(text)
            if m:
                self._status(m.group("verb"), m.group("what"), clock, t, lineno)
                return True
            return False
        if text.startswith("["):
            m = STATUS.match(text)
            if m and m.group("verb"):
                self._status(m.group("verb"), m.group("what"), clock, t, lineno, m.group("status").strip())
                return True
        elif text.startswith(" "):
            m = STARTING.match(text)
            if m:
                self._status("Starting", m.group("what"), clock, t, lineno)
                return True
        return False

    def _status(self, verb: str, what: str, clock: str, t: int | None, lineno: int, status: str = "OK") -> None:
        if verb == "Queued start job for default target" or (
            not self.services_started and verb in ("Starting", "Started", "Mounting", "Listening on")
        ):
            if not self.services_started:
                self._mark(Mark.SERVICES_START, clock, t, lineno)
                self.services_started = True
            if verb.startswith("Queued"):
                return
        if verb == "Startup finished in":
            return
        m = _UNIT_NAME.match(what)
        unit = m.group("unit") if m else what
        key = what
        if verb in ("Starting", "Mounting"):
            self.starting[key] = (clock, t, lineno)
            return
        begun = self.starting.pop(key, None)
        attrs = {"status": status, "verb": verb}
        if begun and begun[0] == clock and begun[1] is not None and t is not None:
            start, dur = begun[1], t - begun[1]
        else:
            start, dur = t, None
        self.boot.add(Event(Kind.UNIT, unit, clock, start, dur, self.file, lineno, unit, attrs=attrs))

    def close(self) -> None:
        for what, (clock, t, lineno) in self.starting.items():
            m = _UNIT_NAME.match(what)
            unit = m.group("unit") if m else what
            self.boot.add(
                Event(Kind.UNIT, unit, clock, t, None, self.file, lineno, unit, attrs={"status": "started, never finished"})
            )
        self.starting.clear()


def link_marks(boot: Boot) -> None:
    """bootlab's markers are written to the kernel log and then to the console: the same
    instant on the printk clock and the host clock.  Each such pair is an anchor.  A pair
    NAME.start / NAME.end on one clock is a step of the boot (loading the scheduler...)."""
    seen: dict[str, dict[str, list]] = {}
    for ev in boot.of_kind(Kind.MARKER):
        if ev.t is not None and (ev.attrs or {}).get("bootlab"):
            seen.setdefault(ev.name, {}).setdefault(ev.clock, []).append(ev)
    for name, clocks in seen.items():
        printk, host = clocks.get(Clock.PRINTK), clocks.get(Clock.HOST)
        if printk and host:
            p, h = printk[0], host[0]
            boot.anchor(Clock.PRINTK, p.t, Clock.HOST, h.t, f"{h.file}:{h.line} (bootlab-mark {name})")
        if not name.endswith(".start"):
            continue
        step = name[: -len(".start")]
        ends = seen.get(f"{step}.end", {})
        # The host clock, when present, is the one the boot is timed on.
        for clock in (Clock.HOST, Clock.PRINTK):
            if clocks.get(clock) and ends.get(clock):
                begin, end = clocks[clock][0], ends[clock][0]
                boot.add(Event(Kind.STEP, step, clock, begin.t, max(0, end.t - begin.t), begin.file, begin.line,
                               "steps", attrs={"end": f"{end.file}:{end.line}"}))
                break
