"""coreboot's boot timestamps as `cbmem -t` prints them: each a point in µs of the firmware's
timer since the reset, with the time since the one before in parentheses.

       0:1st timestamp                                     18,886
       1:start of romstage                                 18,958 (71)
       3:after ram initialization                          2,225,788 (2,179,453)
      99:selfboot jump                                     2,514,808 (30)
    1000:depthcharge start                                 2,600,104 (85,296)
    1101:jumping to kernel                                 3,410,882 (12,930)
    Total Time: 3,410,882

The numbers before the colon are coreboot's ids (src/commonlib/include/commonlib/
timestamp_serialized.h): 99 is the jump to the payload (SeaBIOS, GRUB, edk2, a Chromebook's
depthcharge), which is the bootloader, and depthcharge's 1101 its jump to the kernel.  Each
row ends a step that began at the row before it; the step is named by that row, as cbmem
prints it (`after ram initialization` is the 2.18 s of RAM training).
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_US, Boot, Clock, Event, Kind, Mark, SourceInfo
from .lines import split

FORMAT = "coreboot-timestamps"
ROW = re.compile(r"^\s*(?P<id>-?\d+):(?P<name>.*?)\s+(?P<us>\d[\d,]*)(?: \((?P<delta>-?[\d,]+)\))?\s*$")
TOTAL = re.compile(r"^Total Time: (?P<us>[\d,]+)\s*$")
PAYLOAD_JUMP = 99  # TS_SELFBOOT_JUMP
KERNEL_JUMP = 1101  # depthcharge's TS_START_KERNEL
FIRST = 0  # "1st timestamp": the base, where coreboot's first stage ran


def sniff(lines: list[str]) -> float:
    rows = [m for m in map(ROW.match, lines) if m]
    if not rows or not any(int(m.group("id")) in (FIRST, 1, 11, PAYLOAD_JUMP) for m in rows):
        return 0.0
    return (len(rows) + sum(1 for line in lines if TOTAL.match(line))) / len(lines)


def _us(text: str) -> int:
    return int(text.replace(",", "")) * NS_PER_US


def parse(boot: Boot, file: str, data: bytes) -> None:
    clock = Clock.BOOTLOADER  # the firmware's timer, from the reset
    boot.meta.setdefault("firmware", "coreboot")
    previous: tuple[int, int] | None = None  # (time, line) of the row before
    rows = 0
    for line in split(data):
        m = ROW.match(line.text)
        if not m:
            if line.text.strip() and not TOTAL.match(line.text):
                boot.warn(file, line.lineno, f"not a cbmem -t row: {line.text.strip()[:60]!r}")
            continue
        rows += 1
        ident, name, t = int(m.group("id")), m.group("name").strip(), _us(m.group("us"))
        if rows == 1:
            boot.add(Event(Kind.MARKER, Mark.FIRMWARE_START, clock, 0, None, file, line.lineno,
                           attrs={"firmware": "coreboot"}))
        if previous is not None and t >= previous[0]:
            # (cbmem's own difference, from the timer's ticks, where it prints one: the rows are rounded)
            took = _us(m.group("delta")) if m.group("delta") and not m.group("delta").startswith("-") else t - previous[0]
            boot.add(Event(Kind.STAGE, name, clock, previous[0], took, file, line.lineno,
                           "bootloader" if ident >= 1000 else "firmware", attrs={"id": ident}))
        elif previous is None and ident == FIRST:
            boot.add(Event(Kind.STAGE, "before coreboot's first timestamp", clock, 0, t, file, line.lineno,
                           "firmware"))
        if ident == PAYLOAD_JUMP:
            boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, file, line.lineno,
                           attrs={"stage": "payload"}))
        elif ident == KERNEL_JUMP:
            boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, clock, t, None, file, line.lineno,
                           attrs={"via": "depthcharge"}))
        previous = (t, line.lineno)
    if not rows:
        boot.warn(file, 0, "no cbmem -t row in it")
    boot.sources.append(SourceInfo(file, FORMAT, rows, rows))
