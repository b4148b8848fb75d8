"""`bootlab uboot build [--board qemu_arm64] [--set OPTION=VALUE ...] [--fragment FILE ...]`:
build U-Boot from Debian's source for the installed u-boot-qemu, configured through Kconfig
(what a board's `[arm64] firmware = "built"` and [arm64.uboot] table name), or find it in
the cache."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from ..targets import uboot_build
from ..targets.kconfig import BuildError
from . import UsageError
from .kernel import build_progress


def register(sub) -> None:
    p = sub.add_parser("uboot", help="build U-Boot from Debian's source, configured through Kconfig")
    verbs = p.add_subparsers(dest="action", metavar="ACTION")
    verbs.required = True
    b = verbs.add_parser("build", help="build (or find in the cache) U-Boot with a configuration")
    b.add_argument("--board", default="qemu_arm64", choices=sorted(uboot_build.BOARDS), help="the defconfig")
    b.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                   help="a Kconfig option (SILENT_CONSOLE=y, BOOTDELAY=0, USB=n), applied last; repeatable")
    b.add_argument("--fragment", action="append", default=[], type=Path, metavar="FILE",
                   help="a file of CONFIG_ lines, merged in order; repeatable")
    b.add_argument("--format", "-f", choices=("text", "json"), default="text")
    b.add_argument("-v", "--verbose", action="store_true", help="list every option that differs from Debian's")
    b.set_defaults(func=build)


def options(settings: list[str]) -> dict[str, str]:
    out = {}
    for item in settings:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--set {item}: not OPTION=VALUE (SILENT_CONSOLE=y)")
        out[name] = value
    return out


def build(args: argparse.Namespace) -> int:
    cfg = uboot_build.UBootConfig(args.board, list(args.fragment), options(args.set))
    try:
        cfg.requests()  # an unreadable fragment or a bad line: the input's fault, before any download
    except BuildError as err:
        raise UsageError(str(err)) from None
    failure = ""
    with build_progress("building U-Boot") as progress:
        try:
            outcome = uboot_build.build(cfg, progress)
            diff = uboot_build.against_debian(outcome.config, args.board)
        except BuildError as err:
            failure = str(err)
    if failure:  # printed as is, not wrapped: it names files and options to search for
        print(f"bootlab uboot build: {failure}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps({"board": args.board, "source": uboot_build.version(), "config_digest": outcome.digest,
                          "firmware": str(outcome.firmware), "config": str(outcome.config),
                          "firmware_size": outcome.firmware.stat().st_size, "built": outcome.built,
                          "seconds": round(outcome.seconds, 1), "against_debian": asdict(diff)}, indent=1))
        return 0
    how = f"built in {outcome.seconds:.0f} s" if outcome.built else "already built (the cache has this configuration)"
    print(f"U-Boot {uboot_build.version()} for {args.board}: {how}")
    print(f"firmware {outcome.firmware} ({outcome.firmware.stat().st_size} bytes)")
    print(f"config   {outcome.config}")
    print(f"against Debian's configuration: {diff.summary()}" + ("" if args.verbose else " (-v lists them)"))
    if args.verbose:
        for line in diff.lines():
            print(f"  {line}")
    return 0
