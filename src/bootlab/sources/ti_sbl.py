"""TI's secondary bootloader (SBL) of the MCU+ SDK on AM62x/AM64x/J7 SoCs, which loads
TF-A, U-Boot or Linux straight from the boot media (TI's path to a fast Linux boot).  Built
with profiling, each SBL stage prints its own account as it ends, in microseconds:

    [BOOTLOADER PROFILE] System_init                      :       6688us
    [BOOTLOADER PROFILE] Drivers_open                     :      50067us
    [BOOTLOADER PROFILE] App_loadImages                   :      23087us
    [BOOTLOADER_PROFILE] SBL Total Time Taken             :     114756us

The steps run one after another and add up to the total.  The lines carry no time of their
own: on a capture with host times the stage ends at its total line and its steps are placed
back to back before it; on a plain transcript they are durations only.  The other
`[BOOTLOADER_PROFILE]` lines (boot media, clock, image size) are facts, not times.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_US, Boot, Clock, Event, Kind, Mark

PROFILE = re.compile(r"^\[BOOTLOADER[ _]PROFILE\] (?P<name>.*?)\s*:\s*(?P<us>\d+)\s*us\s*$")
FACT = re.compile(r"^\[BOOTLOADER[ _]PROFILE\] ")
TOTAL = "SBL Total Time Taken"
STAGE = "TI SBL"


class SblLines:
    """Reads an SBL's profile lines; its steps wait for the stage's total, which places them."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.steps: list[tuple[str, int, int]] = []  # (name, ns, line) of the stage being read
        self.stages = 0
        self.clock = Clock.HOST  # the clock of the last line read

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        self.clock = clock
        m = PROFILE.match(text)
        if m is None:
            return bool(FACT.match(text))
        dur = int(m.group("us")) * NS_PER_US
        if m.group("name") != TOTAL:
            self.steps.append((m.group("name"), dur, lineno))
            return True
        self.stages += 1
        name = STAGE if self.stages == 1 else f"{STAGE} (stage {self.stages})"
        start = None if t is None else t - dur
        self.boot.add(Event(Kind.STAGE, name, clock, start, dur, self.file, lineno, "bootloader"))
        if start is not None and self.stages == 1:
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, start, None, self.file, lineno,
                                attrs={"stage": "ti-sbl", "note": "TI SBL's total, back from its line"}))
        self._steps(clock, start, name)
        return True

    def _steps(self, clock: str, start: int | None, stage: str) -> None:
        for step, dur, lineno in self.steps:
            self.boot.add(Event(Kind.STAGE, f"{stage}: {step}", clock, start, dur, self.file, lineno, "bootloader"))
            if start is not None:
                start += dur
        self.steps = []

    def close(self) -> None:
        """Steps of a stage whose total never came: durations only."""
        self._steps(self.clock, None, STAGE)
