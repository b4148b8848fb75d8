"""`bootlab advise FILE... | --run RUN`: what to change to boot faster, largest estimated
saving first, each change with the log lines it rests on and how to apply it.

    bootlab advise console.capture dmesg.txt blame.txt chain.txt
    bootlab advise --run 12 --db bootlab.db
    bootlab advise -f json boot.log | jq '.findings[0]'

FILE... are read like `bootlab analyze` reads them.  --run reads a run of the reference
device from the run store: its capture, and its target description, which lets rules
propose a patch the optimizer can try.

JSON (`-f json`), schema "bootlab-advice" version 1; times are integer nanoseconds:

    {"schema": "bootlab-advice", "version": 1, "generator": "bootlab 0.1.0",
     "run": 12 | null,                       the stored run advised, if any
     "sources": [{"file": str, "format": str}],
     "kernel_version": str | null,
     "total_ns": int | null,                 power-on (or the first phase) to ready
     "end": {"mark": "ready" | "end", "evidence": str} | null,
     "findings": [                           largest estimated saving first
       {"rule": "cmdline.quiet",             id: family.rule
        "family": "kernel command line",
        "title": str,                        the change, in one line
        "saving_ns": int | null,             null: these logs cannot estimate it
        "share": float | null,               saving_ns / total_ns
        "confidence": "high" | "medium" | "low",
        "non_intrusive": bool,               no kernel or bootloader source change
        "how": str,
        "evidence": [str],                   "file:line: text", or a fact derived from lines
        "notes": [str],
        "patch": object | null}],            partial target description for the reference
                                             device ("append" is added to the command line)
     "diagnostics": [{"file": str, "line": int, "severity": str, "message": str}]}

Savings overlap (two changes can remove the same time): each one is proven alone, with
repeated A/B boots.  Exit status: 0, or 2 when an input cannot be read.
"""

from __future__ import annotations

import argparse
import json
import textwrap

from .. import __version__
from ..advice import Finding, advise
from ..analysis import Analysis, analyze
from ..render.fmt import aligned, percent, seconds, span
from . import UsageError
from .analyze import add_analysis_options, options_from
from .boot import add_db_option
from .inputs import add_input_options, files_or_run, read_logs, read_stored, report_errors, stored_run
from .output import write_output

SCHEMA = "bootlab-advice"
VERSION = 1
WIDTH = 100


def register(sub) -> None:
    # "resolve": the shared analysis options offer every renderer; advice has two.
    p = sub.add_parser("advise", help="propose non-intrusive changes that shorten the boot",
                       conflict_handler="resolve",
                       description="Read the logs of one boot (or a recorded run) and propose the changes that "
                                   "would shorten it, largest estimated saving first, each with its evidence "
                                   "lines and how to apply it.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="log files of one boot (or a bootchart directory; - reads standard input), or a run in the "
                        "store (id or uuid) as `bootlab diff` takes it")
    p.add_argument("--run", metavar="RUN", help="advise a recorded run of the reference device (id or uuid)")
    add_input_options(p)
    add_analysis_options(p)
    p.add_argument("--format", "-f", choices=("text", "json"), default="text", help="output format (default text)")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if bool(args.files) == bool(args.run):
        raise UsageError("give either log FILEs or a RUN")
    if args.run:
        stored = stored_run(args, args.run)
    else:
        side = files_or_run(args, ",".join(args.files)) if len(args.files) == 1 else args.files
        stored = None if isinstance(side, list) else side
    patterns, options = options_from(args)
    boot = read_stored(*stored, patterns) if stored else read_logs(args, patterns)
    run_id, target = (stored[1].id, stored[1].target) if stored else (None, None)
    analysis = analyze(boot, options)
    findings = advise(boot, analysis, target)
    if args.format == "json":
        out = json.dumps(document(analysis, findings, run_id), indent=1, ensure_ascii=False) + "\n"
    else:
        out = render_text(analysis, findings)
    write_output(out, args.output)
    return report_errors("advise", boot)


def _share(f: Finding, whole: int | None) -> float | None:
    return None if f.saving_ns is None or not whole else f.saving_ns / whole


def document(a: Analysis, findings: list[Finding], run_id: int | None = None) -> dict:
    boot, p = a.boot, a.phases
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "generator": f"bootlab {__version__}",
        "run": run_id,
        "sources": [{"file": s.file, "format": s.format} for s in boot.sources],
        "kernel_version": boot.meta.get("kernel_version"),
        "total_ns": p.total,
        "end": None if p.end is None else {"mark": str(p.end.mark), "evidence": p.end.evidence},
        "findings": [{"rule": f.rule, "family": f.family, "title": f.title, "saving_ns": f.saving_ns,
                      "share": _share(f, p.total), "confidence": f.confidence, "non_intrusive": f.non_intrusive,
                      "how": f.how, "evidence": list(f.evidence), "notes": list(f.notes), "patch": f.patch}
                     for f in findings],
        "diagnostics": [{"file": d.file, "line": d.line, "severity": d.severity, "message": d.message}
                        for d in boot.diagnostics],
    }


def _wrapped(label: str, text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=f"   {label}", subsequent_indent=" " * (3 + len(label)))


def render_text(a: Analysis, findings: list[Finding]) -> str:
    boot, p = a.boot, a.phases
    title = "Advice for the boot"
    if boot.meta.get("kernel_version"):
        title += f" of Linux {boot.meta['kernel_version']}"
    if p.total is not None and p.end is not None:
        start = "power-on" if "power-on" in p.boundaries else p.spans[0].phases[0].value
        title += f": {seconds(p.total)} s from {start} to {p.end.mark}"
    out = [title, "from " + ", ".join(f"{s.file} ({s.format})" for s in boot.sources), ""]
    if not findings:
        out.append("No change to propose: no rule found evidence in these logs.")
        return "\n".join(out) + "\n"
    rows = [("#", "saving", "share", "change", "family")]
    for n, f in enumerate(findings, 1):
        rows.append((str(n), "?" if f.saving_ns is None else span(f.saving_ns),
                     percent(f.saving_ns or 0, p.total) if f.saving_ns else "", f.title, f.family))
    out += aligned(rows, right={0, 1, 2})
    out.append("")
    out.append("Savings overlap (two changes can remove the same time): prove each with repeated A/B boots.")
    for n, f in enumerate(findings, 1):
        saving = "saving not estimated" if f.saving_ns is None else f"saves ~{span(f.saving_ns)}"
        if f.saving_ns is not None and p.total:
            saving += f" ({percent(f.saving_ns, p.total)} of the boot)"
        kind = "non-intrusive" if f.non_intrusive else "intrusive (changes source code)"
        out += ["", f"{n}. {f.title}", f"   {saving}, confidence {f.confidence}, {kind}  [{f.rule}]", "   evidence:"]
        out += [f"     {e}" for e in f.evidence]
        out += _wrapped("how: ", f.how)
        if f.patch is not None:
            out.append(f"   reference device patch: {json.dumps(f.patch)}")
        for note in f.notes:
            out += _wrapped("note: ", note)
    if boot.diagnostics:
        out += ["", f"Warnings ({len(boot.diagnostics)}):"] + [f"  {d}" for d in boot.diagnostics[:10]]
    return "\n".join(out) + "\n"
