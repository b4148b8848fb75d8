"""The ARM64 reference board: QEMU's `virt` machine under TCG with Debian's U-Boot for
qemu_arm64 as its firmware, booting Debian's arm64 kernel and a busybox arm64 initramfs
that reach it the way they reach a board: U-Boot loads them over TFTP from a directory
QEMU's user network serves, after bootlab stopped autoboot and set the environment on the
console (the [bootloader] table).

    [arm64]
    kernel = "generic"          # Debian arm64 kernel flavour: generic or cloud; or built (the
                                # [kconfig] table: cross-built from Debian's source, kernel_build.py)
    image = "Image"             # Image (uncompressed, as Debian ships it) or Image.gz (gzipped
                                # here: U-Boot's booti inflates it)
    fit = false                 # one FIT image (boot.itb: the kernel and the initramfs, made by
                                # mkimage) instead of separate files; booted with FIT_BOOT_COMMAND
    cmdline = "console=ttyAMA0,115200 panic=-1"   # the kernel's command line (bootargs)
    append = ""                 # more kernel arguments (what variants and the optimizer add)
    cpu = "cortex-a57"          # QEMU -cpu
    accel = "tcg"               # QEMU -accel (TCG options: "tcg,tb-size=256" ...)
    icount = ""                 # QEMU -icount, e.g. "shift=0,sleep=off" for a deterministic guest clock
                                # (its console is then not drained at console_baud: see qemu.py)
    qemu = "bookworm"           # or bookworm-backports: Debian's QEMU 10 from the cache, whose
                                # -icount runs an SMP board (emulator.py)
    memory = 1024               # MiB
    cpus = 1
    firmware = "/usr/lib/u-boot/qemu_arm64/u-boot.bin"   # or "built": U-Boot built from Debian's
                                # source with the [arm64.uboot] table's configuration (uboot_build.py)
    console_baud = 115200       # the host drains the serial port at this speed; 0 = unthrottled

    [arm64.uboot]               # with firmware = "built"
    board = "qemu_arm64"        # the defconfig
    fragments = []              # files of CONFIG_ lines, merged in order
    options = {}                # {SILENT_CONSOLE = "y"}: applied last (the bootstage report is always on)

    [kconfig]                   # with kernel = "built": as the reference device's (reference.py),
                                # for arm64 (base tinyconfig, or the packaged arm64 generic or cloud
                                # kernel's configuration; kernel/fragments/small-arm64.config).
                                # Beside a Debian kernel: the kernel that could be built for the
                                # board, which the optimizer tries (candidate own-kernel)
    [initramfs]                 # as the reference device's (reference.py), built for arm64
    [rootfs]                    # as the reference device's (rootfs.py): a Debian root with systemd
                                # on a virtio disk, the tree built for arm64 (mmdebstrap --arch=arm64,
                                # its maintainer scripts under qemu-user: binfmt.py); the initramfs
                                # then only mounts it (switch-root)
    [boot]                      # ready, silence, deadline (reference.py)
    [bootloader]                # uboot.py

What U-Boot finds, as on a board that boots from the network:
  - the TFTP directory: the kernel (`Image` or `Image.gz`), `initrd`, and `boot.scr.uimg`, the
    boot script distro boot loads after DHCP (as Debian's flash-kernel writes one): it sets
    the board's variables (below) and runs [bootloader] boot_command;
  - the board's flash: with [bootloader.saved_env], an environment image in the second flash
    bank, U-Boot's default environment with the board's variables, `bootlab_boot` (the boot
    command) and the saved variables over it (`bootcmd = "run bootlab_boot"` is the direct
    boot; ipaddr and serverip spare DHCP).  Without it the flash is blank and U-Boot boots
    its default: bootdelay 2, the distro scan, DHCP, the script.  That is the board as Debian
    ships it.
  - with stop_autoboot, the board's variables and [bootloader] env typed at the prompt, then
    boot_command.
The board's variables: bootargs (the command line), bootfile (the kernel's file name, or the
FIT image's), for Image.gz where booti inflates it (kernel_comp_addr_r, kernel_comp_size),
for a FIT image where it is loaded (fit_addr).  A boot
command naming a file the directory does not hold fails at "bootloader: boot" with U-Boot's
TFTP error quoted.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import emulator, initramfs, kernel_build, packages, qemu, reference, rootfs, uboot, uboot_build, uboot_images
from .description import TargetError, section
from .kconfig import BuildError

FLAVOURS = ("generic", "cloud")
IMAGES = ("Image", "Image.gz")
FIT = "boot.itb"
# A FIT image is loaded above the kernel's own place (bootm copies the kernel out of it to its
# load address, kernel_addr_r) and the ramdisk's, at 128 MiB: the board needs 256 MiB for it.
# The device tree is the one QEMU gave U-Boot.
FIT_ADDR = "0x48000000"
FIT_MEMORY = 256
FIT_BOOT_COMMAND = ("tftpboot ${fit_addr} ${bootfile} && "
                    "bootm ${fit_addr}#conf-1 ${fit_addr}:ramdisk-1 ${fdtcontroladdr}")
INITRD = "initrd"  # the initramfs's name in the TFTP directory
BOOT_SCRIPT = "boot.scr.uimg"  # what U-Boot's distro boot loads by TFTP after DHCP (boot_script_dhcp)
# QEMU's user network: the board's address and the TFTP server's, without DHCP.
STATIC_NETWORK = {"ipaddr": "10.0.2.15", "serverip": "10.0.2.2"}
# qemu_arm64_defconfig keeps its environment (CONFIG_ENV_SIZE) at the start of the second
# flash bank, which QEMU's virt machine maps at 64 MiB; the bank is 64 MiB.
ENV_SIZE = 0x40000
FLASH_BANK = 64 << 20
KERNEL_ADDR = "0x40400000"  # U-Boot's kernel_addr_r: where a FIT image's kernel is placed
# Where booti inflates an Image.gz (kernel_comp_addr_r, room for the whole inflated kernel:
# U-Boot inflates there, then moves it to kernel_addr_r) and, above it, the ramdisk: all below
# 128 MiB, so that a 128 MiB board can (U-Boot relocates itself to the top of its RAM).
# Debian's 6.1 Image is 32 MiB (its header's image_size).
INFLATE = {"kernel_comp_addr_r": "0x42800000", "kernel_comp_size": "0x2400000", "ramdisk_addr_r": "0x45000000"}


BUILT = "built"  # arm64.firmware naming a U-Boot bootlab builds, arm64.kernel a kernel it builds
ARCH = "arm64"  # Debian's name for the board's architecture (its packages, its cross-built kernel)


@dataclass
class UBootSection:
    board: str = "qemu_arm64"
    fragments: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class BoardSection:
    kernel: str = "generic"
    image: str = "Image"
    fit: bool = False
    cmdline: str = "console=ttyAMA0,115200 panic=-1"
    append: str = ""
    cpu: str = "cortex-a57"
    accel: str = "tcg"
    icount: str = ""
    qemu: str = emulator.SYSTEM
    memory: int = 1024
    cpus: int = 1
    firmware: str = "/usr/lib/u-boot/qemu_arm64/u-boot.bin"
    console_baud: int = 115200
    uboot: UBootSection = field(default_factory=UBootSection, metadata={"key": False})  # read by from_dict


@dataclass
class Arm64Board(reference.QemuDescription):
    """The board's description: [arm64], [initramfs], [boot], [bootloader].  The [arm64]
    table is `target`, as the reference device's [target]: the QEMU parts read it there."""

    name: str = "board-arm64"
    target: BoardSection = field(default_factory=BoardSection)
    initramfs: reference.InitramfsSection = field(default_factory=reference.InitramfsSection)
    boot: reference.BootSection = field(default_factory=reference.BootSection)
    bootloader: uboot.UBoot | None = None
    # What a built kernel is built from: the one booted with kernel = "built", else the one
    # the optimizer may build for the board (own-kernel) when the description gives the table.
    kconfig: reference.KconfigSection = field(default_factory=reference.KconfigSection)
    rootfs: rootfs.RootfsSection | None = None
    base: Path | None = field(default=None, compare=False)

    def variables(self) -> dict[str, str]:
        """What the board sets before its boot command runs (typed, saved or in the script)."""
        t = self.target
        if t.fit:  # bootm inflates what the FIT says is compressed
            return {"bootargs": self.cmdline(), "bootfile": FIT, "fit_addr": FIT_ADDR}
        inflate = INFLATE if t.image == "Image.gz" else {}
        return {"bootargs": self.cmdline(), "bootfile": t.image, **inflate}

    def uboot_config(self) -> uboot_build.UBootConfig:
        """The [arm64.uboot] table with each fragment's path made absolute, as host_files()."""
        u = self.target.uboot
        return uboot_build.UBootConfig(u.board, reference.absolute_paths(u.fragments, self.base), dict(u.options))

    def kernel_config(self) -> kernel_build.KernelConfig:
        """The [kconfig] table for the board's architecture, each fragment's path made absolute."""
        return reference.kernel_config(self.kconfig, self.base, ARCH)

    def _absolute(self, out: "Arm64Board") -> None:
        out.target.uboot.fragments = [str(f) for f in reference.absolute_paths(self.target.uboot.fragments, self.base)]

    def firmware(self) -> Path:
        """U-Boot's binary: the packaged one, or the built one (built unless the cache has it)."""
        if self.target.firmware != BUILT:
            return Path(self.target.firmware)
        try:
            return uboot_build.build(self.uboot_config()).firmware
        except BuildError as err:
            raise TargetError(f"arm64.firmware = \"built\": {err}") from None

    def to_dict(self) -> dict:
        loader = {"bootloader": self.bootloader.to_dict()} if self.bootloader is not None else {}
        board = asdict(self.target)
        if self.target.firmware != BUILT:  # the table is read only for a built U-Boot
            del board["uboot"]
        built = ({"kconfig": asdict(self.kconfig)}
                 if self.target.kernel == BUILT or self.kconfig != reference.KconfigSection() else {})
        root = {"rootfs": asdict(self.rootfs)} if self.rootfs is not None else {}
        return {"name": self.name, "arm64": board, "initramfs": asdict(self.initramfs),
                "boot": asdict(self.boot), **built, **loader, **root}

    def validate(self, where=lambda *path: "") -> None:
        t = self.target
        checks = [
            (t.kernel in FLAVOURS + (BUILT,), "kernel", f"kernel must be one of {', '.join(FLAVOURS)} or {BUILT}"),
            (t.image in IMAGES, "image", f"image must be one of {', '.join(IMAGES)}"),
            (t.accel.split(",")[0] == "tcg", "accel", "accel must be tcg (with options: \"tcg,tb-size=256\")"),
            (32 <= t.memory <= 65536, "memory", "memory must be 32..65536 MiB"),
            (not t.fit or t.memory >= FIT_MEMORY, "fit",
             f"a FIT image is loaded at {FIT_ADDR}, past the RAM of a board under {FIT_MEMORY} MiB"),
            (1 <= t.cpus <= 64, "cpus", "cpus must be 1..64"),
            (t.qemu in emulator.QEMUS, "qemu", f"qemu must be one of {', '.join(emulator.QEMUS)}"),
            (t.console_baud >= 0, "console_baud", "console_baud must be 0 (unthrottled) or a speed"),
            (self.bootloader is not None, "bootloader", "the board boots through U-Boot: [bootloader] is required"),
            (t.firmware != BUILT or t.uboot.board in uboot_build.BOARDS, "uboot",
             f"uboot.board must be one of {', '.join(uboot_build.BOARDS)}"),
        ]
        for ok, key, message in checks:
            if not ok:
                raise TargetError(f"{where('arm64', key)}arm64.{key}: {message}")
        reference.check_kconfig(self.kconfig, where)
        reference.check_initramfs(self.initramfs, self.boot, where)
        reference.check_rootfs(self.rootfs, self.initramfs, where)


# The board's tables (as a campaign may hold them); a description also has its name.
KEYS = ("arm64", "initramfs", "boot", "bootloader", "kconfig", "rootfs")


def from_dict(data: dict, where=lambda *path: "") -> Arm64Board:
    for key in data:
        if key not in ("name",) + KEYS:
            raise TargetError(f"{where(key)}{key}: unknown key (known: name, {', '.join(KEYS)})")
    table = data.get("arm64", {})
    built = table.get("uboot") if isinstance(table, dict) else None  # a table of its own, read below
    target = section(BoardSection, {k: v for k, v in table.items() if k != "uboot"} if built is not None else table,
                     "arm64", where)
    if built is not None:
        if target.firmware != BUILT:
            raise TargetError(f"{where('arm64', 'uboot')}[arm64.uboot] is read only with arm64.firmware = \"built\"")
        target.uboot = section(UBootSection, built, "arm64.uboot", lambda *path: where("arm64", "uboot", *path[1:]))
    board = Arm64Board(
        name=str(data.get("name", "board-arm64")),
        target=target,
        initramfs=section(reference.InitramfsSection, data.get("initramfs", {}), "initramfs", where),
        boot=section(reference.BootSection, data.get("boot", {}), "boot", where),
        bootloader=uboot.from_dict(data["bootloader"], where) if "bootloader" in data else None,
        kconfig=section(reference.KconfigSection, data.get("kconfig", {}), "kconfig", where),
        rootfs=reference.read_rootfs(data, where),
    )
    board.validate(where)
    return board


@dataclass
class Built(qemu.QemuBootable):
    """The board ready to power on: its TFTP directory, its flash and QEMU's command line."""

    target: Arm64Board
    kernel: packages.Kernel
    tftp: Path
    flash: Path | None  # the second flash bank holding the saved environment; None: blank
    firmware: Path  # U-Boot's binary (-bios)
    initrd_size: int
    initrd_compressed: int
    digest: str
    disk: Path | None = None  # the [rootfs] table's image (rootfs.py)
    qemu: emulator.Qemu = emulator.installed(ARCH)  # [arm64] qemu

    @property
    def image(self) -> Path:
        t = self.target.target
        return self.tftp / (FIT if t.fit else t.image)

    @property
    def cmdline(self) -> str:
        return self.target.cmdline()

    def bootloader(self) -> uboot.UBoot:
        """The dialogue: with stop_autoboot, the board's variables are typed before the
        table's own env."""
        loader = copy.deepcopy(self.target.bootloader)
        if loader.stop_autoboot:
            loader.env = {**self.target.variables(), **loader.env}
        return loader

    def qemu_argv(self) -> list[str]:
        t = self.target.target
        # U-Boot finds the network card on PCI; QEMU's user network serves the TFTP directory
        # (the guest is 10.0.2.15, the server 10.0.2.2).  The flash is read-only: the cached
        # image is shared by every boot of this environment.
        flash = (["-drive", f"if=pflash,unit=1,format=raw,readonly=on,file={self.flash}"] if self.flash else [])
        icount = ["-icount", t.icount] if t.icount else []
        return [*self.qemu.argv, "-machine", "virt", "-cpu", t.cpu, "-accel", t.accel,
                "-m", str(t.memory), "-smp", str(t.cpus), "-nographic", "-no-reboot", "-bios", str(self.firmware), *flash, *icount,
                "-netdev", f"user,id=net0,tftp={self.tftp}", "-device", "virtio-net-pci,netdev=net0",
                *self.disk_argv()]

    def describe(self) -> dict:
        return {**self.target.to_dict(), "kernel_release": self.kernel.release, "tftp": str(self.tftp),
                "flash": str(self.flash) if self.flash else None, "image_size": self.image.stat().st_size,
                "initrd_size": self.initrd_size, "initrd_compressed": self.initrd_compressed,
                "digest": self.digest, **({"qemu_version": self.qemu.version} if self.qemu.version else {}),
                **({"disk_path": str(self.disk), "disk_size": self.disk.stat().st_size} if self.disk else {})}


def script(board: Arm64Board) -> str:
    """The boot script in the TFTP directory: the board's variables, then the boot command."""
    sets = [f"setenv {name} {uboot.quoted(value)}" for name, value in board.variables().items()]
    return "\n".join(sets + [board.bootloader.boot_command])


def saved_environment(board: Arm64Board, firmware: Path | None = None) -> dict[str, str]:
    """What the flash holds: the firmware's default environment (the board's, unless given),
    the board's variables, the boot command as `bootlab_boot`, and the saved variables over
    them."""
    default = uboot_images.default_environment(firmware or board.firmware())
    return {**default, **board.variables(), "bootlab_boot": board.bootloader.boot_command,
            **board.bootloader.saved_env}


def build(board: Arm64Board, fetch: bool = True) -> Built:
    """Fetch the arm64 kernel, build the arm64 initramfs, fill the TFTP directory and write
    the flash, each named by its content, so an unchanged board reuses them."""
    t = board.target
    firmware = board.firmware()
    try:
        if t.kernel == BUILT:  # cross-built, unless the cache has its configuration
            k = kernel_build.build(board.kernel_config()).kernel
        else:
            k = packages.kernel(t.kernel, fetch=fetch, arch=ARCH)
        emulated = emulator.qemu(t.qemu, ARCH, fetch=fetch)
    except (packages.PackageError, kernel_build.KernelBuildError) as err:
        raise TargetError(str(err)) from None
    out = packages.cache_dir() / "artifacts"
    disk = None
    if board.rootfs is not None:  # the tree for arm64: the kernel's architecture
        disk, initrd, size = reference.build_root(board, k)
    else:
        initrd, size = reference.build_initramfs(board.initramfs, k, board.host_files(),
                                                   board.host_files(board.initramfs.kbuild))
    commands = script(board)
    tftp = out / f"tftp-arm64-{_digest([k.release, t.image, t.fit, initrd.name, commands])}"
    if not (tftp / BOOT_SCRIPT).exists():
        # Made aside under a name of its own and renamed: campaigns and tests building the
        # same board at once never see (or write into) a half-made directory.
        out.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=tftp.name + ".", dir=out))
        kernel = work / t.image
        if t.image == "Image.gz":  # Debian's vmlinuz for arm64 is the uncompressed Image
            kernel.write_bytes(initramfs.compress(k.image.read_bytes(), "gzip"))
        else:
            shutil.copyfile(k.image, kernel)
        if t.fit:  # the kernel and the initramfs in one file; nothing else to load
            uboot_images.fit_image(kernel, initrd, KERNEL_ADDR, work / FIT)
            kernel.unlink()
        else:
            shutil.copyfile(initrd, work / INITRD)
        uboot_images.boot_script(commands, work / BOOT_SCRIPT)
        try:
            work.rename(tftp)
        except OSError:  # another build made it first: the same content
            shutil.rmtree(work, ignore_errors=True)
    flash = None
    if board.bootloader.saved_env:
        env = saved_environment(board, firmware)
        flash = out / f"flash-arm64-{_digest(env)}.img"
        if not flash.exists():
            fd, name = tempfile.mkstemp(prefix=flash.name + ".", dir=out)
            os.close(fd)
            work = Path(name)
            uboot_images.environment_image(env, ENV_SIZE, work)
            with open(work, "r+b") as fh:
                fh.truncate(FLASH_BANK)  # QEMU wants the whole bank; U-Boot reads only the environment
            work.replace(flash)
    digest = _digest([board.to_dict(), k.release, initrd.name, str(firmware)] + ([disk.name] if disk else []))
    return Built(board, k, tftp, flash, firmware, size, initrd.stat().st_size, digest, disk, emulated)


def _digest(what) -> str:
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
