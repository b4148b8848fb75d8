"""journalctl's wall-clock outputs: `-o short` (its default), `short-precise`, `short-iso`,
`short-iso-precise` and `short-full`.

    Nov 21 11:23:00 board kernel: Linux version 6.1.0-26-arm64 ...         short
    Nov 21 11:23:02.512345 board systemd[1]: Started ssh.service.          short-precise
    2026-11-21T11:23:02+0000 board systemd[1]: Started ssh.service.        short-iso
    2026-11-21T11:23:02.512345+00:00 board kernel: ...                     short-iso-precise
    Sat 2026-11-21 11:23:02 UTC board systemd[1]: Started ssh.service.     short-full

A line's time is the wall clock when the entry was logged: to the second in most of these,
and for kernel messages the moment journald read them from the kernel, which for
everything before journald started is one instant in userspace.  So lines are not placed by
it.  What such a journal carries is read: systemd's own figures (`Startup finished in 1.2s
(kernel) + 2.1s (initrd) + 5.3s (userspace) = 8.6s`), kernel messages that keep their own
printk stamp (`kernel: [    1.234567] ...`, a journal fed from syslog), what the lines say
(the kernel version, the units started, in order but untimed).  A journal with neither
figures nor stamps is refused with the reason, as `dmesg -T` is (so is a syslog of the
same shape, whose kernel lines lack the printk stamps the syslog format reads).
"""

from __future__ import annotations

import re

from ..timeline import Boot, Clock, ConsoleLog, SourceInfo
from . import systemd_analyze
from .console import PRINTK_AT_START, Interpreter, stamp_ns
from .lines import clean, split
from .userspace import Patterns

FORMAT = "journal-short"

LINE = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d{6})?"  # short, short-precise
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{6})?(?:Z|[+-]\d\d:?\d\d)"  # short-iso(-precise)
    r"|[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})? \S+)"  # short-full
    r" (?P<host>\S+) (?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: ?"
)
# journalctl's own lines: `-- Boot 5d9a... --`, `-- Journal begins at ... --`, `-- No entries --`.
OWN = re.compile(r"^-- .* --$")
REFUSAL = ("journalctl wall-clock output (-o short, short-precise, short-iso or short-full; or a syslog "
           "without the kernel's printk stamps): its times are when each line was logged, and it holds neither "
           "systemd's `Startup finished` figures nor kernel lines with their own printk times; save it with "
           "`journalctl -b -o short-monotonic` or `journalctl -b -o json`")
NOTE = ("journalctl wall-clock output: lines are read in order but not placed by their wall-clock times "
        "(when journald logged them); for every line's time save `journalctl -b -o short-monotonic` or `-o json`")


class WallClockJournal(ValueError):
    """A wall-clock journal that holds nothing bootlab can time."""


def sniff(lines: list[str]) -> float:
    return sum(1 for line in lines if LINE.match(line)) / max(1, len(lines))


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    log = ConsoleLog(file, Clock.PRINTK, printed=False)
    interp = Interpreter(boot, file, patterns, log)
    timed = figures = entries = n = 0
    kernel = False  # the entry being read is the kernel's (its lines are the kernel log's)
    for line in split(data):
        n = line.lineno
        text = clean(line.text)
        m = LINE.match(text)
        t = None
        if m is not None:
            entries += 1
            kernel = m.group("ident") == "kernel"
            msg = text[m.end():]
            stamp = PRINTK_AT_START.match(msg) if kernel else None
            if stamp is not None:
                t = interp.printk_time(stamp_ns(stamp), n, msg[stamp.end():])
                interp.kernel(t, msg[stamp.end():], n)
                timed += 1
            elif kernel:
                interp.text(None, None, msg, n)
            else:
                who = f"{m.group('ident')}[{m.group('pid')}]" if m.group("pid") else m.group("ident")
                interp.user.patterns_seen(Clock.PRINTK, None, msg, n)
                interp.user.feed(Clock.PRINTK, None, f"{who}: {msg}", n)
            if "Startup finished in " in msg and systemd_analyze.read_time(boot, file, msg, n):
                figures += 1
        elif OWN.match(text):
            kernel = False
        elif text.strip():
            interp.text(None, None, text, n)  # a message's continuation line
        if kernel:  # a program's entry never went through the kernel's console
            log.append(t, text, n, line.nbytes)
    interp.close()
    if not (timed or figures):
        raise WallClockJournal(REFUSAL if entries else "journalctl output without entries")
    if entries > timed:
        boot.warn(file, 1, NOTE)
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, n, entries))
