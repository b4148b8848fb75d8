"""`bootlab diff BEFORE AFTER`: two boots side by side, from their logs or the run store."""

from __future__ import annotations

import argparse

from ..analysis import analyze
from ..analysis.diff import diff
from ..render.diff import render
from ..timeline import no_cycle_collection
from . import UsageError
from .analyze import add_analysis_options, options_from
from .boot import add_db_option
from .inputs import add_input_options, files_or_run, read_logs, read_stored, report_errors
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


def run(args: argparse.Namespace) -> int:
    sides = [files_or_run(args, name) for name in (args.before, args.after)]
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
