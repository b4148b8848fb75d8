"""barebox, Pengutronix's bootloader (i.MX, STM32MP, Rockchip, AM335x boards; the one labgrid's
own labs boot), on a console.  Its lines carry no times; on a capture with host times:

    barebox 2017.12.0-bsp-yocto-i.mx6-pd18.1.1 #1 Thu Jul 25 ...    it starts (its banner)
    Hit m for menu or any other key to stop autoboot:    1          the countdown (autoboot_timeout)
    barebox@Phytec phyCORE-i.MX6:/ ...                              its prompt after it: stopped by hand
    booting 'emmc'  /  Booting entry 'emmc'                         the boot entry (older / newer)
    Loading ARM Linux zImage '/mnt/emmc/zImage'                     reading the kernel (bootm)
    Loading devicetree from '/mnt/emmc/oftree'
    commandline:  console=ttymxc1,115200n8 root=/dev/mmcblk1p2      its last line on every architecture
    Starting kernel in secure mode                                  (32-bit ARM with a secure monitor)

barebox reads the kernel, the initrd and the device tree, fixes the tree up (printing the
command line it puts there) and jumps: its `Loading` line to its `commandline:` line is that
work, a step of its own, and `commandline:` is the handover.  Its messages come from
common/version.c, common/startup.c, common/boot.c, common/bootm.c and common/oftree.c.
"""

from __future__ import annotations

import re

from ..timeline import Boot, Event, Kind, Mark
from .uboot import Countdown

BANNER = re.compile(r"^barebox (?P<version>\d{4}\.\d\d\.\d+\S*) #")
# `Hit %s%s to stop autoboot: ` then the seconds left (older: "any other key").
AUTOBOOT = re.compile(r"^Hit (?:m for menu or )?(?:any(?: other)? key|any|\S+) to stop autoboot:\s*(?P<delay>\d+)?")
PROMPT = re.compile(r"^barebox@[^:]*:\S*\s")
# What it says as its countdown is stopped by a key, before its prompt (its default
# environment's init script).
STOPPED = re.compile(r"^type exit to get to the menu")
ENTRY = re.compile(r"^(?:booting|Booting entry) '(?P<entry>[^']+)'")
LOADING = re.compile(r"^Loading (?P<type>(?!devicetree\b).+?) '(?P<file>[^']+)'")
HANDOVER = re.compile(r"^(?:commandline: |Starting kernel in \w+ mode)")
ENTRY_MARK = "bootloader.boot-entry"


class BareboxLines:
    """Recognises barebox's console lines; times come from the caller's clock."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.started = False  # its banner was seen
        self.countdown = Countdown(boot, AUTOBOOT, PROMPT, STOPPED)
        self.loading: tuple[str | None, int | None, str, int] | None = None  # clock, time, file, line
        self.handed_over = False

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        def mark(name: str, **attrs) -> None:
            self.boot.add(Event(Kind.MARKER, name, clock, t, None, self.file, lineno, attrs=attrs or None))

        m = BANNER.match(text)
        if m:
            self.boot.meta["bootloader"] = f"barebox {m.group('version')}"
            mark(Mark.BOOTLOADER_START, stage="barebox")
            self.started, self.countdown.prompted, self.handed_over = True, False, False
            return True
        if not self.started or self.handed_over:
            return False
        if self.countdown.feed(text, mark):
            return True
        m = ENTRY.match(text)
        if m:
            mark(ENTRY_MARK, entry=m.group("entry"))
            return True
        m = LOADING.match(text)
        if m:
            self.loading = (clock, t, m.group("file"), lineno)
            return True
        if HANDOVER.match(text):
            self._loaded(clock, t)
            mark(Mark.KERNEL_LOAD, via="barebox")
            self.countdown.handover()
            self.handed_over = True
            return True
        return False

    def _loaded(self, clock: str, t: int | None) -> None:
        """The step from the kernel's `Loading` line to the handover: reading the kernel,
        initrd and device tree and fixing the tree up (barebox prints no time of its own, so
        on a console without host times there is no step)."""
        if self.loading is None:
            return
        at_clock, at, file, line = self.loading
        self.loading = None
        if at is not None and t is not None and at_clock == clock and t >= at:
            self.boot.add(Event(Kind.STAGE, f"load {file}", clock, at, t - at, self.file, line, "bootloader",
                                attrs={"with": "initrd and device tree, fixed up"}))
