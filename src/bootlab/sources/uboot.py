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
COLUMNS = re.compile(r"^\s*Mark\s+Elapsed\s+Stage\s*$")
# A row: the mark, then (not in the accumulated part) the time since the row before, then
# the stage.  U-Boot names a record it has no name for `user_N` or `id=N`; older builds
# print nothing there, so a row may be bare numbers.
NUMBER = r"\d{1,3}(?:,\d{3})+|\d+"
RECORD = re.compile(rf"^\s*(?P<mark>{NUMBER})(?:\s+(?P<elapsed>{NUMBER}))?(?:\s+(?P<stage>\S.*?))?\s*$")
ACCUMULATED = re.compile(r"^\s*Accumulated time:")
ACC_RECORD = re.compile(rf"^\s*(?P<mark>{NUMBER})(?:\s+(?P<stage>\S.*?))?\s*$")
# The records U-Boot stores in the device tree it hands the kernel (CONFIG_BOOTSTAGE_FDT: a
# `bootstage` node, one child per record with `name` and a `mark` or `accum` cell in µs), as
# bootlab's init prints them after ready from /sys/firmware/devicetree/base/bootstage
# (initramfs.BOOTSTAGE_DUMP): a silent U-Boot prints no report, and this is how its stages
# are still seen.
FDT_RECORD = re.compile(r"^bootlab-bootstage (?P<id>\d+) (?P<kind>mark|accum) (?P<cell>[0-9a-f]{8}) ?(?P<name>.*)$")
VENDOR_STAMP = re.compile(r"^\[\s*(?P<sec>\d+)\.(?P<frac>\d{1,3})\] ?(?P<msg>.*)$")
# The first stages before U-Boot proper: SPL, and before it on some boards TPL and VPL.
SPL_BANNER = re.compile(r"^U-Boot (?P<stage>SPL|TPL|VPL) (?P<version>\S+)")
# TI's first stage before U-Boot on OMAP boards (what SPL replaced).
X_LOADER = re.compile(r"^Texas Instruments X-Loader (?P<version>\S+)")
# Since 2008 versioned by year and month; before, 1.x.y (`U-Boot 1.1.4-gcebe815a (Aug 16 2010 - ...)`).
BANNER = re.compile(r"^U-Boot (?P<version>(?:\d{4}\.\d\d|1\.\d+\.\d+)\S*)")
# The countdown: U-Boot's own prompt, or with CONFIG_AUTOBOOT_KEYED the configured one,
# "Autoboot in %d seconds" by default (vendors add to it: ", press <Space> to stop"), or the
# other common "Press SPACE to abort autoboot in %d seconds".
AUTOBOOT = re.compile(r"^(?:Hit any key to stop autoboot:\s+|Autoboot in |Press SPACE to abort autoboot in )"
                      r"(?P<delay>\d+)")
# U-Boot's prompt (`=> `, a board's own: `PANDA # `, `ZynqMP> `, `u-boot=> `), with what was
# typed after it.
PROMPT = re.compile(r"^(?:[\w-]*=>|[\w-]+(?: ?#|>))(?: .*)?$")
# The first prompt after the countdown: the autoboot was stopped and commands typed by hand.
INTERACTIVE = "bootloader.interactive"
# A prompt after the boot command ran (lines printed between the countdown and the prompt)
# and no kernel started after it: the bootloader gave up booting (a failure, analysis/phases.py).
GAVE_UP = "bootloader.gave-up"
# What U-Boot prints when a command it was given fails (2023.01's wording; several per
# command): bootlab's own boot sequence reads its typed commands' output with it too.
COMMAND_FAILED = (r"## Error|Unknown command|Command '[^']*' failed|usage:|Usage:|Wrong Image|Bad Linux ARM64 Image|"
                  r"Error: |error: |not found|\bERROR\b|Retry count exceeded|TFTP error")
_COMMAND_FAILED = re.compile(COMMAND_FAILED)
AUTOBOOT_MARK = "bootloader.autoboot"  # the countdown, with its seconds (advice/bootloader.py)
# A network boot that gets no answer: U-Boot broadcasts (`BOOTP broadcast 1` .. 17, for
# `dhcp` too), then with netretry (the default) starts again for ever, each round trying
# the PHY again on some boards.  A log whose bootloader's last lines are these ends with
# the board still asking (NET_RETRY, analysis/phases.py).
NET_RETRYING = re.compile(r"^(?:(?P<broadcast>BOOTP|DHCP6?) broadcast \d+|(?P<again>(?:ARP )?Retry (?:time|count) "
                          r"exceeded; starting again)|.*Waiting for PHY auto negotiation|Could not initialize PHY)")
NET_RETRY = "bootloader.net-retry"
BYTES_READ = re.compile(r"^(?P<bytes>\d+) bytes read in (?P<ms>\d+) ms")
STARTING_KERNEL = re.compile(r"^(?:Starting kernel \.\.\.|## Starting application at|Transferring control to Linux)")
READING = re.compile(r"^(?:reading|Retrieving file:|Loading file) (?P<file>\S+)")
# Rockchip's vendor SPL, as it jumps to TF-A: the time since its start tick, and (newer
# builds) after a slash the time since the SoC's timer started, near power-on.  Both are
# printed as printf("%ld.%ld", us / 1000, us % 1000), the fraction WITHOUT zero padding:
# "86.5" is 86.005 ms and "249.82" is 249.082 ms, never 86.5 or 249.82.
SPL_TOTAL = re.compile(r"^Total: (?P<spl>\d+\.\d{1,3})(?:/(?P<since_timer>\d+\.\d{1,3}))? ms\s*$")
SPL_STAGE = "U-Boot SPL"
BEFORE_SPL_STAGE = "BootROM and DDR init (before the SPL)"

FORMAT = "uboot-bootstage"


# Console lines that only a U-Boot console holds: a file with any of them beside a report
# is a console (whose reader reads the report too), not a bare report.
CONSOLE_FACTS = (SPL_BANNER, X_LOADER, BANNER, AUTOBOOT, BYTES_READ, STARTING_KERNEL)


def sniff(lines: list[str]) -> float:
    if not any(SUMMARY.match(line) or ACCUMULATED.match(line) for line in lines):
        return 0.0
    if any(fact.match(line) for line in lines for fact in CONSOLE_FACTS):
        return 0.0
    return 0.9


def _us(text: str) -> int:
    return int(text.replace(",", "")) * NS_PER_US


def _unpadded_ms(text: str) -> int:
    """Rockchip SPL's "ms.us" (SPL_TOTAL): the digits after the dot are microseconds."""
    ms, us = text.split(".")
    return int(ms) * NS_PER_MS + int(us) * NS_PER_US


class BootstageReader:
    """Reads the bootstage reports among a log's lines, fed one at a time.

    A table runs from its heading to a blank line or the first line that is not indented
    (the console going on: a prompt, `Starting kernel ...`); an indented line inside it
    that is not a row is a warning, and the rows after it are still read.

    U-Boot prints the report just after it marks `start_kernel` (CONFIG_BOOTSTAGE_REPORT):
    on a console whose lines have times of their own (a capture), the heading's time is
    that mark's, which puts the bootloader's timer on the capture's clock."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.mode: str | None = None
        self.rows = 0  # rows of the table being read
        self.records = 0
        self.previous_mark: int | None = None
        self.stages: list[str] = []  # the summary's stages so far
        self.heading: int | None = None  # line of the first report's heading: where the bootloader's timer starts
        self.printed: tuple[str, int, int] | None = None  # (clock, time, line) of the summary being read
        self.fdt: list[tuple[int, str, int, str]] = []  # (line, kind, µs, name) from the device tree

    def feed(self, text: str, lineno: int, clock: str | None = None, t: int | None = None) -> bool:
        """True when the line belongs to a report (clock and t: when the line was printed, if known)."""
        if SUMMARY.match(text):
            self._start("summary", lineno)
            self.printed = (clock, t, lineno) if clock is not None and clock != Clock.BOOTLOADER and t is not None \
                else None
            return True
        if ACCUMULATED.match(text):
            self._start("accumulated", lineno)
            return True
        if self.mode is None:
            return False
        if not text.strip():
            if self.rows:
                self.mode = None
            return True
        if self.mode == "summary" and COLUMNS.match(text):
            return True
        m = (RECORD if self.mode == "summary" else ACC_RECORD).match(text)
        if m is None:
            if not text[:1].isspace():
                self.mode = None
                return False
            self.boot.warn(self.file, lineno, f"unreadable bootstage row skipped: {text.strip()[:60]!r}")
            return True
        self.rows += 1
        self.records += 1
        stage = m.group("stage") or f"unnamed stage (line {lineno})"
        if self.mode == "accumulated":
            self.boot.meta.setdefault("bootstage_accumulated", {})[stage] = _us(m.group("mark"))
            return True
        named = stage
        if self.stages and stage == "end phase":  # each phase's own (TPL's, SPL's): told by the phase
            stage = f"{stage} (after {self.stages[-1]})"
        elif stage in self.stages:  # a mark made again (netboot_common around a TFTP load): counted
            stage = f"{stage} ({self.stages.count(stage) + 1})"
        self.stages.append(named)
        t = _us(m.group("mark"))
        if m.group("elapsed") is not None:
            elapsed = _us(m.group("elapsed"))
        else:  # a bare mark: the time since the row before
            elapsed = t - (self.previous_mark or 0)
        self.previous_mark = t
        self.boot.add(Event(Kind.STAGE, stage, Clock.BOOTLOADER, t - elapsed, elapsed, self.file, lineno, "bootstage"))
        if stage == "start_kernel":
            self.boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, Clock.BOOTLOADER, t, None, self.file, lineno))
            if self.printed is not None:
                clock, printed, heading = self.printed
                self.boot.anchor(Clock.BOOTLOADER, t, clock, printed,
                                 f"{self.file}:{heading} (bootstage report printed at start_kernel)")
        return True

    def feed_fdt(self, text: str, lineno: int) -> bool:
        """True when the line is a record of the device tree's bootstage node (FDT_RECORD)."""
        m = FDT_RECORD.match(text)
        if m is None:
            return False
        self.fdt.append((lineno, m.group("kind"), int(m.group("cell"), 16), m.group("name") or f"id {m.group('id')}"))
        return True

    def _device_tree(self) -> None:
        """The device tree's records, when the console printed no report (a silent U-Boot; a
        printed report holds the same records).  Nothing on the console ties U-Boot's timer
        to the host then: its start_kernel mark is taken as the kernel's time zero, which
        comes a little later (the kernel's first instructions run before its clock)."""
        if self.records:
            return
        previous = 0
        for lineno, kind, us, name in sorted(self.fdt, key=lambda r: (r[1] != "mark", r[2])):
            t = us * NS_PER_US
            if kind == "accum":
                self.boot.meta.setdefault("bootstage_accumulated", {})[name] = t
                continue
            self.boot.add(Event(Kind.STAGE, name, Clock.BOOTLOADER, previous, t - previous, self.file, lineno,
                                "bootstage"))
            previous = t
            if name == "start_kernel":
                self.boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, Clock.BOOTLOADER, t, None, self.file, lineno))
                self.boot.anchor(Clock.BOOTLOADER, t, Clock.PRINTK, 0,
                                 f"{self.file}:{lineno} (bootstage in the device tree: start_kernel taken as the "
                                 "kernel's time zero, which comes a little later)")
        first = min(lineno for lineno, *_ in self.fdt)
        self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, Clock.BOOTLOADER, 0, None, self.file, first,
                            attrs={"note": "bootstage reset (device tree)"}))

    def _start(self, mode: str, lineno: int) -> None:
        self.mode, self.rows = mode, 0
        if mode == "summary":
            self.previous_mark, self.stages = None, []
            if self.heading is None:
                self.heading = lineno

    def close(self) -> None:
        if self.fdt:
            self._device_tree()
        if self.heading is not None and self.records:
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, Clock.BOOTLOADER, 0, None, self.file,
                                self.heading, attrs={"note": "bootstage reset"}))


def parse(boot: Boot, file: str, data: bytes) -> None:
    """A bootstage report saved alone."""
    reader = BootstageReader(boot, file)
    n = 0
    first = 0
    for line in split(data):
        n += 1
        text = clean(line.text).rstrip()
        if not reader.feed(text, line.lineno) and text.strip() and not first:
            first = line.lineno
    reader.close()
    if not reader.records:
        boot.warn(file, first or 1, "no bootstage records found")
    boot.sources.append(SourceInfo(file, FORMAT, n, reader.records))


class Countdown:
    """A bootloader's autoboot countdown and a prompt of its after it: U-Boot's and barebox's,
    each with its own two expressions.  A prompt right after the countdown is someone who
    stopped it by hand (marked once); one after the boot command printed lines is where the
    boot command gave up, a failure unless a kernel started after it (typed by hand: then
    the bootloader's time holds that typing, as when stopped by hand).  Which of the two is
    known at the end of the log (close)."""

    def __init__(self, boot: Boot, countdown: re.Pattern, prompt: re.Pattern, stopped: re.Pattern | None = None):
        self.boot = boot
        self.countdown = countdown  # its group "delay": the seconds announced
        self.prompt = prompt
        self.stopped = stopped  # what the bootloader prints when its countdown is stopped (no boot command's)
        self.prompted = False  # after the countdown, before the kernel's start
        self.interactive = False
        self.said = ""  # the last line printed since the countdown (the boot command's)
        self.error = ""  # the last of them that says a command failed (COMMAND_FAILED)
        self.gave_up: tuple | None = None  # (mark, its last words): the first prompt after the boot command ran
        self.kernel_started = False  # a handover since that prompt

    def feed(self, text: str, mark) -> bool:
        m = self.countdown.match(text)
        if m:
            delay = int(m.group("delay") or 0)
            self.boot.meta["bootdelay"] = delay
            mark(AUTOBOOT_MARK, delay=delay)
            self.prompted, self.said, self.error = True, "", ""
            return True
        if self.prompted and self.prompt.match(text):
            if self.said and self.gave_up is None and not self.interactive:
                said = self.said if self.error in ("", self.said) else f"{self.error} (then: {self.said})"
                self.gave_up = (mark, said)
            elif not self.interactive and self.gave_up is None:  # the autoboot was stopped: someone at the prompt
                mark(INTERACTIVE)
                self.interactive = True
            return True
        if (self.prompted and text.strip() and not text.strip().isdigit()  # (not the countdown's own digits)
                and not (self.stopped and self.stopped.match(text))):
            self.said = text.strip()
            if _COMMAND_FAILED.search(text):
                self.error = self.said
        return False

    def handover(self) -> None:
        """The kernel was started."""
        self.prompted = False
        self.kernel_started = self.gave_up is not None

    def close(self, kernel_seen: bool) -> None:
        """At the end of the log (kernel_seen: the kernel's own lines followed the bootloader's)."""
        if self.gave_up is None:
            return
        mark, said = self.gave_up
        if self.kernel_started or kernel_seen:
            mark(INTERACTIVE, failed=said)
        else:
            mark(GAVE_UP, reason=said)


class UbootLines:
    """Recognises U-Boot console lines; times come from the caller's clock."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.reading: str | None = None
        self.in_spl = False  # after an SPL's banner, before U-Boot proper's
        self.countdown = Countdown(boot, AUTOBOOT, PROMPT)
        self.broadcasts = self.rounds = 0  # of a network boot without answer (NET_RETRYING)
        self.retrying = None  # the mark of the last line, when it was one of those

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        def mark(name: str, **attrs) -> None:
            self.boot.add(Event(Kind.MARKER, name, clock, t, None, self.file, lineno, attrs=attrs or None))

        if text.strip():
            retrying = NET_RETRYING.match(text)
            self.retrying = mark if retrying else None
            if retrying:
                self.broadcasts += bool(retrying.group("broadcast"))
                self.rounds += bool(retrying.group("again"))

        m = SPL_BANNER.match(text)
        if m:
            self.boot.meta.setdefault("bootloader", f"U-Boot {m.group('stage')} {m.group('version')}")
            mark(Mark.BOOTLOADER_START, stage=m.group("stage").lower())
            self.in_spl = True
            return True
        m = X_LOADER.match(text)
        if m:
            self.boot.meta.setdefault("bootloader", f"X-Loader {m.group('version')}")
            mark(Mark.BOOTLOADER_START, stage="x-loader")
            self.in_spl = False
            return True
        m = BANNER.match(text)
        if m:
            self.boot.meta["bootloader"] = f"U-Boot {m.group('version')}"
            mark(Mark.BOOTLOADER_START, stage="u-boot")
            self.in_spl = False
            return True
        m = SPL_TOTAL.match(text) if self.in_spl else None
        if m:
            self._spl_total(clock, t, m, lineno)
            return True
        if self.countdown.feed(text, mark):
            return True
        m = READING.match(text)
        if m:
            self.reading = m.group("file")
            return True
        m = BYTES_READ.match(text)
        if m:
            dur = int(m.group("ms")) * NS_PER_MS
            # A read with no file named before it (a boot script's `fatload` prints only its
            # size) is named by its size, which tells one image from another.
            what = self.reading or f"{m.group('bytes')} bytes"
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
            self.countdown.handover()
            mark(Mark.KERNEL_LOAD)
            return True
        return False

    def close(self, kernel_seen: bool) -> None:
        """At the end of the log (kernel_seen: the kernel's own lines followed the bootloader's)."""
        self.countdown.close(kernel_seen)
        if self.retrying is not None and not kernel_seen and self.countdown.gave_up is None:
            self.retrying(NET_RETRY, broadcasts=self.broadcasts, rounds=self.rounds)

    def _spl_total(self, clock: str, t: int | None, m: re.Match, lineno: int) -> None:
        """Rockchip SPL's own account of its time (SPL_TOTAL), printed as it ends: it ran
        `spl`, and (newer builds) ended `since_timer` after the SoC's timer started, the
        BootROM and the DDR blob taking the rest.  The older form counts from the SPL's own
        start only, which says nothing of when that was.  The stages end at the line's time
        when it has one (a capture); on a plain transcript they are durations only: what
        follows them (TF-A, U-Boot) is untimed, so they cannot be placed."""
        spl = _unpadded_ms(m.group("spl"))
        self.boot.add(Event(Kind.STAGE, SPL_STAGE, clock, None if t is None else t - spl, spl, self.file, lineno,
                            "bootloader"))
        if m.group("since_timer") is not None:
            before = _unpadded_ms(m.group("since_timer")) - spl
            self.boot.add(Event(Kind.STAGE, BEFORE_SPL_STAGE, clock, None if t is None else t - spl - before,
                                before, self.file, lineno, "bootloader"))
