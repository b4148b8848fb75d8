"""The kernel log in every shape it is saved in.

    dmesg      [    1.234567] msg                       (also <6>[...] from dmesg -r,
               [  311.349740][    T1] msg               caller id, dmesg -x's
               kern  :info  : [    1.234567] msg        facility/level prefix, and
               [    1.234567 <    0.000123>] msg        dmesg -d's delta)
    dmesg-iso  2026-11-21T11:20:07,123456+00:00 msg     (dmesg --time-format=iso:
                                                        boot time + printk time)
    syslog     Nov 21 11:23:00 host kernel: [    1.234567] msg
    journal    [    1.234567] host kernel: msg          (journalctl -o short-monotonic;
               [    5.123456] host systemd[1]: Started X.  userspace lines too)
    kmsg       6,339,5140900,-;msg                      (/dev/kmsg, microseconds;
                SUBSYSTEM=pci                           dictionary lines are skipped)

Lines without a timestamp in a dmesg are continuation lines of the previous message.
Timestamps are all zero until the kernel's timekeeping starts; they stay zero here and
the host capture, when present, says when those lines really happened.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..timeline import Boot, Clock, ConsoleLog, SourceInfo, in_range
from .console import SYSLOG_DATE, VENDOR_CONTEXT, Interpreter
from .kernel_messages import is_banner
from .lines import CONTROL_BYTES, clean, decode
from .userspace import Patterns

DMESG = re.compile(
    r"^(?:<\d+>)?(?:[a-z]+\s*:[a-z]+\s*: )?\[\s*(?P<sec>\d+)\.(?P<frac>\d{6,9})(?: <\s*-?\d+\.\d+>)?\]"
    r"(?:\[\s*(?P<caller>[TC]\d+)\])?" + VENDOR_CONTEXT + " ?"  # (a vendor kernel's CPU/task/PID: see console)
)
# The wall clock dmesg computes as boot time + printk time, to the microsecond.
DMESG_ISO = re.compile(
    r"^(?:<\d+>)?(?:[a-z]+\s*:[a-z]+\s*: )?(?P<wall>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(?P<us>\d{6})"
    r"(?P<tz>[+-]\d\d:?\d\d) ")
# dmesg -T (--time-format=ctime): whole seconds of a wall clock that drifts after a suspend.
DMESG_CTIME = re.compile(r"^(?:<\d+>)?\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]")
# dmesg --time-format=delta (`[<    0.000123>]`) and -e/-H (--time-format=reltime: `[  +0.000123]`,
# or the minute, `[Nov23 10:00]`, on the first message of each minute): the time since the
# message before, to the microsecond.
DMESG_RELATIVE = re.compile(r"^(?:<\d+>)?\[(?:<\s*(?P<delta>-?\d+\.\d{6})>|\s*(?P<rel>[+-]\d+\.\d{6})"
                            r"|(?P<minute>[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d))\] ?")
SYSLOG = re.compile(r"^(?:\S.*?\s)?kernel: \[\s*(?P<sec>\d+)\.(?P<frac>\d{6,9})\] ?")
# Another program's syslog line (a host name or, BusyBox's syslogd, none): read as untimed
# text, in order; its wall-clock time, to the second, places nothing.
SYSLOG_OTHER = re.compile(rf"^{SYSLOG_DATE} (?:\S+ )??[^\s\[:]+(?:\[\d+\])?: ")
# The identifier is a program name: "EXT4-fs (mmcblk0p2): ..." in a dmesg is not a journal line.
JOURNAL = re.compile(
    r"^\[\s*(?P<sec>\d+)\.(?P<frac>\d{6})\] (?P<host>[\w.-]+) (?P<ident>[\w.@/+-]+)(?:\[(?P<pid>\d+)\])?: "
)
KMSG = re.compile(r"^(?P<level>\d+),(?P<seq>\d+),(?P<us>\d+),[^;]*;")

FORMATS = ("dmesg", "dmesg-iso", "dmesg-relative", "syslog", "journal", "kmsg")
# A dmesg this big goes to the bulk reader (which loads numpy: not for small logs).
BULK_MIN_BYTES = 400_000


def sniff(lines: list[str]) -> dict[str, float]:
    """Score each variant by the share of sample lines it reads."""
    scores = {}
    n = max(1, len(lines))
    for name, regex in (("journal", JOURNAL), ("kmsg", KMSG), ("syslog", SYSLOG), ("dmesg", DMESG),
                        ("dmesg-iso", DMESG_ISO), ("dmesg-relative", DMESG_RELATIVE), ("ctime", DMESG_CTIME)):
        hits = sum(1 for line in lines if regex.match(line))
        scores[name] = hits / n
    if scores["journal"] > 0.5:
        scores["dmesg"] = 0.0  # a journal line also starts with a stamp
    return scores


def _counted_from(boot: Boot, file: str, msg: str, lineno: int) -> None:
    """A log whose stamps count from its first message: say so when that is not the kernel's
    first (the buffer wrapped), since its times then do not count from kernel start."""
    if not is_banner(msg):
        boot.warn(file, lineno, "the log does not begin with the kernel's first message, so its "
                                "times count from this line, not from kernel start")


class WallClock:
    """dmesg --time-format=iso prints boot time + printk time: the first message's stamp
    is the boot time when it is the kernel's first message (printk time zero)."""

    def __init__(self, boot: Boot, file: str):
        self.boot, self.file = boot, file
        self.base: int | None = None
        self.seconds: dict[str, int] = {}  # "2026-11-21T11:20:07+00:00" -> epoch seconds

    def printk_time(self, m: re.Match, msg: str, lineno: int) -> int | None:
        """The line's printk time; None when its date does not exist."""
        key = m.group("wall") + m.group("tz")
        second = self.seconds.get(key)
        if second is None:
            tz = m.group("tz")
            try:
                second = int(datetime.fromisoformat(m.group("wall") + tz[:3] + ":" + tz[-2:]).timestamp())
            except ValueError:
                return None
            self.seconds[key] = second
        wall = second * 1_000_000_000 + int(m.group("us")) * 1_000
        if self.base is None:
            self.base = wall
            _counted_from(self.boot, self.file, msg, lineno)
        return wall - self.base


class RelativeClock:
    """dmesg --time-format=delta and reltime give each message's time since the one before,
    exact to the microsecond (the records' own stamps subtracted): their running sum is the
    printk time, counted from the first message shown (zero when it is the kernel's first).
    reltime prints the minute instead of the delta on the first message of each minute: the
    time before such a line is unknown and counted as none, so every time after it is a
    lower bound (a warning names the line).  util-linux counts deltas only from a message
    with a stamp other than zero: the first such stamp (the microseconds the kernel's clock
    took to start) is lost, and every later time is early by it."""

    def __init__(self, boot: Boot, file: str):
        self.boot, self.file = boot, file
        self.now: int | None = None

    def printk_time(self, m: re.Match, msg: str, lineno: int) -> int | None:
        step = m.group("delta") or m.group("rel")
        if self.now is None:
            self.now = 0
            _counted_from(self.boot, self.file, msg, lineno)
        elif step is None:
            self.boot.warn(self.file, lineno, f"dmesg printed the minute ({m.group('minute')}) instead of the time since "
                                              "the message before: that time is unknown and counted as none, so "
                                              "this line and those after it may be early by it")
        else:  # six decimals: the step in microseconds, negative when two CPUs' stamps are out of order
            self.now += int(step.replace(".", "")) * 1_000
        return self.now


def journal_entry(interp: Interpreter, t: int, ident: str, pid: str | None, msg: str, lineno: int) -> None:
    """One journal entry: the kernel's message, or a program's (systemd's units)."""
    if ident == "kernel":
        interp.kernel(t, msg, lineno)
        return
    who = f"{ident}[{pid}]" if pid else ident
    interp.user.patterns_seen(Clock.PRINTK, t, msg, lineno)
    interp.user.feed(Clock.PRINTK, t, f"{who}: {msg}", lineno)


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, variant: str) -> None:
    if variant == "dmesg" and len(data) >= BULK_MIN_BYTES:
        from . import dmesg_bulk

        if dmesg_bulk.parse(boot, file, data, patterns, DMESG):
            return
    log = ConsoleLog(file, Clock.PRINTK, printed=False)
    interp = Interpreter(boot, file, patterns, log)
    regex = {"dmesg": DMESG, "dmesg-iso": DMESG_ISO, "dmesg-relative": DMESG_RELATIVE, "syslog": SYSLOG,
             "journal": JOURNAL, "kmsg": KMSG}[variant]
    # Stamps that are not printk times but give them: a wall clock, or the time since the message before.
    walls = {"dmesg-iso": WallClock, "dmesg-relative": RelativeClock}.get(variant)
    walls = walls(boot, file) if walls else None
    ns = 1_000_000_000
    kernel = interp.kernel
    append = log.append
    unreadable = 0
    first_bad = 0
    n = 0
    lines = decode(data).split("\n")
    if lines and not lines[-1]:
        lines.pop()
    exact = data.isascii()
    # Most logs have no escapes or control characters at all: then no line needs cleaning.
    dirty = CONTROL_BYTES.search(data) is not None
    unterminated = len(lines) if not data.endswith(b"\n") else 0  # the last line has no newline
    for n, raw in enumerate(lines, 1):
        nbytes = (len(raw) if exact else len(raw.encode("utf-8", "replace"))) + (n != unterminated)
        text = clean(raw) if dirty else raw
        m = regex.match(text)
        if m is not None:
            if walls is not None:
                t = walls.printk_time(m, text[m.end():], n)
            elif variant == "kmsg":
                t = int(m.group("us")) * 1000
            else:
                t = int(m.group("sec")) * ns + int((m.group("frac") + "000")[:9])
            if not (t is not None and in_range(t)):
                m = None  # a date that does not exist, or a time out of range: garbage
            elif walls is None:
                t = interp.printk_time(t, n, text[m.end():])
        if m is None:
            if variant == "kmsg" and text.startswith(" "):
                continue  # /dev/kmsg dictionary line (KEY=value), not printed
            if text.strip():
                other = SYSLOG_OTHER.match(text) if variant == "syslog" else None
                if other is None:
                    if not first_bad:
                        first_bad = n
                    unreadable += 1
                interp.text(None, None, text[other.end():] if other else text, n)
            # A syslog's other programs never wrote to the kernel's console.
            append(None, text, n, 0 if variant == "syslog" and text.strip() and other else nbytes)
            continue
        msg = text[m.end():]
        if variant == "journal":
            journal_entry(interp, t, m.group("ident"), m.group("pid"), msg, n)
        else:
            kernel(t, msg, n)
        if variant == "syslog":  # the console printed the record from its stamp on, not syslog's prefix
            nbytes -= len(text[:m.group(0).rfind("[")].encode("utf-8", "replace"))
        append(t, text, n, nbytes)
    interp.close()
    if unreadable and unreadable * 2 > n:
        boot.warn(file, first_bad, f"{unreadable} of {n} lines are not {variant} lines")
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, variant, len(lines), 0))
