"""`bootlab show RUN`: analyze a stored run again, with any renderer."""

from __future__ import annotations

import argparse
import os
import tempfile

from ..analysis import analyze
from ..lab.store import StoreError
from ..render import render
from ..sources import NotALog, bootlab_capture, read
from . import UsageError
from .analyze import add_analysis_options, options_from
from .boot import add_db_option, open_store
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
    store = open_store(args)
    try:
        r = store.get(args.run)
    except StoreError as err:
        raise UsageError(str(err)) from None
    raw = store.capture(r.id)
    if raw is None:
        raise UsageError(f"run {r.id} has no capture")
    if args.capture:
        write_output(raw, args.output)
        return 0
    if args.console:
        write_output(bootlab_capture.console_bytes(raw), args.output)
        return 0
    if args.ready is None:
        args.ready = r.target.get("boot", {}).get("ready")
    patterns, options = options_from(args)
    if options.baud is None:
        options.baud = r.target.get("target", {}).get("console_baud") or None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"run-{r.id}.capture")
        with open(path, "wb") as fh:
            fh.write(raw)
        try:
            boot = read([path], patterns)
        except NotALog as err:
            raise UsageError(f"run {r.id}: {err}") from None
    write_output(render(analyze(boot, options), args.format), args.output)
    return 0
