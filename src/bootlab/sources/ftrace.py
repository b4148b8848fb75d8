"""ftrace text output with the initcall events (boot with `trace_event=initcall:*`, then
read /sys/kernel/tracing/trace):

    # tracer: nop
           swapper/0-1       [000] .....     0.177155: initcall_level: level=console
           swapper/0-1       [000] .....     0.177157: initcall_start: func=con_init+0x0/0x230
           swapper/0-1       [000] .....     0.177237: initcall_finish: func=con_init+0x0/0x230 ret=0

ftrace's default clock is the same local clock printk uses, so the events land on the
printk clock.
"""

from __future__ import annotations

import re

from ..timeline import Boot, Clock, Event, Kind, SourceInfo
from .initcall import attributes
from .lines import clean, seconds_to_ns, split

FORMAT = "ftrace"
LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<ts>\d+\.\d+): (?P<event>\w+): ?(?P<body>.*)$"
)
_FUNC = re.compile(r"func=(?P<sym>[^+\s]+)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[(?P<mod>[^\]]+)\])?")
_RET = re.compile(r"ret=(?P<ret>-?\d+)")
_LEVEL = re.compile(r"level=(?P<level>\S+)")


def sniff(lines: list[str]) -> float:
    if any(line.startswith("# tracer:") for line in lines[:3]):
        return 0.9
    hits = sum(1 for line in lines if "initcall_" in line and LINE.match(line))
    return min(1.0, 2 * hits / max(1, len(lines)))


def parse(boot: Boot, file: str, data: bytes) -> None:
    pending: dict[tuple[str, str], tuple[int, int]] = {}
    level = None
    count = n = 0
    for line in split(data):
        n += 1
        text = clean(line.text)
        if not text.strip() or text.startswith("#"):
            continue
        m = LINE.match(text)
        if not m:
            boot.warn(file, line.lineno, "not an ftrace event line")
            continue
        t = seconds_to_ns(m.group("ts"))
        event, body, pid = m.group("event"), m.group("body"), m.group("pid")
        if event == "initcall_level":
            lm = _LEVEL.search(body)
            level = lm.group("level") if lm else None
            boot.add(Event(Kind.LEVEL, level or "?", Clock.PRINTK, t, None, file, line.lineno))
        elif event in ("initcall_start", "initcall_finish"):
            fm = _FUNC.search(body)
            if not fm:
                boot.warn(file, line.lineno, f"{event} without func=")
                continue
            key = (pid, fm.group("sym"))
            if event == "initcall_start":
                pending[key] = (t, line.lineno)
                continue
            started = pending.pop(key, None)
            start = started[0] if started else t
            rm = _RET.search(body)
            attrs = attributes(None, int(rm.group("ret")) if rm else None, fm.group("mod"), None, level)
            boot.add(Event(Kind.INITCALL, fm.group("sym"), Clock.PRINTK, start, t - start, file, line.lineno,
                           f"pid {pid}", attrs=attrs))
            count += 1
    for (pid, sym), (t, lineno) in pending.items():
        boot.warn(file, lineno, f"initcall {sym} started but never finished in this trace")
        boot.add(Event(Kind.INITCALL, sym, Clock.PRINTK, t, None, file, lineno, f"pid {pid}", attrs={"unfinished": True}))
    boot.sources.append(SourceInfo(file, FORMAT, n, count))
