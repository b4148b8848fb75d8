"""Number and table formatting shared by the renderers and the reports."""

from __future__ import annotations


def span(ns: int | None) -> str:
    """A duration the way systemd-analyze writes it: 1min 9.608s, 821ms, 588us."""
    if ns is None:
        return "?"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns >= 60_000_000_000:
        minutes, rest = divmod(ns, 60_000_000_000)
        return f"{sign}{minutes}min {rest / 1e9:.3f}s"
    if ns >= 1_000_000_000:
        return f"{sign}{ns / 1e9:.3f}s"
    if ns >= 1_000_000:
        return f"{sign}{ns // 1_000_000}ms" if ns % 1_000_000 < 500_000 or ns >= 100_000_000 else f"{sign}{ns / 1e6:.1f}ms"
    if ns >= 1_000:
        return f"{sign}{ns // 1_000}us"
    return f"{sign}{ns}ns"


def bounded(ns: int | None, upper_bound: bool) -> str:
    """A duration, marked `≤` when it is only an upper bound."""
    return ("≤" if upper_bound else "") + span(ns)


def seconds(ns: int | None, digits: int = 3) -> str:
    return "?" if ns is None else f"{ns / 1e9:.{digits}f}"


def percent(part: int, whole: int | None) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else ""


def aligned(rows, right=frozenset(), indent: str = "  ") -> list[str]:
    """Rows of cells as aligned text lines: the columns in `right` right-aligned."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
            .rstrip() for row in rows]
