"""`bootlab boot`: boot a target of any kind N times (targets/strategy.py), record every run."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..lab.boots import boot_and_store
from ..lab.store import DEFAULT_DB, Store, StoreError
from ..targets.reference import TargetError
from . import READS_STORE, UsageError
from .phase_table import phase_table
from .target import add_target_options, bootable_from


def add_db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=DEFAULT_DB, metavar="PATH", help=f"run store (default ./{DEFAULT_DB})")


def open_store(args: argparse.Namespace) -> Store:
    try:
        return Store(args.db, create=args.verb not in READS_STORE)
    except StoreError as err:
        raise UsageError(str(err)) from None


class _Echo:
    """Shows the console live (-v)."""

    def chunk(self, t: int, data: bytes) -> None:
        sys.stderr.buffer.write(data)
        sys.stderr.buffer.flush()

    def event(self, t: int, text: str) -> None:
        pass


def register(sub) -> None:
    p = sub.add_parser("boot", help="boot a target (the reference device or a board) and record each run",
                       description="Power on (launching QEMU, a power command, labgrid's power driver), talk to the "
                                   "bootloader if the target has one, capture the console until the ready line, and "
                                   "store each run. A boot that hangs is killed and recorded as failed, naming the "
                                   "step that failed.")
    p.add_argument("--runs", type=int, default=1, metavar="N", help="number of boots (default 1)")
    p.add_argument("--label", help="label the runs (for compare, runs --label)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the console while booting")
    add_target_options(p)
    add_db_option(p)
    p.set_defaults(func=run)


def boot_runs(machine, store: Store, n: int, label: str | None, verbose: bool = False, title: str = "booting"):
    """Boot n times with a progress bar; returns the BootRuns."""
    console = Console(stderr=True)
    done = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[last]}"),
                  TimeRemainingColumn(), console=console, disable=verbose or not console.is_terminal) as progress:
        task = progress.add_task(title, total=n, last="")
        for i in range(n):
            run = boot_and_store(machine, store, label=label, sequence=i, echo=_Echo() if verbose else None)
            done.append(run)
            r = run.result
            last = run.summary()
            progress.update(task, advance=1, last=last)
            if not console.is_terminal or verbose:
                print(f"{title} {i + 1}/{n}: {last}", file=sys.stderr)
            if r.reason == "interrupted":
                raise KeyboardInterrupt  # stored as interrupted; no more boots
    return done


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    machine = bootable_from(args)
    store = open_store(args)
    try:
        runs = boot_runs(machine, store, args.runs, args.label, args.verbose)
    except TargetError as err:
        raise UsageError(str(err)) from None
    for r in runs:
        print(f"{r.summary()}  [{r.result.capture}]")
    ok = [r for r in runs if r.result.status == "ok" and r.analysis is not None]
    if ok:
        print()
        print(phase_table([r.analysis for r in ok]))
    return 0 if len(ok) == len(runs) else 1
