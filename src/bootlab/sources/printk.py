"""The kernel log in every shape it is saved in.

    dmesg      [    1.234567] msg                       (also <6>[...] from dmesg -r,
               [  311.349740][    T1] msg               caller id, and dmesg -x's
               kern  :info  : [    1.234567] msg        facility/level prefix)
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

from ..timeline import Boot, Clock, ConsoleLog, SourceInfo
from .console import Interpreter
from .lines import CONTROL_BYTES, clean, decode
from .userspace import Patterns

DMESG = re.compile(
    r"^(?:<\d+>)?(?:[a-z]+\s*:[a-z]+\s*: )?\[\s*(?P<sec>\d+)\.(?P<frac>\d{6,9})\](?:\[\s*(?P<caller>[TC]\d+)\])? ?"
)
SYSLOG = re.compile(r"^(?:\S.*?\s)?kernel: \[\s*(?P<sec>\d+)\.(?P<frac>\d{6,9})\] ?")
# The identifier is a program name: "EXT4-fs (mmcblk0p2): ..." in a dmesg is not a journal line.
JOURNAL = re.compile(
    r"^\[\s*(?P<sec>\d+)\.(?P<frac>\d{6})\] (?P<host>[\w.-]+) (?P<ident>[\w.@/+-]+)(?:\[(?P<pid>\d+)\])?: "
)
KMSG = re.compile(r"^(?P<level>\d+),(?P<seq>\d+),(?P<us>\d+),[^;]*;")

FORMATS = ("dmesg", "syslog", "journal", "kmsg")
# A dmesg this big goes to the bulk reader (which loads numpy: not for small logs).
BULK_MIN_BYTES = 400_000


def sniff(lines: list[str]) -> dict[str, float]:
    """Score each variant by the share of sample lines it reads."""
    scores = {}
    n = max(1, len(lines))
    for name, regex in (("journal", JOURNAL), ("kmsg", KMSG), ("syslog", SYSLOG), ("dmesg", DMESG)):
        hits = sum(1 for line in lines if regex.match(line))
        scores[name] = hits / n
    if scores["journal"] > 0.5:
        scores["dmesg"] = 0.0  # a journal line also starts with a stamp
    return scores


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns, variant: str) -> None:
    if variant == "dmesg" and len(data) >= BULK_MIN_BYTES:
        from . import dmesg_bulk

        if dmesg_bulk.parse(boot, file, data, patterns, DMESG):
            return
    log = ConsoleLog(file, Clock.PRINTK, printed=False)
    interp = Interpreter(boot, file, patterns, log)
    regex = {"dmesg": DMESG, "syslog": SYSLOG, "journal": JOURNAL, "kmsg": KMSG}[variant]
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
        if m is None:
            if variant == "kmsg" and text.startswith(" "):
                continue  # /dev/kmsg dictionary line (KEY=value), not printed
            if text.strip():
                if not first_bad:
                    first_bad = n
                unreadable += 1
                interp.text(None, None, text, n)
            append(None, text, n, nbytes)
            continue
        if variant == "kmsg":
            t = int(m.group("us")) * 1000
        else:
            t = int(m.group("sec")) * ns + int((m.group("frac") + "000")[:9])
        msg = text[m.end():]
        if variant == "journal":
            ident = m.group("ident")
            if ident == "kernel":
                kernel(t, msg, n)
            else:
                pid = m.group("pid")
                who = f"{ident}[{pid}]" if pid else ident
                interp.user.patterns_seen(Clock.PRINTK, t, msg, n)
                interp.user.feed(Clock.PRINTK, t, f"{who}: {msg}", n)
        else:
            kernel(t, msg, n)
        append(t, text, n, nbytes)
    interp.close()
    if unreadable and unreadable * 2 > n:
        boot.warn(file, first_bad, f"{unreadable} of {n} lines are not {variant} lines")
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, variant, len(lines), 0))
