"""Generic sections: what a tabular analysis returns, and every renderer draws the same way.

A Section is a title, typed columns, rows of cells and notes; each renderer formats a cell by
its column's type (a duration aligned right in text, a number in JSON), so a new tabular
analysis is one function here (or in its own module) plus its entry in `sections()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .blame import Blamed


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


def steps_section(items: list[Blamed]) -> Section:
    return Section("steps", "Steps (bootlab-mark NAME.start to NAME.end):",
                   [Column("duration", _D), Column("name", _X), Column("start", _T), Column("where", _W)],
                   [(b.duration, b.name, b.start, b.where) for b in items])


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
