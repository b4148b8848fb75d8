"""The map between two clocks: the envelope of what a later clock saw, the rate from probes,
composition and inverse; on a real capture, the printk clock's early slowness; a guest
clock that keeps no rate (QEMU's -icount)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bootlab.analysis import analyze
from bootlab.clock_map import ClockMap, arrival, envelope, lower, rate_of, steady
from bootlab.sources import read
from bootlab.timeline import Clock

MS = 1_000_000
REAL = Path(__file__).parent / "data" / "real"


def test_a_line_behind_a_backlog_is_bounded_by_a_later_prompt_one():
    # (printk, host): the second line waited 300 ms behind others; the third found the console idle.
    m = envelope([(0, 5000 * MS), (100 * MS, 5400 * MS), (200 * MS, 5200 * MS)])
    assert m(100 * MS) <= 5100 * MS  # bounded by the third: 5200 ms less 100 ms of own time
    assert m(200 * MS) == 5200 * MS and m(300 * MS) == 5300 * MS  # past the knots: slope 1


def test_a_clock_that_runs_slow_then_right_keeps_its_bends():
    early = [(x * MS, 4400 * MS + x * MS + (x * MS) // 4) for x in range(0, 2000, 100)]  # slow: 1.25 host/own
    late = [(x * MS, 4900 * MS + x * MS) for x in range(2000, 5000, 100)]  # then right
    m = envelope(early + late)
    assert m(1000 * MS) == 4400 * MS + 1250 * MS
    assert m(4000 * MS) == 8900 * MS


@given(st.lists(st.tuples(st.integers(0, 10**10), st.integers(0, 10**10)), min_size=1, max_size=50))
def test_the_envelope_is_under_every_sample_and_monotone(samples):
    m = envelope(samples)
    assert all(m(x) <= y for x, y in samples)
    xs = sorted({x for x, _ in samples})
    assert all(m(a) <= m(b) for a, b in zip(xs, xs[1:]))


def test_rate_from_probes_and_a_steady_map():
    probes = [(t * MS, 1000 * MS + round(t * MS * 0.886)) for t in (5000, 5500, 6000)]
    rate = rate_of(probes)
    assert abs(rate.rate - 0.886) < 1e-9 and rate.probes == 3 and rate.end - rate.start == 1000 * MS
    assert rate_of(probes[:2]) is None  # half a second: too short to tell
    line = steady(probes + [(0, 2000 * MS)], rate.rate)
    assert line(5000 * MS) == 1000 * MS + 4430 * MS and line(0) == 1000 * MS


def test_composition_and_inverse():
    m = ClockMap((0, 10, 20), (100, 130, 140))
    assert m.inverse()(m(15)) == 15
    shifted = ClockMap.offset(5).then(m)  # own + 5, then m
    assert shifted(5) == m(10)
    assert m.then(ClockMap.offset(-100))(20) == 40


def test_the_printk_clock_of_a_real_boot_loses_time_before_it_is_stable():
    """The recorded reference boot: printk lines seen at once late in the boot sit 4.91 s
    after their stamp, early ones 4.40 s: the clock lost half a second before it ran true,
    and the ready line is placed where the host saw it, not 1.3 s before."""
    boot = read([str(REAL / "generic.capture.gz")])
    to_host = boot.clocks[Clock.PRINTK].ref
    assert 4_350 * MS < to_host(300 * MS) - 300 * MS < 4_450 * MS
    assert 4_905 * MS < to_host(2_822_215_000) - 2_822_215_000 < 4_915 * MS


def test_probes_seen_late_on_a_busy_host_are_no_measurement():
    """Four probes as a busy host sees them, the first two read 60 and 30 ms late: their
    median slope says 0.95 and a warning would blame the kernel's calibration (a real boot
    with the host's own TSC rate, at load 4.2, measured 0.959 so).  The slopes between them
    differ by 6%: no rate is measured, and the timeline says why."""
    probes = [(t * MS, 4000 * MS + t * MS) for t in (5000, 5500, 6000, 6500)]
    probes[0] = (probes[0][0], probes[0][1] + 60 * MS)
    probes[1] = (probes[1][0], probes[1][1] + 30 * MS)
    rate = rate_of(probes)
    assert abs(rate.rate - 0.95) < 1e-9 and not rate.agrees and abs(rate.spread - 0.06) < 1e-9
    steady_probes = [(t * MS, round(t * MS * 0.886)) for t in (5000, 5500, 6000, 6500)]
    assert rate_of(steady_probes).agrees  # another host's TSC rate: every pair says 0.886


def test_one_probe_seen_late_does_not_tilt_the_rate():
    """A busy host saw the second probe 5 ms late: least squares said 1.005 (a warning);
    the median of the pairwise slopes says 1."""
    probes = [(t * MS, 4000 * MS + t * MS) for t in (5000, 5500, 6000, 6500)]
    probes[1] = (probes[1][0], probes[1][1] + 5 * MS)
    assert abs(rate_of(probes).rate - 1) < 1e-3


@given(st.lists(st.tuples(st.integers(0, 10**10), st.integers(0, 10**10)), min_size=1, max_size=50))
def test_a_clock_that_keeps_no_rate_is_placed_at_its_earliest_later_sighting(samples):
    m = arrival(samples)
    for x, _ in samples:
        assert m(x) == min(y for x2, y in samples if x2 >= x)  # printed before it, or anything after, was seen
    xs = sorted({x for x, _ in samples})
    assert all(m(a) <= m(b) for a, b in zip(xs, xs[1:]))


def test_an_icount_guest_is_timed_where_its_lines_were_seen():
    """A real boot of the camera device under QEMU's -icount shift=0,sleep=off (the demo's
    scheduler check): the guest's clock counts instructions, running about 5x slower than the
    host's while it booted and 60x faster over its idle time after ready.  The probe lines
    after ready measured the idle speed, and a steady line at that speed put ready at 7.345 s,
    12.6 s before its line reached the host ("console backlog"), with 31 ms of initcalls; the
    guest's clock is now placed where its lines were seen, and a warning says why."""
    boot = read([str(REAL / "icount-camera.capture.gz")])
    printk = boot.clocks[Clock.PRINTK]
    assert printk.at_sightings and printk.rate is None
    warning = next(d.message for d in boot.diagnostics if "-icount shift=0,sleep=off" in d.message)
    assert "keeps no rate" in warning and "guest time" in warning
    assert not [d for d in boot.diagnostics if "clock ran at" in d.message]
    a = analyze(boot)
    assert abs(a.phases.end.at - 19_991_454_884) < 1 * MS  # the ready line's arrival
    assert a.console.ready_line_at is None or a.console.ready_line_at - a.phases.end.at < 10 * MS
    assert 4_000 * MS < a.phases.boundaries["userspace.start"].at - a.phases.boundaries["kernel.start"].at


@pytest.mark.parametrize("capture", sorted(p.name for p in REAL.glob("*.capture.gz")))
def test_no_line_is_placed_after_it_was_seen(capture):
    """The printk clock mapped onto the host's puts every console line at or before its own
    arrival.  The envelope of the lines that found the console idle did not: early in a
    boot the printk clock counts jiffies (4 ms), so a line sharing its stamp with a later,
    idle one took that one's arrival: 182 of cloud-initcall's 620 events were placed up
    to 4.0 ms after their line arrived."""
    boot = read([str(REAL / capture)])
    anchors = boot.anchors.get((Clock.PRINTK, Clock.HOST))
    if anchors is None:
        pytest.skip("no printk line on the host's clock")
    to_host = boot.clocks[Clock.PRINTK].ref
    late = [(x, y, to_host(x) - y) for x, y in anchors.samples if to_host(x) > y]
    assert not late, late[:3]


def test_the_lower_of_two_maps():
    estimate = ClockMap((0, 100), (50, 150))
    bound = ClockMap((0, 40, 100), (60, 70, 200))
    m = lower(estimate, bound)
    assert m.xs == (0, 40, 100) and m.ys == (50, 70, 150)
