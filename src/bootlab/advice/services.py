"""Init and services: udev, services an embedded product does not need, and the units the
default target waits for (seed 002: avahi 20.26 s, Bluetooth 1.19 s, udev to a static /dev
0.57 s; seed 003: NetworkManager-wait-online 22 s, ModemManager 6.8 s, the critical chain).
"""

from __future__ import annotations

import re

from . import Context, Finding, rule
from .common import userspace_work, work_saving, took

FAMILY = "services"

UDEV = re.compile(r"udev|mdev", re.IGNORECASE)
# rc-script lines of sysvinit and busybox systems ("Starting udev", "Starting mdev... OK").
UDEV_SCRIPT = re.compile(r"(?:Starting (?:udevd?|mdev)|Populating /dev|Waiting for /dev to be fully populated|"
                         r"Synthesizing the initial hotplug events)", re.IGNORECASE)

# (what to disable, unit names or descriptions, measured in the seeds)
UNNEEDED = (
    ("Avahi (mDNS/DNS-SD discovery)", r"avahi", "seed 002: 20.26 s"),
    ("Bluetooth", r"bluetooth|btattach|bluez", "seed 002: 1.19 s; seed 003: btattach 5.1 s"),
    ("the wait for a configured network (wait-online)", r"wait[-_ ]?online",
     "seed 003: NetworkManager-wait-online 22.2 s"),
    ("ModemManager (cellular modems)", r"modem ?manager", "seed 003: 6.8 s"),
    ("cloud-init (first-boot provisioning)", r"cloud-(?:init|config|final)", None),
    ("periodic maintenance jobs", r"apt-daily|man-db|e2scrub|logrotate|fstrim", None),
    ("desktop services", r"cups|packagekit|udisks|accounts-daemon|plymouth|snapd", None),
)
SLOW_CHAIN_UNIT_NS = 100_000_000
MOST_CHAIN_UNITS = 3
# Units other rules advise on (services and filesystems): not repeated as chain units.
HANDLED = re.compile("|".join([UDEV.pattern, r"fsck", r"remount-fs"] + [p for _w, p, _s in UNNEEDED]),
                     re.IGNORECASE)


def _how_to_stop(names: list[str]) -> str:
    units = [n for n in names if re.search(r"\.(?:service|socket|target|timer|mount)$", n)]
    if units:
        return f"`systemctl mask {' '.join(units)}` (mask: nothing can start it again, not even a socket)"
    return "remove its script from the boot sequence (`update-rc.d NAME disable`, or its S??NAME link in /etc/rc?.d)"


@rule(FAMILY)
def udev(ctx: Context) -> Finding | None:
    work = userspace_work(ctx, UDEV, UDEV_SCRIPT)
    saving, confidence, notes = work_saving(ctx, work)
    if not work or saving is None:
        return None
    names = [w.name for w in work]
    return Finding(
        rule="services.udev", family=FAMILY,
        title="Replace udev with a static /dev",
        evidence=[w.evidence for w in work], saving_ns=saving,
        how="Create the device nodes the application needs at build time (or let the kernel mount devtmpfs: "
            f"CONFIG_DEVTMPFS_MOUNT=y), load the modules the hardware needs explicitly, and stop udev: "
            f"{_how_to_stop(names)}.",
        non_intrusive=True, patch=None, confidence=confidence,
        notes=notes + ["seed 002: static nodes saved 0.57 s; seed 000: no gain when no devices are found",
                       "only for a fixed set of devices: hot-plugged ones then need their nodes made by hand"])


@rule(FAMILY)
def unneeded(ctx: Context) -> list[Finding]:
    found = []
    for what, pattern, seed in UNNEEDED:
        work = userspace_work(ctx, re.compile(pattern, re.IGNORECASE),
                              re.compile(rf"Starting .*(?:{pattern})", re.IGNORECASE))
        if not work:
            continue
        saving, confidence, notes = work_saving(ctx, work)
        names = [w.name for w in work]
        if saving is None and not any(w.duration for w in work):
            continue
        found.append(Finding(
            rule="services.unneeded", family=FAMILY,
            title=f"Disable {what} if the product does not use it",
            evidence=[w.evidence for w in work], saving_ns=saving,
            how=f"{_how_to_stop(names)}; if it is needed, start it after the application.",
            non_intrusive=True, patch=None, confidence=confidence,
            notes=notes + ([seed] if seed else [])))
    return found


@rule(FAMILY)
def critical_chain(ctx: Context) -> list[Finding]:
    """The units the default target waited for, slowest first (those other rules cover
    excepted): each holds the boot up by its activation time."""
    steps = ctx.analysis.critical.userspace
    if not steps:
        return []
    target = steps[0].name
    slow = sorted((s for s in steps[1:] if s.duration >= SLOW_CHAIN_UNIT_NS and not HANDLED.search(s.name)),
                  key=lambda s: -s.duration)
    return [Finding(
        rule="services.critical-chain", family=FAMILY,
        title=f"Take {s.name} off the path to {target} ({took(s.duration)})",
        evidence=[f"{s.where}: {s.name} +{took(s.duration)} on the critical chain of {target}"],
        saving_ns=s.duration,
        how=f"`systemd-analyze critical-chain {s.name}` shows what it waits for. If the application does not need "
            f"it, start it after the application (order it After= the application's unit, or drop what pulls it in "
            f"before {target}); if it does, make it start faster.",
        non_intrusive=True, patch=None, confidence="medium",
        notes=["the next unit on the chain may then become the one the target waits for"])
        for s in slow[:MOST_CHAIN_UNITS]]
