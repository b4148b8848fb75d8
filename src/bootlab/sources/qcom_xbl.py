"""Qualcomm's boot chain log, on the UART before Linux: the PBL's statistics, XBL's (SBL1's)
lines stamped in microseconds since the power-on reset, and its UEFI's milestones in
milliseconds since then.

    Format: Log Type - Time(microsec) - Message - Optional Info
    S -    101609 - PBL, End                        the BootROM ran this long
    B -    122915 - SBL1, Start                     "B": since the power-on reset
    B -    248087 - boot_flash_init, Start
    D -        30 - boot_flash_init, Delta          "D": how long the step just started took
    B -    955199 - SBL1, End
    UEFI Start     [ 1173] SEC                      UEFI, in ms since the reset
    POST Time      [ 5633] OS Loader                the OS loader (Android's ABL) starts
    Exit EBS        [ 6593] UEFI End                ExitBootServices: the OS loader runs

Their stamps are the bootloader clock, which starts at the reset: the PBL is the firmware
phase, XBL and UEFI the bootloader's stages, and UEFI's exit the kernel's handover.  A
stamped line is taken for XBL's only from its format line or a `B -`/`S -` line naming PBL
or SBL1 on: other firmware prints dashes too.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, NS_PER_US, Boot, Event, Kind, Mark

STAMP = re.compile(r"^(?P<kind>[BS]) -\s+(?P<us>\d+) - (?P<msg>.*)$")
DELTA = re.compile(r"^D -\s+(?P<us>\d+) - (?P<name>[^,]+), Delta\b")
UEFI = re.compile(r"^(?P<what>UEFI Start|POST Time|Start EBS|Exit EBS)\s+\[\s*(?P<ms>\d+)\]\s*(?P<msg>.*)$")
FORMAT_LINE = re.compile(r"^Format: Log Type - Time\(microsec\) - Message")
STEP = re.compile(r"^(?P<name>[^,]+), (?P<edge>Start|End)$")
BOOTROM = "PBL"  # the primary bootloader, in the SoC's ROM: firmware
FIRST_STAGE = "SBL1"  # XBL's first stage: the bootloader starts with it
UEFI_STAGE = "UEFI"
OS_LOADER = "UEFI's OS loader"


class XblLines:
    """Recognises the boot chain's lines and reads their stamps."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.seen = False  # its format line or a PBL/SBL1 line was read
        self.started: dict[str, tuple[str, int, int]] = {}  # a step begun: (clock, time, line)
        self.mine: str | None = None  # the message stamp() took the stamp off last

    def stamp(self, text: str) -> tuple[int, str] | None:
        """(the line's time on the bootloader clock, its message), or None."""
        if FORMAT_LINE.match(text):
            self.seen = True
            return None
        m = STAMP.match(text)
        if m is not None and (self.seen or m.group("msg").startswith((BOOTROM, FIRST_STAGE))):
            self.seen = True
            self.mine = m.group("msg")
            return int(m.group("us")) * NS_PER_US, self.mine
        m = UEFI.match(text)
        if m is not None and (self.seen or m.group("what") == "UEFI Start"):
            self.seen = True  # (UEFI's log alone: fastboot's `oem dmesg` of its memory)
            self.mine = f"{m.group('what')}: {m.group('msg')}"
            return int(m.group("ms")) * NS_PER_MS, self.mine
        return None

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        """True when the line is the boot chain's (one stamp() read, or a "D -" line)."""
        mine, self.mine = text == self.mine, None
        if not self.seen:
            return False
        m = DELTA.match(text)
        if m:
            return self._end(m.group("name"), None, int(m.group("us")) * NS_PER_US)
        if not mine or t is None:
            return False
        if text == f"{BOOTROM}, End":  # the BootROM's run, from the reset
            self.boot.meta.setdefault("firmware", "Qualcomm PBL")
            self.boot.add(Event(Kind.STAGE, BOOTROM, clock, 0, t, self.file, lineno, "firmware"))
            self.boot.add(Event(Kind.MARKER, Mark.FIRMWARE_START, clock, 0, None, self.file, lineno,
                                attrs={"firmware": "Qualcomm PBL"}))
            return True
        m = STEP.match(text)
        if m and m.group("edge") == "Start":
            if m.group("name") == FIRST_STAGE:
                self.boot.meta.setdefault("bootloader", "Qualcomm XBL")
                self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, self.file, lineno,
                                    attrs={"stage": "xbl"}))
            self.started[m.group("name")] = (clock, t, lineno)
            return True
        if m:
            return self._end(m.group("name"), t, None)
        if text.startswith("UEFI Start:"):
            self.started[UEFI_STAGE] = (clock, t, lineno)
            return True
        if text.startswith("POST Time:"):  # UEFI's core has started the OS loader (Android's ABL)
            self.started[OS_LOADER] = (clock, t, lineno)
            return True
        if text.startswith("Exit EBS:"):
            self._end(OS_LOADER, t, None)
            self._end(UEFI_STAGE, t, None)
            self.boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, clock, t, None, self.file, lineno,
                                attrs={"via": "UEFI ExitBootServices"}))
            return True
        return True  # another of its lines: a fact, a version, a step's statistic

    def _end(self, name: str, t: int | None, dur: int | None) -> bool:
        """A step's end (its time) or its length (a "D -" line, which has no time of its
        own): a stage from its start, on its start's clock."""
        begun = self.started.pop(name, None)
        if begun is None:
            return True  # its start was not seen (or it was timed already): nothing to time
        clock, start, lineno = begun
        self.boot.add(Event(Kind.STAGE, name, clock, start, dur if dur is not None else t - start, self.file, lineno,
                            "bootloader"))
        return True
