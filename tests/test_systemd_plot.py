"""`systemd-analyze plot`'s SVG read back (issue 19, item 3: bookworm's systemd 252 has no
`plot --json`): a real one printed by the systemd device booted with rootfs.plot, and
damaged ones cut from it."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.sources import NotALog, read
from bootlab.sources.detect import detect
from bootlab.sources.systemd_analyze import ConsoleOutputs, marker
from bootlab.targets import rootfs
from bootlab.timeline import Boot, Clock, Kind

# Printed by the systemd device with rootfs.plot (Debian 6.1 kernel under TCG, systemd 252).
REAL = Path(__file__).parent / "data" / "real" / "systemd-plot.svg.gz"
MS = 1_000_000
# What the same boot's `systemd-analyze blame` printed (the slowest five): the plot's bars
# must say the same, to its 10 µs.
BLAME = {"dev-vda.device": 14_139, "systemd-udev-trigger.service": 5_850, "systemd-journald.service": 4_757,
         "e2scrub_reap.service": 4_342, "bootlab-app.service": 3_299}


def _text() -> str:
    return gzip.decompress(REAL.read_bytes()).decode()


def _units(boot: Boot) -> dict:
    return {ev.name: ev for ev in boot.of_kind(Kind.UNIT) if (ev.attrs or {}).get("source") == "plot"}


def test_a_real_plot_gives_every_units_activation_on_the_kernels_clock(tmp_path):
    path = tmp_path / "plot.svg"
    path.write_text(_text())
    assert detect(str(path), path.read_bytes()) == "systemd-plot"
    boot = read([str(path)])
    units = _units(boot)
    assert len(units) == 95 + 3 and not boot.diagnostics
    for name, ms in BLAME.items():
        assert abs(units[name].dur - ms * MS) <= MS, name  # blame rounds to the millisecond
        assert units[name].clock == Clock.PRINTK
    # dev-vda.device began to activate 10.316 s after the kernel started (x 1031.602 px at
    # 100 px a second), its bar on line 374 of the file.
    assert units["dev-vda.device"].t == 10_316_020_000 and units["dev-vda.device"].line == 374
    # systemd's own work before its first unit, which neither blame nor the chain shows.
    assert units["(generators)"].dur == 1_669_490_000 and units["(loading unit files)"].dur == 1_580_910_000
    assert all(units[n].attrs.get("manager") for n in ("(security setup)", "(generators)", "(loading unit files)"))
    # The title is systemd-analyze time's: the kernel's part and userspace's.
    a = analyze(boot)
    assert a.phases.end.at == 27_632_000_000 and boot.meta["systemd_time"]["kernel"] == 6_513_000_000


def test_a_plot_drawn_at_another_scale_is_read_at_it(tmp_path):
    """--scale-svg=2: 200 px a second; the kernel's bar against the title's (kernel) figure says so."""
    def doubled(m: re.Match) -> str:
        return f'{m.group(1)}"{float(m.group(2)) * 2:.3f}"'

    scaled = [re.sub(r'( (?:x|width)=)"(-?[\d.]+)"', doubled, line) if line.strip().startswith("<rect class=")
              else line for line in _text().split("\n")]
    path = tmp_path / "plot.svg"
    path.write_text("\n".join(scaled))
    units = _units(read([str(path)]))
    assert units["dev-vda.device"].t == 10_316_020_000


def test_a_bar_that_runs_past_its_labels_time_is_read_by_the_label(tmp_path):
    """A Galaxy S4's plot (systemd 238): bluetooth.service's activating bar ran to the
    plot's end, 30.2 s, labelled `(1.250s)`: the slowest unit was invented.  A bar and a
    label that disagree by more than the label's rounding: the label, blame's time."""
    long_bar = _text().replace('<rect class="activating" x="2295.411" y="1360.000" width="434.284"',
                               '<rect class="activating" x="2295.411" y="1360.000" width="3015.650"')
    path = tmp_path / "plot.svg"
    path.write_text(long_bar)
    units = _units(read([str(path)]))
    assert units["e2scrub_reap.service"].dur == 4_342 * MS
    assert units["dev-vda.device"].dur == 14_139_750_000  # agreeing: the bar's 10 µs kept


def test_a_truncated_plot_keeps_what_it_has_and_says_so(tmp_path):
    lines = _text().split("\n")
    path = tmp_path / "plot.svg"
    path.write_text("\n".join(lines[:380]))
    boot = read([str(path)])
    assert "dev-vda.device" in _units(boot)
    assert any("ends without </svg>" in d.message for d in boot.diagnostics)


def test_an_svg_that_is_not_a_plot_is_unreadable_exit_2(tmp_path, capsys):
    path = tmp_path / "other.svg"
    path.write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>\n')
    with pytest.raises(NotALog, match="not a systemd-analyze plot"):
        read([str(path)], fmt="systemd-plot")
    assert main(["analyze", "--input-format", "systemd-plot", str(path)]) == 2
    assert "not a systemd-analyze plot" in capsys.readouterr().err


def test_the_plot_printed_on_a_console_is_read_with_the_consoles_lines():
    boot = Boot()
    outputs = ConsoleOutputs(boot, "console.log")
    lines = [marker("plot", "begin"), *_text().rstrip("\n").split("\n"), marker("plot", "end")]
    assert all(outputs.feed(text, lineno) for lineno, text in enumerate(lines, start=100))
    unit = _units(boot)["dev-vda.device"]
    assert unit.file == "console.log" and unit.line == 100 + 374
    assert boot.meta["systemd_plot_svg"].startswith("<?xml")


def test_the_plot_key_prints_it_after_ready():
    assert marker("plot", "begin") in rootfs.analyze_script(plot=True)
    assert marker("plot", "begin") not in rootfs.analyze_script()
    assert [key for key, _ in rootfs.RootfsSection(plot=True, analyze=False).problems()] == ["plot"]
