"""Console lines printed before the kernel by firmware, GRUB and the kernel's boot stub.

    SeaBIOS (version 1.16.2-debian-1.16.2-1)       firmware starts (x86, QEMU)
    Booting from ROM...                             QEMU -kernel: the option ROM starts Linux
    Booting from Hard Disk...                       firmware hands over to a bootloader
    NOTICE:  BL2: v2.10.0(release):                 Trusted Firmware-A (ARM)
    OpenSBI v0.9                                    RISC-V's machine-mode firmware (first, or after an SPL)
    coreboot-4.9.0.2 Mon Feb 18 ... bootblock starting   coreboot (PCs, Chromebooks)
    SecCoreStartupWithStack(0xFFFCC000, 0x820000)    OVMF's debug log (QEMU's UEFI)
    SLOF **********************************         SLOF, the Open Firmware of QEMU's pseries (ppc64)
    Booting from memory...                          SLOF starts the kernel QEMU loaded (-kernel)
    Preparing to boot Linux version 6.1.0-54-...    the kernel's prom_init, its Open Firmware client (ppc64)
    Welcome to GRUB! / Loading Linux 6.1.0 ...      GRUB
    iPXE initialising devices...ok                  iPXE, a network bootloader (a PC's, a lab's)
    EFI stub: Booting Linux Kernel...               the kernel's EFI stub
    Probing EDD (edd=off to disable)... ok          x86 real-mode setup code
    Decompressing Linux... / Uncompressing Linux... the decompressor
    INFO:    Time used by DDR driver 1107 ms        TF-A BL2's DDR init (NXP Layerscape, debug builds)
    Bootloader Start at:1257 ms                     NVIDIA's Tegra bootloader, in ms since the reset
    Jumping to kernel at:2180 ms                    (on the bootloader clock: see stamp())
    [0000.062] I> MB1 (version: 1.4.0.4-t234-...)   NVIDIA's MB1 (Xavier, Orin), in s since the reset
    ASSERT [XhciDxe] .../Xhci.c(1805): !EFI_ERROR (Status)   a UEFI firmware's failed assertion (Assertion)
"""

from __future__ import annotations

import re

from ..timeline import NS_PER_MS, Boot, Event, Kind, Mark

SETUP = "kernel.setup"
DECOMPRESS = "kernel.decompress"

_RULES: tuple[tuple[re.Pattern, str, dict], ...] = (
    (re.compile(r"^SeaBIOS \(version (?P<version>[^)]+)\)"), Mark.FIRMWARE_START, {"firmware": "SeaBIOS"}),
    (re.compile(r"^qboot"), Mark.FIRMWARE_START, {"firmware": "qboot"}),
    (re.compile(r"^NOTICE:\s+BL2: v(?P<version>\S+)"), Mark.FIRMWARE_START, {"firmware": "TF-A"}),
    (re.compile(r"^(?:sys: 0x|BootROM|F0: [0-9A-F]{4} )"), Mark.FIRMWARE_START, {"firmware": "BootROM"}),
    (re.compile(r"^OpenSBI v(?P<version>\S+)"), Mark.FIRMWARE_START, {"firmware": "OpenSBI"}),
    # coreboot's first stage: its bootblock, or the romstage of one that prints from there
    # (4.x on AMD boards), or before 4.1 a bare `starting...`; from 4.19 its lines may carry
    # their log level, `[NOTE ]  `.  Its later stages' banners (ramstage) are no start.
    (re.compile(r"^(?:\[[A-Z]+ ?\]\s+)?coreboot-(?P<version>\S+) .*(?:\b(?:bootblock|verstage|romstage) | \d{4} )"
                r"starting"), Mark.FIRMWARE_START, {"firmware": "coreboot"}),
    # OVMF (EDK2's UEFI for QEMU) built with its debug log on the console: its SEC phase's first line.
    (re.compile(r"^SecCoreStartupWithStack\("), Mark.FIRMWARE_START, {"firmware": "OVMF"}),
    (re.compile(r"^SLOF\s+\*{10}"), Mark.FIRMWARE_START, {"firmware": "SLOF"}),
    (re.compile(r"^Booting from memory\.\.\."), Mark.KERNEL_LOAD, {"via": "SLOF"}),
    (re.compile(r"^Preparing to boot Linux version "), SETUP, {}),
    (re.compile(r"^Bootloader Start at:"), Mark.BOOTLOADER_START, {"bootloader": "NVIDIA Tegra bootloader"}),
    (re.compile(r"^Jumping to kernel at:"), Mark.KERNEL_LOAD, {"via": "NVIDIA Tegra bootloader"}),
    (re.compile(r"^I> MB1 \(version: (?P<version>[^)]+)\)"), Mark.BOOTLOADER_START, {"bootloader": "NVIDIA MB1"}),
    (re.compile(r"^Booting from ROM\.\."), Mark.KERNEL_LOAD, {"via": "option ROM"}),  # the 3rd dot may be overwritten
    (re.compile(r"^Booting from (?:Hard Disk|DVD/CD|Floppy)"), "firmware.handover", {}),
    (re.compile(r"^(?:Welcome to GRUB!|GNU GRUB\s+version)"), Mark.BOOTLOADER_START, {"bootloader": "GRUB"}),
    (re.compile(r"^\s*Loading Linux "), Mark.KERNEL_LOAD, {"via": "GRUB"}),
    (re.compile(r"^iPXE (?:initialising devices|(?P<version>\d+\.\d+\S*) )"), Mark.BOOTLOADER_START,
     {"bootloader": "iPXE"}),
    (re.compile(r"^EFI stub: Booting Linux Kernel"), Mark.KERNEL_LOAD, {"via": "EFI stub"}),
    (re.compile(r"^Probing EDD \(edd=off to disable\)"), SETUP, {}),
    (re.compile(r"^(?:Decompressing|Uncompressing) Linux"), DECOMPRESS, {}),
)
# TF-A's BL2 built for debugging on NXP's Layerscape SoCs times its DDR driver, from its start
# to the line: a step of the firmware, a second and more with a DIMM's SPD to read.
_DDR_TIME = re.compile(r"^INFO:\s+Time used by DDR driver (?P<ms>\d+) ms")
DDR_INIT = "DDR init (TF-A BL2)"
# NVIDIA's Tegra 3 bootloader (an OUYA's, a Transformer's) says when it started and when it
# jumped to the kernel, in milliseconds since the SoC's reset.
_TEGRA_STAMP = re.compile(r"^(?:Bootloader Start|Jumping to kernel) at:(?P<ms>\d+) ms")
# The MB1 of NVIDIA's newer Tegras (Xavier, Orin) stamps its lines in seconds since the reset,
# to the millisecond, before their level: `[0000.062] I> MB1 (version: 1.4.0.4-t234-...)`.
_MB1_STAMP = re.compile(r"^\[(?P<s>\d{4})\.(?P<ms>\d{3})\] (?P<msg>[IWE]> .*)$")
_FIRST = tuple({"S", "q", "N", "s", "B", "F", "W", "G", " ", "L", "E", "P", "D", "U", "O", "J", "i", "I", "c", "["})
# A debug build of EDK2 (a UEFI firmware: OVMF, a Jetson's, a server's) stops at a failed
# assertion, DebugLib's `ASSERT [XhciDxe] /.../Xhci.c(1805): !EFI_ERROR (Status)` (older ones
# without the module), in a dead loop or, as a Jetson's UEFI does, a reset.
ASSERT = re.compile(r"^ASSERT (?:\[(?P<module>[^\]]+)\] )?\S+\(\d+\): \S")
ASSERTED = "firmware.assert"


def stamp(text: str) -> tuple[int, str] | None:
    """(the line's time on the bootloader clock, the line) for a line that says its own time
    since the reset (_TEGRA_STAMP), else None."""
    m = _TEGRA_STAMP.match(text)
    if m:
        return int(m.group("ms")) * NS_PER_MS, text
    m = _MB1_STAMP.match(text)
    return ((int(m.group("s")) * 1000 + int(m.group("ms"))) * NS_PER_MS, m.group("msg")) if m else None


def feed(boot: Boot, file: str, clock: str, t: int | None, text: str, lineno: int) -> str | None:
    """The mark a firmware or boot-stub line makes (added to the boot), else None."""
    if not text or not text.startswith(_FIRST):
        return None
    m = _DDR_TIME.match(text)
    if m:
        dur = int(m.group("ms")) * NS_PER_MS
        boot.add(Event(Kind.STAGE, DDR_INIT, clock, None if t is None else t - dur, dur, file, lineno, "firmware"))
        return DDR_INIT
    for pattern, name, attrs in _RULES:
        m = pattern.match(text)
        if m:
            found = dict(attrs)
            if "version" in pattern.groupindex and m.group("version"):
                found["version"] = m.group("version")
            if name == Mark.FIRMWARE_START:
                boot.meta.setdefault("firmware", found.get("firmware"))
            boot.add(Event(Kind.MARKER, name, clock, t, None, file, lineno, attrs=found or None))
            return name
    return None


class Assertion:
    """The first failed assertion of a firmware before the kernel: where the boot failed, unless
    a kernel started after it (a build that goes on past its assertions).  Which of the two is
    known at the end of the log (close)."""

    def __init__(self, boot: Boot, file: str):
        self.boot = boot
        self.file = file
        self.first: Event | None = None

    def feed(self, clock: str, t: int | None, text: str, lineno: int) -> bool:
        m = ASSERT.match(text)
        if m is None:
            return False
        if self.first is None:
            self.first = Event(Kind.MARKER, ASSERTED, clock, t, None, self.file, lineno,
                               attrs={"reason": text.strip(), "module": m.group("module") or ""})
        return True

    def close(self, kernel_seen: bool) -> None:
        if self.first is not None and not kernel_seen:
            self.boot.add(self.first)
