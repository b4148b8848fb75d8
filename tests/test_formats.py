"""The table of input formats from which detection and reading derive (issue 15,
architecture): every format is one record, found by its sniff score and read by its reader."""

from __future__ import annotations

import pytest

from bootlab.sources import FORMATS, NotALog, detect, read
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
