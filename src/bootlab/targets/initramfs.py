"""The reference device's initramfs: busybox-static, an init, kernel modules with their
dependencies, the application, packed as a cpio (newc) archive and compressed.

The archive is reproducible (fixed owners and times, sorted entries), so its content hash
names it in the cache and a rebuild happens only when an input changes.

Init styles:
  rc      busybox init with /etc/inittab and /etc/init.d/rcS, as a stock embedded rootfs:
          mounts, mdev to populate /dev, a syslogd/klogd pair, modules, then the application
  script  one shell script as /init: mounts, modules, the application; nothing else
  direct  a small static C program as /init (files/bootlab-init.c): mounts, modules
          (finit_module), then the application itself, no shell ("init= the application")
  switch-root
          one shell script as /init that loads the modules (the disk and filesystem drivers),
          mounts the root filesystem (`root`) and hands over to its init with busybox
          switch_root: the application starts from there (targets/rootfs.py)

Steps are shell commands run after the modules and before the application, each between
`bootlab-mark: NAME.start` and `NAME.end`, so the analysis times them (loading the
real-time scheduler is one).  Commands after the ready marker are not timed: they run
what the boot exists for (a scheduling scenario, a trace dump) before power-off.

A module is named as in modules.dep, optionally followed by its parameters:
"vivid n_devs=1 node_types=0x1".
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..sources.console import CLOCK_PROBE, DMESG_DUMP_BEGIN, DMESG_DUMP_END
from . import packages

BUSYBOX = Path("/bin/busybox")  # the host's (amd64) busybox-static; other architectures' come from apt
COMPILERS = {"amd64": "gcc", "arm64": "aarch64-linux-gnu-gcc"}  # for static C programs in the image
COMPRESSORS = {
    "none": None,
    "gzip": ["gzip", "-9", "-n", "-c"],
    "xz": ["xz", "--check=crc32", "-9", "-c"],  # the kernel's xz decoder wants crc32
    "lzma": ["xz", "--format=lzma", "-9", "-c"],
    "lz4": ["lz4", "-l", "-9", "-c"],  # the kernel reads the legacy lz4 frame format
    "lzo": ["lzop", "-9", "-c"],
    "zstd": ["zstd", "-19", "-c", "-q"],
    "bzip2": ["bzip2", "-9", "-c"],
}
READY_MARKER = "BOOTLAB READY"


class InitramfsError(Exception):
    pass


@dataclass
class InitramfsSpec:
    kernel: packages.Kernel
    compression: str = "gzip"
    init: str = "rc"
    modules: list[str] = field(default_factory=list)
    modules_after: list[str] = field(default_factory=list)
    app: str = "true"
    app_prints_ready: bool = False
    files: dict[str, str] = field(default_factory=dict)  # path in the image -> path on the host
    steps: dict[str, str] = field(default_factory=dict)  # name -> shell command, before the app, timed
    after: list[str] = field(default_factory=list)  # shell commands after the ready marker
    dmesg: bool = False  # print the kernel log after the ready marker (for initcall_debug)
    poweroff: bool = True
    root: str = ""  # switch-root: "DEVICE FSTYPE OPTIONS INIT", e.g. "/dev/vda ext4 ro /sbin/init"


# -- cpio newc ----------------------------------------------------------------------------

class Cpio:
    """A reproducible newc archive built in memory."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, bytes, int]] = {}  # name -> (mode, data, rdev)

    def directory(self, name: str) -> None:
        parts = name.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            self.entries.setdefault("/".join(parts[:i]), (stat.S_IFDIR | 0o755, b"", 0))

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        name = name.strip("/")
        if "/" in name:
            self.directory(name.rsplit("/", 1)[0])
        self.entries[name] = (stat.S_IFREG | mode, data, 0)

    def symlink(self, name: str, target: str) -> None:
        name = name.strip("/")
        if "/" in name:
            self.directory(name.rsplit("/", 1)[0])
        self.entries.setdefault(name, (stat.S_IFLNK | 0o777, target.encode(), 0))

    def device(self, name: str, major: int, minor: int, mode: int = 0o600) -> None:
        name = name.strip("/")
        self.directory(name.rsplit("/", 1)[0])
        self.entries[name] = (stat.S_IFCHR | mode, b"", os.makedev(major, minor))

    def pack(self) -> bytes:
        out = bytearray()
        names = sorted(self.entries)
        for ino, name in enumerate(names + ["TRAILER!!!"], start=1):
            mode, data, rdev = self.entries.get(name, (0, b"", 0))
            encoded = name.encode() + b"\0"
            fields = (ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, 0, len(data), 0, 0,
                      os.major(rdev), os.minor(rdev), len(encoded), 0)
            out += b"070701" + b"".join(b"%08X" % f for f in fields) + encoded
            out += b"\0" * (-len(out) % 4)
            out += data
            out += b"\0" * (-len(out) % 4)
        return bytes(out)


def compress(data: bytes, method: str) -> bytes:
    if method not in COMPRESSORS:
        raise InitramfsError(f"unknown initramfs compression {method!r}: one of {', '.join(COMPRESSORS)}")
    cmd = COMPRESSORS[method]
    if cmd is None:
        return data
    try:
        done = subprocess.run(cmd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise InitramfsError(f"{cmd[0]} is not installed (run make setup)") from None
    if done.returncode != 0:
        raise InitramfsError(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')[-300:]}")
    return done.stdout


# -- the init -------------------------------------------------------------------------------

CLOCK_PROBES = 4  # as bootlab-init.c: 1.5 s, over RATE_SPAN whatever the delays
# Set at the top of every init script: the console's log level, below which the kernel prints
# a record on the console itself (_announce).
CONSOLE_LEVEL = 'read BOOTLAB_LEVEL _ < /proc/sys/kernel/printk 2>/dev/null'


def _announce(text: str, level: int = 6) -> str:
    # Into the kernel log (printk time) at `level`.  When the console shows that level the
    # kernel prints that copy itself; only when it does not (quiet) is the line echoed on the
    # console too, or the two copies would interleave on the serial line.  The printk copy is
    # the better time (a line echoed on a slow console arrives after what is queued before
    # it) and arrives whole: an echoed line can be cut by a kernel message printed meanwhile.
    return f'echo "<{level}>{text}" > /dev/kmsg; [ "${{BOOTLAB_LEVEL:-7}}" -gt {level} ] || echo "{text}"'


# Every shell init can stop the boot: a step that failed (a module that does not load, a
# flash that cannot be programmed) leaves a device that is not the one described, so the
# boot ends there with the reason (a kernel error, which a quiet console shows too) and the
# kernel's last words, and is recorded as failed with that line (qemu.parts: Stop.failure)
# rather than reaching ready without its step.
STOPPED = "bootlab: stopped: "
STOP_FUNCTION = f'stop() {{ {_announce(STOPPED + "$1", level=3)}; dmesg | tail; poweroff -f; }}'


def _step(name: str, command: str) -> list[str]:
    """A timed step; its failure stops the boot (its status is the last command's)."""
    return [_mark(f"{name}.start"), f"{{ {command}\n}} || stop \"step {name} failed (exit $?)\"",
            _mark(f"{name}.end")]


def _mark(name: str) -> str:
    # A marker seen in both clocks links them (sources/userspace.link_marks).
    return _announce(f"bootlab-mark: {name}")


def split_modules(specs: list[str]) -> tuple[list[str], dict[str, str]]:
    """["vivid n_devs=1", "vfat"] -> (["vivid", "vfat"], {"vivid": "n_devs=1"})."""
    names, params = [], {}
    for spec in specs:
        name, _, args = spec.strip().partition(" ")
        names.append(name)
        if args.strip():
            params[name.replace("-", "_")] = args.strip()
    return names, params


def _module_lines(order: list[tuple[str, str]], release: str, params: dict[str, str], insmod: bool) -> list[str]:
    lines = []
    for name, path in order:
        line = f"/lib/modules/{release}/{path} {params.get(name, '')}".rstrip()
        lines.append(f"insmod {line}" if insmod else line)
    return lines


# U-Boot's bootstage records in the device tree it handed the kernel (CONFIG_BOOTSTAGE_FDT),
# one line each as sources/uboot.py's FDT_RECORD reads them; the cells are big-endian u32.
BOOTSTAGE_NODE = "/sys/firmware/devicetree/base/bootstage"
BOOTSTAGE_DUMP = (f"for n in {BOOTSTAGE_NODE}/*; do for k in mark accum; do [ -f $n/$k ] && "
                  "echo \"bootlab-bootstage ${n##*/} $k $(od -An -tx1 $n/$k | tr -d ' \\n') "
                  "$(tr -d '\\000' < $n/name)\"; done; done 2>/dev/null")


def _app_lines(spec: InitramfsSpec, after: list[str]) -> list[str]:
    lines = [_mark("app.start")]
    if spec.app_prints_ready:
        lines.append(spec.app)
    else:
        lines += [spec.app, _announce(READY_MARKER)]
    if after:
        lines += [_mark("modules-after.start")] + after + [_mark("modules-after.end")]
    lines += spec.after
    if spec.dmesg:
        lines += [f'echo "{DMESG_DUMP_BEGIN}"', "dmesg", f'echo "{DMESG_DUMP_END}"']
    lines.append(BOOTSTAGE_DUMP)
    # Clock probes (sources/console.py), at every log level, with the console idle; the
    # half seconds also let the console drain: poweroff -f does not wait for it.
    lines += ["echo 8 > /proc/sys/kernel/printk",
              f'for i in {" ".join(str(i) for i in range(1, CLOCK_PROBES + 1))}; do sleep 0.5; '
              f'echo "<6>{CLOCK_PROBE} $i" > /dev/kmsg; done; sleep 0.5']
    if spec.poweroff:
        lines.append("poweroff -f")
    return lines


def init_files(spec: InitramfsSpec, order: list[tuple[str, str]], after: list[tuple[str, str]]) -> dict[str, str]:
    """The init's files as {path: text}."""
    release = spec.kernel.release
    _, params = split_modules(spec.modules + spec.modules_after)
    if spec.init == "direct":
        if spec.steps or spec.after:
            raise InitramfsError("steps and after-ready commands need a shell: use init rc or script")
        flags = (["prints-ready"] if spec.app_prints_ready else []) + (["dmesg"] if spec.dmesg else [])
        flags += [f"after={line}" for line in _module_lines(after, release, params, insmod=False)]
        return {"etc/bootlab/modules": "".join(f"{x}\n" for x in _module_lines(order, release, params, False)),
                "etc/bootlab/app": "".join(f"{_resolve(a)}\n" if i == 0 else f"{a}\n"
                                           for i, a in enumerate(shlex.split(spec.app))),
                "etc/bootlab/flags": "".join(f"{x}\n" for x in flags)}
    mounts = ["mount -t proc proc /proc", "mount -t sysfs sys /sys",
              "mount -t devtmpfs dev /dev 2>/dev/null || true", "mkdir -p /dev/pts /tmp /run",
              CONSOLE_LEVEL]  # reads /proc: after the mounts
    module_lines = _module_lines(order, release, params, insmod=True)
    modules = ([_mark("modules.start")] + module_lines + [_mark("modules.end")]) if order else []
    for name, command in spec.steps.items():
        modules += _step(name, command)
    after_lines = _module_lines(after, release, params, insmod=True)
    header = ["#!/bin/sh", "export PATH=/bin:/sbin:/usr/bin:/usr/sbin", STOP_FUNCTION]
    if spec.init == "switch-root":
        return {"init": "\n".join(header + SWITCH_ROOT_FUNCTIONS + mounts + modules + _switch_root(spec.root)) + "\n"}
    if spec.init == "script":
        return {"init": "\n".join(header + mounts + modules + _app_lines(spec, after_lines)) + "\n"}
    if spec.init != "rc":
        raise InitramfsError(f"unknown init style {spec.init!r}: rc, script or direct")
    rcs = header + mounts + [
        _mark("services.start"),
        "mdev -s",
        "syslogd -C16",
        "klogd",
        "hostname bootlab",
    ] + modules + [_mark("services.end")]
    app = header + [CONSOLE_LEVEL] + _app_lines(spec, after_lines)
    inittab = "::sysinit:/etc/init.d/rcS\n::wait:/etc/init.d/app\n::shutdown:/bin/umount -a -r\n"
    return {"etc/init.d/rcS": "\n".join(rcs) + "\n", "etc/init.d/app": "\n".join(app) + "\n",
            "etc/inittab": inittab}


# The switch-root init's helper, for its steps too (a flash root's, rootfs.flash_steps):
# wait for a block device, which appears when its driver has probed it.
SWITCH_ROOT_FUNCTIONS = [
    'wait_block() { i=0; while [ ! -b "$1" ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done; }',
]


def _switch_root(root: str) -> list[str]:
    try:
        device, fstype, options, init = root.split()
    except ValueError:
        raise InitramfsError(f"root must be 'DEVICE FSTYPE OPTIONS INIT', not {root!r}") from None
    # A flash root (ubi0:rootfs, mtd0) is no block device: its steps made it ready.
    wait = [f"wait_block {device}"] if device.startswith("/dev/") else []
    return [_mark("mount-root.start"), "mkdir -p /newroot", *wait,
            f"mount -t {fstype} -o {options} {device} /newroot || stop 'cannot mount {device}'",
            _mark("mount-root.end"),
            "mount --move /dev /newroot/dev", "umount /proc /sys",
            f"exec switch_root /newroot {init}"]


def _resolve(program: str) -> str:
    """bootlab-init execs without a shell or PATH: name busybox applets by their path."""
    if program.startswith("/"):
        return program
    return f"/bin/{program}"


def bootlab_init(arch: str = "amd64") -> Path:
    """The static C init for an architecture, compiled once per source version into the cache."""
    source = Path(__file__).with_name("files") / "bootlab-init.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    out = packages.cache_dir() / "artifacts" / (f"bootlab-init-{digest}" if arch == "amd64"
                                                else f"bootlab-init-{arch}-{digest}")
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")  # another process may compile it too
    cmd = [COMPILERS[arch], "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(tmp), str(source)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise InitramfsError(f"{cmd[0]} is not installed (run make setup): the direct init is compiled here") from None
    if done.returncode != 0:
        raise InitramfsError(f"compiling {source.name} failed: {done.stderr[-500:]}")
    tmp.replace(out)
    return out


def shared_libraries(program: Path) -> list[Path]:
    """The shared libraries (and loader) a dynamically linked ELF program needs, by ldd;
    none for a static program or a script."""
    with program.open("rb") as fh:
        if fh.read(4) != b"\x7fELF":
            return []
    done = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=False)
    if done.returncode != 0:  # "not a dynamic executable"
        return []
    found = []
    for line in done.stdout.splitlines():
        path = next((word for word in line.split() if word.startswith("/")), None)
        if path:
            found.append(Path(path))
    return found


def busybox(arch: str = "amd64") -> Path:
    """busybox-static for an architecture: the host's, or the package's binary unpacked into
    the cache."""
    if arch == "amd64":
        if not BUSYBOX.exists():
            raise InitramfsError(f"{BUSYBOX} not found: install busybox-static (make setup)")
        return BUSYBOX
    try:
        deb = packages.download("busybox-static", arch)
        root = packages.cache_dir() / "artifacts" / deb.stem
        binary = root / "bin" / "busybox"
        if not binary.exists():
            # Unpacked aside and renamed: a fresh cache has no artifacts directory yet, and
            # two builds at once never see a half-unpacked tree.
            root.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
            try:
                packages.unpack(deb, work)
                work.rename(root)
            except OSError:  # another build unpacked it first
                pass
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except packages.PackageError as err:
        raise InitramfsError(f"busybox-static for {arch}: {err}") from None
    return binary


def busybox_applets() -> list[str]:
    # The host's busybox names the applets: Debian builds busybox-static from one
    # configuration for every architecture, and a foreign binary cannot run here.
    done = subprocess.run([str(BUSYBOX), "--list-full"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InitramfsError("busybox-static is not installed (run make setup)")
    return done.stdout.split()


def archive(spec: InitramfsSpec) -> bytes:
    """The uncompressed cpio archive for a spec (for its kernel's architecture)."""
    arch = spec.kernel.arch
    box = busybox(arch)
    cpio = Cpio()
    for d in ("proc", "sys", "dev", "tmp", "run", "root", "etc/init.d", "var/log"):
        cpio.directory(d)
    cpio.device("dev/console", 5, 1)
    cpio.device("dev/null", 1, 3, 0o666)
    cpio.file("bin/busybox", box.read_bytes(), 0o755)
    for applet in busybox_applets():
        cpio.symlink(applet, "/bin/busybox")
    wanted, _ = split_modules(spec.modules)
    wanted_after, _ = split_modules(spec.modules_after)
    order = packages.load_order(spec.kernel, wanted) if wanted else []
    loaded = {name for name, _ in order}
    after = [m for m in (packages.load_order(spec.kernel, wanted_after) if wanted_after else [])
             if m[0] not in loaded]
    for _name, path in order + after:
        cpio.file(f"lib/modules/{spec.kernel.release}/{path}", (spec.kernel.modules / path).read_bytes())
    for name, text in init_files(spec, order, after).items():
        cpio.file(name, text.encode(), 0o755)
    if spec.init == "rc":
        cpio.symlink("init", "/bin/busybox")  # the kernel runs /init: busybox init reads inittab
    elif spec.init == "direct":
        cpio.file("init", bootlab_init(arch).read_bytes(), 0o755)
    for inside, host in sorted(spec.files.items()):
        source = Path(host)
        if not source.exists():
            raise InitramfsError(f"file for the image not found: {host} (for {inside})")
        if source.is_dir():
            for sub in sorted(source.rglob("*")):
                if sub.is_file():
                    rel = sub.relative_to(source).as_posix()
                    cpio.file(f"{inside.rstrip('/')}/{rel}", sub.read_bytes(), sub.stat().st_mode & 0o777)
        else:
            cpio.file(inside, source.read_bytes(), source.stat().st_mode & 0o777)
            for library in shared_libraries(source):
                # The initramfs has no libc: a dynamically linked program brings its own.
                cpio.file(str(library), library.resolve().read_bytes(), 0o755)
    return cpio.pack()


def build(spec: InitramfsSpec, out_dir: Path) -> tuple[Path, int]:
    """Build (or reuse) the compressed initramfs; returns (path, uncompressed size)."""
    raw = archive(spec)
    digest = hashlib.sha256(raw + spec.compression.encode()).hexdigest()[:16]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"initramfs-{digest}.cpio.{spec.compression}"
    if not path.exists():
        packages.write_atomically(path, compress(raw, spec.compression))
    return path, len(raw)


