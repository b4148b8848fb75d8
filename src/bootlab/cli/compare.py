"""`bootlab compare A B`: two runs or two sets of runs, phase by phase, and a CI gate.

    bootlab compare 12 13                                 # two runs
    bootlab compare release-1.4 release-1.5               # two labels (bootlab boot --label)
    bootlab compare seed-quiet:baseline seed-quiet:quiet  # two variants of a campaign
    bootlab compare main pr-123 --fail-if-slower 3        # exit 1 if B is significantly slower by > 3%
"""

from __future__ import annotations

import argparse
import sys

from ..lab.compare import RefError, compare_sets, resolve
from ..lab.reports import comparison_data, comparison_html, comparison_text, to_json
from . import UsageError
from .boot import add_db_option, open_store
from .output import write_output


def register(sub) -> None:
    p = sub.add_parser("compare", help="compare two runs or sets of runs (id, label, campaign[:variant])",
                       description="Per-phase medians with confidence intervals, the difference of medians with "
                                   "a bootstrap interval, and a Mann-Whitney test. With --fail-if-slower the exit "
                                   "status gates a CI pipeline on boot time.")
    p.add_argument("a", metavar="A", help="the reference: run id, uuid, label, campaign or campaign:variant")
    p.add_argument("b", metavar="B", help="the candidate, named the same ways")
    p.add_argument("--metric", default="total", help="the metric that decides (default total; e.g. "
                                                      "'phase:kernel init', 'at:app.start')")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--fail-if-slower", type=float, metavar="PCT",
                   help="exit 1 when B's median is significantly slower than A's by more than PCT percent")
    p.add_argument("-f", "--format", choices=("text", "json", "html"), default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write the comparison to FILE")
    add_db_option(p)
    p.set_defaults(func=run)


def gate(cmp, pct: float) -> tuple[bool, str]:
    """(failed, why): B fails when it does not boot, or is significantly slower by more
    than pct %.  Sample sizes that can never be significant are refused (UsageError)."""
    na, nb = len(cmp.a.values(cmp.primary)), len(cmp.b.values(cmp.primary))
    if nb == 0:
        return True, f"B never reached the ready marker ({len(cmp.b.failed)} failed runs)"
    if not cmp.testable:
        raise UsageError(f"cannot gate: {na} + {nb} successful runs can never be significant at "
                         f"{1 - cmp.confidence:g} (use 5 or more runs per side)")
    row = cmp.row()
    c = row.comparison
    slower = row.significant(cmp.confidence) and c.difference > 0
    if slower and c.percent > pct:
        return True, f"B is slower by {c.percent:.1f}% (> {pct:g}%), significantly (p={row.p:.3g})"
    if slower:
        return False, f"B is significantly slower, by {c.percent:.1f}%, within the allowed {pct:g}%"
    return False, f"B is not significantly slower than A ({c.percent:+.1f}%, p={row.p:.3g})"


def run(args: argparse.Namespace) -> int:
    if not 0.5 <= args.confidence < 1:
        raise UsageError("--confidence must be at least 0.5 and below 1")
    if args.fail_if_slower is not None and args.fail_if_slower < 0:
        raise UsageError("--fail-if-slower wants a percentage of at least 0")
    store = open_store(args)
    try:
        a, b = resolve(store, args.a), resolve(store, args.b)
    except RefError as err:
        raise UsageError(str(err)) from None
    cmp = compare_sets(a, b, args.metric, args.confidence)
    if not a.values(args.metric):
        known = sorted({m for r in a.ok for m in r.metrics})
        raise UsageError(f"A has no {args.metric!r}" +
                         (f" (its metrics: {', '.join(known)})" if known else " (no run of A reached the ready marker)"))
    verdict = gate(cmp, args.fail_if_slower) if args.fail_if_slower is not None else None
    if args.format == "json":
        data = comparison_data(cmp)
        if verdict is not None:
            data["gate"] = {"fail_if_slower": args.fail_if_slower, "failed": verdict[0], "why": verdict[1]}
        write_output(to_json(data), args.output)
    elif args.format == "html":
        write_output(comparison_html(cmp), args.output)
    else:
        write_output(comparison_text(cmp), args.output)
    if verdict is None:
        return 0
    print(f"gate: {'FAIL' if verdict[0] else 'pass'}: {verdict[1]}", file=sys.stderr)
    return 1 if verdict[0] else 0
