"""Where a verb's boot comes from: log files, or a run in the store (analyze, show, advise)."""

from __future__ import annotations

import argparse
import os
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
        boot = read(args.files, patterns, args.input_format, args.boot)
    except NotALog as err:
        raise UsageError(str(err)) from None
    for source in unread(boot):
        boot.warn(source.file, 0, f"nothing in its {source.lines} lines could be read as {source.format}"
                  + ("" if args.input_format is None else " (--input-format)"))
        boot.diagnostics[-1].severity = "error"
    return boot


def unread(boot: Boot) -> list:
    """The sources nothing was read from: not one event, not one timed line (a
    systemd-analyze blame read as a dmesg).  A directory's events name its files."""
    read_from = {ev.file for ev in boot.objects}
    read_from.update(f for table in boot.tables for f in table.vocab["file"])
    read_from.update(log.file for log in boot.logs if log.timed())
    read_from.update(os.path.dirname(f) for f in list(read_from) if f)
    return [s for s in boot.sources if not s.events and s.file not in read_from]


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


def files_or_run(args: argparse.Namespace, name: str):
    """A boot named on the command line: its log files (a,b for several), or, when no such
    file exists, a run in the store, resolved before the options (a run brings its ready
    line) as stored_run's (store, run)."""
    files = [f for f in name.split(",") if f]
    if not files:
        raise UsageError("name a log file (or a run) for each boot")
    if "," not in name and not os.path.exists(name) and name != "-":
        try:
            return stored_run(args, name)
        except UsageError as err:
            raise UsageError(f"{name}: no such file, and {err}") from None
    return files


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
