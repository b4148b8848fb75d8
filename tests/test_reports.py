"""The HTML and SVG reports without a browser (tests/test_browser.py opens them in one):
what the bootgraph draws, the advice in the analysis report, file names relative to where
the command ran."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from bootlab.analysis import analyze
from bootlab.render import render
from bootlab.render.svg import pack
from bootlab.sources import read
from bootlab.timeline import Kind

REAL = Path(__file__).parent / "data" / "real"
FILES = [str(REAL / "generic-initcall.capture.gz"), str(REAL / "generic-initcall.dmesg.gz")]


def test_bootgraph_draws_every_span_with_a_legend():
    a = analyze(read(FILES))
    svg = render(a, "svg")
    initcalls = [e for e in a.boot.events if e.kind == Kind.INITCALL and e.dur is not None and a.boot.at(e) is not None]
    drawn = re.findall(r"<title>[^<]*\[initcall\]", svg)
    assert len(drawn) == len(initcalls) == 685   # those under 4 ms (most of them) were not drawn before
    widths = [float(w) for w in re.findall(r'class="sp" data-s="\d+" data-e="\d+" x="[\d.]+" y="\d+" width="([\d.]+)"', svg)]
    assert min(widths) >= 1.0
    legend = re.search(r'<g class="legend".*?</g>', svg, re.S).group(0)
    for key in ("kernel load/decompress", "initcalls", "driver probes", "returned an error", "phase boundary"):
        assert f">{key}<" in legend
    # The axis offers to cut the emulated decompression (41% of this boot) and to start at the kernel.
    assert 'data-cut-name="kernel load/decompress"' in svg and 'data-kernel="3173944931"' in svg


def test_lanes_pack_overlaps_only():
    assert pack([(0, 10), (5, 15), (10, 20), (12, 30), (30, 31)]) == ([0, 1, 0, 2, 0], set())
    assert pack([(0, 10), (1, 11), (2, 10)], max_lanes=2) == ([0, 1, 0], {2})   # over the lane freeing first
    assert pack([(0, 10), (1, 11), (9, 100)], max_lanes=2) == ([0, 1, 0], set())   # only its start is over


def test_analysis_report_shows_the_advice_and_names_files_where_they_were_given(tmp_path):
    for name in FILES:
        shutil.copy(name, tmp_path)
    absolute = [str(tmp_path / Path(name).name) for name in FILES]
    done = subprocess.run([sys.executable, "-m", "bootlab", "analyze", "-f", "html", *absolute], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    html = done.stdout
    assert "<h2>Advice (" in html and "Add `quiet` to the kernel command line" in html
    assert str(tmp_path) not in html and "generic-initcall.capture.gz:390" in html
