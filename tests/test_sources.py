"""Each input format: detection and what is read from it (hand-written fixtures)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bootlab.advice import advise
from bootlab.analysis import Options, analyze
from bootlab.render import render
from bootlab.sources import NotALog, detect, read, read_one  # detect: the module
from bootlab.sources import bootlab_capture, multiboot
from bootlab.sources import kernel_messages as km
from bootlab.capture.writer import NativeWriter
from bootlab.sources.systemd_analyze import span_ns
from bootlab.timeline import Clock, Kind, Mark

S = 1_000_000_000
MS = 1_000_000
US = 1_000


def _events(boot, kind, name=None):
    return [ev for ev in boot.events if ev.kind == kind and (name is None or ev.name == name)]


def _detected(path):
    with open(path, "rb") as fh:
        return detect.detect(path, fh.read())


@pytest.mark.parametrize("name, fmt", [
    ("dmesg-plain.txt", "dmesg"),
    ("dmesg-caller-id.txt", "dmesg"),
    ("dmesg-mediatek-context.txt", "dmesg"),
    ("console-vendor-context.txt", "console"),
    ("dmesg-samsung-context.txt", "dmesg"),
    ("dmesg-continuation.txt", "dmesg"),
    ("dmesg-delta.txt", "dmesg"),
    ("dmesg-iso.txt", "dmesg-iso"),
    ("dmesg-reltime.txt", "dmesg-relative"),
    ("dmesg-delta-only.txt", "dmesg-relative"),
    ("syslog.txt", "syslog"),
    ("journal.txt", "journal"),
    ("journal.json", "journal-json"),
    ("kmsg.txt", "kmsg"),
    ("initcall-variants.txt", "dmesg"),
    ("initcall-old-msecs.txt", "dmesg"),
    ("ftrace.txt", "ftrace"),
    ("boundary-old.txt", "dmesg"),
    ("grabserial-t.log", "grabserial"),
    ("grabserial-T.log", "grabserial"),
    ("grabserial-notime.log", "grabserial"),
    ("uboot-bootstage.txt", "uboot-bootstage"),
    ("uboot-vendor-stamps.txt", "console"),
    ("console-lk.txt", "console"),
    ("console-cfe-counters.txt", "console"),
    ("systemd-time-full.txt", "systemd-time"),
    ("systemd-blame.txt", "systemd-blame"),
    ("systemd-chain-ascii.txt", "systemd-critical-chain"),
    ("systemd-plot.json", "systemd-plot-json"),
    ("systemd-console-ansi.txt", "console"),
])
def test_detect(fixture_path, name, fmt):
    assert _detected(fixture_path(name)) == fmt


def test_dmesg_plain(fixture_path):
    boot = read([fixture_path("dmesg-plain.txt")])
    assert boot.meta["kernel_version"] == "6.1.0-56-amd64"
    assert boot.meta["lpj"] == 10384536
    assert boot.meta["console_baud"] == 115200
    calls = {ev.name: ev for ev in _events(boot, Kind.INITCALL)}
    assert calls["pci_subsys_init"].t == 330 * MS and calls["pci_subsys_init"].dur == 70 * MS
    assert calls["pci_subsys_init"].track == "pid 1"
    assert calls["absent_hw_init"].attrs["ret"] == -19
    run = boot.first_mark(Mark.USERSPACE_START)
    assert run.t == 502 * MS and run.line == 15
    assert boot.first_mark(Mark.APP_START).t == 600 * MS
    assert boot.first_mark(Mark.READY).t == 700 * MS


def _same_boot(a, b):
    shape = [(ev.kind, ev.name, ev.clock, ev.t, ev.dur, ev.line, ev.track) for ev in a.events]
    assert shape == [(ev.kind, ev.name, ev.clock, ev.t, ev.dur, ev.line, ev.track) for ev in b.events]
    assert list(a.logs[0].t) == list(b.logs[0].t) and a.meta == b.meta


@pytest.mark.parametrize("name", ["dmesg-iso.txt", "dmesg-delta.txt"])
def test_dmesg_time_formats_read_as_plain_dmesg(fixture_path, name):
    """dmesg -d (delta beside the stamp) and --time-format=iso (boot time + printk time,
    here in a +01:00 zone) give the printk times of the plain log."""
    plain, other = read([fixture_path("dmesg-plain.txt")]), read([fixture_path(name)])
    _same_boot(plain, other)
    assert not other.diagnostics


@pytest.mark.parametrize("name", ["dmesg-reltime.txt", "dmesg-delta-only.txt"])
def test_dmesg_times_since_the_message_before_are_summed(fixture_path, name):
    """dmesg -e/-H (reltime) and --time-format=delta give each message's time since the one
    before (negative when two CPUs' stamps are out of order): their sum is the printk time.
    reltime prints the minute instead on the first message of a new minute: the time before
    that line is unknown, counted as none, and a warning names the line."""
    boot = read([fixture_path(name)])
    times = list(boot.logs[0].t)
    assert times[:8] == [0, 0, 259856 * US, 300 * MS, 310 * MS, 320 * MS, 390 * MS, 389992 * US]
    (call,) = _events(boot, Kind.INITCALL)
    assert (call.name, call.t, call.dur) == ("pci_subsys_init", 320 * MS, 70 * MS)
    userspace = boot.first_mark(Mark.USERSPACE_START)
    if name == "dmesg-delta-only.txt":
        assert times[8:] == [790200 * US, 790400 * US] and userspace.t == 790400 * US
        assert not boot.diagnostics
    else:
        assert times[8:] == [389992 * US, 390192 * US, 390192 * US + 12345678 * US]
        (warning,) = boot.diagnostics
        assert warning.line == 9 and "printed the minute (Nov23 10:42) instead of the time since" in warning.message


def test_dmesg_iso_not_from_the_first_message_says_so(tmp_path, fixture_path):
    lines = open(fixture_path("dmesg-iso.txt")).read().splitlines()[3:]
    path = tmp_path / "late.txt"
    path.write_text("\n".join(lines) + "\n")
    boot = read([str(path)])
    (warning,) = boot.diagnostics
    assert warning.line == 1 and "does not begin with the kernel's first message" in warning.message
    assert boot.logs[0].t[0] == 0


def test_dmesg_iso_date_that_does_not_exist_is_an_unreadable_line(tmp_path):
    path = tmp_path / "iso.txt"
    path.write_text("2026-11-21T11:20:07,000000+00:00 Linux version 6.1\n"
                    "2026-13-45T99:99:99,000000+00:00 calling  x+0x0/0x1 @ 1\n"
                    "2026-11-21T11:20:08,500000+00:00 Run /init as init process\n")
    boot = read([str(path)], fmt="dmesg-iso")
    assert list(boot.logs[0].t) == [0, None, 1_500_000_000] and not _events(boot, Kind.INITCALL)
    assert boot.first_mark(Mark.USERSPACE_START).t == 1_500_000_000


def test_dmesg_wall_clock_to_the_second_is_refused(fixture_path):
    with pytest.raises(NotALog, match=r"dmesg-T.txt:1: dmesg -T \(--time-format=ctime\) .* plain `dmesg`"):
        read([fixture_path("dmesg-T.txt")])


def test_caller_id(fixture_path):
    boot = read([fixture_path("dmesg-caller-id.txt")])
    (call,) = _events(boot, Kind.INITCALL)
    assert (call.name, call.t, call.dur) == ("ipc_ns_init", 120 * MS, 500 * US)
    assert boot.first_mark(Mark.USERSPACE_START).attrs["init"] == "/sbin/init"


@pytest.mark.parametrize("name, version, devtmpfs, initcall, freed", [
    ("console-vendor-context.txt", "3.10.104", 410025 * US, ("rk_pm_init", 512300 * US, 2441 * US), 2250713 * US),
    ("dmesg-mediatek-context.txt", "4.4.146+", 231100 * US, ("mtk_clk_init", 310 * MS, 1250 * US), 1902300 * US),
    ("dmesg-samsung-context.txt", "3.0.31-exynos", 140215 * US, ("exynos4_pm_init", 151002 * US, 2308 * US), 2870114 * US),
    ("console-avm-context.txt", "4.4.271", 41700 * US, ("ipq40xx_pinctrl_init", 52100 * US, 1250 * US), 4862004 * US),
])
def test_vendor_context_after_the_stamp_is_not_the_message(fixture_path, name, version, devtmpfs, initcall, freed):
    """Rockchip's and Samsung's `[0:  swapper/0:  1]`, MediaTek's `-(0)[1:swapper/0]` (CPU,
    task, PID), Samsung's older Exynos `c0      1` (CPU, PID) and AVM's `[0]` (the CPU, right
    after the stamp: a public FRITZ!Box 7510 console was read with no kernel version and its
    kernel as one phase) between the stamp and the message: the milestones are read."""
    boot = read([fixture_path(name)])
    assert boot.meta["kernel_version"] == version
    assert boot.first_mark("kernel.devtmpfs").t == devtmpfs
    assert boot.meta["lpj"] in (240000, 52000, 3997696, 480000)
    (call,) = _events(boot, Kind.INITCALL)
    assert (call.name, call.t, call.dur) == initcall
    assert boot.first_mark("kernel.free-initmem").t == freed


def test_a_printk_clock_started_before_the_kernel_is_not_kernel_init(fixture_path):
    """A Rockchip vendor kernel's first message is stamped [    1.651207]: the counter ran
    from reset, so the 1.65 s before it are the firmware's, not kernel init."""
    a = analyze(read([fixture_path("dmesg-clock-before-kernel.txt")]))
    start = a.phases.boundaries[Mark.KERNEL_START]
    assert start.at == 1651207 * US and start.evidence.endswith("dmesg-clock-before-kernel.txt:1 (the kernel's first message)")
    assert a.phases.spans[0].duration == (2050442 - 1651207) * US  # to devtmpfs
    assert a.phases.total == (4802003 - 1651207) * US
    assert any("did not start with the kernel" in note for note in a.phases.notes)


def test_a_banner_microseconds_after_the_first_messages_keeps_kernel_init_at_printk_zero(tmp_path):
    """SPARC's sun4v kernel prints PROMLIB lines before its banner, at [    0.000066]: its
    clock started with it, and kernel init starts at printk time zero, with no note."""
    path = tmp_path / "dmesg.txt"
    path.write_text("[    0.000021] PROMLIB: Sun IEEE Boot Prom 'OBP 4.30.4 2011/07/06 14:29'\n"
                    "[    0.000066] Linux version 5.4.0-sparc64 (builder@buildhost) #1 SMP\n"
                    "[    1.512000] devtmpfs: initialized\n"
                    "[    4.200000] Run /sbin/init as init process\n")
    a = analyze(read([str(path)]))
    assert a.phases.boundaries[Mark.KERNEL_START].at == 0
    assert not any("did not start with the kernel" in note for note in a.phases.notes)


def test_syslog_reads_kernel_lines_only(fixture_path):
    boot = read([fixture_path("syslog.txt")])
    assert boot.meta["console_baud"] == 115200
    assert boot.first_mark("kernel.free-initmem").t == 1204 * MS
    assert boot.first_mark("kernel.write-protect").t == 1204500 * US


def test_journal_short_monotonic(fixture_path):
    boot = read([fixture_path("journal.txt")])
    assert "quiet" in boot.meta["cmdline"]
    (udev,) = _events(boot, Kind.UNIT, "systemd-udevd.service")
    assert (udev.t, udev.dur, udev.clock) == (2 * S, 250 * MS, Clock.PRINTK)
    assert boot.first_mark(Mark.SERVICES_START).t == 1900 * MS
    ready = boot.first_mark(Mark.READY)
    assert ready.t == 4 * S


def test_journal_json(fixture_path, tmp_path):
    """journalctl -o json: kernel entries at their printk time (_SOURCE_MONOTONIC_TIMESTAMP),
    others at the journal's; the last boot only; a byte-list message; a broken entry."""
    boot = read([fixture_path("journal.json")])
    assert "quiet" in boot.meta["cmdline"]
    assert boot.first_mark(Mark.USERSPACE_START).t == 1500 * MS
    (udev,) = _events(boot, Kind.UNIT, "systemd-udevd.service")
    assert (udev.t, udev.dur, udev.clock) == (2 * S, 250 * MS, Clock.PRINTK)
    assert boot.first_mark(Mark.SERVICES_START).t == 1900 * MS and boot.first_mark(Mark.READY).t == 4 * S
    texts = list(boot.logs[0].text)
    assert "sensor: calibrated \ufffd\ufffd offsets" in texts and not any("Restarting" in t for t in texts)
    other_boots, broken = boot.diagnostics
    assert other_boots.message.startswith("the log holds 2 boots (first lines 1, 2): reading boot 2, the last "
                                          "(b0c7b6a28f1b41f8afe19c7a2991f103)")
    first = read([fixture_path("journal.json")], which=1)  # --boot 1: the boot before
    assert [t for t in first.logs[0].text] == ["reboot: Restarting system"]
    assert broken.line == 5 and "1 of 10 entries" in broken.message
    # json-pretty: the same entries over many lines each
    entries = [json.loads(line) for line in open(fixture_path("journal.json")) if not line.startswith('{"_BOOT_ID": "b0c7b6a28f1b41f8afe19c7a2991f103", "MESSAGE"')]
    pretty = tmp_path / "journal-pretty.json"
    pretty.write_text("\n".join(json.dumps(e, indent=8) for e in entries) + "\n")
    again = read([str(pretty)])
    assert [(ev.kind, ev.name, ev.t, ev.dur) for ev in again.events] == [(ev.kind, ev.name, ev.t, ev.dur) for ev in boot.events]
    assert again.first_mark(Mark.READY).line == 1 + sum(json.dumps(e, indent=8).count("\n") + 1 for e in entries[:-1])


def test_kernel_without_printk_times_is_read_at_host_times(fixture_path):
    """A board whose kernel has no printk times, captured by grabserial: the kernel's
    messages are read on the host clock when the banner comes without a stamp."""
    a = analyze(read([fixture_path("grabserial-notime.log")]))
    b = a.phases.boundaries
    assert (b[Mark.KERNEL_START].at, b[Mark.INITCALLS_START].at, b[Mark.USERSPACE_START].at) == (
        1900 * MS, 2100 * MS, 2700800 * US)
    assert a.boot.meta["kernel_version"] == "5.10.0" and a.boot.meta["lpj"] == 4980736
    camera, absent = sorted(_events(a.boot, Kind.INITCALL), key=lambda ev: ev.line)
    assert (camera.clock, camera.t, camera.dur) == (Clock.HOST, 2100500 * US, 312500 * US)
    assert absent.attrs["ret"] == -19 and [f.name for f in a.absent] == ["absent_hw_init"] and not a.failures
    assert any("no printk times" in note for note in a.phases.notes)


def test_kmsg_skips_dictionary_lines(fixture_path):
    boot = read([fixture_path("kmsg.txt")])
    (call,) = _events(boot, Kind.INITCALL)
    assert (call.t, call.dur) == (320 * MS, 70 * MS)
    assert boot.first_mark(Mark.USERSPACE_START).t == 1843884 * US
    assert not boot.diagnostics
    # Dictionary lines are not console output.
    assert len(boot.logs[0]) == 7


def test_continuation_lines_kept_untimed(fixture_path):
    boot = read([fixture_path("dmesg-continuation.txt")])
    log = boot.logs[0]
    assert log.t[4] is None and "two lines" in log.text[4]
    assert boot.first_mark(Mark.USERSPACE_START).t == 500 * MS


def test_initcall_variants(fixture_path):
    boot = read([fixture_path("initcall-variants.txt")])
    calls = {ev.name: ev for ev in _events(boot, Kind.INITCALL)}
    assert calls["trace_init_flags_sys_enter"].attrs["level"] == "early"
    assert calls["0xffffffff81234567"].dur == 200 * US
    assert calls["0xffffffff81234567"].attrs["level"] == "fs"
    foo = calls["foo_driver_init"]
    assert foo.attrs == {"ret": -110, "module": "foo", "level": "module"} and foo.track == "pid 245"
    sd = calls["sd_probe_async"]
    assert sd.attrs["async"] == 3 and sd.dur == 5 * MS and sd.track == "pid 95"
    mid = calls["mid_line_init"]
    assert (mid.t, mid.dur) == (500010 * US, 1 * MS)
    assert calls["never_returns_init"].attrs["unfinished"] is True
    assert any("never_returns_init" in d.message for d in boot.diagnostics)
    (wait,) = _events(boot, Kind.ASYNC_WAIT)
    assert (wait.t, wait.dur, wait.track) == (300 * MS, 10 * MS, "pid 1")
    (probe,) = _events(boot, Kind.PROBE)
    assert (probe.name, probe.dur) == ("0000:00:1f.2", 1234 * US)
    assert [ev.name for ev in _events(boot, Kind.LEVEL)] == ["early", "fs"]


def test_initcall_old_formats(fixture_path):
    boot = read([fixture_path("initcall-old-msecs.txt")])
    calls = {ev.name: ev for ev in _events(boot, Kind.INITCALL)}
    assert calls["slow_thing_init"].dur == 30 * MS and calls["slow_thing_init"].t == 230 * MS
    assert calls["ancient_init"].dur == 12 * MS and calls["ancient_init"].t == 300 * MS


def test_ftrace_initcalls(fixture_path):
    boot = read([fixture_path("ftrace.txt")])
    calls = {ev.name: ev for ev in _events(boot, Kind.INITCALL)}
    assert calls["con_init"].dur == 80 * US and calls["con_init"].attrs["level"] == "console"
    assert calls["hpet_late_init"].attrs["ret"] == -19


def test_old_boundary_lines(fixture_path):
    boot = read([fixture_path("boundary-old.txt")])
    assert boot.first_mark("kernel.free-initmem").t == 7890696 * US
    assert boot.first_mark("kernel.write-protect") is not None


def test_grabserial_t_links_host_and_printk(fixture_path):
    boot = read([fixture_path("grabserial-t.log")])
    assert boot.reference == Clock.HOST
    printk = boot.clocks[Clock.PRINTK]
    # Best anchor: "[0.000000] Linux version" seen at 3.5 s; 3.6 - 0.01 and 4.1 - 0.55 are later.
    assert printk.offset == 3500 * MS and printk.anchors == 3
    assert boot.meta["bootdelay"] == 2
    (load,) = _events(boot, Kind.STAGE)
    assert load.name == "load zImage" and load.dur == 276 * MS
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 2974300 * US
    assert boot.at(boot.first_mark(Mark.READY)) == 4200 * MS


def test_grabserial_systime(fixture_path):
    boot = read([fixture_path("grabserial-T.log")])
    assert boot.clocks[Clock.PRINTK].offset == 800 * MS  # 12:00:00.4 - 11:59:59.5 - 0.1
    assert boot.at(boot.first_mark(Mark.READY)) == 1500 * MS


def test_grabserial_reset_by_match(corpus_path):
    boot = read([corpus_path("grabserial-bbb__graboutput.log.reference")])
    assert any("reset" in d.message for d in boot.diagnostics)
    decompress = boot.first_mark("kernel.decompress")
    assert boot.at(decompress) == 2974300 * US + 7345 * US


def test_uboot_bootstage(fixture_path):
    boot = read([fixture_path("uboot-bootstage.txt")])
    stages = {ev.name: ev for ev in _events(boot, Kind.STAGE)}
    assert stages["bootm_start"].t == 379218 * US and stages["bootm_start"].dur == 710782 * US
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 1104112 * US
    assert boot.meta["bootstage_accumulated"]["dm_f"] == 10123 * US


def test_uboot_vendor_stamps_then_kernel(fixture_path):
    boot = read([fixture_path("uboot-vendor-stamps.txt")])
    assert boot.reference == Clock.BOOTLOADER
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 3050 * MS
    (read_ev,) = _events(boot, Kind.STAGE)
    assert read_ev.dur == 907 * MS and read_ev.t == 2100 * MS - 907 * MS
    # Nothing links the kernel's clock to the bootloader's: placed after it, with a warning.
    assert boot.clocks[Clock.PRINTK].method == "sequence"
    assert any("no event links" in d.message for d in boot.diagnostics)


def test_lk_stamps_stages_and_handover(fixture_path):
    """Written from a public MSM8916 stick's console (lk2nd, then OpenWrt's kernel): LK's
    millisecond stamps are the bootloader clock, its image load and its decompression of
    the kernel are stages, and its jump is the handover."""
    boot = read([fixture_path("console-lk.txt")])
    assert boot.reference == Clock.BOOTLOADER and boot.meta["bootloader"] == "LK"
    assert boot.at(boot.first_mark(Mark.BOOTLOADER_START)) == 0
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 880 * MS
    stages = {ev.name: ev for ev in _events(boot, Kind.STAGE)}
    assert set(stages) == {"load boot image", "decompress kernel"}
    assert (stages["load boot image"].t, stages["load boot image"].dur) == (390 * MS, 230 * MS)
    assert stages["load boot image"].attrs["bytes"] == 9891840
    assert (stages["decompress kernel"].t, stages["decompress kernel"].dur) == (630 * MS, 220 * MS)
    assert not any(d.severity == "error" for d in boot.diagnostics)


def test_allwinner_boot0_stamps_start_the_bootloader(fixture_path):
    """Written from public Orange Pi Zero3 and sun8iw21 consoles: Allwinner's boot0 (its
    SPL) stamps its lines with the milliseconds of the SoC's timer, as its vendor U-Boot
    goes on in seconds ([00.398]).  They were untimed text: the bootloader phase had no
    start ('firmware + bootloader' from reset) and boot0's time was nowhere.  Its banner
    starts the bootloader, and boot0 runs to its jump to the next stage."""
    a = analyze(read([fixture_path("console-allwinner-boot0.txt")]))
    boot = a.boot
    assert boot.reference == Clock.BOOTLOADER
    assert boot.at(boot.first_mark(Mark.BOOTLOADER_START)) == 48 * MS
    assert [(s.name, s.start, s.end) for s in a.phases.spans[:2]] == [("firmware", 0, 48 * MS),
                                                                     ("bootloader", 48 * MS, 7_352 * MS)]
    (boot0,) = [ev for ev in _events(boot, Kind.STAGE) if ev.name == "boot0"]
    assert (boot0.t, boot0.dur) == (48 * MS, (314 - 48) * MS)
    assert boot.meta["bootloader"] == "U-Boot 2018.05"


def test_a_newer_boot0_jumps_to_atf_by_name(fixture_path, tmp_path):
    """A public Radxa Cubie A7A (A733) console: boot0 trained its DRAM for 4.6 s and ended
    `[4792]Jump to ATF: monitor_base = ...`; without its end the kernel was placed right
    after boot0's banner, 4.6 s early."""
    text = open(fixture_path("console-allwinner-boot0.txt")).read()
    log = tmp_path / "a733.txt"
    log.write_text(text.replace("[314]Jump to second Boot.", "[314]Jump to ATF: monitor_base = 0x48000000"))
    (boot0,) = [ev for ev in _events(read([str(log)]), Kind.STAGE) if ev.name == "boot0"]
    assert (boot0.t, boot0.dur) == (48 * MS, (314 - 48) * MS)


@pytest.mark.parametrize("name", ["console-lk.txt", "uboot-vendor-stamps.txt"])
def test_a_bootloaders_stamped_lines_are_no_silence(fixture_path, name):
    """The console log holds the kernel's times only; the bootloader's lines before them,
    on a clock of its own, were printed all along: no 'silent gap' from power-on."""
    a = analyze(read([fixture_path(name)]))
    assert a.boot.reference == Clock.BOOTLOADER
    assert not any(g.start == 0 for g in a.gaps), a.gaps


def test_a_bare_counter_before_the_kernel_is_no_lk_stamp(fixture_path):
    """A router's CFE prints `[0] find End at ...`: without LK's banner that is no clock."""
    boot = read([fixture_path("console-cfe-counters.txt")])
    assert Clock.BOOTLOADER not in boot.clocks and "bootloader" not in boot.meta


def test_systemd_time_all_parts(fixture_path):
    boot = read([fixture_path("systemd-time-full.txt")])
    phases = {ev.name: ev for ev in _events(boot, Kind.PHASE)}
    assert phases["firmware"].t == -(10300 * MS) and phases["firmware"].dur == 7200 * MS
    assert phases["loader"].t == -3100 * MS
    assert phases["initrd"].t == 1500 * MS and phases["initrd"].dur == 2100 * MS
    assert phases["userspace"].t == 3600 * MS and phases["userspace"].dur == 69608 * MS
    assert boot.clocks[Clock.USERSPACE].offset == 3600 * MS
    (reached,) = _events(boot, Kind.UNIT)
    assert boot.at(reached) == 3600 * MS + 68100 * MS


def test_the_end_is_reached_after_the_first_phase_starts_not_after_printk_zero(fixture_path):
    """systemd's firmware and loader times come before printk time zero: the text report's
    "reached after power-on" is the whole boot, 1min 23.508s, not the 73.208 s after zero."""
    from bootlab.render import render

    text = render(analyze(read([fixture_path("systemd-time-full.txt")])), "text")
    assert "ready reached 83.508 s after power-on" in text


@pytest.mark.parametrize("text, ns", [("1min 9.608s", 69608 * MS), ("821ms", 821 * MS), ("588us", 588 * US),
                                      ("2h 3min", (2 * 3600 + 3 * 60) * S), ("1.5s", 1500 * MS)])
def test_span(text, ns):
    assert span_ns(text) == ns


def test_systemd_blame(fixture_path):
    boot = read([fixture_path("systemd-blame.txt")])
    units = {ev.name: ev.dur for ev in _events(boot, Kind.UNIT)}
    assert units == {"plymouth-quit-wait.service": 69608 * MS, "systemd-udev-settle.service": 821 * MS,
                     "sys-kernel-config.mount": 588 * US, "dev-disk-by\\x2dlabel-root.device": 2500 * MS}


def test_systemd_chain_ascii_and_colour(fixture_path):
    boot = read([fixture_path("systemd-chain-ascii.txt")])
    units = {ev.name: ev for ev in _events(boot, Kind.UNIT)}
    docker = units["docker.service"]
    assert (docker.t, docker.dur) == (5100 * MS - 3244 * MS, 3244 * MS)
    assert units["graphical.target"].attrs["depth"] == 0
    assert units["NetworkManager-wait-online.service"].attrs["depth"] == 4
    assert not boot.diagnostics


def test_systemd_plot_json(fixture_path):
    boot = read([fixture_path("systemd-plot.json")])
    ssh = _events(boot, Kind.UNIT, "ssh.service")[0]
    assert (ssh.clock, ssh.t, ssh.dur) == (Clock.PRINTK, 3 * S, 900 * MS)


def test_systemd_console_status_lines_are_not_timestamps(fixture_path):
    boot = read([fixture_path("systemd-console-ansi.txt")])
    assert not boot.clocks  # nothing in this file carries a time
    units = {ev.name: ev for ev in _events(boot, Kind.UNIT)}
    assert units["systemd-udevd.service"].attrs["status"] == "OK"
    assert units["broken.service"].attrs["status"] == "FAILED"
    assert "multi-user.target" in units
    assert boot.first_mark(Mark.READY) is not None


def test_bootchart_dir_and_tgz(corpus_path, tmp_path):
    directory = corpus_path("bootchart-example1")
    boot = read([directory])
    procs = _events(boot, Kind.PROCESS)
    assert len(procs) > 100
    init = next(ev for ev in procs if ev.attrs["pid"] == 1)
    assert init.clock == Clock.PRINTK
    assert boot.meta["cmdline"].startswith("root=UUID=")
    assert boot.series["cpu busy %"][1]
    tgz = tmp_path / "bootchart.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(directory, arcname=".")
    again = read([str(tgz)])
    assert len(_events(again, Kind.PROCESS)) == len(procs)


def test_digits_that_are_not_numbers_are_unreadable_not_a_crash(corpus_path, tmp_path):
    """Superscripts and other characters str.isdigit() calls digits but int() refuses: a
    bootchart sample time, a journal timestamp."""
    import shutil

    directory = tmp_path / "bootchart"
    shutil.copytree(corpus_path("bootchart-example1"), directory)
    stat = directory / "proc_stat.log"
    stat.write_text("\u00b2\n" + stat.read_text())
    boot = read([str(directory)])
    assert any("expected a sample time" in d.message and d.line == 1 for d in boot.diagnostics)
    journal = tmp_path / "journal.json"
    journal.write_text('{"__CURSOR": "x", "_TRANSPORT": "kernel", "_SOURCE_MONOTONIC_TIMESTAMP": "\u00b2", '
                       '"MESSAGE": "Linux version 6.1"}\n')
    (warning,) = read([str(journal)]).diagnostics
    assert "1 of 1 entries are not journal entries" in warning.message


def _capture(path, chunks, events=()):
    """Write a capture with the real writer: chunks are (t_ns, bytes)."""
    w = NativeWriter(str(path), {"zero": "power-on"})
    w.event(0, "power-on")
    for t, data in chunks:
        w.chunk(t, data)
    for t, text in events:
        w.event(t, text)
    w.close()
    return path


def test_bootlab_capture_round_trip(tmp_path):
    chunks = [
        (150 * MS, b"SeaBIOS (version 1.16.2)\r\n"),
        (190 * MS, b"Booting from ROM...\r\n"),
        (3400 * MS, b"\x1bc\x1b[2J[    0.000000] Linux version 6.1.0-56-amd64 (x) #1\r\n"),
        (3500 * MS, b"bad utf8 \xff\xfe and NUL \x00 and \\ backslash\r\n"),
        (4000 * MS, b"[    0.600000] Run /init as init process\r\n"),
        (4100 * MS, b"BOOTLAB "),
        (4150 * MS, b"READY\n"),
    ]
    path = _capture(tmp_path / "boot.capture", chunks)
    data = path.read_bytes()
    boot = read([str(path)])
    assert boot.sources[0].format == "bootlab-capture"
    # Every byte comes back exactly.
    back = b""
    for _, t, flag, payload in bootlab_capture.iter_records(data, "x", boot):
        if flag == "|":
            back += b"".join(raw for _, raw in bootlab_capture.segments(t, payload)) + b"\n"
    assert back == b"".join(c for _, c in chunks)
    assert boot.clocks[Clock.PRINTK].offset == 3400 * MS
    assert boot.at(boot.first_mark(Mark.FIRMWARE_START)) == 150 * MS
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 190 * MS
    ready = boot.first_mark(Mark.READY)
    assert boot.at(ready) == 4100 * MS  # stamped at the line's first byte


def test_capture_splits_boot_stub_and_kernel_on_one_line(tmp_path):
    path = _capture(tmp_path / "edd.capture", [
        (200 * MS, b"Probing EDD (edd=off to disable)... o"),
        (3400 * MS, b"k\x1bc[    0.000000] Linux version 6.1.0 (x) #1\r\n")])
    assert b"\\@3.400000000;" in path.read_bytes()  # the pause inside the line is marked
    boot = read([str(path)])
    assert boot.at(boot.first_mark("kernel.setup")) == 200 * MS
    assert boot.clocks[Clock.PRINTK].offset == 3400 * MS
    assert [t for t in boot.logs[0].t] == [200 * MS, 3400 * MS]


def test_capture_line_interrupted_by_an_event(tmp_path):
    w = NativeWriter(str(tmp_path / "ev.capture"), {})
    w.chunk(MS, b"U-Boot 2024")
    w.event(2 * MS, "disconnected")
    w.chunk(3 * MS, b".01 (x)\n")
    w.close()
    boot = read([str(tmp_path / "ev.capture")])
    assert boot.logs[0].text == ["U-Boot 2024.01 (x)"] and boot.logs[0].t == [MS]
    assert boot.first_mark("capture.disconnected").t == 2 * MS


def test_capture_killed_mid_line_keeps_the_bytes(tmp_path):
    w = NativeWriter(str(tmp_path / "k.capture"), {})
    w.chunk(MS, b"complete\npartial li")
    # No close(): as if the process was killed.
    boot = read([str(tmp_path / "k.capture")])
    assert boot.logs[0].text == ["complete", "partial li"]


def test_gzipped_dmesg(fixture_path, tmp_path):
    import gzip
    path = tmp_path / "dmesg.gz"
    path.write_bytes(gzip.compress(open(fixture_path("dmesg-plain.txt"), "rb").read()))
    assert read_one(str(path)).sources[0].format == "dmesg"


@pytest.mark.parametrize("content, message", [
    (b"", "empty file"),
    (bytes(range(256)) * 64, "binary data"),
    (b"hello world\nthis is a readme\n", "not a boot log"),
    (b"\x1f\x8b\x08\x00garbage", "gzip"),
])
def test_not_a_log(tmp_path, content, message):
    path = tmp_path / "input"
    path.write_bytes(content)
    with pytest.raises(NotALog, match=message):
        read([str(path)])


def test_one_bad_file_among_good_ones_is_an_error_diagnostic(fixture_path, tmp_path):
    bad = tmp_path / "empty"
    bad.write_bytes(b"")
    boot = read([fixture_path("dmesg-plain.txt"), str(bad)])
    assert [d.severity for d in boot.diagnostics if "empty" in d.message] == ["error"]


def test_forced_format_unknown(fixture_path):
    with pytest.raises(NotALog, match="unknown input format"):
        read([fixture_path("dmesg-plain.txt")], fmt="nonsense")


def test_truncated_line_is_read(tmp_path):
    path = tmp_path / "dmesg"
    path.write_bytes(b"[    0.000000] Linux version 6.1.0 (x) #1\n[    0.500000] Run /init as init pro")
    boot = read([str(path)])
    assert boot.logs[0].text[-1].endswith("Run /init as init pro")


def test_interleaved_logs_warn(tmp_path):
    path = tmp_path / "dmesg"
    path.write_bytes(b"[    5.000000] a\n[    0.000000] smp: Brought up 1 node, 1 CPU\n[    6.000000] b\n")
    boot = read([str(path)])
    assert any("goes back" in d.message and d.line == 2 for d in boot.diagnostics)
    # Back to zero at the kernel's first message is a new boot: read on its own.
    path.write_bytes(b"[    5.000000] a\n[    0.000000] Linux version 6.1.0 (x) #1\n[    6.000000] b\n")
    boot = read([str(path)])
    (warning,) = boot.diagnostics
    assert warning.line == 2 and warning.message.startswith("the log holds 2 boots (first lines 1, 2): reading boot 2")
    assert list(boot.logs[0].text) == ["[    0.000000] Linux version 6.1.0 (x) #1", "[    6.000000] b"]


def test_capture_damaged_record(tmp_path):
    data = bootlab_capture.header({}) + b"garbage line\n" + bootlab_capture.record(MS, "|", b"U-Boot 2024.01 (x)")
    path = tmp_path / "c"
    path.write_bytes(data)
    boot = read([str(path)])
    assert any(d.line == 2 and "damaged" in d.message for d in boot.diagnostics)
    assert boot.first_mark(Mark.BOOTLOADER_START) is not None


def test_tar_bootchart_detection_in_memory():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("header")
        payload = b"title = x\n"
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    assert detect.detect("x.tgz", buf.getvalue()) == "bootchart"


def test_console_bytes_round_trip(tmp_path):
    chunks = [(MS, b"U-Boot \xff\r\n"), (2 * MS, b"half"), (40 * MS, b" line\n\\end")]
    path = _capture(tmp_path / "x.capture", chunks, events=[(50 * MS, "end")])
    assert bootlab_capture.console_bytes(path.read_bytes()) == b"".join(c for _, c in chunks)


def test_output_after_a_long_pause_on_one_line_is_a_new_line(tmp_path):
    # With `quiet`, "Booting from ROM.." is followed on the same physical line, seconds
    # later, by init's first marker: the marker is timed where it arrived.
    path = _capture(tmp_path / "quiet.capture", [
        (150 * MS, b"Booting from ROM.."), (180 * MS, b"\x1bc\x1b[2J"),
        (5149 * MS, b"bootlab-mark: app.start\r\n"), (5152 * MS, b"BOOTLAB READY\r\n")])
    boot = read([str(path)])
    assert boot.first_mark(Mark.KERNEL_LOAD).t == 150 * MS
    assert boot.first_mark(Mark.APP_START).t == 5149 * MS
    assert sum(boot.logs[0].nbytes) == len(b"Booting from ROM..\x1bc\x1b[2Jbootlab-mark: app.start\r\nBOOTLAB READY\r\n")


def test_last_line_without_newline_counts_its_bytes_only(tmp_path):
    p = tmp_path / "tail.dmesg"
    p.write_bytes(b"[    0.000000] Linux version 6.1\n[    0.100000] no newline")
    assert list(read([str(p)]).logs[0].nbytes) == [33, len(b"[    0.100000] no newline")]


def test_reading_a_small_log_does_not_load_numpy(fixture_path):
    code = ("import sys; from bootlab.sources import read; import bootlab.cli.capture; "
            f"read([{fixture_path('dmesg-plain.txt')!r}]); print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_terminal_programs_millisecond_wall_clock_stamps_time_the_console(fixture_path):
    """Written from a public Nuclei UX900 console (OpenSBI, U-Boot, Linux 5.10) a terminal
    program stamped `[2023/06/16-12:05:50:699]`: read as untimed, its 62 s in U-Boot and
    the login were not timed.  The first line is zero; OpenSBI, before the bootloader,
    starts the firmware phase (power-on is before it); a stamp that is no time of day is
    a warning and an untimed line."""
    a = analyze(read([fixture_path("console-terminal-stamps.txt")]))
    assert a.boot.sources[0].format == "grabserial"
    assert [s.phases[0].value for s in a.phases.spans][:2] == ["firmware", "bootloader"]
    firmware, bootloader = a.phases.spans[:2]
    assert firmware.start == 0 and "OpenSBI banner" in firmware.start_evidence
    assert bootloader.start == 527_000_000 and bootloader.end == 62_695_000_000
    assert "power-on" not in a.phases.boundaries
    assert any("time before firmware is not measured" in n for n in a.phases.notes)
    assert a.phases.end.mark == Mark.READY and a.phases.end.at == 82_102_000_000
    assert any(d.line == 20 and d.message.startswith("not a time of day") for d in a.boot.diagnostics)


def test_an_omap_boot_from_x_loader_and_u_boot_1_to_a_busybox_shell(fixture_path):
    """Written from the PandaBoard capture on eLinux's grabserial page (grabserial -t -m
    "Starting kernel"): X-Loader and U-Boot 1.1.4 were not taken for a bootloader (8.4 s
    left out), and the BusyBox shell's `/ #` for no ready (the boot ended at "Freeing init
    memory", 9.6 s early)."""
    a = analyze(read([fixture_path("grabserial-xloader-uboot1.log")]))
    first = a.phases.spans[0]
    assert first.phases[0].value == "bootloader" and first.start == 1_908_000
    assert a.boot.meta["bootloader"] == "U-Boot 1.1.4-gcebe815a-dirty"
    assert [ev.attrs["stage"] for ev in a.boot.marks(Mark.BOOTLOADER_START)] == ["x-loader", "u-boot"]
    assert a.phases.end.mark == Mark.READY and a.phases.end.at == 8_376_117_000 + 15_628_851_000


def test_a_stopped_autoboot_says_the_bootloaders_time_holds_typing(fixture_path, tmp_path):
    """The same PandaBoard capture: the autoboot was stopped and two commands typed at the
    `PANDA #` prompt (2.6 s of the 8.4 s); bootlab's own capture types at U-Boot's prompt as
    a step of the boot sequence (its `! sent` events), which is no person's typing."""
    text = open(fixture_path("grabserial-xloader-uboot1.log")).read().replace(
        "[0.319459 0.006291] DRAM:  512 MB\n",
        "[0.319459 0.006291] DRAM:  512 MB\n[0.770903 0.451444] Hit any key to stop autoboot:  0\n"
        "[0.773266 0.002363] PANDA #\n[3.340146 2.566880] PANDA # mmcinit 0;fatload mmc 0 0x80000000 uimage\n")
    log = tmp_path / "panda.log"
    log.write_text(text)
    (note,) = [n for n in analyze(read([str(log)])).phases.notes if n.startswith("the autoboot was stopped")]
    assert ":7 (bootloader prompt)" in note
    real = str(Path(fixture_path("grabserial-t.log")).parent.parent / "real" / "uboot-x86-fast-timer.capture.gz")
    assert not [n for n in analyze(read([real])).phases.notes if "autoboot was stopped" in n]


def test_a_dmesg_whose_systemd_went_over_to_journald_ends_no_earlier_than_shown(tmp_path):
    """Public Orange Pi RV2 and RG353V dmesgs: systemd's last line in the kernel log is
    journald's start (it logs to the journal from then on); the end there is where systemd
    stopped writing to the kernel log, and the note says so."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 6.6.63 (builder@example) #1 SMP\n"
                   "[    0.016000] devtmpfs: initialized\n"
                   "[    4.221000] Run /sbin/init as init process\n"
                   "[    8.195000] systemd[1]: Starting Journal Service...\n"
                   "[    9.882410] systemd[1]: Started Journal Service.\n"
                   "[   11.188068] systemd-journald[455]: Received client request to flush runtime journal.\n"
                   "[   14.000000] bluetooth: hci0 registered\n")
    a = analyze(read([str(log)]))
    assert a.phases.end.at == 9_882_410_000
    (note,) = [n for n in a.phases.notes if n.startswith("systemd logs to the kernel log only until journald runs")]
    assert ":5 (Journal Service)" in note and "the boot ended after this end" in note
    assert any("the logs go on to 14.000 s" in n and "in no phase" in n for n in a.phases.notes)


def test_systemd_analyze_outputs_pasted_into_one_file_are_all_read(fixture_path):
    """A public Lubuntu install guide pasted `time`, `critical-chain` and `blame` with their
    commands into one file: only `time` was read (the rest were 17 warnings)."""
    path = fixture_path("systemd-analyze-pasted.txt")
    a = analyze(read([path]))
    assert a.boot.sources[0].format == "systemd-time+systemd-blame+systemd-critical-chain"
    assert not a.boot.diagnostics
    assert a.phases.end.at == 16_418_000_000
    assert [u.name for u in a.critical.userspace][:2] == ["graphical.target", "udisks2.service"]
    blamed = {b.name: b.duration for b in a.units}
    assert blamed["dev-sda1.device"] == 6_849_000_000 and blamed["apparmor.service"] == 970_000_000


def test_a_busybox_syslog_without_host_names_is_read_whole(tmp_path):
    """A public GoPro HERO7 /var/log/messages (BusyBox syslogd: no host name): its
    programs' lines were "not syslog lines" (428 of 683, a warning); they are read in
    order, untimed, as a syslog's are."""
    log = tmp_path / "messages"
    log.write_text("Jan  1 00:00:02 kernel: [    0.000000] Linux version 4.4.15 (builder@example) #1 SMP\n"
                   "Jan  1 00:00:03 kernel: [    1.761926] Freeing unused kernel memory: 204K\n"
                   "Jan  1 00:00:03 login[74]: ROOT LOGIN  on '/dev/ttyUSI0'\n"
                   "Jan  1 00:00:03 gpChpIpc: [            main: 276] Start gpChpIpc daemon\n"
                   "Jan  1 00:00:04 gpChpIpc: gp_rx wifi_ctrl client not up yet\n")
    boot = read([str(log)])
    assert boot.sources[0].format == "syslog" and not boot.diagnostics


def test_a_unit_that_failed_to_start_is_blamed_as_failed(tmp_path):
    """A public Orange Pi RV2 dmesg: `Failed to start orangepi-zram-config.service` was
    listed among the slowest units like any other."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 6.6.63 (builder@example) #1 SMP\n"
                   "[    4.221000] Run /sbin/init as init process\n"
                   "[    8.195000] systemd[1]: Starting orangepi-zram-config.service - Orange Pi ZRAM config...\n"
                   "[    8.456000] systemd[1]: Failed to start orangepi-zram-config.service - Orange Pi ZRAM config.\n"
                   "[    8.500000] systemd[1]: Starting ssh.service - OpenBSD Secure Shell server...\n"
                   "[    8.700000] systemd[1]: Started ssh.service - OpenBSD Secure Shell server.\n")
    units = {u.name: u for u in analyze(read([str(log)])).units}
    assert units["orangepi-zram-config.service"].detail == "failed"
    assert units["orangepi-zram-config.service"].duration == 261_000_000 and units["ssh.service"].detail == ""


def test_a_kernel_record_inside_a_systemd_status_is_read(tmp_path):
    """The MPFS Icicle console in U-Boot's docs: a kernel record printed inside systemd's
    coloured `[  OK  ]` lost its "[" to the escape before it (`\\e[[` reads as one), and
    three records were not read (the last moved ready 5 ms early)."""
    log = tmp_path / "console.txt"
    log.write_bytes(b"Starting kernel ...\n\n"
                    b"[    0.000000] Linux version 5.6.16 (builder@example) #1 SMP\n"
                    b"[    3.491071] systemd[1]: Mounted Temporary Directory (/tmp).\n"
                    b"[\x1b[0;32m  OK  \x1b[[    3.498114] systemd[1]: Mounted Kernel Configuration File System.\n"
                    b"0m] Mounted Temporary Directory (/tmp).\n"
                    b"[\x1b[0;32m  OK  \x1b[0m] Reached target Multi-User System.\n")
    a = analyze(read([str(log)]))
    assert a.phases.end.at == 3_498_114_000
    units = [ev for ev in a.boot.events if ev.kind == Kind.UNIT and ev.clock == Clock.PRINTK]
    assert any(ev.line == 5 for ev in units)


def test_a_critical_chain_pasted_in_markdown_keeps_its_root_mount(tmp_path):
    """Public notes in Markdown: the fence lines became units and the root mount `-.mount`
    was read as `.mount`."""
    log = tmp_path / "chain.md"
    log.write_text("```\n"
                   "The time when unit became active or started is printed after the \"@\" character.\n"
                   "The time the unit took to start is printed after the \"+\" character.\n\n"
                   "graphical.target @16.554s\n"
                   "└─multi-user.target @16.554s\n"
                   "  └─systemd-journald.socket @605ms\n"
                   "    └─-.mount @567ms\n"
                   "\t```\n")
    boot = read([str(log)])
    units = [ev.name for ev in boot.events if ev.kind == Kind.UNIT]
    assert units == ["graphical.target", "multi-user.target", "systemd-journald.socket", "-.mount"]


def test_a_critical_chain_pasted_from_a_web_page_and_a_pager_is_read_once(tmp_path):
    """A public forum post (Ubuntu 20.04 on a Latitude 3410): the tree drawn with HTML
    character references, and `less`'s status line after its first screen, then the whole
    output shown again: every unit was read twice, named `&#9492;&#9472;snapd.service`."""
    chain = ["graphical.target @1min 46.560s",
             "&#9492;&#9472;multi-user.target @1min 46.560s",
             "  &#9492;&#9472;snapd.seeded.service @1min 5.988s +3.250s",
             "    &#9492;&#9472;snapd.service @37.999s +27.984s",
             "      &#9492;&#9472;basic.target @37.553s",
             "        &#9492;&#9472;systemd-journal-flush.service @5.533s +29.926s",
             "          &#9492;&#9472;-.slice @4.809s"]
    header = ("The time when unit became active or started is printed after the \"@\" character.\n"
              "The time the unit took to start is printed after the \"+\" character.\n\n")
    log = tmp_path / "forum.md"
    log.write_text("```\nuser@host:~$ systemd-analyze critical-chain\n" + header + "\n".join(chain[:4])
                   + "\nlines 1-9...skipping...\n" + header + "\n".join(chain) + "\n\n```\n")
    boot = read([str(log)])
    units = [ev.name for ev in boot.events if ev.kind == Kind.UNIT]
    assert units == ["graphical.target", "multi-user.target", "snapd.seeded.service", "snapd.service",
                     "basic.target", "systemd-journal-flush.service", "-.slice"]
    assert not boot.diagnostics


def test_an_initcall_timed_from_another_ones_start_is_timed_by_its_stamps(tmp_path):
    """A public 6.18 VM's initcall_debug dmesg: the kernel keeps one start time for every
    initcall (4.17 on), so `aesni_init`, loaded by request_module() while `init_encrypted`
    waited for it, overwrote it, and init_encrypted "returned 0 after 28536 usecs", 2.28 s
    after its call.  It is timed by its lines' stamps, and says so; a call with another
    inside it whose own time is right keeps it."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 6.18.0 (builder@example) #1 SMP\n"
                   "[    2.438559] calling  init_encrypted+0x0/0x90 @ 1\n"
                   "[    4.661000] Freeing initrd memory: 50000K\n"
                   "[    4.688671] calling  aesni_init+0x0/0xff0 [aesni_intel] @ 271\n"
                   "[    4.690000] initcall aesni_init+0x0/0xff0 [aesni_intel] returned 0 after 1300 usecs\n"
                   "[    4.717217] initcall init_encrypted+0x0/0x90 returned 0 after 28536 usecs\n"
                   "[    4.800000] calling  outer_init+0x0/0x90 @ 1\n"
                   "[    4.800100] calling  inner_init+0x0/0x90 [inner] @ 300\n"
                   "[    4.800200] initcall inner_init+0x0/0x90 [inner] returned 0 after 80 usecs\n"
                   "[    4.900000] initcall outer_init+0x0/0x90 returned 0 after 99990 usecs\n")
    small = log.read_text()
    # The same in a log of more returns than are paired in Python (numpy's columns).
    many = "".join(f"[    5.{k:06d}] calling  f{k}+0x0/0x9 @ 1\n[    5.{k:06d}] initcall f{k}+0x0/0x9 returned 0 after 0 "
                   "usecs\n" for k in range(20_001))
    for text in (small, small + many):
        log.write_text(text)
        blamed = {b.name: b for b in analyze(read([str(log)]), Options(top=5)).initcalls}
        assert blamed["init_encrypted"].duration == 4_717_217_000 - 2_438_559_000
        assert "timed by its lines' stamps" in blamed["init_encrypted"].detail
        assert blamed["outer_init"].duration == 99_990_000 and "stamps" not in blamed["outer_init"].detail
        assert blamed["aesni_init"].duration == 1_300_000


def test_an_init_heard_from_starts_userspace_when_the_kernel_does_not_say(tmp_path):
    """A public OUYA (Tegra 3, 3.1.10) log: no "Run /init", no init memory freed; the boot
    ended at `Unpacking initramfs...`, 3.7 s before init's first message."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 3.1.10-tk3+ (builder@example) #1 SMP PREEMPT\n"
                   "[    0.070000] NET: Registered protocol family 16\n"
                   "[    2.026434] Unpacking initramfs...\n"
                   "[    5.712464] rtc_tps6591x rtc_tps6591x.0: setting system clock to 2000-01-01 00:00:01 UTC\n"
                   "[    5.726162] init (1): /proc/1/oom_adj is deprecated, please use /proc/1/oom_score_adj instead.\n"
                   "[    5.796276] init: could not open /dev/keychord\n"
                   "[   48.004000] init: untracked pid 900 exited\n")
    a = analyze(read([str(log)]))
    assert a.phases.boundaries[Mark.USERSPACE_START].at == 5_726_162_000
    assert "init's first message" in a.phases.boundaries[Mark.USERSPACE_START].evidence
    assert a.phases.end.at == 5_726_162_000  # the first only: init logs all along


def test_a_pci_fixup_is_blamed_once_per_device(tmp_path):
    """A public AMD G-T56N board's dmesg: `quirk_usb_early_handoff` ran for three USB
    controllers (27.3, 23.4 and 23.4 ms); the blame list showed the longest alone."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 5.4.0-1007-fips (buildd@example) #8-Ubuntu SMP\n"
                   "[    0.512000] pci 0000:00:12.0: quirk_usb_early_handoff+0x0/0x6a0 took 27343 usecs\n"
                   "[    0.536000] pci 0000:00:13.0: quirk_usb_early_handoff+0x0/0x6a0 took 23438 usecs\n"
                   "[    0.560000] pci 0000:00:16.0: quirk_usb_early_handoff+0x0/0x6a0 took 23437 usecs\n")
    rows = [(b.name, b.detail) for b in analyze(read([str(log)])).initcalls]
    assert rows == [("quirk_usb_early_handoff", f"for 0000:00:{dev}.0") for dev in (12, 13, 16)]


def test_the_kernel_starts_no_earlier_than_the_bootloader_ran(tmp_path):
    """A public A733 console: boot0 stamps its lines (to `[4792]Jump to ATF`), then U-Boot
    loads for 3.714 s without stamps; the kernel was placed at 4.792 s, inside that load.
    An Orange Pi RV2's U-Boot stamps its own lines to 9.616 s, and its kernel was placed at
    9.353 s, its last timed step's end."""
    log = tmp_path / "console.txt"
    log.write_text("[186]HELLO! BOOT0 is starting!\n"
                   "[4689]Training result is = 7\n"
                   "[4792]Jump to ATF: monitor_base = 0x48000000\n"
                   "U-Boot 2026.01 (Jan 01 2026 - 00:00:00 +0000)\n"
                   "44468736 bytes read in 3714 ms (11.4 MiB/s)\n"
                   "Starting kernel ...\n\n"
                   "[    0.000000] Linux version 7.1.0 (builder@example) #1 SMP PREEMPT_RT\n"
                   "[    0.187678] smp: Bringing up secondary CPUs ...\n")
    a = analyze(read([str(log)]))
    kernel = next(s for s in a.phases.spans if "kernel init" in s.name)
    assert kernel.start == (4_792 + 3_714) * MS
    log.write_text("[   0.400]U-Boot 2022.10 (Jan 01 2024 - 00:00:00 +0000)\n"
                   "[   9.353]112811 bytes read in 20 ms (5.4 MiB/s)\n"
                   "[   9.616]   Loading Device Tree to 000000007de5b000, end 000000007de6e8e0 ... OK\n"
                   "Starting kernel ...\n\n"
                   "[    0.000000] Linux version 6.6.63 (builder@example) #1 SMP\n"
                   "[    0.016000] devtmpfs: initialized\n")
    a = analyze(read([str(log)]))
    assert next(s for s in a.phases.spans if "kernel init" in s.name).start == 9_616 * MS


def test_openwrts_init_complete_is_ready(tmp_path):
    """A public MT7620A router's `logread`: procd logs `- init complete -` when every init
    script has run; the boot ended at init's first message, 4.5 s, instead."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[    0.000000] Linux version 4.14.171 (builder@example) #0 Thu Feb 27 21:05:12 2020\n"
                   "[    4.464000] init: Console is alive\n"
                   "[    7.198979] init: - preinit -\n"
                   "[   11.536493] procd: - init -\n"
                   "[   18.250000] procd: - init complete -\n")
    a = analyze(read([str(log)]))
    assert a.phases.end.mark == Mark.READY and a.phases.end.at == 18_250_000_000


def test_an_earlycon_the_kernel_could_not_use_printed_nothing(fixture_path, tmp_path):
    """An NXP LS1046ARDB console: `earlycon: uart8250 at I/O port 0x0` then `Malformed early
    option 'earlycon'`: no boot console printed, and the serial console's start printed the
    whole log (a 1.2 s "silent gap")."""
    text = open(fixture_path("console-no-earlycon-replay.txt")).read().replace(
        "[    0.000000] Machine model: Example H616 Board\n",
        "[    0.000000] Machine model: Example H616 Board\n"
        "[    0.000000] earlycon: uart8250 at I/O port 0x0 (options '')\n"
        "[    0.000000] Malformed early option 'earlycon'\n")
    log = tmp_path / "console.txt"
    log.write_text(text)
    c = analyze(read([str(log)])).console
    assert c.replay_at == 956_140_000 and "the 8819 bytes logged before" in c.note  # all: the 8707 and these two


def test_tegras_bootloader_says_when_it_started_and_jumped(tmp_path):
    """A public OUYA (Tegra 3) console: `Bootloader Start at:1257 ms`, `Jumping to kernel
    at:2180 ms`, in milliseconds since the reset; "power-on is not in these logs" said bootlab."""
    log = tmp_path / "console.txt"
    log.write_text("Bootloader AVP Init\n"
                   "Bootloader Start at:1257 ms\n"
                   "Jumping to kernel at:2180 ms\n"
                   "[    0.000000] Linux version 3.1.10-tk3+ (builder@example) #1 SMP PREEMPT\n"
                   "[    0.070000] NET: Registered protocol family 16\n")
    a = analyze(read([str(log)]))
    assert [(s.name, s.start, s.end) for s in a.phases.spans[:2]] == [("firmware", 0, 1_257 * MS),
                                                                     ("bootloader", 1_257 * MS, 2_180 * MS)]


def test_a_syslogs_console_cost_is_its_kernel_records_alone(tmp_path):
    """A GoPro's BusyBox syslog: its console cost counted syslog's prefixes and the other
    programs' lines (5.4 s against the same boot's dmesg's 1.4 s)."""
    records = ["[    0.000000] Linux version 4.4.15 (builder@example) #1 SMP",
               "[    1.761926] Freeing unused kernel memory: 204K"]
    log = tmp_path / "messages"
    log.write_text("".join(f"Jan  1 00:00:03 kernel: {r}\n" for r in records)
                   + "Jan  1 00:00:03 gpChpIpc: gp_rx wifi_ctrl client not up yet\n")
    c = analyze(read([str(log)])).console
    assert c.bytes == sum(len(r) + 1 for r in records) and c.lines == 2


def test_a_banner_whose_stamp_lost_bytes_is_still_the_banner(tmp_path):
    """A reference-device capture of CI (2026-11-29) lost the banner's `[` and three digits as
    the serial console started (`    0.000] Linux version 6.1.0-57-amd64 ...`): no kernel
    version, and `quiet` was not advised (its rule wants the banner printed)."""
    log = tmp_path / "console.txt"
    log.write_text("Booting from ROM...\n"
                   "    0.000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP Debian\n"
                   "[    0.000000] Command line console=ttyS0,115200 panic=-1\n"
                   "[    0.100000] devtmpfs: initialized\n")
    boot = read([str(log)])
    assert boot.meta["kernel_version"] == "6.1.0-57-amd64"
    assert [ev.line for ev in boot.marks(km.BANNER)] == [2]


def test_firmware_lines_stamped_like_printk_are_not_a_kernel(tmp_path):
    """Written from a public ConnectCore MP25 console (STM32MP25: TF-A, OP-TEE's
    SCP-firmware, U-Boot stopped at its prompt, no kernel): SCP-firmware stamps its lines
    like printk, and they were read as a kernel's, a boot of 0 ns in "kernel init".  With a
    kernel after U-Boot, its lines are the kernel's as ever."""
    head = ("NOTICE:  CPU: STM32MP255CAL Rev.Y\n"
            "NOTICE:  BL2: v2.10-stm32mp2-r1.0(release):e22f7d898-dirty(e22f7d89)\n"
            "NOTICE:  BL31: v2.10-stm32mp2-r1.0(release):e22f7d898-dirty(e22f7d89)\n"
            "[    0.000000] SCP-firmware 2.13.0-intree-optee-os-da06ccf75\n"
            "[    0.000000]\n"
            "[    0.000000] [FWK] Module initialization complete!\n"
            "\n"
            "U-Boot dub-2023.10-r2.1 (Jul 04 2025 - 07:26:38 +0000)\n"
            "\n"
            "CPU: STM32MP255CAL Rev.Y\n"
            "Hit any key to stop autoboot:  0\n")
    log = tmp_path / "mp25.log"
    log.write_text(head + "=> mmc list\nSTM32 SD/MMC: 0 (eMMC)\n")
    a = analyze(read([str(log)]))
    assert not a.boot.marks(Mark.KERNEL_START) and a.boot.meta.get("kernel_version") is None
    assert not any(s.phases[0] == "kernel init" for s in a.phases.spans)
    booted = tmp_path / "mp25-linux.log"
    booted.write_text(head + "Starting kernel ...\n\n"
                      "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x411fd040]\n"
                      "[    0.000000] Linux version 6.6.48 (oe-user@oe-host) (aarch64-dey-linux-gcc) #1 SMP PREEMPT\n"
                      "[    1.250000] Run /sbin/init as init process\n")
    b = analyze(read([str(booted)]))
    assert b.boot.meta["kernel_version"] == "6.6.48"
    assert b.boot.marks(km.BANNER)[0].line == 15
    # (the log ends as init starts: no userspace phase is timed, and a note says so)
    assert [s.phases[0] for s in b.phases.spans][-1:] == ["kernel init"]
    assert any("the logs end as init starts" in n for n in b.phases.notes)


def test_a_capture_header_that_is_not_an_object_is_damaged(tmp_path):
    """Found by the fuzz test: a header whose JSON is a number was a traceback."""
    log = tmp_path / "odd.capture"
    log.write_bytes(bootlab_capture.MAGIC + b" 20220101\n0.100000000 | U-Boot 2023.01 (Jan 01 2024)\n")
    boot = read([str(log)], fmt="bootlab-capture")
    assert any(d.line == 1 and "capture header is damaged" in d.message for d in boot.diagnostics)


def test_tf_a_times_its_ddr_init(tmp_path):
    """A public NXP LS1046ARDB console (TF-A built for debugging): BL2's DDR driver says how
    long it took, 1.1 s of the firmware that was nowhere in the report."""
    log = tmp_path / "ls1046ardb.log"
    log.write_text("INFO:    RCW BOOT SRC is SD/EMMC\n"
                   "INFO:    Time after parsing SPD 548 ms\n"
                   "NOTICE:  4 GB DDR4, 64-bit, CL=15, ECC off\n"
                   "INFO:    Time used by DDR driver 1107 ms\n"
                   "NOTICE:  BL2: v2.4(debug):lf-5.10.52-2.1.0-rc2-0-gbb4957067-dirty\n"
                   "U-Boot 2021.04+fsl+g5c1c1d9a (Sep 08 2021 - 04:45:39 +0000)\n")
    a = analyze(read([str(log)]))
    ddr = [s for s in a.stages if s.name == "DDR init (TF-A BL2)"]
    assert len(ddr) == 1 and ddr[0].duration == 1107 * 10**6 and ddr[0].where.endswith("ls1046ardb.log:4")


def _grabserial(lines: list[tuple[float, str]]) -> str:
    return "".join(f"[{t:.6f} 0.000000] {text}\n" for t, text in lines)


@pytest.mark.parametrize("earlycon", [False, True])
def test_early_init_before_the_kernels_clock_is_named_when_its_start_is_unseen(tmp_path, earlycon):
    """ARM's printk clock counts from `sched_clock:` (time_init); the messages before it are
    stamped zero.  A public F1C200s console (no earlycon) showed 1.58 s of "kernel load/
    decompress" for an image U-Boot had loaded uncompressed: the kernel's early init before
    its clock (ftrace patching 29,741 call sites on an ARM926).  With earlycon the messages
    arrive as they are printed and place the kernel's start: nothing to say."""
    first = 7.55 if earlycon else 10.63
    log = tmp_path / "f1c200s.log"
    log.write_text(_grabserial([
        (0.0, "U-Boot 2024.01 (Jan 01 2024 - 00:00:00 +0000) Allwinner Technology"),
        (7.4736, "Starting kernel ..."),
        (first, "[    0.000000] Booting Linux on physical CPU 0x0"),
        (first + 0.002, "[    0.000000] Linux version 6.9.2 (build@host) (arm-buildroot-linux-musleabi-gcc) #1"),
        (first + 0.005, "[    0.000000] ftrace: allocating 29741 entries in 88 pages"),
        (first + 1.5 if earlycon else first + 0.17, "[    0.000000] sched_clock: 32 bits at 100 Hz, resolution 10000000ns"),
        (first + 1.6 if earlycon else first + 0.22, "[    0.080000] devtmpfs: initialized"),
        (13.147619, "[    4.080000] Run /sbin/init as init process"),
    ]))
    a = analyze(read([str(log)]))
    notes = [n for n in a.phases.notes if "the kernel's clock starts at" in n]
    if earlycon:
        assert not notes
    else:
        assert len(notes) == 1 and "f1c200s.log:6 (sched_clock)" in notes[0] and "holds its early init" in notes[0]


def test_the_arm64_reference_boards_kernel_start_is_unseen_without_earlycon():
    """The ARM64 board (U-Boot, Debian's 6.1 arm64 kernel, console=ttyAMA0 without
    earlycon): its first kernel line reached the console 0.2 s after printk time zero."""
    real = Path(__file__).parent / "data" / "real" / "uboot-arm64-bootstage-both.capture.gz"
    a = analyze(read([str(real)]))
    notes = [n for n in a.phases.notes if "the kernel's clock starts at" in n]
    assert len(notes) == 1 and ".capture.gz:161 (sched_clock)" in notes[0]


# A public phyCORE-i.MX6 console (barebox 2017.12, Linux 5.2.7; quoted in a linux-usb mail),
# cut down, with host times as grabserial -t gives them.
BAREBOX = [(0.0, "barebox 2017.12.0-bsp-yocto-i.mx6-pd18.1.1 #1 Thu Jul 25 13:13:48 UTC 2019"),
           (0.01, "Board: Phytec phyCORE-i.MX6 Quad with eMMC"),
           (0.35, "running /env/bin/init..."),
           (0.36, "Hit m for menu or any other key to stop autoboot:    1"),
           (1.36, "booting 'emmc'"),
           (1.37, "Loading ARM Linux zImage '/mnt/emmc/zImage'"),
           (1.61, "Loading devicetree from '/mnt/emmc/oftree'"),
           (1.65, "commandline:  console=ttymxc1,115200n8  root=/dev/mmcblk1p2 rootwait rw"),
           (1.66, "Starting kernel in secure mode"),
           (2.10, "[    0.000000] Booting Linux on physical CPU 0x0"),
           (2.11, "[    0.000000] Linux version 5.2.7-bsp-yocto-i.mx6-pd18.1.1 (flateef@host) (gcc version 8.2.0) #1 SMP"),
           (2.13, "[    0.013443] devtmpfs: initialized"),
           (3.40, "[    1.300000] Run /sbin/init as init process")]


def test_barebox_is_a_bootloader(tmp_path):
    """barebox was read as nothing: its 1.66 s were "not measured", before kernel init."""
    log = tmp_path / "phycore.log"
    log.write_text(_grabserial(BAREBOX))
    a = analyze(read([str(log)]))
    assert a.boot.meta["bootloader"] == "barebox 2017.12.0-bsp-yocto-i.mx6-pd18.1.1"
    spans = {s.phases[0]: (s.start, s.duration) for s in a.phases.spans}
    assert spans["bootloader"] == (0, 1_650_000_000)  # to `commandline:`, its last line before the jump
    load = [s for s in a.stages if s.name == "load /mnt/emmc/zImage"]
    assert len(load) == 1 and load[0].duration == 280_000_000  # the zImage, initrd and device tree read
    bootdelay = [f for f in advise(a.boot, a) if f.rule == "bootloader.bootdelay"]
    assert bootdelay[0].title == "Set barebox's autoboot_timeout to 0" and bootdelay[0].saving_ns == 1_000_000_000


def test_barebox_stopped_at_its_prompt_says_so(tmp_path):
    """A RIoTboard's console from a public install guide: the countdown stopped by a key."""
    log = tmp_path / "riotboard.log"
    log.write_text(_grabserial(BAREBOX[:4] + [(2.5, "type exit to get to the menu"),
                                              (2.6, "barebox@RIoTboard i.MX6S:/ boot emmc")] + BAREBOX[4:]))
    a = analyze(read([str(log)]))
    assert any("the autoboot was stopped" in n and "riotboard.log:6 (bootloader prompt)" in n for n in a.phases.notes)


def test_a_bootloader_that_gives_up_at_its_prompt_ends_the_boot_as_failed(tmp_path):
    """The autoboot ran its boot command, which printed what it tried and came back to the
    prompt: the boot failed there (a MaaXBoard's public console ended at `u-boot=> ` after
    BOOTP retries and `Failed to load` lines; it was read as a boot that simply ended, and
    its prompt as someone who had stopped the countdown)."""
    uboot = tmp_path / "uboot.log"
    uboot.write_text(_grabserial([
        (0.0, "U-Boot 2021.04-00002-gf752480a4c (Jan 20 2022 - 10:32:23 +0000)"),
        (0.9, "Hit any key to stop autoboot:  2 ... 1 ... 0"),
        (3.0, "switch to partitions #0, OK"),
        (3.1, "Failed to load 'Image'"),
        (3.2, "ARP Retry count exceeded; starting again"),
        (9.0, "WARN: Cannot load the DT"),
        (9.1, "u-boot=> ")]))
    a = analyze(read([str(uboot)]))
    assert a.phases.end.mark == "failure" and a.phases.end.at == 9_100_000_000
    assert a.phases.end.evidence.endswith("uboot.log:7 (Bootloader gave up: ARP Retry count exceeded; starting "
                                          "again (then: WARN: Cannot load the DT))")
    assert not [n for n in a.phases.notes if "autoboot was stopped" in n]
    first = advise(a.boot, a)[0]
    assert first.rule == "boot.bootloader-gave-up" and first.evidence[0].endswith("uboot.log:7: u-boot=>")
    # barebox the same way; what it prints as its countdown is stopped is no boot command's.
    barebox = tmp_path / "barebox.log"
    barebox.write_text(_grabserial(BAREBOX[:4] + [(1.36, "booting 'emmc'"),
                                                  (1.37, "could not open /mnt/emmc/zImage: No such file or directory"),
                                                  (1.38, "barebox@Phytec phyCORE-i.MX6 Quad with eMMC:/ ")]))
    a = analyze(read([str(barebox)]))
    assert a.phases.end.mark == "failure" and "No such file or directory" in a.phases.end.evidence
    # Untimed, it is still a failure (nothing can be timed, the failure is said).
    plain = tmp_path / "plain.log"
    plain.write_text("".join(line.split("] ", 1)[1] + "\n" for line in uboot.read_text().splitlines()))
    a = analyze(read([str(plain)]))
    assert a.phases.end is None and any("started no kernel" in n and "plain.log:7" in n for n in a.phases.notes)
    assert advise(a.boot, a)[0].rule == "boot.bootloader-gave-up"


def test_logs_that_end_while_uboot_retries_its_network_boot_say_so(tmp_path):
    """A MaaXBoard's public console: BOOTP broadcast 1 to 17, `Retry time exceeded; starting
    again`, and again (its PHY tried each round).  Cut there, the log said nothing of why the
    boot went no further; an answer that comes in a later round, and the kernel after it,
    is no note."""
    rounds = [(1.0, "BOOTP broadcast 1"), (1.5, "BOOTP broadcast 2"), (5.0, "Retry time exceeded; starting again"),
              (5.1, "ethernet@30be0000 Waiting for PHY auto negotiation to complete.... TIMEOUT !"),
              (9.0, "Could not initialize PHY ethernet@30be0000"), (9.1, "BOOTP broadcast 1")]
    head = [(0.0, "U-Boot 2021.04-00002-gf752480a4c (Jan 20 2022 - 10:32:23 +0000)"),
            (0.5, "Hit any key to stop autoboot:  0"), (0.6, "Booting from net ...")]
    cut = tmp_path / "cut.log"
    cut.write_text(_grabserial(head + rounds))
    (note,) = [n for n in analyze(read([str(cut)])).phases.notes if "retries its network boot" in n]
    assert "(BOOTP/DHCP broadcasts: 3, rounds started again: 1;" in note and "cut.log:9)" in note
    answered = tmp_path / "answered.log"
    answered.write_text(_grabserial(head + rounds + [(9.5, "DHCP client bound to address 10.0.2.15 (400 ms)"),
                                                     (9.6, "Starting kernel ..."),
                                                     (10.0, "[    0.000000] Booting Linux on physical CPU 0x0")]))
    assert not [n for n in analyze(read([str(answered)])).phases.notes if "retries its network boot" in n]


def test_a_kernel_started_by_hand_after_the_boot_command_gave_up_is_no_failure(tmp_path):
    """Someone typed commands at the prompt the failed boot command left, and booted: the
    boot reached ready, and its bootloader's time holds that typing."""
    log = tmp_path / "by-hand.log"
    log.write_text(_grabserial([
        (0.0, "U-Boot 2023.04 (Apr 01 2023 - 00:00:00 +0000)"),
        (0.5, "Hit any key to stop autoboot:  0"),
        (0.6, "Wrong Image Format for bootm command"),
        (0.7, "ERROR: can't get kernel image!"),
        (0.8, "=> "),
        (9.0, "=> tftpboot 0x82000000 zImage; bootz 0x82000000"),
        (9.5, "Starting kernel ..."),
        (10.0, "[    0.000000] Booting Linux on physical CPU 0x0"),
        (10.1, "[    0.000000] Linux version 6.1.0 (builder@host) (gcc 12.2.0) #1 SMP"),
        (11.0, "[    1.000000] Run /sbin/init as init process"),
        (12.0, "buildroot login: ")]))
    a = analyze(read([str(log)]))
    assert a.phases.end.mark != "failure"
    (note,) = [n for n in a.phases.notes if "bootloader's time holds commands typed" in n]
    assert note.startswith("the boot command gave up (") and ("by-hand.log:5 (bootloader prompt), its last words: "
                                                              "\"ERROR: can't get kernel image!\")") in note
    assert not [f for f in advise(a.boot, a) if f.rule == "boot.bootloader-gave-up"]


def test_a_console_of_two_barebox_boots_is_two_boots(tmp_path):
    log = tmp_path / "two.log"
    log.write_text(_grabserial(BAREBOX + [(t + 5, text) for t, text in BAREBOX]))
    last, first = analyze(read([str(log)])), analyze(read([str(log)], which=1))
    assert [s.start for s in last.phases.spans][0] == 5_000_000_000
    assert [s.start for s in first.phases.spans][0] == 0


# A public Raspberry Pi 4B's UART (EEPROM bootloader with BOOT_UART=1, start4.elf with
# uart_2ndstage=1, a quiet Raspberry Pi OS), cut down: both count from the SoC's reset.
RPI4 = """\
  0.79 RPi: BOOTSYS release VERSION:d76c4603 DATE: 2026/01/09 TIME: 16:12:13
  0.79 BOOTMODE: 0x06 partition 0 build-ts BUILD_TIMESTAMP=1767975133 serial dda67451 boardrev d03115 stc 796145
  0.84 Initialising SDRAM rank 2 total-size: 64Gbit 3200 part: 0 (0x14 0x00)
  2.27 SD_SB 11013130


  2.74 RPi: BOOTLOADER release VERSION:d76c4603 DATE: 2026/01/09 TIME: 16:12:13
  2.75 BOOTMODE: 0x06 partition 0 build-ts BUILD_TIMESTAMP=1767975133 serial dda67451 boardrev d03115 stc 2753469
  2.84 SD_OC: 0
  2.48 Boot mode: SD (01) order f
  3.04 Read start4.elf bytes  2299008 hnd 0x6500
  3.17 Starting start4.elf @ 0xfec00200 partition 1

MESS:00:00:03.730367:0: arasan: arasan_emmc_open
MESS:00:00:07.087191:0: Loaded 'kernel8.img' to 0x200000 size 0x93d213
MESS:00:00:08.389676:0: Device tree loaded to 0x2e596f00 (size 0xe0ac)
MESS:00:00:08.421056:0: arm_loader: Starting ARM with 948MB
/scripts/init-top/rpi_wd: 14: /scripts/init-top/rpi_wd: grep: not found

Debian GNU/Linux 13 testpi ttyAMA0
"""


def test_the_raspberry_pis_firmware_times_itself_from_the_reset(tmp_path):
    """Read as nothing before: the EEPROM's seconds and start4.elf's MESS stamps count from
    the reset, 8.4 s of a Pi 4's boot before its kernel started."""
    log = tmp_path / "rpi4.log"
    log.write_text(RPI4)
    a = analyze(read([str(log)]))
    spans = {s.phases[0]: (s.start, s.duration) for s in a.phases.spans}
    assert spans["firmware"] == (0, 790_000_000) and spans["bootloader"] == (790_000_000, 7_631_056_000)
    stages = {s.name: s.duration for s in a.stages}
    assert stages["EEPROM BOOTSYS"] == 1_950_000_000 and stages["EEPROM BOOTLOADER"] == 430_000_000
    assert stages["start4.elf"] == 5_251_056_000
    assert a.boot.first_mark(Mark.KERNEL_LOAD).line == 17
    # Its stamps go back now and then (2.84, then 2.48): taken as printed, and said so.
    back = [d for d in a.boot.diagnostics if "stamps go back" in d.message]
    assert len(back) == 1 and back[0].line == 10 and "go back once, by up to 0.36 s" in back[0].message


def test_a_pi5s_eeprom_is_placed_by_its_stc(tmp_path):
    """A Pi 5's EEPROM stamps no line, but its BOOTMODE line gives the system timer: the
    BootROM ran 0.82 s, BOOTSYS 3.03 s (a public Yocto console, picocom)."""
    log = tmp_path / "rpi5.log"
    log.write_text("RPi: BOOTSYS release VERSION:4c845bd3 DATE: 2024/02/16 TIME: 15:28:41\n"
                   "BOOTMODE: 0x06 partition 0 build-ts BUILD_TIMESTAMP=1708097321 serial bd7106ae boardrev c04170 "
                   "stc 824325\n"
                   "Initialising SDRAM 'Micron' 16Gb x2 total-size: 32 Gbit 4267\n\n"
                   "RPi: BOOTLOADER release VERSION:4c845bd3 DATE: 2024/02/16 TIME: 15:28:41\n"
                   "BOOTMODE: 0x06 partition 0 build-ts BUILD_TIMESTAMP=1708097321 serial bd7106ae boardrev c04170 "
                   "stc 3851885\n"
                   "Read bcm2712-rpi-5-b.dtb bytes    81203 hnd 0x2\n"
                   "NOTICE:  BL31: v2.6(release):v2.6-239-g2a9ede0bd\n"
                   "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x414fd0b1]\n"
                   "[    0.000000] Linux version 6.6.63-v8-16k (oe-user@oe-host) (aarch64-poky-linux-gcc) #1 SMP\n"
                   "[    2.975000] Run /sbin/init as init process\n")
    a = analyze(read([str(log)]))
    stages = {s.name: (s.start, s.duration) for s in a.stages}
    assert stages["Raspberry Pi BootROM"] == (0, 824_325_000)
    assert stages["EEPROM BOOTSYS"] == (824_325_000, 3_027_560_000)
    assert a.boot.meta["bootloader"] == "Raspberry Pi EEPROM 4c845bd3"


def test_host_stamps_to_the_second_are_read_at_the_end_of_their_second(tmp_path):
    """A public CM4 secure-boot console stamped `[2022-08-15 10:36:02] ` (moreutils' ts): it
    was "nothing can be timed"; to the second, its 13 s of signature checks show."""
    log = tmp_path / "cm4.log"
    log.write_text("[2022-08-15 10:36:02] RPi: BOOTLOADER release VERSION:d8b208d3 DATE: 2022/02/22 TIME: 09:33:50\n"
                   "[2022-08-15 10:36:02] PM_RSTS: 0x00001000\n"
                   "[2022-08-15 10:36:04] Boot mode: SD (01) order f254\n"
                   "[2022-08-15 10:36:15] Starting start4.elf @ 0xfec00200 partition 0\n"
                   "[2022-08-15 10:36:17] U-Boot 2021.01 (Aug 11 2022 - 03:09:52 +0000)\n")
    a = analyze(read([str(log)]))
    assert {s.name: s.duration for s in a.stages}["EEPROM BOOTLOADER"] == 13_000_000_000
    assert any(d.line == 1 and "host stamps to the second" in d.message for d in a.boot.diagnostics)


def test_a_kernel_seen_by_host_stamps_to_the_second_keeps_its_own_time(tmp_path):
    """The kernel's lines on a console stamped to the second: its printk clock was mapped along
    the envelope of their sightings, each at the end of its second, so the kernel's steps fell
    on whole seconds (devtmpfs at 0.85 s was a kernel init of 2 s).  printk, to the
    microsecond, keeps its own speed, under every sighting."""
    log = tmp_path / "ts.log"
    log.write_text("[2022-08-15 10:36:02] U-Boot 2021.01 (Aug 11 2022 - 03:09:52 +0000)\n"
                   "[2022-08-15 10:36:03] Starting kernel ...\n"
                   "[2022-08-15 10:36:03] [    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd083]\n"
                   "[2022-08-15 10:36:04] [    0.850000] devtmpfs: initialized\n"
                   "[2022-08-15 10:36:05] [    1.210000] Run /sbin/init as init process\n")
    a = analyze(read([str(log)]))
    spans = {s.name: (s.start, s.duration) for s in a.phases.spans}
    assert spans["kernel init"] == (1_000_000_000, 850_000_000)  # its banner seen by 1 s (was 1 s to 2 s)
    assert spans["initcalls"][1] == 360_000_000
    assert a.boot.clocks["printk"].own_speed and "at its own speed under every sighting" in render(a, "text")


def test_cbmem_timestamps_are_the_firmwares_steps(tmp_path):
    """`cbmem -t` of a public PC Engines apu2 (coreboot 4.9): refused before; each row ends a
    step from the row before, 2.18 s of it RAM training.  A Chromebook's depthcharge rows
    (ids from coreboot's timestamp_serialized.h) make the payload's jump the bootloader's
    start and depthcharge's 1101 the kernel's handover."""
    log = tmp_path / "cbmem.txt"
    log.write_text("   0:1st timestamp                                     18,886\n"
                   "   1:start of romstage                                 18,958 (71)\n"
                   "   2:before ram initialization                         46,334 (27,376)\n"
                   "   3:after ram initialization                          2,225,788 (2,179,453)\n"
                   "  99:selfboot jump                                     2,514,808 (30)\n")
    a = analyze(read([str(log)]))
    assert a.boot.sources[0].format == "coreboot-timestamps"
    assert [(s.phases[0], s.duration) for s in a.phases.spans] == [("firmware", 2_514_808_000)]
    assert a.stages[0].name == "after ram initialization" and a.stages[0].duration == 2_179_453_000
    chromebook = tmp_path / "cbmem-depthcharge.txt"
    chromebook.write_text(log.read_text() + "1000:depthcharge start                              2,600,104 (85,296)\n"
                                            "1101:jumping to kernel                              3,410,882 (810,778)\n"
                                            "Total Time: 3,410,882\n")
    b = analyze(read([str(chromebook)]))
    assert [(s.phases[0], s.start) for s in b.phases.spans][:2] == [("firmware", 0), ("bootloader", 2_514_808_000)]
    assert b.boot.first_mark(Mark.KERNEL_LOAD).line == 7 and not b.boot.diagnostics


def test_coreboots_console_is_a_console(tmp_path):
    """A public Dasharo console of coreboot 25.06 with its log-level prefixes: refused as no
    boot log; its banner starts the firmware."""
    log = tmp_path / "coreboot.log"
    log.write_text("[NOTE ]  coreboot-25.06-332-gddc10428152e Thu Aug 07 11:04:15 UTC 2025 x86_64 bootblock starting\n"
                   "[DEBUG]  Family_Model: 00b00f21\n"
                   "[EMERG]  Cannot locate primary CBFS\n")
    boot = read([str(log)])
    assert boot.sources[0].format == "console" and boot.first_mark(Mark.FIRMWARE_START).attrs["firmware"] == "coreboot"


def test_a_console_that_ends_in_the_bootloader_names_no_kernel_phase(tmp_path):
    """A public CM4 console that ends in U-Boot (and a Quest 2's XBL log that ends in SBL1)
    named their one span "bootloader + kernel load/decompress + ... + rootfs/init"."""
    log = tmp_path / "uboot-only.log"
    log.write_text(_grabserial([(0.0, "U-Boot 2021.01 (Aug 11 2022 - 03:09:52 +0000)"),
                                (0.5, "DRAM:  7.9 GiB"), (2.0, "Hit any key to stop autoboot:  0"),
                                (2.1, "U-Boot> ")]))
    a = analyze(read([str(log)]))
    assert [s.phases for s in a.phases.spans] == [["bootloader"]]


def test_nvidia_mb1_stamps_its_lines_from_the_reset(tmp_path):
    """A public Jetson AGX Orin console: MB1's `[0000.062] I> ...` lines, seconds since the
    reset, were read as nothing."""
    log = tmp_path / "orin.log"
    log.write_text("[0000.062] I> MB1 (version: 1.4.0.4-t234-54845784-e89ea9bc)\n"
                   "[0000.067] I> t234-A01-1-Silicon (0x12347) Prod\n"
                   "[0001.919] I> Binary MB2 loaded successfully at 0x80000000 (0x69a70)\n"
                   "[0001.968] I> MB1: MSS reconfig completed\n"
                   "I> MB2 (version: 0.0.0.0-t234-54845784-22833a33)\n")
    a = analyze(read([str(log)]))
    spans = {s.phases[0]: (s.start, s.duration) for s in a.phases.spans}
    assert spans["firmware"] == (0, 62_000_000) and spans["bootloader"][0] == 62_000_000
    assert a.boot.first_mark(Mark.BOOTLOADER_START).attrs["bootloader"] == "NVIDIA MB1"


def test_a_jetsons_camera_firmware_is_not_a_kernel(tmp_path):
    """The same public console is a boot loop: it begins with the boot before's tail, and its
    camera firmware (RCE) stamps its lines like printk on the shared console.  Read as a
    kernel's, the console was "kernel init 6.2 s" and every MB1 line after the first camera
    line "lost 4 bytes" (375 warnings); and the next reset's MB1 stamps, back near zero, ended
    the boot at 0.35 s, not at the 1.97 s MB1 had reached."""
    log = tmp_path / "orin-loop.log"
    log.write_text("Jetson UEFI firmware (version 36.4.4-gcid-41062509 built on 2025-06-16T15:25:51+00:00)\n"
                   "[     6.318531] Camera-FW on t234-rce-safe started\n"
                   "TCU early console enabled.\n"
                   "[     6.380337] Camera-FW on t234-rce-safe ready SHA1=e2238c99 (crt 1.360 ms, total boot 63.229 ms)\n"
                   "Rebooting system ...\n"
                   "[0000.062] I> MB1 (version: 1.4.0.4-t234-54845784-e89ea9bc)\n"
                   "[0001.968] I> MB1: MSS reconfig completed\n"
                   "I> Task: Trigger load TS[     2.609271] Camera-FW on t234-rce-safe started\n"
                   "[     2.811175] Camera-FW on t234-rce-safe ready SHA1=e2238c99 (crt 12.427 ms, total boot 215.403 ms)\n"
                   "Rebooting system ...\n"
                   "[0000.344] I> strt_pg_num(66816) num_of_pgs(16) read_buf(0x40050000)\n")
    a = analyze(read([str(log)]))
    assert [(s.name, s.start, s.end) for s in a.phases.spans] == [
        ("firmware", 0, 62_000_000), ("bootloader", 62_000_000, 1_968_000_000)]
    # (the boot before's tail, to its `Rebooting system ...`, is a boot of its own: the only warning)
    assert [d.message for d in a.boot.diagnostics] == [
        "the log holds 2 boots (first lines 1, 6): reading boot 2, the last; choose one with --boot N"]
    assert a.console.loss is None


def test_a_banner_that_lost_bytes_on_the_console_is_still_the_banner(tmp_path):
    """A reference-device boot without printk times on a loaded host (CI): the UART lost the
    "r" of "version" and the "L" went with the line before, so no banner was read and the
    kernel's phases were one span from the handover to init.  Up to two bytes lost from
    "Linux version " before the version and builder, the line is the banner, with a warning."""
    from bootlab.sources.kernel_messages import restore_banner

    tail = "6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0) #1 SMP"
    assert restore_banner("inux vesion " + tail) == "Linux version " + tail
    assert restore_banner("o\x1bcLinuxversion " + tail) == "Linux version " + tail
    assert restore_banner("Linux version " + tail) is None  # whole: not damaged
    assert restore_banner("nux vesion " + tail) is None  # three bytes lost: not said to be it
    assert restore_banner("built by " + tail) is None
    assert restore_banner('  "kernel_banner": "Linux version ' + tail) is None  # quoted whole in another line
    log = tmp_path / "untimed.log"
    log.write_text("Booting from ROM...\n"
                   "Probing EDD (edd=off to disable)... ok\n"
                   "inux vesion " + tail + "\n"
                   "Command line: console=ttyS0,115200 printk.time=0\n"
                   "devtmpfs: initialized\n"
                   "Run /init as init process\n"
                   "BOOTLAB READY\n")
    a = analyze(read([str(log)]))
    assert a.boot.meta["kernel_version"] == "6.1.0-57-amd64" and a.boot.marks(km.BANNER)[0].line == 3
    assert any(d.line == 3 and "lost bytes of the kernel's banner" in d.message for d in a.boot.diagnostics)


_PRELOADER = ["#T#Preloader Start=0", "Pll init start...", "Pll init Done!", "#T#PLL=2", "#T#GPIO=3", "#T#WDT_PRE=0",
              "[PWRAP] init pass, ret=0.", "#T#PWRAP=9", "#T#mem_init=435", "#T#Init Dram buf=0",
              "[PMIC]IsUsbCableIn 1", "[USBD] USB Full Speed", "[TOOL] USB enum timeout!", "#T#USB handshake=684",
              "#T#bldr_handshake=0", "[SBC] img auth ok", "#T#load images=562", "BOOT_TIME: 1695"]


def test_mediateks_preloader_profile_is_its_steps(tmp_path):
    """A public MT6765 console (a phone's preloader and LK): the preloader prints each step's
    milliseconds as it ends, `#T#mem_init=435`, and nothing else bootlab knew, so the console
    was refused as no boot log.  Its start begins the bootloader, each step is a stage of
    the milliseconds it names (durations on a transcript: the lines have no time), and the
    684 ms it waited for a download tool on USB is advised away first."""
    log = tmp_path / "mt6765.log"
    log.write_text("\n".join(_PRELOADER) + "\n")
    boot = read([str(log)])
    assert boot.first_mark(Mark.BOOTLOADER_START).line == 1 and boot.meta["bootloader"] == "MediaTek preloader"
    steps = {ev.name: ev.dur for ev in boot.of_kind(Kind.STAGE)}
    assert steps == {"preloader: PLL": 2_000_000, "preloader: GPIO": 3_000_000, "preloader: PWRAP": 9_000_000,
                     "preloader: mem_init": 435_000_000, "preloader: USB handshake": 684_000_000,
                     "preloader: load images": 562_000_000}
    assert sum(steps.values()) == 1_695_000_000  # its BOOT_TIME
    (finding, *_) = advise(boot, analyze(boot))
    assert finding.rule == "bootloader.mtk-usb-handshake" and finding.saving_ns == 684_000_000
    assert finding.evidence == [f"{log}:14: #T#USB handshake=684: the preloader waited 684ms for a download tool on USB"]


def test_mediateks_preloader_steps_end_at_their_lines_on_a_capture(tmp_path):
    """The same profile captured with host times (grabserial's `[abs delta]`): each step ends
    at its line, back to back before it, and the bootloader starts at the preloader's start."""
    log = tmp_path / "mt6765.grab"
    t = 0.25
    lines = []
    for text in _PRELOADER:
        ms = int(text.rsplit("=", 1)[1]) if text.startswith("#T#") else 0
        t += ms / 1000 + 0.0005
        lines.append(f"[{t:.6f} 0.000500] {text}")
    log.write_text("\n".join(lines) + "\n")
    a = analyze(read([str(log)]))
    steps = {ev.name: (a.boot.at(ev), ev.dur) for ev in a.boot.of_kind(Kind.STAGE)}
    assert steps["preloader: USB handshake"] == (706_000_000, 684_000_000)  # to its line, at 1.390 s
    assert steps["preloader: load images"] == (1_391_500_000, 562_000_000)
    assert [(s.name, s.start) for s in a.phases.spans] == [("bootloader", 250_500_000)]  # its first line


def test_ovmfs_debug_log_before_a_kernel_is_a_console(tmp_path):
    """A public QEMU/KVM guest's console with OVMF's debug log on it (SEC, PEI, DXE: 2,550 lines
    of `Loading driver ...`) before its kernel: refused as no boot log, its kernel unread.
    OVMF's first line starts the firmware, and the kernel is read."""
    log = tmp_path / "ovmf.log"
    log.write_text("SecCoreStartupWithStack(0xFFFCC000, 0x820000)\n"
                   "SEC: Normal boot\n"
                   "DiscoverPeimsAndOrderWithApriori(): Found 0xB PEI FFS files in the 0th FV\n"
                   + "Loading driver at 0x0007ED3E000 EntryPoint=0x0007ED463DF DevicePathDxe.efi\n" * 150
                   + "QemuKernelStubFileRead: file read: \"kernel\", 14995968 bytes\n"
                   "[    0.000000] Linux version 6.14.0-next-20250326 (root@localhost) (gcc 13.3.0) #4 SMP\n"
                   "[    0.153579] Booting paravirtualized kernel on KVM\n"
                   "[    1.027052] devtmpfs: initialized\n")
    boot = read([str(log)])
    assert boot.first_mark(Mark.FIRMWARE_START).attrs["firmware"] == "OVMF"
    assert boot.meta["kernel_version"].startswith("6.14.0")
    assert [s.name for s in analyze(boot).phases.spans] == ["kernel init", "initcalls"]


def test_slof_starts_the_firmware_and_hands_the_kernel_over(tmp_path):
    """A real console of QEMU's pseries (ppc64le under TCG: SLOF, Debian's 6.1.0-54-powerpc64le
    kernel given by -kernel, no root: its panic), `bootlab capture --exec`: SLOF's banner
    (`SLOF` and terminal escapes, then stars) was no firmware bootlab knew, so the 3.6 s of
    firmware and the kernel's prom_init were one phase up to the kernel's first message.  SLOF
    starts the firmware, its `Booting from memory...` hands over to the kernel, and prom_init
    (`Preparing to boot Linux version ...`, the kernel's Open Firmware client) is a step of the
    kernel's load; SLOF's banner again would be a reset (multiboot.LOADER)."""
    capture = Path(__file__).parent / "data" / "real" / "slof-ppc64-panic.capture.gz"
    a = analyze(read([str(capture)]))
    assert a.boot.first_mark(Mark.FIRMWARE_START).attrs["firmware"] == "SLOF"
    assert a.boot.first_mark(Mark.KERNEL_LOAD).line == 35 and a.boot.marks("kernel.setup")[0].line == 37
    assert [(s.name, round(s.end - s.start, -6)) for s in a.phases.spans][:2] == [
        ("firmware + bootloader", 3_630_000_000), ("kernel load/decompress", 726_000_000)]
    assert a.phases.end.mark == "failure"
    looped = (b"SLOF\x1b[0m\x1b[?25l ****************************************\r\n"
              b"Booting from memory...\r\n[    0.000000] Linux version 6.1.0-54-powerpc64le\r\n")
    assert multiboot.resets(looped * 2) == [len(looped)]
