"""Comparisons, campaigns and optimizations as text, JSON and HTML (the HTML reuses render.html's page)."""

from __future__ import annotations

import json
import math
from html import escape

from ..render.fmt import aligned, span
from ..render.html import Section, page, table
from ..render.svg import _phase_colour
from .campaign import CampaignResult
from .compare import MetricRow, RunSet, SetComparison, metric_order
from .optimizer import Outcome
from .patch import changes, describe
from .stats import Summary, summarize
from .waterfall import section as waterfall_section
from .waterfall import text as waterfall_text


def metric_label(metric: str) -> str:
    kind, _, rest = metric.partition(":")
    if metric == "total":
        return "total (power-on to ready)"
    if kind == "phase":
        return rest
    if kind == "at":
        return f"at {rest}"
    if kind == "step":
        return f"step {rest}"
    return metric.replace(":", " ")


def value(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if metric.startswith("console:"):
        return f"{v:+.0f}" if v < 0 else f"{v:.0f}"
    return span(int(round(v)))


def delta(metric: str, v: float | None) -> str:
    text = value(metric, v)
    return f"+{text}" if v is not None and not math.isnan(v) and v > 0 and not text.startswith("+") else text


def interval(metric: str, low: float, high: float, signed: bool = False) -> str:
    if math.isnan(low) or math.isnan(high):
        return ""
    show = delta if signed else value
    return f"[{show(metric, low)}, {show(metric, high)}]"


def p_text(p: float | None) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _summary(metric: str, s: Summary | None) -> tuple[str, str]:
    if s is None:
        return "-", ""
    return value(metric, s.median), (interval(metric, s.low, s.high) if s.n > 1 else "n=1")


def comparison_rows(cmp: SetComparison, metrics: set[str] | None = None) -> tuple[list[str], list[list[str]]]:
    pct = f"{int(round(cmp.confidence * 100))}%"
    header = ["metric", f"{cmp.a.name}", f"{pct} CI", f"{cmp.b.name}", f"{pct} CI", "difference", f"{pct} CI",
              "%", "p", ""]
    rows = []
    for r in cmp.rows:
        if metrics is not None and r.metric not in metrics:
            continue
        a, a_ci = _summary(r.metric, r.a)
        b, b_ci = _summary(r.metric, r.b)
        c = r.comparison
        if c is None:
            rows.append([metric_label(r.metric), a, a_ci, b, b_ci, "", "", "", "", ""])
            continue
        rows.append([metric_label(r.metric), a, a_ci, b, b_ci, delta(r.metric, c.difference),
                     interval(r.metric, c.low, c.high, signed=True),
                     "" if math.isnan(c.percent) else f"{c.percent:+.1f}%", p_text(r.p),
                     "*" if r.significant(cmp.confidence) else ""])
    return header, rows


SHOWN = ("phase:", "step:", "total", "console:")  # the text and HTML tables; JSON has every metric


def shown(cmp: SetComparison) -> set[str]:
    return {r.metric for r in cmp.rows if r.metric.startswith(SHOWN)}


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """The first column is a name, the others numbers."""
    cells = [[str(c) for c in row] for row in [header] + rows]
    return "\n".join(aligned(cells, right=set(range(1, len(header))), indent=""))


def verdict_line(cmp: SetComparison) -> str:
    row = cmp.row()
    verdict = cmp.verdict()
    if row is None or row.comparison is None or verdict not in ("faster", "slower"):
        return f"{metric_label(cmp.primary)}: {verdict}"
    c = row.comparison
    return (f"{metric_label(cmp.primary)}: {cmp.b.name} is {verdict} than {cmp.a.name} by "
            f"{value(cmp.primary, abs(c.difference))} ({abs(c.percent):.1f}%, Mann-Whitney p={p_text(row.p)}, "
            f"{int(round(cmp.confidence * 100))}% interval of the difference {interval(cmp.primary, c.low, c.high, True)})")


def _set_line(s: RunSet) -> str:
    ids = [r.id for r in s.runs]
    shown_ids = ", ".join(map(str, ids[:12])) + (" ..." if len(ids) > 12 else "")
    failed = f", {len(s.failed)} failed" if s.failed else ""
    return f"{s.name}: {len(s.ok)} ok run(s){failed} (ids {shown_ids})"


def comparison_text(cmp: SetComparison) -> str:
    out = [f"A = {_set_line(cmp.a)}", f"B = {_set_line(cmp.b)}", ""]
    out.append(text_table(*comparison_rows(cmp, shown(cmp))))
    out.append("")
    out.append(verdict_line(cmp))
    out += [f"note: {n}" for n in cmp.notes]
    out.append(_method(cmp.confidence))
    return "\n".join(out) + "\n"


def _method(confidence: float) -> str:
    pct = int(round(confidence * 100))
    return (f"medians with {pct}% order-statistics intervals; differences B-A of medians with {pct}% bootstrap "
            f"intervals; p: two-sided Mann-Whitney U; * = p < {1 - confidence:g} and the interval excludes 0")


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _summary_json(s: Summary | None) -> dict | None:
    if s is None:
        return None
    return {"n": s.n, "median": s.median, "low": s.low, "high": s.high, "min": s.min, "max": s.max}


def _row_json(r: MetricRow, confidence: float) -> dict:
    c = r.comparison
    out = {"metric": r.metric, "a": _summary_json(r.a), "b": _summary_json(r.b)}
    if c is not None:
        out.update(difference=c.difference, low=_finite(c.low), high=_finite(c.high), percent=_finite(c.percent),
                   p=c.p_value, p_adjusted=r.p_adjusted, significant=r.significant(confidence))
    return out


def _set_json(s: RunSet) -> dict:
    return {"name": s.name, "runs": [r.id for r in s.runs], "ok": [r.id for r in s.ok],
            "failed": [{"id": r.id, "status": r.status, "reason": r.reason} for r in s.failed]}


def comparison_data(cmp: SetComparison) -> dict:
    return {"a": _set_json(cmp.a), "b": _set_json(cmp.b), "primary": cmp.primary, "confidence": cmp.confidence,
            "verdict": cmp.verdict(), "testable": cmp.testable, "notes": cmp.notes,
            "metrics": [_row_json(r, cmp.confidence) for r in cmp.rows]}


def to_json(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


SET_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#9c755f", "#edc948")


def phase_bars(cmp: SetComparison) -> str:
    """Each set's median phases as one stacked bar, both on the same scale (an HTML flex bar
    per set, as the analysis report's phase bar)."""
    names = [r.metric for r in cmp.rows if r.metric.startswith("phase:")]
    medians = {s.name: [(m, summarize(s.values(m)).median if s.values(m) else 0.0) for m in names] for s in (cmp.a, cmp.b)}
    longest = max((sum(v for _, v in parts) for parts in medians.values()), default=0.0) or 1.0
    out = ['<div class="setbars">']
    for name, parts in medians.items():
        cells = "".join(
            f'<div style="width:{100 * v / longest:.3f}%;background:{_phase_colour(m[6:])}" '
            f'title="{escape(m[6:])}: {escape(value(m, v))}">{escape(m[6:])} {escape(value(m, v))}</div>'
            for m, v in parts if v > 0)
        out.append(f'<div class="setname">{escape(name)} <span class="where">(medians, '
                   f'{escape(value("total", sum(v for _, v in parts)))})</span></div><div class="phasebar">{cells}</div>')
    out.append("</div>")
    return "\n".join(out)


DOT_W, DOT_LABEL, DOT_ROW = 900, 230, 16


def distributions(sets: list[RunSet], metrics: list[str], summaries: dict[tuple[int, str], Summary | None]) -> str:
    """Every boot of each set as a point, per metric on its own scale: the median as a bar,
    the interval of the median as a band (summaries[(set index, metric)]); hover a point
    for its run."""
    rows = len(sets) * DOT_ROW + 14
    plot = DOT_W - DOT_LABEL - 90
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="dots" width="{DOT_W}" height="{len(metrics) * rows + 10}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">']
    y = 6
    for metric in metrics:
        runs = [[(r.id, r.metrics[metric]) for r in s.ok if metric in r.metrics] for s in sets]
        values = [v for points in runs for _, v in points]
        if not values:
            continue
        low, high = min(values), max(values)
        pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
        low, high = low - pad, high + pad

        def x(v: float) -> float:
            return DOT_LABEL + (v - low) * plot / (high - low)

        bottom = y + len(sets) * DOT_ROW + 10
        out.append(f'<text x="4" y="{y + DOT_ROW}" font-weight="bold">{escape(metric_label(metric))}</text>')
        out.append(f'<text x="{DOT_LABEL}" y="{bottom}" fill="#777">{escape(value(metric, low))}</text>'
                   f'<text x="{DOT_LABEL + plot}" y="{bottom}" fill="#777" text-anchor="end">'
                   f'{escape(value(metric, high))}</text>')
        for i, (s, points) in enumerate(zip(sets, runs)):
            summary = summaries.get((i, metric))
            mid = y + i * DOT_ROW + DOT_ROW / 2
            colour = SET_COLOURS[i % len(SET_COLOURS)]
            out.append(f'<text x="{DOT_LABEL - 6}" y="{mid + 4}" text-anchor="end" fill="{colour}">{escape(s.name)}</text>')
            out.append(f'<line x1="{DOT_LABEL}" y1="{mid}" x2="{DOT_LABEL + plot}" y2="{mid}" stroke="#eee"/>')
            if summary is not None and summary.n > 1 and not (math.isnan(summary.low) or math.isnan(summary.high)):
                out.append(f'<rect x="{x(summary.low):.1f}" y="{mid - 5}" width="{max(1.0, x(summary.high) - x(summary.low)):.1f}" '
                           f'height="10" fill="{colour}" opacity="0.2"><title>{escape(s.name)}: interval of the median '
                           f'{escape(interval(metric, summary.low, summary.high))}</title></rect>')
            for run_id, v in points:
                out.append(f'<circle class="run" cx="{x(v):.1f}" cy="{mid}" r="3" fill="{colour}" fill-opacity="0.6">'
                           f'<title>{escape(s.name)}, run {run_id}: {escape(value(metric, v))}</title></circle>')
            if summary is not None:
                out.append(f'<line x1="{x(summary.median):.1f}" y1="{mid - 7}" x2="{x(summary.median):.1f}" y2="{mid + 7}" '
                           f'stroke="#000" stroke-width="2"><title>{escape(s.name)}: median '
                           f'{escape(value(metric, summary.median))}</title></line>')
                out.append(f'<text x="{DOT_LABEL + plot + 6}" y="{mid + 4}">{escape(value(metric, summary.median))}</text>')
        y += rows
    out.append("</svg>")
    return "\n".join(out)


DOTS_NOTE = ("<p>Each boot (a point; hover it for the run), the median (a bar) and its interval (a band), per metric "
             "on its own scale:</p>")


def comparison_sections(cmp: SetComparison, title: str) -> list[Section]:
    header, rows = comparison_rows(cmp, shown(cmp))
    body = [f"<p>A = {escape(_set_line(cmp.a))}<br>B = {escape(_set_line(cmp.b))}</p>",
            f"<p><b>{escape(verdict_line(cmp))}</b></p>"]
    if cmp.a.ok or cmp.b.ok:
        metrics = [r.metric for r in cmp.rows if r.metric in shown(cmp)]
        summaries = {(i, r.metric): summary for r in cmp.rows for i, summary in enumerate((r.a, r.b))}
        body += [phase_bars(cmp), DOTS_NOTE, distributions([cmp.a, cmp.b], metrics, summaries)]
    body.append(table(header, rows, numeric=set(range(1, len(header)))))
    body += [f'<p class="note">{escape(n)}</p>' for n in cmp.notes]
    body.append(f'<p class="note">{escape(_method(cmp.confidence))}</p>')
    return [Section(title, "\n".join(body))]


def comparison_html(cmp: SetComparison) -> str:
    return page(f"{cmp.b.name} against {cmp.a.name}", comparison_sections(cmp, "Comparison"))


# -- campaigns ----------------------------------------------------------------------------------


def _what(vr) -> str:
    return vr.variant.description or (describe(vr.variant.patch) if vr.variant.patch else "")


def _size(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


def campaign_rows(res: CampaignResult) -> tuple[list[str], list[list[str]]]:
    c = res.campaign
    metric = c.metric
    pct = f"{int(round(c.confidence * 100))}%"
    sizes = any(vr.sizes for vr in res.variants)
    header = ["variant", "what", "ok/runs", "median", f"{pct} CI", "difference", f"{pct} CI", "%", "p (Holm)", ""]
    if sizes:
        header += ["image bytes", "initramfs bytes"]
    rows = []
    for vr in res.variants:
        row = vr.comparison.row() if vr.comparison is not None else None
        values = vr.runs.values(metric)
        med, ci = _summary(metric, row.b if row is not None else summarize(values, c.confidence) if values else None)
        cells = ["", "", "", "", ""]
        if row is not None and row.comparison is not None:
            cmp = row.comparison
            cells = [delta(metric, cmp.difference), interval(metric, cmp.low, cmp.high, True),
                     "" if math.isnan(cmp.percent) else f"{cmp.percent:+.1f}%", p_text(row.p),
                     "*" if row.significant(c.confidence) else ""]
        status = f"{len(vr.runs.ok)}/{len(vr.runs.runs)}" + (" gave up" if vr.gave_up else "")
        line = [vr.variant.name, _what(vr), status, med, ci] + cells
        if sizes:
            line += [_size(vr.sizes.get("image_size")), _size(vr.sizes.get("initrd_compressed"))]
        rows.append(line)
    return header, rows


def _campaign_head(res: CampaignResult) -> list[str]:
    c, st = res.campaign, res.state
    total = len(c.schedule())
    failed = sum(1 for r in st.done.values() if r.status != "ok")
    skipped = total - len(st.done) - len(st.remaining())  # the slots of variants given up
    lines = [f"campaign {c.name}" + (f": {c.description}" if c.description else "") +
             (f" ({c.source})" if c.source else ""),
             f"{c.runs} runs per variant, interleaved; {len(st.done)} of {total} boots done, {failed} failed"
             + (f", {skipped} not booted (variants given up)" if skipped else "")
             + (f", {st.ignored} stored runs beyond this schedule left out" if st.ignored else "")
             + f"; deciding metric: {metric_label(c.metric)}"]
    return lines


def campaign_text(res: CampaignResult, details: bool = True) -> str:
    out = _campaign_head(res) + [""]
    out.append(text_table(*campaign_rows(res)))
    out += [f"warning: {w}" for w in res.warnings]
    out.append(_method(res.campaign.confidence) + "; the deciding metric's p is Holm-adjusted over the variants")
    if details:
        for vr in res.variants[1:]:
            if vr.comparison is not None and vr.runs.ok:
                out += ["", f"{vr.variant.name} against the baseline (per phase; only the total's p is adjusted)"]
                out.append(text_table(*comparison_rows(vr.comparison, shown(vr.comparison))))
    return "\n".join(out) + "\n"


def campaign_data(res: CampaignResult) -> dict:
    c = res.campaign
    return {"campaign": c.name, "description": c.description, "source": c.source, "runs_per_variant": c.runs,
            "metric": c.metric, "confidence": c.confidence, "boots": len(c.schedule()),
            "done": len(res.state.done), "warnings": res.warnings,
            "variants": [{"name": vr.variant.name, "description": vr.variant.description, "patch": vr.variant.patch,
                          "definition": vr.variant.definition(), "sizes": vr.sizes, "gave_up": vr.gave_up,
                          "runs": _set_json(vr.runs),
                          "against_baseline": comparison_data(vr.comparison) if vr.comparison else None}
                         for vr in res.variants]}


def campaign_sections(res: CampaignResult) -> list[Section]:
    header, rows = campaign_rows(res)
    body = [f"<p>{escape(line)}</p>" for line in _campaign_head(res)]
    body.append(table(header, rows, numeric=set(range(2, len(header)))))
    sets = [vr.runs for vr in res.variants if vr.runs.ok]
    if sets:
        metric = res.campaign.metric
        summaries = {(i, metric): summarize(s.values(metric), res.campaign.confidence) if s.values(metric) else None
                     for i, s in enumerate(sets)}
        body += [DOTS_NOTE, distributions(sets, [metric], summaries)]
    body += [f'<p class="warn">{escape(w)}</p>' for w in res.warnings]
    body.append(f'<p class="note">{escape(_method(res.campaign.confidence))}; the deciding metric\'s p is '
                "Holm-adjusted over the variants</p>")
    sections = [Section(f"Campaign {res.campaign.name}", "\n".join(body))]
    for vr in res.variants[1:]:
        if vr.comparison is not None and vr.runs.ok:
            sections += comparison_sections(vr.comparison, f"{vr.variant.name} against the baseline (per phase)")
    return sections


def campaign_html(res: CampaignResult) -> str:
    return page(f"Campaign {res.campaign.name}", campaign_sections(res), res.campaign.description)


# -- optimizations ------------------------------------------------------------------------------


def _decision_rows(out: Outcome) -> list[list[str]]:
    return [[str(d.round), d.stage, d.candidate.name, "kept" if d.kept else "dropped",
             delta("total", d.difference) if d.difference is not None else "",
             p_text(d.p), d.why, d.candidate.origin] for d in out.decisions]


DECISION_HEADER = ["round", "stage", "candidate", "decision", "difference", "p", "why", "from"]


def final_phases(out: Outcome) -> list[list[str]]:
    """Where the optimized boot's time goes: the final configuration's verification runs."""
    if out.verify is None:
        return []
    runs = out.verify.variants[-1].runs
    names = sorted({m for r in runs.ok for m in r.metrics if m.startswith(("phase:", "step:")) or m == "total"},
                   key=metric_order)
    total = summarize(runs.values("total")).median if runs.values("total") else None
    rows = []
    for m in names:
        s = summarize(runs.values(m))
        share = f"{100 * s.median / total:.1f}%" if total and m != "total" and m.startswith("phase:") else ""
        rows.append([metric_label(m), value(m, s.median), interval(m, s.low, s.high), share, f"{s.n}/{len(runs.runs)}"])
    return rows


PHASE_HEADER = ["phase", "median", "95% CI", "share", "runs"]


def optimize_text(out: Outcome) -> str:
    f = out.facts
    lines = [f"optimization {out.name}",
             f"facts from the probe boot: lpj={f.lpj or '?'}, TSC {f.tsc_khz or '?'} kHz",
             f"candidates tried: {', '.join(c.name for c in out.candidates) or 'none'}"]
    lines += [f"  not tried: {c.name}: {why}" for c, why in out.not_applicable]
    for res in out.screenings:
        lines += ["", campaign_text(res, details=False).rstrip()]
    if out.decisions:
        lines += ["", "decisions (each round: screening against the configuration so far, then greedy combination "
                  "with fresh runs)",
                  text_table(DECISION_HEADER, _decision_rows(out))]
    if out.waterfall is not None:
        lines += ["", f"verification (campaign {out.name}.verify, fresh interleaved runs)", waterfall_text(out.waterfall)]
    if out.soak is not None:
        lines += ["", out.soak.summary()]
    lines += ["", f"kept: {' + '.join(c.name for c in out.kept) or 'nothing'}",
              f"final configuration changes: {describe(changes(out.baseline.to_dict(), out.final.to_dict()))}"]
    phases = final_phases(out)
    if phases:
        lines += ["", "where the optimized boot's time goes (verification runs of the final configuration)",
                  text_table(PHASE_HEADER, phases)]
    lines += [f"note: {n}" for n in out.notes]
    return "\n".join(lines) + "\n"


def optimize_data(out: Outcome) -> dict:
    w = out.waterfall
    return {
        "name": out.name, "facts": {"lpj": out.facts.lpj, "tsc_khz": out.facts.tsc_khz},
        "baseline": out.baseline.to_dict(), "final": out.final.to_dict(),
        "candidates": [{"name": c.name, "description": c.description, "patch": c.patch, "origin": c.origin,
                        "notes": c.notes} for c in out.candidates],
        "not_applicable": [{"name": c.name, "why": why} for c, why in out.not_applicable],
        "decisions": [{"round": d.round, "stage": d.stage, "candidate": d.candidate.name, "kept": d.kept, "why": d.why,
                       "campaign": d.campaign, "difference": d.difference, "p": d.p} for d in out.decisions],
        "kept": [c.name for c in out.kept],
        "screenings": [campaign_data(res) for res in out.screenings],
        "verify": campaign_data(out.verify) if out.verify else None,
        "waterfall": None if w is None else {
            "metric": w.metric, "speedup": list(w.speedup),
            "bars": [{"name": b.name, "description": b.description, "n": b.n, "median": b.median, "low": b.low,
                      "high": b.high, "saving": b.saving, "phases": b.phases} for b in w.bars]},
        "soak": None if out.soak is None else {
            "campaign": out.soak.campaign, "boots": out.soak.boots, "failed": out.soak.failed,
            "reasons": out.soak.reasons, "failure_rate_interval": [out.soak.rate_low, out.soak.rate_high]},
        "notes": out.notes,
    }


def optimize_html(out: Outcome, image: bytes | None, final_toml: str) -> str:
    sections = []
    if out.waterfall is not None:
        sections.append(waterfall_section(out.waterfall, image))
    if out.soak is not None:
        sections.append(Section("Soak", f"<p>{escape(out.soak.summary())}</p>"))
    phases = final_phases(out)
    if phases:
        sections.append(Section("Where the optimized boot's time goes", table(PHASE_HEADER, phases,
                                                                                 numeric={1, 2, 3, 4})))
    if out.decisions:
        sections.append(Section("Decisions", table(DECISION_HEADER, _decision_rows(out), numeric={4, 5})))
    for res in out.screenings:
        sections += campaign_sections(res)[:1]
    sections.append(Section("The final configuration (bootlab boot --target FILE)",
                            f"<pre>{escape(final_toml)}</pre>"))
    if out.notes or out.not_applicable:
        items = [escape(n) for n in out.notes] + [escape(f"{c.name}: {why}") for c, why in out.not_applicable]
        sections.append(Section("Notes", "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"))
    return page(f"Optimization {out.name}", sections,
                f"{' + '.join(c.name for c in out.kept) or 'nothing kept'}")
