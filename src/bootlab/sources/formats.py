"""Every input format as one record: its name, how much a file looks like it, and its reader.

Detection (detect.py) and reading (read_one in __init__.py) both derive from the table
below, so a new format is one module and one record.  Detection tries the records in
table order and takes the first whose score reaches its threshold: the order settles the
few files two formats could read (a journal line also starts with a printk stamp).
A record with a `refusal` is a shape bootlab recognises and will not read (a wall clock
to the second): detecting it is the error, with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from ..timeline import Boot
from . import (bootchart, bootlab_capture, cbmem, console, fastboot, ftrace, grabserial, journal_export, journal_json, journal_short,
               lava, printk,
               systemd_analyze, systemd_bootchart, systemd_plot, uboot, userspace)
from .lines import clean, decode, looks_binary
from .userspace import Patterns


@dataclass(frozen=True, slots=True)
class Input:
    """What a reader is given: the file's name, its bytes (None for a directory), the
    user's patterns, and the boot asked for in a log of several (None: the last)."""

    path: str
    data: bytes | None
    patterns: Patterns
    which: int | None = None


class Sample:
    """The start of a file, as every sniffer looks at it (scores computed once, when asked)."""

    def __init__(self, data: bytes | None, path: str = ""):
        self.data = data
        self.path = path

    @cached_property
    def binary(self) -> bool:
        return self.data is not None and looks_binary(self.data)

    @cached_property
    def lines(self) -> list[str]:
        """Up to 400 non-blank clean lines from the first 256 KiB."""
        if self.data is None:
            return []
        lines = [clean(line) for line in decode(self.data[:262144]).split("\n")]
        return [line for line in lines if line.strip()][:400]

    @cached_property
    def printk(self) -> dict[str, float]:
        return printk.sniff(self.lines)

    @cached_property
    def systemd(self) -> dict[str, float]:
        return systemd_analyze.sniff(self.lines)


@dataclass(frozen=True, slots=True)
class InputFormat:
    name: str
    sniff: Callable[[Sample], float]  # 0..1: how much of the sample reads as this format
    threshold: float  # the score from which a file is taken as this format
    read: Callable[[Boot, Input], None] | None = None
    bytes_level: bool = False  # sniffs the raw bytes (a binary or compressed container)
    directory: bool = False  # can be a directory
    boots: bool = False  # lines of one log that may hold several boots (multiboot.select)
    refusal: str = ""  # recognised but not read: why, and what to save instead


def _boot_words(sample: Sample) -> float:
    """A console transcript: any printk stamp, or the words of firmware, bootloader, the
    kernel (a kernel log without printk times, its banner gone when its buffer wrapped: read
    so, it says that nothing can be timed) or init."""
    words = ("U-Boot", "Starting kernel", "SeaBIOS", "Linux version", "Booting Linux", "NOTICE:  BL",
             "[  OK  ]", "Welcome to", "login:", "bootlab-mark:", "BOOTLAB READY", "Kernel command line:",
             "NET: Registered", "Freeing init memory:", "Freeing unused kernel", " - PBL, End", " - SBL1, Start",
             "barebox 20", "RPi: BOOT", "bootblock starting", "romstage starting", "coreboot-",
             "SecCoreStartupWithStack(", "I> MB1 (version", "#T#Preloader Start=")
    if sample.printk["dmesg"] > 0 or any(w in line for line in sample.lines for w in words):
        return 1.0
    return 0.0


SYSLOG = 0.3  # a syslog's kernel lines with stamps are often a minority among its lines


def _console_only(sample: Sample) -> bool:
    """A line only a console shows, never a kernel log: systemd's status (`[  OK  ] Reached
    target Paths.`) without a printk stamp (a CentOS 7 console whose first 268 lines were all
    the kernel's, dracut's debug among them, was read as a dmesg and costed by log level)."""
    return any(userspace.STATUS.match(line) for line in sample.lines)


def _syslog(sample: Sample) -> float:
    return sample.printk["syslog"] if sample.printk["syslog"] >= sample.printk["dmesg"] else 0.0


def _printk(variant: str, threshold: float, score: Callable[[Sample], float] | None = None) -> InputFormat:
    return InputFormat(variant, score or (lambda s: s.printk[variant]), threshold,
                       lambda boot, i: printk.parse(boot, i.path, i.data, i.patterns, variant),
                       boots=variant != "kmsg")  # /dev/kmsg holds the running boot only


def _systemd(variant: str, threshold: float) -> InputFormat:
    return InputFormat(variant, lambda s: s.systemd[variant], threshold,
                       lambda boot, i: systemd_analyze.parse(boot, i.path, i.data, variant))


# In detection order.
TABLE: tuple[InputFormat, ...] = (
    InputFormat(bootchart.FORMAT, lambda s: 1.0 if (bootchart.is_bootchart_dir(s.path) if s.data is None
                                                    else bootchart.is_bootchart_tar(s.data)) else 0.0,
                0.5, lambda boot, i: bootchart.parse(boot, i.path, i.data), bytes_level=True, directory=True),
    InputFormat(systemd_bootchart.FORMAT, lambda s: systemd_bootchart.sniff(s.lines), 0.5,
                lambda boot, i: systemd_bootchart.parse(boot, i.path, i.data)),
    InputFormat(systemd_plot.FORMAT, lambda s: systemd_plot.sniff(s.lines), 0.5,
                lambda boot, i: systemd_plot.parse(boot, i.path, i.data)),
    InputFormat(bootlab_capture.FORMAT, lambda s: bootlab_capture.sniff(s.data), 0.5,
                lambda boot, i: bootlab_capture.parse(boot, i.path, i.data, i.patterns), bytes_level=True, boots=True),
    InputFormat(grabserial.FORMAT, lambda s: grabserial.sniff(s.lines), 0.5,
                lambda boot, i: grabserial.parse(boot, i.path, i.data, i.patterns), boots=True),
    InputFormat(cbmem.FORMAT, lambda s: cbmem.sniff(s.lines), 0.5, lambda boot, i: cbmem.parse(boot, i.path, i.data)),
    InputFormat(lava.FORMAT, lambda s: lava.sniff(s.lines), 0.5,
                lambda boot, i: lava.parse(boot, i.path, i.data, i.patterns)),
    InputFormat(fastboot.FORMAT, lambda s: fastboot.sniff(s.lines), 0.5,
                lambda boot, i: fastboot.parse(boot, i.path, i.data, i.patterns)),
    InputFormat(journal_json.FORMAT, lambda s: float(journal_json.sniff(s.lines)), 0.5,
                lambda boot, i: journal_json.parse(boot, i.path, i.data, i.patterns, i.which)),
    InputFormat(journal_export.FORMAT, lambda s: journal_export.sniff(s.data), 0.5,
                lambda boot, i: journal_export.parse(boot, i.path, i.data, i.patterns, i.which), bytes_level=True),
    # A syslog has the same lines with the kernel's stamps in them: it is one when syslog says so.
    InputFormat(journal_short.FORMAT,
                lambda s: 0.0 if _syslog(s) >= SYSLOG else journal_short.sniff(s.lines), 0.5,
                lambda boot, i: journal_short.parse(boot, i.path, i.data, i.patterns), boots=True),
    _systemd("systemd-plot-json", 0.9),
    _systemd("systemd-time", 0.9),
    _systemd("systemd-critical-chain", 0.9),
    InputFormat(ftrace.FORMAT, lambda s: ftrace.sniff(s.lines), 0.5, lambda boot, i: ftrace.parse(boot, i.path, i.data)),
    _printk("journal", 0.5),
    _printk("kmsg", 0.5),
    _printk("dmesg-iso", 0.7),
    InputFormat("dmesg-ctime", lambda s: s.printk["ctime"], 0.5,
                refusal="dmesg -T (--time-format=ctime) stamps: a wall clock to the second; save the log with "
                        "plain `dmesg` or `dmesg --time-format=iso`"),
    _printk("dmesg-relative", 0.5),
    _printk("syslog", SYSLOG, _syslog),
    _systemd("systemd-blame", 0.6),
    # A bootstage report alone; a console holding one is a console (which reads the report too).
    InputFormat(uboot.FORMAT, lambda s: uboot.sniff(s.lines) if s.printk["dmesg"] < 0.2 else 0.0, 0.5,
                lambda boot, i: uboot.parse(boot, i.path, i.data)),
    _printk("dmesg", 0.7, lambda s: s.printk["dmesg"] if printk.DMESG.match(s.lines[0]) and not _console_only(s)
            else 0.0),
    InputFormat(console.FORMAT, _boot_words, 0.5,
                lambda boot, i: console.parse(boot, i.path, i.data, i.patterns), boots=True),
)

BY_NAME = {f.name: f for f in TABLE}
# The formats `--input-format` accepts: the ones bootlab reads.
NAMES = tuple(f.name for f in TABLE if not f.refusal)
