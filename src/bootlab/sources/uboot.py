"""U-Boot: the bootstage report, console lines, and vendor per-line timestamps.

The bootstage report (`bootstage report`, or CONFIG_BOOTSTAGE_REPORT before the kernel):

    Timer summary in microseconds (10 records):
           Mark    Elapsed  Stage
              0          0  reset
        224,325    224,325  board_init_f
      1,104,112     14,456  start_kernel

    Accumulated time:
                    10,123  dm_f

Marks are microseconds on the bootloader's timer, whose zero is reset (about power-on).
Console lines give the banner (`U-Boot SPL 2014.04 ...`, `U-Boot 2024.10 ...`), the
autoboot countdown (bootdelay), image reads with their own durations
(`4103240 bytes read in 276 ms`), and `Starting kernel ...`.  Some vendor builds stamp each
line with the bootloader timer: `[   0.114] DDR type LPDDR4X`.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, NS_PER_US, Boot, Clock, Event, Kind, Mark, SourceInfo
from .lines import clean, split

SUMMARY = re.compile(r"^\s*Timer summary in microseconds(?: \((?P<n>\d+) records\))?:")
RECORD = re.compile(r"^\s*(?P<mark>[\d,]+)\s+(?P<elapsed>[\d,]+)\s+(?P<stage>\S.*?)\s*$")
ACCUMULATED = re.compile(r"^\s*Accumulated time:")
ACC_RECORD = re.compile(r"^\s+(?P<time>[\d,]+)\s+(?P<stage>\S.*?)\s*$")
VENDOR_STAMP = re.compile(r"^\[\s*(?P<sec>\d+)\.(?P<frac>\d{1,3})\] ?(?P<msg>.*)$")
SPL_BANNER = re.compile(r"^U-Boot SPL (?P<version>\S+)")
BANNER = re.compile(r"^U-Boot (?P<version>\d{4}\.\d\d\S*)")
AUTOBOOT = re.compile(r"^Hit any key to stop autoboot:\s+(?P<delay>\d+)")
BYTES_READ = re.compile(r"^(?P<bytes>\d+) bytes read in (?P<ms>\d+) ms")
STARTING_KERNEL = re.compile(r"^(?:Starting kernel \.\.\.|## Starting application at|Transferring control to Linux)")
READING = re.compile(r"^(?:reading|Retrieving file:|Loading file) (?P<file>\S+)")

FORMAT = "uboot-bootstage"


def sniff(text: str) -> float:
    return 0.9 if SUMMARY.search(text) or "Accumulated time:" in text else 0.0


def _us(text: str) -> int:
    return int(text.replace(",", "")) * NS_PER_US


def read_bootstage(boot: Boot, file: str, lines) -> int:
    """Parse bootstage reports among `lines` (Line objects); returns records read."""
    mode = None
    records = 0
    previous: Event | None = None
    for line in lines:
        text = clean(line.text).rstrip()
        if SUMMARY.match(text):
            mode = "summary"
            continue
        if ACCUMULATED.match(text):
            mode = "accumulated"
            continue
        if mode == "summary":
            if text.strip().startswith("Mark") or not text.strip():
                if not text.strip() and records:
                    mode = None
                continue
            m = RECORD.match(text)
            if not m:
                mode = None
                continue
            t = _us(m.group("mark"))
            stage = m.group("stage")
            elapsed = _us(m.group("elapsed"))
            ev = Event(Kind.STAGE, stage, Clock.BOOTLOADER, t - elapsed, elapsed, file, line.lineno, "bootstage")
            boot.add(ev)
            if stage == "start_kernel":
                boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, Clock.BOOTLOADER, t, None, file, line.lineno))
            previous = ev
            records += 1
        elif mode == "accumulated":
            m = ACC_RECORD.match(text)
            if not m:
                mode = None
                continue
            boot.meta.setdefault("bootstage_accumulated", {})[m.group("stage")] = _us(m.group("time"))
            records += 1
    if previous is not None:
        boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, Clock.BOOTLOADER, 0, None, file, 0, attrs={"note": "bootstage reset"}))
    return records


def parse(boot: Boot, file: str, data: bytes) -> None:
    lines = list(split(data))
    records = read_bootstage(boot, file, lines)
    if not records:
        boot.warn(file, 0, "no bootstage records found")
    boot.sources.append(SourceInfo(file, FORMAT, len(lines), records))


class UbootLines:
    """Recognises U-Boot console lines; times come from the caller's clock."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.reading: str | None = None

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        def mark(name: str, **attrs) -> None:
            self.boot.add(Event(Kind.MARKER, name, clock, t, None, self.file, lineno, attrs=attrs or None))

        m = SPL_BANNER.match(text)
        if m:
            self.boot.meta.setdefault("bootloader", f"U-Boot SPL {m.group('version')}")
            mark(Mark.BOOTLOADER_START, stage="spl")
            return True
        m = BANNER.match(text)
        if m:
            self.boot.meta["bootloader"] = f"U-Boot {m.group('version')}"
            mark(Mark.BOOTLOADER_START, stage="u-boot")
            return True
        m = AUTOBOOT.match(text)
        if m:
            self.boot.meta["bootdelay"] = int(m.group("delay"))
            mark("bootloader.autoboot", delay=int(m.group("delay")))
            return True
        m = READING.match(text)
        if m:
            self.reading = m.group("file")
            return True
        m = BYTES_READ.match(text)
        if m:
            dur = int(m.group("ms")) * NS_PER_MS
            what = self.reading or "read"
            self.boot.add(
                Event(
                    Kind.STAGE,
                    f"load {what}",
                    clock,
                    None if t is None else t - dur,
                    dur,
                    self.file,
                    lineno,
                    "bootloader",
                    attrs={"bytes": int(m.group("bytes"))},
                )
            )
            self.reading = None
            return True
        if STARTING_KERNEL.match(text):
            mark(Mark.KERNEL_LOAD)
            return True
        return False
