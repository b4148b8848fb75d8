"""`bootlab rt`: schedulability analysis, simulation, trace views and checks for the
real-time scheduler framework (docs/rt-analysis.md).  The work is done in bootlab.rt."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import UsageError
from ..rt.config import Config, ConfigError, load_config
from ..rt.simulate import ExecOverride
from ..rt.trace import Trace, TraceError, read_trace
from ..rt.units import NS_PER, parse_duration

DEFAULT_UNTIL_LIMIT_NS = 10 * NS_PER["s"]   # a default hyperperiod can be hours long
CAPTURE_HELP = "the console capture of the boot that recorded the trace: tells the likely cause of a violation"


def register(subparsers) -> None:
    parser = subparsers.add_parser("rt", help="analyse, simulate and check the real-time scheduler",
                                   description="Real-time scheduler framework: analysis, simulation, traces, checks.")
    verbs = parser.add_subparsers(dest="rt_verb", metavar="COMMAND")
    verbs.required = True

    analyze = verbs.add_parser("analyze", help="schedulability and worst-case response times of a configuration")
    analyze.add_argument("config", help="configuration file (TOML or JSON)")
    analyze.add_argument("--format", "-f", choices=("text", "json"), default="text")
    _overhead_option(analyze)
    analyze.set_defaults(rt_run=_analyze)

    simulate = verbs.add_parser("simulate", help="the ideal schedule of a configuration, as a trace")
    simulate.add_argument("config", help="configuration file (TOML or JSON)")
    simulate.add_argument("--until", metavar="T",
                          help="simulated time, e.g. 420ms or 2s (a bare number is in the configuration's unit); "
                               "default: one hyperperiod after the last first release, at most 10 s")
    simulate.add_argument("--exec", dest="overrides", action="append", default=[], metavar="TASK[@JOB]=TIME",
                          help="what-if execution time of a task's jobs (or of job JOB only), e.g. control=3ms; repeatable")
    simulate.add_argument("--enforce", action="store_true",
                          help="enforce budgets as the kernel does: a job past its wcet gets an overrun event and, "
                               "unless its task says overrun = \"signal\", no CPU until its task's next release "
                               "(without the kernel's slack for its own overheads)")
    simulate.add_argument("-o", "--output", metavar="FILE", help="write the trace here instead of standard output")
    simulate.set_defaults(rt_run=_simulate)

    trace = verbs.add_parser("trace", help="response times, budgets and charts of a recorded or simulated trace")
    trace.add_argument("trace", help="trace file (recorder or simulator output)")
    trace.add_argument("--config", help="configuration: names tasks and servers, adds the analytical bounds")
    _overhead_option(trace)
    trace.add_argument("--format", "-f", choices=("text", "json"), default="text")
    trace.add_argument("--svg", metavar="FILE", help="write a Gantt chart as SVG")
    trace.add_argument("--png", metavar="FILE", help="write a Gantt chart as PNG")
    trace.add_argument("--grasp", metavar="FILE", help="write a Grasp trace")
    trace.add_argument("--perfetto", metavar="FILE", help="write a Perfetto (Trace Event JSON) trace")
    trace.add_argument("--html", metavar="FILE", help="write an HTML page: the Gantt chart (zoom, pan) and the tables")
    trace.add_argument("--capture", metavar="FILE", help=CAPTURE_HELP)
    trace.set_defaults(rt_run=_show_trace)

    check = verbs.add_parser("check", help="compare a recorded trace with the analysis and the simulation")
    check.add_argument("config", help="configuration file the trace was recorded with")
    check.add_argument("trace", help="trace file")
    check.add_argument("--tolerance-us", type=int, default=100, metavar="N",
                       help="allowed difference of each boundary, budget and bound, in microseconds (default 100)")
    _overhead_option(check)
    check.add_argument("--all", action="store_true", help="explain every violation, not only the first")
    check.add_argument("--capture", metavar="FILE", help=CAPTURE_HELP)
    check.set_defaults(rt_run=_check)

    parser.set_defaults(func=run)


def _overhead_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--overhead-us", type=int, default=0, metavar="N",
                        help="each job's overhead (release, switches, system calls), charged in the analytical bounds: "
                             "every task's wcet counts N microseconds more; `bootlab rt trace` measures it (default 0)")


def _charged(config: Config, overhead_us: int) -> Config:
    """`config` with each job's overhead charged (rt/overheads.py): what bounds responses."""
    from ..rt.overheads import with_overhead

    if overhead_us < 0:
        raise UsageError("--overhead-us must not be negative")
    try:
        return with_overhead(config, overhead_us)
    except ValueError as err:
        raise UsageError(f"--overhead-us: {err}") from None


def run(args: argparse.Namespace) -> int:
    return args.rt_run(args)


def _config(path: str) -> Config:
    try:
        return load_config(path)
    except ConfigError as err:
        raise UsageError(f"invalid configuration:\n{err}") from err


def _load_trace(path: str) -> Trace:
    try:
        trace = read_trace(path)
    except TraceError as err:
        raise UsageError(str(err)) from err
    if not trace.events and trace.damage:
        raise UsageError(f"{path}: no readable events: {trace.damage}")
    if trace.damage:
        print(f"bootlab rt: {path}: {trace.damage} (using the readable part before it)", file=sys.stderr)
    return trace


def _write(path: str, content: str) -> None:
    try:
        Path(path).write_text(content, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write {path}: {err}") from err


def _analyze(args: argparse.Namespace) -> int:
    from ..rt.schedulability import analyze, to_dict, to_text

    result = analyze(_charged(_config(args.config), args.overhead_us))
    if args.format == "json":
        # what each job is charged: the configuration's overhead_us and --overhead-us's
        print(json.dumps({**to_dict(result), "overhead_us": result.config.overhead_us}, indent=2))
    else:
        print(to_text(result))
    return 0 if result.schedulable else 1


def _exec_override(text: str, config: Config) -> ExecOverride:
    target, sep, amount = text.partition("=")
    name, _, job = target.partition("@")
    task = config.task_by_ref(name)
    if not sep or task is None:
        raise UsageError(f"--exec {text}: expected TASK[@JOB]=TIME with TASK a task name or id")
    if job and not (job.isascii() and job.isdigit()):
        raise UsageError(f"--exec {text}: JOB must be a job number (0 is the first)")
    try:
        exec_ns = parse_duration(amount, config.unit)
    except ValueError as err:
        raise UsageError(f"--exec {text}: {err}") from err
    if exec_ns <= 0:
        raise UsageError(f"--exec {text}: the execution time must be positive")
    return ExecOverride(task.id, exec_ns, int(job) if job else None)


def _simulate(args: argparse.Namespace) -> int:
    from ..rt.simulate import hyperperiod_ns, simulate
    from ..rt.trace import format_trace

    config = _config(args.config)
    overrides = [_exec_override(text, config) for text in args.overrides]
    if args.until is None:
        until = hyperperiod_ns(config)
        if until > DEFAULT_UNTIL_LIMIT_NS:
            print(f"bootlab rt simulate: the hyperperiod is {until / 1e9:g} s; simulating 10 s (use --until)", file=sys.stderr)
            until = DEFAULT_UNTIL_LIMIT_NS
    else:
        try:
            until = parse_duration(args.until, config.unit)
        except ValueError as err:
            raise UsageError(f"--until: {err}") from err
    text = format_trace(simulate(config, until, overrides, enforce=args.enforce), config.plugin)
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _show_trace(args: argparse.Namespace) -> int:
    from ..rt import report
    from ..rt.schedulability import analyze
    from ..rt.schedule import Schedule

    if args.overhead_us and not args.config:
        raise UsageError("--overhead-us charges the overhead in the analytical bounds: it needs --config")
    trace = _load_trace(args.trace)
    schedule = Schedule.from_trace(trace)
    analysis = None
    if args.config:
        config = _config(args.config)
        schedule.name_from(config)
        analysis = analyze(_charged(config, args.overhead_us))
    if args.svg:
        from ..rt.gantt import gantt_svg
        _write(args.svg, gantt_svg(schedule))
    if args.png:
        from ..rt.gantt import gantt_png
        try:
            gantt_png(schedule, args.png)
        except OSError as err:
            raise UsageError(f"cannot write {args.png}: {err}") from err
    if args.grasp:
        from ..rt.grasp import grasp_trace
        _write(args.grasp, grasp_trace(trace, schedule))
    if args.perfetto:
        from ..rt.perfetto import perfetto_json
        _write(args.perfetto, perfetto_json(schedule))
    cause = _cause(args.capture, trace, config if args.config else None)
    if args.html:
        _write(args.html, report.html_page(trace, schedule, analysis, cause))
    if args.format == "json":
        print(json.dumps(report.to_dict(trace, schedule, analysis, cause), indent=2))
    else:
        print(report.to_text(trace, schedule, analysis, cause))
    return 0


def _cause(capture: str | None, trace, config) -> str | None:
    from ..rt.check import capture_meta, likely_cause
    from ..sources.detect import NotALog, maybe_gunzip

    if capture is None:
        return None
    try:
        return likely_cause(capture_meta(maybe_gunzip(capture, Path(capture).read_bytes())), trace, config)
    except OSError as err:
        raise UsageError(f"cannot read {capture}: {err.strerror or err}") from None
    except NotALog as err:
        raise UsageError(str(err)) from None


def _check(args: argparse.Namespace) -> int:
    from ..rt.check import check

    if args.tolerance_us < 0:
        raise UsageError("--tolerance-us must not be negative")
    config = _config(args.config)
    trace = _load_trace(args.trace)
    result = check(config, trace, args.tolerance_us * NS_PER["us"], _charged(config, args.overhead_us))
    for note in result.notes:
        print(f"note: {note}")
    summary = (f"{result.jobs_checked} jobs, {result.periods_checked} server periods, "
               f"{result.segments_compared} intervals compared with the simulation, tolerance {args.tolerance_us} us"
               + (f", {args.overhead_us} us overhead a job charged in the bounds" if args.overhead_us else ""))
    if result.ok:
        print(f"ok: {summary}")
        return 0
    first, others = result.violations[0], result.violations[1:]
    print(f"FAILED: {first.explain(result.origin)}")
    cause = _cause(args.capture, trace, config)
    if args.all:
        for violation in others:
            print(f"also: {violation.explain(result.origin)}")
    elif others:
        print(f"({len(others)} more violation{'s' * (len(others) != 1)}: --all explains them)")
    if cause:
        print(f"likely cause: {cause}")
    print(f"({summary})")
    return 1
