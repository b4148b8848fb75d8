"""Which QEMU boots the reference device: `[target] qemu`.

    "bookworm"            the qemu-system-x86_64 `make setup` installs (Debian 12's QEMU 7.2)
    "bookworm-backports"  Debian's backport of QEMU 10 from bookworm-backports, unpacked into the
                          cache (not installed): its program, and its firmware named with -L

Why a second QEMU: under `-icount`, QEMU runs the vCPUs of an SMP guest in turn on one host
thread.  7.2 lets each run until the machine's next timer: an x86 guest hangs bringing up its
second CPU, an ARM64 one leaves a vCPU standing still for 12-60 ms while the other runs
(rt/README.md).  QEMU 10's round-robin loop divides the span to the next timer between the
vCPUs (icount_percpu_budget in its accel/tcg/tcg-accel-ops-rr.c), so a two-vCPU guest under
`-icount` boots, runs both CPUs, and runs the same way in every boot whatever the host's load:
the platform the real-time scheduler's multicore plugins are judged on (bench/rt_smp, with a
metronome that keeps the span short: rt/tests/guest/metronome).  `make setup` adds
bookworm-backports to apt's sources; apt never upgrades from it by itself (its packages have
priority 100), so the installed QEMU stays 7.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import packages

SYSTEM = "bookworm"
BACKPORTS = "bookworm-backports"
QEMUS = (SYSTEM, BACKPORTS)
# The packages the backport's x86 emulator needs beside the libraries bookworm's QEMU already
# pulled in (make setup): its firmware (qemu-system-data's option ROMs, the SeaBIOS it was built
# with).  Unpacked, not installed: nothing of the system's QEMU changes.
BACKPORT_PACKAGES = (("qemu-system-x86", "amd64"), ("qemu-system-data", "all"), ("seabios", "all"))


@dataclass(frozen=True)
class Qemu:
    """A QEMU for x86 guests: the argv that starts it, before the machine's own arguments."""

    name: str
    argv: tuple[str, ...]
    version: str  # the Debian package's version ("" for the system's, recorded by the run store)


INSTALLED = Qemu(SYSTEM, ("qemu-system-x86_64",), "")


def qemu_x86(name: str, fetch: bool = True, quiet: bool = True) -> Qemu:
    """The QEMU named by `[target] qemu`, fetched and unpacked into the cache if needed."""
    if name == SYSTEM:
        return INSTALLED
    if name != BACKPORTS:
        raise packages.PackageError(f"unknown qemu {name!r}: one of {', '.join(QEMUS)}")
    debs = [packages.download(p, arch, quiet, release=BACKPORTS, fetch=fetch) for p, arch in BACKPORT_PACKAGES]
    version = debs[0].name.split("_")[1].replace("%3a", ":")
    root = packages.cache_dir() / "qemu" / version.split(":")[-1]  # the epoch's colon left out of the path
    done = root / ".unpacked"
    if not done.exists():
        root.mkdir(parents=True, exist_ok=True)
        with packages.Locked(root / ".lock"):
            if not done.exists():
                for deb in debs:
                    packages.unpack(deb, root)
                done.touch()
    share = root / "usr" / "share"
    # -L before QEMU's own data directory (the system's 7.2 files): the backport's option ROMs
    # and SeaBIOS first.
    return Qemu(name, (str(root / "usr" / "bin" / "qemu-system-x86_64"), "-L", str(share / "seabios"),
                       "-L", str(share / "qemu")), version)
