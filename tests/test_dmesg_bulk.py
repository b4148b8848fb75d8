"""The bulk reader of big dmesg files gives exactly what the per-line path gives."""

from __future__ import annotations

import gzip
import mmap
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bootlab import _native
from bootlab._native import dmesgscan
from bootlab.analysis import analyze
from bootlab.analysis.phases import assign, find_phases
from bootlab.render import render
from bootlab.sources import Patterns, dmesg_bulk, initcall, multiboot, printk, read
from bootlab.timeline import ConsoleLog, Kind

REAL = Path(__file__).parent / "data" / "real" / "generic-initcall.dmesg.gz"


@pytest.fixture(params=["C", "numpy"])
def scanner(request, monkeypatch):
    """Each test of the bulk reader runs with the C scanner (built by `make build`) and
    with the numpy path that stands in when it is not built."""
    if request.param == "numpy":
        monkeypatch.setattr(dmesg_bulk, "dmesgscan", None)
        monkeypatch.setattr(_native, "dmesgscan", None)  # (the pairing's, initcall._pair)
        monkeypatch.setattr(multiboot, "dmesgscan", None)  # (the banners' search)
    return request.param


def test_the_c_scanner_is_built():
    assert dmesg_bulk.dmesgscan is not None, "make build builds src/bootlab/_native"


def test_numpy_loaded_by_bootlab_runs_no_blas_threads(tmp_path):
    """numpy's OpenBLAS would start a spinning thread per CPU when it loads, CPU time that
    a big log's reader spent for nothing (bootlab sets one thread; a user's choice stays)."""
    log = tmp_path / "big.dmesg"
    _big_log(log)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = ("import re, sys; from bootlab.sources import read; read([sys.argv[1]]); "
            "print('numpy' in sys.modules, re.search(r'Threads:\\s*(\\d+)', open('/proc/self/status').read())[1])")
    out = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, check=True,
                         env=env).stdout
    assert out.split() == ["True", "1"]


def test_analysing_a_big_log_loads_no_numpy_ma(tmp_path):
    """np.unique asked for the values alone loads numpy.ma (0.01 s of a run's CPU): the
    bulk reader and its analysis do without."""
    log = tmp_path / "big.dmesg"
    _big_log(log)
    code = ("import sys; from bootlab.sources import read; from bootlab.analysis import analyze; "
            "from bootlab.render import render; render(analyze(read([sys.argv[1]])), 'text'); "
            "print('numpy' in sys.modules, 'numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


@given(st.lists(st.one_of(st.integers(-40, 40), st.just(initcall.NO_RET_CODE), st.integers(-2**40, 2**40)),
                max_size=60))
def test_code_ranks_are_the_ranks_among_the_different_codes(codes):
    code = np.asarray(codes, dtype=np.int64)
    assert initcall._code_ranks(code).tolist() == np.searchsorted(np.unique(code), code).tolist()


def _big_log(path: Path, crlf: bool = False, irregular: bool = True) -> None:
    """The real boot 14 times over, 10 s apart; `irregular`: with lines the bulk reader
    leaves to the interpreter, the log printed again and time going back."""
    base = gzip.decompress(REAL.read_bytes()).splitlines()
    lines = []
    for rep in range(14):  # ~24,000 lines: above the bulk threshold
        shift = rep * 10_000_000  # 10 s per copy, in microseconds
        for line in base:
            if line.startswith(b"["):
                sec, _, rest = line[1:].partition(b"]")
                whole, frac = sec.strip().split(b".")
                us = int(whole) * 1_000_000 + int(frac) + shift
                line = b"[%5d.%06d]" % divmod(us, 1_000_000) + rest
            lines.append(line)
        if not irregular:
            continue
        # Irregular lines the bulk reader leaves to the general interpreter.
        lines.append(b"a continuation line without a stamp")
        lines.append(b"[%5d.%06d] i8042: no controller[%5d.%06d] calling  mid_line_init+0x0/0x10 @ 1"
                     % (rep * 10 + 9, 0, rep * 10 + 9, 10))
        lines.append(b"[%5d.%06d] initcall mid_line_init+0x0/0x10 returned 0 after 5 usecs" % (rep * 10 + 9, 20))
    if irregular:
        # The log printed again after a dump marker (time starts over: no warning for that).
        lines.append(b"==== bootlab-dmesg begin ====")
        lines.extend(base[:200])
        # Time going back on initcall lines (a warning either way), a line in dmesg -r's layout,
        # and a call that never returns (it runs until the log's last time).
        lines.append(b"[    0.500000] calling  back_in_time+0x0/0x10 @ 1")
        lines.append(b"[    0.500100] initcall back_in_time+0x0/0x10 returned 0 after 100 usecs")
        lines.append(b"<6>[  140.000000] Run /init as init process")
        lines.append(b"<6>[123456789012345678901234567890.000000] a stamp no boot can have")
        lines.append(b"[  140.100000] calling  never_returns+0x0/0x10 @ 1")
        lines.append(b"[  150.000000] the last line")
    path.write_bytes((b"\r\n" if crlf else b"\n").join(lines) + b"\n")


def _summary(boot):
    # by repr: two events that tie up to their track or duration may have None in one
    events = sorted(((str(e.kind), e.name, e.clock, e.t, e.dur, e.track, tuple(sorted((e.attrs or {}).items())))
                     for e in boot.events), key=repr)
    log = boot.logs[0]
    return (events, list(log.t), list(log.text), list(log.lineno), list(log.nbytes),
            [(d.line, d.message) for d in boot.diagnostics])


def test_columns_keep_rows_of_each_part_as_of_the_whole(tmp_path):
    """Boot.columns(..., keep=...) keeps of each part (the initcalls' table, the probes'
    objects) the rows a filter of the whole table would keep, in the same order, with
    their phases."""
    path = tmp_path / "big.dmesg"
    _big_log(path, irregular=False)  # (no time going back: no events deduplicated, the table kept)
    boot = read([str(path)])
    assign(boot, find_phases(boot))
    kinds = (Kind.INITCALL, Kind.PROBE)
    whole = boot.columns(*kinds)
    assert len(whole.vocab["kind"]) == 2 and boot.tables and whole.phase is not None
    kept = boot.columns(*kinds, keep=lambda part: (part.line % 3 == 0) | (part.dur > 1_000_000))
    want = whole.take(np.flatnonzero((whole.line % 3 == 0) | (whole.dur > 1_000_000)))
    assert 0 < len(kept) < len(whole)
    assert kept.events() == want.events()


@pytest.mark.parametrize("crlf", [False, True])
def test_bulk_equals_per_line(tmp_path, monkeypatch, scanner, crlf):
    path = tmp_path / "big.dmesg"
    _big_log(path, crlf)
    bulk, per_line = _both_ways(path, monkeypatch)
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    assert not isinstance(per_line.logs[0].text, dmesg_bulk.SlicedText)
    assert render(analyze(bulk), "text") == render(analyze(per_line), "text")
    # The analyses read the columns; every event, made from them, is the same too (phases included).
    assert _reports(bulk) == _reports(per_line)
    assert _summary(bulk) == _summary(per_line)
    assert any("goes back" in d.message for d in bulk.diagnostics)
    unfinished = [e for e in bulk.events if e.name == "never_returns"]
    assert [e.dur for e in unfinished] == [9_900_000_000]


def _both_ways(path: Path, monkeypatch, fmt: str | None = None, patterns: Patterns | None = None):
    """The log read in bulk, its initcalls kept as columns, and line by line as objects."""
    tables = []
    as_columns = initcall.InitcallReader._table
    monkeypatch.setattr(initcall.InitcallReader, "_table", lambda self, *args: tables.append(1) or as_columns(
        self, *args))
    monkeypatch.setattr(initcall, "BULK_PAIRING", 0)
    bulk = read([str(path)], patterns, fmt=fmt)
    assert tables or not any(e.kind == "initcall" and not e.attrs.get("unfinished") for e in bulk.events)
    monkeypatch.setattr(initcall, "BULK_PAIRING", 10**9)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 10**9)
    return bulk, read([str(path)], patterns, fmt=fmt)


def _reports(boot) -> tuple[str, str]:
    """The SVG bootgraph (from the columns while there are columns) and JSON with every event."""
    a = analyze(boot)
    svg = render(a, "svg")
    a.options.events = True
    return svg, render(a, "json")


def test_bulk_leaves_other_layouts_to_the_per_line_path(tmp_path, scanner):
    path = tmp_path / "callerid.dmesg"
    path.write_bytes(b"".join(b"[%5d.%06d][    T1] calling  x%d+0x0/0x10 @ 1\n" % (i // 1000, i % 1000, i)
                              for i in range(30_000)))
    boot = read([str(path)])
    assert not isinstance(boot.logs[0].text, dmesg_bulk.SlicedText)
    assert len(boot.logs[0]) == 30_000


@pytest.mark.parametrize("context", [b"  [0:      swapper/0:    1] ", b" -(0)[1:swapper/0]", b"[0] "])
def test_bulk_leaves_a_vendor_context_after_the_stamp_to_the_per_line_path(tmp_path, scanner, context):
    """The CPU/task/PID a vendor kernel puts after the stamp is not in the fixed layout: the
    message would start with it, and no milestone would be read."""
    path = tmp_path / "vendor.dmesg"
    path.write_bytes(b"".join(b"[%5d.%06d]%scalling  x%d+0x0/0x10 @ 1\n" % (i // 1000, i % 1000, context, i)
                              for i in range(30_000)) + b"[   31.000000]%sdevtmpfs: initialized\n" % context)
    boot = read([str(path)])
    assert not isinstance(boot.logs[0].text, dmesg_bulk.SlicedText)
    assert boot.first_mark("kernel.devtmpfs").t == 31_000_000_000


@pytest.mark.parametrize("dirt, dirty", [(b"", False), (b"\r\n", False), (b"\tx", False), (b"\x1b[0m", True),
                                         (b"\x7f", True), (b"a\rb", True), (b"\x00", True)])
def test_control_characters_send_a_log_to_the_per_line_cleaning(dirt, dirty):
    data = b"[    0.000001] one\n" * 3 + b"[    0.000002] x" + dirt + b"\n" + b"[    0.000003] end\n"
    def newlines(data: bytes):
        return dmesg_bulk._newlines(np.frombuffer(data, dtype=np.uint8))

    assert (newlines(data) is None) is dirty
    assert newlines(data + b"\r") is None  # a CR at the very end
    if not dirty:
        assert newlines(data).tolist() == [i for i, b in enumerate(data) if b == 10]


# Initcall lines of every form the per-line expressions know, and near misses of them:
# the bulk reader must read exactly what the per-line path reads, whatever the mix.
_FUNCTIONS = st.sampled_from(["a_init", "b_init+0x0/0x2c", "12_sd_probe+0x0/0x10", "0xffffffffc0a01000",
                              "c_init+0x0/0x10 [vivid]", "d_init+0x0/0x1 [two words]", "e()", "f+g", "",
                              "a_init+0x0/0x2c"])
_NUMBER = st.sampled_from(["0", "1", "5", "01", "007", "12345678901", "-19", "-0", "x", ""])
_CALL = st.builds(lambda f, pid, tail: f"calling  {f} @ {pid}{tail}", _FUNCTIONS, _NUMBER,
                  st.sampled_from(["", "", "", " x", "\r"]))
_RETURN = st.builds(lambda f, ret, n, unit, tail: f"initcall {f} returned {ret + ' ' if ret else ''}after {n} {unit}{tail}",
                    _FUNCTIONS, _NUMBER, _NUMBER, st.sampled_from(["usecs", "usecs", "msecs", "secs"]),
                    st.sampled_from(["", "", "", " x"]))
# After a prefix (a PCI fixup's device): the C scanner reads those whose prefix holds no "[".
_PREFIXED_CALL = st.builds(lambda prefix, call: prefix + call,
                           st.sampled_from(["pci 0000:00:00.0: ", "x [y] ", "[ 1.5] ", "calling  a_init @ 1 "]), _CALL)
# PCI fixups' `took` lines and near misses: the C scanner reads those of the usual form.
_FIXUP = st.builds(lambda dev, f, n, tail: f"{dev}: {f} took {n} usecs{tail}",
                   st.sampled_from(["pci 0000:00:00.0", "x", "", "a\tb", "[1.0] d", "an initcall d"]),
                   st.sampled_from(["quirk_x+0x0/0x60", "q.y+0x1/0xa", "f-g+0x0/0x1", "f+0x0/0xG", "f", "a_init+0x0/0x2c"]),
                   _NUMBER, st.sampled_from(["", "", " x", " took 1 usecs"]))
_OTHER = st.sampled_from(["entering initcall level: fs", "probe of 0000:00:02.0 returned 0 after 12 usecs",
                          "pci 0000:00:00.0: quirk_x+0x0/0x60 took 6 usecs", "async_waiting @ 1",
                          "async_continuing @ 1 after 3 usec", "Run /init as init process", "plain message",
                          "x calling  a_init @ 1", "BOOTLAB READY"])


def test_pci_fixups_and_their_calls_are_read_in_c_as_the_per_line_path_does(tmp_path, monkeypatch):
    """A PCI fixup's `calling` line after its device and its `took` line (the commonest
    meaningful messages of an initcall_debug log) are read by the C scanner: only the near
    misses reach InitcallReader.feed, and the spans are the per-line path's."""
    lines, misses = [], 0
    for i in range(3000):
        dev = f"pci 0000:00:{i % 32:02x}.{i % 8}"
        lines += [f"{dev}: calling  quirk_{i % 50}+0x0/0x20 @ 1", f"{dev}: quirk_{i % 50}+0x0/0x20 took {i % 7} usecs"]
        if i % 100 == 0:  # near misses, left to the interpreter
            lines += [f"[{dev}]: calling  quirk_{i % 50}+0x0/0x20 @ 1", f"{dev}: quirk_x+0x0/0x20 took {i} usecs!"]
            misses += 2
    path = tmp_path / "fixups.dmesg"
    path.write_text("".join(f"[{i // 1000:5d}.{i % 1000:06d}] {m}\n" for i, m in enumerate(lines)))
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 0)
    fed = []
    feed = initcall.InitcallReader.feed
    monkeypatch.setattr(initcall.InitcallReader, "feed", lambda self, *args: fed.append(1) or feed(self, *args))
    bulk, per_line = _both_ways(path, monkeypatch)
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    assert len(fed) == misses + len(lines)  # the bulk read's near misses, then every line read line by line
    assert _summary(bulk) == _summary(per_line)
    fixups = [e for e in bulk.events if (e.attrs or {}).get("fixup")]
    assert len(fixups) == 3030 and {e.dur for e in fixups} >= {k * 1000 for k in range(7)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(st.one_of(_CALL, _RETURN, _PREFIXED_CALL, _FIXUP, _OTHER), min_size=1, max_size=60))
def test_bulk_reads_initcall_lines_as_the_per_line_path_does(tmp_path, monkeypatch, scanner, messages):
    lines = [f"[{i // 1000:5d}.{i % 1000:06d}] {m}" for i, m in enumerate(messages)]
    path = tmp_path / "log.dmesg"
    path.write_bytes(("\n".join(lines) + "\n").encode())
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 0)
    bulk, per_line = _both_ways(path, monkeypatch)
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    assert _reports(bulk) == _reports(per_line)
    assert _summary(bulk) == _summary(per_line)
    assert [(e.kind, e.name, e.line) for e in bulk.events] == [(e.kind, e.name, e.line) for e in per_line.events]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.booleans(), st.one_of(st.integers(0, 3), st.just(70_000))), max_size=80),
       seed=st.randoms())  # (a function id beyond 16 bits: the pairing's sort by function takes another way)
def test_pairing_in_bulk_pairs_as_the_stack_does(monkeypatch, scanner, ops, seed):
    """Calls and returns (each with a function) in file order, handed over calls first as
    the bulk reader does: the pairing in bulk (in C, or with numpy when the scanner is not
    built) gives what the stack per function gives."""
    lines = list(range(1, len(ops) + 1))
    calls = [i for i, (is_call, _f) in enumerate(ops) if is_call]
    rets = [i for i, (is_call, _f) in enumerate(ops) if not is_call]
    seed.shuffle(calls)  # found in any order
    line = [lines[i] for i in calls + rets]
    key = [ops[i][1] for i in calls + rets]
    monkeypatch.setattr(initcall, "BULK_PAIRING", 10**9)
    by_stack = initcall._pair(line, key, len(calls))
    monkeypatch.setattr(initcall, "BULK_PAIRING", 0)
    answered, open_calls = initcall._pair(np.asarray(line), np.asarray(key), len(calls))  # (as _joined gives them)
    assert (list(answered), open_calls) == by_stack


_WORDS = st.sampled_from(["", "calling  ", "initcall ", "probe of ", "async_", " took ", "Calling initcall ",
                          "bootlab-mark: app.start", "systemd[1]: Started x.service", "[  OK  ] Started x.",
                          "  Starting y...", "Run /init as init process", "Linux version 6.1.0 (x)",
                          "Freeing unused kernel image (initmem) memory: 2824K", "BOOTLAB READY", "login: ",
                          "Architected cp15 timer(s) running at 24.00MHz (phys)."])


def _messages_log(tmp_path: Path, monkeypatch, lines) -> Path:
    """A dmesg of these (message, rest, time, stamped) after a banner, read in bulk however
    small it is."""
    text = "[    0.000000] Linux version 6.1.0\n" + "".join(
        f"[{t // 10**6:5d}.{t % 10**6:06d}] {word}{rest}\n" if stamped else f"{word}{rest}\n"
        for word, rest, t, stamped in lines)
    path = tmp_path / "log.dmesg"
    path.write_bytes(text.encode())
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 0)
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(_WORDS, st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                                                max_size=30), st.integers(0, 3 * 10**6),
                                st.sampled_from([True] * 19 + [False])),
                      min_size=1, max_size=50))
def test_bulk_reads_any_kernel_messages_as_the_per_line_path_does(tmp_path, monkeypatch, scanner, lines):
    """Messages of every kind the interpreter knows and anything else, stamped or not (a
    continuation line), with time going back: the lines the bulk reader leaves alone are
    exactly those the interpreter would do nothing with."""
    bulk, per_line = _both_ways(_messages_log(tmp_path, monkeypatch, lines), monkeypatch, "dmesg")
    assert _reports(bulk) == _reports(per_line)
    assert _summary(bulk) == _summary(per_line)
    assert [(e.kind, e.name, e.line) for e in bulk.events] == [(e.kind, e.name, e.line) for e in per_line.events]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(_WORDS, st.sampled_from(["", " x", "0] ab", " a b", "Xab"]), st.integers(0, 3 * 10**6),
                                st.sampled_from([True] * 9 + [False])), min_size=1, max_size=40),
       ready=st.sampled_from([r"ab", r"0\] ab", r"\bBOOTLAB[- ]READY\b", r"^[\w.-]+ login$"]),
       app_start=st.sampled_from([None, r" a b", r"calling  \S+"]))
def test_bulk_finds_the_pattern_lines_as_the_per_line_path_does(tmp_path, monkeypatch, scanner, lines, ready,
                                                                app_start):
    """The ready and app-start patterns on a timed line are matched on its message: the C
    scanner looks for their hints in the messages in the same look as for the words that
    mean something (and through the untimed lines on their own); a hint that also fits across
    a stamp's end ("0] ab") or in an initcall line changes nothing."""
    bulk, per_line = _both_ways(_messages_log(tmp_path, monkeypatch, lines), monkeypatch, "dmesg",
                                Patterns.from_options(ready, app_start))
    assert _reports(bulk) == _reports(per_line)
    assert _summary(bulk) == _summary(per_line)


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r", b"\t", b"\x1b", b"\xc3\xa9", b"[", b"]", b".", b" ",
                                      b"0", b"7", b"x", b"[    1.000000] ", b"[12345.678901] ", b"[ 1 2 .000000] "]),
                      max_size=30).map(b"".join))
def test_c_lines_read_as_the_numpy_path_does(data):
    """The C scanner's lines, byte counts and stamps (or its refusal) are the numpy path's,
    whatever the bytes: CRLF, a lone CR, control characters, UTF-8, stamps near misses."""
    arr = np.frombuffer(data, dtype=np.uint8)
    native = dmesg_bulk._lines(data, arr)
    saved, dmesg_bulk.dmesgscan = dmesg_bulk.dmesgscan, None
    try:
        by_numpy = dmesg_bulk._lines(data, arr)
    finally:
        dmesg_bulk.dmesgscan = saved
    assert (native is None) == (by_numpy is None)
    if native is not None:
        assert [c.tolist() for c in native] == [c.tolist() for c in by_numpy]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.binary(max_size=40).map(lambda b: b.replace(b"\x00", b"a")) | st.text(alphabet="ab\n", max_size=40).map(
    str.encode), needle=st.text(alphabet="ab\n", min_size=1, max_size=4).map(str.encode), start=st.integers(0, 45),
       end=st.integers(0, 45))
def test_c_find_is_bytes_find(tmp_path, text, needle, start, end):
    """dmesgscan.find (multiboot's search for banners) is bytes.find, in bytes and in a
    mapped file."""
    assert dmesgscan.find(text, needle, start, end) == text.find(needle, start, end)
    assert dmesgscan.find(text, needle, start) == text.find(needle, start)
    if text:
        path = tmp_path / "mapped"
        path.write_bytes(text)
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            assert dmesgscan.find(mapped, needle, start, end) == text.find(needle, start, end)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab ]x\n", max_size=60), words=st.lists(st.text(alphabet="ab ]x", min_size=1, max_size=6),
                                                                     min_size=1, max_size=6),
       cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8))
def test_c_holding_finds_what_slices_hold_in_bytes_and_in_an_ascii_str(text, words, cuts):
    """dmesgscan.holding: bit k of a line's mask when words[k] is in it (words of one first
    byte or of several, one byte long or more: words all 3 bytes or more are looked for by
    windows that skip), the same from the text as bytes and as a str (read in place:
    console_cost's levels); a str not all ASCII is refused."""
    lines = [(min(a, b, len(text)), min(max(a, b), len(text))) for a, b in cuts]
    starts = np.asarray([a for a, _ in lines], dtype=np.int64)
    ends = np.asarray([b for _, b in lines], dtype=np.int64)
    encoded = tuple(w.encode() for w in words)
    want = [sum(1 << k for k, w in enumerate(words) if w in text[a:b]) for a, b in lines]
    for source in (text.encode(), text):
        assert np.frombuffer(dmesgscan.holding(source, starts, ends, encoded), dtype=np.uint64).tolist() == want
    with pytest.raises(ValueError, match="ASCII"):
        dmesgscan.holding(text + "\u00e9", starts, ends, encoded)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=40), word=st.binary(min_size=1, max_size=12),
       at=st.lists(st.integers(-3, 45), max_size=20))
def test_word_search_reads_like_slices(data, word, at):
    """The bulk reader's word test (eight bytes at a time, the text's end byte by byte)
    says what comparing slices says."""
    arr = np.frombuffer(data, dtype=np.uint8)
    found = dmesg_bulk._is(arr, np.asarray(at, dtype=np.int64), word)
    assert found.tolist() == [a >= 0 and data[a:a + len(word)] == word for a in at]


def test_a_boot_deep_in_a_log_of_several_is_read_without_the_boots_before(tmp_path, monkeypatch, scanner):
    """multiboot gives the reader one boot after an empty line for each line before it: the
    bulk reader makes columns of the boot's own lines only, numbered as in the file."""
    path = tmp_path / "boots.dmesg"
    _big_log(path)
    first_boot = gzip.decompress(REAL.read_bytes())
    path.write_bytes(first_boot * 3 + path.read_bytes())
    before = first_boot.count(b"\n") * 3
    sizes = []
    from_columns = ConsoleLog.from_columns.__func__
    monkeypatch.setattr(ConsoleLog, "from_columns", classmethod(
        lambda cls, file, clock, printed, times, *rest: sizes.append(len(times)) or from_columns(
            cls, file, clock, printed, times, *rest)))
    bulk, per_line = _both_ways(path, monkeypatch)
    assert sizes == [path.read_bytes().count(b"\n") - before]
    assert bulk.logs[0].lineno[0] == before + 1
    assert render(analyze(bulk), "text") == render(analyze(per_line), "text")
    assert _summary(bulk) == _summary(per_line)


def test_a_log_of_empty_lines_only_is_left_to_the_per_line_path(tmp_path, monkeypatch, scanner):
    """Nothing but the stand-ins of boots before (numpy indexed an empty text here)."""
    path = tmp_path / "empty.dmesg"
    path.write_bytes(b"\n" * 5)
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 0)
    boot = read([str(path)], fmt="dmesg")
    assert len(boot.logs[0]) == 5


def test_a_clock_that_jumps_to_a_counter_is_read_in_bulk_as_line_by_line(tmp_path, monkeypatch, scanner, fixture_path):
    """A Rockchip 3.10 kernel's stamps, zero and then the counter's time since reset, are
    read less the jump in bulk too, with the note on the same line, also in a boot after
    another in its file (its lines numbered as in the file)."""
    path = tmp_path / "boots.dmesg"
    path.write_bytes(Path(fixture_path("dmesg-clock-jumps-to-counter.txt")).read_bytes() * 2)
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 0)
    bulk, per_line = _both_ways(path, monkeypatch)
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    assert [d.line for d in bulk.diagnostics if "printk time jumps from 0" in d.message] == [27 + 13]
    assert bulk.first_mark("kernel.devtmpfs").t == 12_789_000  # 1.658110 s less the jump's 1.645321 s
    assert _reports(bulk) == _reports(per_line)
    assert _summary(bulk) == _summary(per_line)
