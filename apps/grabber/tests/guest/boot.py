#!/usr/bin/env python3
"""Development aid: boot the Debian kernel in QEMU (TCG) with a throwaway
busybox initramfs that loads vivid and runs one command, so the grabber can
be tried on a real V4L2 device without the reference-device builder.

It is not the reference device: bootlab's own builder makes that one. This
script only has to be simple and rerunnable:

    make -C apps/grabber static
    python3 apps/grabber/tests/guest/boot.py --log /tmp/guest.log

boots, runs tests/guest/grabber-guest-test.sh inside the guest, streams the
console to stdout (and --log) and exits with QEMU's status. Module
dependencies are resolved from each module's .modinfo section, because the
unpacked Debian tree has no modules.dep; .ko.xz modules are decompressed on
the host because busybox insmod may not do it.
"""

import argparse
import lzma
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRABBER = HERE.parent.parent
PKGROOT = Path("/root/.cache/bootlab/pkgroot/6.1.0-56")
DEFAULT_KERNEL = PKGROOT / "boot/vmlinuz-6.1.0-56-amd64"
DEFAULT_MODULES = PKGROOT / "lib/modules/6.1.0-56-amd64"
# Four capture-only vivid instances: the multi-device case uses them all and
# the removal cases unbind the second, third and fourth.
DEFAULT_VIVID_OPTIONS = "n_devs=4 node_types=0x1,0x1,0x1,0x1"


def module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


def modinfo_depends(image: bytes) -> list[str]:
    """The depends= entry of an ELF64 module's .modinfo section."""
    if image[:4] != b"\x7fELF" or image[4] != 2:
        raise ValueError("not an ELF64 module")
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)

    def section(index):
        base = shoff + index * shentsize
        name, = struct.unpack_from("<I", image, base)
        offset, size = struct.unpack_from("<QQ", image, base + 0x18)
        return name, image[offset:offset + size]

    _, names = section(shstrndx)
    for index in range(shnum):
        name_offset, body = section(index)
        name = names[name_offset:names.index(b"\0", name_offset)]
        if name == b".modinfo":
            for entry in body.split(b"\0"):
                if entry.startswith(b"depends="):
                    value = entry[len(b"depends="):].decode()
                    return [d for d in value.split(",") if d]
            return []
    raise ValueError("no .modinfo section")


def load_order(modules_dir: Path, wanted: str) -> list[tuple[str, bytes]]:
    """wanted and its dependencies, each after everything it needs."""
    paths = {}
    for path in (modules_dir / "kernel").rglob("*.ko*"):
        name = path.name.split(".ko")[0].replace("_", "-")
        paths[name] = path
    order, seen = [], set()

    def visit(name):
        key = name.replace("_", "-")
        if key in seen:
            return
        seen.add(key)
        image = module_bytes(paths[key])
        for dependency in modinfo_depends(image):
            visit(dependency)
        order.append((key, image))

    visit(wanted)
    return order


def init_script(modules, vivid_options, command):
    lines = [
        "#!/bin/busybox sh",
        "/bin/busybox --install -s /bin",
        "mount -t proc proc /proc",
        "mount -t sysfs sysfs /sys",
        "mount -t devtmpfs devtmpfs /dev",
        "mount -t tmpfs tmpfs /tmp",
    ]
    for name, _ in modules:
        options = f" {vivid_options}" if name == "vivid" else ""
        lines.append(f"insmod /lib/modules/{name}.ko{options} || echo 'guest: insmod {name} failed'")
    lines += [
        "echo 'guest: modules loaded'",
        command,
        "echo \"guest: command exit status $?\"",
        "poweroff -f",
    ]
    return "\n".join(lines) + "\n"


def build_initramfs(staging: Path, modules, files, vivid_options, command) -> Path:
    for directory in ("bin", "dev", "proc", "sys", "tmp", "lib/modules"):
        (staging / directory).mkdir(parents=True, exist_ok=True)
    shutil.copy2("/bin/busybox", staging / "bin/busybox")
    for name, image in modules:
        (staging / f"lib/modules/{name}.ko").write_bytes(image)
    for source, destination in files:
        target = staging / destination.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    init = staging / "init"
    init.write_text(init_script(modules, vivid_options, command))
    init.chmod(0o755)
    archive = staging.parent / "initramfs.cpio"
    listing = subprocess.run(["find", "."], cwd=staging, check=True, capture_output=True).stdout
    with archive.open("wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=staging, input=listing,
                       stdout=out, check=True)
    return archive


def parse_file(text):
    source, _, destination = text.partition(":")
    if not destination:
        raise argparse.ArgumentTypeError("--file needs SOURCE:DESTINATION")
    return Path(source), destination


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", type=Path, default=DEFAULT_KERNEL)
    parser.add_argument("--modules", type=Path, default=DEFAULT_MODULES,
                        help="lib/modules/VERSION directory holding kernel/")
    parser.add_argument("--vivid-options", default=DEFAULT_VIVID_OPTIONS)
    parser.add_argument("--memory", default="512", help="guest RAM in MiB (default 512)")
    parser.add_argument("--append", default="", help="extra kernel command line")
    parser.add_argument("--file", type=parse_file, action="append", default=[],
                        metavar="SOURCE:DESTINATION", help="copy a file into the initramfs")
    parser.add_argument("--run", default="sh /grabber-guest-test.sh",
                        help="shell command the init runs after loading vivid")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before QEMU is killed")
    parser.add_argument("--log", type=Path, help="also write the console here")
    args = parser.parse_args(argv)

    build = GRABBER / "build/static"
    files = [
        (build / "grabber", "/bin/grabber"),
        (build / "framestat", "/bin/framestat"),
        (build / "v4l2-button", "/bin/v4l2-button"),
        (HERE / "grabber-guest-test.sh", "/grabber-guest-test.sh"),
    ] + args.file
    missing = [str(source) for source, _ in files if not source.exists()]
    if missing:
        parser.error(f"missing {', '.join(missing)} (run make -C apps/grabber static)")

    with tempfile.TemporaryDirectory(prefix="grabber-guest-") as temp:
        modules = load_order(args.modules, "vivid")
        initramfs = build_initramfs(Path(temp) / "root", modules, files, args.vivid_options,
                                    args.run)
        command = [
            "qemu-system-x86_64", "-accel", "tcg", "-m", args.memory, "-nographic",
            "-no-reboot", "-kernel", str(args.kernel), "-initrd", str(initramfs),
            "-append", f"console=ttyS0 panic=-1 quiet {args.append}".strip(),
        ]
        print("boot:", shlex.join(command), file=sys.stderr, flush=True)
        log = args.log.open("wb") if args.log else None
        qemu = subprocess.Popen(command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        # The console is read until QEMU exits; the timer ends a hung guest.
        watchdog = threading.Timer(args.timeout, qemu.kill)
        watchdog.start()
        try:
            for chunk in iter(lambda: os.read(qemu.stdout.fileno(), 4096), b""):
                sys.stdout.buffer.write(chunk)
                sys.stdout.buffer.flush()
                if log:
                    log.write(chunk)
            status = qemu.wait()
        finally:
            watchdog.cancel()
            if log:
                log.close()
        if status < 0:
            print(f"boot: QEMU killed after {args.timeout} s", file=sys.stderr)
            return 124
        return status


if __name__ == "__main__":
    sys.exit(main())
