"""`bootlab diff BEFORE AFTER`: two boots side by side, from their logs."""

from __future__ import annotations

import argparse

from ..analysis import analyze
from ..analysis.diff import diff
from ..render.diff import render
from ..timeline import no_cycle_collection
from . import UsageError
from .analyze import options_from
from .inputs import add_input_options, read_logs, report_errors
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("diff", help="two boots side by side: what a change did",
                       description="Read the logs of two boots (before and after a change) and show the phases, "
                                   "the initcalls, driver probes and units that changed most or appear in one "
                                   "boot only, and the console output. Several files of one boot: join them "
                                   "with commas.")
    p.add_argument("before", metavar="BEFORE", help="log file(s) of the first boot (a,b for several)")
    p.add_argument("after", metavar="AFTER", help="log file(s) of the second boot")
    add_input_options(p)
    p.add_argument("--format", "-f", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("--top", type=int, default=10, metavar="N", help="rows in each list (default 10)")
    p.add_argument("--ready", metavar="REGEX", help="the line that means the application is ready (ends the boot)")
    p.add_argument("--app-start", metavar="REGEX", help="the line that means the application starts")
    p.set_defaults(func=run, gap=100.0, baud=None, events=False)


def run(args: argparse.Namespace) -> int:
    patterns, options = options_from(args)
    analyses, status = [], 0
    with no_cycle_collection():
        for files in (args.before, args.after):
            args.files = [f for f in files.split(",") if f]
            if not args.files:
                raise UsageError("name a log file for each boot")
            boot = read_logs(args, patterns)
            status = max(status, report_errors("diff", boot))
            analyses.append(analyze(boot, options))
        output = render(diff(*analyses, top=args.top), args.format)
    write_output(output, args.output)
    return status
