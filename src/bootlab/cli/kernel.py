"""`bootlab kernel build TARGET.toml`: build the kernel a target names (target.kernel =
"built", or arm64.kernel on the ARM64 board, and its [kconfig] table) from Debian's source,
or find it in the cache."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from dataclasses import asdict
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..targets import kernel_build, kinds
from ..targets.description import TargetError
from . import UsageError


def register(sub) -> None:
    p = sub.add_parser("kernel", help="build kernels from Debian's source, configured through Kconfig")
    verbs = p.add_subparsers(dest="action", metavar="ACTION")
    verbs.required = True
    b = verbs.add_parser("build", help="build (or find in the cache) the kernel a target file names")
    b.add_argument("target", metavar="TARGET.toml",
                   help='a reference device or ARM64 board file with kernel = "built" and a [kconfig] table')
    b.add_argument("--format", "-f", choices=("text", "json"), default="text")
    b.add_argument("-v", "--verbose", action="store_true", help="list every option that differs from Debian's")
    b.add_argument("--print-headers-dir", action="store_true",
                   help="only print the headers tree out-of-tree modules build against (make -C DIR M=...; a "
                        "target's [initramfs] kbuild does it itself), building the kernel first if needed")
    b.set_defaults(func=build)


@contextmanager
def build_progress(title: str) -> Iterator[Callable[[int, int | None, str], None]]:
    """A progress bar on stderr for a Kbuild build; yields the callback the build calls."""
    with Progress(TextColumn(title), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("build", total=None, last="")

        def progress(steps: int, expected: int | None, line: str) -> None:
            # The estimate is the last build of the same kind: never let the bar overflow.
            total = max(expected, steps + 1) if expected else None
            bar.update(task, completed=steps, total=total, last=line[:60])

        yield progress


def build(args: argparse.Namespace) -> int:
    try:
        target = kinds.load(args.target)
    except TargetError as err:
        raise UsageError(str(err)) from None
    if not hasattr(target, "kernel_config"):  # a board on the desk: its kernel is its own
        raise UsageError(f"{args.target}: bootlab builds the kernels of the reference device and the ARM64 board "
                         "only: this target's kernel is its own")
    if target.target.kernel != "built":
        raise UsageError(f"{args.target}: the kernel is {target.target.kernel!r}, a packaged kernel: "
                         'nothing to build (kernel = "built" and a [kconfig] table name one to build)')
    failure = ""
    with build_progress("building the kernel") as progress:
        try:
            outcome = kernel_build.build(target.kernel_config(), progress)
        except kernel_build.KernelBuildError as err:
            failure = str(err)
    if failure:  # printed as is, not wrapped: it names files and options to search for
        print(f"bootlab kernel build: {args.target}: {failure}", file=sys.stderr)
        return 1
    k = outcome.kernel
    for warning in outcome.warnings:
        print(f"bootlab kernel build: warning: {warning}", file=sys.stderr)
    if args.print_headers_dir:
        if not k.headers.is_dir():
            raise UsageError(f"{args.target}: the kernel has no loadable modules (CONFIG_MODULES): no headers to build "
                             "modules against")
        print(k.headers)
        return 0
    try:
        flavour, diff = kernel_build.against_debian(k.config, target.kconfig.base, k.arch)
    except kernel_build.KernelBuildError as err:
        raise UsageError(str(err)) from None
    if args.format == "json":
        print(json.dumps({"release": k.release, "config_digest": k.digest, "image": str(k.image),
                          "config": str(k.config), "image_size": k.image.stat().st_size, "built": outcome.built,
                          "headers": str(k.headers) if k.headers.is_dir() else None,
                          "seconds": round(outcome.seconds, 1), "warnings": outcome.warnings,
                          "against_debian": {"flavour": flavour, **asdict(diff)}}, indent=1))
        return 0
    how = f"built in {outcome.seconds:.0f} s" if outcome.built else "already built (the cache has this configuration)"
    print(f"kernel {k.release}: {how}")
    print(f"image  {k.image} ({k.image.stat().st_size} bytes)")
    print(f"config {k.config}")
    print(f"against Debian's {flavour} configuration: {diff.summary()}"
          + ("" if args.verbose else " (-v lists them)"))
    if args.verbose:
        for line in diff.lines():
            print(f"  {line}")
    return 0
