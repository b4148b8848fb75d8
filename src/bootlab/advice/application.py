"""The application: its own start-up, and knowing when it is ready (seed 001: loading
shared libraries and initialising graphics; seed 003: a Python plugin rewritten in Rust
went from 30 s to under 1 s, Docker Compose v1 to v2 saved 20 s).
"""

from __future__ import annotations

from ..analysis.phases import FAILURE
from ..timeline import Mark, Phase
from . import Context, Finding, rule
from .common import cite, mark_at, phase_span, took

FAMILY = "application"
MIN_APP_NS = 500_000_000
MIN_APP_SHARE = 0.2  # the application's own start is worth a look past a fifth of the boot


@rule(FAMILY)
def startup(ctx: Context) -> Finding | None:
    """The application phase, from its start to its ready line: only the application can
    say where that goes, so there is no estimate."""
    phase = phase_span(ctx.analysis, Phase.APPLICATION)
    whole = ctx.analysis.phases.total
    if phase is None or not whole or phase.duration < MIN_APP_NS or phase.duration < MIN_APP_SHARE * whole:
        return None
    _at, start = mark_at(ctx.boot, Mark.APP_START)
    end = ctx.boot.first_mark(Mark.READY)
    evidence = [cite(ctx.boot, ev) for ev in (start, end) if ev is not None]
    evidence.append(f"the application took {took(phase.duration)} to be ready, {phase.duration / whole:.0%} of the boot")
    evidence += [f"silent {took(g.duration)}: after {g.before}" for g in ctx.analysis.gaps
                 if phase.start <= g.start < phase.end][:3]
    return Finding(
        rule="app.startup", family=FAMILY,
        title="Shorten the application's own start",
        evidence=evidence, saving_ns=None,
        how="Profile the start (`strace -f -tt -e trace=file,process`, `perf record`); link statically or prelink "
            "to cut dynamic loading; move work the first result does not need to after the ready point; prefer "
            "compiled code to interpreters on the start path.",
        non_intrusive=True, patch=None, confidence="low")


@rule(FAMILY)
def ready_marker(ctx: Context) -> Finding | None:
    """Without a ready line the boot's end is a guess, and every saving is measured against
    the guess."""
    end = ctx.analysis.phases.end
    if end is None or end.mark in (Mark.READY, FAILURE):
        return None
    return Finding(
        rule="app.ready-marker", family=FAMILY,
        title="Print a line when the application is ready, and measure to it",
        evidence=[f"no ready line: the boot ends at {end.evidence}"], saving_ns=None,
        how="Have the application print one line when it can do its job (e.g. `BOOTLAB READY` after the first "
            "frame) and give its pattern to bootlab with --ready REGEX.",
        non_intrusive=True, patch=None, confidence="high",
        notes=["the ready line is what every phase and saving is measured against"])
