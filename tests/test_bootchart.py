"""bootchart logs read as pybootchartgui reads them, and drawn with their CPU and disk
lanes (issue 15, item 9)."""

from __future__ import annotations

import re

import pytest

from bootlab.analysis import analyze
from bootlab.render import render
from bootlab.sources import NotALog, read
from bootlab.timeline import Kind, Mark, Phase

MS = 1_000_000


def _processes(boot):
    return {ev.name: ev for ev in boot.events if ev.kind == Kind.PROCESS}


def test_android_header_gives_the_kernel_version(fixture_path):
    boot = read([fixture_path("bootchart-android.tgz")])
    assert boot.meta["kernel_version"] == "2.6.29-00479-g3c7df37"


def test_userspace_starts_with_pid_1(fixture_path):
    boot = read([fixture_path("bootchart-android.tgz")])
    (start,) = boot.marks(Mark.USERSPACE_START)
    assert start.t == 520 * MS and start.line == 2
    a = analyze(boot)
    init = next(s for s in a.phases.spans if Phase.INIT in s.phases)
    assert init.start == 520 * MS


def test_long_lived_kernel_threads_are_left_out(fixture_path, corpus_path):
    boot = read([fixture_path("bootchart-android.tgz")])
    names = set(_processes(boot))
    assert not names & {"kthreadd", "ksoftirqd/0", "events/0", "khelper"}
    # A kernel thread that works and ends is part of the boot; userspace stays whatever it does.
    assert {"mmcqd", "init", "ueventd", "zygote", "system_server"} <= names
    assert [d.message.split()[0] for d in boot.diagnostics if "kernel threads" in d.message] == ["4"]
    desktop = read([corpus_path("bootchart-example1")])
    left = _processes(desktop)
    pids = {ev.attrs["pid"] for ev in desktop.events if ev.kind == Kind.PROCESS}
    assert not pids & {2, 3, 4, 6, 9, 10}  # kthreadd, migration/0, ksoftirqd/0, migration/1, events/0, events/1
    assert not set(left) & {"khubd", "ata/0"}  # started by modules, alive to the end
    assert {"init", "udevd", "usplash"} <= set(left)
    blame = render(analyze(desktop), "text").split("Longest-lived processes")[1]
    assert "ksoftirqd" not in blame and "migration" not in blame


def test_cpu_and_disk_samples_are_lanes_in_the_svg(fixture_path):
    boot = read([fixture_path("bootchart-android.tgz")])
    svg = render(analyze(boot), "svg")
    lanes = re.findall(r'<text class="lbl" x="6" y="\d+">([^:<]+):', svg)
    assert lanes == ["cpu %", "disk KiB/s"]
    bars = re.findall(r'<rect class="sp" data-s="\d+" data-e="\d+" [^>]*><title>([^:<]+): ', svg)
    assert set(bars) <= {"cpu busy %", "cpu iowait %", "disk read KiB/s", "disk write KiB/s"}
    assert "cpu busy %" in bars and "disk read KiB/s" in bars
    # A bar per sample until the next (rates are differences between samples): at most 6 a series.
    assert all(bars.count(name) <= 6 for name in set(bars))


def test_a_damaged_bootchart_archive_is_a_warning_or_unreadable_never_a_traceback(fixture_path, tmp_path):
    """A byte inserted into the deflate stream (as the fuzz test found: zlib.error from
    inside tarfile), at many places, or the archive cut short."""
    with open(fixture_path("bootchart-android.tgz"), "rb") as fh:
        data = fh.read()
    damaged = [data[:at] + b"\x00" + data[at:] for at in range(10, len(data), 97)] + [data[:700]]
    for k, bad in enumerate(damaged):
        path = tmp_path / f"damaged-{k}.tgz"
        path.write_bytes(bad)
        try:
            boot = read([str(path)])
        except NotALog as err:
            assert str(path) in str(err)
            continue
        render(analyze(boot), "text")
