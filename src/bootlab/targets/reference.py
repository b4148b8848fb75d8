"""The reference device: a description anyone can boot (a TOML target file), and the
artifacts built from it (kernel image, initramfs, QEMU command line).

    [target]
    kernel = "generic"          # Debian kernel flavour: generic, cloud, rt; or built (the [kconfig] table)
    image = "bzimage"           # bzimage (compressed, as shipped) or vmlinux (uncompressed, PVH entry)
    firmware = "seabios"        # seabios (QEMU's default), qboot, or u-boot (Debian's U-Boot for
                                # QEMU x86, which loads the kernel and initramfs: [bootloader])
    machine = "pc"              # pc, q35 or microvm
    memory = 512                # MiB
    cpus = 1
    cmdline = "console=ttyS0,115200 panic=-1"
    append = ""                 # more kernel arguments (quiet, lpj=..., initcall_debug ...);
                                # tsc_early_khz=host and lpj=host: the booting host's own values
    console_baud = 115200       # the host drains the serial port at this speed; 0 = unthrottled
    icount = ""                 # QEMU -icount, e.g. "shift=4,sleep=off" for a deterministic guest clock
                                # (its console is then not drained at console_baud: see qemu.py)
    qemu = "bookworm"           # bookworm (the installed QEMU 7.2) or bookworm-backports (Debian's
                                # QEMU 10, fetched into the cache: SMP guests under -icount, emulator.py)

    [initramfs]
    compression = "gzip"        # gzip, lz4, lzo, xz, zstd, lzma, bzip2, none
    init = "rc"                 # rc (busybox init + rc scripts), script (one /init script),
                                # or direct (a static C init that starts the app itself)
    modules = []                # loaded before the application (dependencies added);
                                # "name param=value ..." passes parameters
    modules_after = []          # loaded after the ready marker
    app = "true"                # the application (a shell command); init prints the marker after it
    app_prints_ready = false    # whether the app prints the ready marker itself
    files = {}                  # {"/path/in/image" = "path/on/host"}, relative to the target file
    kbuild = {}                 # {"/dir/in/image" = "Kbuild directory on the host"}: out-of-tree
                                # modules built against the target's kernel (kbuild.py), into that dir
    steps = {}                  # {name = "shell command"}: timed steps before the app (rc, script)
    after = []                  # shell commands after the ready marker (not timed)
    dmesg = false               # print the kernel log after ready (for initcall_debug)

    [rootfs]                    # a Debian root filesystem with systemd on a virtio disk (rootfs.py has
                                # the keys); the initramfs then only mounts it (init = "switch-root")

    [kconfig]                   # with kernel = "built": a kernel built from Debian's source (kernel_build.py)
    base = "tinyconfig"         # tinyconfig, or the packaged generic or cloud kernel's configuration
    fragments = []              # Kconfig fragments merged in order, relative to the target file
    options = {}                # {"KERNEL_LZ4" = "y"}: options set last
    localmodconfig = []         # the base's modules to keep ("vivid"): every other module of the base
                                # turned off by the kernel's own `make localmodconfig`, before the fragments

    [boot]
    ready = "BOOTLAB READY"     # the line that ends the boot
    silence = 30                # seconds without output before a boot is declared hung
    deadline = 120              # seconds before any boot is killed
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tomli_w

from ..sourcemap import FileError, read_toml
from . import emulator, host_facts, initramfs, kernel_build, kernel_image, packages, qemu, rootfs, uboot
from . import kbuild as kbuild_modules
from .description import TargetError, section

# U-Boot: the 32-bit build (u-boot-qemu's qemu-x86).  The 64-bit one (qemu-x86_64) loads a
# bzImage with zboot and the guest resets as the kernel starts, under TCG, every time.
UBOOT_X86 = "/usr/lib/u-boot/qemu-x86/u-boot.rom"
FIRMWARE = {"seabios": None, "qboot": "/usr/share/qemu/qboot.rom", "u-boot": UBOOT_X86}
# microvm takes its own firmware builds: QEMU's default for it is qboot, SeaBIOS ships one.
MICROVM_FIRMWARE = {"seabios": "/usr/share/seabios/bios-microvm.bin", "qboot": None}
# How U-Boot boots the reference device: QEMU's -kernel and -initrd wait in fw_cfg; `qfw load`
# copies them to U-Boot's load addresses and `zboot` starts the bzImage with the initramfs
# (and `bootargs` as the command line).
UBOOT_BOOT_COMMAND = "qfw load ${kernel_addr_r} ${ramdisk_addr_r}; zboot ${kernel_addr_r} 0 ${ramdisk_addr_r} ${filesize}"
MACHINES = ("pc", "q35", "microvm")
IMAGES = ("bzimage", "vmlinux")


@dataclass
class KernelSection:
    kernel: str = "generic"
    image: str = "bzimage"
    firmware: str = "seabios"
    machine: str = "pc"
    memory: int = 512
    cpus: int = 1
    cmdline: str = "console=ttyS0,115200 panic=-1"
    append: str = ""
    console_baud: int = 115200
    icount: str = ""
    accel: str = "tcg"
    qemu: str = emulator.SYSTEM


@dataclass
class InitramfsSection:
    compression: str = "gzip"
    init: str = "rc"
    modules: list[str] = field(default_factory=list)
    modules_after: list[str] = field(default_factory=list)
    app: str = "true"
    app_prints_ready: bool = False
    files: dict[str, str] = field(default_factory=dict)
    kbuild: dict[str, str] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)
    after: list[str] = field(default_factory=list)
    dmesg: bool = False


@dataclass
class KconfigSection:
    base: str = "tinyconfig"
    fragments: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    localmodconfig: list[str] = field(default_factory=list)


@dataclass
class BootSection:
    ready: str = initramfs.READY_MARKER
    silence: float = 30.0
    deadline: float = 120.0


class QemuDescription:
    """What the descriptions of the targets bootlab builds share (the reference device, the
    ARM64 board): a table `target` with the kernel's `cmdline` and `append`, an [initramfs]
    table whose files and a [kconfig] table whose fragments are named relative to `base`,
    the target file's directory, and an optional [rootfs] table (a Debian root on a virtio
    disk: build_root())."""

    rootfs: rootfs.RootfsSection | None = None

    def to_toml(self) -> str:
        return tomli_w.dumps(self.to_dict())

    def cmdline(self) -> str:
        return " ".join(p for p in (self.target.cmdline, self.target.append) if p).strip()

    def host_files(self, files: dict[str, str] | None = None) -> dict[str, str]:
        """initramfs.files (or `files`) with each host path made absolute."""
        return absolute_files(self.initramfs.files if files is None else files, self.base)

    def standalone(self, name: str):
        """A copy that stands without its target file, named `name`: every relative file path
        in it made absolute (see _absolute())."""
        out = copy.deepcopy(self)
        out.name = name
        out.initramfs.files = self.host_files()
        out.initramfs.kbuild = self.host_files(self.initramfs.kbuild)
        out.kconfig.fragments = [str(f) for f in absolute_paths(self.kconfig.fragments, self.base)]
        if out.rootfs is not None:
            out.rootfs.files = self.host_files(self.rootfs.files)
        self._absolute(out)
        return out

    def _absolute(self, out) -> None:
        """Make the kind's own relative paths in `out` absolute (beyond the initramfs's and
        the [kconfig] table's)."""


@dataclass
class Target(QemuDescription):
    """The reference device's description (the tables above)."""

    name: str = "reference"
    target: KernelSection = field(default_factory=KernelSection)
    initramfs: InitramfsSection = field(default_factory=InitramfsSection)
    boot: BootSection = field(default_factory=BootSection)
    kconfig: KconfigSection = field(default_factory=KconfigSection)  # read when target.kernel is "built"
    bootloader: uboot.UBoot | None = None  # talked to on the console before the kernel (uboot.py)
    rootfs: rootfs.RootfsSection | None = None  # a Debian root on a virtio disk (rootfs.py)
    # Relative file paths are relative to the target file's directory (not serialized).
    base: Path | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        built = {"kconfig": asdict(self.kconfig)} if self.target.kernel == "built" else {}
        loader = {"bootloader": self.bootloader.to_dict()} if self.bootloader is not None else {}
        root = {"rootfs": asdict(self.rootfs)} if self.rootfs is not None else {}
        return {"name": self.name, "target": asdict(self.target), "initramfs": asdict(self.initramfs),
                "boot": asdict(self.boot), **built, **loader, **root}

    def kernel_config(self) -> kernel_build.KernelConfig:
        """The [kconfig] table with each fragment's path made absolute, as host_files()."""
        return kernel_config(self.kconfig, self.base)

    def validate(self, where=lambda *path: "") -> None:
        t = self.target
        checks = [
            (t.kernel in packages.FLAVOURS or t.kernel == "built", ("target", "kernel"),
             f"kernel must be one of {', '.join(packages.FLAVOURS)} or built"),
            (t.image in IMAGES, ("target", "image"), f"image must be one of {', '.join(IMAGES)}"),
            (t.firmware in FIRMWARE, ("target", "firmware"), f"firmware must be one of {', '.join(FIRMWARE)}"),
            (t.firmware != "u-boot" or t.machine != "microvm", ("target", "firmware"),
             "u-boot boots the pc or q35 machine, not microvm"),
            (t.firmware != "u-boot" or t.image == "bzimage", ("target", "image"),
             "U-Boot's zboot starts a bzImage (image = \"bzimage\")"),
            (self.bootloader is None or t.firmware == "u-boot", ("bootloader",),
             "a [bootloader] table needs firmware = \"u-boot\" (SeaBIOS and qboot boot the kernel themselves)"),
            (t.machine in MACHINES, ("target", "machine"), f"machine must be one of {', '.join(MACHINES)}"),
            (32 <= t.memory <= 65536, ("target", "memory"), "memory must be 32..65536 MiB"),
            (1 <= t.cpus <= 64, ("target", "cpus"), "cpus must be 1..64"),
            (t.console_baud >= 0, ("target", "console_baud"), "console_baud must be 0 (unthrottled) or a speed"),
            (t.accel in ("tcg", "kvm"), ("target", "accel"), "accel must be tcg or kvm"),
            (t.qemu in emulator.QEMUS, ("target", "qemu"), f"qemu must be one of {', '.join(emulator.QEMUS)}"),
            # Without a PIT-independent TSC rate the kernel's calibration fails now and then
            # under TCG, which hangs a microvm guest (about 1 boot in 9).
            (t.machine != "microvm" or "tsc_early_khz=" in self.cmdline(), ("target", "machine"),
             "microvm needs tsc_early_khz=host on the kernel command line (the booting host's TSC rate): "
             "without it about 1 boot in 9 hangs in TSC calibration"),
        ]
        for ok, path, message in checks:
            if not ok:
                raise TargetError(f"{where(*path)}{'.'.join(path)}: {message}")
        uboot.refuse_saved_env(self.bootloader, "Debian's U-Boot for qemu-x86 keeps no environment", where)
        check_kconfig(self.kconfig, where)
        check_initramfs(self.initramfs, self.boot, where)


KEYS = ("name", "target", "initramfs", "boot", "kconfig", "bootloader", "rootfs")  # what a description holds


def absolute_files(files: dict[str, str], base: Path | None) -> dict[str, str]:
    """{path in the image: host path} with each host path made absolute (relative ones are
    relative to the target file's directory)."""
    return {inside: str(base / host) if base is not None and not Path(host).is_absolute() else host
            for inside, host in files.items()}


def absolute_paths(paths: list[str], base: Path | None) -> list[Path]:
    """Host paths made absolute (relative ones are relative to the target file's directory)."""
    return [(base / p).resolve() if base is not None else Path(p) for p in paths]


def kernel_config(k: KconfigSection, base: Path | None, arch: str = "amd64") -> kernel_build.KernelConfig:
    """A [kconfig] table (which the ARM64 board shares) for an architecture, each fragment's
    path made absolute."""
    return kernel_build.KernelConfig(k.base, absolute_paths(k.fragments, base), dict(k.options), arch,
                                     list(k.localmodconfig))


def check_kconfig(k: KconfigSection, where=lambda *path: "") -> None:
    if k.base not in kernel_build.BASES:
        raise TargetError(f"{where('kconfig', 'base')}kconfig.base: base must be one of {', '.join(kernel_build.BASES)}")


def check_initramfs(i: InitramfsSection, b: BootSection, where=lambda *path: "") -> None:
    """The checks of the [initramfs] and [boot] tables, which other kinds share (arm64_board.py)."""
    checks = [
        (i.compression in initramfs.COMPRESSORS, ("initramfs", "compression"),
         f"compression must be one of {', '.join(initramfs.COMPRESSORS)}"),
        (i.init in ("rc", "script", "direct"), ("initramfs", "init"), "init must be rc, script or direct"),
        (b.silence > 0, ("boot", "silence"), "silence must be positive"),
        (b.deadline > 0, ("boot", "deadline"), "deadline must be positive"),
    ]
    for ok, path, message in checks:
        if not ok:
            raise TargetError(f"{where(*path)}{'.'.join(path)}: {message}")


def build_initramfs(i: InitramfsSection, k: packages.Kernel, files: dict[str, str],
                    kbuild: dict[str, str]) -> tuple[Path, int]:
    """The [initramfs] table built for a kernel (and its architecture), into the cache; `files`
    and the Kbuild directories `kbuild` with absolute host paths (host_files())."""
    try:
        files = {**files, **kbuild_modules.files(k, kbuild)}  # Debian's headers may need fetching
        spec = initramfs.InitramfsSpec(k, compression=i.compression, init=i.init, modules=list(i.modules),
                                       modules_after=list(i.modules_after), app=i.app,
                                       app_prints_ready=i.app_prints_ready, files=files, steps=dict(i.steps),
                                       after=list(i.after), dmesg=i.dmesg)
        return initramfs.build(spec, packages.cache_dir() / "artifacts")
    except (initramfs.InitramfsError, packages.PackageError) as err:
        raise TargetError(str(err)) from None


def read_rootfs(data: dict, where=lambda *path: "") -> rootfs.RootfsSection | None:
    """A description's [rootfs] table (which the ARM64 board shares), if it has one."""
    return section(rootfs.RootfsSection, data["rootfs"], "rootfs", where) if "rootfs" in data else None


def check_rootfs(r: rootfs.RootfsSection | None, i: InitramfsSection, where=lambda *path: "") -> None:
    """The [rootfs] table's checks, and the [initramfs] keys it leaves without a meaning."""
    if r is None:
        return
    for key, message in r.problems():
        raise TargetError(f"{where('rootfs', key)}rootfs.{key}: {message}")
    # The initramfs only mounts the root: what it would run belongs to [rootfs].
    unused = {k: v for k, v in asdict(InitramfsSection()).items() if k != "compression"}
    for key, value in asdict(i).items():
        if key in unused and value != unused[key]:
            raise TargetError(f"{where('initramfs', key)}initramfs.{key}: with a [rootfs] table the initramfs "
                              "only mounts the root; the application and its files are rootfs.app, "
                              "rootfs.modules and rootfs.files")


def build_root(target: QemuDescription, k: packages.Kernel) -> tuple[Path, Path, int]:
    """The [rootfs] table built for a kernel (and its architecture): the disk image and the
    switch-root initramfs that loads the disk's and the filesystem's modules and mounts it;
    (disk, initramfs, its uncompressed size)."""
    r = target.rootfs
    try:
        disk = rootfs.image(r, k, target.host_files(r.files))
    except (rootfs.RootfsError, packages.PackageError) as err:
        raise TargetError(str(err)) from None
    # Mounted read-only first when systemd checks it (fsck) and remounts it as fstab says.
    try:
        spec = initramfs.InitramfsSpec(k, compression=target.initramfs.compression, init="switch-root",
                                       modules=r.kernel_modules(), steps=r.flash_steps(), files=r.flash_programs(),
                                       root=f"{r.device} {r.fstype} {r.mount_options} {r.init_path}")
        initrd, size = initramfs.build(spec, packages.cache_dir() / "artifacts")
    except (initramfs.InitramfsError, packages.PackageError, rootfs.RootfsError) as err:
        raise TargetError(str(err)) from None
    return disk, initrd, size


def from_dict(data: dict, where=lambda *path: "") -> Target:
    known = set(KEYS)
    for key in data:
        if key not in known:
            raise TargetError(f"{where(key)}{key}: unknown key (known: {', '.join(sorted(known))})")
    t = Target(
        name=str(data.get("name", "reference")),
        target=section(KernelSection, data.get("target", {}), "target", where),
        initramfs=section(InitramfsSection, data.get("initramfs", {}), "initramfs", where),
        boot=section(BootSection, data.get("boot", {}), "boot", where),
        kconfig=section(KconfigSection, data.get("kconfig", {}), "kconfig", where),
        bootloader=uboot.from_dict(data["bootloader"], where) if "bootloader" in data else None,
        rootfs=read_rootfs(data, where),
    )
    check_rootfs(t.rootfs, t.initramfs, where)
    if "kconfig" in data and t.target.kernel != "built":
        raise TargetError(f"{where('kconfig')}[kconfig] is read only with target.kernel = \"built\"")
    t.validate(where)
    return t


def load(path: str) -> Target:
    try:
        data, where = read_toml(path)
    except FileError as err:
        raise TargetError(str(err)) from None
    target = from_dict(data, where)
    target.base = Path(path).resolve().parent
    return target


@dataclass
class Built(qemu.QemuBootable):
    """Everything needed to boot a target, and the hash that names it."""

    target: Target
    kernel: packages.Kernel
    image: Path
    initrd: Path
    initrd_size: int  # uncompressed
    digest: str
    cmdline: str  # the target's, with this host's facts in place of `host` (host_facts.py)
    disk: Path | None = None  # the root filesystem image (rootfs.py), on a virtio disk
    qemu: emulator.Qemu = emulator.installed()  # [target] qemu

    def qemu_argv(self) -> list[str]:
        t = self.target.target
        machine = t.machine
        if machine == "microvm":
            machine = "microvm,rtc=on"
        argv = [*self.qemu.argv, "-accel", t.accel, "-machine", machine, "-m", str(t.memory),
                "-smp", str(t.cpus), "-nographic", "-no-reboot", "-kernel", str(self.image),
                "-initrd", str(self.initrd), "-append", self.cmdline]
        bios = (MICROVM_FIRMWARE if t.machine == "microvm" else FIRMWARE)[t.firmware]
        if bios:
            argv += ["-bios", bios]
        if t.icount:
            argv += ["-icount", t.icount]
        return argv + self.disk_argv()

    def bootloader(self) -> uboot.UBoot | None:
        """U-Boot's dialogue with firmware = "u-boot": the [bootloader] table, by default the
        reference device's boot command; `bootargs` is the target's command line unless the
        table sets it."""
        if self.target.target.firmware != "u-boot":
            return None
        loader = copy.deepcopy(self.target.bootloader) or uboot.UBoot(boot_command=UBOOT_BOOT_COMMAND)
        if loader.stop_autoboot:
            loader.env = {"bootargs": self.cmdline, **loader.env}
        return loader

    def describe(self) -> dict:
        return {**self.target.to_dict(), "kernel_release": self.kernel.release, "image_path": str(self.image),
                "initrd_path": str(self.initrd), "initrd_size": self.initrd_size,
                "initrd_compressed": self.initrd.stat().st_size, "image_size": self.image.stat().st_size,
                "digest": self.digest, "cmdline_booted": self.cmdline,
                **({"qemu_version": self.qemu.version} if self.qemu.version else {}),
                **({"disk_path": str(self.disk), "disk_size": self.disk.stat().st_size} if self.disk else {})}


def build(target: Target, fetch: bool = True) -> Built:
    t, i = target.target, target.initramfs
    try:
        if t.kernel == "built":
            k = kernel_build.build(target.kernel_config()).kernel
        else:
            k = packages.kernel(t.kernel, fetch=fetch)
        emulated = emulator.qemu(t.qemu, fetch=fetch)
    except (packages.PackageError, kernel_build.KernelBuildError) as err:
        raise TargetError(str(err)) from None
    out = packages.cache_dir() / "artifacts"
    image = k.image
    if t.image == "vmlinux":
        try:
            image = kernel_image.extract_vmlinux(k.image, out / f"vmlinux-{k.release}")
        except kernel_image.ImageError as err:
            raise TargetError(f"{k.image}: {err}") from None
    disk = None
    if target.rootfs is not None:
        disk, initrd, size = build_root(target, k)
    else:
        initrd, size = build_initramfs(i, k, target.host_files(), target.host_files(i.kbuild))
    try:
        cmdline = host_facts.resolve(target.cmdline(), k.config)
    except host_facts.HostFactError as err:
        raise TargetError(str(err)) from None
    parts = [target.to_dict(), str(image), initrd.name] + ([disk.name] if disk is not None else [])
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    return Built(target, k, image, initrd, size, digest.hexdigest()[:16], cmdline, disk, emulated)
