"""Logs of many boots read fast: where a boot starts is found by looking back from its
banner, and a small boot deep in a big file is read in bulk, without the boots before."""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.analysis import analyze
from bootlab.render import render
from bootlab.sources import dmesg_bulk, multiboot, printk, read

REAL = Path(__file__).parent / "data" / "real" / "generic-initcall.dmesg.gz"
LINE = st.sampled_from([b"[    0.000000] zero", b"[    1.500000] later", b"[    0.000000][    2.000000] two",
                        b"U-Boot 2023.01", b"no stamp", b"", b"[ 4294667.296000] jiffies", b"[\n 3.000000] split"])


def _forward(data: bytes, previous: int, banner: int):
    """What _last_boot_stamps finds, by walking every stamp forwards."""
    after, first_zero = None, None
    for m in multiboot._PRINTK_STAMP.finditer(data, previous, banner):
        if multiboot._zero(m.group("t")):
            first_zero = m.start() if first_zero is None else first_zero
        else:
            after, first_zero = m.end(), None
    return after, first_zero


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=60), st.integers(0, 40), st.integers(1, 4))
def test_looking_back_finds_what_walking_forward_finds(lines, skip, window):
    data = b"\n".join(lines) + b"\n"
    previous = min(skip, len(data))
    original = multiboot._WINDOW
    multiboot._WINDOW = window * 8  # small windows: many steps back
    try:
        assert multiboot._last_boot_stamps(data, previous, len(data)) == _forward(data, previous, len(data))
    finally:
        multiboot._WINDOW = original


def test_a_small_boot_after_many_is_read_in_bulk(tmp_path, monkeypatch):
    one = gzip.decompress(REAL.read_bytes())
    path = tmp_path / "boots.dmesg"
    path.write_bytes(one * 240)  # the stand-ins for the boots before (a byte a line) reach the bulk size
    bulk = read([str(path)])
    assert isinstance(bulk.logs[0].text, dmesg_bulk.SlicedText)
    assert bulk.logs[0].lineno[0] == one.count(b"\n") * 239 + 1
    monkeypatch.setattr(printk, "BULK_MIN_BYTES", 10**12)
    per_line = read([str(path)])
    assert not isinstance(per_line.logs[0].text, dmesg_bulk.SlicedText)
    assert render(analyze(bulk), "text") == render(analyze(per_line), "text")
    assert [(e.kind, e.name, e.t, e.dur, e.line) for e in bulk.events] == \
        [(e.kind, e.name, e.t, e.dur, e.line) for e in per_line.events]


def test_detecting_the_format_makes_no_copy_of_the_file():
    """A capture of many boots is held once: telling its format copies none of it (a copy of
    a 660 MB capture doubled the peak memory of reading one boot)."""
    import tracemalloc

    from bootlab.sources import detect

    data = gzip.decompress(REAL.read_bytes()) * 40
    tracemalloc.start()
    try:
        assert detect.detect("boots.dmesg", data) == "dmesg"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 4


def _many_boots(tmp_path, copies: int) -> Path:
    path = tmp_path / "boots.dmesg"
    with path.open("wb") as out:
        one = gzip.decompress(REAL.read_bytes())
        for _ in range(copies):
            out.write(one)
    return path


def test_a_mapped_file_gives_the_boot_that_reading_it_whole_gives(tmp_path, monkeypatch):
    """A big file is mapped and only its boot copied out: the same boot, the same analysis,
    with windows and page releases small enough to be crossed many times."""
    path = _many_boots(tmp_path, 30)
    monkeypatch.setattr(multiboot, "_RELEASE_STEP", 1 << 16)
    for which in (1, 17, None):
        monkeypatch.setattr(multiboot, "BIG_FILE", 0)
        mapped = read([str(path)], which=which)
        monkeypatch.setattr(multiboot, "BIG_FILE", 10**12)
        whole = read([str(path)], which=which)
        assert render(analyze(mapped), "text") == render(analyze(whole), "text")
        assert [(e.kind, e.name, e.t, e.dur, e.line) for e in mapped.events] == \
            [(e.kind, e.name, e.t, e.dur, e.line) for e in whole.events]
        assert [(d.line, d.message) for d in mapped.diagnostics] == [(d.line, d.message) for d in whole.diagnostics]


def test_finding_a_boot_in_a_mapped_file_holds_the_boot_not_the_file(tmp_path):
    """The peak memory of finding and copying out one boot of 1,200 (138 MB) follows the
    boot: the mapped file's pages are given back once looked through."""
    import subprocess
    import sys

    path = _many_boots(tmp_path, 1200)
    size = path.stat().st_size
    script = ("import resource, sys\n"
              "from bootlab.sources import multiboot\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "part = multiboot.select(multiboot.map_file(sys.argv[1]), int(sys.argv[2]))\n"
              "print(part.index, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    for which in ("1", "-1"):
        index, grown = subprocess.run([sys.executable, "-c", script, str(path), which], check=True,
                                      capture_output=True, text=True).stdout.split()
        assert int(index) == (1 if which == "1" else 1200)
        assert int(grown) * 1024 < size // 4


def test_only_a_big_plain_file_is_mapped(tmp_path, monkeypatch):
    """A gzipped log, a FIFO (`bootlab analyze <(ssh board dmesg)`), a directory and a small
    file are read as before; a FIFO is not opened to be looked at (that would wait for its
    writer, and its data could be read only once)."""
    import os

    monkeypatch.setattr(multiboot, "BIG_FILE", 1)
    gz = tmp_path / "boots.dmesg.gz"
    gz.write_bytes(REAL.read_bytes())
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert multiboot.map_file(str(gz)) is None
    assert multiboot.map_file(str(fifo)) is None
    assert multiboot.map_file(str(tmp_path)) is None
    assert multiboot.map_file(str(tmp_path / "missing")) is None
    plain = _many_boots(tmp_path, 1)
    assert multiboot.map_file(str(plain))[:] == plain.read_bytes()
    monkeypatch.setattr(multiboot, "BIG_FILE", 1 << 26)
    assert multiboot.map_file(str(plain)) is None
