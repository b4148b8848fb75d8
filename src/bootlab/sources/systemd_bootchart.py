"""systemd-bootchart's SVG (/run/log/bootchart-*.svg), the only output of the bootchart
Debian bookworm ships (systemd-bootchart 234).

The SVG is a drawing, but systemd-bootchart writes one element a line and leaves the
numbers behind it in comments, so it reads back:

    <!-- hz="25.000000" n="500" -->              sampling rate and sample count
    <!-- x="100.000000" y="20.000000" -->        scale: x graph units per second
    <!-- rel="0" f="1" -->                       relative times, filtered processes
    <!-- CPU utilization graph -->              rect.cpu / rect.wait per sample, height
    <!-- IO utilization graph - in -->          rect.bi / rect.bo, relative to the peak,
                                                 whose "N.NNmb/sec" label gives the scale
    <!-- Process graph -->
    <!-- systemd [1] ppid=0 runtime=123.456ms -->
      <rect class="ps" x="71.2" y="0" width="412.0" height="20.0" />
    <text ...>System: Linux 6.1.0-13-amd64 #1 SMP ... x86_64</text>    the title, drawn last
    <text ...>Log start time: 0.712s</text>      (the monotonic clock when logging began)

A graph x is time_to_graph(t - graph_start): seconds times the x scale, where graph_start
is the kernel's boot (the monotonic clock's zero, i.e. the printk clock), or with rel=1 the
log start.  So every time here is on the printk clock.  A process without its rect was
filtered out (one sample, or no CPU time): it has no times and is only counted.
"""

from __future__ import annotations

import itertools
import re

from ..timeline import NS_PER_S, Boot, Clock, Event, Kind, Mark, SourceInfo
from . import bootchart
from .errors import NotALog
from .lines import split

FORMAT = "systemd-bootchart"
SIGNATURE = "This file is a bootchart SVG file"
_OPTION = re.compile(r'(\w+)="([^"]*)"')
_SECTION = re.compile(r"^<!-- (?P<name>CPU utilization graph|Wait time aggregation box|IO utilization graph - "
                      r"(?:in|out)|Process graph|initcall|Pss memory size graph|entropy pool graph) -->$")
_PROCESS = re.compile(r"^<!-- (?P<name>.*) \[(?P<pid>\d+)\] ppid=(?P<ppid>-?\d+) runtime=(?P<ms>[\d.]+)ms -->$")
_RECT = re.compile(r'^<rect class="(?P<cls>\w+)" x="(?P<x>[-\d.]+)" y="[-\d.]+" width="(?P<w>[-\d.]+)" '
                   r'height="(?P<h>[-\d.]+)" />$')
_TEXT = re.compile(r"^<text [^>]*>(?P<label>[^<]*)")
_PEAK = re.compile(r">(?P<mb>[\d.]+)mb/sec<")
# Which rects of which graph are which series (the CPU graphs' overall ones only).
_SERIES = {("CPU utilization graph", "cpu"): "cpu busy %", ("Wait time aggregation box", "wait"): "cpu iowait %",
           ("IO utilization graph - in", "bi"): "disk read KiB/s",
           ("IO utilization graph - out", "bo"): "disk write KiB/s"}
GRAPH_HEIGHT = 5  # the utilisation graphs are 5 y-scale units high (a full bar)


def sniff(lines: list[str]) -> float:
    return 1.0 if any(SIGNATURE in line for line in lines[:20]) else 0.0


class _Reader:
    def __init__(self, boot: Boot, path: str):
        self.boot, self.path = boot, path
        self.options: dict[str, str] = {}
        self.log_start: float | None = None
        self.section = ""
        self.section_lines: dict[str, int] = {}  # each graph's first line: where its warnings point
        self.in_header = True
        self.overall = True  # in a CPU graph: the overall one (not a per-CPU one)
        self.bars: dict[str, list[tuple[int, float]]] = {}  # series -> (t, fraction of the graph)
        self.peaks: dict[str, float] = {}  # IO series -> its peak in KiB/s
        self.spans: list[Event] = []
        self.processes = self.filtered = 0
        self.pending: tuple[int, re.Match] | None = None  # a process comment waiting for its rect

    def seconds(self, x: float) -> int:
        """A graph x as printk-clock nanoseconds."""
        offset = self.log_start if self.options.get("rel") == "1" else 0.0
        return round((x / self.scale_x + offset) * NS_PER_S)

    def header(self, lineno: int, text: str) -> None:
        """The options (comments before the first graph) and the title's texts (written
        after the graphs: svg_do draws the title last)."""
        if _SECTION.match(text):
            self.in_header = False
        if self.in_header and text.startswith("<!--") and '="' in text:
            self.options.update(_OPTION.findall(text))
            return
        m = _TEXT.match(text)
        if m is None:
            return
        label = m.group("label")
        key, _, value = label.partition(": ")
        if key == "System":
            words = value.split()
            if len(words) >= 2:
                self.boot.meta.setdefault("kernel_version", words[1])
                self.boot.meta.setdefault("bootchart_uname", value)
        elif key == "Boot options":
            self.boot.meta.setdefault("cmdline", value)
        elif key == "Log start time":
            try:
                self.log_start = float(value.rstrip("s"))
            except ValueError:
                self.boot.warn(self.path, lineno, f"unreadable log start time {value!r}")
        elif key == "Graph data":
            self.boot.meta.setdefault("bootchart_samples", value)

    @property
    def scale_x(self) -> float:
        return float(self.options["x"])

    @property
    def scale_y(self) -> float:
        return float(self.options["y"])

    def start(self, lineno: int) -> None:
        """At the first graph: the header must have given the scales."""
        try:
            if self.scale_x <= 0 or self.scale_y <= 0:
                raise ValueError
        except (KeyError, ValueError):
            raise NotALog(self.path, lineno, "no x and y scales in the SVG's header comments "
                                             "(<!-- x=\"...\" y=\"...\" -->): its times cannot be read") from None
        if self.options.get("rel") == "1" and self.log_start is None:
            raise NotALog(self.path, lineno, "relative times (rel=1) without a \"Log start time\"")

    def line(self, lineno: int, text: str) -> None:
        m = _SECTION.match(text)
        if m is not None:
            if not self.section:
                self.start(lineno)
            self.close_process()
            self.section = m.group("name")
            self.section_lines.setdefault(self.section, lineno)
            return
        if not self.section:
            return
        if self.section == "Process graph":
            self.process_line(lineno, text)
        elif text.startswith("<text "):
            if "CPU[" in text:
                self.overall = "CPU[overall]" in text
            peak = _PEAK.search(text)
            if peak is not None and self.section.startswith("IO"):
                name = "disk read KiB/s" if self.section.endswith("in") else "disk write KiB/s"
                self.peaks[name] = float(peak.group("mb")) * 1024.0
        elif text.startswith("<rect "):
            self.bar(lineno, text)

    def bar(self, lineno: int, text: str) -> None:
        m = _RECT.match(text)
        if m is None:
            self.boot.warn(self.path, lineno, "unreadable rect")
            return
        name = _SERIES.get((self.section, m.group("cls")))
        if name is None or not self.overall:
            return
        x, w, h = float(m.group("x")), float(m.group("w")), float(m.group("h"))
        # A bar stands for the interval before its sample: its value is the sample's, at its end.
        self.bars.setdefault(name, []).append((self.seconds(x + w), h / (GRAPH_HEIGHT * self.scale_y)))

    def process_line(self, lineno: int, text: str) -> None:
        if text.startswith("<!--"):
            m = _PROCESS.match(text)
            if m is None and text.startswith("<!-- idle detected"):
                return
            self.close_process()  # the rect after an unreadable comment is not the process before's
            if m is None:
                self.boot.warn(self.path, lineno, "unreadable process comment")
                return
            self.pending = (lineno, m)
        elif text.startswith('<rect class="ps"'):
            rect = _RECT.match(text)
            if self.pending is None or rect is None:
                self.boot.warn(self.path, lineno, "a process rect without its process comment" if rect
                               else "unreadable process rect")
                return
            first, m = self.pending
            self.pending = None
            pid = int(m.group("pid"))
            self.spans.append(Event(Kind.PROCESS, m.group("name"), Clock.PRINTK, self.seconds(float(rect.group("x"))),
                                round(float(rect.group("w")) / self.scale_x * NS_PER_S), self.path, first,
                                f"pid {pid}", attrs={"pid": pid, "ppid": int(m.group("ppid")),
                                                     "cpu_ms": round(float(m.group("ms")))}))
            if pid == 1:
                self.boot.add(Event(Kind.MARKER, Mark.USERSPACE_START, Clock.PRINTK,
                                    self.seconds(float(rect.group("x"))), None, self.path, first,
                                    attrs={"text": f"PID 1 ({m.group('name')}) first sampled"}))

    def add_processes(self) -> None:
        """The spans, less the long-lived kernel threads (as the bootchart reader leaves them out)."""
        if not self.spans:
            return
        first, last = min(ev.t for ev in self.spans), max(ev.end for ev in self.spans)
        last -= round(NS_PER_S / float(self.options.get("hz") or 25) / 2)  # the graph's rounding: within a sample
        hidden = 0
        for ev in self.spans:
            life = {"ppid": ev.attrs["ppid"], "start": ev.t, "last": ev.end, "memory": True}
            if bootchart.long_lived_kernel_thread(ev.attrs["pid"], life, first, last):
                hidden += 1
            else:
                self.boot.add(ev)
        self.processes = len(self.spans) - hidden
        if hidden:
            self.boot.warn(self.path, self.section_lines["Process graph"], f"{hidden} long-lived kernel threads (kthreadd and its children alive to "
                                         "the end, for most of the chart) are left out, as for bootchart's logs")

    def close_process(self) -> None:
        """A process comment with no rect after it: filtered out by systemd-bootchart."""
        if self.pending is not None:
            self.filtered += 1
            self.pending = None

    def finish(self, last_line: int) -> None:
        self.close_process()
        if not self.section:
            raise NotALog(self.path, last_line, "no graph in the SVG: truncated before its process graph")
        graph_of = {name: graph for (graph, _cls), name in _SERIES.items()}
        for name, bars in self.bars.items():
            full = 100.0 if name.startswith("cpu") else self.peaks.get(name)
            if full is None:
                self.boot.warn(self.path, self.section_lines[graph_of[name]],
                               f"{name}: no peak label, the series is left out")
                continue
            self.boot.series.setdefault(name, (Clock.PRINTK, []))[1].extend((t, v * full) for t, v in bars)
        self.add_processes()
        if self.filtered:
            self.boot.warn(self.path, self.section_lines.get("Process graph", last_line), f"{self.filtered} processes filtered out by systemd-bootchart "
                                         "(one sample or no CPU time) have no times: left out")
        if not self.processes:
            self.boot.warn(self.path, last_line, "no process in the SVG")


def parse(boot: Boot, path: str, data: bytes) -> None:
    reader = _Reader(boot, path)
    lines = list(split(data))
    if not sniff(list(itertools.islice((line.text for line in lines if line.text.strip()), 20))):
        raise NotALog(path, 1, f"not a systemd-bootchart SVG (no {SIGNATURE!r} comment at its start)")
    for line in lines:  # the header, whose title stands at the end
        reader.header(line.lineno, line.text.strip())
    for line in lines:
        reader.line(line.lineno, line.text.strip())
    last = lines[-1].lineno if lines else 0
    if not any(line.text.strip() == "</svg>" for line in lines[-5:]):
        boot.warn(path, last, "the SVG ends without </svg>: truncated, read up to here")
    reader.finish(last)
    boot.sources.append(SourceInfo(path, FORMAT, len(lines), reader.processes))
