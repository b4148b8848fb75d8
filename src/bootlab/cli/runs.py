"""`bootlab runs`: list the runs in the store."""

from __future__ import annotations

import argparse
import json
from datetime import datetime

from ..render.fmt import span
from .boot import add_db_option, open_store


def register(sub) -> None:
    p = sub.add_parser("runs", help="list recorded runs")
    p.add_argument("--campaign", help="only this campaign's runs")
    p.add_argument("--label", help="only runs with this label")
    p.add_argument("--status", choices=("ok", "failed", "timeout", "interrupted"), help="only runs with this status")
    p.add_argument("--limit", type=int, metavar="N", help="only the last N runs")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    runs = store.runs(campaign=args.campaign, label=args.label, status=args.status, limit=args.limit)
    if args.format == "json":
        print(json.dumps([{"id": r.id, "uuid": r.uuid, "created": r.created, "label": r.label, "campaign": r.campaign,
                           "variant": r.variant, "status": r.status, "reason": r.reason, "ready_ns": r.ready_ns, "ready_line_ns": r.ready_line_ns,
                           "metrics": r.metrics} for r in runs], indent=1))
        return 0
    if not runs:
        print(f"no runs in {args.db}")
        return 0
    # ready: when the device was ready (statistics use it); line: when its line reached the host.
    rows = [("id", "when", "status", "ready", "line on host", "kernel", "label/campaign", "variant")]
    for r in runs:
        when = datetime.fromtimestamp(r.created).strftime("%Y-%m-%d %H:%M:%S")
        ready = span(r.ready_ns) if r.ready_ns is not None else "-"
        line = span(r.ready_line_ns) if r.ready_line_ns is not None and r.ready_ns is not None else "-"
        tag = r.campaign or r.label or ""
        rows.append((str(r.id), when, r.status, ready, line, r.target.get("target", {}).get("kernel", "?"), tag,
                     r.variant or ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return 0
