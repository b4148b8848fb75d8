"""Console lines of Qualcomm's Little Kernel (LK, and lk2nd), the bootloader of MSM and
APQ boards and of Android devices built on them.

LK stamps its lines with the milliseconds since it started, its own clock (the bootloader
clock):

    [0] welcome to lk                                        it starts
    [280] Loading boot image (5283840): start                reading the boot image
    [370] Loading boot image (5283840): done
    [380] decompress image start                              inflating a gzipped kernel
    [650] decompressed image finished.
    [880] Jumping to kernel via monitor                       the handover

A bare "[N]" is taken for its stamp only from its banner on: other firmware prints such
counters too (a router's CFE: `[0] find End at 0xBF13E000`).
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, Boot, Event, Kind, Mark

STAMP = re.compile(r"^\[(?P<ms>\d+)\] (?P<msg>.*)$")
BANNER = re.compile(r"^welcome to lk\b")
LOADING = re.compile(r"^Loading (?:\((?P<part>\w+)\) |(?P<name>\w+) )image \((?P<bytes>\d+)\): (?P<end>start|done)")
DECOMPRESS = re.compile(r"^decompress(?:ed)? image (?P<end>start|finished)")
HANDOVER = re.compile(r"^Jumping to kernel")
DECOMPRESS_STAGE = "decompress kernel"  # the bootloader inflating the kernel itself (Image.gz)


class LkLines:
    """Recognises LK's console lines and reads its stamps."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.seen = False  # its banner was read: "[N]" is its stamp from there on
        self.started: dict[str, tuple[int | None, int]] = {}  # a stage begun: (time, line number)

    def stamp(self, text: str) -> tuple[int, str] | None:
        """(the line's time on the bootloader clock, the line without its stamp), or None."""
        m = STAMP.match(text)
        if m is None or not (self.seen or BANNER.match(m.group("msg"))):
            return None
        self.seen = True
        return int(m.group("ms")) * NS_PER_MS, m.group("msg")

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        if not self.seen:
            return False
        if BANNER.match(text):
            self.boot.meta.setdefault("bootloader", "LK")
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, self.file, lineno,
                                attrs={"stage": "lk"}))
            return True
        if HANDOVER.match(text):
            self.boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, clock, t, None, self.file, lineno, attrs={"via": "LK"}))
            return True
        m = LOADING.match(text)
        if m:
            image = m.group("part") or m.group("name")
            return self._stage(f"load {image} image", m.group("end") == "start", clock, t, lineno,
                               {"bytes": int(m.group("bytes"))})
        m = DECOMPRESS.match(text)
        if m:
            return self._stage(DECOMPRESS_STAGE, m.group("end") == "start", clock, t, lineno, {})
        return False

    def _stage(self, name: str, begins: bool, clock: str, t: int | None, lineno: int, attrs: dict) -> bool:
        if begins:
            self.started[name] = (t, lineno)
            return True
        start = self.started.pop(name, None)
        if start is None or start[0] is None or t is None:
            return True  # its start was not seen: nothing to time
        self.boot.add(Event(Kind.STAGE, name, clock, start[0], t - start[0], self.file, start[1], "bootloader",
                            attrs=attrs or None))
        return True
