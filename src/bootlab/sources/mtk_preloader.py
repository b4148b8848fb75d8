"""MediaTek's preloader, the loader its BootROM starts on MT67xx/MT8xxx SoCs (phones, tablets,
the Genio IoT boards), profiles its own boot: as each step ends it prints the milliseconds the
step took (BOOTING_TIME_PROFILING_LOG), then hands LK their sum:

    #T#Preloader Start=0                 it starts (after the BootROM)
    #T#mem_init=435                      DRAM calibration
    #T#USB handshake=684                 waiting for a download tool on USB (a board in the
                                         field need not: its BootROM has a download mode too)
    #T#load images=562                   reading and verifying LK, TF-A and the TEE
    BOOT_TIME: 2187                      the steps' sum, handed to LK

The steps run one after another.  The lines carry no time of their own: on a capture with
host times each step ends at its line; on a plain transcript they are durations only.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, Boot, Event, Kind, Mark

STEP = re.compile(r"^#T#(?P<name>[^=]+)=(?P<ms>\d+)\s*$")
FIRST = "Preloader Start"
NAME = "MediaTek preloader"
STAGE = "preloader: {}"
USB_HANDSHAKE = STAGE.format("USB handshake")


class PreloaderLines:
    """Reads the preloader's profile: its start, and each step as a stage of the bootloader."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        m = STEP.match(text) if text.startswith("#T#") else None
        if m is None:
            return False
        name, dur = m.group("name").strip(), int(m.group("ms")) * NS_PER_MS
        if name == FIRST:
            self.boot.meta.setdefault("bootloader", NAME)
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, self.file, lineno,
                                attrs={"stage": "mtk-preloader"}))
        elif dur:  # (a step of 0 ms says nothing)
            self.boot.add(Event(Kind.STAGE, STAGE.format(name), clock, None if t is None else t - dur, dur,
                                self.file, lineno, "bootloader"))
        return True
