"""`make demo` (= `bootlab demo --target demo/camera.toml`), one timed boot: the Table III
scenario it runs after ready is checked again in a boot of the same device with -icount,
where the guest's clock counts instructions, so its result is the same in every run and
can be asserted (under plain TCG, what the timed boot shows, the framework's own work per
job costs a fraction of a millisecond of real time and the jobs overrun: reported, not
asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.cli import main

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).parents[1]


def test_demo_checks_the_scheduler_where_the_guest_clock_is_deterministic(tmp_path, capsys):
    report = tmp_path / "report.html"
    assert main(["demo", "--target", str(ROOT / "demo" / "camera.toml"), "--runs", "1",
                 "--db", str(tmp_path / "bootlab.db"), "-o", str(report)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    # The -icount boot's guest clock counts instructions: its ready is where the line was
    # seen, not a guest-clock time with a "console backlog" made of the clocks' difference.
    check = next(line for line in captured.err.splitlines() if line.startswith("scheduler check 1/1: "))
    assert "ready" in check and "console backlog" not in check, check
    timed, _, checked = out.partition("the same device with -icount shift=0,sleep=off):")
    assert "QEMU TCG without -icount):" in timed and checked, out[-3000:]
    assert "deadline misses: 0" in checked and "VIOLATION" not in checked
    assert "every response time within its analytical bound, every server within its budget" in checked
    html = report.read_text()
    assert "the same device with -icount shift=0,sleep=off): plugin hsf-fp" in html
    assert "QEMU TCG without -icount): plugin hsf-fp" in html
