"""`bootlab show RUN`: analyze a stored run again, with any renderer."""

from __future__ import annotations

import argparse

from ..analysis import analyze
from ..render import render
from ..sources import bootlab_capture
from ..timeline import no_cycle_collection
from . import UsageError
from .analyze import add_analysis_options, options_from
from .boot import add_db_option
from .inputs import read_stored, stored_run
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("show", help="analyze a recorded run (id or uuid)")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--capture", action="store_true", help="print the capture file (bootlab's format) instead")
    p.add_argument("--console", action="store_true", help="print the console's bytes as they arrived instead")
    add_analysis_options(p)
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store, r = stored_run(args, args.run)
    if args.capture or args.console:
        raw = store.capture(r.id)
        if raw is None:
            raise UsageError(f"run {r.id} has no capture")
        write_output(raw if args.capture else bootlab_capture.console_bytes(raw), args.output)
        return 0
    patterns, options = options_from(args)
    with no_cycle_collection():
        boot = read_stored(store, r, patterns)
        output = render(analyze(boot, options), args.format)
    write_output(output, args.output)
    return 0
