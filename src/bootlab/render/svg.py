"""SVG bootgraph: the whole boot on one time axis, like the kernel's scripts/bootgraph.pl
but from power-on to ready: a legend, a phase bar, the sampled series as lanes (bootchart's
CPU and disk use), then lanes of spans (bootloader steps, initcalls, driver probes, units,
processes), each kind packed into as few lanes as its overlaps need, with the phase
boundaries as lines.

Every span is drawn, at least a pixel wide, up to MAX_SPANS (a million-line log has
hundreds of thousands of initcalls: then the longest are drawn and the cut-off is stated
in the picture).  Each drawn element carries its times (data-s, data-e: ns from the
chart's origin; see the time charts' script in templates/report.html.j2), from which the
HTML report lays the chart out again when the user zooms, pans or changes the axis; the
positions written here are the whole boot's.
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
ERROR_COLOUR = "#e15759"
# Lanes in this order, one group per kind, labelled for a reader.
LANE_NAMES = {
    Kind.STAGE: "bootloader steps",
    Kind.STEP: "steps",
    Kind.INITCALL: "initcalls",
    Kind.ASYNC_WAIT: "async waits",
    Kind.PROBE: "driver probes",
    Kind.UNIT: "units",
    Kind.PROCESS: "processes",
    Kind.PHASE: "reported phases",
}
LANE = 16
SERIES_LANE = 40  # height of a lane of sampled values
SERIES_COLOURS = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b")
LABEL_W = 150
WIDTH = 1400
MAX_SPANS = 5000
MAX_LANES = 40          # per kind; beyond, spans share the lane that frees first
CHAR_W = 6.2            # the mean width of an 11px sans-serif character, to decide whether a label fits
LEGEND_LINE = 16


def _phase_colour(name: str) -> str:
    return PHASE_COLOURS.get(name.split(" + ")[0], "#bab0ac")


def rows_to_draw(a: Analysis) -> tuple[list, int | None, int]:
    """(events, shortest drawn or None when every span is drawn, spans not placed): the
    spans placed on the reference clock, at most MAX_SPANS (the longest), in time order;
    and how many spans have no place on it (their clock is not aligned)."""
    boot = a.boot
    table = boot.columns(*KIND_COLOURS)  # columns: a million-line log's spans need not all be objects
    if table is None:
        return [], None, 0
    timed = (table.dur != NO_TIME) & (table.dur >= 0)
    placed = timed & (boot.ref_times(table) != NO_TIME)
    rows = np.flatnonzero(placed)
    floor = None
    if len(rows) > MAX_SPANS:
        rows = rows[np.argsort(-table.dur[rows], kind="stable")[:MAX_SPANS]]
        floor = int(table.dur[rows[-1]])
    spans = [table.event(i) for i in rows.tolist()]
    spans.sort(key=lambda ev: (boot.at(ev), ev.track or "", ev.name))
    return spans, floor, int(np.count_nonzero(timed & ~placed))


def pack(intervals: list[tuple[int, int]], max_lanes: int = MAX_LANES) -> tuple[list[int], set[int]]:
    """(a lane for each (start, end) interval, the intervals drawn mostly over another):
    intervals in time order go to the first lane free at their start (greedy interval
    partitioning), or, when all `max_lanes` are taken, over the lane that frees first."""
    ends: list[int] = []
    lanes = []
    over = set()
    for n, (start, end) in enumerate(intervals):
        lane = next((i for i, e in enumerate(ends) if e <= start), None)
        if lane is None:
            if len(ends) < max_lanes:
                ends.append(end)
                lanes.append(len(ends) - 1)
                continue
            lane = min(range(len(ends)), key=ends.__getitem__)
            if ends[lane] - start > (end - start) / 10:   # more than a sliver of it lies over another
                over.add(n)
        ends[lane] = max(ends[lane], end)
        lanes.append(lane)
    return lanes, over


def _fits(text: str, width: float) -> bool:
    return len(text) * CHAR_W + 6 <= width


def _bar(x: float, y: float, w: float, h: int, colour: str, title: str, label: str, s: int, e: int) -> str:
    """A span: its rectangle, and its label inside when it fits (the script decides again
    at each zoom); no label for a span drawn over another."""
    shown = "" if _fits(label, w) else ' display="none"'
    text = (f'<text class="in" data-s="{s}" data-e="{e}" x="{x + 3:.1f}" y="{y + h - 3}"{shown}>{escape(label)}</text>'
            if label else "")
    return (f'<g class="row"><title>{escape(title)}</title>'
            f'<rect class="sp" data-s="{s}" data-e="{e}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{h}" '
            f'fill="{colour}"/>{text}</g>')


def legend(kinds: list[str], phases: list[str], y: int, width: int) -> tuple[list[str], int]:
    """(elements, lines): colour keys for the phases, the kinds of spans drawn, errors and
    boundaries, wrapped into lines of `width`."""
    keys = [(_phase_colour(p), p, "phase") for p in phases]
    keys += [(KIND_COLOURS[k], LANE_NAMES[k], "span") for k in kinds]
    if kinds:
        keys.append((ERROR_COLOUR, "returned an error", "span"))
    keys.append((None, "phase boundary", "mark"))
    out = [f'<g class="legend" transform="translate(10,{y})">']
    x, line, previous = 0.0, 0, None
    for colour, name, what in keys:
        heading = f"{what}s:" if what != previous else ""
        needed = (10 + len(heading) * CHAR_W if heading else 0) + 28 + len(name) * CHAR_W
        if x > 0 and x + needed > width - 20:
            x, line = 0.0, line + 1
        top = line * LEGEND_LINE
        if heading:
            out.append(f'<text x="{x:.1f}" y="{top}" fill="#555">{heading}</text>')
            x += 10 + len(heading) * CHAR_W
            previous = what
        if colour is None:
            out.append(f'<line class="mark" x1="{x:.1f}" y1="{top - 4}" x2="{x + 12:.1f}" y2="{top - 4}"/>')
        else:
            rounded = ' rx="5"' if what == "phase" else ""
            out.append(f'<rect x="{x:.1f}" y="{top - 9}" width="12" height="10" fill="{colour}"{rounded}/>')
        out.append(f'<text x="{x + 16:.1f}" y="{top}">{escape(name)}</text>')
        x += 28 + len(name) * CHAR_W
    out.append("</g>")
    return out, line + 1


def timeline_svg(a: Analysis, width: int = WIDTH) -> str:
    boot = a.boot
    phases = a.phases
    events, floor, unplaced = rows_to_draw(a)
    starts = [s.start for s in phases.spans] + [boot.at(ev) for ev in events]
    ends = [s.end for s in phases.spans] + [boot.at_end(ev) for ev in events]
    t0 = min(starts + [0]) if starts else 0
    t1 = max(ends) if ends else 1
    t1 = max(t1, t0 + 1)
    plot_w = width - LABEL_W - 20

    def x(t: int) -> float:
        return LABEL_W + (t - t0) * plot_w / (t1 - t0)

    def bar_width(start: int, end: int) -> float:
        return max(1.0, x(end) - x(start))

    # Lanes: each kind packed on its own, in LANE_NAMES' order.
    by_kind: dict[str, list] = {}
    for ev in events:
        by_kind.setdefault(ev.kind, []).append(ev)
    kinds = [k for k in LANE_NAMES if k in by_kind]
    placed = []        # (event, row, drawn over another)
    groups = []        # (name, first row, rows)
    row = 0
    for kind in kinds:
        evs = by_kind[kind]
        lanes, over = pack([(boot.at(ev), boot.at_end(ev)) for ev in evs])
        groups.append((LANE_NAMES[kind], row, max(lanes) + 1))
        placed += [(ev, row + lane, n in over) for n, (ev, lane) in enumerate(zip(evs, lanes))]
        row += max(lanes) + 1
    keys, lines = legend(kinds, [s.name for s in phases.spans], 42, width)
    axis_top = 42 + LEGEND_LINE * lines + 26     # the time axis' labels, under the legend
    series = _series_lanes(a)
    series_top = axis_top + 34
    lanes_top = series_top + SERIES_LANE * len(series)
    height = lanes_top + LANE * row + 30
    kernel = next((s.start for s in phases.spans if s.name.split(" + ")[0] == "kernel init"), None)
    longest = max(phases.spans, key=lambda s: s.duration, default=None)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bootgraph timechart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11" '
        f'data-plot-x="{LABEL_W}" data-span="{t1 - t0}" data-origin="{t0}" data-unit="s"'
        + (f' data-kernel="{kernel - t0}"' if kernel is not None else "")
        + (f' data-cut-s="{longest.start - t0}" data-cut-e="{longest.end - t0}" data-cut-name="{escape(longest.name)}"'
           if longest is not None and phases.total and longest.duration > 0.3 * phases.total else "") + ">",
        "<style>.row:hover rect{stroke:#000}.lbl{fill:#222}.in{fill:#000;pointer-events:none}.tick{stroke:#ddd}"
        ".mark{stroke:#c00;stroke-dasharray:4 3}.lane{fill:#f7f7f7}</style>",
        f'<defs><clipPath id="plotclip"><rect class="clip" x="{LABEL_W}" y="0" width="{plot_w}" height="{height}"/>'
        f'</clipPath></defs>',
        f'<rect x="0" y="0" width="100%" height="{height}" fill="#fff"/>',
    ]
    title = (f"Boot of Linux {boot.meta['kernel_version']}" if boot.meta.get("kernel_version") else "Boot") + f": {span(phases.total)}"
    if phases.end is not None:
        title += f" to {phases.end.mark}"
    out.append(f'<text x="10" y="18" font-size="14" font-weight="bold">{escape(title)}</text>')
    out += keys
    # Lane names and stripes, outside the plot's clip.
    for n, (name, first, count) in enumerate(groups):
        y = lanes_top + LANE * first
        if n % 2:
            out.append(f'<rect class="lane" x="0" y="{y}" width="100%" height="{LANE * count}"/>')
        out.append(f'<text class="lbl" x="6" y="{y + LANE - 4}">{escape(name)}'
                   f'{f" ({count} lanes)" if count > 1 else ""}</text>')
    out.append(f'<text class="lbl" x="6" y="{axis_top + 19}">phases</text>')
    for k, (label, names) in enumerate(series):
        y = series_top + SERIES_LANE * k
        out.append(f'<text class="lbl" x="6" y="{y + SERIES_LANE // 2 + 4}">{escape(label)}:' +
                   "".join(f' <tspan fill="{SERIES_COLOURS[n % len(SERIES_COLOURS)]}">{escape(_what(name))}</tspan>'
                           for n, name in enumerate(names)) + "</text>")
    out.append('<g class="plot" clip-path="url(#plotclip)">')
    # Time axis: about ten ticks at a round step (the script draws its own at each zoom).
    out.append(f'<g class="axis" data-top="{axis_top}" data-bottom="{height - 24}">')
    step = _round_step((t1 - t0) / 10)
    tick = (t0 // step) * step
    while tick <= t1:
        if tick >= t0:
            out.append(f'<line class="tick" x1="{x(tick):.1f}" y1="{axis_top}" x2="{x(tick):.1f}" y2="{height - 24}"/>')
            anchor = "start" if x(tick) < LABEL_W + 12 else "middle"   # inside the plot's clip
            out.append(f'<text x="{x(tick):.1f}" y="{axis_top - 4}" text-anchor="{anchor}">{tick / 1e9:g}s</text>')
        tick += step
    out.append("</g>")
    # Phase bar.
    for s in phases.spans:
        out.append(_bar(x(s.start), axis_top + 4, bar_width(s.start, s.end), 22, _phase_colour(s.name),
                        f"{s.name}: {span(s.duration)} from {seconds(s.start)} s\n{s.start_evidence}",
                        f"{s.name} {span(s.duration)}", s.start - t0, s.end - t0))
    # Boundaries.
    for mark, b in phases.boundaries.items():
        out.append(f'<line class="mark at" data-s="{b.at - t0}" transform="translate({x(b.at):.1f},0)" x1="0" '
                   f'y1="{axis_top}" x2="0" y2="{height - 24}"><title>{escape(str(mark))} at {seconds(b.at)} s ({escape(b.evidence)})</title></line>')
    # The sampled series (bootchart's CPU and disk use), a bar per sample.
    for k, (label, names) in enumerate(series):
        out += _series_bars(a, label, names, x, t0, series_top + SERIES_LANE * k)
    # The spans, in their lanes.
    for ev, lane, crowded in placed:
        at = boot.at(ev)
        label = ev.name if not ev.track or ev.track == ev.name else f"{ev.name} ({ev.track})"
        colour = KIND_COLOURS.get(ev.kind, "#bab0ac")
        if (ev.attrs or {}).get("ret") not in (None, 0):
            colour = ERROR_COLOUR
        end = boot.at_end(ev)
        out.append(_bar(x(at), lanes_top + LANE * lane + 1, bar_width(at, end), LANE - 3, colour,
                        f"{label}: {span(ev.dur)} at {seconds(at)} s [{ev.kind}] {ev.where()}",
                        "" if crowded else f"{label} {span(ev.dur)}", at - t0, end - t0))
    out.append("</g>")
    drawn = (f"the {len(events)} longest spans are drawn (none shorter than {span(floor)})" if floor is not None
             else f"all {len(events)} spans are drawn, each at least a pixel wide" if events else "no span to draw")
    if unplaced:
        drawn += f"; {unplaced} span{'s' * (unplaced != 1)} not placed on this axis (a clock the logs do not align)"
    if events:
        drawn += "; hover a span for its details"
    out.append(f'<text x="10" y="{height - 6}" fill="#777">{drawn}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _series_lanes(a: Analysis) -> list[tuple[str, list[str]]]:
    """The sampled series, one lane per unit ("cpu busy %" and "cpu iowait %" share one):
    (lane label, series names)."""
    lanes: dict[str, list[str]] = {}
    for name, (clock, points) in a.boot.series.items():
        if points and clock in a.boot.clocks:
            what, _, unit = name.rpartition(" ")
            lanes.setdefault(f"{what.split()[0]} {unit}", []).append(name)
    return list(lanes.items())


def _series_bars(a: Analysis, label: str, names: list[str], x, t0: int, y: int) -> list[str]:
    """One lane: each sample a bar until the next, as high as its value (a percentage on
    0-100, other units on 0 to the lane's highest value); bars carry their times, so the
    report's zoom lays them out like spans."""
    boot = a.boot
    placed = []
    for name in names:
        clock, points = boot.series[name]
        to_ref = boot.clocks[clock].ref
        placed.append((name, [(to_ref(t), v) for t, v in points]))
    top = 100.0 if label.endswith("%") else max((v for _, pts in placed for _, v in pts), default=0.0) or 1.0
    height = SERIES_LANE - 8
    out = []
    for k, (name, pts) in enumerate(placed):
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        for (t, v), (t_next, _) in zip(pts, pts[1:]):
            h = height * min(v, top) / top
            if h <= 0:
                continue
            out.append(f'<rect class="sp" data-s="{t - t0}" data-e="{t_next - t0}" x="{x(t):.1f}" '
                       f'y="{y + height - h:.1f}" width="{max(1.0, x(t_next) - x(t)):.1f}" height="{h:.1f}" '
                       f'fill="{colour}" fill-opacity="{0.8 if k == 0 else 0.5}"><title>{escape(name)}: {v:g} '
                       f"at {seconds(t)} s</title></rect>")
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
