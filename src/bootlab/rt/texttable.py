"""Plain-text tables for terminal output: numbers right-aligned, text left-aligned."""

from __future__ import annotations


def _is_number(cell: str) -> bool:
    return cell.lstrip("-").replace(".", "", 1).isdigit()



def format_table(headers: list[str], rows: list[list], indent: str = "  ") -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    numeric = [bool(cells) and all(_is_number(row[i]) or row[i] == "-" for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return indent + "  ".join(
            c.rjust(w) if right else c.ljust(w) for c, w, right in zip(row, widths, numeric)).rstrip()

    return "\n".join([line(headers)] + [line(row) for row in cells])
