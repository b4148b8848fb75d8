"""Console lines of bootloaders that stamp each line with bare milliseconds, "[N] text":
Qualcomm's Little Kernel (LK, and lk2nd), the bootloader of MSM and APQ boards and of
Android devices built on them, and Allwinner's boot0, the first stage of its vendor boot
chain.  Their stamps are the bootloader clock.

LK counts the milliseconds since it started:

    [0] welcome to lk                                        it starts
    [280] Loading boot image (5283840): start                reading the boot image
    [370] Loading boot image (5283840): done
    [380] decompress image start                              inflating a gzipped kernel
    [650] decompressed image finished.
    [880] Jumping to kernel via monitor                       the handover

boot0 counts those of the SoC's timer, which its vendor U-Boot goes on stamping in
seconds (`[00.403]CPU:   Allwinner Family`, uboot.VENDOR_STAMP):

    [53]HELLO! BOOT0 is starting!                             it starts (after the BootROM)
    [325]Jump to second Boot.                                 it hands over to TF-A or OP-TEE, then U-Boot
    [4792]Jump to ATF: monitor_base = 0x48000000, ...         (newer boot0s name the next stage)

A bare "[N]" is taken for a stamp only from one of their banners on: other firmware prints
such counters too (a router's CFE: `[0] find End at 0xBF13E000`).
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, Boot, Event, Kind, Mark

STAMP = re.compile(r"^\[(?P<ms>\d+)\] ?(?P<msg>.*)$")  # boot0 puts no space after it
BOOT0_STAGE = "boot0"  # from its banner to its jump (LK's jump is the kernel's handover)
# Each loader's banner: its name (the boot's "bootloader" until a later stage names itself)
# and its stage.
BANNERS = ((re.compile(r"^welcome to lk\b"), "LK", "lk"),
           (re.compile(r"^HELLO! BOOT0 is starting"), "Allwinner boot0", BOOT0_STAGE))
BOOT0_HANDOVER = re.compile(r"^Jump to (?:second Boot|ATF\b)")
LOADING = re.compile(r"^Loading (?:\((?P<part>\w+)\) |(?P<name>\w+) )image \((?P<bytes>\d+)\): (?P<end>start|done)")
DECOMPRESS = re.compile(r"^decompress(?:ed)? image (?P<end>start|finished)")
HANDOVER = re.compile(r"^Jumping to kernel")
DECOMPRESS_STAGE = "decompress kernel"  # the bootloader inflating the kernel itself (Image.gz)


class LkLines:
    """Recognises LK's console lines and reads its stamps."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.seen = False  # a banner was read: "[N]" is a stamp from there on
        self.started: dict[str, tuple[int | None, int]] = {}  # a stage begun: (time, line number)

    def stamp(self, text: str) -> tuple[int, str] | None:
        """(the line's time on the bootloader clock, the line without its stamp), or None."""
        m = STAMP.match(text)
        if m is None or not (self.seen or _banner(m.group("msg"))):
            return None
        self.seen = True
        return int(m.group("ms")) * NS_PER_MS, m.group("msg")

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        if not self.seen:
            return False
        banner = _banner(text)
        if banner is not None:
            name, stage = banner
            self.boot.meta.setdefault("bootloader", name)
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, self.file, lineno,
                                attrs={"stage": stage}))
            if stage == BOOT0_STAGE:
                self.started[stage] = (t, lineno)
            return True
        if BOOT0_HANDOVER.match(text):
            return self._stage(BOOT0_STAGE, False, clock, t, lineno, {})
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


def _banner(text: str) -> tuple[str, str] | None:
    """(the loader's name, its stage) when the line is one of BANNERS."""
    return next(((name, stage) for pattern, name, stage in BANNERS if pattern.match(text)), None)
