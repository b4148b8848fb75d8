"""The reference device through Debian's U-Boot for QEMU x86 (firmware = "u-boot"): bootlab
stops autoboot, sets bootargs, types the boot command; the timeline has U-Boot's phase and
its bootstage report from power-on; a boot command that fails is a failed run naming the
step, with U-Boot's console."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.lab.store import Store
from bootlab.targets.reference import TargetError, from_dict

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "uboot-x86.toml"


@pytest.mark.qemu
def test_uboot_boots_the_reference_device_and_the_timeline_shows_it(tmp_path):
    db = str(tmp_path / "u.db")
    assert main(["boot", "--target", str(DEMO), "--db", db]) == 0
    store = Store(db)
    run = store.runs()[0]
    assert run.status == "ok", run.reason
    capture = store.capture(run.id)
    assert b"sent 'setenv bootargs \"console=ttyS0,115200 panic=-1\"" in capture
    assert b"Starting kernel ..." in capture and b"Kernel command line: \"console=ttyS0,115200 panic=-1\"" in capture
    analysis = store.analysis(run.id)
    phases = [p["name"] for p in analysis["phases"]]
    assert phases[:3] == ["firmware", "bootloader", "kernel load/decompress"]
    stages = {s["name"] for s in analysis["blame"]["bootloader"]}
    assert {"board_init_f", "board_init_r", "start_kernel"} <= stages  # zboot's bootstage report
    bootloader = next(p for p in analysis["phases"] if p["name"] == "bootloader")
    assert 0 < bootloader["start_ns"] < bootloader["end_ns"] < run.metrics["at:ready"]


@pytest.mark.qemu
def test_a_boot_command_that_fails_is_a_failed_run_naming_the_step(tmp_path):
    target = tmp_path / "bad.toml"
    target.write_text(DEMO.read_text().replace("zboot ${kernel_addr_r} 0", "zboot 0x10 0"))
    db = str(tmp_path / "u.db")
    assert main(["boot", "--target", str(target), "--db", db]) == 1
    run = Store(db).runs()[0]
    assert run.status == "failed"
    assert run.reason.startswith("bootloader: boot: `qfw load")
    assert "did not start a kernel" in run.reason
    assert b"! failed bootloader: boot" in Store(db).capture(run.id)


def test_a_bootloader_table_needs_uboot_as_firmware():
    with pytest.raises(TargetError, match="a \\[bootloader\\] table needs firmware = \"u-boot\""):
        from_dict({"bootloader": {"boot_command": "boot"}})
    with pytest.raises(TargetError, match="zboot starts a bzImage"):
        from_dict({"target": {"firmware": "u-boot", "image": "vmlinux"}})


def test_a_bootstage_report_whose_timer_ran_fast_does_not_move_the_bootloader_before_power_on():
    """A real capture: U-Boot's timer (calibrated under TCG) made 452 ms of the 216 ms the
    host saw from power-on to the handover; the phase starts at the banner the host saw."""
    from bootlab.analysis import analyze
    from bootlab.sources import read

    a = analyze(read([str(ROOT / "tests" / "data" / "real" / "uboot-x86-fast-timer.capture.gz")]))
    bootloader = a.phases.boundaries["bootloader.start"]
    assert bootloader.at == 51_354_316 and "(bootloader banner)" in bootloader.evidence
    assert [s.name for s in a.phases.spans][:2] == ["firmware", "bootloader"]
    assert any("own timer puts its start at -0.234299 s, before power-on" in n for n in a.phases.notes)
