"""Generic sections: the tabular analyses of a real boot, drawn by the text renderer from the
section alone (title, typed columns, rows, notes)."""

from __future__ import annotations

from pathlib import Path

from bootlab.analysis import Options, analyze, tables
from bootlab.analysis.sections import CellType, Column, Section
from bootlab.render.text import _section, render
from bootlab.sources import read

DATA = Path(__file__).parent / "data"
RPI4 = str(DATA / "corpus" / "rpi4-kernel__run1_dmesg.txt")


def test_every_table_of_a_real_boot_is_drawn_in_the_text_report():
    a = analyze(read([RPI4]), Options(top=5))
    found = tables(a)
    assert {"initcalls", "levels"} <= {s.key for s in found}
    text = render(a)
    for s in found:
        assert s.rows
        assert "\n".join(_section(s)) in text


def test_a_section_is_drawn_by_its_cell_types():
    s = Section("demo", "Demo:", [Column("duration", CellType.DURATION), Column("name", CellType.TEXT),
                                  Column("lines", CellType.COUNT), Column("where", CellType.WHERE)],
                [((1_389_000, False), "a", 3, "x.log:4"), ((84_000_000, True), "bb", 12, "x.log:9")], ["a note"])
    assert _section(s) == ["", "Demo:", "   1.39ms  a    3 lines  x.log:4", "  ≤84.0ms  bb  12 lines  x.log:9",
                           "  a note"]


def test_the_html_report_draws_every_table_the_text_report_does():
    """Hardware not found and deferred probes were in the text report only."""
    from bootlab.render.html import analysis_sections

    a = analyze(read([RPI4]), Options(top=5))
    titles = [s.title for s in analysis_sections(a)]
    for t in tables(a):
        assert t.title.rstrip(":") in titles, (t.title, titles)
    assert any(t.startswith("Hardware not found") for t in titles)
    assert any(t.startswith("Probes deferred") for t in titles)
