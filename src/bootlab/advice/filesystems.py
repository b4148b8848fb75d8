"""Filesystems: slow root mounts (JFFS2), checks and journal replays at boot (seed 002:
JFFS2 mounted 470 MiB in 2.62 s, UBI attach + UBIFS 1.50 s, a root check 0.22 s; seed 001:
deferring the journal replay saved about 200 ms).
"""

from __future__ import annotations

import re

from ..sources import kernel_messages as km
from . import Context, Finding, rule
from .common import Line, find_lines, line_of, nearest, scaled, took, userspace_work, work_saving, worth_it

FAMILY = "filesystems"
UBIFS_OVER_JFFS2 = 1.50 / 2.62  # seed 002: UBI attach + UBIFS mount against JFFS2's mount, same flash

_JFFS2 = re.compile(r"(?i)jffs2")
FSCK = re.compile(r"fsck", re.IGNORECASE)
_CLEAN = re.compile(r": clean, ")
_FSCK_REPORT = re.compile(r"(?:systemd-fsck\[\d+\]: |fsck(?:\.\w+)?\[?\d*\]?: |e2fsck )")
# A journal replay: where it starts and where it ends (ext3/4, XFS).
_REPLAY_START = re.compile(r"(?:EXT[34]-fs \([^)]+\): (?:INFO: recovery required|recovery required|orphan cleanup)|"
                           r"XFS \([^)]+\): Starting recovery)")
_REPLAY_END = re.compile(r"(?:EXT[34]-fs \([^)]+\): (?:recovery complete|mounted filesystem)|"
                         r"XFS \([^)]+\): Ending recovery)")


@rule(FAMILY)
def jffs2(ctx: Context) -> Finding | None:
    """The root mount: from the first JFFS2 message (or the message before the mount) to
    "VFS: Mounted root (jffs2 filesystem)"."""
    mounted = [ev for ev in ctx.boot.marks(km.ROOT_MOUNTED) if (ev.attrs or {}).get("fs") == "jffs2"]
    line = line_of(ctx.boot, mounted[0]) if mounted else None
    if line is None or line.printk() is None:
        return None
    before = [other for other, _ in find_lines(ctx.boot, _JFFS2)
              if other.log is line.log and other.i < line.i and other.printk() is not None]
    start = before[0] if before else nearest(line, -1, Line.printk)
    if start is None:
        return None
    mount = line.printk() - start.printk()
    saving = scaled(mount, 1 - UBIFS_OVER_JFFS2)
    if not worth_it(saving):
        return None
    return Finding(
        rule="fs.jffs2", family=FAMILY,
        title="Replace the JFFS2 root with UBIFS (or squashfs for its read-only part)",
        evidence=[start.cite(), line.cite(), f"mounting the JFFS2 root took {took(mount)}"],
        saving_ns=saving,
        how="Put the root on UBI: UBIFS (CONFIG_UBIFS_FS; boot with ubi.mtd=<partition> root=ubi0:rootfs "
            "rootfstype=ubifs), or squashfs on a UBI volume for the read-only part (CONFIG_SQUASHFS, "
            "CONFIG_MTD_UBI_BLOCK).",
        non_intrusive=True, patch=None, confidence="low",
        notes=[f"scaled by seed 002's measurement: UBI attach and UBIFS mount took {UBIFS_OVER_JFFS2:.0%} of "
               "JFFS2's mount on the same flash", "JFFS2 mount time grows with the partition's size"])


@rule(FAMILY)
def fsck(ctx: Context) -> Finding | None:
    """A check of the root at boot: systemd-fsck units, or a checker's report line, which
    comes when the check ends (the silence before it is the check)."""
    work = userspace_work(ctx, FSCK)
    saving, confidence, notes = work_saving(ctx, work)
    evidence = [w.evidence for w in work]
    if not work:
        for line, _m in find_lines(ctx.boot, _FSCK_REPORT):
            if _CLEAN.search(line.message):
                continue  # a clean filesystem is not checked: the silence before was something else
            prev = nearest(line, -1)
            if prev is not None and line.logged() is not None:
                checked = line.logged() - prev.logged()
                saving = (saving or 0) + checked
                evidence += [prev.cite(), line.cite(), f"{took(checked)} of silence before the check's report"]
        confidence = "low"
    if not worth_it(saving):
        return None
    return Finding(
        rule="fs.fsck", family=FAMILY,
        title="Check the filesystem after the application starts, not before",
        evidence=evidence, saving_ns=saving,
        how="Set the sixth field (fs_passno) of the root's /etc/fstab line to 0, or boot with `fsck.mode=skip` "
            "(systemd); run the check later (a timer, or after the application), or use a root that needs none "
            "(read-only squashfs).",
        non_intrusive=True, patch=None, confidence=confidence,
        notes=notes + ["seed 002: the root check took 0.22 s"])


@rule(FAMILY)
def journal_replay(ctx: Context) -> Finding | None:
    """A journal replayed (or orphans cleaned) at mount: from the kernel's "recovery
    required" to "recovery complete" (or the mount that follows); and remounting the root
    read-write at boot."""
    starts = find_lines(ctx.boot, _REPLAY_START)
    ends = find_lines(ctx.boot, _REPLAY_END)
    evidence = []
    saving = 0
    for start, _m in starts:
        end = next((e for e, _ in ends if e.log is start.log and e.i > start.i and e.printk() is not None), None)
        if end is None or start.printk() is None:
            continue
        replay = end.printk() - start.printk()
        saving += replay
        evidence += [start.cite(), end.cite(), f"journal replay: {took(replay)}"]
    remount = userspace_work(ctx, re.compile(r"remount-fs|Remount Root", re.IGNORECASE))
    remount_saving, _confidence, notes = work_saving(ctx, remount)
    saving += remount_saving or 0
    evidence += [w.evidence for w in remount if remount_saving]
    if not worth_it(saving):
        return None
    return Finding(
        rule="fs.journal-replay", family=FAMILY,
        title="Keep the root read-only; mount writable data after the application",
        evidence=evidence, saving_ns=saving,
        how="A journal that needs replaying is replayed at mount, even read-only (ext4, XFS): keep the root "
            "read-only in normal use (`ro`, writable directories such as /var and /tmp in tmpfs) so it never needs "
            "one, and put writable data on its own partition, mounted after the application starts.",
        non_intrusive=True, patch=None, confidence="medium",
        notes=notes + ["seed 001: deferring the log replay saved about 200 ms"])
