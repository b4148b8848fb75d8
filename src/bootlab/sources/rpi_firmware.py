"""The Raspberry Pi's boot firmware on its UART (BOOT_UART=1 in the EEPROM's configuration,
uart_2ndstage=1 in config.txt): the EEPROM bootloader of the Pi 4 and 5, and the GPU
firmware (start4.elf) that boots the Pi 4's ARM cores.  Both count from the SoC's reset on
its system timer (STC):

      0.79 RPi: BOOTSYS release VERSION:d76c4603 DATE: 2026/01/09 ...   newer EEPROMs stamp each line in s
      0.79 BOOTMODE: 0x06 partition 0 ... stc 796145                     the STC in µs, on every EEPROM
      2.74 RPi: BOOTLOADER release VERSION:d76c4603 ...                  its second stage (bootmain)
      3.17 Starting start4.elf @ 0xfec00200 partition 1                  the GPU firmware takes over
    MESS:00:00:05.624940:0: Loaded 'initramfs8' to 0x0 size 0xa5a68a     its log, h:m:s.µs since the reset
    MESS:00:00:08.421056:0: arm_loader: Starting ARM with 948MB          the kernel's handover

Older EEPROMs stamp nothing but `stc` on their BOOTMODE line, which places that line; the
Pi 5's EEPROM loads TF-A and the kernel itself.  The BootROM before the EEPROM is the
firmware phase, from the reset; the EEPROM's stages and the GPU firmware are the
bootloader's.  A bare "  0.79 " is taken for a stamp only from the EEPROM's banner on.
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_S, NS_PER_US, Boot, Clock, Event, Kind, Mark

BANNER = re.compile(r"^RPi: (?P<stage>BOOT\w+) release VERSION:(?P<version>\w+)")
STAMP = re.compile(r"^\s*(?P<s>\d+)\.(?P<cs>\d\d) (?P<msg>.*)$")
STC = re.compile(r"^BOOTMODE: .*\bstc (?P<us>\d+)")
MESS = re.compile(r"^MESS:(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)\.(?P<us>\d{6}):\d+: (?P<msg>.*)$")
GPU_FIRMWARE = re.compile(r"^Starting (?P<elf>start\w*\.elf)\b")
HANDOVER = re.compile(r"^arm_loader: Starting ARM\b")
BOOTROM = "Raspberry Pi BootROM"


class RpiFirmwareLines:
    """Reads the Pi firmware's stamps and recognises its milestones."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.seen = False  # the EEPROM's banner was read
        self.stage: tuple[str, int] | None = None  # the EEPROM stage whose start is not placed yet: (name, line)
        self.running: tuple[str, str, int, int] | None = None  # the stage under way: (name, clock, start, line)
        self.mine: str | None = None  # the message stamp() took the stamp off last
        self.handed_over = False  # the ARM cores were started: a line's "1.23 " is no more its
        self.last_stamp = 0  # the EEPROM's last stamp, and where its stamps went back: (line, by how much)
        self.back: list[tuple[int, int]] = []

    def stamp(self, text: str, lineno: int) -> tuple[int, str] | None:
        """(the line's time since the reset, its message), or None."""
        m = MESS.match(text)
        if m:
            self.mine = m.group("msg")
            seconds = int(m.group("h")) * 3600 + int(m.group("m")) * 60 + int(m.group("s"))
            return seconds * NS_PER_S + int(m.group("us")) * NS_PER_US, self.mine
        m = STAMP.match(text) if not self.handed_over else None
        if m and (self.seen or BANNER.match(m.group("msg"))):
            self.seen = True
            self.mine = m.group("msg")
            t = int(m.group("s")) * NS_PER_S + int(m.group("cs")) * NS_PER_S // 100
            if t < self.last_stamp:
                self.back.append((lineno, self.last_stamp - t))
            self.last_stamp = t
            return t, self.mine
        m = STC.match(text)
        if m and self.seen:
            self.mine = text
            return int(m.group("us")) * NS_PER_US, text
        return None

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        mine, self.mine = text == self.mine, None
        m = BANNER.match(text)
        if m:
            self.boot.meta.setdefault("firmware", BOOTROM)
            self.seen = True
            self.boot.meta["bootloader"] = f"Raspberry Pi EEPROM {m.group('version')}"
            self.stage = (f"EEPROM {m.group('stage')}", lineno)
            if t is not None:  # stamped by itself or by the host; else its BOOTMODE line's stc places it
                self._start(clock, t, lineno)
            return True
        if not self.seen and not mine:
            return False
        if self.stage is not None and mine and t is not None:  # its BOOTMODE line's stc, or a stamped line
            self._start(clock, t, self.stage[1])
        m = GPU_FIRMWARE.match(text)
        if m:
            self._end(clock, t)
            if t is not None:
                self.running = (m.group("elf"), clock, t, lineno)
            return True
        if HANDOVER.match(text):
            self.handed_over = True
            self._end(clock, t)
            self.boot.add(Event(Kind.MARKER, Mark.KERNEL_LOAD, clock, t, None, self.file, lineno,
                                attrs={"via": "Raspberry Pi GPU firmware"}))
            return True
        return mine  # another of its stamped lines: a fact, a file read

    def close(self) -> None:
        """A Pi 4's EEPROM stamps some lines up to 0.6 s later than the lines after them
        (2.84, then 2.48): the stages they place are uncertain by that much, which is said."""
        if self.back:
            worst = max(by for _, by in self.back)
            self.boot.warn(self.file, self.back[0][0],
                           f"the EEPROM's stamps go back {'once' if len(self.back) == 1 else f'{len(self.back)} times'}, by up to {worst / NS_PER_S:.2f} s "
                           "(the first here): the steps they place are uncertain by that much")

    def _start(self, clock: str, t: int, line: int) -> None:
        """An EEPROM stage placed: the first one starts the bootloader, after the BootROM."""
        name, _ = self.stage
        self.stage = None
        first = self.running is None and not self.boot.marks(Mark.BOOTLOADER_START)
        self._end(clock, t)
        if first and clock == Clock.BOOTLOADER:  # its own clock counts from the reset: the BootROM's run before
            self.boot.add(Event(Kind.MARKER, Mark.FIRMWARE_START, clock, 0, None, self.file, line,
                                attrs={"firmware": BOOTROM}))
            self.boot.add(Event(Kind.STAGE, BOOTROM, clock, 0, t, self.file, line, "firmware"))
        if first:
            self.boot.add(Event(Kind.MARKER, Mark.BOOTLOADER_START, clock, t, None, self.file, line,
                                attrs={"stage": name}))
        self.running = (name, clock, t, line)

    def _end(self, clock: str, t: int | None) -> None:
        if self.running is None or t is None:
            return
        name, at_clock, start, line = self.running
        self.running = None
        if at_clock == clock and t >= start:
            self.boot.add(Event(Kind.STAGE, name, clock, start, t - start, self.file, line, "bootloader"))
