"""The scheduler trace format (docs/rt-formats.md): one event a line, `TIME EVENT key=value...`.

Reading never raises on content.  A line that cannot be read (not text, no time, a
known event without its integer fields) is damage: the readable prefix before it is kept
and the damage reported with its line number.  Unknown events and keys are how the format
grows: they are skipped or kept with a warning.  Lines are sorted by time (stably), since
the recorder may append `switch` events from another buffer out of order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FORMAT_VERSION = 1

# The integer fields each known event must carry.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "server_create": ("server", "period", "budget", "prio"),
    "task_create": ("task", "period", "wcet", "deadline", "prio"),
    "replenish": ("server", "budget"),
    "deplete": ("server",),
    "server_resume": ("server",),
    "server_preempt": ("server",),
    "release": ("task", "job", "deadline"),
    "start": ("task", "job"),
    "preempt": ("task", "job"),
    "resume": ("task", "job"),
    "complete": ("task", "job"),
    "exit": ("task", "job"),
    "overrun": ("task", "job"),
    "miss": ("task", "job", "deadline"),
    "switch": ("prev_pid", "next_pid"),
    "overflow": ("lost",),
}
# Integer fields that may be absent (the simulator has no pids; cpu= is on job events of
# the multicore plugins only).
OPTIONAL_INT_FIELDS = {"task_create": ("pid", "server", "cpu"), "switch": ("cpu",),
                       **{name: ("cpu",) for name in ("start", "preempt", "resume", "complete")}}

_INTEGER = re.compile(r"[0-9]+")
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")
_HEADER = re.compile(r"#\s*rtsched-trace\s+(\d+)(.*)")


class TraceError(Exception):
    """The trace file cannot be opened at all."""


@dataclass(frozen=True)
class Event:
    time: int
    name: str
    fields: dict[str, int | str]
    line: int = 0

    def __getitem__(self, key: str) -> int | str:
        return self.fields[key]

    def format(self) -> str:
        return " ".join([str(self.time), self.name] + [f"{k}={v}" for k, v in self.fields.items()])


@dataclass(frozen=True)
class Problem:
    line: int
    message: str
    damage: bool   # False: a warning (unknown event, missing header)

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass
class Trace:
    events: list[Event]
    plugin: str | None = None
    problems: list[Problem] = field(default_factory=list)
    source: str = ""

    @property
    def damage(self) -> Problem | None:
        return next((p for p in self.problems if p.damage), None)


_SCENARIO = re.compile(r"==== rtsched-scenario (\S+) begin ====(.*?)==== rtsched-scenario \1 end", re.S)
_TRACE_BLOCK = re.compile(r"==== rtsched-trace begin ====\r?\n(.*?)==== rtsched-trace end ====", re.S)


def traces_in_console(text: str) -> dict[str, str]:
    """The traces a guest printed on its console, by scenario name: each scenario's output
    sits between "==== rtsched-scenario NAME begin ====" and "... NAME end ...", its trace
    between "==== rtsched-trace begin ====" and "==== rtsched-trace end ====" lines."""
    found = {}
    for scenario in _SCENARIO.finditer(text):
        block = _TRACE_BLOCK.search(scenario.group(2))
        if block:
            found[scenario.group(1)] = "".join(line.rstrip("\r") + "\n" for line in block.group(1).splitlines())
    return found


def read_trace(path: str | Path) -> Trace:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise TraceError(f"{path}: cannot read: {err}") from err
    return parse_trace(data, str(path))


def parse_trace(data: bytes | str, source: str = "<trace>") -> Trace:
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    trace = Trace([], source=source)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        trace.problems.append(Problem(len(lines), "last line has no newline: the trace may be truncated", False))
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        error = _read_line(line, number, trace)
        if error:
            unread = len(lines) - number
            more = f"; {unread} following line{'s' * (unread != 1)} not read" if unread else ""
            trace.problems.append(Problem(number, f"{error}{more}", True))
            break
    if trace.plugin is None and trace.events:
        trace.problems.append(Problem(0, "no '# rtsched-trace' header line: plugin unknown", False))
    trace.events.sort(key=lambda e: e.time)
    return trace


def _read_line(line: str, number: int, trace: Trace) -> str | None:
    """Adds the line's event to `trace`; returns what is wrong with a damaged line."""
    if _NOT_TEXT.search(line):
        return "not text (control characters or invalid UTF-8)"
    stripped = line.strip()
    if not stripped:
        return None
    if stripped.startswith("#"):
        if (header := _HEADER.match(stripped)) and trace.plugin is None:
            if int(header.group(1)) != FORMAT_VERSION:
                trace.problems.append(Problem(number, f"trace format version {header.group(1)}, this reader knows {FORMAT_VERSION}", False))
            options = dict(o.split("=", 1) for o in header.group(2).split() if "=" in o)
            trace.plugin = options.get("plugin", "")
        return None
    words = stripped.split()
    if not _INTEGER.fullmatch(words[0]):
        return f"time {words[0]!r} is not a non-negative integer (nanoseconds)"
    if len(words) < 2:
        return "no event name after the time"
    name = words[1]
    fields: dict[str, int | str] = {}
    for word in words[2:]:
        key, sep, value = word.partition("=")
        if not sep or not key:
            return f"{word!r} is not key=value"
        fields[key] = value
    required = REQUIRED_FIELDS.get(name)
    if required is None:
        trace.problems.append(Problem(number, f"unknown event {name!r} skipped", False))
        return None
    for key in required:
        if key not in fields:
            return f"{name} without {key}="
        if not _INTEGER.fullmatch(str(fields[key])):
            return f"{name}: {key}={fields[key]} is not a non-negative integer"
        fields[key] = int(fields[key])
    for key in OPTIONAL_INT_FIELDS.get(name, ()):
        if key in fields:
            if _INTEGER.fullmatch(str(fields[key])):
                fields[key] = int(fields[key])
            else:
                trace.problems.append(Problem(number, f"{name}: {key}={fields[key]} ignored (not an integer)", False))
                del fields[key]
    trace.events.append(Event(int(words[0]), name, fields, number))
    return None


def format_trace(events: list[Event], plugin: str) -> str:
    header = f"# rtsched-trace {FORMAT_VERSION} plugin={plugin}\n"
    return header + "".join(e.format() + "\n" for e in events)
