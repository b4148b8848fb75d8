"""`bootlab target`: fetch the kernel packages, build and show the reference device."""

from __future__ import annotations

import argparse
import shlex

from ..targets import emulator, kernel_image, kinds, packages
from ..targets.reference import Target, TargetError, build
from . import UsageError
from .output import write_output


def add_target_options(p: argparse.ArgumentParser) -> None:
    """Options that choose or adjust a target (shared by target build, boot, demo)."""
    g = p.add_argument_group("target")
    g.add_argument("--target", metavar="FILE", help="a target file (TOML); default: the stock reference device")
    g.add_argument("--kernel", choices=sorted(packages.FLAVOURS), help="Debian kernel flavour")
    g.add_argument("--image", choices=("bzimage", "vmlinux"), help="compressed as shipped, or uncompressed (PVH)")
    g.add_argument("--firmware", choices=("seabios", "qboot", "u-boot"))
    g.add_argument("--compression", help="initramfs compression: gzip, lz4, lzo, xz, zstd, lzma, bzip2, none")
    g.add_argument("--init", choices=("rc", "script", "direct"),
                   help="busybox rc scripts, one init script, or a C init that starts the app directly")
    g.add_argument("--module", action="append", metavar="NAME", help="load this kernel module before the app (repeat)")
    g.add_argument("--app", metavar="CMD", help="the application (shell command)")
    g.add_argument("--append", metavar="ARGS", help="more kernel command-line arguments")
    g.add_argument("--console-baud", type=int, metavar="N", help="drain the serial console at N baud (0: unthrottled)")
    g.add_argument("--memory", type=int, metavar="MIB")
    g.add_argument("--cpus", type=int, metavar="N", help="virtual CPUs")
    g.add_argument("--qemu", choices=emulator.QEMUS,
                   help="the installed QEMU (bookworm) or Debian's QEMU 10 (bookworm-backports: SMP under -icount)")


OPTIONS = (("kernel", "target", "kernel"), ("image", "target", "image"), ("firmware", "target", "firmware"),
           ("compression", "initramfs", "compression"), ("init", "initramfs", "init"), ("app", "initramfs", "app"),
           ("console_baud", "target", "console_baud"), ("memory", "target", "memory"), ("cpus", "target", "cpus"),
           ("qemu", "target", "qemu"))


def spec_from(args: argparse.Namespace):
    """The target file's description, of any kind (targets/kinds.py), or the stock
    reference device; the options adjust a reference device only."""
    try:
        spec = kinds.load(args.target) if args.target else Target()
    except TargetError as err:
        raise UsageError(str(err)) from None
    if isinstance(spec, Target):
        return _adjusted(spec, args)
    given = [f"--{a.replace('_', '-')}" for a in [o[0] for o in OPTIONS] + ["module", "append"]
             if getattr(args, a, None) is not None]
    if given:
        raise UsageError(f"{args.target} describes a {kinds.kind_of(spec.to_dict()).name}: {', '.join(given)} "
                         "adjust the reference device only")
    return spec


def target_from(args: argparse.Namespace) -> Target:
    """The reference device (for the verbs that build or show one)."""
    spec = spec_from(args)
    if not isinstance(spec, Target):
        raise UsageError(f"{args.target} describes a {kinds.kind_of(spec.to_dict()).name}, not the reference device: "
                         f"`bootlab {args.verb}` builds and shows reference devices (boot it with `bootlab boot`)")
    return spec


def _adjusted(t: Target, args: argparse.Namespace) -> Target:
    for attr, section, key in OPTIONS:
        value = getattr(args, attr, None)
        if value is not None:
            setattr(getattr(t, section), key, value)
    if getattr(args, "module", None):
        t.initramfs.modules = t.initramfs.modules + args.module
    if getattr(args, "append", None):
        t.target.append = " ".join(x for x in (t.target.append, args.append) if x)
    try:
        t.validate()
    except TargetError as err:
        raise UsageError(str(err)) from None
    return t


def built_from(args: argparse.Namespace):
    """The reference device, built."""
    try:
        return build(target_from(args))
    except TargetError as err:
        raise UsageError(str(err)) from None


def bootable_from(args: argparse.Namespace) -> kinds.Bootable:
    """The target of any kind, made bootable (the reference device built)."""
    spec = spec_from(args)
    try:
        return kinds.kind_of(spec.to_dict()).bootable(spec)
    except TargetError as err:
        raise UsageError(str(err)) from None


def register(sub) -> None:
    p = sub.add_parser("target", help="fetch, build and show the reference device")
    verbs = p.add_subparsers(dest="action", metavar="ACTION")
    verbs.required = True
    f = verbs.add_parser("fetch", help="download and unpack the Debian kernel packages into the cache")
    f.add_argument("--kernel", action="append", choices=sorted(packages.FLAVOURS),
                   help="flavour to fetch (default: all)")
    f.add_argument("--quiet", action="store_true")
    f.add_argument("--print-headers-package", action="store_true",
                   help="only print the name of the matching linux-headers package "
                   "(of --kernel, default generic)")
    f.add_argument("--arch", choices=packages.ARCHITECTURES, default="amd64",
                   help="the kernels' architecture (default amd64: the x86 reference device)")
    f.add_argument("--qemu", choices=emulator.QEMUS, action="append", default=[],
                   help="also fetch this QEMU for --arch's guests into the cache (bookworm-backports: "
                   "Debian's QEMU 10, for SMP guests under -icount; bookworm is the installed one)")
    f.add_argument("--print-headers-dir", action="store_true",
                   help="only print the headers tree to build modules against (of --kernel, default generic; "
                   "fetched into the cache for arm64)")
    f.set_defaults(func=fetch)
    b = verbs.add_parser("build", help="build the reference device (cached by content)")
    add_target_options(b)
    b.add_argument("-o", "--output", metavar="FILE", help="write the target description (TOML) to FILE")
    b.set_defaults(func=build_cmd)
    s = verbs.add_parser("show", help="print a target description (TOML) with the options applied")
    add_target_options(s)
    s.set_defaults(func=show)


def fetch(args: argparse.Namespace) -> int:
    try:
        if args.print_headers_package:
            for flavour in args.kernel or ["generic"]:
                print(packages.Kernel(packages.resolve_abi(), flavour, packages.cache_dir(), args.arch).headers_package)
            return 0
        if args.print_headers_dir:
            for flavour in args.kernel or ["generic"]:
                k = packages.kernel(flavour, quiet=True, arch=args.arch)
                print(packages.headers(k, quiet=True))
            return 0
        for flavour in args.kernel or list(packages.FLAVOURS):
            k = packages.kernel(flavour, quiet=args.quiet, arch=args.arch)
            if not args.quiet:
                print(f"{flavour}: {k.image}")
        for name in args.qemu:
            q = emulator.qemu(name, args.arch, quiet=args.quiet)
            if not args.quiet:
                print(f"qemu {name}: {q.argv[0]}")
    except packages.PackageError as err:
        raise UsageError(str(err)) from None
    return 0


def build_cmd(args: argparse.Namespace) -> int:
    built = built_from(args)
    info = kernel_image.info(built.kernel.image)
    print(f"kernel     {built.kernel.release} ({info.compression}-compressed bzImage, {info.size} bytes)")
    print(f"boot image {built.image} ({built.image.stat().st_size} bytes)")
    print(f"initramfs  {built.initrd} ({built.initrd.stat().st_size} bytes, {built.initrd_size} uncompressed)")
    print(f"command    {shlex.join(built.qemu_argv())}")
    if args.output:
        write_output(built.target.to_toml(), args.output)
        print(f"target     {args.output}")
    return 0


def show(args: argparse.Namespace) -> int:
    t = target_from(args)
    print(t.to_toml())
    return 0
