"""`bootlab demo` (= `make demo`): build the reference device, boot it three times, show
where the time goes, and write an HTML report."""

from __future__ import annotations

import argparse
import os
from html import escape

from ..lab.stats import summarize
from ..render.fmt import seconds, span
from ..render.html import Section, analysis_sections, page, table
from ..targets.reference import TargetError, build
from . import UsageError
from .boot import add_db_option, boot_runs, open_store
from .output import write_output
from .phase_table import phase_rows, phase_table
from .target import add_target_options, target_from


def register(sub) -> None:
    p = sub.add_parser("demo", help="boot the reference device 3 times and report where the time goes")
    p.add_argument("--runs", type=int, default=3, metavar="N")
    p.add_argument("-o", "--output", default="bootlab-report.html", metavar="FILE", help="the HTML report")
    add_target_options(p)
    add_db_option(p)
    p.set_defaults(func=run)


def demo_target(args: argparse.Namespace):
    t = target_from(args)
    # initcall_debug goes to the kernel log only (KERN_DEBUG is below the console's level), and
    # the log is printed after the ready marker: the initcalls are known without slowing the boot.
    if "initcall_debug" not in t.cmdline():
        t.target.append = " ".join(x for x in (t.target.append, "initcall_debug") if x)
    t.initramfs.dmesg = True
    return t


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    target = demo_target(args)
    print(f"building the reference device ({target.target.kernel} kernel, {target.initramfs.init} init, "
          f"console drained at {target.target.console_baud or 'unlimited'} baud) ...", flush=True)
    try:
        built = build(target)
    except TargetError as err:
        raise UsageError(str(err)) from None
    store = open_store(args)
    runs = boot_runs(built, store, args.runs, label="demo", title="booting")
    ok = [r for r in runs if r.result.status == "ok" and r.analysis is not None]
    for r in runs:
        if r not in ok:
            print(f"run {r.run_id}: {r.result.status}: {r.result.reason} (capture {r.result.capture})")
    if not ok:
        print("no boot reached the ready marker")
        return 1
    print()
    print(f"{len(ok)} boots of the reference device (Linux {built.kernel.release}, QEMU TCG), power-on to ready:")
    print(phase_table([r.analysis for r in ok]))
    totals = sorted(ok, key=lambda r: r.analysis.phases.total)
    median_run = totals[len(totals) // 2]
    a = median_run.analysis
    if a.initcalls:
        print()
        print(f"Slowest initcalls (run {median_run.run_id}, the median boot):")
        for b in a.initcalls[:10]:
            print(f"  {span(b.duration):>8}  {b.name} {b.detail}".rstrip())
    sections = [Section("Runs", _runs_table(ok, runs)), *analysis_sections(a)]
    sections[1].title = f"Phases of run {median_run.run_id} (the median boot)"
    title = f"bootlab demo: the reference device boots in {span(int(summarize([r.analysis.phases.total for r in ok]).median))}"
    html = page(title, sections, subtitle=f"Linux {built.kernel.release} in QEMU TCG; "
                                          f"{len(ok)} of {len(runs)} boots reached the ready marker")
    write_output(html, args.output)
    print()
    print(f"report: {os.path.abspath(args.output)}")
    print(f"runs:   bootlab runs --label demo   (store {os.path.abspath(args.db)})")
    return 0 if len(ok) == len(runs) else 1


def _runs_table(ok, runs) -> str:
    rows = [[name, span(int(summarize(vals).median)), span(min(vals)), span(max(vals))]
            for name, vals in phase_rows([r.analysis for r in ok])]
    per_run = [[str(r.run_id), r.result.status, f"{seconds(r.analysis.phases.total)} s" if r in ok else "-",
                r.result.capture] for r in runs]
    return (table(["phase", "median", "min", "max"], rows, numeric={1, 2, 3}) +
            table(["run", "status", "power-on to ready", "capture"], per_run, numeric={2}) +
            f"<p class='where'>{escape('Each boot: QEMU launched (power-on) until BOOTLAB READY on the console.')}</p>")

