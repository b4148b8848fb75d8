"""Which QEMU boots the reference device (`[target] qemu`) and the ARM64 board (`[arm64] qemu`).

    "bookworm"            the qemu-system-x86_64 (qemu-system-aarch64) `make setup` installs
                          (Debian 12's QEMU 7.2)
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


@dataclass(frozen=True)
class Qemu:
    """A QEMU for one guest architecture: the argv that starts it, before the machine's own
    arguments."""

    name: str
    argv: tuple[str, ...]
    version: str  # the Debian package's version ("" for the system's, recorded by the run store)


@dataclass(frozen=True)
class _Emulator:
    program: str  # the system emulator for the guest architecture
    # The packages (name, architecture: the host's or "all") the backport's emulator needs
    # beside the libraries bookworm's QEMU already pulled in (make setup): its program and its
    # firmware.  Unpacked, not installed: nothing of the system's QEMU changes.
    debs: tuple[tuple[str, str], ...]
    # Named with -L before QEMU's own data directory (the system's 7.2 files): the backport's
    # firmware first (under usr/share).
    firmware: tuple[str, ...]


# By Debian's name of the guest's architecture; the host is amd64.
DATA = ("qemu-system-data", "all")
EMULATORS = {
    "amd64": _Emulator("qemu-system-x86_64", (("qemu-system-x86", "amd64"), DATA, ("seabios", "all")),
                       ("seabios", "qemu")),
    # The ARM64 board's firmware is U-Boot (-bios); qemu-system-data has the network card's ROM.
    "arm64": _Emulator("qemu-system-aarch64", (("qemu-system-arm", "amd64"), DATA), ("qemu",)),
}


def installed(arch: str = "amd64") -> Qemu:
    """The system's QEMU for a guest architecture (what `make setup` installs)."""
    return Qemu(SYSTEM, (EMULATORS[arch].program,), "")


def qemu(name: str, arch: str = "amd64", fetch: bool = True, quiet: bool = True) -> Qemu:
    """The QEMU named by `[target] qemu` (`[arm64] qemu`) for a guest architecture, fetched
    and unpacked into the cache if needed."""
    if name == SYSTEM:
        return installed(arch)
    if name != BACKPORTS:
        raise packages.PackageError(f"unknown qemu {name!r}: one of {', '.join(QEMUS)}")
    emulator = EMULATORS[arch]
    debs = [packages.download(p, arch_of_deb, quiet, release=BACKPORTS, fetch=fetch)
            for p, arch_of_deb in emulator.debs]
    version = debs[0].name.split("_")[1].replace("%3a", ":")
    # One tree per guest architecture: unpacking one never rewrites a program another runs.
    root = packages.cache_dir() / "qemu" / version.split(":")[-1] / arch  # the epoch's colon left out
    done = root / ".unpacked"
    if not done.exists():
        root.mkdir(parents=True, exist_ok=True)
        with packages.Locked(root / ".lock"):
            if not done.exists():
                for deb in debs:
                    packages.unpack(deb, root)
                done.touch()
    share = root / "usr" / "share"
    firmware = [arg for d in emulator.firmware for arg in ("-L", str(share / d))]
    return Qemu(name, (str(root / "usr" / "bin" / emulator.program), *firmware), version)
