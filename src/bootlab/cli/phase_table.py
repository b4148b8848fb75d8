"""The phase table over several runs: median and spread per phase (demo, boot)."""

from __future__ import annotations

from ..analysis import Analysis
from ..lab.stats import summarize
from ..render.fmt import aligned, span


def phase_rows(analyses: list[Analysis]) -> list[tuple[str, list[int]]]:
    """(phase name, durations over the runs) in boot order, then the total."""
    order: list[str] = []
    values: dict[str, list[int]] = {}
    for a in analyses:
        for s in a.phases.spans:
            if s.name not in values:
                order.append(s.name)
                values[s.name] = []
            values[s.name].append(s.duration)
    totals = [a.phases.total for a in analyses if a.phases.total is not None]
    return [(name, values[name]) for name in order] + [("total (power-on to ready)", totals)]


def phase_table(analyses: list[Analysis]) -> str:
    rows = [("phase", "median", "min", "max", "runs")]
    for name, vals in phase_rows(analyses):
        s = summarize(vals)
        rows.append((name, span(int(s.median)), span(int(s.min)), span(int(s.max)), str(s.n)))
    return "\n".join(aligned(rows, right={1, 2, 3, 4}, indent=""))
