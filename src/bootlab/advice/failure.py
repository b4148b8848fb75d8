"""A boot that fails before the application is ready: the firmware stops at an assertion, the
bootloader starts no kernel, the board resets, the kernel panics or restarts the board before
userspace, the initramfs cannot mount
the root and gives a shell, or systemd goes to its emergency mode.  It never reaches its
application, so making it work comes before every saving, each of which is measured on a boot
that did not finish.
"""

from __future__ import annotations

import re

from ..analysis.phases import FAILURE, failure
from ..sources import kernel_messages as km
from ..sources import firmware, multiboot, uboot, userspace
from ..timeline import Kind
from . import Context, Finding, rule
from .common import cite

FAMILY = "boot failure"
# "VFS: Unable to mount root fs on unknown-block(179,4)": the device's numbers; (0,0) when no
# device of that name appeared at all.
_NO_ROOT = re.compile(r"VFS: Unable to mount root fs on (?:unknown-block|\S+)\((?P<major>\d+),(?P<minor>\d+)\)")


@rule(FAMILY)
def failed(ctx: Context) -> Finding | None:
    end = ctx.analysis.phases.end
    at, ev = failure(ctx.boot)
    if ev is None or (end.mark != FAILURE if end is not None else at is not None):  # (untimed logs have no end)
        return None
    reason = (ev.attrs or {}).get("reason", "")
    evidence = [cite(ctx.boot, ev)]
    if ev.name == km.PANIC:
        title, rule_id = "Make the boot succeed: the kernel panics before ready", "boot.kernel-panic"
        how = "Read the lines before the panic for what failed, fix it, and measure a boot that reaches ready."
        m = _NO_ROOT.match(reason)
        if m and m.group("major") == m.group("minor") == "0":
            how += (" No device of root='s name appeared: its controller's driver is missing or is a module the "
                    "initramfs does not load, or root= names the wrong device; `rootwait` if it appears late.")
        elif m:
            how += (" The root device is there but no filesystem the kernel has could mount it: the filesystem's "
                    "driver is a module (build it in, or load it from an initramfs), root= names the wrong "
                    "partition, or rootfstype= names another filesystem.")
    elif ev.name == userspace.INITRAMFS_SHELL:
        title, rule_id = "Make the boot succeed: the initramfs cannot mount the root", "boot.initramfs-shell"
        if "does not exist" in reason or "Gave up" in reason:
            how = ("The root device root= names did not appear before the initramfs gave up: its driver is not in "
                   "the initramfs (initramfs-tools: list the module in /etc/initramfs-tools/modules, or MODULES=most; "
                   "dracut: --add-drivers), the device comes late (rootdelay=), or root= names a device or UUID that "
                   "is not there.")
        else:
            how = ("The initramfs could not mount the root: its filesystem's module is not in the initramfs, or "
                   "root= or rootfstype= name the wrong partition or filesystem.")
        how += (" At the shell, `cat /proc/cmdline` and `ls /dev/disk/by-uuid` show what root= asked for and what "
                "there is; measure a boot that reaches ready.")
    elif ev.name == uboot.GAVE_UP:
        title, rule_id = "Make the boot succeed: the bootloader starts no kernel", "boot.bootloader-gave-up"
        evidence.append(f"its last words before the prompt: {reason!r}")
        how = ("The bootloader's boot command ran and came back to its prompt without starting a kernel; the lines "
               "since its countdown say what it tried and why it gave up: an image or boot script "
               "not found where it looked (`bootcmd`, `boot_targets`, the file names), a network boot that got no "
               "answer (DHCP/BOOTP, the TFTP server), or an image it refused (`Wrong Image Format`, a bad magic). "
               "Run the boot command step by step at the prompt, fix it, and measure a boot that reaches ready.")
    elif ev.name == firmware.ASSERTED:
        title, rule_id = "Make the boot succeed: the firmware stops at a failed assertion", "boot.firmware-assert"
        module = (ev.attrs or {}).get("module")
        how = ("A debug build of the firmware (EDK2's UEFI) checked a condition that did not hold"
               + (f" in its {module} driver" if module else "") + " and stopped there: the line names the source "
               "file and line, and the lines before it what the driver was doing (a device that did not answer, a "
               "table it could not read). Fix the cause (the device, its configuration, a firmware update), or "
               "boot a release build, which does not stop at assertions (the error stays); measure a boot that "
               "reaches ready.")
    elif ev.name == multiboot.RESET:
        title, rule_id = "Make the boot succeed: the board resets during the boot", "boot.reset"
        evidence.append(reason)
        how = ("The board was reset before userspace started and booted again: a watchdog the boot did not serve in "
               "time (U-Boot's `Reset cause: WDOG`; a kernel that dies before its console speaks), a crash, or the "
               "supply browning out. The lines before the reset say how far it got; `earlycon` (or `earlyprintk`) "
               "shows a kernel that dies silently; read the boots after it with --boot N, and measure a boot that "
               "reaches ready.")
    elif ev.name == km.RESTART:
        title, rule_id = "Make the boot succeed: the kernel restarts the board before userspace", "boot.kernel-restart"
        how = ("The kernel restarted (or powered off, or halted) the board before it started init, so nothing in "
               "userspace asked for it: the kernel itself did, for a driver or the platform (a thermal or power "
               "fault's protective shutdown: `Critical temperature reached`, `hw_protection`; a watchdog's "
               "pretimeout; Ctrl-Alt-Del on a keyboard, which restarts at once while kernel.ctrl-alt-del is 1). The "
               "lines just before it name the cause; fix it, and measure a boot that reaches ready.")
    else:
        title, rule_id = "Make the boot succeed: systemd goes to emergency mode", "boot.emergency-mode"
        # The units that failed before it: one of them is what the boot needed.
        broken = [u for u in ctx.boot.of_kind(Kind.UNIT) if u.file == ev.file and u.line < ev.line
                  and ((u.attrs or {}).get("status") in ("FAILED", "TIME", "DEPEND")
                       or (u.attrs or {}).get("verb") in ("Timed out waiting for", "Dependency failed for"))]
        evidence = [cite(ctx.boot, u) for u in broken[:5]] + evidence
        how = ("A unit the boot needs failed: the failed units before it name it (a mount in /etc/fstab whose device "
               "never came, an fsck, a dependency); fix it or mark a mount `nofail`, and measure a boot that reaches "
               "ready (`journalctl -xb` at the emergency shell says why).")
    return Finding(
        rule=rule_id, family=FAMILY, title=title, evidence=evidence, saving_ns=None, how=how, non_intrusive=True,
        patch=None, confidence="high", blocking=True,
        notes=["every other saving is measured on a boot that failed: prove each again on one that reaches ready"])
