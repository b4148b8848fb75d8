"""The bulk reader of big dmesg files gives exactly what the per-line path gives."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from bootlab.analysis import analyze
from bootlab.render import render
from bootlab.sources import dmesg_bulk, read

REAL = Path(__file__).parent / "data" / "real" / "generic-initcall.dmesg.gz"


def _big_log(path: Path, crlf: bool = False) -> None:
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
        # Irregular lines the bulk reader leaves to the general interpreter.
        lines.append(b"a continuation line without a stamp")
        lines.append(b"[%5d.%06d] i8042: no controller[%5d.%06d] calling  mid_line_init+0x0/0x10 @ 1"
                     % (rep * 10 + 9, 0, rep * 10 + 9, 10))
        lines.append(b"[%5d.%06d] initcall mid_line_init+0x0/0x10 returned 0 after 5 usecs" % (rep * 10 + 9, 20))
    # Time going back on initcall lines (a warning either way), a line in dmesg -r's layout,
    # and a call that never returns (it runs until the log's last time).
    lines.append(b"[    0.500000] calling  back_in_time+0x0/0x10 @ 1")
    lines.append(b"[    0.500100] initcall back_in_time+0x0/0x10 returned 0 after 100 usecs")
    lines.append(b"<6>[  140.000000] Run /init as init process")
    lines.append(b"[  140.100000] calling  never_returns+0x0/0x10 @ 1")
    lines.append(b"[  150.000000] the last line")
    path.write_bytes((b"\r\n" if crlf else b"\n").join(lines) + b"\n")


def _summary(boot):
    events = sorted((str(e.kind), e.name, e.clock, e.t, e.dur, e.track, tuple(sorted((e.attrs or {}).items())))
                    for e in boot.events)
    log = boot.logs[0]
    return (events, list(log.t), list(log.text), list(log.lineno), list(log.nbytes),
            [(d.line, d.message) for d in boot.diagnostics])


@pytest.mark.parametrize("crlf", [False, True])
def test_bulk_equals_per_line(tmp_path, monkeypatch, crlf):
    path = tmp_path / "big.dmesg"
    _big_log(path, crlf)
    bulk = read([str(path)])
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    monkeypatch.setattr(dmesg_bulk, "MIN_LINES", 10**9)
    per_line = read([str(path)])
    assert not isinstance(per_line.logs[0].text, dmesg_bulk.SlicedText)
    assert _summary(bulk) == _summary(per_line)
    assert any("goes back" in d.message for d in bulk.diagnostics)
    unfinished = [e for e in bulk.events if e.name == "never_returns"]
    assert [e.dur for e in unfinished] == [9_900_000_000]
    assert render(analyze(bulk), "text") == render(analyze(per_line), "text")


def test_bulk_leaves_other_layouts_to_the_per_line_path(tmp_path):
    path = tmp_path / "callerid.dmesg"
    path.write_bytes(b"".join(b"[%5d.%06d][    T1] calling  x%d+0x0/0x10 @ 1\n" % (i // 1000, i % 1000, i)
                              for i in range(30_000)))
    boot = read([str(path)])
    assert not isinstance(boot.logs[0].text, dmesg_bulk.SlicedText)
    assert len(boot.logs[0]) == 30_000


@pytest.mark.parametrize("dirt, dirty", [(b"", False), (b"\r\n", False), (b"\tx", False), (b"\x1b[0m", True),
                                         (b"\x7f", True), (b"a\rb", True), (b"\x00", True)])
def test_control_characters_send_a_log_to_the_per_line_cleaning(dirt, dirty):
    data = b"[    0.000001] one\n" * 3 + b"[    0.000002] x" + dirt + b"\n" + b"[    0.000003] end\n"
    assert dmesg_bulk._dirty(np.frombuffer(data, dtype=np.uint8)) is dirty
    assert dmesg_bulk._dirty(np.frombuffer(data + b"\r", dtype=np.uint8))  # a CR at the very end
