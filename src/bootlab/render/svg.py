"""SVG bootgraph: the whole boot on one time axis, like the kernel's scripts/bootgraph.pl
but from power-on to ready: a phase bar, the sampled series as lanes (bootchart's CPU and
disk use), then one row per span (bootloader step, initcall, driver probe, unit, process),
grouped by where it ran, with the boundaries as lines.

Only spans long enough to see are drawn (a million-line log has hundreds of thousands of
initcalls); the cut-off is stated in the picture.
"""

from __future__ import annotations

from html import escape

import numpy as np

from ..analysis import Analysis
from ..timeline import NO_TIME, Kind
from .fmt import seconds, span

PHASE_COLOURS = {
    "firmware": "#8c8c8c",
    "bootloader": "#b07aa1",
    "kernel load/decompress": "#ff9da7",
    "kernel init": "#f28e2b",
    "initcalls": "#edc948",
    "rootfs/init": "#59a14f",
    "services": "#4e79a7",
    "application": "#76b7b2",
}
KIND_COLOURS = {
    Kind.STAGE: "#b07aa1",
    Kind.INITCALL: "#edc948",
    Kind.PROBE: "#f1ce63",
    Kind.ASYNC_WAIT: "#d4a6c8",
    Kind.UNIT: "#4e79a7",
    Kind.PROCESS: "#76b7b2",
    Kind.PHASE: "#9c9c9c",
    Kind.STEP: "#59a14f",
}
SERIES_COLOURS = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b")
ROW = 14
LANE = 40  # height of a series lane
LABEL_W = 260
WIDTH = 1400
MAX_ROWS = 400


def _phase_colour(name: str) -> str:
    return PHASE_COLOURS.get(name.split(" + ")[0], "#bab0ac")


def rows_to_draw(a: Analysis) -> tuple[list, int]:
    """(events, minimum duration shown): the longest spans, at most MAX_ROWS, in time order."""
    boot = a.boot
    total = a.phases.total or 0
    floor = max(1_000_000, total // 2000)
    table = boot.columns(*KIND_COLOURS)  # columns: a million-line log's spans need not all be objects
    if table is None:
        return [], floor
    rows = np.flatnonzero((table.dur != NO_TIME) & (table.dur >= floor) & (boot.ref_times(table) != NO_TIME))
    if len(rows) > MAX_ROWS:
        rows = rows[np.argsort(-table.dur[rows], kind="stable")[:MAX_ROWS]]
        floor = int(table.dur[rows[-1]])
    spans = [table.event(i) for i in rows.tolist()]
    spans.sort(key=lambda ev: (boot.at(ev), ev.track or ""))
    return spans, floor


def timeline_svg(a: Analysis, width: int = WIDTH) -> str:
    boot = a.boot
    phases = a.phases
    events, floor = rows_to_draw(a)
    starts = [s.start for s in phases.spans] + [boot.at(ev) for ev in events]
    ends = [s.end for s in phases.spans] + [boot.at_end(ev) for ev in events]
    t0 = min(starts + [0]) if starts else 0
    t1 = max(ends) if ends else 1
    t1 = max(t1, t0 + 1)
    plot_w = width - LABEL_W - 20

    def x(t: int) -> float:
        return LABEL_W + (t - t0) * plot_w / (t1 - t0)

    top = 50
    lanes = _lanes(a)
    height = top + 60 + LANE * len(lanes) + ROW * (len(events) + 2)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bootgraph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
        "<style>.row:hover rect{stroke:#000}.lbl{fill:#222}.tick{stroke:#ddd}.mark{stroke:#c00;stroke-dasharray:4 3}</style>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
    ]
    title = (f"Boot of Linux {boot.meta['kernel_version']}" if boot.meta.get("kernel_version") else "Boot") + f": {span(phases.total)}"
    if phases.end is not None:
        title += f" to {phases.end.mark}"
    out.append(f'<text x="10" y="18" font-size="14" font-weight="bold">{escape(title)}</text>')
    # Time axis: about ten ticks at a round step.
    step = _round_step((t1 - t0) / 10)
    tick = (t0 // step) * step
    while tick <= t1:
        if tick >= t0:
            out.append(f'<line class="tick" x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{height - 10}"/>')
            out.append(f'<text x="{x(tick):.1f}" y="{top - 4}" text-anchor="middle">{tick / 1e9:g}s</text>')
        tick += step
    # Phase bar.
    y = top + 4
    for s in phases.spans:
        w = max(1.0, x(s.end) - x(s.start))
        out.append(f'<g class="row"><title>{escape(s.name)}: {span(s.duration)} from {seconds(s.start)} s\n'
                   f'{escape(s.start_evidence)}</title><rect x="{x(s.start):.1f}" y="{y}" width="{w:.1f}" height="22" '
                   f'fill="{_phase_colour(s.name)}"/>')
        if w > 60:
            out.append(f'<text x="{x(s.start) + 3:.1f}" y="{y + 15}" fill="#000">{escape(s.name)} {span(s.duration)}</text>')
        out.append("</g>")
    out.append(f'<text class="lbl" x="6" y="{y + 15}">phases</text>')
    # Boundaries.
    for mark, b in phases.boundaries.items():
        out.append(f'<line class="mark" x1="{x(b.at):.1f}" y1="{top}" x2="{x(b.at):.1f}" y2="{height - 10}">'
                   f'<title>{escape(str(mark))} at {seconds(b.at)} s ({escape(b.evidence)})</title></line>')
    y = top + 36
    for label, series in lanes:
        out += _lane(a, label, series, x, t0, t1, y)
        y += LANE
    # One row per span.
    y += 4
    for ev in events:
        at = boot.at(ev)
        w = max(1.0, x(at + ev.dur) - x(at))
        label = ev.name if not ev.track or ev.track == ev.name else f"{ev.name} ({ev.track})"
        colour = KIND_COLOURS.get(ev.kind, "#bab0ac")
        if (ev.attrs or {}).get("ret") not in (None, 0):
            colour = "#e15759"
        out.append(f'<g class="row"><title>{escape(label)}: {span(ev.dur)} at {seconds(at)} s [{ev.kind}] '
                   f'{escape(ev.where())}</title>'
                   f'<rect x="{x(at):.1f}" y="{y}" width="{w:.1f}" height="{ROW - 3}" fill="{colour}"/>'
                   f'<text class="lbl" x="6" y="{y + ROW - 4}">{escape(label[:42])}</text>'
                   f'<text x="{x(at) + w + 3:.1f}" y="{y + ROW - 4}" fill="#555">{span(ev.dur)}</text></g>')
        y += ROW
    out.append(f'<text x="10" y="{height - 2}" fill="#777">spans shorter than {span(floor)} are not drawn; '
               f'red: returned an error; dashed: phase boundaries</text>')
    out.append("</svg>")
    return "\n".join(out)


def _lanes(a: Analysis) -> list[tuple[str, list[str]]]:
    """The sampled series, one lane per unit ("cpu busy %" and "cpu iowait %" share one):
    (lane label, series names)."""
    lanes: dict[str, list[str]] = {}
    for name, (clock, points) in a.boot.series.items():
        if points and clock in a.boot.clocks:
            what, _, unit = name.rpartition(" ")
            lanes.setdefault(f"{what.split()[0]} {unit}", []).append(name)
    return list(lanes.items())


def _lane(a: Analysis, label: str, names: list[str], x, t0: int, t1: int, y: int) -> list[str]:
    """One lane: each series as a line over the time axis; a percentage on 0-100, other
    units on 0 to their highest value in the lane."""
    boot = a.boot
    placed = []
    for name in names:
        clock, points = boot.series[name]
        offset = boot.clocks[clock].offset
        placed.append((name, [(t + offset, v) for t, v in points if t0 <= t + offset <= t1]))
    top = 100.0 if label.endswith("%") else max((v for _, pts in placed for _, v in pts), default=0.0) or 1.0
    height = LANE - 8
    out = [f'<g class="lane"><title>{escape(label)}: ' + "; ".join(escape(n) for n in names) +
           f" (top of the lane: {top:g})</title>",
           f'<rect x="{LABEL_W}" y="{y}" width="{x(t1) - LABEL_W:.1f}" height="{height}" fill="#f7f7f7"/>',
           f'<text class="lbl" x="6" y="{y + height // 2 + 4}">{escape(label)}:' +
           "".join(f' <tspan fill="{SERIES_COLOURS[k % len(SERIES_COLOURS)]}">{escape(_what(name))}</tspan>'
                   for k, name in enumerate(names)) + "</text>"]
    for k, (name, pts) in enumerate(placed):
        if not pts:
            continue
        line = " ".join(f"{x(t):.1f},{y + height - height * min(v, top) / top:.1f}" for t, v in pts)
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.2">'
                   f"<title>{escape(name)}</title></polyline>")
    out.append("</g>")
    return out


def _what(name: str) -> str:
    """A series' own word in its lane's legend: "cpu iowait %" -> "iowait"."""
    words = name.split()
    return " ".join(words[1:-1]) or name


def _round_step(raw: float) -> int:
    for step in (1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000, 100_000_000, 200_000_000,
                 500_000_000, 1_000_000_000, 2_000_000_000, 5_000_000_000, 10_000_000_000, 30_000_000_000,
                 60_000_000_000):
        if step >= raw:
            return step
    return 60_000_000_000 * max(1, int(raw // 60_000_000_000))


def render(a: Analysis) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + timeline_svg(a) + "\n"
