"""A serial console transcript: firmware, bootloader, kernel and userspace lines in one log.

This module holds the interpreter every console-shaped source shares (plain transcripts,
grabserial captures, bootlab captures): it classifies each line (a printk line, a
bootloader line with or without the vendor's timestamp, a userspace line), feeds the
recognisers, and links the host clock to the printk clock when both stamp one line.

A plain transcript (`bootlog.txt` from a board's wiki) has no host times: lines before the
kernel are in file order only, unless the bootloader stamps them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..timeline import NO_TIME, NS_PER_S, Boot, Clock, ConsoleLog, Event, Kind, Mark, SourceInfo, in_range
from . import (barebox, firmware, initcall, kernel_messages, lk, mtk_preloader, qcom_xbl, rpi_firmware,
               systemd_analyze, ti_sbl, uboot, userspace)
from .initcall import InitcallReader
from .lines import NOISE, clean, seconds_to_ns, split
from .userspace import Patterns, UserspaceReader

FORMAT = "console"

# Vendor kernels stamp each message with the CPU, task and PID after the time; it is not
# the message's text (left in, no milestone in such a log is recognised: no kernel version,
# devtmpfs, initcall or Freeing unused kernel memory):
#   Rockchip's and Samsung's Android 3.x kernels   [    1.419225]  [0:      swapper/0:    1] devtmpfs: initialized
#   MediaTek's (CPU in parentheses, then PID:task)  [    0.151464] -(0)[1:swapper/0]msg, also .(0), <0>-(0), " (0)"
#   Samsung's older Exynos kernels (CPU, PID)       [    0.140215] c0      1 devtmpfs: initialized
#   AVM's FRITZ!Box kernels (the CPU, no space)     [    0.000000][0] Linux version 4.4.271 (...)
VENDOR_CONTEXT_FORMS = (r"\s*\[\s*\d+:[^\]]*:\s*\d+\]|\s*(?:<\d>)?[-.]?\(\d+\)\[\d+:[^\]]*\]"
                        r"| c\d{1,2} {1,6}\d{1,6}(?= )|\[\d{1,3}\](?= )")
VENDOR_CONTEXT = f"(?:{VENDOR_CONTEXT_FORMS})?"
# [    1.234567] msg, optionally with a caller id: [  311.349740][    T1] msg
PRINTK_AT_START = re.compile(r"\[\s*(?P<sec>\d+)\.(?P<frac>\d{6,9})\](?:\[\s*(?P<caller>[TC]\d+)\])?"
                             + VENDOR_CONTEXT + " ?")
PAUSE_CUT = 100_000_000  # ns of silence inside a physical line that make what follows a new line
LEADING_INVISIBLE = re.compile(r"(?:\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_]|[ -/][0-~]|[a-z])|[\x00-\x20\x7f])*")
# A kernel record printed inside a coloured systemd status ("[\e[0;32m  OK  \e[", the record,
# then "0m] Mounted ..." on the next line): cleaning the escape takes the record's "[" with
# it ("\e[[" reads as one sequence), leaving "[  OK      3.498114] systemd[1]: Mounted ...".
SPLICED_STATUS = re.compile(r"^\[\s*(?:OK|FAILED|TIME|DEPEND|SKIP)\s+(?=\d+\.\d{6,9}\])")
# The kernel's banner whose printk stamp lost bytes on the console (`    0.000] Linux version
# 6.1.0-57-amd64 ...`: a reference-device capture lost `[` and three digits as the serial
# console started): still the banner, with the kernel's version, though not its time.
DAMAGED_BANNER = re.compile(r"^\[?\s*\d*\.?\d*\] ?(?=Linux version )")
# Firmware beside the kernel that stamps its lines as printk does, on its own clock: NVIDIA's
# camera firmware (RCE) on a Jetson's shared console, `[     6.318531] Camera-FW on t234-rce-safe
# started`, in the bootloader's time or among the kernel's lines.  Never the kernel's.
OTHER_CPU_FIRMWARE = re.compile(r"Camera-FW on \S+ (?:started|ready)\b")
PRINTK_INSIDE = re.compile(r"\[\s*\d+\.\d{6,9}\](?:\[\s*[TC]\d+\])?" + VENDOR_CONTEXT + " ")
# The reference device's init prints the kernel log after ready between these lines
# (targets/initramfs.py and bootlab-init.c print the same text): the log is printed again.
DMESG_DUMP_BEGIN = "==== bootlab-dmesg begin ===="
DMESG_DUMP_END = "==== bootlab-dmesg end ===="
DUMP, TYPED, AGAIN = "dump", "typed", "again"  # Interpreter.replay
# Clock probes: kernel lines the reference device's init prints after ready, with the
# console idle, so the host sees them as they happen: they measure the printk clock's rate.
CLOCK_PROBE = "bootlab-clock"
IDLE_NS = 1_000_000  # a console silent this long after sending a line had nothing queued
BACK_WARN_NS = 1_000_000_000
BACK_WARNING = ("printk time goes back by more than 1 s: the log printed again (dmesg on the console), two boots, "
                "or two logs interleaved?")
AGAIN_WARNING = ("printk time goes back by {back} here: the kernel's log printed again (dmesg on the console), two "
                 "boots, or two logs interleaved? Its records are read once, and its lines charged to the console "
                 "when printed, not at their stamps")
# The kernel's log printed again on the console: its records go on being read (dedupe drops
# those read before; the kernel may not have printed some, below the console's loglevel), but
# they were printed then, not when stamped: their console bytes are untimed on a log stamped
# by printk (a capture's are at their host times), and they anchor no clock.  A record can be
# stamped a little before the one printed before it (on SMP its stamp is taken before its place
# in the log), hardly this far: further back, the log is printed again.
PRINTED_AGAIN_NS = 100_000_000
# A shell command printing it at a prompt (`root@pine64:~# dmesg`, `~ # dmesg | tail`, `$ sudo
# dmesg`): what follows is its output; not `dmesg -n 1` and the like, which print nothing.
DMESG_TYPED = re.compile(r"^(?:\S+ )?\S*[#$] *(?:sudo +)?dmesg(?=\s|$)"
                         r"(?![^\n]*(?:\s-[A-Za-z]*[nCDE]\b|\s--(?:console|clear)|>))")
# A logging daemon writing the kernel's records to the console with a prefix of its own:
# busybox's syslogd and klogd on a Buildroot board (`Jan  1 00:00:03 buildroot kern.info
# kernel: [    0.000000] Booting Linux ...`, every record since time zero after the kernel
# printed them bare), rsyslog (`Nov 21 11:23:00 host kernel: [...]`, or its ISO time).
SYSLOG_DATE = r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"  # a syslog line's time, to the second (BSD's)
SYSLOG_KERNEL = re.compile(rf"(?:{SYSLOG_DATE}|\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) (?:\S+ ){{0,2}}kernel: ")
TYPED_NOTE = ("the kernel's log printed again from here by the dmesg typed at line {line}: its records are read "
              "once, and its lines charged to the console when printed, not at their stamps")
LOGGED_NOTE = ("from here {n} console lines are kernel records a logging daemon printed again (busybox's syslogd and "
               "klogd, or rsyslog: `{prefix}[...]`), {seen} of them stamped no later than the last record the kernel "
               "printed: each is read once, and its bytes are charged to the console when printed, not at its stamp")
INITCALL_WORDS = re.compile("|".join(map(re.escape, initcall.KEYWORDS)))
# A kernel message that holds none of these, and matches no ready or app-start pattern,
# means nothing beyond its time (message() would do nothing with it).
MEANINGFUL_WORDS = initcall.KEYWORDS + userspace.WORDS + (kernel_messages.UART_WORD,)
MEANINGFUL = re.compile("|".join(map(re.escape, MEANINGFUL_WORDS)))
MEANINGFUL_STARTS = kernel_messages.PREFIXES + userspace.STARTS


# 2.6 kernels whose printk clock is the jiffies counter (sched_clock without a TSC) stamp
# jiffies_64 * (10**9 // HZ), and jiffies_64 starts at INITIAL_JIFFIES, -300 s wrapped to
# 32 bits: the clock's first value is [4294667.296000] at HZ=1000.  A log whose first stamp
# lies just after one of these starts counts from it: its stamps before the clock ticked
# are what [0.000000] is on a newer kernel, and the rest are times since boot.
JIFFIES_STARTS = tuple((2**32 - 300 * hz) * (1_000_000_000 // hz) for hz in (100, 250, 300, 1000, 1024))
JIFFIES_WINDOW = 60 * 1_000_000_000  # a first stamp this close after a start counts from it
JIFFIES_NOTE = ("printk stamps count jiffies from INITIAL_JIFFIES (a 2.6 kernel's clock, {start}) "
                "are read as times since the kernel's start, {start} being 0")


# Rockchip's 3.10 vendor kernels stamp [    0.000000] until the scheduler's clock starts, and
# from then the architected counter's raw time: since the SoC's reset on arm64 (zero, then
# 1.2-2.6 s), since a loader or the kernel started it on some 32-bit SoCs (0.27 s on an RK3128
# after an interactive U-Boot).  Either way not a time since the kernel's start: read less the
# jump, the kernel's times are lower bounds (the lines stamped zero took time they do not show).
COUNTER_NOTE = ("printk time jumps from 0 to {stamp:.6f} s here, after line {line} ({timer!r}): the stamps from here "
                "are the counter's time since it started (at the SoC's reset, or when a loader or the kernel's first "
                "steps started it, as on Rockchip's 3.10 vendor kernels), not since the kernel's start, so they are "
                "read less {stamp:.6f} s, and the lines stamped 0 before this one as taking no time: kernel init is "
                "short by what those took, not long by the firmware's time")


# Without a timer's announcement, a jump from zero this large is no kernel's own time either:
# a Tegra 3's 2.6.36 Android kernel stamped its first 52 messages zero, then 6.003770 s
# (its timer's time since the SoC's reset).
UNANNOUNCED_COUNTER_NS = 1_000_000_000
# What start_kernel() prints right after time_init(), the first messages its clock stamps.
FIRST_TICKED = ("Calibrating delay", "Console: ", "console [", "sched_clock: ", "clocksource: ", "pid_max: ")
COUNTER_UNANNOUNCED_NOTE = ("printk time jumps from 0 to {stamp:.6f} s here, with no timer announced: no kernel takes that "
                            "long before its clock's first tick, so the stamps from here are a counter's time since it "
                            "started (the SoC's reset, or a loader), read less {stamp:.6f} s, and the lines stamped 0 "
                            "before this one as taking no time: kernel init is short by what those took, not long by "
                            "the firmware's time")


# An x86 KVM guest whose TSCs are unsynchronized stamps its first messages by jiffies
# (`[    0.001000] tsc: Marking TSC unstable due to TSCs unsynchronized`), then by the
# monotonic clock of its kvm-clock, which counts from the VM's creation: a public LKFT QEMU
# console jumped to `[   51.249939] Calibrating delay loop (skipped) ...`, its firmware's and
# loader's time read as 51 s of kernel init.  Stamps within this of zero before such a jump
# are the kernel's first ticks.
EARLY_TICKS_NS = 50_000_000
EARLY_JUMP_NOTE = ("printk time jumps from {early:.6f} to {stamp:.6f} s here, with no timer announced: no kernel takes "
                   "that long before its clock's first ticks are done (a KVM guest's clock, counting from the VM's "
                   "creation, taking over from jiffies when the TSC is found unstable), so the stamps from here are "
                   "read less {jump:.6f} s: kernel init is short by the time the jump hides, not long by the "
                   "firmware's")


# Where the bootloader's clock is known to have run to (Interpreter._bootloader_ran_until).
BOOTLOADER_RAN_UNTIL = "bootloader.ran-until"

# A message stamped zero as a boot console prints it: "[    0.000000] " and CR LF.
ZERO_STAMP_BYTES = 17
DEFAULT_EARLY_BAUD = 115200  # a boot console's speed when the command line does not say


def jiffies_start(t: int) -> int:
    """The INITIAL_JIFFIES stamp a log's first printk time `t` counts from (0: none)."""
    return next((start for start in JIFFIES_STARTS if start <= t < start + JIFFIES_WINDOW), 0)


def stamp_ns(m: re.Match) -> int:
    return int(m.group("sec")) * 1_000_000_000 + int((m.group("frac") + "000")[:9])


@dataclass(slots=True)
class Segment:
    """Part of a captured line that arrived at one host instant."""

    t: int
    text: str


class Interpreter:
    """Feeds one log's lines to every recogniser; keeps where in the boot the log is."""

    def __init__(self, boot: Boot, file: str, patterns: Patterns, log: ConsoleLog):
        self.boot = boot
        self.file = file
        self.log = log
        self.initcalls = InitcallReader(boot, file)
        self.uboot = uboot.UbootLines(boot, file)
        self.lk = lk.LkLines(boot, file)
        self.sbl = ti_sbl.SblLines(boot, file)
        self.preloader = mtk_preloader.PreloaderLines(boot, file)
        self.xbl = qcom_xbl.XblLines(boot, file)
        self.barebox = barebox.BareboxLines(boot, file)
        self.rpi = rpi_firmware.RpiFirmwareLines(boot, file)
        self.bootstage = uboot.BootstageReader(boot, file)
        self.assertion = firmware.Assertion(boot, file)
        self.user = UserspaceReader(boot, file, patterns)
        self.in_kernel = False
        self.last_printk: int | None = None
        self.backwards = 0
        # A kernel without printk times (CONFIG_PRINTK_TIME off, printk.time=0): its
        # messages are read at the time their line arrived, on the line's own clock.
        self.untimed_kernel: InitcallReader | None = None
        self.last_untimed: int | None = None
        # The log printed again: by the reference device's init between its markers (DUMP), by a
        # dmesg typed at a prompt (TYPED, to the next line that is no record), or as its stamps
        # going back say (AGAIN, until one is past the kernel's last again: see PRINTED_AGAIN_NS).
        self.replay: str | None = None
        self.printk_high: int | None = None  # the latest stamp of a record printed as it was logged
        self.logged_first: tuple[int, str] | None = None  # the first record a logging daemon printed, its prefix
        self.typed_at: int | None = None  # the line of a dmesg typed at a prompt, until its output starts
        self.logged = 0
        self.logged_seen = 0  # of them, stamped no later than the last record the kernel printed itself
        self.userspace_at: int | None = None  # the printk time init started, once this log shows it
        self.looked = 0  # the boot's events looked through for it (_in_userspace)
        self.analyze = systemd_analyze.ConsoleOutputs(boot, file)  # what the guest printed after ready
        self.printk_zero: int | None = None  # what printk time 0 is stamped as (see JIFFIES_STARTS)
        # The stamp printk time jumped to from zero, when it switched to a counter that had
        # run before the kernel's clock (see counter_switch); 0 when it did not; None until
        # the first stamp other than zero.
        self.counter_from: int | None = None
        self.counter_line: tuple[int, str] | None = None  # the message stamped zero that announced the counter
        self.early: int | None = 0  # the latest stamp while every one is within EARLY_TICKS_NS; None after
        # What the boot console (if any) had to print from that message on, before the first
        # stamp other than zero (see counter_switch).
        self.early_console = False
        self.zero_baud: int | None = None
        self.counter_bytes = 0
        self.zero_bytes = 0  # every message stamped zero (for a jump no timer announced)
        # (time, line) of the latest bootloader stamp: the largest, not the last (stamps that go
        # back, a Pi 4 EEPROM's or a Jetson's MB1 after a reset, do not move the clock back)
        self.last_stamped: tuple[int, int] | None = None
        self.firmware_line: int | None = None  # where the last firmware banner was (see firmware_stamped)

    def printk_time(self, stamp: int, lineno: int, msg: str = "") -> int:
        """A printk stamp (of message `msg`) as the time since the kernel's start."""
        if self.printk_zero is None:
            self.printk_zero = jiffies_start(stamp)
            if self.printk_zero:
                seconds = f"[{self.printk_zero // 10**9}.{self.printk_zero % 10**9 // 1000:06d}]"
                self.boot.warn(self.file, lineno, JIFFIES_NOTE.format(start=seconds))
        t = stamp - self.printk_zero if stamp >= self.printk_zero else stamp
        if self.counter_from is None and t:
            self.counter_from = self.counter_switch(t, lineno, msg)
        if self.early is not None and self.counter_from == 0:  # (decided: no jump from zero)
            self.counter_from = self.early_jump(t, lineno, msg)
        # (a record printed again from before the jump keeps its stamp)
        return t - self.counter_from if t and self.counter_from and t >= self.counter_from else t

    def early_jump(self, t: int, lineno: int, msg: str = "") -> int:
        """A stamp `t` after the first ticks (EARLY_TICKS_NS), when it is a jump of a second or
        more from them at one of the messages the kernel prints just after its clock starts:
        how much the stamps from here are read less (else 0)."""
        if t <= EARLY_TICKS_NS:
            self.early = max(self.early, t)
            return 0
        early, self.early = self.early, None
        if not early or t - early < UNANNOUNCED_COUNTER_NS or not msg.startswith(FIRST_TICKED):
            return 0
        self.boot.warn(self.file, lineno, EARLY_JUMP_NOTE.format(early=early / 1e9, stamp=t / 1e9,
                                                                 jump=(t - early) / 1e9))
        return t - early

    def zero_stamped(self, msg: str, lineno: int) -> None:
        """A message stamped zero, before any other stamp: one announcing the architected
        timer is kept for counter_switch, with what a boot console printed from it on."""
        if self.counter_line is None and kernel_messages.announces_counter(msg):
            self.counter_line = (lineno, msg)
        if self.counter_line is not None:
            self.counter_bytes += len(msg) + ZERO_STAMP_BYTES
        self.zero_bytes += len(msg) + ZERO_STAMP_BYTES
        if kernel_messages.announces_early_console(msg):
            self.early_console = True
        if msg.startswith(("Command line:", "Kernel command line:")):
            self.zero_baud = kernel_messages.console_baud(msg)

    def counter_switch(self, t: int, lineno: int, msg: str = "") -> int:
        """The first printk time other than zero, when it is where the clock switched to a
        counter that had run before it: a message stamped zero announced the architected
        timer, and the jump is 10 ms or more (a clock that goes on from zero, as mainline's
        does after the same message, takes microseconds), beyond what a boot console took to
        print the messages stamped zero from that one on: the kernel waits for it, and at
        115200 baud three such lines take 25 ms (msm8916's mainline 5.10 with earlycon jumps to
        0.010829 s, its clock running since the timer's announcement).  With no timer announced:
        a jump of a second or more after messages stamped zero, at one of the messages the
        kernel prints just after its clock starts (a log cut short jumps anywhere).  Returns
        that time (the stamps after it are read less it), else 0."""
        announced = self.counter_line is not None
        printing = ((self.counter_bytes if announced else self.zero_bytes) * 10 * NS_PER_S
                    // (self.zero_baud or DEFAULT_EARLY_BAUD) if self.early_console else 0)
        if t < (kernel_messages.CLOCK_BEFORE_KERNEL_NS if announced else UNANNOUNCED_COUNTER_NS) + printing:
            return 0
        if not announced and not (self.zero_bytes and msg.startswith(FIRST_TICKED)):
            return 0
        if not announced:
            self.boot.warn(self.file, lineno, COUNTER_UNANNOUNCED_NOTE.format(stamp=t / 1e9))
            return t
        line, timer = self.counter_line
        self.boot.warn(self.file, lineno, COUNTER_NOTE.format(stamp=t / 1e9, line=line, timer=timer))
        return t

    # -- kernel messages ------------------------------------------------------------

    def stamp(self, t: int, lineno: int) -> None:
        """Every printk message's time, in file order: where the log is, and whether it
        repeats itself (time going back: the same messages may come again)."""
        self.in_kernel = True
        if self.last_printk is not None and t < self.last_printk:
            self.boot.repeats = True
            if t < self.last_printk - BACK_WARN_NS:
                self.backwards += 1
                if self.backwards <= 3:
                    self.boot.warn(self.file, lineno, BACK_WARNING)
        self.last_printk = t

    def stamp_column(self, t, restarts: list[int]) -> None:
        """stamp() for a whole log's times at once (a numpy column, NO_TIME for a line
        without one; the bulk reader's, so numpy is loaded); the log printed again starts
        after each line index in `restarts`."""
        import numpy as np

        timed = np.flatnonzero(t != NO_TIME)
        if len(timed) == 0:
            return
        tv = t if len(timed) == len(t) else t[timed]  # (every line stamped, as nearly always: no copy)
        # Whether each time is before the one before it (the first: before the last time
        # seen); not after a restart, which has no previous time to compare with.
        back = np.empty(len(tv), dtype=bool)
        back[0] = self.last_printk is not None and tv[0] < self.last_printk
        np.less(tv[1:], tv[:-1], out=back[1:])
        after = np.searchsorted(timed, restarts)
        back[after[after < len(tv)]] = False
        if back.any():  # (rare: the columns for the warnings only then)
            self.boot.repeats = True
            prev = np.empty_like(tv)
            prev[1:] = tv[:-1]
            prev[0] = tv[0] if self.last_printk is None else self.last_printk
            far = np.flatnonzero(back & (tv < prev - BACK_WARN_NS))
            for i in timed[far[:max(0, 3 - self.backwards)]].tolist():
                self.boot.warn(self.file, i + 1, BACK_WARNING)
            self.backwards += len(far)
        self.in_kernel = True
        self.last_printk = None if restarts and restarts[-1] > timed[-1] else int(tv[-1])

    def kernel(self, t: int, msg: str, lineno: int) -> None:
        """A printk message at printk time t."""
        self.stamp(t, lineno)
        if not t and self.counter_from is None:
            self.zero_stamped(msg, lineno)
        self.message(t, msg, lineno)

    def message(self, t: int, msg: str, lineno: int) -> None:
        """What a printk message says (its time already seen by stamp())."""
        self.user.patterns_seen(Clock.PRINTK, t, msg, lineno)
        self.meaning(t, msg, lineno)

    def meaning(self, t: int, msg: str, lineno: int) -> None:
        """message() but for the ready and app-start patterns: for a message known to hold
        none of their hints (the bulk reader finds those that do)."""
        if INITCALL_WORDS.search(msg) and self.initcalls.feed(t, msg, lineno):
            return
        if kernel_messages.recognise(self.boot, self.file, Clock.PRINTK, t, msg, lineno):
            return
        self.user.feed(Clock.PRINTK, t, msg, lineno)

    # -- console lines ----------------------------------------------------------------

    def text(self, clock: str | None, t: int | None, text: str, lineno: int) -> None:
        """A line without a printk stamp: firmware, bootloader or userspace."""
        text = text.lstrip(NOISE)  # the first banner of a capture can follow line noise
        if not self.in_kernel and self.untimed_kernel is None and self.bootstage.feed(text, lineno, clock, t):
            return  # a bootstage report (blank lines end its tables)
        if not text.strip():
            return
        if self.replay in (TYPED, AGAIN) and not text[0].isspace():
            self.replay = self.typed_at = None  # (a record's continuation lines are indented by dmesg)
        if text.startswith(DMESG_DUMP_BEGIN):  # the log again from its start, not a second boot
            self.last_printk = None
            self.boot.repeats = True
            self.replay = DUMP
        elif text.startswith(DMESG_DUMP_END):
            self.replay = None
        elif DMESG_TYPED.match(text):
            self.replay, self.typed_at = TYPED, lineno
        elif self.analyze.feed(text, lineno) or self.bootstage.feed_fdt(text, lineno):
            return
        self.user.patterns_seen(clock or Clock.HOST, t, text, lineno)
        damaged = DAMAGED_BANNER.match(text) if not self.in_kernel else None
        if damaged and kernel_messages.recognise(self.boot, self.file, clock or Clock.HOST, t, text[damaged.end():],
                                                 lineno):
            return  # the banner, its stamp broken by bytes the console lost: its facts, untimed
        if self.untimed_kernel is None and not self.in_kernel and not self.replay:
            restored = kernel_messages.restore_banner(text)
            if restored is not None:
                self.boot.warn(self.file, lineno, f"the console lost bytes of the kernel's banner ({text[:40]!r}...): "
                                                  "read as its banner")
                text = restored
            if kernel_messages.is_banner(text):
                self.untimed_kernel = InitcallReader(self.boot, self.file, Clock.HOST)
        if self.untimed_kernel is not None and not self.replay:
            self.last_untimed = t if t is not None else self.last_untimed
            if INITCALL_WORDS.search(text) and self.untimed_kernel.feed(t, text, lineno):
                return
            if kernel_messages.recognise(self.boot, self.file, clock or Clock.HOST, t, text, lineno):
                return
        if not self.in_kernel:
            # A bootloader's own stamp puts the line on the bootloader clock: some vendors'
            # U-Boot in seconds, LK in milliseconds.
            m = uboot.VENDOR_STAMP.match(text)
            stamped = ((seconds_to_ns(f"{m.group('sec')}.{m.group('frac')}"), m.group("msg")) if m
                       else self.lk.stamp(text) or self.xbl.stamp(text) or firmware.stamp(text)
                       or self.rpi.stamp(text, lineno))
            if stamped is not None:
                clock, (t, text) = Clock.BOOTLOADER, stamped
                if self.last_stamped is None or t >= self.last_stamped[0]:
                    self.last_stamped = (t, lineno)
            if self.assertion.feed(clock or Clock.HOST, t, text, lineno):
                return
            found = firmware.feed(self.boot, self.file, clock or Clock.HOST, t, text, lineno)
            if found:
                if found == Mark.FIRMWARE_START:
                    self.firmware_line = lineno
                return
            if (self.uboot.feed(clock or Clock.HOST, t, text, lineno) or self.lk.feed(clock or Clock.HOST, t, text, lineno)
                    or self.sbl.feed(clock or Clock.HOST, t, text, lineno)
                    or self.preloader.feed(clock or Clock.HOST, t, text, lineno)
                    or self.xbl.feed(clock or Clock.HOST, t, text, lineno)
                    or self.barebox.feed(clock or Clock.HOST, t, text, lineno)
                    or self.rpi.feed(clock or Clock.HOST, t, text, lineno)):
                return
        elif kernel_messages.is_decompressor(text):
            firmware.feed(self.boot, self.file, clock or Clock.HOST, t, text, lineno)
            return
        self.user.feed(clock or Clock.HOST, t, text, lineno)

    def console_line(self, segments: list[Segment] | None, raw: str, lineno: int, nbytes: int,
                     host_t: int | None = None) -> None:
        """One physical console line; segments are its host-timed pieces when captured.

        Several logical lines can share one physical line: output that arrives after a long
        pause (PAUSE_CUT) with no newline before it is something new ("Booting from ROM.."
        then, seconds later, init's first line), and the kernel's first message often
        follows boot-stub output directly ("Probing EDD ... o[    0.000000] Linux ...").
        The line is cut there, and each part gets the host time of the piece it starts in.
        A kernel message is not cut: its record reaches the console whole, with one newline
        at its end, so what follows a pause inside it (a console stalled mid-line) is the
        rest of it.
        """
        pieces = [(host_t, raw)] if segments is None else [(s.t, s.text) for s in segments]
        cuts = [0]
        position = 0
        for k in range(1, len(pieces)):
            position += len(pieces[k - 1][1])
            if (pieces[k][0] - pieces[k - 1][0] >= PAUSE_CUT
                    and not PRINTK_AT_START.match(clean(raw[cuts[-1]:position]))):
                cuts.append(position)
        parts: list[tuple[int, str]] = []
        for a, b in zip(cuts, cuts[1:] + [len(raw)]):
            chunk = raw[a:b]
            inside = PRINTK_INSIDE.search(chunk) if "[" in chunk and not PRINTK_AT_START.match(clean(chunk)) else None
            if inside and SYSLOG_KERNEL.fullmatch(clean(chunk[:inside.start()])):
                parts.append((a, chunk))  # a logging daemon's line: its prefix is no other output
            elif inside and inside.start():
                head = chunk[:inside.start()]
                if parts:  # the tail of what was printed before the pause ("o" ... "k")
                    parts[-1] = (parts[-1][0], parts[-1][1] + head)
                else:
                    parts.append((a, head))
                parts.append((a + inside.start(), chunk[inside.start():]))
            else:
                parts.append((a, chunk))
        for k, (start, part) in enumerate(parts):
            # Console bytes go to the parts as they were sent; the line's terminator to the last.
            share = len(part.encode("utf-8", "replace")) if len(parts) > 1 else nbytes
            if len(parts) > 1 and k == len(parts) - 1:
                share = nbytes - sum(len(p.encode("utf-8", "replace")) for _, p in parts[:-1])
            # A line is stamped where its text starts: terminal resets and colour codes
            # can sit at the start of a line for seconds before anything visible follows.
            visible = start + len(LEADING_INVISIBLE.match(part).group())
            self._logical_line(_time_at(pieces, visible), clean(part), lineno, share)

    def _logical_line(self, t_host: int | None, text: str, lineno: int, nbytes: int) -> None:
        t_printk = None
        logged = SYSLOG_KERNEL.match(text)
        at = logged.end() if logged else 0
        m = PRINTK_AT_START.match(text, at)
        spliced = SPLICED_STATUS.match(text) if m is None and text.startswith("[") else None
        if spliced:
            text = "[" + text[spliced.end():]
            m = PRINTK_AT_START.match(text)
        if m and not in_range(stamp_ns(m)):
            m = None  # garbage, not a time
        if m and (OTHER_CPU_FIRMWARE.match(text, m.end())
                  or not self.in_kernel and self.firmware_stamped(text[m.end():])):
            m = None
        again = False
        if m:
            t_printk = self.printk_time(stamp_ns(m), lineno, text[m.end():])
            # A logging daemon's copy of a record newer than any the kernel printed, and logged
            # once init ran (the daemon runs in userspace), was printed no earlier than its
            # stamp: a bound the log keeps (the login prompt after it).
            bound = (logged and (self.printk_high is None or t_printk > self.printk_high)
                     and self._in_userspace(t_printk))
            again = self.printed_again(t_printk, text[:at], lineno)
            if t_host is not None and not again:
                self.boot.anchor(Clock.PRINTK, t_printk, Clock.HOST, t_host, f"{self.file}:{lineno}",
                                 probe=CLOCK_PROBE in text, prompt=self._console_was_idle(t_host))
            if again:
                self.boot.repeats = True
                self.last_printk = max(t_printk, self.last_printk or 0)
                self.message(t_printk, text[m.end():], lineno)
            else:
                self.kernel(t_printk, text[m.end():], lineno)
        else:
            self.text(Clock.HOST if t_host is not None else None, t_host, text, lineno)
        self.log.append(t_host if self.log.clock == Clock.HOST else None if again and not bound else t_printk, text,
                        lineno, nbytes)

    def _in_userspace(self, t: int) -> bool:
        """Whether printk time `t` is after init started, as this log shows it so far: the
        events read since the last look are looked through, each once (the boot's index of
        marks is rebuilt whenever an event is added: asked of it line by line, a console of
        20,000 syslog copies took 28 s)."""
        if self.userspace_at is None:
            objects = self.boot.objects
            for k in range(self.looked, len(objects)):
                ev = objects[k]
                if (ev.kind == Kind.MARKER and ev.name == Mark.USERSPACE_START and ev.clock == Clock.PRINTK
                        and ev.t is not None):
                    self.userspace_at = ev.t
                    break
            self.looked = len(objects)
        return self.userspace_at is not None and t >= self.userspace_at

    def printed_again(self, t: int, prefix: str, lineno: int) -> bool:
        """Whether a record at printk time `t` on the console is the kernel's log printed again
        (see PRINTED_AGAIN_NS): by a logging daemon (its `prefix`), in a replay, or stamped
        that far before the last record printed as it was logged, which starts a replay that
        lasts until a record is stamped past that one (a record stamped out of order, a vCPU
        held between its stamp and its place in the log, is one line of it)."""
        if prefix:
            if self.logged_first is None:
                self.logged_first = (lineno, prefix)
            self.logged += 1
            self.logged_seen += self.printk_high is not None and t <= self.printk_high
            return True
        if self.typed_at is not None:
            self.boot.warn(self.file, lineno, TYPED_NOTE.format(line=self.typed_at))
            self.typed_at = None
        if self.replay == AGAIN and t > self.printk_high:
            self.replay = None  # the kernel's own lines again (or a record stamped out of order was all)
        if self.replay:
            return True
        if self.printk_high is not None and t < self.printk_high - PRINTED_AGAIN_NS:
            self.replay = AGAIN
            self.backwards += 1
            if self.backwards <= 3:
                back = f"{(self.printk_high - t) / NS_PER_S:.3f} s"
                self.boot.warn(self.file, lineno, AGAIN_WARNING.format(back=back))
            return True
        self.printk_high = t if self.printk_high is None else max(self.printk_high, t)
        return False

    def firmware_stamped(self, msg: str) -> bool:
        """Whether a line stamped like printk before the kernel's first message is the
        firmware's: a firmware banner came before it and nothing has started since (no
        bootloader, no kernel handover), and it is not the kernel's banner.  OP-TEE's
        SCP-firmware on an STM32MP25 prints `[    0.000000] SCP-firmware 2.13.0` between TF-A
        and U-Boot; read as the kernel's, a console holding no kernel was one of 0 ns."""
        if self.firmware_line is None or kernel_messages.is_banner(msg) or msg.startswith("Booting Linux"):
            return False
        return not any(ev.file == self.file and ev.line > self.firmware_line
                       for name in (Mark.BOOTLOADER_START, Mark.KERNEL_LOAD) for ev in self.boot.marks(name))

    def _console_was_idle(self, t_host: int) -> bool:
        """Whether a line's first byte came with the console idle: the line before it had
        been sent in full (at the console's speed) at least IDLE_NS earlier.  Only such a
        line is seen as it happens; one behind others waited for them (the backlog)."""
        log = self.log
        if not len(log) or log.clock != Clock.HOST or log.t.raw[-1] == NO_TIME:
            return True
        baud = self.boot.meta.get("console_baud") or 0
        sent = log.t.raw[-1] + (log.nbytes[-1] * 10 * NS_PER_S // baud if baud else 0)
        return t_host - sent >= IDLE_NS

    def _bootloader_ran_until(self) -> None:
        """The bootloader's clock ran at least to its latest stamp, and on by the steps
        timed after it that its lines give no time of (U-Boot's `bytes read in N ms` after
        boot0's stamps): the kernel, on a clock placed after the bootloader's, starts no
        earlier (an A733's kernel was placed 3.7 s inside U-Boot's load)."""
        if self.last_stamped is None:
            return
        t, line = self.last_stamped
        after = sum(ev.dur for ev in self.boot.of_kind(Kind.STAGE)
                    if ev.file == self.file and ev.line > line and ev.t is None and ev.dur)
        self.boot.add(Event(Kind.MARKER, BOOTLOADER_RAN_UNTIL, Clock.BOOTLOADER, t + after, None, self.file, line,
                            attrs={"untimed_steps_ns": after} if after else None))

    def close(self) -> None:
        if self.logged_first is not None:
            line, prefix = self.logged_first
            seen = f"all {self.logged}" if self.logged_seen == self.logged else self.logged_seen
            self.boot.warn(self.file, line, LOGGED_NOTE.format(n=self.logged, prefix=prefix, seen=seen))
        self.bootstage.close()
        self.sbl.close()
        self.rpi.close()
        self._bootloader_ran_until()
        kernel_seen = self.in_kernel or self.untimed_kernel is not None
        self.uboot.close(kernel_seen)
        self.barebox.countdown.close(kernel_seen)
        self.assertion.close(kernel_seen)
        if self.untimed_kernel is not None:  # first: its events are the later ones (see InitcallReader)
            self.untimed_kernel.close(self.last_untimed)
        self.initcalls.close(self.last_printk)
        self.user.close()


def _time_at(pieces: list[tuple[int | None, str]], offset: int) -> int | None:
    """Host time of the piece holding character `offset` of the joined raw text."""
    pos = 0
    for t, text in pieces:
        if offset < pos + len(text):
            return t
        pos += len(text)
    return pieces[-1][0]


def _padding(text: str) -> int:
    """Spaces and tabs at a transcript's line end, before its CR: a terminal's screen copied
    out, or a mail client, pads lines to the width (a public QEMU console published with
    its lines padded to 200 columns: 57.8 kB of "console output", 30.0 kB without); the
    console sent none of them, so they cost nothing.  One space is kept: a message may end
    with one (U-Boot's `Hit any key to stop autoboot:  0 `, `Performance events: `)."""
    body = text.rstrip("\r")
    padding = len(body) - len(body.rstrip(" \t"))
    return padding if padding > 1 else 0


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    """A console transcript without host times."""
    log = ConsoleLog(file, Clock.PRINTK, printed=True)
    interp = Interpreter(boot, file, patterns, log)
    lines = list(split(data))
    for line in lines:
        interp.console_line(None, line.text, line.lineno, line.nbytes - _padding(line.text))
    interp.close()
    n = len(lines)
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, n, 0))

