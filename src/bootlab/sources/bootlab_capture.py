"""bootlab's own capture format: every console byte, losslessly, with host arrival times.

A text file, one record per console line, written as the bytes arrive:

    #bootlab-capture 1 {"zero": "power-on", "started": "2026-11-21T11:23:00+00:00", ...}
    0.000000000 ! power-on
    0.153107012 | SeaBIOS (version 1.16.2-debian-1.16.2-1)\\r
    0.191530410 | Probing EDD (edd=off to disable)... o\\@3.406905118;k\\x1bc[    0.000000] Linux ...
    5.145189000 | BOOTLAB READY

The first field is the host monotonic time, in seconds with nanoseconds, of the record's
first byte; zero is power-on (or the start of the capture when no power switch is used:
the header's "zero" says which).  The flag is `|` for console bytes and `!` for an event of
the capture itself (power-on, a reconnect gap, the end, a stall of the host: `stalled 16.0 ms
(what kept it)`, see capture/stalls.py).  A console line's bytes follow its
flag as they arrive and its LF ends the record, so a crash or a kill loses nothing already
read (the last record may then be unfinished).  Inside a record, `\\@T;` says the bytes after
it arrived at time T, after a pause; a record that ends in `\\~` did not end the console
line (an event came in between) and the next `|` record continues it.  Every byte is kept:
backslash is `\\\\`, CR is `\\r`, other control bytes and bytes that are not valid UTF-8 are
`\\xNN`; valid UTF-8 stays as it is, so the file reads as text.
"""

from __future__ import annotations

import json
import re

from ..timeline import Boot, Clock, ConsoleLog, Event, Kind, Mark, SourceInfo
from .console import Interpreter, Segment
from .lines import seconds_to_ns
from .userspace import Patterns

FORMAT = "bootlab-capture"
# What a capture typed at the device (its `! sent '...'` events; LAVA's `input` records):
# a bootloader prompt it answered is no person's.
SENT = "capture.sent"
MAGIC = b"#bootlab-capture 1"
RECORD = re.compile(rb"^(?P<t>-?\d+\.\d{9}) (?P<flag>[|!]) ?(?P<payload>.*)$")
_ESC = re.compile(rb"\\(x[0-9a-fA-F]{2}|r|\\|n)")
_MARK = re.compile(rb"\\@(-?\d+\.\d{9});")
CONTINUES = b"\\~"
_NEEDS_ESCAPE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f\\]")
_STALLED = re.compile(r"stalled (\d+\.\d) ms \(")


def stalled(ns: int, why: str) -> str:
    """The text of the event that says the host kept the console waiting `ns`."""
    return f"stalled {ns / 1e6:.1f} ms ({why})"


def stalled_ns(text: str) -> int | None:
    """How long a `stalled` event says the console waited, or None for another event."""
    m = _STALLED.match(text)
    return round(float(m[1]) * 1e6) if m else None


def format_time(t_ns: int) -> str:
    sign = "-" if t_ns < 0 else ""
    t_ns = abs(t_ns)
    return f"{sign}{t_ns // 1_000_000_000}.{t_ns % 1_000_000_000:09d}"


def escape(data: bytes) -> bytes:
    """Bytes -> payload: printable text and valid UTF-8 kept, everything else escaped."""
    if data.isascii() and not _NEEDS_ESCAPE.search(data):
        return data
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        b = data[i]
        if b >= 0x80:
            length = 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
            chunk = data[i:i + length] if length else b""
            if length and len(chunk) == length:
                try:
                    chunk.decode("utf-8")
                except UnicodeDecodeError:
                    pass
                else:
                    out += chunk
                    i += length
                    continue
            out += b"\\x%02x" % b
        elif b == 0x0D:
            out += b"\\r"
        elif b == 0x5C:
            out += b"\\\\"
        elif b == 0x0A:
            out += b"\\n"
        elif b < 0x20 and b != 0x09 or b == 0x7F:
            out += b"\\x%02x" % b
        else:
            out.append(b)
        i += 1
    return bytes(out)


def unescape(payload: bytes) -> bytes:
    def sub(m: re.Match) -> bytes:
        code = m.group(1)
        if code == b"r":
            return b"\r"
        if code == b"n":
            return b"\n"
        if code == b"\\":
            return b"\\"
        return bytes([int(code[1:], 16)])

    return _ESC.sub(sub, payload) if b"\\" in payload else payload


def record(t_ns: int, flag: str, payload: bytes) -> bytes:
    """One whole record (a complete console line without its LF, or an event)."""
    return format_time(t_ns).encode() + b" " + flag.encode() + b" " + escape(payload) + b"\n"


def time_mark(t_ns: int) -> bytes:
    return b"\\@" + format_time(t_ns).encode() + b";"


def header(meta: dict) -> bytes:
    return MAGIC + b" " + json.dumps(meta, sort_keys=True).encode() + b"\n"


def sniff(data: bytes) -> float:
    return 1.0 if data.startswith(MAGIC) else 0.0


def iter_records(data: bytes, file: str, boot: Boot):
    """Yield (lineno, t_ns, flag, payload) for each well-formed record; the payload is
    still escaped (time marks and the continuation mark are escapes too)."""
    for lineno, rawline in enumerate(data.split(b"\n"), 1):
        if not rawline or rawline.startswith(b"#"):
            continue
        m = RECORD.match(rawline)
        if not m:
            boot.warn(file, lineno, "not a capture record (damaged line skipped)")
            continue
        yield lineno, seconds_to_ns(m.group("t").decode()), m.group("flag").decode(), m.group("payload")


def segments(t: int, payload: bytes) -> list[tuple[int, bytes]]:
    """A record's payload as (arrival time, raw bytes) pieces, split at its time marks."""
    pieces = []
    start = 0
    for m in _MARK.finditer(payload):
        pieces.append((t, unescape(payload[start:m.start()])))
        t = seconds_to_ns(m.group(1).decode())
        start = m.end()
    pieces.append((t, unescape(payload[start:])))
    return [(pt, raw) for pt, raw in pieces if raw] or [(t, b"")]


def console_bytes(data: bytes) -> bytes:
    """The console's bytes exactly as they arrived, without stamps or events."""
    out = bytearray()
    for _lineno, t, flag, payload in iter_records(data, "", Boot()):
        if flag != "|":
            continue
        continues = payload.endswith(CONTINUES) and not payload.endswith(b"\\" + CONTINUES)
        if continues:
            payload = payload[:-len(CONTINUES)]
        out += b"".join(raw for _, raw in segments(t, payload))
        if not continues:
            out += b"\n"
    return bytes(out)


def _icount(argv) -> str | None:
    """`-icount ARGS` when the capture's QEMU ran with it: the guest's clocks then count its
    instructions (timeline.Boot.align places them where they were seen)."""
    if not isinstance(argv, list) or "-icount" not in argv:
        return None
    at = argv.index("-icount")
    return " ".join(str(a) for a in argv[at:at + 2])


def parse(boot: Boot, file: str, data: bytes, patterns: Patterns) -> None:
    first = data.split(b"\n", 1)[0]
    try:
        meta = json.loads(first[len(MAGIC):].decode() or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError):
        meta = None
    if not isinstance(meta, dict):  # (a header whose JSON is a number or a list is as damaged)
        meta = {}
        boot.warn(file, 1, "capture header is damaged; reading records anyway")
    boot.meta.setdefault("host_zero", meta.get("zero", "capture start"))
    for key in ("baud", "source", "target", "cmdline", "scheduling", "line_byte_ns"):
        if meta.get(key):
            boot.meta.setdefault(f"capture_{key}", meta[key])
    if meta.get("baud"):
        boot.meta.setdefault("console_baud", meta["baud"])
    icount = _icount(meta.get("argv"))
    if icount is not None:
        boot.meta.setdefault("virtual_clock", icount)
    log = ConsoleLog(file, Clock.HOST, printed=True)
    interp = Interpreter(boot, file, patterns, log)
    pending: list[Segment] = []
    start_line = 0
    lines = 0
    for lineno, t, flag, payload in iter_records(data, file, boot):
        if flag == "!":
            text = unescape(payload).decode("utf-8", "replace")
            name = Mark.POWER_ON if text == "power-on" else f"capture.{text.split()[0] if text else 'event'}"
            boot.add(Event(Kind.MARKER, name, Clock.HOST, t, None, file, lineno, attrs={"detail": text}))
            continue
        if not pending:
            start_line = lineno
        continues = payload.endswith(CONTINUES) and not payload.endswith(b"\\" + CONTINUES)
        if continues:
            payload = payload[:-len(CONTINUES)]
        pending += [Segment(pt, raw.decode("utf-8", "replace")) for pt, raw in segments(t, payload)]
        if continues:
            continue
        raw_len = sum(len(s.text.encode("utf-8", "replace")) for s in pending)
        lines += 1
        interp.console_line(pending, "".join(s.text for s in pending), start_line, raw_len + 1)
        pending = []
    if pending:
        lines += 1
        interp.console_line(pending, "".join(s.text for s in pending), start_line,
                            sum(len(s.text.encode("utf-8", "replace")) for s in pending))
    interp.close()
    boot.logs.append(log)
    boot.sources.append(SourceInfo(file, FORMAT, lines, 0))
