"""`systemd-analyze plot`'s SVG: every unit's activation on the kernel's monotonic clock.

Bookworm's systemd (252) has no `plot --json`; its SVG carries the same times, drawn one
element a line, at a fixed scale (100 px a second unless `--scale-svg` changed it; the
kernel's bar, as long as the `(kernel)` figure of the title, tells which):

    <text x="20" y="50">Startup finished in 6.513s (kernel) + 21.119s (userspace) = 27.632s
    graphical.target reached after 20.829s in userspace.</text><g transform="translate(20.000,100)">
      <rect class="kernel" x="0.000" y="0.000" width="651.347" height="19.000" />
      <rect class="active" x="651.347" y="20.000" width="2111.917" height="19.000" />       systemd itself:
      <rect class="generators" x="701.441" y="20.000" width="166.949" height="19.000" />   its generators,
      <rect class="unitsload" x="868.856" y="20.000" width="158.091" height="19.000" />    loading units
      <text class="left" x="656.347" y="34.000">systemd</text>
      <rect class="activating" x="1031.602" y="120.000" width="1413.975" height="19.000" />
      <rect class="active" x="2445.577" y="120.000" width="317.687" height="19.000" />
      <text class="left" x="1036.602" y="134.000">dev-vda.device (14.139s)</text>

Each row (y / 20) is one unit: its `activating` bar is its start job, from when it began
to activate to when it was active (what blame and critical-chain's `+` report), x / scale
seconds after the kernel started: the printk clock.  systemd's own row gives what it did
before any unit (security modules, generators, loading unit files), read as units named in
parentheses so that they are never taken for units to mask.  Versions from 254 wrap each
row in a <g> with a <title> tooltip; the bars and labels are the same.
"""

from __future__ import annotations

import itertools
import re

from ..timeline import NS_PER_S, Boot, Clock, Event, Kind, SourceInfo
from .errors import NotALog
from .lines import split
from .systemd_analyze import read_time_output, span_ns

FORMAT = "systemd-plot"
SIGNATURE = "This file is a systemd-analyze SVG file"
PX_PER_S = 100.0  # systemd-analyze's SCALE_X at --scale-svg=1
ROW = 20.0  # SCALE_Y: px a row
SCALE_FACTORS = (1, 2, 0.5, 4, 0.25, 5, 10, 0.1)  # --scale-svg values a scale is snapped to
ROUNDING = 0.0005  # s: how far systemd-analyze time's figures may be from the times drawn
_RECT = re.compile(r'^<rect class="(?P<cls>[\w-]+)" x="(?P<x>-?[\d.]+)" y="(?P<y>-?[\d.]+)" '
                   r'width="(?P<w>-?[\d.]+)" height="[\d.]+" />$')
_LABEL = re.compile(r'^<text class="(?:left|right)" x="-?[\d.]+" y="(?P<y>-?[\d.]+)">(?P<label>[^<]*)</text>$')
_TOOK = re.compile(r"^(?P<name>\S+) \((?P<took>[^()]+)\)$")
_TITLE = re.compile(r'^<text x="20" y="50">(?P<text>.*)$')
_KERNEL_FIGURE = re.compile(r"(?P<span>[\d.hminsu ]+?) \(kernel\)")
# systemd's own row: what it did before its first unit, shown as units in parentheses.
MANAGER = {"security": "(security setup)", "generators": "(generators)", "unitsload": "(loading unit files)"}
BARS = {"activating", "active", "deactivating", "kernel", "initrd", "firmware", "loader", "userspace",
        "soft-reboot", *MANAGER}


def sniff(lines: list[str]) -> float:
    return 1.0 if any(SIGNATURE in line for line in lines[:20]) else 0.0


class _Row:
    def __init__(self, lineno: int):
        self.lineno = lineno
        self.bars: dict[str, tuple[float, float]] = {}  # class -> (x, width)
        self.label = ""


def _rows(boot: Boot, path: str, lines) -> tuple[dict[int, _Row], str, int]:
    """The plot's rows (by y), its title text (systemd-analyze time's), and the title's line."""
    rows: dict[int, _Row] = {}
    title, title_line, in_title, in_plot = [], 0, False, False
    for line in lines:
        text = line.text.strip()
        if in_title:
            head, closed, _ = text.partition("</text>")
            title.append(head)
            in_title = not closed
            in_plot = in_plot or "<g transform=" in text
            continue
        m = _TITLE.match(text)
        if m:
            head, closed, _ = m.group("text").partition("</text>")
            title, title_line, in_title = [head], line.lineno, not closed
            in_plot = "<g transform=" in text
            continue
        if text.startswith("<g transform="):
            if in_plot:
                break  # the second group is the legend
            in_plot = True
            continue
        if not in_plot:
            continue
        m = _RECT.match(text)
        if m and m.group("cls") in BARS:
            row = rows.setdefault(round(float(m.group("y")) / ROW), _Row(line.lineno))
            row.bars[m.group("cls")] = (float(m.group("x")), float(m.group("w")))
            continue
        m = _LABEL.match(text)
        if m:
            row = rows.get(round((float(m.group("y")) - 14.0) / ROW))
            if row is None:
                boot.warn(path, line.lineno, f"a label with no bars on its row: {m.group('label')[:60]!r}")
            else:
                row.label = m.group("label")
    return rows, "\n".join(title), title_line


def _scale(rows: dict[int, _Row], title: str) -> float:
    """Pixels a second: the kernel's bar against the title's (kernel) figure, which is
    rounded to the millisecond, so a scale systemd-analyze is given (100 px a second times
    --scale-svg's factor) within that rounding is taken as it is; else the default."""
    kernel = next((r.bars["kernel"] for r in rows.values() if "kernel" in r.bars), None)
    m = _KERNEL_FIGURE.search(title)
    if kernel is None or m is None or kernel[1] <= 0:
        return PX_PER_S
    try:
        seconds = span_ns(m.group("span").strip()) / NS_PER_S
    except ValueError:
        return PX_PER_S
    if seconds <= ROUNDING:
        return PX_PER_S
    low, high = kernel[1] / (seconds + ROUNDING), kernel[1] / (seconds - ROUNDING)
    return next((PX_PER_S * f for f in SCALE_FACTORS if low <= PX_PER_S * f <= high), kernel[1] / seconds)


LABEL_AGREES = 2_000_000  # ns: a bar and its label's time (to the ms) that differ less agree


def _label_time(m: re.Match | None) -> int | None:
    """The time in a unit's label (`dev-vda.device (14.139s)`), if it has a readable one."""
    try:
        return span_ns(m.group("took")) if m else None
    except ValueError:
        return None


def parse(boot: Boot, path: str, data: bytes) -> None:
    lines = list(split(data))
    if not sniff(list(itertools.islice((line.text for line in lines if line.text.strip()), 20))):
        raise NotALog(path, 1, f"not a systemd-analyze plot (no {SIGNATURE!r} comment at its start)")
    rows, title, title_line = _rows(boot, path, lines)
    if title and "systemd_time" not in boot.meta:  # the console printed `time` itself before the plot
        for k, text in enumerate(title.split("\n")):
            read_time_output(boot, path, text, title_line + k)
    scale = _scale(rows, title)

    def ns(px: float) -> int:
        return round(px / scale * NS_PER_S)

    count = 0
    for row in rows.values():
        if row.label == "systemd":
            for cls, name in MANAGER.items():
                if cls in row.bars:
                    x, w = row.bars[cls]
                    boot.add(Event(Kind.UNIT, name, Clock.PRINTK, ns(x), ns(w), path, row.lineno, name,
                                   attrs={"source": "plot", "manager": True}))
                    count += 1
            continue
        if "activating" not in row.bars:
            continue  # the kernel's, the initrd's, the firmware's bars: systemd-analyze time's phases
        m = _TOOK.match(row.label)
        name = m.group("name") if m else row.label
        if not name:
            boot.warn(path, row.lineno, "a unit's bars without its name")
            continue
        x, w = row.bars["activating"]
        took = _label_time(m)
        # The bar against its label (what blame says): a unit whose bar runs on to the plot's
        # end (systemd 238 drew a Galaxy S4's bluetooth.service so, 30.2 s, labelled 1.250s)
        # took what the label says; otherwise the bar, to 10 µs where the label has ms.
        dur = took if took is not None and abs(ns(w) - took) > LABEL_AGREES else ns(w)
        boot.add(Event(Kind.UNIT, name, Clock.PRINTK, ns(x), dur, path, row.lineno, name, attrs={"source": "plot"}))
        count += 1
    last = lines[-1].lineno if lines else 0
    if not any(line.text.strip() == "</svg>" for line in lines[-5:]):
        boot.warn(path, last, "the SVG ends without </svg>: truncated, read up to here")
    if not count:
        boot.warn(path, last, "no units in the plot")
    boot.sources.append(SourceInfo(path, FORMAT, len(lines), count))
