"""initcall_debug: initcall spans, driver probes, async waits and initcall levels.

Recognises, inside printk messages:

    calling  fn+0x0/0x6b @ 1
    initcall fn+0x0/0x16b [mod] returned 0 after 787 usecs
    initcall fn+0x0/0x16b returned -19 after 0 msecs          (2.6.2x: msecs)
    calling  0xffffffffc0a01000 @ 12                         (no kallsyms: bare address)
    calling  12_sd_probe_async+0x0/0x1c0 @ 95                  (async function, cookie 12)
    initcall 12_sd_probe_async+0x0/0x1c0 returned after 5123 usecs
    async_waiting @ 1 / async_continuing @ 1 after 1234 usec
    probe of 0000:00:02.0 returned 0 after 1234 usecs
    entering initcall level: fs
    Calling initcall 0xc0123456: fn+0x0/0x40()                (2.6.24 and older)
    initcall 0xc0123456: fn+0x0/0x40() returned 0.
    initcall 0xc0123456 ran for 12 msecs: fn+0x0/0x40()

A `calling` line may start in the middle of another message (two printks racing on the
console); it is found anywhere in the line, with its own embedded timestamp if it has one.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, NS_PER_US, Boot, Clock, Event, Kind
from .lines import seconds_to_ns

_SYM = r"(?P<sym>\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?:\(\))?"
CALLING = re.compile(
    r"(?:\[\s*(?P<ts>\d+\.\d+)\](?:\[\s*[TC]\d+\])?\s*)?calling  " + _SYM + r"(?: \[(?P<mod>[^\]]+)\])? @ (?P<pid>\d+)"
)
RETURNED = re.compile(
    r"initcall " + _SYM + r"(?: \[(?P<mod>[^\]]+)\])? returned (?:(?P<ret>-?\d+) )?after (?P<n>\d+) (?P<unit>usecs|msecs)"
)
OLD_CALLING = re.compile(r"Calling initcall 0x[0-9a-f]+: " + _SYM + r"\s*$")
OLD_RETURNED = re.compile(r"initcall 0x[0-9a-f]+: " + _SYM + r" returned (?P<ret>-?\d+)\.")
OLD_RAN = re.compile(r"initcall 0x[0-9a-f]+ ran for (?P<n>\d+) msecs: " + _SYM + r"\s*$")
FIXUP_TOOK = re.compile(r"(?P<dev>\S+): (?P<sym>[\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+ took (?P<n>\d+) usecs")
PROBE = re.compile(r"probe of (?P<dev>\S+) returned (?P<ret>-?\d+) after (?P<n>\d+) usecs")
ASYNC_WAIT = re.compile(r"async_waiting @ (?P<pid>\d+)")
ASYNC_CONT = re.compile(r"async_continuing @ (?P<pid>\d+) after (?P<n>\d+) usec")
LEVEL = re.compile(r"entering initcall level: (?P<level>\S+)")
# The common case, a message that starts with the keyword, without the general search.
_FAST_SYM = r"(?P<sym>[^\s+(]+)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[(?P<mod>[^\]]+)\])?"
CALLING_AT_START = re.compile(r"calling  " + _FAST_SYM + r" @ (?P<pid>\d+)")
RETURNED_AT_START = re.compile(
    r"initcall " + _FAST_SYM + r" returned (?:(?P<ret>-?\d+) )?after (?P<n>\d+) (?P<unit>usecs|msecs)")
_ASYNC_COOKIE = re.compile(r"^(\d+)_(.+)$")

# Only messages holding one of "calling  ", "initcall ", "probe of ", "async_",
# "Calling initcall" or " took " reach the expressions (console.Interpreter.kernel tests
# them inline: it runs for every kernel line).


def _split_cookie(sym: str) -> tuple[str, int | None]:
    if not sym[:1].isdigit():
        return sym, None  # the usual case: a function name
    m = _ASYNC_COOKIE.match(sym)
    if m and not sym.startswith("0x"):
        return m.group(2), int(m.group(1))
    return sym, None


class InitcallReader:
    """Pairs `calling` with `returned` lines of one log and adds the spans to a boot."""

    def __init__(self, boot: Boot, file: str, clock: str = Clock.PRINTK):
        self.boot = boot
        self.file = file
        self.clock = clock
        self.pending: dict[str, list[tuple[int, int, str]]] = {}  # sym -> [(t, line, pid)]
        self.waiting: dict[str, tuple[int, int]] = {}  # pid -> (t, line) of async_waiting
        self.level: str | None = None
        # Most initcalls share their attributes (ret 0, a level): one dict for each such set
        # keeps a million-line log small.  Attributes are never modified after creation.
        self.shared_attrs: dict[tuple, dict] = {}
        self.tracks: dict[str | None, str] = {}  # pid -> swim lane, one string for all its initcalls
        self.events = boot.events

    def feed(self, t: int | None, msg: str, lineno: int) -> bool:
        """Interpret one message; True if it was an initcall_debug message."""
        if msg.startswith("calling  "):
            m = CALLING_AT_START.match(msg)
            if m:
                self.call(t, lineno, *m.groups())
                return True
        elif msg.startswith("initcall "):
            m = RETURNED_AT_START.match(msg)
            if m:
                self.returned(t, lineno, *m.groups())
                return True
        if "calling  " in msg:
            m = CALLING.search(msg)
            if m:
                ts = m.group("ts")
                start = seconds_to_ns(ts) if ts else t
                self.pending.setdefault(self._key(m.group("sym"), m.group("mod")), []).append(
                    (start, lineno, m.group("pid"))
                )
                return True
        if "initcall " in msg:
            m = RETURNED.search(msg)
            if m:
                dur = int(m.group("n")) * (NS_PER_US if m.group("unit") == "usecs" else NS_PER_MS)
                ret = m.group("ret")
                self._finish(m.group("sym"), m.group("mod"), t, dur, None if ret is None else int(ret), lineno)
                return True
            m = OLD_RAN.search(msg)
            if m:
                self._finish(m.group("sym"), None, t, int(m.group("n")) * NS_PER_MS, None, lineno)
                return True
            if OLD_RETURNED.search(msg):
                return True  # the "ran for" line that follows carries the duration
            m = LEVEL.search(msg)
            if m:
                self.level = m.group("level")
                self.boot.add(Event(Kind.LEVEL, self.level, self.clock, t, None, self.file, lineno))
                return True
        if "Calling initcall" in msg:
            m = OLD_CALLING.search(msg)
            if m:
                self.pending.setdefault(self._key(m.group("sym"), None), []).append((t, lineno, "1"))
                return True
        if " took " in msg:
            m = FIXUP_TOOK.search(msg)
            if m:
                # A PCI fixup run for one device: "pci 0000:01:00.0: fn+0x0/0x60 took 6 usecs"
                self._finish(m.group("sym"), None, t, int(m.group("n")) * NS_PER_US, None, lineno,
                             {"device": m.group("dev").split()[-1], "fixup": True})
                return True
        if "probe of " in msg:
            m = PROBE.search(msg)
            if m:
                dur = int(m.group("n")) * NS_PER_US
                self.boot.add(
                    Event(
                        Kind.PROBE,
                        m.group("dev"),
                        self.clock,
                        None if t is None else t - dur,
                        dur,
                        self.file,
                        lineno,
                        "probes",
                        attrs={"ret": int(m.group("ret"))},
                    )
                )
                return True
        if "async_" in msg:
            m = ASYNC_WAIT.search(msg)
            if m:
                self.waiting[m.group("pid")] = (t, lineno)
                return True
            m = ASYNC_CONT.search(msg)
            if m:
                pid = m.group("pid")
                dur = int(m.group("n")) * NS_PER_US
                self.waiting.pop(pid, None)
                self.boot.add(
                    Event(
                        Kind.ASYNC_WAIT,
                        "async wait",
                        self.clock,
                        None if t is None else t - dur,
                        dur,
                        self.file,
                        lineno,
                        f"pid {pid}",
                    )
                )
                return True
        return False

    @staticmethod
    def _key(sym: str, mod: str | None) -> str:
        return f"{sym} [{mod}]" if mod else sym

    def call(self, t: int | None, lineno: int, sym: str, mod: str | None, pid: str) -> None:
        """`calling  SYM [MOD] @ PID` (the groups of CALLING_AT_START)."""
        self.pending.setdefault(self._key(sym, mod), []).append((t, lineno, pid))

    def returned(self, t: int | None, lineno: int, sym: str, mod: str | None, ret: str | None, n: str,
                 unit: str) -> None:
        """`initcall SYM [MOD] returned RET after N UNIT` (the groups of RETURNED_AT_START)."""
        dur = int(n) * (NS_PER_US if unit == "usecs" else NS_PER_MS)
        self._finish(sym, mod, t, dur, None if ret is None else int(ret), lineno)

    def _finish(self, raw_sym: str, mod: str | None, t: int | None, dur: int, ret: int | None, lineno: int,
                extra: dict | None = None) -> None:
        key = self._key(raw_sym, mod)
        stack = self.pending.get(key)
        pid = None
        start = None if t is None else t - dur
        if stack:
            call_t, _call_line, pid = stack.pop()
            if not stack:
                del self.pending[key]
            if call_t is not None:
                start = call_t
        sym, cookie = _split_cookie(raw_sym)
        level = "module" if mod else self.level
        shared = (ret, mod, cookie, level)
        attrs = None if extra else self.shared_attrs.get(shared)
        if attrs is None:
            attrs = dict(extra) if extra else {}
            if ret is not None:
                attrs["ret"] = ret
            if mod:
                attrs["module"] = mod
            if cookie is not None:
                attrs["async"] = cookie
            if level:
                attrs["level"] = level
            if not extra:
                self.shared_attrs[shared] = attrs
        track = self.tracks.get(pid)
        if track is None:
            track = self.tracks[pid] = f"pid {pid}" if pid else "initcalls"
        self.events.append(Event(Kind.INITCALL, sym, self.clock, start, dur, self.file, lineno, track, None, attrs))

    def close(self, end: int | None) -> None:
        """Report initcalls that never returned: they ran until the log ended (or hung)."""
        for key, stack in self.pending.items():
            for t, lineno, pid in stack:
                self.boot.warn(self.file, lineno, f"initcall {key} was called but never returned in this log")
                sym, cookie = _split_cookie(key.split(" [")[0])
                dur = None if t is None or end is None else max(0, end - t)
                attrs = {"unfinished": True}
                if cookie is not None:
                    attrs["async"] = cookie
                self.boot.add(
                    Event(Kind.INITCALL, sym, self.clock, t, dur, self.file, lineno, f"pid {pid}", attrs=attrs)
                )
        self.pending.clear()

