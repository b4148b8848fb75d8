"""The ARM64 reference board: QEMU's `virt` machine under TCG with Debian's U-Boot for
qemu_arm64 as its firmware, booting Debian's arm64 kernel and a busybox arm64 initramfs
that reach it the way they reach a board: U-Boot loads them over TFTP from a directory
QEMU's user network serves, after bootlab stopped autoboot and set the environment on the
console (the [bootloader] table).

    [arm64]
    kernel = "generic"          # Debian arm64 kernel flavour: generic or cloud
    image = "Image"             # Image (uncompressed, as Debian ships it) or Image.gz (gzipped
                                # here: U-Boot's booti inflates it, given kernel_comp_addr_r
                                # and kernel_comp_size in its environment)
    cpu = "cortex-a57"          # QEMU -cpu
    accel = "tcg"               # QEMU -accel (TCG options: "tcg,tb-size=256" ...)
    memory = 1024               # MiB
    cpus = 1
    firmware = "/usr/lib/u-boot/qemu_arm64/u-boot.bin"
    console_baud = 115200       # the host drains the serial port at this speed; 0 = unthrottled

    [initramfs]                 # as the reference device's (reference.py), built for arm64
    [boot]                      # ready, silence, deadline (reference.py)
    [bootloader]                # uboot.py; its env sets bootargs, its boot_command loads the
                                # TFTP directory's files: Image (or Image.gz) and initrd

The board's TFTP directory holds exactly the files named above, so a boot command naming
another file fails at "bootloader: boot" with U-Boot's TFTP error quoted.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import initramfs, packages, qemu, reference, uboot
from .description import TargetError, section

FLAVOURS = ("generic", "cloud")
IMAGES = ("Image", "Image.gz")
INITRD = "initrd"  # the initramfs's name in the TFTP directory


@dataclass
class BoardSection:
    kernel: str = "generic"
    image: str = "Image"
    cpu: str = "cortex-a57"
    accel: str = "tcg"
    memory: int = 1024
    cpus: int = 1
    firmware: str = "/usr/lib/u-boot/qemu_arm64/u-boot.bin"
    console_baud: int = 115200


@dataclass
class Arm64Board:
    """The board's description: [arm64], [initramfs], [boot], [bootloader].  The [arm64]
    table is `target`, as the reference device's [target]: the QEMU parts read it there."""

    name: str = "board-arm64"
    target: BoardSection = field(default_factory=BoardSection)
    initramfs: reference.InitramfsSection = field(default_factory=reference.InitramfsSection)
    boot: reference.BootSection = field(default_factory=reference.BootSection)
    bootloader: uboot.UBoot | None = None
    base: Path | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        loader = {"bootloader": self.bootloader.to_dict()} if self.bootloader is not None else {}
        return {"name": self.name, "arm64": asdict(self.target), "initramfs": asdict(self.initramfs),
                "boot": asdict(self.boot), **loader}

    def validate(self, where=lambda *path: "") -> None:
        t = self.target
        checks = [
            (t.kernel in FLAVOURS, "kernel", f"kernel must be one of {', '.join(FLAVOURS)}"),
            (t.image in IMAGES, "image", f"image must be one of {', '.join(IMAGES)}"),
            (t.accel.split(",")[0] == "tcg", "accel", "accel must be tcg (with options: \"tcg,tb-size=256\")"),
            (32 <= t.memory <= 65536, "memory", "memory must be 32..65536 MiB"),
            (1 <= t.cpus <= 64, "cpus", "cpus must be 1..64"),
            (t.console_baud >= 0, "console_baud", "console_baud must be 0 (unthrottled) or a speed"),
            (self.bootloader is not None, "bootloader", "the board boots through U-Boot: [bootloader] is required"),
        ]
        for ok, key, message in checks:
            if not ok:
                raise TargetError(f"{where('arm64', key)}arm64.{key}: {message}")
        reference.check_initramfs(self.initramfs, self.boot, where)


# The board's tables (as a campaign may hold them); a description also has its name.
KEYS = ("arm64", "initramfs", "boot", "bootloader")


def from_dict(data: dict, where=lambda *path: "") -> Arm64Board:
    for key in data:
        if key not in ("name",) + KEYS:
            raise TargetError(f"{where(key)}{key}: unknown key (known: name, {', '.join(KEYS)})")
    board = Arm64Board(
        name=str(data.get("name", "board-arm64")),
        target=section(BoardSection, data.get("arm64", {}), "arm64", where),
        initramfs=section(reference.InitramfsSection, data.get("initramfs", {}), "initramfs", where),
        boot=section(reference.BootSection, data.get("boot", {}), "boot", where),
        bootloader=uboot.from_dict(data["bootloader"], where) if "bootloader" in data else None,
    )
    board.validate(where)
    return board


@dataclass
class Built(qemu.QemuBootable):
    """The board ready to power on: its TFTP directory and QEMU's command line."""

    target: Arm64Board
    kernel: packages.Kernel
    tftp: Path
    initrd_size: int
    digest: str

    @property
    def image(self) -> Path:
        return self.tftp / self.target.target.image

    @property
    def cmdline(self) -> str:
        return self.target.bootloader.env.get("bootargs", "") if self.target.bootloader else ""

    def qemu_argv(self) -> list[str]:
        t = self.target.target
        # U-Boot finds the network card on PCI; QEMU's user network serves the TFTP directory
        # (the guest is 10.0.2.15, the server 10.0.2.2).
        return ["qemu-system-aarch64", "-machine", "virt", "-cpu", t.cpu, "-accel", t.accel,
                "-m", str(t.memory), "-smp", str(t.cpus), "-nographic", "-no-reboot", "-bios", t.firmware,
                "-netdev", f"user,id=net0,tftp={self.tftp}", "-device", "virtio-net-pci,netdev=net0"]

    def describe(self) -> dict:
        return {**self.target.to_dict(), "kernel_release": self.kernel.release, "tftp": str(self.tftp),
                "image_size": self.image.stat().st_size, "initrd_size": self.initrd_size,
                "initrd_compressed": (self.tftp / INITRD).stat().st_size, "digest": self.digest}


def build(board: Arm64Board, fetch: bool = True) -> Built:
    """Fetch the arm64 kernel, build the arm64 initramfs and fill the TFTP directory (named
    by its content, so an unchanged board reuses it)."""
    t = board.target
    try:
        k = packages.kernel(t.kernel, fetch=fetch, arch="arm64")
    except packages.PackageError as err:
        raise TargetError(str(err)) from None
    out = packages.cache_dir() / "artifacts"
    initrd, size = reference.build_initramfs(board.initramfs, k, reference.absolute_files(board.initramfs.files, board.base))
    digest = hashlib.sha256(json.dumps([board.to_dict(), k.release, initrd.name], sort_keys=True).encode())
    tftp = out / f"tftp-arm64-{digest.hexdigest()[:16]}"
    if not (tftp / INITRD).exists():
        work = tftp.with_suffix(".tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        if t.image == "Image.gz":  # Debian's vmlinuz for arm64 is the uncompressed Image
            (work / "Image.gz").write_bytes(initramfs.compress(k.image.read_bytes(), "gzip"))
        else:
            shutil.copyfile(k.image, work / "Image")
        shutil.copyfile(initrd, work / INITRD)
        shutil.rmtree(tftp, ignore_errors=True)
        work.rename(tftp)
    return Built(board, k, tftp, size, digest.hexdigest()[:16])
