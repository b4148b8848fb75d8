"""`bootlab diff BEFORE AFTER`: two boots side by side, from their logs or the run store."""

from __future__ import annotations

import argparse
import os

from ..analysis import analyze
from ..analysis.diff import diff
from ..render.diff import render
from ..timeline import no_cycle_collection
from . import UsageError
from .analyze import add_analysis_options, options_from
from .boot import add_db_option
from .inputs import add_input_options, read_logs, read_stored, report_errors, stored_run
from .output import write_output


def register(sub) -> None:
    # "resolve": the shared analysis options offer every renderer; a diff has two.
    p = sub.add_parser("diff", help="two boots side by side: what a change did", conflict_handler="resolve",
                       description="Read two boots (before and after a change), from their logs or as runs in "
                                   "the store, and show the phases, the initcalls, driver probes and units that "
                                   "changed most or appear in one boot only, and the console output. Several "
                                   "files of one boot: join them with commas.")
    p.add_argument("before", metavar="BEFORE", help="log file(s) of the first boot (a,b for several), or a run")
    p.add_argument("after", metavar="AFTER", help="log file(s) of the second boot, or a run")
    add_input_options(p)
    add_analysis_options(p)
    p.add_argument("--format", "-f", choices=("text", "json"), default="text", help="output format (default text)")
    add_db_option(p)
    p.set_defaults(func=run)


def _side(args: argparse.Namespace, name: str):
    """A boot named on the command line: its log files, or (when no such file exists and
    the store does) a run in the store, resolved before the options (a run brings its
    ready line)."""
    files = [f for f in name.split(",") if f]
    if not files:
        raise UsageError("name a log file (or a run) for each boot")
    if "," not in name and not os.path.exists(name) and name != "-" and os.path.exists(args.db):
        try:
            return stored_run(args, name)
        except UsageError as err:
            raise UsageError(f"{name}: no such file, and {err}") from None
    return files


def run(args: argparse.Namespace) -> int:
    sides = [_side(args, name) for name in (args.before, args.after)]
    patterns, options = options_from(args)
    analyses, status = [], 0
    with no_cycle_collection():
        for side in sides:
            if isinstance(side, list):
                args.files = side
                boot = read_logs(args, patterns)
            else:
                boot = read_stored(*side, patterns)
            status = max(status, report_errors("diff", boot))
            analyses.append(analyze(boot, options))
        output = render(diff(*analyses, top=args.top), args.format)
    write_output(output, args.output)
    return status
