"""The waterfall: what each kept change saved, measured side by side in one campaign whose
variants are the cumulative configurations (baseline, +1st change, +1st+2nd, ...), like
Fig. 5 of the first seed but from interleaved repeated boots instead of single ones.  Each
configuration also has its phases' medians (firmware, bootloader, kernel, ...), so the
table shows where each change took its time from."""

from __future__ import annotations

import base64
import io
from statistics import median
from dataclasses import dataclass, field
from html import escape

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt  # noqa: E402

from ..render.fmt import aligned, span  # noqa: E402
from ..render.html import Section, table  # noqa: E402
from .compare import ratio_interval  # noqa: E402
from .stats import summarize  # noqa: E402



@dataclass
class Bar:
    name: str
    description: str
    n: int
    median: float  # ns, of the configuration up to and including this change
    low: float  # interval of the median
    high: float
    saving: float  # ns: the previous bar's median minus this one's
    phases: dict[str, float] = field(default_factory=dict)  # phase name -> median ns, in boot order


@dataclass
class Waterfall:
    metric: str
    bars: list[Bar]  # the baseline first, then one per kept change
    speedup: tuple[float, float, float]  # baseline / final medians, with a bootstrap interval
    confidence: float = 0.95

    @property
    def baseline(self) -> Bar:
        return self.bars[0]

    @property
    def final(self) -> Bar:
        return self.bars[-1]


def build(steps: list[tuple[str, str, list[float]]], metric: str = "total", confidence: float = 0.95,
          phases: list[dict[str, list[float]]] | None = None) -> Waterfall:
    """steps: (name, description, values) for the baseline and each cumulative configuration;
    phases: for each, {phase name: values}, in boot order."""
    bars: list[Bar] = []
    for k, (name, description, values) in enumerate(steps):
        if not values:
            raise ValueError(f"{name}: no successful runs to draw")
        s = summarize(values, confidence)
        saving = bars[-1].median - s.median if bars else 0.0
        medians = {p: float(median(v)) for p, v in (phases[k] if phases else {}).items() if v}
        bars.append(Bar(name, description, s.n, s.median, s.low, s.high, saving, medians))
    speedup = ratio_interval(steps[0][2], steps[-1][2], confidence)
    return Waterfall(metric, bars, speedup, confidence)


def text(w: Waterfall) -> str:
    rows = [("step", "median", f"{int(w.confidence * 100)}% CI", "saved", "share of baseline", "what")]
    for i, b in enumerate(w.bars):
        saved = "" if i == 0 else span(int(b.saving))
        share = "" if i == 0 else f"{100 * b.saving / w.baseline.median:.1f}%"
        rows.append((b.name, span(int(b.median)), f"[{span(int(b.low))}, {span(int(b.high))}]", saved, share,
                     b.description))
    lines = aligned(rows, right={1, 2, 3, 4}, indent="")
    point, low, high = w.speedup
    lines.append(f"{span(int(w.baseline.median))} -> {span(int(w.final.median))}: {point:.2f}x faster "
                 f"({int(w.confidence * 100)}% bootstrap interval {low:.2f}x..{high:.2f}x)")
    names = phase_names(w)
    if names:
        lines += ["", "phases, median of each configuration's boots:"]
        rows = [("step", *names)] + [(b.name, *phase_cells(b, names)) for b in w.bars]
        lines += aligned(rows, right=set(range(1, len(names) + 1)), indent="")
    return "\n".join(lines) + "\n"


def phase_names(w: Waterfall) -> list[str]:
    """Every phase any configuration has, in boot order (a change may merge or split one:
    `firmware + bootloader` where the bootloader printed nothing)."""
    return list(dict.fromkeys(p for b in w.bars for p in b.phases))


def phase_cells(b: Bar, names: list[str]) -> list[str]:
    return [span(int(b.phases[p])) if p in b.phases else "" for p in names]


def png(w: Waterfall) -> bytes:
    """The chart: the baseline's bar, a floating bar per change (its saving), the result."""
    labels = [w.baseline.name] + [f"{b.name}" for b in w.bars[1:]] + ["result"]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(labels) + 2), 4.8), dpi=110)
    seconds = [b.median / 1e9 for b in w.bars]
    ax.bar(0, seconds[0], color="#7a8797")
    ax.errorbar(0, seconds[0], yerr=[[seconds[0] - w.baseline.low / 1e9], [w.baseline.high / 1e9 - seconds[0]]],
                fmt="none", ecolor="black", capsize=3)
    for i, b in enumerate(w.bars[1:], start=1):
        top, bottom = seconds[i - 1], seconds[i]
        colour = "#3c9d5d" if bottom <= top else "#c0504d"
        ax.bar(i, top - bottom, bottom=bottom, color=colour)
        share = 100 * (top - bottom) / seconds[0]
        ax.annotate(f"{(bottom - top) * 1000:+.0f} ms\n({-share:+.0f}%)", (i, max(top, bottom)), ha="center",
                    va="bottom", fontsize=8)
    last = len(w.bars)
    ax.bar(last, seconds[-1], color="#2f6fb0")
    ax.errorbar(last, seconds[-1], yerr=[[seconds[-1] - w.final.low / 1e9], [w.final.high / 1e9 - seconds[-1]]],
                fmt="none", ecolor="black", capsize=3)
    for x, v, interval in ((0, seconds[0], w.baseline), (last, seconds[-1], w.final)):
        # Above the interval's whisker, which would cross the number otherwise.
        ax.annotate(f"{v * 1000:.0f} ms", (x, max(v, interval.high / 1e9)), ha="center", va="bottom", fontsize=9,
                    fontweight="bold", xytext=(0, 4), textcoords="offset points")
    ax.set_ylim(0, max(seconds[0], w.baseline.high / 1e9) * 1.12)  # room for the numbers on top
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("power-on to ready (s), median" if w.metric == "total" else f"{w.metric} (s), median")
    point, low, high = w.speedup
    ax.set_title(f"{seconds[0]:.2f} s -> {seconds[-1]:.2f} s: {point:.2f}x (interval {low:.2f}-{high:.2f}x)",
                 fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def section(w: Waterfall, image: bytes | None = None) -> Section:
    image = image if image is not None else png(w)
    pct = int(w.confidence * 100)
    rows = [[b.name, span(int(b.median)), f"[{span(int(b.low))}, {span(int(b.high))}]",
             "" if i == 0 else span(int(b.saving)), b.n, b.description] for i, b in enumerate(w.bars)]
    point, low, high = w.speedup
    body = (f'<p><img alt="waterfall" src="data:image/png;base64,{base64.b64encode(image).decode()}"></p>'
            f"<p><b>{escape(span(int(w.baseline.median)))} &rarr; {escape(span(int(w.final.median)))}: "
            f"{point:.2f}&times; faster</b> ({pct}% bootstrap interval {low:.2f}&times;..{high:.2f}&times;)</p>"
            + table(["step", "median", f"{pct}% CI", "saved", "runs", "what"], rows, numeric={1, 2, 3, 4}))
    names = phase_names(w)
    if names:
        body += ("<p>Phases, median of each configuration's boots:</p>"
                 + table(["step", *names], [[b.name, *phase_cells(b, names)] for b in w.bars],
                         numeric=set(range(1, len(names) + 1))))
    return Section("Waterfall: what each kept change saved (one campaign, interleaved)", body)
