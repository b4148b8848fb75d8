"""Two boots side by side (analysis/diff.py), as text or as JSON."""

from __future__ import annotations

import json

from .. import __version__
from ..analysis.diff import BootDiff, Change, Changes
from .fmt import aligned, span

SCHEMA = "bootlab-diff"
VERSION = 1
_TITLES = {"initcall": "Initcalls", "probe": "Driver probes", "unit": "Units"}


def _signed(ns: int) -> str:
    return ("+" if ns > 0 else "") + span(ns)


def _relative(c: Change) -> str:
    return f"{100.0 * c.delta / c.before:+.1f}%" if c.before and c.after is not None else ""


def _boot_line(label: str, d) -> str:
    boot = d.boot
    kernel = f"Linux {boot.meta['kernel_version']} " if boot.meta.get("kernel_version") else ""
    return f"{label}: {kernel}from " + ", ".join(f"{s.file} ({s.format})" for s in boot.sources)


def _spans(c: Changes) -> list[str]:
    out: list[str] = []
    title = _TITLES.get(c.kind, c.kind)
    if c.changed:
        rows = [(_signed(x.delta), x.name, f"{span(x.before)} -> {span(x.after)}") for x in c.changed]
        out += ["", f"{title} that changed most (of {c.common} in both):"] + aligned(rows, right={0})
    for label, items, total in (("first", c.only_before, c.total_only_before),
                                ("second", c.only_after, c.total_only_after)):
        if items:
            rows = [(span(x.before if x.after is None else x.after), x.name) for x in items]
            out += ["", f"{title} only in the {label} boot ({span(total)} in all), longest:"] + aligned(rows, right={0})
    return out


def text(d: BootDiff) -> str:
    out = [_boot_line("first ", d.before), _boot_line("second", d.after), ""]
    rows = [("", "first", "second", "change", "")]
    for c in [d.total] + d.phases:
        name = c.name if c is d.total else f"  {c.name}"
        rows.append((name, span(c.before), span(c.after), _signed(c.delta), _relative(c)))
    out += aligned(rows, right={1, 2, 3, 4})
    for c in d.spans:
        out += _spans(c)
    if d.console_bytes.before is not None or d.console_bytes.after is not None:
        b = d.console_bytes
        out += ["", f"Console output: {b.before} -> {b.after} bytes ({b.delta:+d}), "
                    f"{span(d.console_cost.before)} -> {span(d.console_cost.after)} of serial time"]
    out += [""] + [f"note: {note}" for note in d.notes]
    out += ["note: one boot of each: repeat the boots (bootlab lab, bootlab compare) to tell a change from noise"]
    return "\n".join(out) + "\n"


def _change(c: Change) -> dict:
    return {"name": c.name, "before": c.before, "after": c.after, "delta": c.delta}


def document(d: BootDiff) -> dict:
    def boot(a) -> dict:
        return {"kernel_version": a.boot.meta.get("kernel_version"),
                "sources": [{"file": s.file, "format": s.format} for s in a.boot.sources]}

    return {
        "schema": SCHEMA, "version": VERSION, "generator": f"bootlab {__version__}",
        "first": boot(d.before), "second": boot(d.after),
        "total_ns": _change(d.total),
        "phases_ns": [_change(c) for c in d.phases],
        "spans_ns": {c.kind: {"common": c.common, "changed": [_change(x) for x in c.changed],
                              "only_first": [_change(x) for x in c.only_before],
                              "only_second": [_change(x) for x in c.only_after],
                              "only_first_total": c.total_only_before, "only_second_total": c.total_only_after}
                     for c in d.spans},
        "console_bytes": _change(d.console_bytes),
        "console_ns": _change(d.console_cost),
        "notes": d.notes,
    }


def render(d: BootDiff, fmt: str) -> str:
    return text(d) if fmt == "text" else json.dumps(document(d), indent=1) + "\n"
