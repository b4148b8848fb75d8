"""Number and table formatting shared by the renderers and the reports."""

from __future__ import annotations


def span(ns: int | None) -> str:
    """A duration as systemd-analyze writes it (1min 9.608s, 1.234s), below a second to three
    significant digits whatever the value: 1.39ms, 84.0ms, 821ms, 588us.  The precision
    follows the size only, so durations side by side read alike (never 84ms beside 84.5ms)."""
    if ns is None:
        return "?"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns >= 60_000_000_000:
        minutes, rest = divmod(ns, 60_000_000_000)
        return f"{sign}{minutes}min {rest / 1e9:.3f}s"
    if ns >= 999_500_000:  # what would round to 1000ms is a second
        return f"{sign}{ns / 1e9:.3f}s"
    if ns >= 999_500:
        return sign + _significant(ns / 1e6, "ms")
    if ns >= 1_000:
        return sign + _significant(ns / 1e3, "us")
    return f"{sign}{ns}ns"


def _significant(x: float, unit: str) -> str:
    """x (1 <= x < 1000 once rounded) to three significant digits."""
    for decimals, below in ((2, 10), (1, 100)):
        text = f"{x:.{decimals}f}"
        if float(text) < below:
            return text + unit
    return f"{x:.0f}{unit}"


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
