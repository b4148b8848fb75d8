"""Plain text, aligned like systemd-analyze: what a terminal or a CI log shows."""

from __future__ import annotations

from ..analysis import Analysis, tables
from ..analysis.console_cost import backlog
from ..analysis.console_loss import LINE_SHAPES
from ..analysis.sections import CellType, Column, Section
from .fmt import aligned, bounded, percent, seconds, span


def _cell(value, column: Column) -> str:
    """One cell as text, by its column's type."""
    if column.type is CellType.DURATION:
        return bounded(*value) if isinstance(value, tuple) else span(value)
    if column.type is CellType.TIME:
        return f"at {seconds(value)} s"
    if column.type is CellType.COUNT:
        return f"{value} {column.name}"
    if column.type is CellType.BYTES:
        return f"{value} bytes"
    return str(value)


def _section(s: Section) -> list[str]:
    """Any generic section: its title, its rows aligned (durations, counts and bytes right), its notes."""
    right = {i for i, c in enumerate(s.columns) if c.type in (CellType.DURATION, CellType.COUNT, CellType.BYTES)}
    rows = [tuple(_cell(v, c) for v, c in zip(row, s.columns)) for row in s.rows]
    return ["", s.title] + aligned(rows, right=right) + [f"  {n}" for n in s.notes]


def _host_stalled(loss) -> str:
    n = loss.host_stalled
    return f"; {n} of them while the host kept the console waiting" if n else ""


def render(a: Analysis) -> str:
    boot = a.boot
    out: list[str] = []
    meta = boot.meta
    title = "Boot"
    if meta.get("kernel_version"):
        title += f" of Linux {meta['kernel_version']}"
    out.append(title)
    out.append("from " + ", ".join(f"{s.file} ({s.format})" for s in boot.sources))

    p = a.phases
    if p.spans:
        total = p.total
        first, end = p.spans[0], p.end
        parts = " + ".join(f"{span(s.duration)} ({s.name})" for s in p.spans)
        out.append("")
        out.append(f"Startup finished in {parts} = {span(total)}")
        start_name = "power-on" if "power-on" in p.boundaries else first.phases[0].value
        # From the first phase's start, not the reference clock's zero: systemd-analyze's
        # firmware and loader times come before printk time zero.
        out.append(f"{end.mark} reached {'at least ' if end.lower_bound else ''}{seconds(end.at - first.start)} s "
                   f"after {start_name} ({end.evidence})")
        seen = a.console.ready_line_at if a.console is not None else None
        waited = backlog(end.at, seen)
        if waited is not None:
            out.append(f"  its line reached the host at {seconds(seen)} s, after {span(waited)} of console "
                       "backlog (ready is when the device was ready)")
        rows = [("phase", "start", "duration", "share", "begins at")]
        for s in p.spans:
            rows.append((s.name, f"{seconds(s.start)} s", span(s.duration), percent(s.duration, total), s.start_evidence))
        out.append("")
        out += aligned(rows, right={1, 2, 3})
    for note in p.notes:
        out.append(f"note: {note}")

    for section in tables(a):
        out += _section(section)

    cp = a.critical
    if cp.kernel_steps:
        out.append("")
        out.append(f"Kernel critical path ({cp.kernel_track}): {cp.kernel_steps} steps over {span(cp.kernel_span)}, "
                   f"{span(cp.kernel_total)} in initcalls and async waits; longest:")
        out += aligned([(bounded(s.duration, s.upper_bound), s.name, s.kind, s.where) for s in cp.kernel_top],
                       right={0})
    if cp.userspace:
        out.append("")
        out.append("Userspace critical chain (@ active at, + activation took):")
        for depth, s in enumerate(cp.userspace):
            took = f" +{span(s.duration)}" if s.duration else ""
            out.append(f"  {'  ' * depth}{'└─' if depth else ''}{s.name} @{seconds(s.start)}s{took}")

    c = a.console
    if c is not None:
        how = "printed on the console" if c.printed else "in the kernel log"
        out.append("")
        out.append(f"Console output: {c.bytes} bytes in {c.lines} lines {how}; at {c.baud} baud "
                   f"({c.baud_source}) that is {span(c.cost)} of serial time")
        if c.note:
            out.append(f"  {c.note}")
        if c.per_phase:
            rows = [(name, f"{n} bytes", span(cost) + (" (capped at the phase's length)" if name in c.capped else ""))
                    for name, (n, cost) in c.per_phase.items()]
            out += aligned(rows, right={1, 2})
        if c.loss is not None and c.loss.against == LINE_SHAPES:
            if c.loss.damaged:
                out.append(f"  the console LOST at least {c.loss.lost_bytes} byte{'s' if c.loss.lost_bytes != 1 else ''} "
                           f"in {len(c.loss.damaged)} of "
                           f"{c.loss.checked} kernel lines, by their shape (a broken printk stamp, two records on "
                           f"one line; the warnings name them{_host_stalled(c.loss)})")
            else:
                out.append(f"  none of {c.loss.checked} kernel lines shows lost bytes by its shape (a broken printk "
                           "stamp, two records on one line)")
            out.append("  bytes lost inside a line's text show only against the kernel log printed after the boot "
                       "(bootlab's reference devices print it after ready), which this console does not hold")
        elif c.loss is not None:
            if c.loss.damaged:
                out.append(f"  the console LOST {c.loss.lost_bytes} bytes in {len(c.loss.damaged)} of "
                           f"{c.loss.checked} kernel lines checked against the kernel log printed after ready "
                           f"(the warnings name them{_host_stalled(c.loss)})")
            elif c.loss.checked:
                out.append(f"  every one of {c.loss.checked} kernel lines checked against the kernel log printed "
                           "after ready arrived intact")
            else:
                out.append("  no console line could be checked against the kernel log printed after ready (the "
                           "console printed none of its records: `quiet`, or a log level that filters them)")

    if a.gaps:
        out.append("")
        out.append(f"Silent gaps longer than {span(a.options.gap_threshold)}:")
        for g in a.gaps:
            out.append(f"  {span(g.duration):>9}  {seconds(g.start)} s -> {seconds(g.end)} s")
            out.append(f"             after  {g.before}")
            out.append(f"             before {g.after}")
            if g.cause:
                out.append(f"             not silence: {g.cause}")

    if boot.clocks:
        out.append("")
        out.append("Clocks:")
        for name, info in boot.clocks.items():
            extra = f", {info.anchors} anchors, best {info.evidence}" if info.method == "anchors" else ""
            if info.at_sightings:
                extra += f", keeps no rate: placed where its lines were seen ({len(info.map.xs)} sightings)"
            elif info.own_speed:
                extra += ", at its own speed under every sighting (the host's stamps are whole seconds)"
            elif len(info.map.xs) > 1:
                extra += f", along the envelope of its earliest sightings, under every line's ({len(info.map.xs)} knots)"
            if info.rate is not None:
                extra += (f", rate {info.rate.rate:.5f} (from {info.rate.probes} probe lines over "
                          f"{span(info.rate.end - info.rate.start)})")
            out.append(f"  {name}: {info.method}, offset {seconds(info.offset, 6)} s{extra}")
    if boot.diagnostics:
        out.append("")
        out.append(f"Warnings ({len(boot.diagnostics)}):")
        for d in boot.diagnostics[:20]:
            out.append(f"  {d}")
        if len(boot.diagnostics) > 20:
            out.append(f"  ... and {len(boot.diagnostics) - 20} more")
    return "\n".join(out) + "\n"
