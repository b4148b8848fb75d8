"""A real boot of the reference device, advised as a stored run (QEMU TCG, about 8 s)."""

from __future__ import annotations

import json

import pytest

from bootlab.cli import main
from bootlab.lab.boots import boot_and_store
from bootlab.lab.store import Store
from bootlab.sources import kernel_messages as km
from bootlab.sources import read
from bootlab.targets.reference import Target, build

pytestmark = pytest.mark.qemu


def test_reference_boot_advice(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    run = boot_and_store(build(Target()), Store(db))
    assert run.result.status == "ok"
    assert main(["advise", "--run", str(run.run_id), "--db", db, "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    found = {f["rule"]: f for f in doc["findings"]}
    total = doc["total_ns"]
    # Evidence names the capture kept beside the store.
    assert any(run.result.capture in e for e in found["cmdline.quiet"]["evidence"])

    quiet = found["cmdline.quiet"]
    assert quiet["patch"] == {"target": {"append": "quiet"}}
    # The stock console prints ~23 KB of kernel messages at 115200 baud (2 s if every byte
    # held the kernel up); `quiet` measured about 1.2 s here.
    assert 300_000_000 < quiet["saving_ns"] < min(total, 2_100_000_000)

    # lpj: the kernel usually takes loops_per_jiffy from the TSC ("Calibrating delay loop
    # (skipped)"): then there is nothing to save and the rule is silent.  When the TSC
    # calibration fails (about one boot in nine) the loop is calibrated, and the rule
    # proposes the value the kernel found.
    calibration = read([run.result.capture]).first_mark(km.CALIBRATE)
    assert calibration is not None
    if calibration.attrs["skipped"]:
        assert "cmdline.lpj" not in found
    else:
        lpj = found["cmdline.lpj"]
        assert lpj["patch"] == {"target": {"append": f"lpj={calibration.attrs['lpj']}"}}
        assert 0 < lpj["saving_ns"] < total

    # Decompressing the xz kernel under emulation is the largest part of the boot.
    uncompressed = found["image.uncompressed"]
    assert uncompressed["patch"] == {"target": {"image": "vmlinux"}}
    assert doc["findings"][0]["rule"] in ("image.uncompressed", "image.compression")
    assert 0 < uncompressed["saving_ns"] < total
