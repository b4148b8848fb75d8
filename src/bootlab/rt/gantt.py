"""Gantt chart of a schedule: one row per server (when it is active) and per task (when its
jobs run), release and deadline marks, misses in red, and the kernel's own view
(sched_switch) in a last row when the trace has it.  The rows are laid out once
(`gantt_rows`) and drawn either as SVG text or as a PNG through matplotlib."""

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
    if schedule.cpu:
        cpu = Row("CPU (sched_switch)")
        for piece in schedule.cpu:
            if piece.pid != 0:
                shade = color.get(piece.task, OTHER_COLOR)
                cpu.bars.append(Bar(piece.start, piece.end, shade, f"{piece.comm or 'pid'} {piece.pid}"))
        ordered.append(cpu)
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
AXIS_HEIGHT = 30


def gantt_svg(schedule: Schedule) -> str:
    rows = gantt_rows(schedule)
    origin, span = schedule.start, max(schedule.end - schedule.start, 1)
    scale = PLOT_WIDTH / span
    height = len(rows) * ROW_HEIGHT + AXIS_HEIGHT

    def x(t: int) -> float:
        return round(LABEL_WIDTH + (t - origin) * scale, 2)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_WIDTH + PLOT_WIDTH + 10}" height="{height}" '
           f'font-family="sans-serif" font-size="11">']
    for i, row in enumerate(rows):
        top = i * ROW_HEIGHT
        mid = top + ROW_HEIGHT / 2
        if i % 2:
            out.append(f'<rect x="0" y="{top}" width="{LABEL_WIDTH + PLOT_WIDTH}" height="{ROW_HEIGHT}" fill="#f7f7f7"/>')
        weight = ' font-weight="bold"' if row.is_server else ""
        out.append(f'<text x="4" y="{mid + 4}"{weight}>{escape(row.label)}</text>')
        for bar in row.bars:
            width = max(x(bar.end) - x(bar.start), 0.5)
            out.append(f'<rect x="{x(bar.start)}" y="{top + 4}" width="{round(width, 2)}" height="{ROW_HEIGHT - 8}" '
                       f'fill="{bar.color}"><title>{escape(bar.title)}</title></rect>')
        for mark in row.marks:
            out.append(_svg_mark(x(mark.time), top, mark))
    axis = len(rows) * ROW_HEIGHT
    out.append(f'<line x1="{LABEL_WIDTH}" y1="{axis}" x2="{LABEL_WIDTH + PLOT_WIDTH}" y2="{axis}" stroke="#333"/>')
    step, ticks = _ticks(span)
    unit = "ms" if step >= 100_000 else "us"
    for tick in ticks:
        out.append(f'<line x1="{x(origin + tick)}" y1="{axis}" x2="{x(origin + tick)}" y2="{axis + 4}" stroke="#333"/>')
        out.append(f'<text x="{x(origin + tick)}" y="{axis + 16}" text-anchor="middle">{format_duration(tick, unit)}</text>')
    out.append(f'<text x="{LABEL_WIDTH + PLOT_WIDTH}" y="{axis + 28}" text-anchor="end">{unit} from the first event</text>')
    out.append("</svg>")
    return "\n".join(out)


def _svg_mark(px: float, top: int, mark: Mark) -> str:
    title = f"<title>{escape(mark.title)}</title>"
    if mark.kind == "release":
        return f'<path d="M{px},{top + 2} l-3,5 h6 z" fill="#333">{title}</path>'
    if mark.kind in ("deadline", "miss"):
        shade = MISS_COLOR if mark.kind == "miss" else "#333"
        return f'<path d="M{px},{top + ROW_HEIGHT - 2} l-3,-5 h6 z" fill="{shade}">{title}</path>'
    if mark.kind == "replenish":
        return f'<line x1="{px}" y1="{top + 1}" x2="{px}" y2="{top + ROW_HEIGHT - 1}" stroke="#555" stroke-dasharray="2,2">{title}</line>'
    return f'<path d="M{px},{top + ROW_HEIGHT / 2} l4,-4 v8 z" fill="#555">{title}</path>'


def gantt_png(schedule: Schedule, path: str | Path) -> None:
    # Figure + Agg canvas directly: no pyplot global state, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = gantt_rows(schedule)
    origin = schedule.start
    span = max(schedule.end - origin, 1)
    step, _ = _ticks(span)
    unit = "ms" if step >= 100_000 else "us"
    per = 1_000_000 if unit == "ms" else 1_000
    figure = Figure(figsize=(12, 0.35 * len(rows) + 1.2))
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
    figure.tight_layout()
    figure.savefig(str(path), format="png", dpi=100)
