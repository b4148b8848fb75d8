"""journalctl's wall-clock outputs (-o short, short-precise, short-iso, short-full): read
for what they carry, refused with the reason when that is nothing (issue 15, item 5)."""

from __future__ import annotations

import pytest

from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.sources import NotALog, detect, read
from bootlab.timeline import Kind, Mark

MS = 1_000_000

PREFIXES = [
    "Nov 21 11:23:02",  # short
    "Nov 21 11:23:02.512345",  # short-precise
    "2026-11-21T11:23:02+0000",  # short-iso
    "2026-11-21T11:23:02.512345+00:00",  # short-iso-precise
    "Sat 2026-11-21 11:23:02 UTC",  # short-full
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_every_wall_clock_variant_is_detected(prefix):
    text = "\n".join(f"{prefix} board {who}: {msg}" for who, msg in [
        ("kernel", "Linux version 6.1.0-26-arm64 (debian-kernel@lists.debian.org) #1 SMP"),
        ("systemd[1]", "Started ssh.service - OpenBSD Secure Shell server."),
        ("systemd[1]", "Startup finished in 1.342s (kernel) + 4.011s (userspace) = 5.353s.")])
    assert detect.detect("j.txt", text.encode()) == "journal-short"


def test_systemd_figures_are_read(fixture_path):
    boot = read([fixture_path("journal-short.txt")])
    assert boot.sources[0].format == "journal-short"
    assert boot.meta["kernel_version"] == "6.1.0-26-arm64"
    assert boot.meta["systemd_time"] == {"kernel": 1342 * MS, "userspace": 4011 * MS}
    a = analyze(boot)
    assert a.phases.end.mark == Mark.READY
    assert a.phases.end.at == 5353 * MS
    # The units are read in order, untimed: their wall-clock times are not boot times.
    units = [ev for ev in boot.events if ev.kind == Kind.UNIT]
    assert {ev.name for ev in units} >= {"systemd-journald.service", "ssh.service"}
    assert all(ev.t is None for ev in units)
    assert [d.line for d in boot.diagnostics if "wall-clock" in d.message] == [1]
    # The kernel log is the kernel's entries: programs' entries never went through its console.
    assert list(boot.logs[0].lineno) == [2, 3, 4, 5, 6]


def test_kernel_lines_keep_their_own_stamps(fixture_path):
    boot = read([fixture_path("journal-short-iso-stamped.txt")])
    assert boot.sources[0].format == "journal-short"
    (run,) = [ev for ev in boot.marks(Mark.USERSPACE_START)]
    assert boot.at(run) == 1204 * MS


def test_nothing_to_time_is_refused_with_the_reason(fixture_path, capsys):
    path = fixture_path("journal-short-precise-bare.txt")
    with pytest.raises(NotALog, match=r"precise-bare.txt:1: journalctl wall-clock output .* short-monotonic"):
        read([path])
    assert main(["analyze", path]) == 2
    assert "short-monotonic" in capsys.readouterr().err


def test_a_journal_of_two_boots_reads_the_last(fixture_path, tmp_path):
    with open(fixture_path("journal-short.txt")) as fh:
        text = fh.read()
    path = tmp_path / "two.txt"
    path.write_text(text + text.replace("0d3f6b1e", "7a7a7a7a").replace("5.353s", "6.353s").replace(
        "4.011s (userspace)", "5.011s (userspace)"))
    boot = read([str(path)])
    assert any("holds 2 boots" in d.message for d in boot.diagnostics)
    assert boot.meta["systemd_time"]["userspace"] == 5011 * MS
