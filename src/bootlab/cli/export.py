"""`bootlab export`: runs as JSON (metadata, metrics, analysis; captures on request)."""

from __future__ import annotations

import argparse
import base64
import json

from ..lab.store import StoreError
from . import UsageError
from .boot import add_db_option, open_store
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("export", help="write runs as JSON")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run ids or uuids (default: all, or the filters)")
    p.add_argument("--campaign", help="the runs of a campaign")
    p.add_argument("--label", help="the runs with a label")
    p.add_argument("--with-capture", action="store_true", help="include each raw capture (base64)")
    p.add_argument("-o", "--output", metavar="FILE")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    try:
        runs = [store.get(ref) for ref in args.runs] if args.runs else store.runs(args.campaign, args.label)
    except StoreError as err:
        raise UsageError(str(err)) from None
    out = []
    for r in runs:
        item = {"id": r.id, "uuid": r.uuid, "created": r.created, "label": r.label, "campaign": r.campaign,
                "variant": r.variant, "sequence": r.sequence, "status": r.status, "reason": r.reason,
                "target": r.target, "command": r.command, "host": r.host, "tool_version": r.tool_version,
                "wall_ns": r.wall_ns, "ready_ns": r.ready_ns, "ready_line_ns": r.ready_line_ns, "metrics": r.metrics, "analysis": store.analysis(r.id)}
        if args.with_capture:
            raw = store.capture(r.id)
            item["capture_base64"] = base64.b64encode(raw).decode() if raw else None
        out.append(item)
    write_output(json.dumps({"schema": "bootlab-runs", "version": 1, "runs": out}, indent=1) + "\n", args.output)
    return 0
