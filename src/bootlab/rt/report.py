"""What a trace shows, per job and per server: text and JSON for `bootlab rt trace`, and an
HTML fragment (inline SVG Gantt chart and tables) for the boot report."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path

import jinja2
from markupsafe import Markup

from .config import Config, load_config
from .gantt import gantt_svg
from .overheads import measure as measure_overheads
from .schedulability import Analysis, analyze
from .schedule import Schedule
from .texttable import format_table
from .trace import Trace, read_trace
from .units import NS_PER


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
    cpus: tuple[int, ...] = ()  # the CPUs its jobs ran on (cpu= of the job events; 0 without)
    migrations: int = 0        # resumptions on another CPU than the job last ran on
    above_bound: int = 0       # completed jobs whose response time is above the bound

    @property
    def bound_exceeded(self) -> bool:
        """A measured response time above the analytical bound: the analysis' promise broken."""
        return self.above_bound > 0


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

    @property
    def bound_exceeded(self) -> bool:
        """The budget ran out later after replenishment than the analysis allows."""
        return self.bound is not None and self.worst_depletion is not None and self.worst_depletion > self.bound


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
        tuple(sorted({g.cpu for g in schedule.segments if g.owner == task})),
        sum(j.migrations for j in jobs),
        _above(jobs, analysis.task_bound_ns(task) if analysis else None),
    ) for task, jobs in by_task.items()]


def _above(jobs: list, bound: int | None) -> int:
    return 0 if bound is None else sum(j.response is not None and j.response > bound for j in jobs)


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
    """Milliseconds to the microsecond, always three decimals: columns of them align."""
    return "-" if ns is None else f"{Decimal(ns - origin) / NS_PER['ms']:.3f}"


def _us(ns: int) -> str:
    return f"{Decimal(ns) / NS_PER['us']:.1f}"


def violations(tasks: list[TaskStats], servers: list[ServerStats]) -> list[str]:
    """What the trace shows beyond the configuration's promises: a response time above its
    analytical bound, a period that used more than the budget, a budget exhausted later
    than the server's bound.  Each one is a violation, whether or not a deadline was missed."""
    out = [f"{t.label}: worst response {_ms(t.worst_response)} ms is above its analytical bound of {_ms(t.bound)} ms "
           f"({t.above_bound} of {t.completed} completed jobs above it)"
           for t in tasks if t.bound_exceeded]
    for s in servers:
        if s.overruns:
            out.append(f"{s.label}: {s.overruns} period{'s' * (s.overruns != 1)} used more than the budget of "
                       f"{_ms(s.budget)} ms (most used {_ms(s.worst_used)} ms)")
        if s.bound_exceeded:
            out.append(f"{s.label}: budget exhausted {_ms(s.worst_depletion)} ms after replenishment, later than its "
                       f"analytical bound of {_ms(s.bound)} ms")
    return out


def problems_text(trace: Trace, schedule: Schedule) -> list[str]:
    lines = []
    if trace.damage:
        lines.append(f"damage: {trace.damage} (the readable part before it is used)")
    lines += [f"warning: {p}" for p in trace.problems if not p.damage]
    lines += [f"inconsistent: {a}" for a in schedule.anomalies]
    lines += [f"overflow: the recorder lost {o['lost']} events before t={_ms(o.time, schedule.start)} ms" for o in schedule.overflows]
    return lines


def to_text(trace: Trace, schedule: Schedule, analysis: Analysis | None = None, cause: str | None = None) -> str:
    origin = schedule.start
    tasks = task_stats(schedule, analysis)
    broken = violations(tasks, server_stats(schedule, analysis))
    out = [f"{trace.source}: plugin {trace.plugin or 'unknown'}, {len(trace.events)} events, "
           f"{_ms(schedule.end, origin)} ms from the first event; times in ms, instants from the first event"]
    out += problems_text(trace, schedule)
    out += [f"VIOLATION: {v}" for v in broken]
    if broken and cause:
        out.append(f"likely cause: {cause}")
    out += ["", "Tasks (ran: CPU time by the framework's events; on CPU: by the kernel's sched_switch)"]
    multicore = schedule.multicore()
    out.append(format_table(
        ["task", "id", "server", "jobs", "completed", "worst response ms", "bound ms", "worst lateness ms", "misses",
         "ran ms", "on CPU ms", *(["CPUs", "migrations"] if multicore else []), ""],
        [[s.label, s.task, "-" if s.server is None else schedule.server_label(s.server), s.jobs, s.completed,
          _ms(s.worst_response), _ms(s.bound), _ms(s.worst_lateness), s.misses, _ms(s.executed), _ms(s.on_cpu),
          *([",".join(map(str, s.cpus)) or "-", s.migrations] if multicore else []),
          "ABOVE BOUND" if s.bound_exceeded else ""]
         for s in tasks]))
    out += ["", "Jobs (lateness = completion - deadline; negative is early)"]
    out.append(format_table(
        ["task", "job", "release ms", "deadline ms", "completion ms", "response ms", "lateness ms", "missed"],
        [[schedule.task_label(j.task), j.job, _ms(j.release, origin), _ms(j.deadline, origin),
          _ms(j.completion, origin), _ms(j.response), _ms(j.lateness), "MISS" if j.missed(schedule.end) else ""]
         for j in sorted(schedule.jobs.values(), key=lambda j: (j.release if j.release is not None else -1, j.task, j.job))]))
    overheads = measure_overheads(schedule)
    if overheads:
        out += ["", "Overhead per job: response - wcet of the jobs that ran alone on their CPU (charged in the bounds "
                    "by --overhead-us)"]
        out.append(format_table(["CPU", "jobs measured", "median us", "90th percentile us", "worst us"],
                                [[o.cpu, o.jobs, _us(o.median), _us(o.p90), _us(o.worst)] for o in overheads]))
    if schedule.periods:
        out += ["", "Servers: budget used per period (used = time active; busy = its tasks running)"]
        out.append(format_table(
            ["server", "period start ms", "budget ms", "used ms", "busy ms", "depleted after ms", "complete"],
            [[schedule.server_label(p.server), _ms(p.start, origin), _ms(p.budget), _ms(p.used), _ms(p.busy),
              _ms(p.depleted_at - p.start if p.depleted_at is not None else None), "yes" if p.complete else "no"]
             for p in schedule.periods]))
    return "\n".join(out)


def to_dict(trace: Trace, schedule: Schedule, analysis: Analysis | None = None, cause: str | None = None) -> dict:
    """Everything in nanoseconds on the trace's clock; `start_ns` is the first event."""
    tasks, servers = task_stats(schedule, analysis), server_stats(schedule, analysis)
    broken = violations(tasks, servers)
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
        "violations": broken,
        "likely_cause": cause if broken else None,
        "tasks": [{**asdict(s), "bound_exceeded": s.bound_exceeded} for s in tasks],
        "jobs": [{**asdict(j), "response": j.response, "lateness": j.lateness, "missed": j.missed(schedule.end)}
                 for j in sorted(schedule.jobs.values(), key=lambda j: (j.task, j.job))],
        "servers": [{**asdict(s), "bound_exceeded": s.bound_exceeded} for s in servers],
        "periods": [asdict(p) for p in schedule.periods],
        "overheads": [asdict(o) for o in measure_overheads(schedule)],
        "sched_switch_slices": len(schedule.cpu),
    }


_SECTION = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string("""\
<section class="bootlab-rt">
<h2>Real-time schedule</h2>
<p>{{ source }}: plugin {{ plugin }}, {{ span }} ms traced, {{ jobs }} jobs, {{ misses }} deadline misses,
{% if violations %}<b class="warn">{{ violations | length }} violation{{ "s" if violations | length != 1 }} of the analysis</b>{% else %}no violation of the analysis{% endif %}.</p>
{% if violations %}<ul class="bootlab-rt-violations">{% for v in violations %}<li class="warn">violation: {{ v }}</li>{% endfor %}
{% if cause %}<li class="note">likely cause: {{ cause }}</li>{% endif %}</ul>{% endif %}
{% if problems %}<ul class="bootlab-rt-problems">{% for p in problems %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}
<div class="bootlab-rt-gantt zoom">{{ svg }}</div>
<table class="bootlab-rt-tasks">
<caption>Tasks: response times{% if analyzed %} against the analysis{% endif %}</caption>
<tr><th>task</th><th>server</th><th class="num">jobs</th><th class="num">completed</th><th class="num">worst response (ms)</th>{% if analyzed %}<th class="num">bound (ms)</th>{% endif %}<th class="num">worst lateness (ms)</th><th class="num">misses</th></tr>
{% for t in tasks %}<tr{% if t.exceeded %} class="violation" title="response time above the analytical bound"{% endif %}><td>{{ t.label }}</td><td>{{ t.server }}</td><td class="num">{{ t.jobs }}</td><td class="num">{{ t.completed }}</td><td class="num">{{ t.worst_response }}</td>{% if analyzed %}<td class="num">{{ t.bound }}</td>{% endif %}<td class="num">{{ t.worst_lateness }}</td><td class="num">{{ t.misses }}</td></tr>
{% endfor %}</table>
{% if servers %}<table class="bootlab-rt-servers">
<caption>Servers: budget per period</caption>
<tr><th>server</th><th class="num">periods</th><th class="num">budget (ms)</th><th class="num">most used (ms)</th><th class="num">overruns</th><th class="num">latest depletion (ms)</th>{% if analyzed %}<th class="num">bound (ms)</th>{% endif %}</tr>
{% for s in servers %}<tr{% if s.exceeded %} class="violation" title="budget overrun or exhausted later than the analytical bound"{% endif %}><td>{{ s.label }}</td><td class="num">{{ s.periods }}</td><td class="num">{{ s.budget }}</td><td class="num">{{ s.worst_used }}</td><td class="num">{{ s.overruns }}</td><td class="num">{{ s.worst_depletion }}</td>{% if analyzed %}<td class="num">{{ s.bound }}</td>{% endif %}</tr>
{% endfor %}</table>{% endif %}
{% if missed %}<table class="bootlab-rt-misses">
<caption>Missed deadlines (instants in ms from the first event)</caption>
<tr><th>task</th><th class="num">job</th><th class="num">release</th><th class="num">deadline</th><th class="num">completion</th></tr>
{% for j in missed %}<tr class="violation"><td>{{ j.task }}</td><td class="num">{{ j.job }}</td><td class="num">{{ j.release }}</td><td class="num">{{ j.deadline }}</td><td class="num">{{ j.completion }}</td></tr>
{% endfor %}</table>{% endif %}
</section>
""")


def html_section(trace: Trace | str | Path, config: Config | str | Path | None = None, cause: str | None = None) -> str:
    """A self-contained HTML fragment (no scripts, no external files) showing a recorded or
    simulated trace; with a configuration, the measured response times sit beside the
    analytical bounds and tasks and servers carry their configured names; `cause` is what
    the caller knows of why a bound may be exceeded (see check.likely_cause)."""
    trace = trace if isinstance(trace, Trace) else read_trace(trace)
    config = config if isinstance(config, Config) or config is None else load_config(config)
    schedule = Schedule.from_trace(trace)
    analysis = None
    if config is not None:
        schedule.name_from(config)
        analysis = analyze(config)
    return _fragment(trace, schedule, analysis, cause)


def html_page(trace: Trace, schedule: Schedule, analysis: Analysis | None, cause: str | None = None) -> str:
    """`bootlab rt trace --html`: the fragment as a page of its own, with the reports' script
    that zooms and pans the chart."""
    from ..render.html import Section, page

    return page(f"Real-time schedule of {Path(trace.source).name}", [Section("", _fragment(trace, schedule, analysis, cause))])


def _fragment(trace: Trace, schedule: Schedule, analysis: Analysis | None, cause: str | None) -> str:
    origin = schedule.start
    tasks = task_stats(schedule, analysis)
    servers = server_stats(schedule, analysis)
    broken = violations(tasks, servers)
    return _SECTION.render(
        violations=broken,
        cause=cause,
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
                "worst_lateness": _ms(t.worst_lateness), "misses": t.misses, "exceeded": t.bound_exceeded} for t in tasks],
        servers=[{"label": s.label, "periods": s.periods, "budget": _ms(s.budget), "worst_used": _ms(s.worst_used),
                  "overruns": s.overruns, "worst_depletion": _ms(s.worst_depletion), "bound": _ms(s.bound),
                  "exceeded": s.bound_exceeded or s.overruns > 0} for s in servers],
        missed=[{"task": schedule.task_label(j.task), "job": j.job, "release": _ms(j.release, origin),
                 "deadline": _ms(j.deadline, origin), "completion": _ms(j.completion, origin)}
                for j in sorted(schedule.jobs.values(), key=lambda j: (j.task, j.job)) if j.missed(schedule.end)],
    )
