"""A boot that fails: the kernel panics before the application is ready.  It never reaches
its application, so making it work comes before every saving, each of which is measured on
a boot that did not finish.
"""

from __future__ import annotations

import re

from ..analysis.phases import FAILURE
from ..sources import kernel_messages as km
from . import Context, Finding, rule
from .common import cite

FAMILY = "boot failure"
# "VFS: Unable to mount root fs on unknown-block(179,4)": the device's numbers; (0,0) when no
# device of that name appeared at all.
_NO_ROOT = re.compile(r"VFS: Unable to mount root fs on (?:unknown-block|\S+)\((?P<major>\d+),(?P<minor>\d+)\)")


@rule(FAMILY)
def kernel_panic(ctx: Context) -> Finding | None:
    end = ctx.analysis.phases.end
    panic = ctx.boot.first_mark(km.PANIC)
    if end is None or end.mark != FAILURE or panic is None:
        return None
    reason = (panic.attrs or {}).get("reason", "")
    how = "Read the lines before the panic for what failed, fix it, and measure a boot that reaches ready."
    m = _NO_ROOT.match(reason)
    if m and m.group("major") == m.group("minor") == "0":
        how += (" No device of root='s name appeared: its controller's driver is missing or is a module the "
                "initramfs does not load, or root= names the wrong device; `rootwait` if it appears late.")
    elif m:
        how += (" The root device is there but no filesystem the kernel has could mount it: the filesystem's "
                "driver is a module (build it in, or load it from an initramfs), root= names the wrong "
                "partition, or rootfstype= names another filesystem.")
    return Finding(
        rule="boot.kernel-panic", family=FAMILY, title="Make the boot succeed: the kernel panics before ready",
        evidence=[cite(ctx.boot, panic)], saving_ns=None, how=how, non_intrusive=True, patch=None,
        confidence="high", blocking=True,
        notes=["every other saving is measured on a boot that failed: prove each again on one that reaches ready"])
