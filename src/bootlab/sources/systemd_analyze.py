"""systemd-analyze output: `time`, `blame`, `critical-chain` and `plot --json`.

    time            Startup finished in 2.1s (firmware) + 1.2s (loader) + 789ms (kernel)
                    + 1.1s (initrd) + 13.779s (userspace) = 18.9s
                    multi-user.target reached after 8.345s in userspace.
    blame           5.989s NetworkManager-wait-online.service
    critical-chain  multi-user.target @8.345s
                    └─tailscaled.service @7.439s +904ms
    plot --json     [{"name": "x.service", "activating": 2345678, "activated": ..., "time": ...}]

Time spans are systemd's format: `1min 9.608s`, `821ms`, `588us`, `2h 3min`.  The
(kernel) part ends where userspace (or the initrd) starts, on the kernel's monotonic
clock; critical-chain's @ times count from the start of userspace, and are the moment the
unit became active (its activation span ends there); plot --json times are monotonic
microseconds.  Unit names keep systemd's escapes (`dev-disk-by\\x2dlabel-root.device`).
"""

from __future__ import annotations

import html
import json
import re

from ..timeline import NS_PER_US, Boot, Clock, Event, Kind, Mark, SourceInfo
from .lines import clean, split

# Where systemd says the kernel's part ended; a printk "Run /init" line, if any, is preferred.
USERSPACE_START = "systemd.kernel-done"

# What the reference device's guest prints after ready (targets/rootfs.py), each output
# between its markers on the console: (name, systemd-analyze arguments; {unit} = the app's).
# Not `plot --json`: bookworm's systemd (252) has --json only for security and inspect-elf.
ANALYZE_COMMANDS = (("time", "time"), ("blame", "blame"), ("critical-chain", "critical-chain {unit}"))
# and when asked (rootfs.plot): the plot, an SVG (systemd_plot.py reads it)
PLOT_COMMAND = ("plot", "plot")


def marker(name: str, edge: str) -> str:
    """The console line before ("begin") or after ("end") one systemd-analyze output."""
    return f"==== bootlab-systemd-analyze {name} {edge} ===="


_MARKER = re.compile(r"==== bootlab-systemd-analyze (?P<name>[a-z-]+) (?P<edge>begin|end) ====")
_VARIANT = {"time": "systemd-time", "blame": "systemd-blame", "critical-chain": "systemd-critical-chain"}


FORMATS = ("systemd-time", "systemd-blame", "systemd-critical-chain", "systemd-plot-json")

_UNITS = {
    "y": 31_557_600 * 10**9,
    "month": 2_629_800 * 10**9,
    "w": 604_800 * 10**9,
    "d": 86_400 * 10**9,
    "h": 3_600 * 10**9,
    "min": 60 * 10**9,
    "s": 10**9,
    "ms": 10**6,
    "us": 10**3,
    "µs": 10**3,
    "ns": 1,
}
_SPAN_PART = re.compile(r"(\d+(?:\.\d+)?)(month|min|ms|us|µs|ns|y|w|d|h|s)(?![a-z])")
SPAN = r"(?:\d+(?:\.\d+)?(?:month|min|ms|us|µs|ns|y|w|d|h|s)(?: |(?=[^a-z])|$))+"
TIME_LINE = re.compile(r"Startup finished in (?P<parts>.+?)(?: = (?P<total>" + SPAN + r"))?\s*$")
TIME_PART = re.compile(r"(?P<span>" + SPAN + r")\s*\((?P<what>firmware|loader|kernel|initrd|userspace|soft reboot)\)")
REACHED = re.compile(r"^(?P<unit>\S+) reached after (?P<span>" + SPAN + r") in userspace")
BLAME = re.compile(r"^\s*(?P<span>" + SPAN + r")\s+(?P<unit>\S+)\s*$")
# The tree's ASCII form draws with `-` and "`": the root slice `-.slice` and the root mount
# `-.mount` are units, not tree; a line of backquotes (a Markdown fence) is no unit.
CHAIN = re.compile(r"^(?P<tree>(?:[\s│├└─|`]|-(?!\.(?:slice|mount)\b))*)(?P<unit>[^\s@+│├└─`]\S*)(?: @(?P<at>" + SPAN + r"))?(?: \+(?P<took>" + SPAN + r"))?\s*$")
CHAIN_HEADER = re.compile(r"^The time (?:when unit became active|after the unit is active|the unit took|the unit takes)")


def span_ns(text: str) -> int:
    """systemd time span -> ns ('1min 9.608s' -> 69608000000)."""
    total = 0
    found = False
    for number, unit in _SPAN_PART.findall(text):
        found = True
        if "." in number:
            whole, frac = number.split(".")
            scale = _UNITS[unit]
            total += int(whole) * scale + int(frac) * scale // 10 ** len(frac)
        else:
            total += int(number) * _UNITS[unit]
    if not found:
        raise ValueError(f"not a time span: {text!r}")
    return total


def sniff(lines: list[str]) -> dict[str, float]:
    text = [clean(line) for line in lines if line.strip()]
    n = max(1, len(text))
    scores = {name: 0.0 for name in FORMATS}
    if any(TIME_LINE.search(line) for line in text[:5]) and not any(line.startswith("[") for line in text[:3]):
        scores["systemd-time"] = 0.95
    scores["systemd-blame"] = sum(1 for line in text if BLAME.match(line)) / n
    chain = sum(1 for line in text if ("@" in line or "+" in line) and CHAIN.match(line))
    if any(CHAIN_HEADER.match(line) for line in text[:3]) or (chain / n > 0.5 and any("─" in line or "`-" in line for line in text)):
        scores["systemd-critical-chain"] = 0.95
    joined = "\n".join(lines).lstrip()
    if joined.startswith("[") and '"activating"' in joined and '"name"' in joined:
        scores["systemd-plot-json"] = 0.99
    return scores


def read_time(boot: Boot, file: str, text: str, lineno: int) -> bool:
    """`Startup finished in ...` (also found as a systemd[1] kernel-log line)."""
    m = TIME_LINE.search(text)
    if not m:
        return False
    parts = {p.group("what"): span_ns(p.group("span")) for p in TIME_PART.finditer(m.group("parts"))}
    if not parts:
        return False
    # The kernel's monotonic zero is the reference: firmware and loader come before it.
    firmware, loader = parts.get("firmware"), parts.get("loader")
    kernel = parts.get("kernel")
    initrd = parts.get("initrd", 0)
    spans: list[tuple[str, int, int]] = []
    if firmware is not None:
        spans.append(("firmware", -(firmware + (loader or 0)), firmware))
    if loader is not None:
        spans.append(("loader", -loader, loader))
    if kernel is not None:
        spans.append(("kernel", 0, kernel))
        if "initrd" in parts:
            spans.append(("initrd", kernel, initrd))
        userspace_start = kernel + initrd
        spans.append(("userspace", userspace_start, parts.get("userspace", 0)))
        boot.add(Event(Kind.MARKER, USERSPACE_START, Clock.PRINTK, kernel, None, file, lineno))
        # systemd's userspace clock starts where the kernel part (and initrd) ends.
        boot.anchor(Clock.USERSPACE, 0, Clock.PRINTK, userspace_start, f"{file}:{lineno}", observed=False)
        # The end is systemd's own total where it printed one: its parts are rounded each on
        # its own, so their sum can miss it by a digit.
        first = -((firmware or 0) + (loader or 0))
        total = m.group("total")
        end = first + span_ns(total) if total else userspace_start + parts.get("userspace", 0)
        boot.add(Event(Kind.MARKER, Mark.READY, Clock.PRINTK, end, None,
                       file, lineno, attrs={"rank": 1, "text": "systemd startup finished"}))
    if firmware is not None:
        boot.add(Event(Kind.MARKER, Mark.POWER_ON, Clock.PRINTK, -(firmware + (loader or 0)), None, file, lineno,
                       attrs={"source": "systemd-analyze time (firmware)"}))
    if loader is not None:
        boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, Clock.PRINTK, -loader, None, file, lineno))
    for name, start, dur in spans:
        boot.add(Event(Kind.PHASE, name, Clock.PRINTK, start, dur, file, lineno, "systemd-analyze time"))
    boot.meta.setdefault("systemd_time", {k: v for k, v in parts.items()})
    return True


# A shell's prompt and the command, as people paste several outputs into one file.
_COMMAND = re.compile(r"systemd-analyze\s+(?P<verb>time|blame|critical-chain)\b")
# systemd-analyze pipes a long output to `less`, whose status line comes with it when it is
# copied from the terminal; after "...skipping..." the view goes on further down the
# output, often showing again lines shown before.
_PAGER = re.compile(r"^(?:lines \d+-\d+(?:/\d+)?(?: \(END\))?(?:\.\.\.skipping\.\.\.)?|\(END\)|\.\.\.skipping\.\.\.)$")


def parse(boot: Boot, file: str, data: bytes, variant: str) -> None:
    """One output, or several pasted one after another (`time`, then `critical-chain`, then
    `blame`, each maybe after its command line): each line is read as the output it is in,
    which changes at a command line, at critical-chain's header and at a line only another
    output has."""
    lines = list(split(data))
    count = 0
    seen = {variant}
    if variant == "systemd-plot-json":
        count = _plot_json(boot, file, data)
    else:
        current = variant
        shown: set[str] | None = None  # the lines of this output read, once a pager scrolled it
        read: set[str] = set()
        for line in lines:
            text = clean(line.text).rstrip()
            if "&" in text:  # pasted into a web page: its tree drawn with `&#9492;&#9472;`
                text = html.unescape(text)
            if not text.strip() or text.lstrip().startswith("```"):  # (a Markdown fence around a paste)
                continue
            command = _COMMAND.search(text)
            if command:
                current = _VARIANT[command.group("verb")]
                shown, read = None, set()
                continue
            if _PAGER.match(text):
                shown = read
                continue
            if shown is not None and text in shown:
                continue  # the pager showing again what it showed before it scrolled
            read.add(text)
            if CHAIN_HEADER.match(text):
                current = "systemd-critical-chain"
                continue
            if read_time_output(boot, file, text, line.lineno):
                current = "systemd-time"
            elif m := BLAME.match(text):
                current = "systemd-blame"
                boot.add(Event(Kind.UNIT, m.group("unit"), Clock.USERSPACE, None, span_ns(m.group("span")), file,
                               line.lineno, m.group("unit"), attrs={"source": "blame"}))
            elif (m := CHAIN.match(text)) and (current == "systemd-critical-chain" or m.group("at") or m.group("took")):
                current = "systemd-critical-chain"
                _chain_unit(boot, file, line.lineno, m)
            else:
                boot.warn(file, line.lineno, f"not a {current} line: {text[:60]!r}")
                continue
            count += 1
            seen.add(current)
    if not count:
        boot.warn(file, 0, f"no {variant} records found")
    boot.sources.append(SourceInfo(file, "+".join(f for f in FORMATS if f in seen), len(lines), count))


def read_time_output(boot: Boot, file: str, text: str, lineno: int) -> bool:
    """A line of `systemd-analyze time`'s output (also the plot's title): `Startup finished
    in ...`, or when the default target was reached."""
    if read_time(boot, file, text, lineno):
        return True
    m = REACHED.match(text)
    if m:
        boot.add(Event(Kind.UNIT, m.group("unit"), Clock.USERSPACE, span_ns(m.group("span")), None, file, lineno,
                       m.group("unit"), attrs={"reached": True}))
    return m is not None


def _chain_unit(boot: Boot, file: str, lineno: int, m: re.Match) -> None:
    depth = len(m.group("tree")) // 2
    at = span_ns(m.group("at")) if m.group("at") else None
    took = span_ns(m.group("took")) if m.group("took") else None
    unit = m.group("unit")
    attrs = {"critical_chain": True, "depth": depth}
    if at is None:
        boot.add(Event(Kind.UNIT, unit, Clock.USERSPACE, None, took, file, lineno, unit, attrs=attrs))
    else:
        # @ is when the unit became active: its activation started `took` earlier.
        start = at - (took or 0)
        boot.add(Event(Kind.UNIT, unit, Clock.USERSPACE, start, took, file, lineno, unit, attrs=attrs))


def _plot_json(boot: Boot, file: str, data: bytes) -> int:
    try:
        units = json.loads(data.decode("utf-8", "replace"))
    except json.JSONDecodeError as err:
        boot.warn(file, err.lineno, f"not valid JSON: {err.msg}")
        return 0
    if not isinstance(units, list):
        boot.warn(file, 1, "expected a JSON array of units")
        return 0
    count = 0
    for i, unit in enumerate(units):
        if not isinstance(unit, dict) or "name" not in unit:
            boot.warn(file, 0, f"entry {i} is not a unit object")
            continue
        try:
            activating = int(unit.get("activating") or 0)
            activated = int(unit.get("activated") or 0)
            took = int(unit.get("time") or max(0, activated - activating))
        except (TypeError, ValueError):
            boot.warn(file, 0, f"entry {i} ({unit.get('name')}) has non-numeric times")
            continue
        if not activating:
            continue
        boot.add(Event(Kind.UNIT, str(unit["name"]), Clock.PRINTK, activating * NS_PER_US, took * NS_PER_US, file, 0,
                       str(unit["name"]), attrs={"source": "plot"}))
        count += 1
    return count


class ConsoleOutputs:
    """systemd-analyze's outputs printed on a console between marker() lines (the reference
    device's guest prints them after ready): each read as its own file would be, with the
    console's line numbers, and its text kept in boot.meta["systemd_analyze"]."""

    def __init__(self, boot: Boot, file: str) -> None:
        self.boot, self.file = boot, file
        self.name: str | None = None
        self.first = 0
        self.lines: list[str] = []

    def feed(self, text: str, lineno: int) -> bool:
        """Whether the console line belongs to an output (taken here)."""
        m = _MARKER.search(text)  # a login prompt may stand before it on its line
        if m is None:
            if self.name is not None:
                self.lines.append(text)
            return self.name is not None
        if m.group("edge") == "begin":
            if self.name is not None:
                self.boot.warn(self.file, lineno, f"systemd-analyze {self.name}: no end marker before the next output")
            self.name, self.first, self.lines = m.group("name"), lineno, []
        elif self.name == m.group("name"):
            self._parse()
            self.name = None
        return True

    def _parse(self) -> None:
        variant = _VARIANT.get(self.name)
        if self.name in ("bootchart", "plot"):  # an SVG: systemd-bootchart's, or systemd-analyze plot's
            self._svg()
            return
        if variant is None:
            self.boot.warn(self.file, self.first, f"systemd-analyze {self.name}: not an output bootlab reads")
            return
        text = "\n".join(self.lines) + "\n"
        self.boot.meta.setdefault("systemd_analyze", {})[self.name] = text
        # Blank lines ahead keep the console's numbering in what parse() reports.
        parse(self.boot, self.file, b"\n" * self.first + text.encode(), variant)

    def _svg(self) -> None:
        """An SVG printed on the console: read with the console's line numbers and kept in
        boot.meta; an unreadable one is a warning, not the end of the console's reading."""
        from . import systemd_bootchart, systemd_plot
        from .detect import NotALog  # here: detect imports the format table, which imports this module

        reader = systemd_bootchart if self.name == "bootchart" else systemd_plot
        text = "\n".join(self.lines) + "\n"
        self.boot.meta[f"systemd_{self.name}_svg"] = text
        try:
            reader.parse(self.boot, self.file, b"\n" * self.first + text.encode())
        except NotALog as err:
            self.boot.warn(self.file, err.line or self.first, f"{reader.FORMAT} SVG: {str(err).split(': ', 1)[-1]}")
