"""`bootlab rt analyze`: the analysis applied to a configuration, per server and per task.

- hierarchical plugins (hsf-*), global level: the servers are periodic tasks (C = budget,
  T = period, D = T) under fixed priority (exact response-time analysis) or EDF (the demand
  test, and Spuri's response times).
- local level: each server is the supply Γ(Π, Θ) of its tasks; the tasks are checked
  against Shin & Lee's bound and against the tighter bound that uses the server's response
  time R (budget delivered within R of each period start): fixed-priority tasks by
  response-time analysis on that supply, EDF tasks by the demand test on it (their bound:
  Spuri's response time on the supply).  Under fixed priority, whether EDF inside the server
  would also fit is reported for information.
- fp: response-time analysis (exact for synchronous release); edf: QPA (exact) and
  Spuri's response times (upper bounds).
- partitioned-fp/-edf: the tasks placed on CPUs (multicore.partition), then each CPU as fp
  or edf above; global-edf: the GFB density test (bound: the deadline); global-fp:
  Bertogna & Cirinei's response-time analysis; semi-partitioned-edf: C=D splitting
  (multicore.split_cd), EDF per CPU.

A configuration's `overhead_us` is charged to every job: each task's wcet counts it more
(the placements too, as rtctl's admission places them), and a split task's second part pays
it once more (multicore.split_cd).  Utilisation, the Liu & Layland and the hyperbolic bounds
are reported for information.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from . import analysis, multicore
from .analysis import DedicatedSupply, PeriodicSupply, PeriodicTask
from .config import Config, Server, Task
from .texttable import format_table
from .units import NS_PER, duration_number, format_duration


@dataclass
class LevelSummary:
    """Utilisation tests of one set of periodic tasks (the servers, or a flat task set)."""

    count: int
    utilization: Fraction
    liu_layland_bound: float
    hyperbolic_product: Fraction

    @classmethod
    def of(cls, tasks: list[PeriodicTask]) -> LevelSummary:
        return cls(len(tasks), analysis.utilization(tasks), analysis.liu_layland_bound(len(tasks)), analysis.hyperbolic_product(tasks))

    def to_dict(self) -> dict:
        return {
            "utilization": float(self.utilization),
            "liu_layland_bound": self.liu_layland_bound,
            "liu_layland_met": self.utilization <= self.liu_layland_bound,
            "hyperbolic_product": float(self.hyperbolic_product),
            "hyperbolic_met": self.hyperbolic_product <= 2,
        }


@dataclass
class ServerResult:
    server: Server
    wcrt: int | None              # µs; None when it exceeds the period
    task_utilization: Fraction

    @property
    def schedulable(self) -> bool:
        return self.wcrt is not None and self.wcrt <= self.server.period


@dataclass
class TaskResult:
    task: Task
    wcrt: int | None              # µs: the tightest bound (the one `check` uses)
    schedulable: bool
    method: str
    # hierarchical plugins only
    wcrt_shin_lee: int | None = None
    local_edf_schedulable: bool | None = None
    note: str = ""
    cpu: int | None = None        # partitioned plugins: where it is placed


@dataclass
class Analysis:
    config: Config
    level: LevelSummary
    servers: list[ServerResult] = field(default_factory=list)
    tasks: list[TaskResult] = field(default_factory=list)
    edf_demand: analysis.DemandTest | None = None
    placement: multicore.Placement | None = None
    split: multicore.Split | None = None

    @property
    def schedulable(self) -> bool:
        return all(s.schedulable for s in self.servers) and all(t.schedulable for t in self.tasks) and (
            self.edf_demand is None or self.edf_demand.schedulable)

    def task_bound_ns(self, task_id: int) -> int | None:
        result = next((r for r in self.tasks if r.task.id == task_id), None)
        return None if result is None or result.wcrt is None else result.wcrt * NS_PER["us"]

    def server_bound_ns(self, server_id: int) -> int | None:
        result = next((r for r in self.servers if r.server.id == server_id), None)
        return None if result is None or result.wcrt is None else result.wcrt * NS_PER["us"]


def _model(item: Server | Task) -> PeriodicTask:
    if isinstance(item, Server):
        return PeriodicTask(item.budget, item.period, item.period)
    return PeriodicTask(item.wcet, item.period, item.deadline)


def _fp_order(item: Server | Task) -> tuple[int, int]:
    """Priority 0 is the highest; ties go to the lower id."""
    return (item.priority, item.id)


def _fp_response_times(items: list, supply) -> dict[int, int | None]:
    ordered = sorted(items, key=_fp_order)
    return {
        item.id: analysis.fp_response_time(
            _model(item).wcet, [_model(h) for h in ordered[:rank]], supply, item.period)
        for rank, item in enumerate(ordered)
    }


def _edf_results(tasks: list[Task], supply, demand: analysis.DemandTest, method: str) -> list[TaskResult]:
    """Tasks under EDF on `supply`: schedulable by the demand test (exact on the supply),
    bounded by Spuri's response time on it (at most the deadline when the test holds: the
    demand due by a job's deadline is then supplied by it)."""
    return [TaskResult(task, wcrt, demand.schedulable, method)
            for task, wcrt in zip(tasks, analysis.edf_response_times([_model(t) for t in tasks], supply))]


def analyze(config: Config) -> Analysis:
    """The analysis of `config`, its overhead_us charged (the result's configuration is the
    charged one: its tasks' wcets count the overhead)."""
    return _analyze(charged(config))


def charged(config: Config) -> Config:
    """`config` whose tasks each take its overhead_us more than their wcet (overhead_us kept:
    split_cd charges a second part its own)."""
    if not config.overhead_us:
        return config
    return replace(config, tasks=tuple(replace(t, wcet=t.wcet + config.overhead_us) for t in config.tasks))


def _analyze(config: Config) -> Analysis:
    """analyze() of a configuration already charged."""
    if config.hierarchical:
        return _analyze_hierarchical(config)
    if config.multicore == "partitioned":
        return _analyze_partitioned(config)
    if config.multicore == "global":
        return _analyze_global(config)
    if config.multicore == "semi-partitioned":
        return _analyze_semi_partitioned(config)
    tasks = list(config.tasks)
    result = Analysis(config, LevelSummary.of([_model(t) for t in tasks]))
    if config.plugin == "fp":
        response = _fp_response_times(tasks, DedicatedSupply())
        for task in tasks:
            wcrt = response[task.id]
            result.tasks.append(TaskResult(task, wcrt, wcrt is not None and wcrt <= task.deadline, "response-time analysis"))
    else:
        result.edf_demand = analysis.edf_demand_test([_model(t) for t in tasks], DedicatedSupply())
        result.tasks = _edf_results(tasks, DedicatedSupply(), result.edf_demand, "EDF response time (Spuri)")
    return result


def _analyze_partitioned(config: Config) -> Analysis:
    placement = multicore.partition(config, lambda one: _analyze(one).schedulable)
    result = Analysis(config, LevelSummary.of([_model(t) for t in config.tasks]), placement=placement)
    for cpu in range(config.cpus):
        here = [t for t in config.tasks if placement.cpu_of[t.id] == cpu]
        for task_result in _analyze(multicore.cpu_config(config, here)).tasks:
            task = next(t for t in here if t.id == task_result.task.id)
            note = "fits on no CPU" if task.id in placement.unfit else ""
            result.tasks.append(replace(task_result, task=task, cpu=cpu, note=note))
    result.tasks.sort(key=lambda r: r.task.id)
    return result


def _analyze_semi_partitioned(config: Config) -> Analysis:
    """EDF on each CPU over the parts placed there (multicore.split_cd).  A task's bound is
    Spuri's on its CPU; a split task's is C' (its first part, C' = D', runs at once) plus
    the bound of its second part, released when the first ends."""
    split = multicore.split_cd(config)
    result = Analysis(config, LevelSummary.of([_model(t) for t in config.tasks]), split=split)
    period = {t.id: t.period for t in config.tasks}
    bound: dict[tuple[int, int], int | None] = {}
    fits = []
    for cpu in range(config.cpus):
        parts = [p for p in split.pieces if p.cpu == cpu]
        models = [PeriodicTask(p.wcet, period[p.task], p.deadline) for p in parts]
        fits.append(analysis.edf_demand_test(models, DedicatedSupply()).schedulable)
        for part, wcrt in zip(parts, analysis.edf_response_times(models)):
            bound[(part.task, part.start)] = wcrt
    # A CPU that misses delays the parts it holds: a first part's second part on another CPU
    # comes late and bunched, and so does the next job's first part after a late second
    # part (a task's jobs run in order).  Both CPUs of a split task stand or fall together,
    # transitively.
    changed = True
    while changed:
        changed = False
        for task in config.tasks:
            cpus = [p.cpu for p in split.of(task.id)]
            if not all(fits[c] for c in cpus) and any(fits[c] for c in cpus):
                for c in cpus:
                    fits[c] = False
                changed = True
    for task in config.tasks:
        parts = split.of(task.id)
        ok = task.id not in split.unfit and all(fits[p.cpu] for p in parts)
        if len(parts) == 1:
            wcrt, note = bound[(task.id, 0)], ""
        else:
            rest = bound[(task.id, parts[1].start)]
            wcrt = None if rest is None else parts[0].wcet + rest
            note = (f"split: {_time(parts[0].wcet, config.unit)} on CPU {parts[0].cpu} (C = D), "
                    f"{_time(parts[1].wcet, config.unit)} on CPU {parts[1].cpu}")
        if task.id in split.unfit:
            note = "fits on no CPU, even split"
        result.tasks.append(TaskResult(task, wcrt if ok else None, ok, "EDF per CPU, C=D splitting", note=note,
                                       cpu=parts[0].cpu))
    return result


def _analyze_global(config: Config) -> Analysis:
    tasks = list(config.tasks)
    result = Analysis(config, LevelSummary.of([_model(t) for t in tasks]))
    if config.task_policy == "edf":
        holds = multicore.gfb_holds([_model(t) for t in tasks], config.cpus)
        result.tasks = [TaskResult(t, t.deadline if holds else None, holds, "GFB density test (bound: the deadline)")
                        for t in tasks]
        return result
    ordered = sorted(tasks, key=_fp_order)
    bounds = multicore.global_fp_response_times([_model(t) for t in ordered], config.cpus)
    result.tasks = sorted((TaskResult(t, r, r is not None, "response-time analysis (Bertogna & Cirinei)")
                           for t, r in zip(ordered, bounds)), key=lambda r: r.task.id)
    return result


def _server_response_times(config: Config) -> tuple[dict[int, int | None], analysis.DemandTest | None]:
    """The servers as periodic tasks (C = budget, T = D = period) on the whole CPU: by
    response-time analysis under fixed priority, by the demand test and Spuri's response
    times under EDF."""
    servers = list(config.servers)
    if config.server_policy == "fp":
        return _fp_response_times(servers, DedicatedSupply()), None
    models = [_model(s) for s in servers]
    demand = analysis.edf_demand_test(models, DedicatedSupply())
    wcrt = analysis.edf_response_times(models)
    return {s.id: (r if demand.schedulable else None) for s, r in zip(servers, wcrt)}, demand


def _analyze_hierarchical(config: Config) -> Analysis:
    servers = list(config.servers)
    result = Analysis(config, LevelSummary.of([_model(s) for s in servers]))
    server_wcrt, result.edf_demand = _server_response_times(config)
    for server in servers:
        members = list(config.tasks_in(server.id))
        server_result = ServerResult(server, server_wcrt[server.id], analysis.utilization([_model(t) for t in members]))
        result.servers.append(server_result)
        if not server_result.schedulable:
            for task in members:
                result.tasks.append(TaskResult(task, None, False, "periodic resource model",
                                               note=f"{server.label} cannot deliver its budget every period"))
            continue
        shin_lee = PeriodicSupply.shin_lee(server.period, server.budget)
        tight = PeriodicSupply(server.period, server.budget, server_result.wcrt)
        local_edf = analysis.edf_demand_test([_model(t) for t in members], tight)
        if config.task_policy == "edf":
            loose = _edf_results(members, shin_lee, analysis.edf_demand_test([_model(t) for t in members], shin_lee), "")
            for task_result, shin_lee_result in zip(_edf_results(members, tight, local_edf, _EDF_IN_SERVER), loose):
                task_result.wcrt_shin_lee = shin_lee_result.wcrt
                task_result.local_edf_schedulable = local_edf.schedulable
                result.tasks.append(task_result)
            continue
        loose = _fp_response_times(members, shin_lee)
        tightest = _fp_response_times(members, tight)
        for task in members:
            wcrt = tightest[task.id]
            result.tasks.append(TaskResult(
                task, wcrt, wcrt is not None and wcrt <= task.deadline, _FP_IN_SERVER,
                wcrt_shin_lee=loose[task.id], local_edf_schedulable=local_edf.schedulable))
    result.tasks.sort(key=lambda r: r.task.id)
    return result


_FP_IN_SERVER = "periodic resource model with server response time"
_EDF_IN_SERVER = "EDF demand test and response time on the periodic resource with server response time"


def _time(us: int | None, unit: str) -> str | None:
    return None if us is None else format_duration(us * NS_PER["us"], unit)


def to_dict(result: Analysis) -> dict:
    """The analysis as JSON-ready data; times in the configuration's unit and in µs."""
    unit = result.config.unit

    def number(us: int | None, unit: str) -> int | float | None:
        return None if us is None else duration_number(us * NS_PER["us"], unit)

    doc: dict = {
        "config": result.config.source,
        "plugin": result.config.plugin,
        "unit": unit,
        "schedulable": result.schedulable,
        **({"cpus": result.config.cpus} if result.config.multicore else {}),
        **({"assignment": result.config.assignment} if result.config.multicore == "partitioned" else {}),
        ("servers_level" if result.config.hierarchical else "task_set"): result.level.to_dict(),
    }
    if result.edf_demand is not None:
        doc["edf_demand_test"] = {"schedulable": result.edf_demand.schedulable,
                                  "failure_at": number(result.edf_demand.failure_at, unit),
                                  "checked_up_to": number(result.edf_demand.checked_up_to, unit)}
    if result.config.hierarchical:
        doc["servers"] = [{
            "id": r.server.id, "name": r.server.label, "priority": r.server.priority,
            "period": number(r.server.period, unit), "budget": number(r.server.budget, unit),
            "wcrt": number(r.wcrt, unit), "wcrt_us": r.wcrt, "schedulable": r.schedulable,
            "task_utilization": float(r.task_utilization),
        } for r in result.servers]
    doc["tasks"] = [{
        "id": r.task.id, "name": r.task.label, "server": r.task.server, "priority": r.task.priority,
        "period": number(r.task.period, unit), "deadline": number(r.task.deadline, unit), "wcet": number(r.task.wcet, unit),
        "wcrt": number(r.wcrt, unit), "wcrt_us": r.wcrt, "schedulable": r.schedulable, "method": r.method,
        **({"wcrt_shin_lee": number(r.wcrt_shin_lee, unit), "local_edf_schedulable": r.local_edf_schedulable}
           if result.config.hierarchical else {}),
        **({"cpu": r.cpu} if r.cpu is not None else {}),
        **({"note": r.note} if r.note else {}),
    } for r in result.tasks]
    return doc


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "NO")


def _level_line(level: LevelSummary, what: str) -> str:
    summary = level.to_dict()
    return (f"  {what}: utilisation {summary['utilization']:.3f}; "
            f"Liu & Layland bound for {level.count}: {summary['liu_layland_bound']:.3f} "
            f"({'met' if summary['liu_layland_met'] else 'not met'}); "
            f"hyperbolic product {summary['hyperbolic_product']:.3f} "
            f"({'met' if summary['hyperbolic_met'] else 'not met'}, must be <= 2)")


_TITLES = {
    (None, "fp"): "Fixed priority, response-time analysis (exact for synchronous release)",
    (None, "edf"): "EDF, processor demand criterion (QPA); WCRT: Spuri's bound",
    ("partitioned", "fp"): "Partitioned fixed priority on {cpus} CPUs ({assignment} decreasing where no cpu is "
                           "configured); per CPU: response-time analysis",
    ("partitioned", "edf"): "Partitioned EDF on {cpus} CPUs ({assignment} decreasing where no cpu is configured); "
                            "per CPU: processor demand criterion, WCRT: Spuri's bound",
    ("global", "fp"): "Global fixed priority on {cpus} CPUs, response-time analysis of Bertogna & Cirinei "
                      "(sufficient)",
    ("global", "edf"): "Global EDF on {cpus} CPUs, density test of Goossens, Funk & Baruah (sufficient); "
                       "WCRT: the deadline",
    ("semi-partitioned", "edf"): "Semi-partitioned EDF on {cpus} CPUs, first-fit decreasing with C=D splitting; "
                                 "per CPU: processor demand criterion, WCRT: Spuri's bound (a split task's: C' + "
                                 "its second part's)",
}


def _demand_line(out: list[str], demand: analysis.DemandTest | None, unit: str) -> None:
    if demand is not None:
        verdict = "holds" if demand.schedulable else (
            f"fails at t = {_time(demand.failure_at, unit)}" if demand.failure_at is not None
            else "fails: utilisation above 1")
        out.append(f"  demand bound dbf(t) <= t: {verdict}")


def to_text(result: Analysis) -> str:
    config = result.config
    unit = config.unit

    def show(us: int | None) -> str:
        return _time(us, unit) or ">T"   # a response beyond the period is not bounded here

    out = [f"{config.source}: plugin {config.plugin}, times in {unit}", ""]
    if config.overhead_us:
        out[-1:-1] = [f"each wcet below counts {config.overhead_us} us of overhead a job"]
    if config.hierarchical:
        out.append("Servers as periodic tasks (C = budget, T = D = period), " + (
            "fixed priority, exact response-time analysis" if config.server_policy == "fp"
            else "EDF, processor demand criterion (QPA); WCRT: Spuri's bound"))
        out.append(_level_line(result.level, "servers"))
        _demand_line(out, result.edf_demand, unit)
        out.append(format_table(
            ["server", "id", "prio", "period", "budget", "WCRT", "tasks' U", "schedulable"],
            [[r.server.label, r.server.id, r.server.priority, show(r.server.period), show(r.server.budget),
              show(r.wcrt), f"{float(r.task_utilization):.3f}", _yes(r.schedulable)] for r in result.servers]))
        out.append("")
        out.append("Tasks in servers, " + ("fixed priority" if config.task_policy == "fp" else "EDF (demand test)")
                   + " on the periodic resource Γ(Π, Θ): WCRT uses the server's")
        out.append("response time R (budget within R of each period start); Γ(Π,Θ) is Shin & Lee's bound")
        out.append(format_table(
            ["task", "id", "server", "prio", "period", "deadline", "wcet", "WCRT", "Γ(Π,Θ)", "local EDF", "schedulable"],
            [[r.task.label, r.task.id, config.server(r.task.server).label, r.task.priority, show(r.task.period),
              show(r.task.deadline), show(r.task.wcet), show(r.wcrt), show(r.wcrt_shin_lee),
              _yes(r.local_edf_schedulable), _yes(r.schedulable) + (f" ({r.note})" if r.note else "")]
             for r in result.tasks]))
    else:
        out.append(_TITLES[(config.multicore, config.task_policy)].format(cpus=config.cpus, assignment=config.assignment))
        out.append(_level_line(result.level, "tasks"))
        _demand_line(out, result.edf_demand, unit)
        placed = config.multicore in ("partitioned", "semi-partitioned")
        out.append(format_table(
            ["task", "id", *(["cpu"] if placed else []), "prio", "period", "deadline", "wcet", "WCRT", "schedulable"],
            [[r.task.label, r.task.id, *([r.cpu] if placed else []), r.task.priority, show(r.task.period),
              show(r.task.deadline), show(r.task.wcet), show(r.wcrt),
              _yes(r.schedulable) + (f" ({r.note})" if r.note else "")] for r in result.tasks]))
    out.append("")
    out.append("schedulable" if result.schedulable else "NOT schedulable")
    return "\n".join(out)
