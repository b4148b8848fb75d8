"""Real boot logs from public boards (tests/data/corpus, see its README): every one reads."""

from __future__ import annotations

import pytest

from bootlab.analysis import analyze
from bootlab.analysis.console_loss import LINE_SHAPES
from bootlab.render import FORMATS, render
from bootlab.sources import read
from bootlab.timeline import Clock, Kind, Mark, Phase

MS = 1_000_000

CORPUS = {
    "bpi-r4__bootlog.txt": "console",
    "grabserial-bbb__graboutput.log.reference": "grabserial",
    "orangepi-rv2__bootlog.txt": "console",
    "orangepi-rv2__dmesg.txt": "dmesg",
    "pine64__bootlog.txt": "console",
    "rpi4-kernel__run1_dmesg.txt": "dmesg",
    "rpi4-kernel__run1_initcall.txt": "dmesg",
    "rpi4-userspace__run_1_blame.txt": "systemd-blame",
    "rpi4-userspace__run_1_chain.txt": "systemd-critical-chain",
    "rpi4-userspace__run_1_summary.txt": "systemd-time",
    "supermicro__dmesg.txt": "dmesg",
    "surface-book__dmesg.txt": "dmesg",
    "bootchart-example1": "bootchart",
}


@pytest.mark.parametrize("name, fmt", sorted(CORPUS.items()))
def test_every_corpus_file_reads_and_renders(corpus_path, name, fmt):
    boot = read([corpus_path(name)])
    assert boot.sources[0].format == fmt
    a = analyze(boot)
    for out in FORMATS:
        assert render(a, out)


@pytest.mark.parametrize("name", sorted(n for n, fmt in CORPUS.items() if fmt in ("console", "grabserial")))
def test_no_console_of_the_corpus_shows_lost_bytes_by_its_lines_shapes(corpus_path, name):
    """The shape check (a broken printk stamp, two records on one line) sees no damage in
    the public boards' consoles, vendor bootloader stamps and all."""
    loss = analyze(read([corpus_path(name)])).console.loss
    assert loss.against == LINE_SHAPES and loss.checked > 0 and loss.damaged == []  # 8 to 393 lines


def test_rpi4_initcalls_pair_exactly(corpus_path):
    # The corpus README: every `calling` line pairs with its `initcall ... returned` line.
    boot = read([corpus_path("rpi4-kernel__run1_initcall.txt")])
    calls = [ev for ev in boot.events if ev.kind == Kind.INITCALL]
    assert len(calls) == 703 - 0 and not [ev for ev in calls if (ev.attrs or {}).get("unfinished")]
    slowest = max(calls, key=lambda ev: ev.dur)
    assert (slowest.name, slowest.dur) == ("init_kprobe_trace", 379416 * 1000)


def test_rpi4_dmesg_phases(corpus_path):
    a = analyze(read([corpus_path("rpi4-kernel__run1_dmesg.txt")]))
    names = [s.phases[0] for s in a.phases.spans]
    assert names == [Phase.KERNEL_INIT, Phase.INITCALLS, Phase.INIT, Phase.SERVICES]
    init = a.phases.boundaries[Mark.USERSPACE_START]
    assert init.at == 3368593 * 1000 and "1589" in init.evidence
    # PCI fixups ("... took 6 usecs") pair with their calling lines.
    assert not [d for d in a.boot.diagnostics if "never returned" in d.message]


def test_rpi4_systemd_time_and_chain(corpus_path):
    boot = read([corpus_path("rpi4-userspace__run_1_summary.txt"), corpus_path("rpi4-userspace__run_1_chain.txt")])
    a = analyze(boot)
    assert a.phases.total == 14568 * MS
    target = next(s for s in a.critical.userspace if s.name == "multi-user.target")
    assert target.start == (789 + 8345) * MS


def test_bbb_grabserial_phases(corpus_path):
    a = analyze(read([corpus_path("grabserial-bbb__graboutput.log.reference")]))
    b = a.phases.boundaries
    assert b[Mark.BOOTLOADER_START].at == 647 * 1000
    assert b[Mark.KERNEL_LOAD].at == 2974300 * 1000
    assert a.boot.meta["bootdelay"] == 1
    assert a.boot.reference == Clock.HOST and a.boot.clocks[Clock.PRINTK].method == "anchors"


def test_orangepi_bootloader_clock(corpus_path):
    boot = read([corpus_path("orangepi-rv2__bootlog.txt")])
    assert boot.reference == Clock.BOOTLOADER
    assert boot.meta["bootloader"].startswith("U-Boot 2022.10ky")


def test_supermicro_crlf_and_boundary(corpus_path):
    a = analyze(read([corpus_path("supermicro__dmesg.txt")]))
    assert a.boot.meta["kernel_version"] == "5.14.0-570.23.1.el9_6.x86_64"
    assert a.phases.boundaries[Mark.USERSPACE_START].at == 4122063 * 1000


def test_surface_old_freeing_line(corpus_path):
    a = analyze(read([corpus_path("surface-book__dmesg.txt")]))
    assert a.phases.boundaries[Mark.USERSPACE_START].at == 7890696 * 1000


def test_pine64_systemd_status_lines(corpus_path):
    boot = read([corpus_path("pine64__bootlog.txt")])
    units = [ev for ev in boot.events if ev.kind == Kind.UNIT]
    assert len(units) > 50
    assert boot.meta["bootloader"].startswith("U-Boot 2017.09")
