"""Bootloader (U-Boot, barebox's countdown too; MediaTek's preloader): the autoboot countdown, console output, and
work the boot does not need (seed 004: 14.6 s to 0.86 s by bypassing redundant bootloader work and a silent
console; seed 000: bootloader changes cut 19 % of the boot).

These changes are U-Boot environment variables or its configuration, never its source.
They apply to boards: the reference device has no U-Boot, so there is no patch.
"""

from __future__ import annotations

import re

from ..sources import mtk_preloader
from ..sources.uboot import AUTOBOOT_MARK
from ..timeline import Kind, Mark, Phase
from . import Context, Finding, rule
from .common import (Line, at, cite, find_lines, line_of, nearest, systemd_part, time_to_next, took, total,
                     worth_it)

FAMILY = "bootloader"


def _is_uboot(ctx: Context) -> bool:
    return str(ctx.boot.meta.get("bootloader", "")).startswith("U-Boot")


@rule(FAMILY)
def bootdelay(ctx: Context) -> Finding | None:
    """The countdown: from "Hit any key to stop autoboot" to the next line; without times,
    the announced number of seconds."""
    ev = ctx.boot.first_mark(AUTOBOOT_MARK)
    delay = (ev.attrs or {}).get("delay") if ev is not None else None
    if not delay:
        return None
    line = line_of(ctx.boot, ev)
    waited = time_to_next(line) if line is not None else None
    evidence = [cite(ctx.boot, ev)]
    if waited is not None:
        evidence.append(nearest(line, 1).cite())
        evidence.append(f"the countdown took {took(waited)}")
        confidence = "high"
    else:
        waited = delay * 1_000_000_000
        evidence.append(f"bootdelay is {delay} s (the line has no time: the announced delay is counted)")
        confidence = "medium"
    if str(ctx.boot.meta.get("bootloader", "")).startswith("barebox"):
        title, how = ("Set barebox's autoboot_timeout to 0",
                      "At the barebox prompt: `nv autoboot_timeout=0` (kept in /env/nv), or global.autoboot_timeout "
                      "in the board's default environment.")
    else:
        title, how = ("Set U-Boot's bootdelay to 0",
                      "At the U-Boot prompt: `setenv bootdelay 0; saveenv` (-2 also skips checking for a key press), "
                      "or CONFIG_BOOTDELAY=0 in the board's U-Boot configuration.")
    return Finding(
        rule="bootloader.bootdelay", family=FAMILY, title=title, evidence=evidence, saving_ns=waited, how=how,
        non_intrusive=True, patch=None, confidence=confidence,
        notes=["with 0 a key pressed before the countdown still stops autoboot, so the board stays recoverable"])


@rule(FAMILY)
def silent(ctx: Context) -> Finding | None:
    """What the bootloader's console output costs: its bytes at the console's speed (U-Boot
    writes to its UART synchronously)."""
    console = ctx.analysis.console
    if console is None or not console.printed or not _is_uboot(ctx):
        return None
    cost = total(ns for name, (_n, ns) in console.per_phase.items() if Phase.BOOTLOADER.value in name)
    nbytes = total(n for name, (n, _ns) in console.per_phase.items() if Phase.BOOTLOADER.value in name)
    if not worth_it(cost):
        return None
    return Finding(
        rule="bootloader.silent", family=FAMILY,
        title="Silence U-Boot's console",
        evidence=[f"{console.source}: {nbytes} bytes printed before the kernel started, "
                  f"{took(cost)} at {console.baud} baud"],
        saving_ns=cost,
        how="Build U-Boot with CONFIG_SILENT_CONSOLE=y and set `setenv silent 1; saveenv`; keep the kernel's "
            "console= in bootargs unchanged.",
        non_intrusive=True, patch=None, confidence="medium",
        notes=["SPL prints before the environment is read: its lines need CONFIG_SPL_SILENT_CONSOLE"])


# Bootloader lines that show work a fixed embedded boot does not need.
REDUNDANT = (
    (re.compile(r"NAND:\s+0 MiB"), "probes for NAND flash the board does not have",
     "disable NAND in the board's U-Boot configuration (CONFIG_MTD_RAW_NAND, CONFIG_CMD_NAND)"),
    (re.compile(r"(?:starting USB\.\.\.|Bus usb\S*: |scanning bus usb\S* for devices|scanning usb for)"),
     "starts USB and scans it for boot devices",
     "remove `usb start` from bootcmd and usb from boot_targets"),
    (re.compile(r"scanning bus for devices|SATA\(\d+:\d+\) not available|Scanning disk"),
     "scans disks the kernel is not on", "set boot_targets to the device the kernel is on"),
    (re.compile(r"(?:BOOTP broadcast|DHCP client bound|Waiting for PHY auto negotiation|TFTP from server|"
                r"Retrieving file: pxelinux)"),
     "tries a network boot", "set boot_targets to the device the kernel is on (no dhcp/pxe)"),
    (re.compile(r"(?:\*\* (?:Unable to read|File not found|No partition table|Invalid partition)|"
                r"Failed to load|spl_load_image_fat_os: error|Card did not respond to voltage select|"
                r"Wrong Image Format)"),
     "tries to read something that is not there", "make bootcmd read only the files and devices that exist"),
)


@rule(FAMILY)
def redundant_work(ctx: Context) -> list[Finding]:
    """Each kind of needless work costs the time from its line to the next one."""
    kernel_start = ctx.analysis.phases.boundaries.get(Mark.KERNEL_START)
    found = []
    for pattern, what, how in REDUNDANT:
        hits: list[tuple[Line, int]] = []
        for line, _m in find_lines(ctx.boot, pattern):
            when = at(ctx.boot, line)
            if kernel_start is not None and when is not None and when >= kernel_start.at:
                continue  # the kernel's own messages can look alike
            cost = time_to_next(line)
            if cost is not None:
                hits.append((line, cost))
        saving = total(cost for _line, cost in hits)
        if not worth_it(saving):
            continue
        evidence = [f"{line.cite()}  (+{took(cost)} to the next line)" for line, cost in hits]
        found.append(Finding(
            rule="bootloader.redundant-work", family=FAMILY,
            title=f"The bootloader {what}",
            evidence=evidence, saving_ns=saving,
            how=f"In U-Boot: {how} (`setenv ...; saveenv`, or the board's U-Boot configuration).",
            non_intrusive=True, patch=None, confidence="medium",
            notes=["each line counts until the next line is printed"]))
    return found


MIN_LOADER_NS = 500_000_000


@rule(FAMILY)
def menu_timeout(ctx: Context) -> Finding | None:
    """A PC's boot loader time (systemd-analyze "loader"): most of it is usually the menu
    waiting for a choice."""
    measured = systemd_part(ctx, "loader", MIN_LOADER_NS, Mark.BOOTLOADER_START)
    if measured is None:
        return None
    loader, evidence = measured
    return Finding(
        rule="bootloader.menu-timeout", family=FAMILY,
        title="Set the boot menu timeout to 0",
        evidence=evidence, saving_ns=None,
        how="GRUB: GRUB_TIMEOUT=0 and GRUB_TIMEOUT_STYLE=hidden in /etc/default/grub, then update-grub; "
            "systemd-boot: `timeout 0` in loader/loader.conf.",
        non_intrusive=True, patch=None, confidence="low",
        notes=[f"the boot loader took {took(loader)}, loading the kernel and initramfs included"])


@rule(FAMILY)
def mtk_usb_handshake(ctx: Context) -> Finding | None:
    """MediaTek's preloader waiting for a download tool on USB: its profile times the wait
    (sources/mtk_preloader.py), which a board in the field spends on every boot."""
    waited = [ev for ev in ctx.boot.of_kind(Kind.STAGE) if ev.name == mtk_preloader.USB_HANDSHAKE and ev.dur]
    saving = total(ev.dur for ev in waited)
    if not worth_it(saving):
        return None
    return Finding(
        rule="bootloader.mtk-usb-handshake", family=FAMILY,
        title="Build MediaTek's preloader without its USB tool handshake",
        evidence=[f"{cite(ctx.boot, ev)}: the preloader waited {took(ev.dur)} for a download tool on USB"
                  for ev in waited],
        saving_ns=saving,
        how="CFG_USB_TOOL_HANDSHAKE := 0 in the preloader's project configuration (MediaTek's own user builds set "
            "it so): the preloader no longer looks for SP Flash Tool or META mode on USB at each boot.",
        non_intrusive=True, patch=None, confidence="high",
        notes=["the BootROM's own download mode (a key held at power-on, or an empty boot device) still reaches "
               "the board for flashing"])
