"""`bootlab demo` (= `make demo`): build the reference device, boot it three times, show
where the time goes, and write an HTML report."""

from __future__ import annotations

import argparse
import copy
import os
from html import escape
from pathlib import Path

from ..lab.stats import summarize
from ..rt.config import load_config
from ..rt.check import capture_meta, likely_cause
from ..rt.report import html_section, server_stats, task_stats, violations
from ..rt.schedulability import analyze as analyze_rt
from ..rt.schedule import Schedule
from ..rt.trace import parse_trace, traces_in_console
from ..sources import bootlab_capture
from ..sources.detect import display_name
from ..render.fmt import seconds, span
from ..advice import advise
from ..analysis.sections import step_console
from ..render.html import Section, advice_section, analysis_sections, page, table
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
    if a.steps:
        print()
        print(f"Steps (run {median_run.run_id}):")
        width = max(len(b.name) for b in a.steps)
        for b in a.steps:
            print(f"  {span(b.duration):>8}  {b.name:<{width}}  {step_console(b, a.console)}".rstrip())
    sections = [Section("Runs", _runs_table(ok, runs)), *analysis_sections(a)]
    sections[1].title = f"Phases of run {median_run.run_id} (the median boot)"
    sections.insert(3, advice_section(a, advise(a.boot, a, built.describe())))  # after the timeline
    for rt in reversed(scheduler_sections(store, median_run, built.target)):
        sections.insert(2, rt)
    title = f"bootlab demo: the reference device boots in {span(int(summarize([r.analysis.phases.total for r in ok]).median))}"
    html = page(title, sections, subtitle=f"Linux {built.kernel.release} in QEMU TCG; "
                                          f"{len(ok)} of {len(runs)} boots reached the ready marker")
    write_output(html, args.output)
    print()
    print(f"report: {os.path.abspath(args.output)}")
    print(f"runs:   bootlab runs --label demo   (store {os.path.abspath(args.db)})")
    return 0 if len(ok) == len(runs) else 1


# The guest's clock counts its instructions (1 ns each): the framework's own work then costs
# what it costs a CPU, not what its emulation costs the host (README, the demo).
SCHEDULER_ICOUNT = "shift=0,sleep=off"


def scheduler_sections(store, median_run, target) -> list[Section]:
    """The Table III scenario as the timed boots ran it (plain TCG: the guest's clock is the
    host's while its CPU is emulated), then checked in one more boot of the same device with
    -icount, where the analysis' bounds mean something."""
    timed = scheduler_section(store.capture(median_run.run_id), target.host_files(),
                              f"run {median_run.run_id}, QEMU TCG without -icount")
    if timed is None or target.target.icount:
        return [timed] if timed is not None else []
    checked = copy.deepcopy(target)
    checked.target.icount = SCHEDULER_ICOUNT
    try:
        built = build(checked)
    except TargetError as err:
        raise UsageError(str(err)) from None
    run = boot_runs(built, store, 1, label="demo-scheduler", title="scheduler check")[0]
    again = scheduler_section(store.capture(run.run_id), target.host_files(),
                              f"run {run.run_id}, the same device with -icount {SCHEDULER_ICOUNT}")
    if again is None:
        print(f"run {run.run_id} (-icount {SCHEDULER_ICOUNT}): {run.result.status}: no scheduler trace")
        return [timed]
    return [again, timed]


def scheduler_section(capture: bytes | None, host_files: dict[str, str], how: str) -> Section | None:
    """The Table III scenario the camera target runs after ready: its Gantt chart, the
    response times against the analysis, the budget per server period."""
    if not capture:
        return None
    traces = traces_in_console(bootlab_capture.console_bytes(capture).decode("utf-8", "replace"))
    if "table3" not in traces:
        return None
    config = host_files.get("/rt/table3.toml")
    trace = parse_trace(traces["table3"], f"table3 (recorded in the guest: {how})")
    schedule = Schedule.from_trace(trace)
    loaded = load_config(Path(config)) if config else None
    analysis = analyze_rt(loaded) if loaded else None
    if loaded is not None:
        schedule.name_from(loaded)
    print()
    print(f"The real-time scheduler after ready (Table III servers, one second; {how}):")
    for s in server_stats(schedule, analysis):
        worst = "-" if s.worst_used is None else span(s.worst_used)
        print(f"  {s.label}: {s.periods} periods, budget {span(s.budget)}, most used {worst}, overruns {s.overruns}")
    tasks = task_stats(schedule, analysis)
    print(f"  deadline misses: {sum(t.misses for t in tasks)}")
    broken = violations(tasks, server_stats(schedule, analysis))
    cause = likely_cause(capture_meta(capture), trace, loaded)
    for v in broken:
        print(f"  VIOLATION: {v}")
    if broken and cause:
        print(f"  likely cause: {cause}")
    if not broken and analysis is not None:
        print("  every response time within its analytical bound, every server within its budget")
    return Section("", html_section(trace, loaded, cause))  # the fragment has its own heading


RUNS_NOTE = ("Each boot: QEMU launched (power-on) until the device was ready (its BOOTLAB READY line, on its own "
             "clock); the line reached the host after the console backlog.")


def _runs_table(ok, runs) -> str:
    rows = [[name, span(int(summarize(vals).median)), span(min(vals)), span(max(vals))]
            for name, vals in phase_rows([r.analysis for r in ok])]
    per_run = [[str(r.run_id), r.result.status, f"{seconds(r.ready_ns)} s" if r in ok else "-",
                f"{seconds(r.result.ready_line_ns)} s" if r in ok and r.result.ready_line_ns is not None else "-",
                display_name(r.result.capture)] for r in runs]
    return (table(["phase", "median", "min", "max"], rows, numeric={1, 2, 3}) +
            table(["run", "status", "power-on to ready", "ready line on the host", "capture"], per_run,
                  numeric={2, 3}) +
            f"<p class='where'>{escape(RUNS_NOTE)}</p>")
