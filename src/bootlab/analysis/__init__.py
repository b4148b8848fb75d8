"""Analyses read the timeline: phases, blame, critical path, console cost, gaps.

`analyze()` runs them all once; every renderer draws from the resulting Analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..timeline import Boot, Kind
from .blame import Blamed, BlamedRows, Outcome, level_totals, returned, top
from .console_cost import ConsoleCost, console_cost, explain_gaps
from .critical_path import CriticalPath, find_critical_path
from .gaps import DEFAULT_THRESHOLD_NS, Gap, find_gaps, unplaced
from .phases import Phases, assign, find_phases
from .sections import Section, blame_section, levels_section, returned_section, steps_section


@dataclass
class Options:
    top: int = 10
    gap_threshold: int = DEFAULT_THRESHOLD_NS
    baud: int | None = None
    events: bool = False  # JSON output lists every structured event


@dataclass
class Analysis:
    boot: Boot
    phases: Phases
    initcalls: list[Blamed]
    probes: list[Blamed]
    units: list[Blamed]
    processes: list[Blamed]
    stages: list[Blamed]
    steps: list[Blamed]  # named steps of the boot (bootlab-mark NAME.start/.end), in time order
    levels: list[tuple[str, int, int]]
    failures: BlamedRows  # returned an error
    absent: BlamedRows  # looked for hardware that is not there (-19 ENODEV, -6 ENXIO)
    deferred: BlamedRows  # probes deferred (-517 EPROBE_DEFER): retried later, not failures
    critical: CriticalPath
    console: ConsoleCost | None
    gaps: list[Gap]
    options: Options = field(default_factory=Options)


def analyze(boot: Boot, options: Options | None = None) -> Analysis:
    options = options or Options()
    phases = find_phases(boot)
    assign(boot, phases)
    outcomes = returned(boot)
    steps = sorted(top(boot, Kind.STEP, None), key=lambda b: (b.start is None, b.start or 0))
    console = console_cost(boot, phases, options.baud, steps)
    gaps = find_gaps(boot, options.gap_threshold, until=phases.end.at if phases.end else None)
    explain_gaps(gaps, console)
    if unplaced_note := unplaced(boot, gaps):
        phases.notes.append(unplaced_note)
    return Analysis(
        boot=boot,
        phases=phases,
        initcalls=top(boot, Kind.INITCALL, options.top),
        probes=top(boot, Kind.PROBE, options.top),
        units=top(boot, Kind.UNIT, options.top),
        processes=top(boot, Kind.PROCESS, options.top),
        stages=top(boot, Kind.STAGE, options.top),
        steps=steps,
        levels=level_totals(boot),
        failures=outcomes[Outcome.FAILED],
        absent=outcomes[Outcome.ABSENT],
        deferred=outcomes[Outcome.DEFERRED],
        critical=find_critical_path(boot, options.top),
        console=console,
        gaps=gaps,
        options=options,
    )


def tables(a: Analysis) -> list[Section]:
    """The tabular analyses as generic sections, in report order; empty ones left out.
    A new tabular analysis is its section function plus one entry here."""
    top = a.options.top
    found = [
        steps_section(a.steps, a.console),
        blame_section("initcalls", "Slowest initcalls:", a.initcalls),
        levels_section(a.levels),
        blame_section("probes", "Slowest driver probes:", a.probes),
        blame_section("stages", "Slowest firmware and bootloader steps:", a.stages),
        blame_section("units", "Slowest units:", a.units),
        blame_section("processes", "Longest-lived processes (bootchart):", a.processes),
        returned_section("failures", "Initcalls and probes that failed", a.failures, top),
        returned_section("absent", "Hardware not found (-19 ENODEV, -6 ENXIO: the driver looked, nothing there)",
                         a.absent, top),
        returned_section("deferred", "Probes deferred (-517 EPROBE_DEFER: retried once what they wait for is there; "
                         "not failures)", a.deferred, top),
    ]
    return [s for s in found if s.rows]
