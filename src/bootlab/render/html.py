"""A self-contained HTML report: summary, phase bar, zoomable timeline, blame tables,
critical path, console cost and gaps.  No network access is needed to open it.

Other reports (the demo's runs, comparisons, the optimizer's waterfall, the scheduler's
Gantt chart) are built from the same page and sections.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import jinja2

from .. import __version__
from ..analysis import Analysis, tables
from ..advice import Finding, advise
from ..analysis.sections import CellType, Section as GenericSection
from .fmt import bounded, percent, seconds, span
from .svg import _phase_colour, timeline_svg


@dataclass
class Section:
    title: str
    html: str


_ENV = jinja2.Environment(loader=jinja2.PackageLoader("bootlab.render", "templates"), autoescape=True)


def page(title: str, sections: list[Section], subtitle: str = "") -> str:
    return _ENV.get_template("report.html.j2").render(title=title, subtitle=subtitle, sections=sections,
                                                      version=__version__)


def table(header: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """An HTML table; cells are escaped here (callers pass plain text)."""
    head = "".join(f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(header))
    body = []
    for row in rows:
        cells = "".join(f'<td class="num">{escape(str(c))}</td>' if i in numeric else f"<td>{escape(str(c))}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def phase_bar(a: Analysis) -> str:
    total = a.phases.total or 1
    cells = []
    for s in a.phases.spans:
        share = 100.0 * s.duration / total
        cells.append(f'<div style="width:{share:.3f}%;background:{_phase_colour(s.name)}" '
                     f'title="{escape(s.name)}: {span(s.duration)}">{escape(s.name)} {span(s.duration)}</div>')
    return f'<div class="phasebar">{"".join(cells)}</div>'


_NUMERIC = {CellType.DURATION, CellType.TIME, CellType.COUNT, CellType.BYTES}


def _cell(value, type: CellType) -> str:
    """One cell as HTML table text, by its column's type (the header names the unit of counts)."""
    if type is CellType.DURATION:
        return bounded(*value) if isinstance(value, tuple) else span(value)
    if type is CellType.TIME:
        return f"{seconds(value)} s"
    return str(value)


def _table_section(t: GenericSection) -> Section:
    """Any generic section as a table with its notes below."""
    html = table([c.name for c in t.columns], [[_cell(v, c.type) for v, c in zip(row, t.columns)] for row in t.rows],
                 numeric={i for i, c in enumerate(t.columns) if c.type in _NUMERIC})
    html += "".join(f'<p class="note">{escape(n)}</p>' for n in t.notes)
    return Section(t.title.rstrip(":"), html)


def analysis_sections(a: Analysis) -> list[Section]:
    p = a.phases
    sections = []
    summary = []
    if p.end is not None and p.spans:
        start = "power-on" if "power-on" in p.boundaries else p.spans[0].phases[0].value
        summary.append(f'<p><span class="big">{"≥ " if p.end.lower_bound else ""}{span(p.total)}</span> from {escape(start)} to '
                       f'{escape(str(p.end.mark))} <span class="where">({escape(p.end.evidence)})</span></p>')
    summary.append(phase_bar(a))
    summary.append(table(["phase", "start", "duration", "share", "begins at"],
                         [[s.name, f"{seconds(s.start)} s", span(s.duration), percent(s.duration, p.total),
                           s.start_evidence] for s in p.spans], numeric={1, 2, 3}))
    summary += [f'<p class="note">{escape(n)}</p>' for n in p.notes]
    sections.append(Section("Phases", "\n".join(summary)))
    sections.append(Section("Timeline",
                            f'<div class="zoom">{timeline_svg(a)}</div>'))
    sections += [_table_section(t) for t in tables(a)]
    cp = a.critical
    if cp.kernel_steps:
        sections.append(Section(
            f"Kernel critical path ({cp.kernel_track}): {cp.kernel_steps} steps, {span(cp.kernel_total)} of "
            f"{span(cp.kernel_span)} in initcalls and async waits; longest steps",
            table(["duration", "step", "kind", "where"],
                  [[span(s.duration), s.name, s.kind, s.where] for s in cp.kernel_top], numeric={0})))
    if cp.userspace:
        sections.append(Section("Userspace critical chain", table(
            ["unit", "active at", "took"],
            [["\u00a0\u00a0" * i + s.name, f"{seconds(s.start)} s", span(s.duration) if s.duration else ""]
             for i, s in enumerate(cp.userspace)], numeric={1, 2})))
    c = a.console
    if c is not None:
        how = "printed on the console" if c.printed else "in the kernel log"
        body = (f"<p>{c.bytes} bytes in {c.lines} lines {how}; at {c.baud} baud ({escape(c.baud_source)}) "
                f"that is <b>{span(c.cost)}</b> of serial time.</p>")
        if c.note:
            body += f'<p class="note">{escape(c.note)}</p>'
        body += table(["phase", "bytes", "serial time"], [[n, b, span(t)] for n, (b, t) in c.per_phase.items()],
                      numeric={1, 2})
        sections.append(Section("Console output cost", body))
    if a.gaps:
        explained = any(g.cause for g in a.gaps)   # a console's printing filled one: say so beside it
        sections.append(Section(f"Silent gaps longer than {span(a.options.gap_threshold)}", table(
            ["duration", "from", "to", "after", "before", *(["not silence"] if explained else [])],
            [[span(g.duration), f"{seconds(g.start)} s", f"{seconds(g.end)} s", g.before, g.after,
              *([g.cause] if explained else [])] for g in a.gaps],
            numeric={0, 1, 2})))
    boot = a.boot
    if boot.clocks:
        sections.append(Section("Clocks", table(
            ["clock", "method", "offset", "evidence"],
            [[str(n), i.method, f"{seconds(i.offset, 6)} s", i.evidence] for n, i in boot.clocks.items()])))
    if boot.diagnostics:
        sections.append(Section(f"Warnings ({len(boot.diagnostics)})", "<ul>" + "".join(
            f'<li class="warn">{escape(str(d))}</li>' for d in boot.diagnostics[:200]) + "</ul>"))
    return sections


def advice_section(a: Analysis, findings: list[Finding]) -> Section:
    """What `bootlab advise` proposes for this boot: largest estimated saving first, each
    change opening on how to apply it and the evidence it rests on."""
    total = a.phases.total
    if not findings:
        return Section("Advice", "<p>No change to propose: no rule found evidence in these logs.</p>")
    items = []
    for f in findings:
        saving = "saving not estimated" if f.saving_ns is None else f"saves ~{span(f.saving_ns)}"
        if f.saving_ns is not None and total:
            saving += f" ({percent(f.saving_ns, total)} of the boot)"
        kind = "non-intrusive" if f.non_intrusive else "intrusive (changes source code)"
        evidence = "".join(f"<li><code>{escape(e)}</code></li>" for e in f.evidence)
        notes = "".join(f'<p class="note">{escape(n)}</p>' for n in f.notes)
        items.append(f"<li><details><summary><b>{escape(f.title)}</b> <span class=\"where\">{escape(saving)}, "
                     f"confidence {escape(f.confidence)}, {kind} [{escape(f.rule)}]</span></summary>"
                     f"<p>{escape(f.how)}</p>{notes}<p>evidence:</p><ul>{evidence}</ul></details></li>")
    return Section(f"Advice ({len(findings)})", '<ol class="advice">' + "".join(items) + "</ol>"
                   '<p class="note">Savings overlap (two changes can remove the same time): prove each with repeated '
                   "A/B boots (bootlab lab run).</p>")


def render(a: Analysis) -> str:
    boot = a.boot
    title = f"Boot of Linux {boot.meta['kernel_version']}" if boot.meta.get("kernel_version") else "Boot analysis"
    subtitle = "from " + ", ".join(f"{s.file} ({s.format})" for s in boot.sources)
    sections = analysis_sections(a)
    sections.insert(2, advice_section(a, advise(boot, a)))  # after the phases and the timeline
    return page(title, sections, subtitle)
