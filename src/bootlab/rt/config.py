"""The scheduler configuration file (docs/rt-formats.md), loaded and checked as strictly as
the C loader: unknown keys, missing keys, impossible values and duplicate ids are errors
that name the key and its line.  Times are kept in integer microseconds."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..sourcemap import SourceMap, json_source_map, toml_source_map
from .units import scale_to_us

# Hierarchical plugins are "hsf-" + the servers' policy, then "-" + the tasks' policy when it
# differs: hsf-fp and hsf-edf schedule both levels alike, hsf-edf-fp has servers by deadline
# and tasks by priority inside them, hsf-fp-edf the reverse.
HIERARCHICAL = {"hsf-fp": ("fp", "fp"), "hsf-edf": ("edf", "edf"), "hsf-fp-edf": ("fp", "edf"),
                "hsf-edf-fp": ("edf", "fp")}
# Multicore plugins: "partitioned-" (each task on one CPU, by configuration or by a
# first-fit / worst-fit decreasing assignment from the analysis), "global-" (the `cpus`
# first jobs run, on any CPU), then the tasks' policy; "semi-partitioned-edf" (EDF per CPU,
# C=D splitting of the tasks that fit on no CPU whole).
MULTICORE = {"partitioned-fp": ("partitioned", "fp"), "partitioned-edf": ("partitioned", "edf"),
             "global-fp": ("global", "fp"), "global-edf": ("global", "edf"),
             "semi-partitioned-edf": ("semi-partitioned", "edf")}
PLUGINS = ("fp", "edf", *HIERARCHICAL, *MULTICORE)
ASSIGNMENTS = ("first-fit", "worst-fit")
MAX_CPUS = 64
MAX_OVERHEAD_US = 1_000_000  # a job's overhead: a second at most (rtctl's limit too)
UNITS = ("us", "ms")
MAX_SERVER_ID = 63
MAX_TASK_ID = 255
MAX_PRIORITY = 99


class ConfigError(Exception):
    """The configuration cannot be used; the message lists every problem, one a line."""


@dataclass(frozen=True)
class Server:
    id: int
    period: int
    budget: int
    priority: int
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or f"server{self.id}"


@dataclass(frozen=True)
class Task:
    id: int
    period: int
    wcet: int
    deadline: int
    priority: int = 0
    offset: int = 0
    jobs: int = 0
    server: int | None = None
    name: str = ""
    overrun: str = "throttle"
    release: str = "periodic"
    cpu: int | None = None          # partitioned plugins: the CPU it is placed on, if configured

    @property
    def label(self) -> str:
        return self.name or f"task{self.id}"


@dataclass(frozen=True)
class Config:
    plugin: str
    unit: str
    servers: tuple[Server, ...]
    tasks: tuple[Task, ...]
    source: str = ""
    cpus: int = 1
    assignment: str = "first-fit"   # partitioned plugins: how unplaced tasks are placed
    # What each job costs beyond its wcet on the platform (its release, switches and wait),
    # in µs: the analysis and rtctl's admission charge every job (each part of a split one) it.
    overhead_us: int = 0

    @property
    def hierarchical(self) -> bool:
        return self.plugin in HIERARCHICAL

    @property
    def server_policy(self) -> str | None:
        """How servers are chosen ("fp" or "edf"); None without servers."""
        return HIERARCHICAL[self.plugin][0] if self.hierarchical else None

    @property
    def task_policy(self) -> str:
        """How tasks are chosen ("fp" or "edf"), inside each server when hierarchical, on
        each CPU when partitioned, among all when global."""
        if self.hierarchical:
            return HIERARCHICAL[self.plugin][1]
        return MULTICORE[self.plugin][1] if self.plugin in MULTICORE else self.plugin

    @property
    def multicore(self) -> str | None:
        """"partitioned", "global", "semi-partitioned", or None for the one-CPU plugins."""
        return MULTICORE[self.plugin][0] if self.plugin in MULTICORE else None

    def server(self, server_id: int) -> Server:
        return next(s for s in self.servers if s.id == server_id)

    def tasks_in(self, server_id: int) -> tuple[Task, ...]:
        return tuple(t for t in self.tasks if t.server == server_id)

    def task_by_ref(self, ref: str) -> Task | None:
        """The task named `ref`, or whose id is `ref`."""
        for task in self.tasks:
            if task.name == ref or str(task.id) == ref:
                return task
        return None


def load_config(path: str | Path) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read: {err}") from err
    is_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".toml" and text.lstrip().startswith("{"))
    return parse_config(text, str(path), "json" if is_json else "toml")


def parse_config(text: str, source: str = "<config>", syntax: str = "toml") -> Config:
    if syntax == "json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigError(f"{source}:{err.lineno}: JSON syntax error: {err.msg} (column {err.colno})") from err
        where = json_source_map(text)
    else:
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{source}: TOML syntax error: {err}") from err
        where = toml_source_map(text)
    checker = _Checker(source, where)
    config = checker.config(document)
    if checker.problems:
        raise ConfigError("\n".join(checker.problems))
    return config


_SERVER_KEYS = {"id", "name", "period", "budget", "priority"}
_TASK_KEYS = {"id", "name", "server", "period", "wcet", "deadline", "priority", "offset", "jobs", "overrun",
              "release", "cpu"}
# What the kernel does to a task chosen longer than its wcet in a period.
OVERRUN_MODES = ("throttle", "signal")
# Periodic tasks are released by the clock; sporadic ones by the application, `period`
# (the minimum inter-arrival time) apart at least.  The analysis and the simulator take a
# sporadic task at its worst case: released every period.
RELEASE_KINDS = ("periodic", "sporadic")


class _Checker:
    """Collects every problem with its line instead of stopping at the first."""

    def __init__(self, source: str, where: SourceMap) -> None:
        self.source = source
        self.where = where
        self.problems: list[str] = []
        for path, line in where.duplicates:
            self.problem(path, "duplicate key", line)

    def problem(self, path: tuple, message: str, line: int | None = None) -> None:
        line = line if line is not None else self.where.line_of(path)
        at = f"{self.source}:{line}" if line else self.source
        self.problems.append(f"{at}: {_describe(path)}: {message}")

    def config(self, document: object) -> Config:
        if not isinstance(document, dict):
            self.problem((), "the file must hold a table (an object)")
            return Config("fp", "us", (), (), self.source)
        for key in document.keys() - {"plugin", "unit", "server", "task", "cpus", "assignment", "overhead_us"}:
            self.problem((key,), "unknown key (expected plugin, unit, server, task, cpus, assignment, overhead_us)")
        plugin = document.get("plugin")
        if plugin is None:
            self.problem(("plugin",), "missing key (one of " + ", ".join(PLUGINS) + ")")
        elif plugin not in PLUGINS:
            self.problem(("plugin",), f"unknown plugin {plugin!r} (expected one of {', '.join(PLUGINS)})")
        unit = document.get("unit", "us")
        if unit not in UNITS:
            self.problem(("unit",), f"unknown unit {unit!r} (expected \"us\" or \"ms\")")
            unit = "us"
        server_entries = self.entries(document, "server")
        if server_entries and not _is_hierarchical(plugin):
            self.problem(("server",), f"servers are for the hierarchical plugins (hsf-*) only, not {plugin!r}")
        servers = tuple(s for i, e in enumerate(server_entries) if (s := self.server(i, e, unit, plugin)))
        self.unique_ids("server", [s.id for s in servers])
        server_ids = {s.id for s in servers}
        cpus, assignment = self.multicore(document, plugin)
        tasks = tuple(t for i, e in enumerate(self.entries(document, "task"))
                      if (t := self.task(i, e, unit, plugin, server_ids, cpus)))
        self.unique_ids("task", [t.id for t in tasks])
        overhead = self.integer((), document, "overhead_us", 0, MAX_OVERHEAD_US, 0)
        return Config(plugin if plugin in PLUGINS else "fp", unit, servers, tasks, self.source, cpus, assignment,
                      overhead)

    def multicore(self, document: dict, plugin: object) -> tuple[int, str]:
        """`cpus` (required by the multicore plugins, refused by the others) and
        `assignment` (partitioned plugins only)."""
        kind = MULTICORE[plugin][0] if _is_multicore(plugin) else None
        if kind is None:
            for key in ("cpus", "assignment"):
                if key in document:
                    self.problem((key,), f"for the multicore plugins only, not {plugin!r}")
            return 1, ASSIGNMENTS[0]
        if "assignment" in document and kind != "partitioned":
            self.problem(("assignment",), f"for the partitioned plugins only, not {plugin!r}")
        return (self.integer((), document, "cpus", 1, MAX_CPUS),
                self.choice((), document, "assignment", ASSIGNMENTS))

    def entries(self, document: dict, name: str) -> list:
        entries = document.get(name, [])
        if not isinstance(entries, list):
            self.problem((name,), f"must be an array of tables ([[{name}]])")
            return []
        return entries

    def server(self, index: int, entry: object, unit: str, plugin: object) -> Server | None:
        path = ("server", index)
        if not self.is_table(path, entry, _SERVER_KEYS):
            return None
        server = Server(
            id=self.integer(path, entry, "id", 0, MAX_SERVER_ID),
            period=self.time(path, entry, "period", unit),
            budget=self.time(path, entry, "budget", unit),
            priority=self.integer(path, entry, "priority", 0, MAX_PRIORITY, default=_optional_priority(plugin, 0)),
            name=self.name(path, entry),
        )
        if server.period > 0 and not 0 < server.budget <= server.period:
            self.problem(path + ("budget",), f"must satisfy 0 < budget <= period ({entry.get('period')}), got {entry.get('budget')}")
        return server

    def task(self, index: int, entry: object, unit: str, plugin: object, server_ids: set[int],
             cpus: int) -> Task | None:
        path = ("task", index)
        if not self.is_table(path, entry, _TASK_KEYS):
            return None
        if _is_hierarchical(plugin):
            server = entry.get("server")
            if server is None:
                self.problem(path + ("server",), "missing key (the id of the server the task runs in)", self.where.line_of(path))
            elif isinstance(server, bool) or not isinstance(server, int) or server not in server_ids:
                self.problem(path + ("server",), f"no server with id {server!r}")
        elif "server" in entry:
            self.problem(path + ("server",), f"tasks have a server with the hierarchical plugins (hsf-*) only, not {plugin!r}")
            server = None
        else:
            server = None
        period = self.time(path, entry, "period", unit)
        task = Task(
            id=self.integer(path, entry, "id", 0, MAX_TASK_ID),
            period=period,
            wcet=self.time(path, entry, "wcet", unit),
            deadline=self.time(path, entry, "deadline", unit, default=period),
            priority=self.integer(path, entry, "priority", 0, MAX_PRIORITY, default=_optional_priority(plugin, 1)),
            offset=self.time(path, entry, "offset", unit, default=0, positive=False),
            jobs=self.integer(path, entry, "jobs", 0, None, default=0),
            server=server,
            name=self.name(path, entry),
            overrun=self.choice(path, entry, "overrun", OVERRUN_MODES),
            release=self.choice(path, entry, "release", RELEASE_KINDS),
            cpu=self.cpu(path, entry, plugin, cpus),
        )
        if task.period > 0 and task.deadline > 0:
            if task.deadline > task.period:
                self.problem(path + ("deadline",), f"must satisfy deadline <= period ({entry.get('period')}), got {entry.get('deadline')}")
            elif task.wcet > task.deadline:
                self.problem(path + ("wcet",), f"must satisfy 0 < wcet <= deadline ({entry.get('deadline', entry.get('period'))}), got {entry.get('wcet')}")
        return task

    def cpu(self, path: tuple, entry: dict, plugin: object, cpus: int) -> int | None:
        if "cpu" not in entry:
            return None
        if not (_is_multicore(plugin) and MULTICORE[plugin][0] == "partitioned"):
            self.problem(path + ("cpu",), f"for the partitioned plugins only, not {plugin!r}")
            return None
        return self.integer(path, entry, "cpu", 0, cpus - 1)

    def is_table(self, path: tuple, entry: object, allowed: set[str]) -> bool:
        if not isinstance(entry, dict):
            self.problem(path, "must be a table (an object)")
            return False
        for key in sorted(entry.keys() - allowed):
            self.problem(path + (key,), f"unknown key (expected {', '.join(sorted(allowed))})")
        return True

    def integer(self, path: tuple, entry: dict, key: str, low: int, high: int | None, default: int | None = None) -> int:
        value = entry.get(key, default)
        if value is None:
            self.problem(path + (key,), "missing key", self.where.line_of(path))
            return low
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            upper = f"..{high}" if high is not None else " or more"
            self.problem(path + (key,), f"must be an integer {low}{upper}, got {value!r}")
            return low
        return value

    def time(self, path: tuple, entry: dict, key: str, unit: str, default: int | None = None, positive: bool = True) -> int:
        if key not in entry:
            if default is None:
                self.problem(path + (key,), "missing key", self.where.line_of(path))
                return 0
            return default
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(path + (key,), f"must be a number of {unit}, got {value!r}")
            return 0
        try:
            us = scale_to_us(value, unit)
        except ValueError as err:
            self.problem(path + (key,), str(err))
            return 0
        if us < 0 or (positive and us == 0):
            self.problem(path + (key,), f"must be {'> 0' if positive else '>= 0'}, got {value!r}")
            return 0
        return us

    def name(self, path: tuple, entry: dict) -> str:
        value = entry.get("name", "")
        if not isinstance(value, str):
            self.problem(path + ("name",), f"must be a string, got {value!r}")
            return ""
        return value

    def choice(self, path: tuple, entry: dict, key: str, allowed: tuple[str, ...]) -> str:
        """One of `allowed` (the first is the default)."""
        value = entry.get(key, allowed[0])
        if value not in allowed:
            self.problem(path + (key,), f"must be {' or '.join(map(repr, allowed))}, got {value!r}")
            return allowed[0]
        return value

    def unique_ids(self, table: str, ids: list[int]) -> None:
        seen: set[int] = set()
        for index, ident in enumerate(ids):
            if ident in seen:
                self.problem((table, index, "id"), f"duplicate {table} id {ident}")
            seen.add(ident)


def _is_hierarchical(plugin: object) -> bool:
    return isinstance(plugin, str) and plugin in HIERARCHICAL


def _is_multicore(plugin: object) -> bool:
    return isinstance(plugin, str) and plugin in MULTICORE


def _optional_priority(plugin: object, level: int) -> int | None:
    """Priorities are required where fixed priority uses them (level 0: the servers, 1: the
    tasks) and default to 0 where EDF ignores them."""
    if _is_multicore(plugin):
        plugin = MULTICORE[plugin][1]
    policies = HIERARCHICAL[plugin] if _is_hierarchical(plugin) else (plugin, plugin)
    return 0 if policies[level] == "edf" else None


def _describe(path: tuple) -> str:
    if not path:
        return "file"
    if len(path) >= 2 and isinstance(path[1], int):
        where = f"[[{path[0]}]] #{path[1] + 1}"
        return f"{where}: {path[2]}" if len(path) > 2 else where
    return str(path[0])
