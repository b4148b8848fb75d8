"""`bootlab analyze FILE...`: one timeline from every log of one boot."""

from __future__ import annotations

import argparse

from ..analysis import Options, analyze
from ..render import FORMATS as OUTPUT_FORMATS
from ..render import render
from ..sources import Patterns
from ..timeline import no_cycle_collection
from . import UsageError
from .inputs import add_input_options, read_logs, report_errors
from .output import write_output


def add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every verb that analyzes a boot (analyze, show)."""
    parser.add_argument("--format", "-f", choices=OUTPUT_FORMATS, default="text", help="output format (default text)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="rows in each blame list (default 10)")
    parser.add_argument("--gap", type=float, default=100.0, metavar="MS",
                        help="report silent gaps longer than MS milliseconds (default 100)")
    parser.add_argument("--baud", type=int, metavar="N", help="console speed for the console cost (default: from the logs, else 115200)")
    parser.add_argument("--events", action="store_true", help="JSON: include every structured event")
    parser.add_argument("--ready", metavar="REGEX", help="the line that means the application is ready (ends the boot)")
    parser.add_argument("--app-start", metavar="REGEX", help="the line that means the application starts")


def register(sub) -> None:
    p = sub.add_parser("analyze", help="analyze the logs of one boot",
                       description="Read any mix of logs from one boot (console captures, dmesg, initcall_debug, "
                                   "U-Boot, systemd-analyze, bootchart), detect their formats, and show the boot "
                                   "from power-on to application ready.")
    p.add_argument("files", nargs="+", metavar="FILE", help="log files (or a bootchart directory; - reads standard input)")
    add_input_options(p)
    add_analysis_options(p)
    p.set_defaults(func=run)


def options_from(args: argparse.Namespace) -> tuple[Patterns, Options]:
    if args.top < 1:
        raise UsageError("--top must be at least 1")
    if args.gap <= 0:
        raise UsageError("--gap must be positive")
    if args.baud is not None and args.baud <= 0:
        raise UsageError(f"--baud {args.baud}: the console cost needs the console's speed, a positive number of "
                         "bits per second")
    try:
        patterns = Patterns.from_options(args.ready, args.app_start)
    except Exception as err:  # re.error
        raise UsageError(f"bad regular expression: {err}") from None
    return patterns, Options(top=args.top, gap_threshold=int(args.gap * 1_000_000), baud=args.baud, events=args.events)


def run(args: argparse.Namespace) -> int:
    patterns, options = options_from(args)
    with no_cycle_collection():
        boot = read_logs(args, patterns)
        output = render(analyze(boot, options), args.format)
    write_output(output, args.output)
    return report_errors("analyze", boot)
