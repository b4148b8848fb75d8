"""The advice reads a big log's columns: the same findings as from event objects, without
making 400,000 initcalls objects, and the same lines found as by trying each line."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from test_dmesg_bulk import _both_ways, _big_log

from bootlab.advice import RULES, _load_rules, advise
from bootlab.advice import common
from bootlab.analysis import analyze
from bootlab.sources import read
from bootlab.timeline import SpanTable

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
from analyze_scale import build_log  # noqa: E402  (the benchmark's own log)

TESTS = Path(__file__).parent
LOGS = sorted(p for p in (TESTS / "data" / "corpus").iterdir() if p.suffix in (".txt", ".log", ".reference")) + \
    sorted(p for p in (TESTS / "advice" / "data").iterdir() if p.suffix in (".txt", ".log", ".capture"))


def _found(findings) -> list[tuple]:
    return [(f.rule, f.title, f.evidence, f.saving_ns, f.confidence, f.notes) for f in findings]


def test_advice_from_columns_equals_advice_from_objects(tmp_path, monkeypatch):
    path = tmp_path / "big.dmesg"
    _big_log(path)
    bulk, per_line = _both_ways(path, monkeypatch)
    from_columns = advise(bulk, analyze(bulk))
    assert from_columns and _found(from_columns) == _found(advise(per_line, analyze(per_line)))


def test_advice_leaves_the_columns_columns(tmp_path, monkeypatch):
    """The benchmark's log (a real initcall_debug boot over and over): the advice makes
    objects of the few spans it cites, not of every initcall."""
    path = tmp_path / "repeated.dmesg"
    build_log(path, 40_000)
    boot = read([str(path)])
    assert boot.tables
    made = []
    monkeypatch.setattr(SpanTable, "events", lambda self: made.append(len(self)) or [])
    assert advise(boot, analyze(boot))
    assert boot.tables and made == []


def _patterns() -> list[re.Pattern]:
    """Every pattern the rules look for in the logs (module constants of the advice)."""
    _load_rules()
    modules = {fn.__module__ for _family, fn in RULES}
    found = [value for name in sorted(modules) for value in vars(sys.modules[name]).values()
             if isinstance(value, re.Pattern)]
    found += [pattern for name in sorted(modules) for value in vars(sys.modules[name]).values()
              if isinstance(value, (tuple, list)) for item in value if isinstance(item, tuple)
              for pattern in item if isinstance(pattern, re.Pattern)]
    return found + [re.compile(r"Starting .*(?:avahi)", re.IGNORECASE), re.compile(r"^Memory: "),
                    re.compile(r"(?i:FREEING) unused"), re.compile(r"\d+K/\d+K available$"),
                    re.compile(r"(?<=: )clean"), re.compile(r"(?:ab)+|x?y")]


def _each_line(boot, pattern: re.Pattern) -> list[tuple]:
    """find_lines' result as trying every line's message would give it."""
    out = []
    for log in boot.logs:
        for i in range(len(log)):
            m = pattern.match(common.Line(log, i).message)
            if m:
                out.append((log.file, i, m.span()))
    return out


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_find_lines_finds_what_each_line_matched(path):
    boot = read([str(path)])
    for pattern in _patterns():
        found = [(line.log.file, line.i, m.span()) for line, m in common.find_lines(boot, pattern)]
        assert found == _each_line(boot, pattern), pattern.pattern


def test_find_lines_in_a_big_log_read_in_bulk(tmp_path):
    path = tmp_path / "big.dmesg"
    _big_log(path)
    with path.open("ab") as out:  # lines the rules look for, among the initcalls
        out.write(b"[  150.100000] Kernel command line: console=ttyS0 quiet\n"
                  b"[  150.200000] EXT4-fs (vda): recovery complete\n[  150.300000] jFfS2 notice: something\n")
    boot = read([str(path)])
    assert isinstance(boot.logs[0].text, common.SlicedText)
    for pattern in _patterns():
        found = [(line.log.file, line.i, m.span()) for line, m in common.find_lines(boot, pattern)]
        assert found == _each_line(boot, pattern), pattern.pattern


@pytest.mark.parametrize("pattern, needles, folded", [
    (r"(?:Kernel )?[Cc]ommand line: ", ["ommand line: "], False),
    (r"(?i)jffs2", ["jffs2"], True),
    (r"(?:a(?i:bc)|de)f", ["bc", "de"], True),
    (r"x(?:abc|de)+", ["abc", "de"], False),
    (r"\d+ ?", None, False),
    (r"a|\d", None, False),
    (r"(?:foo)?bar", ["bar"], False),
])
def test_needles_are_held_by_every_match(pattern, needles, folded):
    assert common._needles(re.compile(pattern)) == (needles, folded)


def test_find_lines_in_a_log_not_ascii(tmp_path):
    path = tmp_path / "utf8.log"
    path.write_text("[    0.000000] Linux version 6.1 \u00e9\n[    0.100000] Starting AVAHI daemon\n")
    boot = read([str(path)])
    pattern = re.compile(r"Starting .*(?:avahi)", re.IGNORECASE)
    assert [line.i for line, _m in common.find_lines(boot, pattern)] == [1]
