"""Where a verb's boot comes from: log files, or a run in the store (analyze, show, advise)."""

from __future__ import annotations

import argparse
import sys

from ..sources import FORMATS, NotALog, Patterns, read
from ..timeline import Boot
from . import UsageError


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """How log files are read (analyze, advise)."""
    parser.add_argument("--input-format", choices=FORMATS, help="read every FILE as this format (no detection)")
    parser.add_argument("--boot", type=int, metavar="N",
                        help="of a log that holds several boots (a kern.log, a capture over reboots, journalctl "
                             "without -b), read boot N (1 the first, -1 the last; default the last)")


def read_logs(args: argparse.Namespace, patterns: Patterns) -> Boot:
    """The boot in the FILEs named on the command line."""
    if args.boot == 0:
        raise UsageError("--boot counts from 1 (or from -1, the last)")
    try:
        return read(args.files, patterns, args.input_format, args.boot)
    except NotALog as err:
        raise UsageError(str(err)) from None


def stored_run(args: argparse.Namespace, ref: str):
    """(store, run): a run in the store; the run's ready line and console speed become the
    defaults of --ready and --baud."""
    from ..lab.store import StoreError
    from .boot import open_store

    store = open_store(args)
    try:
        run = store.get(ref)
    except StoreError as err:
        raise UsageError(str(err)) from None
    if args.ready is None:
        args.ready = run.target.get("boot", {}).get("ready")
    if args.baud is None:
        args.baud = run.target.get("target", {}).get("console_baud") or None
    return store, run


def read_stored(store, run, patterns: Patterns) -> Boot:
    from ..lab.boots import read_run

    try:
        return read_run(store, run, patterns)
    except NotALog as err:
        raise UsageError(str(err)) from None


def report_errors(verb: str, boot: Boot) -> int:
    """Unreadable inputs among readable ones: named on stderr, exit status 2."""
    errors = [d for d in boot.diagnostics if d.severity == "error"]
    for d in errors:
        print(f"bootlab {verb}: {d}", file=sys.stderr)
    return 2 if errors else 0
