"""The reference device's root filesystem: a minimal Debian with systemd on a virtio disk.

    [rootfs]
    suite = "bookworm"
    mirror = "http://deb.debian.org/debian"
    variant = "minbase"         # mmdebstrap's variant
    packages = ["systemd", "systemd-sysv", "udev", "kmod"]
    filesystem = "ext4"         # ext4, ext2, btrfs, f2fs, erofs (erofs-lz4, -lz4hc),
                                # squashfs (squashfs-gzip, -xz, -lz4, -lzo, -zstd);
                                # on emulated NAND: ubifs, jffs2, squashfs-ubi (squashfs on a UBI volume)
    flash_mib = 256             # the NAND partition the flash filesystems live on (MiB)
    read_only = false           # the root mounted read-only (squashfs and erofs always are)
    fsck = true                 # systemd checks the root before remounting it (fstab pass 1; not on flash)
    init = "systemd"            # systemd, or app: the application as PID 1 (init= a script that starts it)
    app = "true"                # the application's command line; it prints the ready line itself
    modules = []                # loaded by the application's unit before it starts ("name param=value")
    modules_early = false       # true: the modules loaded by the switch-root initramfs instead (insmod,
                                # with the disk's; no modprobe in the unit), before systemd starts
    files = {}                  # {"/path/in/root" = "path/on/host"}, relative to the target file
    mask = []                   # units masked (linked to /dev/null)
    generators = true           # false: systemd's generators masked (none runs before the units load)
    app_unit = {}               # extra [Unit] settings of bootlab-app.service, e.g. {DefaultDependencies = "no"}
    boot_target = "multi-user"  # multi-user (Debian's default.target), or app: default.target is
                                # bootlab.target, which pulls in only the application's unit (and the
                                # analyze unit); both without default dependencies, so sysinit.target,
                                # basic.target and everything they pull in never start
    prune_units = false         # true (with boot_target = "app"): Debian's unit files that bootlab.target and the
                                # power-off never load removed from the image, so systemd reads fewer at its start
    journal = "auto"            # journald Storage= (auto, volatile, persistent, none)
    analyze = true              # after ready, print systemd-analyze's view on the console (sources/systemd_analyze.py)
    bootchart = false           # systemd-bootchart as init (it starts systemd); its SVG printed after ready
                                # (sources/systemd_bootchart.py); needs analyze
    plot = false                # systemd-analyze plot's SVG printed after ready too (sources/systemd_plot.py:
                                # every unit's activation; 60-100 kB, seconds of console); needs analyze

Two steps, each cached by content under ~/.cache/bootlab/rootfs: the Debian tree as
mmdebstrap's tarball (suite, mirror, variant, packages), then the disk image made from it with
bootlab's files added (the application's unit, the kernel modules it loads, fstab, masks).
Neither needs root: without it mmdebstrap builds in a user namespace (--mode=unshare) and the
image is made inside one too (mmdebstrap --unshare-helper), so the files keep their owners.
The kernel's virtio and filesystem drivers are modules in Debian's kernels: the initramfs
(initramfs.py, the switch-root init) loads them, mounts this image and hands over to /sbin/init.
The tree is built for the kernel's architecture (the ARM64 board's is arm64: mmdebstrap
--arch=arm64, its maintainer scripts under qemu-user through binfmt_misc, binfmt.py), and its
cache key has the architecture.

The flash filesystems live on the kernel's NAND simulator (nandsim, in RAM: empty at every
power-on).  Their image is what a factory would program (mtd-utils: mkfs.ubifs and ubinize,
or mkfs.jffs2, for nandsim's geometry); it travels on the virtio disk, and the initramfs
programs it into the flash (a timed step of its own, `flash-program`, which a board does not
pay at boot), attaches UBI (`ubi-attach`) and mounts the root from the flash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import binfmt, packages

# filesystem -> (the kernel's name for it, the modules that mount it, whether it can be
# written); the modules include the checksums each asks for as a soft dependency (modules.softdep).
_CRC32C = "crc32c_generic"
FILESYSTEMS = {
    "ext4": ("ext4", (_CRC32C, "ext4"), True),
    "ext2": ("ext2", (_CRC32C, "ext4"), True),  # Debian's ext4 driver serves ext2 (CONFIG_EXT4_USE_FOR_EXT2)
    "btrfs": ("btrfs", (_CRC32C, "xxhash_generic", "blake2b_generic", "btrfs"), True),
    "f2fs": ("f2fs", ("crc32_generic", "f2fs"), True),
    **{name: ("erofs", (_CRC32C, "erofs"), False) for name in ("erofs", "erofs-lz4", "erofs-lz4hc")},
    **{f"squashfs-{c}" if c != "squashfs" else "squashfs": ("squashfs", ("squashfs",), False)
       for c in ("squashfs", "gzip", "xz", "lz4", "lzo", "zstd")},
    # On the NAND simulator (FLASH): UBI with UBIFS on it, JFFS2 on the bare partition, and
    # squashfs on a UBI volume read through ubiblock (squashfs cannot handle NAND itself).
    # UBIFS sets up every compressor it knows when it loads: Debian builds zstd's as a module.
    "ubifs": ("ubifs", ("ubi", "zstd", "ubifs"), True),
    "jffs2": ("jffs2", ("jffs2",), True),
    "squashfs-ubi": ("squashfs", ("ubi", "squashfs"), False),
}
DISK_MODULES = ["virtio_pci", "virtio_blk"]
APP_UNIT = "bootlab-app.service"
ANALYZE_UNIT = "bootlab-analyze.service"
APP_INIT = "/usr/local/sbin/bootlab-app-init"  # init= the application (init = "app")
APP_TARGET = "bootlab.target"  # default.target with boot_target = "app"
BOOT_TARGETS = ("multi-user", "app")
JOURNAL = ("auto", "volatile", "persistent", "none")
# After ready the guest waits for the boot to finish, prints systemd's view and powers off,
# which ends the capture.  On a loaded host (TCG shares the CPUs) that took more than the 15 s
# the camera device's kernel log needs (qemu.AFTER_READY), and bootchart's SVG, drawn in the
# guest after that, presumably more than a minute once (it was missing in a clean-clone CI
# run beside three other guests, 2026-11-28): the systemd device reads up to two minutes, of
# which the wait for the boot to finish is bounded at ANALYZE_WAIT.  The power-off ends it
# sooner.
AFTER_READY = 120.0
ANALYZE_WAIT = 30
# systemd-bootchart (rootfs.bootchart): init= it, it forks systemd as PID 1 and samples /proc
# until SIGHUP (sent after the wait for the boot to finish) or its sample count runs out, which
# is set past the whole read after ready, so the chart always covers ready and the wait.
BOOTCHART = "/usr/lib/systemd/systemd-bootchart"
BOOTCHART_HZ = 25  # its default: a sample every 40 ms
BOOTCHART_SAMPLES = BOOTCHART_HZ * 180  # 3 min: under TCG, ready plus ANALYZE_WAIT with room


# The emulated NAND: large-page SLC as nandsim builds it from its ID bytes (maker 0x20; the
# fourth byte 0x15 says 2 KiB pages, 64 bytes of OOB, 128 KiB erase blocks).  The second
# byte is the chip's size; the root lives on the first partition (mtd0), flash_mib long.
FLASH = {"ubifs", "jffs2", "squashfs-ubi"}
NAND_CHIPS = {128: 0xA1, 256: 0xAA, 512: 0xAC, 1024: 0xA3, 2048: 0xA5}  # MiB -> device ID byte
NAND_PAGE, NAND_SUBPAGE, NAND_ERASE_BLOCK = 2048, 512, 128 * 1024
# UBI's EC header in the first sub-page, its VID header in the second: data from the second page.
UBI_LEB = NAND_ERASE_BLOCK - NAND_PAGE
UBI_VOLUME = "rootfs"
# What the initramfs runs to program the flash and attach UBI (Debian's mtd-utils: busybox
# has none of them); each brings its shared libraries.
FLASH_PROGRAMS = {"ubifs": ("ubiformat", "ubiattach"), "jffs2": ("flash_erase", "nandwrite"),
                  "squashfs-ubi": ("ubiformat", "ubiattach", "ubiblock")}


class RootfsError(Exception):
    pass


@dataclass
class RootfsSection:
    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    variant: str = "minbase"
    packages: list[str] = field(default_factory=lambda: ["systemd", "systemd-sysv", "udev", "kmod"])
    filesystem: str = "ext4"
    flash_mib: int = 256
    read_only: bool = False
    fsck: bool = True
    init: str = "systemd"
    app: str = "true"
    modules: list[str] = field(default_factory=list)
    modules_early: bool = False
    files: dict[str, str] = field(default_factory=dict)
    mask: list[str] = field(default_factory=list)
    generators: bool = True
    app_unit: dict[str, str] = field(default_factory=dict)
    boot_target: str = "multi-user"
    prune_units: bool = False
    journal: str = "auto"
    analyze: bool = True
    bootchart: bool = False
    plot: bool = False

    def problems(self) -> list[tuple[str, str]]:
        """(key, message) for each value that cannot be built."""
        checks = [
            (self.filesystem in FILESYSTEMS, "filesystem", f"filesystem must be one of {', '.join(FILESYSTEMS)}"),
            (isinstance(self.flash_mib, int) and 1 <= self.flash_mib <= max(NAND_CHIPS), "flash_mib",
             f"flash_mib must be 1..{max(NAND_CHIPS)} (MiB of emulated NAND)"),
            (self.init in ("systemd", "app"), "init", "init must be systemd or app"),
            (self.boot_target in BOOT_TARGETS, "boot_target", f"boot_target must be one of {', '.join(BOOT_TARGETS)}"),
            (not self.prune_units or self.boot_target == "app", "prune_units",
             "prune_units needs boot_target = \"app\" (multi-user.target needs the units it would remove)"),
            (self.journal in JOURNAL, "journal", f"journal must be one of {', '.join(JOURNAL)}"),
            (APP_UNIT not in self.mask, "mask", f"{APP_UNIT} is the application: it cannot be masked"),
            (all(p and not p.startswith("-") for p in self.packages), "packages", "package names only"),
            *[(not getattr(self, svg) or (self.analyze and self.init == "systemd"), svg,
               f"{svg} needs analyze = true (it prints the SVG) and init = \"systemd\"") for svg in ("bootchart", "plot")],
        ]
        return [(key, message) for ok, key, message in checks if not ok]

    @property
    def init_path(self) -> str:
        """What the initramfs hands over to on the root."""
        if self.init == "app":
            return APP_INIT
        return BOOTCHART if self.bootchart else "/sbin/init"

    @property
    def all_packages(self) -> list[str]:
        """What mmdebstrap installs: the packages, and what the keys above ask for."""
        return sorted(set(self.packages) | ({"systemd-bootchart"} if self.bootchart else set()))

    @property
    def remounted(self) -> bool:
        """Whether systemd checks and remounts the root as fstab says (systemd-fsck-root and
        systemd-remount-fs, pulled in by sysinit.target's local-fs.target): not when the
        application is PID 1 nor when the boot target leaves sysinit.target out."""
        return self.init == "systemd" and self.boot_target == "multi-user"

    @property
    def mount_options(self) -> str:
        """How the initramfs mounts the root: read-only when systemd checks and remounts it,
        else as it stays (nothing remounts it later)."""
        return "rw" if self.writable and not self.remounted else "ro"

    @property
    def fstype(self) -> str:
        return FILESYSTEMS[self.filesystem][0]

    @property
    def writable(self) -> bool:
        return FILESYSTEMS[self.filesystem][2] and not self.read_only

    @property
    def on_flash(self) -> bool:
        return self.filesystem in FLASH

    @property
    def disk_writable(self) -> bool:
        """Whether the guest writes to the virtio disk: a flash root's disk is only the image
        the flash is programmed from."""
        return self.writable and not self.on_flash

    @property
    def device(self) -> str:
        """What the root is mounted from (and fstab names)."""
        if self.filesystem == "ubifs":
            return f"ubi0:{UBI_VOLUME}"
        if self.filesystem == "jffs2":
            return "mtd0"
        if self.filesystem == "squashfs-ubi":
            return "/dev/ubiblock0_0"
        return "/dev/vda"

    def nandsim(self) -> str:
        """nandsim with its parameters: the smallest chip that holds flash_mib, partitioned
        (in erase blocks) so that mtd0 is flash_mib long."""
        chip = min(size for size in NAND_CHIPS if size >= self.flash_mib)
        spec = f"nandsim id_bytes=0x20,{NAND_CHIPS[chip]:#04x},0x00,0x15"
        blocks = self.flash_mib * (1 << 20) // NAND_ERASE_BLOCK
        return spec if chip == self.flash_mib else f"{spec} parts={blocks}"

    def kernel_modules(self) -> list[str]:
        """What the initramfs loads: the modules that mount this root, then the application's
        with modules_early (so they are loaded before systemd or the application starts)."""
        flash = [self.nandsim()] if self.on_flash else []
        early = list(self.modules) if self.modules_early else []
        return DISK_MODULES + flash + list(FILESYSTEMS[self.filesystem][1]) + early

    def flash_steps(self) -> dict[str, str]:
        """The initramfs's timed steps before it mounts a flash root: programming the NAND from
        the image on the virtio disk, then attaching UBI (its scan is what a board pays at
        every boot).  `wait_block` is the switch-root init's (initramfs.py); a step that fails
        stops the boot, naming itself, as every step does."""
        if not self.on_flash:
            return {}
        if self.filesystem == "jffs2":
            # Erased with JFFS2's clean markers (in the OOB on NAND), then the image's pages.
            return {"flash-program": "wait_block /dev/vda && flash_erase -q -j /dev/mtd0 0 0 && "
                                     "nandwrite -q -p /dev/mtd0 - < /dev/vda"}
        # ubiformat keeps the erase counters and formats the blocks beyond the image.
        steps = {"flash-program": "wait_block /dev/vda && ubiformat /dev/mtd0 -y -q -f - "
                                  "-S $(($(cat /sys/block/vda/size) * 512)) < /dev/vda",
                 "ubi-attach": "ubiattach -m 0 -d 0"}
        if self.filesystem == "squashfs-ubi":
            steps["ubiblock"] = "ubiblock -c /dev/ubi0_0"
        return steps

    def flash_programs(self) -> dict[str, str]:
        """mtd-utils' programs the initramfs needs for flash_steps(): {path inside: path on the host}."""
        if not self.on_flash:
            return {}
        found = {}
        for name in FLASH_PROGRAMS[self.filesystem]:
            host = shutil.which(name, path="/usr/sbin:/sbin:/usr/bin")
            if host is None:
                raise RootfsError(f"{name} is not installed (package mtd-utils; run make setup): "
                                  f"the initramfs programs the {self.filesystem} flash with it")
            found[f"/usr/sbin/{name}"] = host
        return found


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _namespace() -> list[str]:
    """How to run a command that must see the tree's owners: as it is when root, else inside
    a user namespace with the subordinate ids mapped (as mmdebstrap builds)."""
    return [] if os.geteuid() == 0 else ["mmdebstrap", "--unshare-helper"]


# The tool that makes each filesystem, and the Debian package that has it (scripts/setup installs them).
MKFS = {"ext4": ("mkfs.ext4", "e2fsprogs"), "ext2": ("mkfs.ext2", "e2fsprogs"), "btrfs": ("mkfs.btrfs", "btrfs-progs"),
        "f2fs": ("sload.f2fs", "f2fs-tools"), "erofs": ("mkfs.erofs", "erofs-utils"),
        "squashfs": ("mksquashfs", "squashfs-tools"), "ubifs": ("mkfs.ubifs", "mtd-utils"),
        "jffs2": ("mkfs.jffs2", "mtd-utils")}


def _need(tool: str, package: str, what: str) -> None:
    if shutil.which(tool) is None:
        raise RootfsError(f"{tool} is not installed (package {package}; run make setup): needed for {what}")


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        # The tools name the problem first (their usage text follows).
        raise RootfsError(f"{what} failed: {(done.stderr or done.stdout).strip()[:600]}")


def debian_tree(r: RootfsSection, arch: str = "amd64") -> Path:
    """mmdebstrap's tarball of the Debian tree for an architecture (the kernel's), built once
    per (suite, mirror, variant, packages, architecture).  A foreign architecture's maintainer
    scripts run under qemu-user (binfmt.py)."""
    # amd64 keeps the key and name it had before there were two architectures (caches stay valid).
    own = () if arch == "amd64" else (arch,)
    key = _digest(r.suite, r.mirror, r.variant, r.all_packages, *own)
    out = packages.cache_dir() / "rootfs" / f"debian-{'-'.join((r.suite, *own, key))}.tar"
    if out.exists():
        return out
    try:
        binfmt.ensure(arch)
    except binfmt.BinfmtError as err:
        raise RootfsError(f"building the Debian tree for {arch}: {err}") from None
    return packages.made_once(out, lambda path: _mmdebstrap(r, arch, path))


def _mmdebstrap(r: RootfsSection, arch: str, out: Path) -> None:
    tmp = out.with_suffix(".tmp.tar")
    cmd = ["mmdebstrap", "--quiet", f"--variant={r.variant}", "--mode=auto", "--format=tar", f"--arch={arch}",
           f"--include={','.join(r.all_packages)}",
           # no documentation or apt lists: they are not booted
           "--dpkgopt=path-exclude=/usr/share/{doc,man,info,locale}/*",
           "--customize-hook=rm -rf \"$1\"/var/lib/apt/lists/*",
           r.suite, str(tmp), r.mirror]
    _need("mmdebstrap", "mmdebstrap", "building the Debian tree")
    _run(cmd, "building the Debian tree with mmdebstrap")
    tmp.replace(out)


def _unit(sections: dict[str, dict[str, str | list[str]]]) -> str:
    out = []
    for name, keys in sections.items():
        out.append(f"[{name}]")
        for key, value in keys.items():
            for v in value if isinstance(value, list) else [value]:
                out.append(f"{key}={v}")
        out.append("")
    return "\n".join(out)


def analyze_script(app_unit: str = APP_UNIT, bootchart: bool = False, plot: bool = False) -> str:
    """Run after ready: wait for the boot to finish, then print systemd's view between markers.
    Collected first and printed in one write, so a login prompt or the application's last
    words do not land inside an output.  The wait is bounded (ANALYZE_WAIT): a boot whose
    application started early may still be busy then: its units so far are better than
    nothing (`time` then says it is not done).  The host reads for AFTER_READY after ready
    (reference.Built.after_ready)."""
    from ..sources.systemd_analyze import ANALYZE_COMMANDS, PLOT_COMMAND, marker

    lines = ["#!/bin/sh", f"timeout {ANALYZE_WAIT} systemctl is-system-running --wait > /dev/null 2>&1", "{"]
    for name, command in ANALYZE_COMMANDS + ((PLOT_COMMAND,) if plot else ()):
        command = command.replace("{unit}", app_unit)
        lines += [f"echo '{marker(name, 'begin')}'", f"systemd-analyze --no-pager {command} 2>&1",
                  f"echo '{marker(name, 'end')}'"]
    if bootchart:
        # SIGHUP ends the sampling; it then writes the SVG (one, in /run/log) and exits (bounded wait).
        lines += ["for dir in /proc/[0-9]*; do",
                  "  [ \"$(cat \"$dir/comm\" 2>/dev/null)\" = systemd-bootcha ] && pid=${dir#/proc/}", "done",
                  "kill -HUP \"$pid\"", "for i in $(seq 100); do [ -d \"/proc/$pid\" ] || break; sleep 0.2; done",
                  f"echo '{marker('bootchart', 'begin')}'", "cat /run/log/bootchart-*.svg",
                  f"echo '{marker('bootchart', 'end')}'"]
    lines += ["} > /run/bootlab-analyze", "cat /run/bootlab-analyze", "systemctl --no-block poweroff"]
    return "\n".join(lines) + "\n"


def overlay(r: RootfsSection, kernel: packages.Kernel, host_files: dict[str, str]) -> dict[str, tuple[bytes | str, int]]:
    """bootlab's files in the root: {path: (content, mode)}; a str content is a symlink."""
    from .initramfs import split_modules

    files: dict[str, tuple[bytes | str, int]] = {}
    # With modules_early the initramfs has loaded them: the root needs neither them nor modprobe lines.
    names, params = split_modules([] if r.modules_early else r.modules)
    order = packages.load_order(kernel, names) if names else []
    release = kernel.release
    for _name, path in order:
        files[f"/usr/lib/modules/{release}/{path}"] = ((kernel.modules / path).read_bytes(), 0o644)
    for index in ("modules.dep", "modules.dep.bin", "modules.alias", "modules.alias.bin", "modules.symbols",
                  "modules.symbols.bin", "modules.builtin", "modules.builtin.bin", "modules.order",
                  "modules.softdep", "modules.devname", "modules.builtin.modinfo"):
        if (kernel.modules / index).exists():
            files[f"/usr/lib/modules/{release}/{index}"] = ((kernel.modules / index).read_bytes(), 0o644)
    for inside, host in sorted(host_files.items()):
        source = Path(host)
        if not source.is_file():
            raise RootfsError(f"file for the root filesystem not found: {host} (for {inside})")
        files[inside] = (source.read_bytes(), source.stat().st_mode & 0o777)
    modprobes = [f"/sbin/modprobe {name} {params.get(name.replace('-', '_'), '')}".rstrip() for name in names]
    service = {"Type": "exec", "ExecStartPre": modprobes, "ExecStart": r.app,
               "StandardOutput": "tty", "StandardError": "tty", "TTYPath": "/dev/console",
               "TTYReset": "no", "TTYVHangup": "no", "RemainAfterExit": "yes"}
    # boot_target = "app": nothing but bootlab.target's own units starts, so neither of them
    # may ask for sysinit.target or basic.target (their default dependencies would pull in
    # everything multi-user does).
    minimal = {"DefaultDependencies": "no"} if r.boot_target == "app" else {}
    wanted_by = APP_TARGET if r.boot_target == "app" else "multi-user.target"
    unit = {"Description": "the application (bootlab)", **r.app_unit, **minimal}
    files[f"/etc/systemd/system/{APP_UNIT}"] = (
        _unit({"Unit": unit, "Service": service, "Install": {"WantedBy": wanted_by}}).encode(), 0o644)
    files[f"/etc/systemd/system/{wanted_by}.wants/{APP_UNIT}"] = (f"/etc/systemd/system/{APP_UNIT}", 0)
    if r.boot_target == "app":
        target = {"Unit": {"Description": "the application and nothing else (bootlab)", "AllowIsolate": "yes"}}
        files[f"/etc/systemd/system/{APP_TARGET}"] = (_unit(target).encode(), 0o644)
        files["/etc/systemd/system/default.target"] = (f"/etc/systemd/system/{APP_TARGET}", 0)
    if r.analyze:
        files["/usr/local/sbin/bootlab-analyze"] = (analyze_script(bootchart=r.bootchart, plot=r.plot).encode(), 0o755)
        analyze = {"Unit": {"Description": "systemd's view of the boot, after ready (bootlab)",
                            "After": APP_UNIT, **minimal},
                   "Service": {"Type": "simple", "ExecStart": "/usr/local/sbin/bootlab-analyze",
                               "Environment": "SYSTEMD_COLORS=0",
                               "StandardOutput": "tty", "TTYPath": "/dev/console", "TTYReset": "no",
                               "TTYVHangup": "no"},
                   "Install": {"WantedBy": wanted_by}}
        files[f"/etc/systemd/system/{ANALYZE_UNIT}"] = (_unit(analyze).encode(), 0o644)
        files[f"/etc/systemd/system/{wanted_by}.wants/{ANALYZE_UNIT}"] = (
            f"/etc/systemd/system/{ANALYZE_UNIT}", 0)
    if r.bootchart:
        files["/etc/systemd/bootchart.conf"] = (
            f"[Bootchart]\nSamples={BOOTCHART_SAMPLES}\nFrequency={BOOTCHART_HZ}\nRelative=no\n"
            f"Filter=yes\nInit=/lib/systemd/systemd\n".encode(), 0o644)
    for unit_name in r.mask:
        files[f"/etc/systemd/system/{unit_name}"] = ("/dev/null", 0)
    if r.journal != "auto":
        files["/etc/systemd/journald.conf.d/bootlab.conf"] = (f"[Journal]\nStorage={r.journal}\n".encode(), 0o644)
    options = "rw" if r.writable else "ro"
    passno = 1 if r.fsck and r.writable and not r.on_flash else 0  # no fsck for UBIFS or JFFS2
    files["/etc/fstab"] = (f"{r.device} / {r.fstype} {options} 0 {passno}\n".encode(), 0o644)
    files["/etc/hostname"] = (b"bootlab\n", 0o644)
    # init= the application: mounts, its modules, then the application; no service manager.
    app_init = ["#!/bin/sh", "mount -t proc proc /proc", "mount -t sysfs sys /sys",
                "mount -t devtmpfs dev /dev 2>/dev/null", "mount -t tmpfs tmp /tmp", "mount -t tmpfs run /run",
                *modprobes, r.app, "sleep 2", "echo o > /proc/sysrq-trigger"]
    files[APP_INIT] = ("\n".join(app_init).encode() + b"\n", 0o755)
    return files


def _mask_generators(tree: str) -> str:
    """The shell commands that mask every generator the Debian tree has: a link to /dev/null
    of the same name in /etc/systemd/system-generators (systemd.generator(7))."""
    q = shlex.quote
    own, masks = f"{tree}/usr/lib/systemd/system-generators", f"{tree}/etc/systemd/system-generators"
    return (f"mkdir -p {q(masks)}; for g in {q(own)}/*; do "
            f'if [ -e "$g" ]; then ln -sf /dev/null {q(masks)}/"${{g##*/}}"; fi; done; ')


# What bootlab.target's boot and its power-off load from Debian's unit files (prune_units):
# the targets and slices, and the services that end a boot or stand in when one fails.
KEPT_SERVICES = ("systemd-poweroff", "systemd-reboot", "systemd-halt", "systemd-exit", "systemd-kexec",
                 "emergency", "rescue")


def _prune_units(tree: str) -> str:
    """The shell commands that remove from Debian's unit directory every unit file but the
    targets, slices and KEPT_SERVICES, and its .wants/.requires links (they belong to the
    targets bootlab.target leaves out); /etc/systemd/system (bootlab's units) is kept."""
    units = shlex.quote(f"{tree}/usr/lib/systemd/system")
    kept = " ".join(f"! -name {name}.service" for name in KEPT_SERVICES)
    return (f"find {units} -mindepth 1 -maxdepth 1 -type d \\( -name '*.wants' -o -name '*.requires' \\) "
            f"-exec rm -rf {{}} +; "
            f"find {units} -mindepth 1 -maxdepth 1 ! -type d ! -name '*.target' ! -name '*.slice' {kept} -delete; ")


def _mkfs(r: RootfsSection, tree: str, image: str) -> list[str]:
    """The shell command that makes the image from the tree (inside the namespace)."""
    fs = r.filesystem
    q = shlex.quote
    # The writable filesystems need a size: the tree's, with room to spare for the journal and writes.
    size = f'truncate -s $(( $(du -sm {q(tree)} | cut -f1) * 13 / 10 + 96 ))M {q(image)} && '
    if fs in ("ext4", "ext2"):
        return size + f"mkfs.{fs} -q -F -L root -d {q(tree)} {q(image)}"
    if fs == "btrfs":
        return size + f"mkfs.btrfs -q -L root --rootdir {q(tree)} {q(image)}"
    if fs == "f2fs":
        return size + f"mkfs.f2fs -q -l root {q(image)} && sload.f2fs -f {q(tree)} {q(image)} > /dev/null"
    if fs == "jffs2":
        # No clean markers in the image: on NAND they live in the OOB (flash_erase -j writes them).
        return (f"mkfs.jffs2 -n -e {NAND_ERASE_BLOCK} -p -d {q(tree)} -o {q(image)} && "
                + _fits(r, image))
    if fs in ("ubifs", "squashfs-ubi"):
        volume = f"{image}.volume"
        if fs == "ubifs":
            # The volume grows to the partition at the first attach (autoresize) and UBIFS with
            # it at the first mount, up to the partition's erase blocks (-c).
            make = f"mkfs.ubifs -m {NAND_PAGE} -e {UBI_LEB} -c {_erase_blocks(r)} -d {q(tree)} -o {q(volume)}"
            flags = "vol_flags=autoresize\n"
        else:
            make = f"mksquashfs {q(tree)} {q(volume)} -noappend -quiet -no-progress"
            flags = ""
        ini = (f"[{UBI_VOLUME}]\nmode=ubi\nimage={volume}\nvol_id=0\nvol_type=dynamic\n"
               f"vol_name={UBI_VOLUME}\n{flags}")
        return (f"{make} && printf %s {q(ini)} > {q(image)}.ini && "
                f"ubinize -o {q(image)} -m {NAND_PAGE} -p {NAND_ERASE_BLOCK} -s {NAND_SUBPAGE} {q(image)}.ini && "
                f"rm {q(volume)} {q(image)}.ini && " + _fits(r, image))
    kind, _, compression = fs.partition("-")
    if kind == "erofs":
        return f"mkfs.erofs --quiet {'-z' + compression if compression else ''} {q(image)} {q(tree)}"
    compression = compression or "gzip"
    return f"mksquashfs {q(tree)} {q(image)} -comp {compression} -noappend -quiet -no-progress"


def _erase_blocks(r: RootfsSection) -> int:
    return r.flash_mib * (1 << 20) // NAND_ERASE_BLOCK


def _fits(r: RootfsSection, image: str) -> str:
    """A shell test that the flash image fits in the partition (UBI keeps some blocks for
    itself: the attach says so if they are missing)."""
    limit = _erase_blocks(r) * NAND_ERASE_BLOCK
    return (f'size=$(stat -c %s {shlex.quote(image)}); [ "$size" -le {limit} ] || '
            f'{{ echo "the {r.filesystem} image ($((size >> 20)) MiB) does not fit in rootfs.flash_mib = {r.flash_mib}" >&2; '
            'exit 1; }')


def image(r: RootfsSection, kernel: packages.Kernel, host_files: dict[str, str]) -> Path:
    """The disk image (raw), built once per content: the Debian tree, bootlab's files, the filesystem."""
    _need(*MKFS[r.filesystem.partition("-")[0]], f"a {r.filesystem} root filesystem")
    if r.filesystem in ("ubifs", "squashfs-ubi"):
        _need("ubinize", "mtd-utils", f"a {r.filesystem} root filesystem")
    tree = debian_tree(r, kernel.arch)
    files = overlay(r, kernel, host_files)
    content = hashlib.sha256()
    for path, (data, mode) in sorted(files.items()):
        content.update(f"{path}\0{mode}\0".encode() + (data if isinstance(data, bytes) else data.encode()))
    table = asdict(r)
    if not r.on_flash:
        del table["flash_mib"]  # no part of a block device's image: the cached ones stay valid
    key = _digest(tree.name, table, content.hexdigest())
    out = packages.cache_dir() / "rootfs" / f"root-{key}.{r.filesystem}"
    return packages.made_once(out, lambda path: _make_image(r, tree, files, path))


def _make_image(r: RootfsSection, tree: Path, files: dict, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="bootlab-rootfs-") as tmp:
        work = Path(tmp)
        # Without root, the namespace's root is one of the user's subordinate ids, not the
        # user: it must be let in to write the tree and the image.
        work.chmod(0o777)
        added = work / "added"
        for path, (data, mode) in files.items():
            target = added / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, str):
                target.symlink_to(data)
            else:
                target.write_bytes(data)
                target.chmod(mode)
        root, built = work / "root", work / "image"
        q = shlex.quote
        # The tree's files belong to the namespace's ids: they are removed from inside, also
        # when a step fails.  No device nodes: a user namespace cannot make them, and the
        # initramfs mounts devtmpfs on /dev before it switches to the root.
        script = (f"set -e; trap 'rm -rf {q(str(root))}' EXIT; mkdir {q(str(root))}; "
                  f"tar -C {q(str(root))} --exclude='./dev/*' -xf {q(str(tree))}; "
                  f"tar -C {q(str(added))} --owner=0 --group=0 -cf - . | tar -C {q(str(root))} --keep-directory-symlink -xf -; "
                  + ("" if r.generators else _mask_generators(str(root)))
                  + (_prune_units(str(root)) if r.prune_units else "")
                  + _mkfs(r, str(root), str(built)) + f"; chmod a+r {q(str(built))}")
        _run(_namespace() + ["sh", "-c", script], f"making the {r.filesystem} root filesystem image")
        # The image leaves the namespace: make it the user's on the host.
        shutil.move(str(built), out.with_suffix(".tmp"))
    out.with_suffix(".tmp").replace(out)
