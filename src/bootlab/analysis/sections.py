"""Generic sections: what a tabular analysis returns, and every renderer draws the same way.

A Section is a title, typed columns, rows of cells and notes; each renderer formats a cell by
its column's type (a duration aligned right in text, a number in JSON), so a new tabular
analysis is one function here (or in its own module) plus its entry in `sections()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .blame import Blamed
from .console_cost import ConsoleCost


class CellType(Enum):
    DURATION = "duration"  # ns; a value of (ns, upper_bound) marks an upper bound
    TIME = "time"  # ns on the reference clock
    COUNT = "count"
    BYTES = "bytes"
    TEXT = "text"
    WHERE = "where"  # file:line


@dataclass
class Column:
    name: str
    type: CellType


@dataclass
class Section:
    key: str  # stable name (the JSON key where there is one)
    title: str
    columns: list[Column]
    rows: list[tuple]
    notes: list[str] = field(default_factory=list)


_D, _T, _C, _X, _W = CellType.DURATION, CellType.TIME, CellType.COUNT, CellType.TEXT, CellType.WHERE


def blame_section(key: str, title: str, items: list[Blamed]) -> Section:
    return Section(key, title, [Column("duration", _D), Column("name", _X), Column("detail", _X), Column("where", _W)],
                   [((b.duration, b.upper_bound), b.name, b.detail, b.where) for b in items])


def step_console(step: Blamed, console: ConsoleCost | None) -> str:
    """What a step printed on the console while it ran, as the step's tables say it ("" for
    nothing, or no serial time): a step that loads a module waits for the module's
    messages to go out at the console's speed."""
    if console is None or not console.baud:
        return ""
    lines, nbytes, ns = console.per_step.get((step.name, step.start), (0, 0, 0))
    return f"console {lines} lines, {nbytes} bytes: {ns / 1e6:.1f} ms at {console.baud} baud" if nbytes else ""


def steps_section(items: list[Blamed], console: ConsoleCost | None = None) -> Section:
    printed = [step_console(b, console) for b in items]
    shown = any(printed)
    columns = [Column("duration", _D), Column("name", _X), Column("start", _T)]
    columns += [Column("console", _X)] if shown else []
    rows = [(b.duration, b.name, b.start) + ((p,) if shown else ()) + (b.where,) for b, p in zip(items, printed)]
    return Section("steps", "Steps (bootlab-mark NAME.start to NAME.end):", columns + [Column("where", _W)], rows)


def levels_section(levels: list[tuple[str, int, int]]) -> Section:
    return Section("levels", "Initcall time by level:",
                   [Column("level", _X), Column("duration", _D), Column("initcalls", _C)],
                   [(level, t, n) for level, t, n in levels])


def returned_section(key: str, title: str, items: list[Blamed], top: int) -> Section:
    """Initcalls and probes of one outcome: the first `top`, and a note of how many more."""
    shown = items[:top]
    notes = [f"... and {len(items) - len(shown)} more"] if len(items) > len(shown) else []
    return Section(key, f"{title} ({len(items)}):", [Column("name", _X), Column("detail", _X), Column("where", _W)],
                   [(b.name, b.detail, b.where) for b in shown], notes)
