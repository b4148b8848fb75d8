"""LAVA job logs: a test lab's record of a job, every line stamped with the dispatcher's UTC
clock as it logged the line.  KernelCI and LKFT publish thousands of them, from real boards
power-cycled by the lab: consoles from power-on.

Two shapes.  The job's own log (the server's download, `lavacli jobs logs --raw`), one
record a line, the board's console at level `target`, what LAVA typed at `input`:

    - {"dt": "2023-01-13T04:29:38.551542", "lvl": "info", "msg": "end: 2.3.1.1 pdu-reboot ..."}
    - {"dt": "2023-01-13T04:30:28.012345", "lvl": "target", "msg": "iPXE initialising devices...ok"}

and the same rendered as text (the web page, `lavacli jobs logs`, logs quoted in mails),
stamped to the second, LAVA's own lines among the board's and told apart by their shape:

    2023-01-13T04:29:38 end: 2.3.1.1 pdu-reboot (duration 00:00:05) [common]
    2023-01-13T04:30:28 iPXE initialising devices...ok

Power-on is where LAVA's power action ended (`pdu-reboot`, `power-on`): the command that
switched the board on had returned.  A line is stamped when LAVA logged it, after its last
byte had come (LAVA logs whole lines), so later than its first byte by its own serial time
and by however long the dispatcher took to read it.  A rendered stamp says only that LAVA
had the line by the end of that second: it is read so (see _rendered).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import yaml

from ..timeline import HOST_RESOLUTION, NS_PER_S, Boot, Clock, ConsoleLog, Event, Kind, Mark, SourceInfo
from .bootlab_capture import SENT
from .console import Interpreter, Segment
from .errors import NotALog
from .lines import clean, split
from .userspace import Patterns

FORMAT = "lava"

RECORD = re.compile(r'^- \{"dt": "')
RENDERED = re.compile(r"^(?P<dt>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?) ?(?P<msg>.*)$")
# An action's start and end, LAVA's frame around everything it does.
ACTION = re.compile(r"^(?P<edge>start|end): (?P<level>\d+(?:\.\d+)*) (?P<name>[\w-]+) \((?:timeout|duration) ")
# The actions whose end has switched the board on: a hard reset's commands (off, on) or on alone.
POWER_ACTIONS = frozenset({"pdu-reboot", "power-on"})
# LAVA's own lines in the rendered shape (levels info, debug, results and the rest): actions,
# the commands it runs and their output, what it waits for, what it matched, its results.
LAVA_OWN = re.compile(
    r"^(?:(?:start|end): \d+(?:\.\d+)* [\w-]+ \(|Calling: |>> |Returned -?\d+ in \d+ seconds"
    r"|Setting prompt string to |Changing prompt to |[\w-]+: Wait for prompt |Matched prompt #|"
    r"Sending with \d+ millisecond|\{'case': |substitutions:$|Parsed boot commands:$|- \S"
    r"|\[[\w-]+\] [\w-]+ |Using line separator|Waiting for the login prompt|Parsing kernel messages"
    r"|[\w-]+: (?:bootloader|kernel|login|auto-login|boot) |Job finished|Waiting for |Forcing a shell prompt"
    r"|Connecting to |Disconnecting |Received signal: |Starting test lava|Marking unfinished test run|"
    r"Listened to connection for namespace|Finalising connection|Power-off|Power-on|Root filesystem|"
    r"Extracting |Downloading |downloading |Dispatched|lava-[\w-]+(?: |:))")
# What LAVA logs before a line it types when typing slowly (a U-Boot or iPXE prompt).
SENDING = re.compile(r"^Sending with \d+ millisecond")
# The serial server's lines as LAVA connects (telnet, ser2net's banner): not the board's.
CONNECTION = re.compile(r"^(?:Trying [\d.:a-fA-F]+\.\.\.|Connected to \S+\.|Escape character is '\^\]'\.)$")
SER2NET_BAUD = re.compile(r"\[(?P<baud>\d{4,7}) ?[NOEMS][5-8][12]\]")
# LAVA drops the ESC of a console's escape sequences and keeps the rest (`[0m`, `[?25h`);
# only tails with a number are taken for one (`[mmc]`, `[A]` are text).
ESCAPE_TAIL = re.compile(r"\[(?:\?\d+[hl]|\d[\d;]*m|\d+[ABCDGJK]|\d+;\d+[Hf])")
KERNEL_BANNER = re.compile(r"Linux version \d")
EPOCH = datetime(1970, 1, 1)
MICROSECOND = datetime(1970, 1, 1, 0, 0, 0, 1) - EPOCH


def sniff(lines: list[str]) -> float:
    if not lines:
        return 0.0
    records = sum(1 for line in lines if RECORD.match(line))
    if records:
        return records / len(lines)
    if not any(ACTION.match(m.group("msg")) for m in map(RENDERED.match, lines) if m):
        return 0.0  # ISO stamps alone are many programs' (a journal's short-iso); LAVA frames its actions
    return sum(1 for line in lines if RENDERED.match(line)) / len(lines)


def _ns(dt: str) -> int:
    """An ISO time of the dispatcher's UTC clock in ns since the epoch (ValueError if not one)."""
    d = datetime.fromisoformat(dt)
    if d.tzinfo is not None:
        d = d.astimezone(timezone.utc).replace(tzinfo=None)
    return (d - EPOCH) // MICROSECOND * 1000


def _record(text: str) -> dict | None:
    """One YAML record (`- {...}`): LAVA writes it in double-quoted flow style, which JSON reads
    unless it escapes a character the YAML way (`\\x07`, `\\e`, a non-ASCII byte)."""
    body = text[2:]
    try:
        rec = json.loads(body)
    except ValueError:
        try:
            rec = yaml.load(body, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("dt"), str) and "lvl" in rec else None


class _Entry:
    __slots__ = ("lineno", "t", "lvl", "msg", "nbytes")

    def __init__(self, lineno: int, t: int, lvl: str, msg, nbytes: int):
        self.lineno, self.t, self.lvl, self.msg, self.nbytes = lineno, t, lvl, msg, nbytes


def _rendered(text: str, typed: bool) -> tuple[int, str, str] | None:
    """(time, level, text) of a rendered line; `typed` when LAVA said it was about to type.
    The stamp says that LAVA had the line by the end of its second: it is read so."""
    m = RENDERED.match(text)
    if not m:
        return None
    msg = m.group("msg")
    lvl = "info" if LAVA_OWN.match(clean(msg)) else "input" if typed else "target"
    return _ns(m.group("dt")) + (NS_PER_S if "." not in m.group("dt") else 0), lvl, msg


def _yaml(text: str) -> tuple[int, str, object] | None:
    rec = _record(text) if RECORD.match(text) else None
    if rec is None:
        return None
    msg = rec.get("msg")
    if rec["lvl"] == "target" and isinstance(msg, str):
        msg = msg.replace('\\"', '"')  # LAVA escapes a console's quotes before it writes the record
    return _ns(rec["dt"]), str(rec["lvl"]), msg


def _records(boot: Boot, file: str, data: bytes) -> tuple[list[_Entry], bool]:
    """The log's entries in order, and whether it is the rendered shape (to the second)."""
    entries: list[_Entry] = []
    rendered = None
    typed = False
    damaged = 0
    for line in split(data):
        text = line.text.rstrip("\r")
        if not text.strip():
            continue
        if rendered is None:
            rendered = not RECORD.match(text)
        try:  # (lavacli colours the rendered lines on a terminal)
            got = _rendered(clean(text), typed) if rendered else _yaml(text)
        except ValueError:  # no time of day
            got = None
        if got is None:
            damaged += 1
            if damaged == 1:
                boot.warn(file, line.lineno, "not a line of a LAVA log (no time at its start); skipped" if rendered
                          else "not a record of a LAVA job log (a damaged or cut line); skipped")
            continue
        t, lvl, msg = got
        typed = bool(rendered and SENDING.match(msg))
        entries.append(_Entry(line.lineno, t, lvl, msg, len(str(msg).encode("utf-8", "replace")) + 1))
    if damaged > 1:
        boot.warn(file, 0, f"{damaged} lines were not LAVA records and were skipped")
    return entries, bool(rendered)


def _boot_window(entries: list[_Entry]) -> tuple[int, int, _Entry | None]:
    """The entries of one boot: from the end of the last power action before the kernel's
    banner (a retried power-on leaves earlier attempts behind it) to the next power action."""
    banner = next((k for k, e in enumerate(entries) if e.lvl == "target" and isinstance(e.msg, str)
                   and KERNEL_BANNER.search(e.msg)), len(entries))
    power = None
    for k in range(banner):
        e = entries[k]
        if e.lvl != "target" and isinstance(e.msg, str):
            m = ACTION.match(e.msg)
            if m and m.group("edge") == "end" and m.group("name") in POWER_ACTIONS:
                power = k
    start = power + 1 if power is not None else 0
    end = next((k for k in range(max(banner, start), len(entries))
                if entries[k].lvl != "target" and isinstance(entries[k].msg, str)
                and (m := ACTION.match(entries[k].msg)) and m.group("edge") == "start"
                and m.group("name") in POWER_ACTIONS), len(entries))
    return start, end, entries[power] if power is not None else None


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    entries, rendered = _records(boot, file, data)
    if not entries:
        raise NotALog(file, 1, "no line of a LAVA job log (`- {\"dt\": ...}` records or `2023-01-13T04:29:38 ...` "
                               "lines) in it")
    start, end, power = _boot_window(entries)
    zero = power.t if power is not None else next((e.t for e in entries[start:end] if e.lvl == "target"), 0)
    log = ConsoleLog(file, Clock.HOST, printed=True)
    interp = Interpreter(boot, file, patterns, log)
    if power is not None:
        boot.meta.setdefault("host_zero", "power-on")
        boot.add(Event(Kind.MARKER, Mark.POWER_ON, Clock.HOST, 0, None, file, power.lineno,
                       attrs={"detail": f"LAVA's {clean(power.msg).split(' (')[0]}: the board's power command "
                                        "had returned"}))
    else:
        boot.meta.setdefault("host_zero", "LAVA's first console line (no power action of LAVA in the log)")
    before = sum(1 for e in entries[:start] if e.lvl == "target")
    if before and power is not None:
        boot.warn(file, entries[start - 1].lineno, f"{before} console lines before LAVA's last power-on "
                                                   "(an earlier attempt of the job) are not read")
    after = sum(1 for e in entries[end:] if e.lvl == "target")
    if after:
        boot.warn(file, entries[end].lineno, f"LAVA powers the board again here: the {after} console lines "
                                             "after it (a later boot of the job) are not read")
    for e in entries[start:end]:
        t = e.t - zero
        if e.lvl == "input":
            boot.add(Event(Kind.MARKER, SENT, Clock.HOST, t, None, file, e.lineno,
                           attrs={"detail": f"LAVA typed {str(e.msg).rstrip()!r}"}))
            continue
        if e.lvl != "target" or not isinstance(e.msg, str):
            continue  # LAVA's own records, another namespace's console (feedback), results
        text = clean(e.msg)
        if CONNECTION.match(text.strip()):
            continue
        baud = SER2NET_BAUD.search(text) if not len(log) else None  # its banner, before the board's first byte
        if baud:
            if "console_baud" not in boot.meta:
                boot.meta["console_baud"] = int(baud.group("baud"))
                boot.meta["console_baud_from"] = "the serial server's banner"
            continue
        msg, escapes = ESCAPE_TAIL.subn("", e.msg)
        interp.console_line([Segment(t, msg)], msg, e.lineno, e.nbytes + escapes)
    interp.close()
    if rendered:
        boot.meta[HOST_RESOLUTION] = NS_PER_S
        boot.warn(file, 0, "LAVA's log as rendered, stamped to the second: a console line is placed at the end of "
                           "the second LAVA had it by (printk stamps time the kernel within it); the job's "
                           "YAML log (`lavacli jobs logs --raw`) is stamped to the microsecond")
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, len(entries), 0))
