"""What a trace shows, per job and per server: text and JSON for `bootlab rt trace`, and an
HTML fragment (inline SVG Gantt chart and tables) for the boot report."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup

from .config import Config, load_config
from .gantt import gantt_svg
from .schedulability import Analysis, analyze
from .schedule import Schedule
from .texttable import format_table
from .trace import Trace, read_trace
from .units import format_duration


@dataclass(frozen=True)
class TaskStats:
    task: int
    label: str
    server: int | None
    jobs: int
    completed: int
    worst_response: int | None
    worst_lateness: int | None
    misses: int
    bound: int | None          # analytical WCRT in ns, when a configuration is given
    executed: int              # CPU time by the framework's events
    on_cpu: int | None         # CPU time by the kernel's sched_switch events, when recorded


@dataclass(frozen=True)
class ServerStats:
    server: int
    label: str
    periods: int               # complete periods in the trace
    budget: int | None
    worst_used: int
    worst_depletion: int | None  # longest time from replenishment to depletion
    overruns: int              # periods that used more than the budget
    bound: int | None          # analytical server WCRT in ns


def _worst(values: list[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def task_stats(schedule: Schedule, analysis: Analysis | None = None) -> list[TaskStats]:
    by_task: dict[int, list] = {task: [] for task in schedule.task_ids()}
    for job in schedule.jobs.values():
        by_task[job.task].append(job)
    on_cpu: dict[int, int] = {}
    for piece in schedule.cpu:
        if piece.task is not None:
            on_cpu[piece.task] = on_cpu.get(piece.task, 0) + piece.end - piece.start
    return [TaskStats(
        task, schedule.task_label(task), schedule.task_server(task), len(jobs),
        sum(j.completion is not None for j in jobs),
        _worst([j.response for j in jobs]), _worst([j.lateness for j in jobs]),
        sum(j.missed(schedule.end) for j in jobs),
        analysis.task_bound_ns(task) if analysis else None,
        sum(g.length for g in schedule.segments if g.owner == task),
        on_cpu.get(task, 0) if schedule.cpu else None,
    ) for task, jobs in by_task.items()]


def server_stats(schedule: Schedule, analysis: Analysis | None = None) -> list[ServerStats]:
    result = []
    for server in schedule.server_ids():
        periods = [p for p in schedule.periods if p.server == server and p.complete]
        budget = schedule.servers.get(server, {}).get("budget")
        result.append(ServerStats(
            server, schedule.server_label(server), len(periods), budget,
            max((p.used for p in periods), default=0),
            _worst([p.depleted_at - p.start if p.depleted_at is not None else None for p in periods]),
            sum(budget is not None and p.used > budget for p in periods),
            analysis.server_bound_ns(server) if analysis else None,
        ))
    return result


def _ms(ns: int | None, origin: int = 0) -> str:
    return "-" if ns is None else format_duration(ns - origin, "ms")


def problems_text(trace: Trace, schedule: Schedule) -> list[str]:
    lines = []
    if trace.damage:
        lines.append(f"damage: {trace.damage} (the readable part before it is used)")
    lines += [f"warning: {p}" for p in trace.problems if not p.damage]
    lines += [f"inconsistent: {a}" for a in schedule.anomalies]
    lines += [f"overflow: the recorder lost {o['lost']} events before t={_ms(o.time, schedule.start)} ms" for o in schedule.overflows]
    return lines


def to_text(trace: Trace, schedule: Schedule, analysis: Analysis | None = None) -> str:
    origin = schedule.start
    out = [f"{trace.source}: plugin {trace.plugin or 'unknown'}, {len(trace.events)} events, "
           f"{_ms(schedule.end, origin)} ms from the first event; times in ms from it"]
    out += problems_text(trace, schedule)
    out += ["", "Tasks (ran: CPU time by the framework's events; on CPU: by the kernel's sched_switch)"]
    out.append(format_table(
        ["task", "id", "server", "jobs", "completed", "worst response", "bound", "worst lateness", "misses", "ran", "on CPU"],
        [[s.label, s.task, "-" if s.server is None else schedule.server_label(s.server), s.jobs, s.completed,
          _ms(s.worst_response), _ms(s.bound), _ms(s.worst_lateness), s.misses, _ms(s.executed), _ms(s.on_cpu)]
         for s in task_stats(schedule, analysis)]))
    out += ["", "Jobs (lateness = completion - deadline; negative is early)"]
    out.append(format_table(
        ["task", "job", "release", "deadline", "completion", "response", "lateness", "missed"],
        [[schedule.task_label(j.task), j.job, _ms(j.release, origin), _ms(j.deadline, origin),
          _ms(j.completion, origin), _ms(j.response), _ms(j.lateness), "MISS" if j.missed(schedule.end) else ""]
         for j in sorted(schedule.jobs.values(), key=lambda j: (j.release if j.release is not None else -1, j.task, j.job))]))
    if schedule.periods:
        out += ["", "Servers: budget used per period (used = time active; busy = its tasks running)"]
        out.append(format_table(
            ["server", "period start", "budget", "used", "busy", "depleted after", "complete"],
            [[schedule.server_label(p.server), _ms(p.start, origin), _ms(p.budget), _ms(p.used), _ms(p.busy),
              _ms(p.depleted_at - p.start if p.depleted_at is not None else None), "yes" if p.complete else "no"]
             for p in schedule.periods]))
    return "\n".join(out)


def to_dict(trace: Trace, schedule: Schedule, analysis: Analysis | None = None) -> dict:
    """Everything in nanoseconds on the trace's clock; `start_ns` is the first event."""
    return {
        "source": trace.source,
        "plugin": trace.plugin,
        "start_ns": schedule.start,
        "end_ns": schedule.end,
        "events": len(trace.events),
        "damage": str(trace.damage) if trace.damage else None,
        "warnings": [str(p) for p in trace.problems if not p.damage],
        "anomalies": schedule.anomalies,
        "overflows": [{"time_ns": o.time, "lost": o["lost"]} for o in schedule.overflows],
        "tasks": [asdict(s) for s in task_stats(schedule, analysis)],
        "jobs": [{**asdict(j), "response": j.response, "lateness": j.lateness, "missed": j.missed(schedule.end)}
                 for j in sorted(schedule.jobs.values(), key=lambda j: (j.task, j.job))],
        "servers": [asdict(s) for s in server_stats(schedule, analysis)],
        "periods": [asdict(p) for p in schedule.periods],
        "sched_switch_slices": len(schedule.cpu),
    }


_SECTION = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string("""\
<section class="bootlab-rt">
<h2>Real-time schedule</h2>
<p>{{ source }}: plugin {{ plugin }}, {{ span }} ms traced, {{ jobs }} jobs, {{ misses }} deadline misses.</p>
{% if problems %}<ul class="bootlab-rt-problems">{% for p in problems %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
<div class="bootlab-rt-gantt" style="overflow-x:auto">{{ svg }}</div>
<table class="bootlab-rt-tasks">
<caption>Tasks: response times (ms){% if analyzed %} against the analysis{% endif %}</caption>
<tr><th>task</th><th>server</th><th>jobs</th><th>completed</th><th>worst response</th>{% if analyzed %}<th>bound</th>{% endif %}<th>worst lateness</th><th>misses</th></tr>
{% for t in tasks %}<tr><td>{{ t.label }}</td><td>{{ t.server }}</td><td>{{ t.jobs }}</td><td>{{ t.completed }}</td><td>{{ t.worst_response }}</td>{% if analyzed %}<td>{{ t.bound }}</td>{% endif %}<td>{{ t.worst_lateness }}</td><td>{{ t.misses }}</td></tr>
{% endfor %}</table>
{% if servers %}<table class="bootlab-rt-servers">
<caption>Servers: budget per period (ms)</caption>
<tr><th>server</th><th>periods</th><th>budget</th><th>most used</th><th>overruns</th><th>latest depletion</th>{% if analyzed %}<th>bound</th>{% endif %}</tr>
{% for s in servers %}<tr><td>{{ s.label }}</td><td>{{ s.periods }}</td><td>{{ s.budget }}</td><td>{{ s.worst_used }}</td><td>{{ s.overruns }}</td><td>{{ s.worst_depletion }}</td>{% if analyzed %}<td>{{ s.bound }}</td>{% endif %}</tr>
{% endfor %}</table>{% endif %}
{% if missed %}<table class="bootlab-rt-misses">
<caption>Missed deadlines (ms from the first event)</caption>
<tr><th>task</th><th>job</th><th>release</th><th>deadline</th><th>completion</th></tr>
{% for j in missed %}<tr><td>{{ j.task }}</td><td>{{ j.job }}</td><td>{{ j.release }}</td><td>{{ j.deadline }}</td><td>{{ j.completion }}</td></tr>
{% endfor %}</table>{% endif %}
</section>
""")


def html_section(trace: Trace | str | Path, config: Config | str | Path | None = None) -> str:
    """A self-contained HTML fragment (no scripts, no external files) showing a recorded or
    simulated trace; with a configuration, the measured response times sit beside the
    analytical bounds and tasks and servers carry their configured names."""
    trace = trace if isinstance(trace, Trace) else read_trace(trace)
    config = config if isinstance(config, Config) or config is None else load_config(config)
    schedule = Schedule.from_trace(trace)
    analysis = None
    if config is not None:
        schedule.name_from(config)
        analysis = analyze(config)
    origin = schedule.start
    tasks = task_stats(schedule, analysis)
    return _SECTION.render(
        source=Path(trace.source).name,
        plugin=trace.plugin or "unknown",
        span=_ms(schedule.end, origin),
        jobs=len(schedule.jobs),
        misses=sum(t.misses for t in tasks),
        problems=problems_text(trace, schedule),
        svg=Markup(gantt_svg(schedule)),
        analyzed=analysis is not None,
        tasks=[{"label": t.label, "server": "-" if t.server is None else schedule.server_label(t.server), "jobs": t.jobs,
                "completed": t.completed, "worst_response": _ms(t.worst_response), "bound": _ms(t.bound),
                "worst_lateness": _ms(t.worst_lateness), "misses": t.misses} for t in tasks],
        servers=[{"label": s.label, "periods": s.periods, "budget": _ms(s.budget), "worst_used": _ms(s.worst_used),
                  "overruns": s.overruns, "worst_depletion": _ms(s.worst_depletion), "bound": _ms(s.bound)}
                 for s in server_stats(schedule, analysis)],
        missed=[{"task": schedule.task_label(j.task), "job": j.job, "release": _ms(j.release, origin),
                 "deadline": _ms(j.deadline, origin), "completion": _ms(j.completion, origin)}
                for j in sorted(schedule.jobs.values(), key=lambda j: (j.task, j.job)) if j.missed(schedule.end)],
    )
