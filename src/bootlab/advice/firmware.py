"""Firmware: what runs before the bootloader (seed 001: PC firmware "notorious for
superfluous delays", 15 s of a 113 s boot; memory checks and hardware probing the kernel
does again).
"""

from __future__ import annotations

from ..timeline import Mark
from . import Context, Finding, rule
from .common import between, cite, for_reference, systemd_part, target_value, took, worth_it

FAMILY = "firmware"
MIN_FIRMWARE_NS = 500_000_000  # PC firmware under this is already tuned


@rule(FAMILY)
def slow_firmware(ctx: Context) -> Finding | None:
    """On the reference device: SeaBIOS's own work, from its banner to the kernel handover
    (option ROMs, boot device search), which qboot does not do.  On a PC: the firmware time
    systemd reports, which only the firmware's settings can shorten."""
    if target_value(ctx, "target", "firmware") == "seabios":
        duration, banner, handover = between(ctx.boot, Mark.FIRMWARE_START, Mark.KERNEL_LOAD)
        if not worth_it(duration):
            return None
        return Finding(
            rule="firmware.slow", family=FAMILY,
            title="Boot the reference device with qboot instead of SeaBIOS",
            evidence=[cite(ctx.boot, banner), cite(ctx.boot, handover), f"SeaBIOS ran {took(duration)} after its banner"],
            saving_ns=duration,
            how="Set `firmware = \"qboot\"` in the target's [target] section (QEMU -bios qboot.rom): a minimal "
                "firmware that loads the kernel and jumps to it.",
            non_intrusive=True, patch=for_reference(ctx, {"target": {"firmware": "qboot"}}), confidence="low",
            notes=["the time before SeaBIOS's banner (QEMU starting, POST) is not counted"])
    measured = systemd_part(ctx, "firmware", MIN_FIRMWARE_NS, Mark.POWER_ON)
    if measured is None:
        return None
    firmware, evidence = measured
    return Finding(
        rule="firmware.slow", family=FAMILY,
        title="Turn off the firmware's boot-time checks",
        evidence=evidence, saving_ns=None,
        how="In the firmware setup: enable fast boot, skip the memory test, disable the option ROMs, network and "
            "USB boot of devices you do not boot from, and set the boot menu timeout to 0.",
        non_intrusive=True, patch=None, confidence="low",
        notes=[f"the firmware took {took(firmware)}; how much of it its settings remove depends on the firmware"])
