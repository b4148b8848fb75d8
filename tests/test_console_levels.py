"""Which lines of a big kernel log reached the console, told with numpy from the log's
text, is what line_level() tells line by line."""

from __future__ import annotations

import importlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.timeline import NO_TIME, Clock, ConsoleLog, SlicedText

console_cost = importlib.import_module("bootlab.analysis.console_cost")

WORDS = st.sampled_from(["calling  foo+0x0/0x10 @ 1", "initcall foo+0x0/0x10 returned 0 after 5 usecs",
                         "probe of 0000:00:01.0 returned 0 after 5 usecs", "probe of  returned", "probe of x",
                         "async_waiting @ 1", "async_continuing @ 1", "PCI fixup x", "pci fixup y",
                         "Linux version 6.1", "]", "] calling", "calling  ", "usb 1-1: new device"])
PREFIX = st.sampled_from(["[    1.000000] ", "[123456.000000] ", "<7>[    1.000000] ", "<4>", "6,1,2,-;",
                          "kern  :debug : ", "kern  :warn  : ", "x", "", "[    2.000000] [    3.000000] "])
LINE = st.builds(lambda p, w, timed: (p + w, timed), PREFIX, WORDS, st.booleans())


def _one_by_one(log: ConsoleLog, rules) -> np.ndarray:
    shown, current = np.ones(len(log), dtype=bool), True
    for i, text in enumerate(log.text):
        if log.t.raw[i] != NO_TIME:
            current = console_cost.line_level(text) < rules.loglevel
        shown[i] = current
    return shown


def _log(lines: list[tuple[str, bool]], crlf: bool) -> ConsoleLog:
    sep = "\r\n" if crlf else "\n"
    whole = sep.join(text for text, _ in lines) + sep
    starts = np.cumsum([0] + [len(text) + len(sep) for text, _ in lines])[:-1].astype(np.int64)
    ends = starts + np.array([len(text) for text, _ in lines], dtype=np.int64)
    times = np.array([1000 * i if timed else NO_TIME for i, (_, timed) in enumerate(lines)], dtype=np.int64)
    n = len(lines)
    return ConsoleLog.from_columns("x", Clock.PRINTK, False, times, SlicedText(whole, starts, ends),
                                   np.arange(1, n + 1), np.ones(n, dtype=np.int32))


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=40), st.booleans(), st.sampled_from([None, "quiet", "loglevel=8"]))
def test_levels_from_the_text_are_the_levels_of_each_line(lines, crlf, cmdline):
    log = _log(lines, crlf)
    rules = console_cost.console_rules(cmdline)
    expected = _one_by_one(log, rules)
    assert console_cost.dmesgscan is not None, "make build builds src/bootlab/_native"
    assert (console_cost.reached_console(log, rules) == expected).all()
    c_scanner, console_cost.dmesgscan = console_cost.dmesgscan, None  # the numpy path, for when it is not built
    try:
        assert (console_cost.reached_console(log, rules) == expected).all()
    finally:
        console_cost.dmesgscan = c_scanner


def test_initcall_lines_are_told_without_a_call_a_line(monkeypatch):
    lines = [("[    1.000000] calling  foo+0x0/0x10 @ 1", True),
             ("[    1.000100] initcall foo+0x0/0x10 returned 0 after 5 usecs", True)] * 500
    log = _log(lines + [("<4>[    2.000000] a warning", True)], False)
    asked = []
    line_level = console_cost.line_level
    monkeypatch.setattr(console_cost, "line_level", lambda text: asked.append(text) or line_level(text))
    shown = console_cost.reached_console(log, console_cost.console_rules(None))
    assert asked == ["<4>[    2.000000] a warning"] and shown.tolist() == [False] * 1000 + [True]
