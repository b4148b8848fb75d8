"""The table of input formats from which detection and reading derive (issue 15,
architecture): every format is one record, found by its sniff score and read by its reader."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.analysis import analyze
from bootlab.sources import FORMATS, NotALog, detect, listing, read
from bootlab.sources.formats import TABLE

DETECTED = [
    ("uboot-bootstage-unnamed.txt", "uboot-bootstage"),
    ("uboot-console-bootstage.txt", "console"),
    ("grabserial-imx-spl.log", "grabserial"),
    ("grabserial-imx-bootstage.log", "grabserial"),
    ("dmesg-2.6-jiffies.txt", "dmesg"),
    ("journal-short.txt", "journal-short"),
    ("journal-short-iso-stamped.txt", "journal-short"),
    ("journal-short-precise-bare.txt", "journal-short"),
    ("bootchart-android.tgz", "bootchart"),
]


def test_one_record_per_format():
    names = [f.name for f in TABLE]
    assert len(names) == len(set(names))
    # What --input-format accepts is every record bootlab reads; a refusal is not a format.
    assert set(FORMATS) == {f.name for f in TABLE if not f.refusal}
    assert all((f.read is None) == bool(f.refusal) for f in TABLE)


@pytest.mark.parametrize("name, fmt", DETECTED)
def test_detect(fixture_path, name, fmt):
    path = fixture_path(name)
    with open(path, "rb") as fh:
        assert detect.detect(path, fh.read()) == fmt


def test_a_refused_shape_names_its_reason_and_line(fixture_path):
    (coarse,) = [f for f in TABLE if f.refusal]
    with pytest.raises(NotALog) as err:
        read([fixture_path("dmesg-T.txt")])
    assert err.value.line == 1 and coarse.refusal in str(err.value)


def test_a_console_that_starts_in_the_kernel_is_no_dmesg(tmp_path):
    """A public CentOS 7 console (rd.debug: its first 268 lines all the kernel's, dracut's
    debug among them) was read as a dmesg, its bytes costed by log level instead of as
    printed: systemd's status lines without a printk stamp are a console's only.  It began
    at 0.704 s of printk time: the capture started late, which a note now says."""
    lines = [f"[    {0.704083 + k / 1000:.6f}] dracut-cmdline[85]: //lib/dracut-lib.sh@{421 + k}(): hookdir" for k in range(20)]
    lines += ["[    1.252769] [  OK  ] Started Show Plymouth Boot Screen.", "[  OK  ] Reached target Paths.",
              "[    1.260000] systemd[1]: Started udev Kernel Device Manager.", "", "RH7 login: "]
    log = tmp_path / "centos7.log"
    log.write_text("\n".join(lines) + "\n")
    assert detect.detect(str(log), log.read_bytes()) == "console"
    a = analyze(read([str(log)]))
    assert a.console.printed
    assert any("begins at 0.704083 s of printk time, in the kernel's boot" in n and "capture started late" in n
               for n in a.phases.notes)
    # The same lines saved by dmesg (no status line without a stamp) stay a dmesg.
    dmesg = tmp_path / "dmesg.txt"
    dmesg.write_text("\n".join(lines[:21]) + "\n")
    assert detect.detect(str(dmesg), dmesg.read_bytes()) == "dmesg"


@pytest.mark.parametrize("fixture", ["grabserial-imx-spl.log", "console-kernel-panic.txt", "dmesg-plain.txt"])
def test_a_numbered_listing_is_read_as_the_log_it_lists(fixture_path, tmp_path, fixture):
    """A log published as `cat -n` prints it (a MaaXBoard's console in a public guide, its
    tabs expanded to spaces and one long line wrapped onto a line of its own) was refused as
    no boot log: it reads as the log it lists, each line at its number."""
    lines = open(fixture_path(fixture), "rb").read().splitlines()
    listed = tmp_path / "listed.log"
    listed.write_bytes(b"".join(b"%6d\t%s\n" % (n, line) for n, line in enumerate(lines, 1)))
    # The copy in a document: tabs expanded, line 3 wrapped at its last space.
    copied = tmp_path / "copied.log"
    out = []
    for n, line in enumerate(lines, 1):
        head, _, tail = line.rpartition(b" ") if n == 3 and b" " in line.strip() else (line, b"", b"")
        out.append(b"%6d  %s" % (n, head) + (b"\n          " + tail if tail else b""))
    copied.write_bytes(b"\n".join(out) + b"\n")
    plain = analyze(read([fixture_path(fixture)]))
    for path in (listed, copied):
        a = analyze(read([str(path)]))
        assert [(s.phases, s.start, s.duration, re.sub(rf"\S*{path.name}", "F", s.start_evidence))
                for s in a.phases.spans] == [(s.phases, s.start, s.duration,
                                              re.sub(rf"\S*{fixture}", "F", s.start_evidence))
                                             for s in plain.phases.spans]
        assert [e.line for e in a.boot.events] == [e.line for e in plain.boot.events]
        assert any("a numbered listing (`cat -n`)" in d.message for d in a.boot.diagnostics)


def test_lines_that_begin_with_numbers_are_no_listing(tmp_path):
    """U-Boot's bootstage table begins its rows with numbers, not the next line's."""
    log = tmp_path / "rows.txt"
    log.write_text("     0  reset\n     1  board_init_f\n     5  board_init_r\n     9  main_loop\n"
                   "    12  start_kernel\n")
    assert listing.unnumber(log.read_bytes()) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                        max_size=60), min_size=5, max_size=40),
       st.integers(min_value=1, max_value=2_000_000))
def test_any_listing_unnumbers_to_the_lines_it_lists(lines, first):
    """Whatever the lines hold (numbers and tabs of their own, nothing at all), their
    listing from any first number reads back as them, each at its number."""
    data = [line.encode() for line in lines]
    listed = b"".join(b"%6d\t%s\n" % (first + k, line) for k, line in enumerate(data))
    assert listing.unnumber(listed) == b"\n" * (first - 1) + b"\n".join(data) + b"\n"
