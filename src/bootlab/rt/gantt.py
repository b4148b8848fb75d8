"""Gantt chart of a schedule: one row per server (when it is active) and per task (when its
jobs run), release and deadline marks, misses in red, a row per CPU when jobs ran on
several, and the kernel's own view (sched_switch) in a last row when the trace has it.  The
rows are laid out once (`gantt_rows`) and drawn either as SVG text or as a PNG through
matplotlib."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from .schedule import Schedule
from .units import format_duration

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759")
SERVER_COLOR = "#d9d9d9"
OTHER_COLOR = "#9e9e9e"
MISS_COLOR = "#d62728"


@dataclass(frozen=True)
class Bar:
    start: int
    end: int
    color: str
    title: str


@dataclass(frozen=True)
class Mark:
    time: int
    kind: str        # "release", "deadline", "miss", "replenish", "deplete"
    title: str


@dataclass
class Row:
    label: str
    bars: list[Bar] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    is_server: bool = False


def gantt_rows(schedule: Schedule) -> list[Row]:
    task_ids = schedule.task_ids()
    color = {task: PALETTE[i % len(PALETTE)] for i, task in enumerate(task_ids)}
    rows: dict[tuple[int, int], Row] = {}   # (server or -1, 0 for the server row / 1 + task)
    for server in schedule.server_ids():
        rows[(server, 0)] = Row(schedule.server_label(server), is_server=True)
    for task in task_ids:
        server = schedule.task_server(task)
        rows[(server if server is not None else -1, 1 + task)] = Row(
            f"{schedule.task_label(task)}" + (f" ({schedule.server_label(server)})" if server is not None else ""))
    task_row = {task: rows[(schedule.task_server(task) if schedule.task_server(task) is not None else -1, 1 + task)]
                for task in task_ids}
    for w in schedule.windows:
        rows[(w.owner, 0)].bars.append(Bar(w.start, w.end, SERVER_COLOR, f"{schedule.server_label(w.owner)} active"))
    for p in schedule.periods:
        rows[(p.server, 0)].marks.append(Mark(p.start, "replenish", f"replenished {format_duration(p.budget, 'ms')} ms"))
        if p.depleted_at is not None:
            rows[(p.server, 0)].marks.append(Mark(p.depleted_at, "deplete", "depleted"))
    for g in schedule.segments:
        task_row[g.owner].bars.append(Bar(g.start, g.end, color[g.owner], f"{schedule.task_label(g.owner)} job {g.job}"))
    for job in schedule.jobs.values():
        row = task_row[job.task]
        if job.release is not None:
            row.marks.append(Mark(job.release, "release", f"job {job.job} released"))
        if job.deadline is not None:
            missed = job.missed(schedule.end)
            row.marks.append(Mark(job.deadline, "miss" if missed else "deadline", f"job {job.job} deadline" + (" missed" if missed else "")))
    ordered = [rows[key] for key in sorted(rows)]
    for row in ordered:   # deadlines beyond the end of the trace are not drawn
        row.marks = [m for m in row.marks if schedule.start <= m.time <= schedule.end]
    if schedule.multicore():   # a row per CPU: which job it ran, so migrations show
        for cpu in sorted({g.cpu for g in schedule.segments}):
            ordered.append(Row(f"CPU {cpu}", [Bar(g.start, g.end, color[g.owner], f"{schedule.task_label(g.owner)} job {g.job}")
                                              for g in schedule.segments if g.cpu == cpu]))
    # The kernel's view: a row per CPU when the switches come from several.
    cpus = sorted({piece.cpu for piece in schedule.cpu if piece.cpu is not None})
    for cpu in cpus if len(cpus) > 1 else ([None] if schedule.cpu else []):
        row = Row("CPU (sched_switch)" if cpu is None else f"CPU {cpu} (sched_switch)")
        for piece in schedule.cpu:
            if piece.pid != 0 and (cpu is None or piece.cpu == cpu):
                shade = color.get(piece.task, OTHER_COLOR)
                row.bars.append(Bar(piece.start, piece.end, shade, f"{piece.comm or 'pid'} {piece.pid}"))
        ordered.append(row)
    return ordered


def _ticks(span: int) -> tuple[int, list[int]]:
    """A 1-2-5 step giving about ten ticks over `span` ns, and the ticks."""
    raw = max(span, 1) / 10
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    step = max(int(step), 1)
    return step, list(range(0, span + 1, step))


LABEL_WIDTH = 170
PLOT_WIDTH = 1000
ROW_HEIGHT = 22
LEGEND_HEIGHT = 24
AXIS_HEIGHT = 30
WINDOW_BARS = 150       # with more bars than this, the page opens on a window holding about as many


def legend(schedule: Schedule, rows: list[Row]) -> list[tuple[str, str, str]]:
    """(kind of key, colour, text): what the chart's colours and marks mean."""
    task_ids = schedule.task_ids()
    keys = [("bar", PALETTE[i % len(PALETTE)], schedule.task_label(task)) for i, task in enumerate(task_ids)]
    if any(row.is_server for row in rows):
        keys.append(("bar", SERVER_COLOR, "server active"))
    if schedule.cpu:
        keys.append(("bar", OTHER_COLOR, "other thread (sched_switch)"))
    keys += [("release", "#333", "release"), ("deadline", "#333", "deadline"), ("miss", MISS_COLOR, "deadline missed")]
    if schedule.periods:
        keys += [("replenish", "#555", "budget replenished"), ("deplete", "#555", "budget depleted")]
    return keys


def gantt_svg(schedule: Schedule) -> str:
    """The chart as SVG: a legend, one row per server and task, the axis in ms from the
    first event.  Bars and marks carry their times (data-s, data-e: ns from the first
    event) so that the HTML report zooms and pans it (templates/report.html.j2)."""
    rows = gantt_rows(schedule)
    origin, span = schedule.start, max(schedule.end - schedule.start, 1)
    scale = PLOT_WIDTH / span
    top = LEGEND_HEIGHT
    axis = top + len(rows) * ROW_HEIGHT
    height = axis + AXIS_HEIGHT
    bars = sum(len(row.bars) for row in rows)
    window = f' data-view="{span * WINDOW_BARS // bars}"' if bars > WINDOW_BARS else ""

    def x(t: int) -> float:
        return round(LABEL_WIDTH + (t - origin) * scale, 2)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="gantt timechart" width="{LABEL_WIDTH + PLOT_WIDTH + 10}" '
           f'height="{height}" viewBox="0 0 {LABEL_WIDTH + PLOT_WIDTH + 10} {height}" font-family="sans-serif" '
           f'font-size="11" data-plot-x="{LABEL_WIDTH}" data-span="{span}" data-origin="0" data-unit="ms"{window}>',
           "<style>.in{fill:#fff;pointer-events:none}.tick{stroke:#ddd}</style>",
           f'<defs><clipPath id="ganttclip"><rect class="clip" x="{LABEL_WIDTH}" y="0" width="{PLOT_WIDTH}" '
           f'height="{height}"/></clipPath></defs>']
    out += _svg_legend(legend(schedule, rows))
    for i, row in enumerate(rows):
        y = top + i * ROW_HEIGHT
        if i % 2:
            out.append(f'<rect x="0" y="{y}" width="100%" height="{ROW_HEIGHT}" fill="#f7f7f7"/>')
        weight = ' font-weight="bold"' if row.is_server else ""
        out.append(f'<text x="4" y="{y + ROW_HEIGHT / 2 + 4}"{weight}>{escape(row.label)}</text>')
    out.append('<g clip-path="url(#ganttclip)">')
    out.append(f'<g class="axis" data-top="{top}" data-bottom="{axis}" data-labels="below"></g>')
    for i, row in enumerate(rows):
        y = top + i * ROW_HEIGHT
        for bar in row.bars:
            width = max(x(bar.end) - x(bar.start), 1)
            s, e = bar.start - origin, bar.end - origin
            label = bar.title.rsplit(" ", 2)[-2:] if " job " in bar.title else None
            out.append(f'<g><title>{escape(bar.title)}: {format_duration(bar.end - bar.start, "ms")} ms from '
                       f'{format_duration(s, "ms")} ms</title><rect class="sp" data-s="{s}" data-e="{e}" x="{x(bar.start)}" '
                       f'y="{y + 4}" width="{round(width, 2)}" height="{ROW_HEIGHT - 8}" fill="{bar.color}"/>'
                       + (f'<text class="in" x="{x(bar.start) + 3}" y="{y + ROW_HEIGHT / 2 + 4}" display="none">'
                          f'{escape(" ".join(label))}</text>' if label else "") + "</g>")
        for mark in row.marks:
            out.append(_svg_mark(x(mark.time), y, mark, mark.time - origin))
    out.append("</g>")
    out.append(f'<line x1="{LABEL_WIDTH}" y1="{axis}" x2="100%" y2="{axis}" stroke="#333"/>')
    step, ticks = _ticks(span)
    unit = "ms" if step >= 100_000 else "us"
    for tick in ticks:   # the page's script draws its own at each zoom
        out.append(f'<text class="static" x="{x(origin + tick)}" y="{axis + 16}" text-anchor="middle">'
                   f'{format_duration(tick, unit)}</text>')
    out.append(f'<text x="4" y="{axis + 16}">{unit} since the first event</text>')
    out.append("</svg>")
    return "\n".join(out)


def _svg_legend(keys: list[tuple[str, str, str]]) -> list[str]:
    out = ['<g class="legend" transform="translate(4,14)">']
    x = 0.0
    for kind, colour, text in keys:
        if kind == "bar":
            out.append(f'<rect x="{x}" y="-9" width="12" height="10" fill="{colour}"/>')
        else:
            out.append(_svg_mark(x + 6, -14, Mark(0, kind, text), None).replace("<title>", "<title>legend: "))
        out.append(f'<text x="{x + 16}" y="0">{escape(text)}</text>')
        x += round(24 + 6.2 * len(text), 1)
    out.append("</g>")
    return out


def _svg_mark(px: float, top: int, mark: Mark, at: int | None) -> str:
    """A mark at px; with its time `at`, a mark the page's script moves when zooming."""
    title = f"<title>{escape(mark.title)}</title>"
    moved = f' class="at" data-s="{at}" transform="translate({px},0)"' if at is not None else f' transform="translate({px},0)"'
    if mark.kind == "release":
        shape = f'<path d="M0,{top + 2} l-3,5 h6 z" fill="#333"/>'
    elif mark.kind in ("deadline", "miss"):
        shade = MISS_COLOR if mark.kind == "miss" else "#333"
        shape = f'<path d="M0,{top + ROW_HEIGHT - 2} l-3,-5 h6 z" fill="{shade}"/>'
    elif mark.kind == "replenish":
        shape = f'<line x1="0" y1="{top + 1}" x2="0" y2="{top + ROW_HEIGHT - 1}" stroke="#555" stroke-dasharray="2,2"/>'
    else:
        shape = f'<path d="M0,{top + ROW_HEIGHT / 2} l4,-4 v8 z" fill="#555"/>'
    return f"<g{moved}>{title}{shape}</g>"


def gantt_png(schedule: Schedule, path: str | Path) -> None:
    # Figure + Agg canvas directly: no pyplot global state, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = gantt_rows(schedule)
    origin = schedule.start
    span = max(schedule.end - origin, 1)
    step, _ = _ticks(span)
    unit = "ms" if step >= 100_000 else "us"
    per = 1_000_000 if unit == "ms" else 1_000
    figure = Figure(figsize=(12, 0.35 * len(rows) + 1.7))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    marker = {"release": ("^", "#333"), "deadline": ("v", "#333"), "miss": ("v", MISS_COLOR),
              "replenish": ("|", "#555"), "deplete": ("<", "#555")}
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        axes.broken_barh([((b.start - origin) / per, (b.end - b.start) / per) for b in row.bars],
                         (y - 0.35, 0.7), facecolors=[b.color for b in row.bars])
        for kind, (symbol, shade) in marker.items():
            times = [(m.time - origin) / per for m in row.marks if m.kind == kind]
            if times:
                axes.plot(times, [y + (0.4 if kind == "release" else -0.4 if kind in ("deadline", "miss") else 0)] * len(times),
                          linestyle="none", marker=symbol, color=shade, markersize=4)
    axes.set_yticks(range(len(rows)), [r.label for r in reversed(rows)])
    axes.set_xlim(0, span / per)
    axes.set_xlabel(f"{unit} from the first event")
    axes.grid(axis="x", alpha=0.3)
    handles = [Patch(color=colour, label=text) if kind == "bar" else
               Line2D([], [], linestyle="none", marker=marker[kind][0], color=colour, label=text)
               for kind, colour, text in legend(schedule, rows)]
    figure.legend(handles=handles, loc="upper center", ncol=min(len(handles), 7), fontsize="small", frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.5 / figure.get_figheight()))
    figure.savefig(str(path), format="png", dpi=100)
