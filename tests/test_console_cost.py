"""Console cost counts what reached the console, and a capture's lost bytes are found:
on real logs (the corpus, recorded reference-device boots) and fixtures written from the
formats (dmesg -r levels, a screen-only console)."""

from __future__ import annotations

import gzip
import json
import re
from html import escape
from pathlib import Path

import pytest

from bootlab.advice import advise
from bootlab.analysis import Options, analyze
from bootlab.analysis.console_cost import console_rules, line_level
from bootlab.analysis.console_loss import LINE_SHAPES
from bootlab.lab.boots import metrics_of
from bootlab.render import render
from bootlab.sources import read
from bootlab.sources.console import DMESG_DUMP_BEGIN, DMESG_DUMP_END

DATA = Path(__file__).parent / "data"
RPI4 = str(DATA / "corpus" / "rpi4-kernel__run1_dmesg.txt")


def _quiet(a):
    return next((f for f in advise(a.boot, a) if f.rule == "cmdline.quiet"), None)


def test_initcall_debug_lines_the_console_never_printed_are_not_charged():
    """The Raspberry Pi 4 dmesg: 105 KB of its 132 KB are initcall_debug's KERN_DEBUG lines,
    which the default console level (7) does not print."""
    a = analyze(read([RPI4]))
    c = a.console
    assert not c.printed and c.serial is None
    assert c.skipped > 100_000 and c.bytes < 30_000, (c.bytes, c.skipped)
    assert "default console log level (7)" in c.loglevel
    spans = {s.name: s.duration for s in a.phases.spans}
    for name, (_, cost) in c.per_phase.items():
        assert name not in spans or cost <= spans[name], name
    quiet = _quiet(a)
    assert quiet is not None and quiet.saving_ns < 1.5e9  # was 3.36 s, counting the debug lines
    assert c.baud_source.startswith("default") and "--baud" in c.baud_source


def test_the_speed_source_names_baud_option_only_when_given():
    a = analyze(read([RPI4]), Options(baud=9600))
    assert a.console.baud == 9600 and a.console.baud_source == "--baud"


def test_a_screen_only_console_pays_no_serial_time():
    """`console=tty0` and no serial console: nothing is charged, and quiet is not advised
    for serial time."""
    a = analyze(read([str(DATA / "fixtures" / "dmesg-console-tty0.txt")]))
    c = a.console
    assert c.serial is False and c.cost == 0 and c.baud == 0
    assert "no serial console" in c.note
    assert _quiet(a) is None
    assert "no serial time" in render(a, "text")


def test_levels_a_dmesg_r_kept_decide_with_the_command_line():
    """dmesg -r keeps each message's level; loglevel=8 prints KERN_DEBUG too."""
    path = str(DATA / "fixtures" / "dmesg-r-levels.txt")
    a = analyze(read([path]))
    assert a.console.serial is True and a.console.skipped == 0 and a.console.lines == 11
    assert a.console.loglevel == "loglevel=8"


def test_console_rules_follow_the_kernel():
    assert console_rules("console=ttyS0,115200 quiet").loglevel == 4
    assert console_rules("quiet loglevel=8").loglevel == 8  # the last one wins
    assert console_rules("loglevel=3 ignore_loglevel").loglevel == 10
    assert console_rules("console=tty0").serial is False
    assert console_rules("console=tty0 console=ttyAMA0,115200").serial is True
    assert console_rules("root=/dev/sda1").serial is None
    # Vendors' UARTs by any name (a GoPro's ttyUSI, Amlogic's ttyAML, Rockchip's ttyFIQ) are serial.
    assert console_rules("console=ttyUSI0,115200n8 console=/dev/tty1").serial is True
    assert console_rules("console=ttyFIQ0").serial is True and console_rules("console=ttyAML0").serial is True
    # `console=` empty or `null` is ttynull, no console at all (a ChromeOS kernel's).
    assert console_rules("cros_secure console= loglevel=7").serial is False
    assert console_rules("console=null").consoles == ("ttynull",)
    assert console_rules("console=none").serial is False  # names no console there is (an Android tablet's)
    assert console_rules("quiet", ["tty0", "pstore-1", "ram-1"]).serial is False  # RAM consoles, after a crash
    # Without console= the consoles the log shows starting tell: a PC's screen, a board's UART.
    assert console_rules("quiet splash", ["tty0"]).serial is False
    assert console_rules("root=/dev/mmcblk0p2", ["ttyS2"]).serial is True
    assert console_rules("console=ttyS0,115200", ["tty0"]).serial is True  # the command line decides
    assert line_level("<7>[    1.0] x") == 7 and line_level("<14>[    1.0] x") == 6  # facility user
    assert line_level("kern  :warn  : [    1.0] x") == 4 and line_level("6,339,5140900,-;x") == 6
    assert line_level("[    0.1] calling  foo+0x0/0x10 @ 1") == 7


def test_a_capture_that_lost_bytes_says_so():
    """A recorded boot whose console lost characters (a stalled reader): each damaged line
    is a warning naming it, and every output says how many bytes were lost."""
    path = str(DATA / "real" / "generic.capture.gz")
    a = analyze(read([path]))
    loss = a.console.loss
    assert loss.checked > 300 and len(loss.damaged) == 44 and loss.lost_bytes == 97
    lines = {d.line for d in loss.damaged}
    assert 11 in lines  # "debian-kernel@lists.debian.rg": the "o" of ".org" lost
    warnings = [d for d in a.boot.diagnostics if "the console lost" in d.message]
    assert len(warnings) == 44 and all(d.line > 0 for d in warnings)
    assert "the console LOST 97 bytes in 44 of" in render(a, "text")
    doc = json.loads(render(a, "json"))
    assert doc["console"]["loss"] == {"checked_against": "kernel log", "checked_lines": loss.checked,
                                      "damaged_lines": 44, "lost_bytes": 97,
                                      "unchecked_lines": 0, "host_stalled_lines": 0}


def test_a_loss_while_the_host_kept_the_reader_away_is_named_so():
    """A real boot beside four CPU hogs with bootlab's reader and QEMU's main loop left
    ordinary (not SCHED_FIFO): the reader recorded each time it or QEMU's main loop was kept
    from a CPU for 2 ms or more, and each damaged line names the stall it arrived in."""
    a = analyze(read([str(DATA / "real" / "reader-kept-away.capture.gz")]))
    loss = a.console.loss
    assert len(loss.damaged) == 25 and loss.host_stalled == 25
    stalls = [ev.attrs["detail"] for ev in a.boot.events if ev.name == "capture.stalled"]
    assert len(stalls) == 581
    kinds = {re.sub(r"[\d.]+", "N", s) for s in stalls}
    assert kinds == {
        "stalled N ms (bootlab's reader ran N ms, waited N ms for a CPU, host steal N ms since the last report)",
        "stalled N ms (bootlab's reader waited N ms for a CPU in the last N ms, host steal N ms since the last report)",
        "stalled N ms (qemu-system-xN_N's main thread waited N ms for a CPU in the last N ms, host steal N ms since the "
        "last report)"}
    assert all(d.host_stall in stalls for d in loss.damaged)
    warnings = [d.message for d in a.boot.diagnostics if "the console lost" in d.message]
    assert sum("while the host kept the console waiting: stalled" in w for w in warnings) == 25
    assert "25 of them while the host kept the console waiting" in render(a, "text")
    assert json.loads(render(a, "json"))["console"]["loss"]["host_stalled_lines"] == 25


def _without_the_kernel_log(name: str, tmp_path: Path) -> str:
    """A real capture cut where its device began printing the kernel log after ready, as
    written so far by a capture stopped there: a console with nothing to compare with."""
    data = gzip.open(DATA / "real" / name).read()
    cut = data.rindex(b"\n", 0, data.index(DMESG_DUMP_BEGIN.encode())) + 1
    path = tmp_path / name.replace(".gz", "")
    path.write_bytes(data[:cut])
    return str(path)


@pytest.mark.parametrize("name, lines, at_least, stalled", [("generic.capture.gz", 7, 10, 0),
                                                            ("reader-kept-away.capture.gz", 2, 2, 2)])
def test_without_the_kernel_log_lost_bytes_show_in_the_shape_of_lines(tmp_path, name, lines, at_least, stalled):
    """Two real captures that lost bytes (44 and 25 lines against their kernel logs), cut
    before their kernel logs: the lines whose printk stamp broke are found by their shape
    alone, each one a line the kernel log shows damaged, never more bytes than it shows."""
    whole = analyze(read([str(DATA / "real" / name)])).console.loss
    a = analyze(read([_without_the_kernel_log(name, tmp_path)]))
    loss = a.console.loss
    assert loss.against == LINE_SHAPES and loss.checked > 300
    assert len(loss.damaged) == lines and loss.lost_bytes == at_least and loss.host_stalled == stalled
    by_line = {d.line: d.lost for d in whole.damaged}
    assert all(d.lost <= by_line[d.line] for d in loss.damaged)
    warnings = [d for d in a.boot.diagnostics if "the console lost at least" in d.message]
    assert sorted(d.line for d in warnings) == sorted(d.line for d in loss.damaged)
    text = render(a, "text")
    assert f"the console LOST at least {at_least} bytes in {lines} of {loss.checked} kernel lines, by their shape" in text
    assert "which this console does not hold" in text
    assert json.loads(render(a, "json"))["console"]["loss"]["checked_against"] == "line shapes"
    # A run keeps it as a lower bound (a campaign then says "at least"); the whole
    # capture, checked against its kernel log, counts every byte.
    assert metrics_of(a)["console:lost_bytes"] == at_least and metrics_of(a)["console:lost_bytes_by_shape"] == 1
    assert "console:lost_bytes_by_shape" not in metrics_of(analyze(read([str(DATA / "real" / name)])))


def test_without_the_kernel_log_an_intact_capture_shows_no_loss(tmp_path):
    a = analyze(read([_without_the_kernel_log("generic-initcall.capture.gz", tmp_path)]))
    assert a.console.loss.checked > 300 and a.console.loss.damaged == []
    assert f"none of {a.console.loss.checked} kernel lines shows lost bytes by its shape" in render(a, "text")


def test_a_broken_stamp_and_a_lost_newline_are_found_in_a_boards_console():
    """Written from a public MSM8916 log whose console lost the newline (and a byte) where
    the kernel moved it from the early console to the serial driver, with broken stamps
    added; the bootloader's own stamps before the kernel are not a kernel's."""
    path = str(DATA / "fixtures" / "console-damaged-shapes.txt")
    a = analyze(read([path]))
    loss = a.console.loss
    assert (loss.against, loss.checked) == (LINE_SHAPES, 11)
    assert [(d.line, d.lost) for d in loss.damaged] == [(7, 2), (11, 1), (13, 1)]
    assert [d.shape for d in loss.damaged] == ["starts with a broken printk stamp",
                                               "holds a second kernel record (the newline before it lost)",
                                               "starts with a broken printk stamp"]


def test_an_intact_capture_is_checked_line_for_line():
    a = analyze(read([str(DATA / "real" / "generic-initcall.capture.gz")]))
    assert a.console.loss.checked > 300 and not a.console.loss.damaged
    assert "arrived intact" in render(a, "text")


def test_a_banner_split_by_a_stall_and_a_message_inside_the_logs_line_lose_nothing():
    """A real boot beside four CPU hogs (CI's test_no_console_byte_lost_beside_four_cpu_hogs,
    which failed once with it): the host stole 40 ms as the kernel's banner began, so its `[`
    came in a record before the rest, and the console's first kernel line was empty; and a
    kernel message (`tsc: Refined TSC ...`) went out in the middle of the log dmesg printed
    after ready, so one line of that log held two records and an empty line followed.  The
    empty line matched that empty one, 117 records on: only 233 lines were checked, and with
    that mended the glued line was 69 bytes the console had lost.  Every line is checked, and
    none lost anything."""
    a = analyze(read([str(DATA / "real" / "banner-split-by-a-stall.capture.gz")]))
    assert a.console.loss.checked == 344 and a.console.loss.damaged == []


def test_a_kernel_line_the_console_paused_in_is_one_line_and_lost_nothing():
    """A real boot under -icount with the console drained at 115200 baud on the host's clock:
    five kernel lines reached the host in two pieces, seconds apart
    (`[    0.431586] futex hash table entri` ... `es: 256 (order: 2, 16384 bytes, linear)`).
    Each was cut at the pause as if something new had started: the stamp's piece a kernel
    line of its own, the rest an untimed line, reported as the record having lost its first
    15-49 bytes, which the capture holds.  A kernel record reaches the console whole, so its
    pieces are one line; the grabber's own copy of its ready line (line 408, without a
    stamp, beside the kernel's) is no damage either."""
    a = analyze(read([str(DATA / "real" / "icount-camera.capture.gz")]))
    assert a.console.loss.checked > 300 and a.console.loss.damaged == []
    texts = set(a.boot.logs[0].text)
    assert "[    0.431586] futex hash table entries: 256 (order: 2, 16384 bytes, linear)" in texts
    assert "es: 256 (order: 2, 16384 bytes, linear)" not in texts
    assert "arrived intact" in render(a, "text")


def test_a_programs_own_copy_is_no_damage_when_quiet_hides_the_kernels():
    """A quiet boot of the camera device on its own kernel (a real capture): bootlab's markers
    and the grabber's ready line are logged to the kernel and written to the console by
    their programs; `quiet` keeps the kernel's copies off the console, so only the programs'
    own, without stamps, are there.  They were reported as six records each missing its
    15-byte stamp (90 bytes "lost" in every boot of a campaign)."""
    a = analyze(read([str(DATA / "real" / "quiet-own-copies.capture.gz")]))
    assert a.console.loss is not None and a.console.loss.damaged == []
    assert not [d for d in a.boot.diagnostics if "the console lost" in d.message]
    assert "no console line could be checked" in render(a, "text")


def test_a_step_is_charged_the_console_lines_it_printed():
    """The camera demo's boot (a real capture at 115200 baud, before the scheduler's modules
    and rtctl were made silent): its `scheduler` step (rtctl loading rtsched.ko, its plugin
    and Table III) lasted 63.6 ms, and 32.8 ms of it was six lines going out at the
    console's speed, which the step waited for: its start mark, the kernel's two taint
    warnings for an out-of-tree module, the framework's two load messages and rtctl's
    summary.  Steps nest (services holds modules and scheduler): each counts its own."""
    a = analyze(read([str(DATA / "real" / "camera-scheduler-step.capture.gz")]))
    steps = {s.name: s for s in a.steps}
    sched = steps["scheduler"]
    assert a.console.per_step[("scheduler", sched.start)] == (6, 378, 378 * 10 * 10**9 // 115200)
    assert a.console.per_step[("modules", steps["modules"].start)][:2] == (9, 562)
    services = a.console.per_step[("services", steps["services"].start)]
    assert services[0] >= 9 + 6 and services[2] <= steps["services"].duration
    assert "scheduler  at 7.452 s  console 6 lines, 378 bytes: 32.8 ms at 115200 baud" in render(a, "text")
    doc = json.loads(render(a, "json"))
    assert {"step": "scheduler", "start_ns": sched.start, "lines": 6, "bytes": 378,
            "cost_ns": 32812500} in doc["console"]["per_step"]



def test_messages_logged_before_a_serial_console_started_are_charged_when_it_printed_them(fixture_path):
    """Written from public Allwinner H616 and i.MX6 consoles without earlycon: the serial
    console starts in the initcalls and first prints every message logged so far (its
    'console [ttyS0] enabled' comes 0.7-1.4 s after its driver's probe, a 'silent gap').
    Those bytes were charged to kernel init, capped at its 8.59 ms, and the gap was silence;
    they count in the initcalls, where the kernel waited for them."""
    a = analyze(read([fixture_path("console-no-earlycon-replay.txt")]))
    c = a.console
    assert "kernel init" not in c.per_phase and "kernel init" not in c.capped
    nbytes, cost = c.per_phase["initcalls"]
    assert nbytes == 9081 and cost == 9081 * 10 * 1_000_000_000 // 115200
    assert "the 8707 bytes logged before 'console [ttyS0] enabled'" in c.note and ":92," in c.note
    (gap,) = [g for g in a.gaps if g.cause]
    assert gap.end == 956_140_000 and "ttyS0 printing the 8707 bytes logged before it" in gap.cause
    assert json.loads(render(a, "json"))["gaps"][0]["cause"] == gap.cause
    assert f"not silence: {gap.cause}" in render(a, "text")
    html = render(a, "html")
    assert "<th>not silence</th>" in html and escape(gap.cause) in html


def test_a_boot_console_prints_as_messages_are_logged(fixture_path, tmp_path):
    # With earlycon the boot console printed each message as it was logged, and the real
    # console does not print them again: nothing moves.
    earlycon = ("[    0.000000] Machine model: Example H616 Board\n",
                "[    0.000000] Machine model: Example H616 Board\n"
                "[    0.000000] earlycon: uart0 at MMIO32 0x0000000005000000 (options '')\n")
    text = open(fixture_path("console-no-earlycon-replay.txt")).read().replace(
        "rootwait panic=10", "rootwait panic=10 earlycon=uart,mmio32,0x05000000").replace(*earlycon)
    log = tmp_path / "earlycon.txt"
    log.write_text(text)
    c = analyze(read([str(log)])).console
    assert "kernel init" in c.per_phase and not c.note
    # earlycon= on the command line of a log shown from its banner that never announces a
    # boot console registered none (a public Allwinner D1 console: `earlycon=sbi`, no
    # `earlycon:` line, and its whole log came at ttyS0's start, 0.9 s late).
    log.write_text(text.replace(earlycon[1], earlycon[0]))
    assert analyze(read([str(log)])).console.replay_at == 956_140_000



def _replay_variant(fixture_path, tmp_path, *edits):
    text = open(fixture_path("console-no-earlycon-replay.txt")).read()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    log = tmp_path / "variant.txt"
    log.write_text(text)
    return analyze(read([str(log)]))


def test_a_serial_console_after_the_boot_console_went_prints_the_log_again(fixture_path, tmp_path):
    """Written from a public RK3566 dmesg (6.6): `console=uart8250,... console=tty0`, the
    earlycon dropped when the screen started at 2.8 ms, the serial console ttyS2 enabled a
    second later printed the whole log again, and from 6.2 it does so after logging its
    "enabled" line: the gap after that line is the printing.  At the assumed 115200 baud
    the printing cannot fit in that gap: the note says the console must be faster."""
    a = _replay_variant(
        fixture_path, tmp_path,
        ("Linux version 6.1.31", "Linux version 6.6.0"),
        ("console=ttyS0,115200 console=tty1", "console=uart8250,mmio32,0x05000000 console=tty0"),
        ("[    0.000000] Machine model: Example H616 Board\n",
         "[    0.000000] Machine model: Example H616 Board\n[    0.000000] printk: bootconsole [uart8250] enabled\n"),
        ("[    0.050000] example:", "[    0.002800] printk: console [tty0] enabled\n"
                                   "[    0.002800] printk: bootconsole [uart8250] disabled\n[    0.050000] example:"),
        ("[    0.956140] printk: console [ttyS0] enabled\n[    0.960000]",
         "[    0.223700] printk: console [ttyS0] enabled\n[    0.360000]"))
    c = a.console
    assert c.serial is True and c.replay_after
    assert "the silent gap after that line is this printing" in c.note
    (gap,) = [g for g in a.gaps if g.cause]
    assert gap.start == 223_700_000 and gap.end == 360_000_000
    # Printed again: what was logged after the boot console's last line (it printed the
    # lines before as they came).  At 115200 baud that would not fit in the 136 ms after.
    replayed = int(re.search(r"the (\d+) bytes logged before 'console \[ttyS0\] enabled'", c.note).group(1))
    least = -(-replayed * 10 * 1_000_000_000 // 136_300_000)
    assert re.search(rf"logged again 136ms after that line: the console runs at {least} baud or faster", c.note)
    assert c.baud == least and c.baud_source.startswith("at least, as its replay at ")
    # A public RK3368 (3.10, Android) logged again 2.9 ms after its console started: 69
    # Mbaud, faster than any UART.  The kernel did not wait for that console; said so, not
    # that the console runs at 69 Mbaud.
    fast = _replay_variant(
        fixture_path, tmp_path,
        ("Linux version 6.1.31", "Linux version 6.6.0"),
        ("console=ttyS0,115200 console=tty1", "console=uart8250,mmio32,0x05000000 console=tty0"),
        ("[    0.050000] example:", "[    0.002800] printk: console [tty0] enabled\n"
                                   "[    0.002800] printk: bootconsole [uart8250] disabled\n[    0.050000] example:"),
        ("[    0.956140] printk: console [ttyS0] enabled\n[    0.960000]",
         "[    0.223700] printk: console [ttyS0] enabled\n[    0.223701]"))
    assert fast.console.baud > 12_000_000 and "the kernel did not wait for its console" in fast.console.note
    assert fast.console.baud_source.startswith("the kernel did not wait for its replay at ")
    # Up to 6.1 the printing comes before the line (the fixture as written), and a boot
    # console still printing prints each message once: nothing is printed again.
    kept = _replay_variant(fixture_path, tmp_path, ("console=ttyS0,115200", "earlycon console=ttyS0,115200"),
                           ("[    0.000000] Machine model: Example H616 Board\n",
                            "[    0.000000] Machine model: Example H616 Board\n"
                            "[    0.000000] printk: bootconsole [uart0] enabled\n"))
    assert kept.console.replay_at is None
    # A console kept in RAM (pstore, Android's ram_console) is no UART: its start replays nothing.
    ram = _replay_variant(fixture_path, tmp_path, ("printk: console [ttyS0] enabled", "printk: console [pstore-1] enabled"))
    assert ram.console.replay_at is None


def test_a_pc_without_console_on_its_command_line_prints_on_its_screen(fixture_path, tmp_path):
    """Public Ubuntu and ChromeOS dmesgs: no console= (the screen tty0 starts) or an empty
    `console=` (ttynull) was charged seconds of serial time at an assumed 115200 baud."""
    for cmdline, started in (("root=/dev/mmcblk0p2 rootwait", "[    0.002000] printk: console [tty0] enabled\n"),
                             ("console= root=/dev/mmcblk0p2", "")):
        c = _replay_variant(fixture_path, tmp_path,  # as dmesg keeps it: the kernel's lines alone
                            ("U-Boot 2023.07.02 (Jul 11 2023 - 15:20:44 +0000) Allwinner Technology\n\n"
                             "Starting kernel ...\n\n", ""), ("example-board login:\n", ""),
                            ("console=ttyS0,115200 console=tty1 root=/dev/mmcblk0p2", cmdline),
                            ("[    0.956140] printk: console [ttyS0] enabled\n", started)).console
        assert c.serial is False and c.cost == 0 and "no serial console" in c.note


def test_a_gap_with_untimed_lines_in_it_is_not_silence(tmp_path):
    """A public MPFS Icicle console (U-Boot's docs): printk stamps only, so systemd's status
    lines have no time; the 3.4 s between two kernel lines held 16 of them and was called
    silent."""
    log = tmp_path / "console.txt"
    log.write_text("Starting kernel ...\n\n"
                   "[    0.000000] Linux version 5.6.16 (builder@example) #1 SMP\n"
                   "[    0.067000] devtmpfs: initialized\n"
                   "[    1.093000] Run /sbin/init as init process\n"
                   "[    8.215327] systemd-journald[77]: Received client request to flush runtime journal.\n"
                   "         Starting Create Static Device Nodes in /dev...\n"
                   "[  OK  ] Started Create Static Device Nodes in /dev.\n"
                   "\n"
                   "[   11.618575] random: crng init done\n"
                   "[   12.602455] macb 20112000.ethernet eth0: link up\n"
                   "icicle login:\n")
    gaps = analyze(read([str(log)])).gaps
    inside = next(g for g in gaps if g.end == 11_618_575_000)
    assert inside.cause.startswith("2 lines without a time of their own printed in it (")
    assert ":7-8)" in inside.cause and "Starting Create Static Device Nodes" in inside.cause
    assert not next(g for g in gaps if g.end == 8_215_327_000).cause  # nothing printed: silence


def test_gaps_in_a_kernel_log_read_with_a_wall_clock_journal_say_so(tmp_path):
    """A public Ubuntu server's dmesg and `journalctl -b` read together: the journal's
    programs' lines (docker, ...) are not placed, so a 4.2 s "silent gap" of the dmesg may
    hold them; a note says so."""
    dmesg = tmp_path / "dmesg.txt"
    dmesg.write_text("[    0.000000] Linux version 5.3.0-29-generic (buildd@example) #31-Ubuntu SMP\n"
                     "[    0.100000] devtmpfs: initialized\n"
                     "[    2.000000] Run /init as init process\n"
                     "[    9.362594] logitech-hidpp-device 0003:046D:404D.0004: HID++ 4.1 device connected.\n"
                     "[   13.597001] Bridge firewalling registered\n")
    journal = tmp_path / "journal.txt"
    journal.write_text("Jan 28 19:22:13 server kernel: Linux version 5.3.0-29-generic (buildd@example) #31-Ubuntu SMP\n"
                       "Jan 28 19:22:20 server systemd[1]: Starting Docker Application Container Engine...\n"
                       "Jan 28 19:22:24 server dockerd[1021]: time=\"2020-01-28T19:22:24\" level=info msg=\"Loading containers\"\n"
                       "Jan 28 19:22:40 server systemd[1]: Startup finished in 4.5s (kernel) + 20.1s (userspace) = 24.6s.\n")
    a = analyze(read([str(dmesg), str(journal)]))
    assert any(g.end == 13_597_001_000 for g in a.gaps)
    (note,) = [n for n in a.phases.notes if n.startswith(f"the silent gaps are {dmesg}'s: {journal}'s ")]
    assert "may fall in them" in note
    assert not [n for n in analyze(read([str(dmesg)])).phases.notes if "silent gaps" in n]


def _x86_dmesg(cmdline: str, port: str, filler: int = 0) -> str:
    lines = ["[    0.000000] Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) #1 SMP",
             f"[    0.000000] Command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro {cmdline}",
             f"[    0.001000] Kernel command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro {cmdline}"]
    lines += [f"[    0.{2000 + k:06d}] ACPI: filler message {k} to make the log big" for k in range(filler)]
    lines += [f"[    1.200000] {port}", "[    2.000000] Run /sbin/init as init process"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("filler", [0, 12_000])  # the line reader and the bulk reader (400 kB and more)
def test_an_8250_console_given_no_speed_runs_at_9600(tmp_path, filler):
    """serial8250_console_setup starts at 9600 baud unless `console=` gives options: an x86
    `console=ttyS0` costs twelve times what 115200 would.  A device's first `console=`
    decides (a later one with a speed changes nothing); a port of another driver named ttyS
    (Atmel's) keeps the speed its bootloader set, unknown here."""
    pc = "00:02: ttyS0 at I/O 0x3f8 (irq = 4, base_baud = 115200) is a 16550A"
    atmel = "f8020000.serial: ttyS0 at MMIO 0xf8020000 (irq = 30, base_baud = 5125000) is a ATMEL_SERIAL"
    cases = [("console=ttyS0 quiet", pc, 9600), ("console=ttyS0 console=ttyS0,115200n8", pc, 9600),
             ("console=ttyS0,115200n8 console=ttyS0", pc, 115200), ("console=tty0 console=ttyS0", pc, 9600),
             ("console=ttyS0", atmel, 115200), ("console=ttyS1", pc, 115200),
             # a public Ubuntu 20.04 FIPS server's typo: the speed after a space is no option
             ("console=ttyS0, 38400n8 console=tty0", pc, 38400)]
    for k, (cmdline, port, baud) in enumerate(cases):
        log = tmp_path / f"dmesg{k}.txt"
        log.write_text(_x86_dmesg(cmdline, port, filler))
        c = analyze(read([str(log)])).console
        assert c.baud == baud, cmdline
        assert ("default of the 8250 driver: `console=ttyS0` names no speed" in c.baud_source) == (baud == 9600)
        assert ("`console=ttyS0,` names no speed, which the kernel reads as 0 and sets 38400" in c.baud_source) \
            == (baud == 38400)


def _transcript(name: str) -> tuple[list[str], int, int]:
    """A real capture as the plain transcript a user pastes (no host times): its lines, and
    where its device's kernel log after ready begins and ends (its marker lines)."""
    lines = list(read([str(DATA / "real" / name)]).logs[0].text)
    begin = next(i for i, line in enumerate(lines) if line.startswith(DMESG_DUMP_BEGIN))
    return lines, begin, next(i for i, line in enumerate(lines) if line.startswith(DMESG_DUMP_END))


def _per_phase(tmp_path: Path, name: str, lines: list[str]):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    a = analyze(read([str(path)]))
    return a, {phase: cost for phase, cost in a.console.per_phase.items() if phase != "untimed or after the end"}


@pytest.mark.parametrize("how", ["typed", "bare"])
def test_the_kernel_log_printed_again_on_a_console_is_not_charged_at_its_stamps(tmp_path, how):
    """A real boot's console as pasted, with the kernel log printed again after ready: by a
    `dmesg` typed at a shell prompt, or with nothing to say so (its stamps going back to
    zero).  Its 364 records were charged to the phases their stamps fall in, the kernel's
    phases twice over (initcalls' bytes doubled, capped at the phase's length); they were
    printed after ready.  Every phase costs what it does on the console without them, the
    same phases, and a warning says where the log began again."""
    lines, begin, end = _transcript("generic.capture.gz")
    alone, expected = _per_phase(tmp_path, "alone.log", lines[:begin])
    again = lines[begin + 1:end]
    assert len(again) > 300
    # (Printed bare from its banner on, it is a boot of its own to multiboot, unless a dmesg
    # typed just before says so: here its first lines were not captured.)
    pasted = lines[:begin] + (["~ # dmesg", *again, "~ # "] if how == "typed" else again[50:])
    a, charged = _per_phase(tmp_path, f"{how}.log", pasted)
    assert charged == expected
    assert [(s.name, s.duration) for s in a.phases.spans] == [(s.name, s.duration) for s in alone.phases.spans]
    (warning,) = [d for d in a.boot.diagnostics if "printed again" in d.message]
    assert warning.line == begin + (2 if how == "typed" else 1)
    if how == "typed":
        assert f"the dmesg typed at line {begin + 1}" in warning.message
    else:
        assert warning.message.startswith("printk time goes back by ")


def test_a_logging_daemons_copies_of_the_kernel_log_are_not_its_console_output(tmp_path):
    """busybox's syslogd and klogd writing the kernel's records to the console after the
    kernel printed them (a Buildroot board's, `Jan  1 00:00:03 buildroot kern.info kernel:
    [    0.000000] Booting Linux ...`; here on a real boot's transcript): they were charged to
    the kernel's phases at their stamps, with a warning that printk time went back.  Each
    phase now costs what it does without them, `quiet` is advised for the kernel's own
    lines only, and one note counts them; a copy of a record newer than any the kernel
    printed (below its console's loglevel) was printed no earlier than its stamp, which
    still bounds the login prompt after it."""
    lines, begin, end = _transcript("generic.capture.gz")
    started = "Jan  1 00:00:03 buildroot syslog.info syslogd started: BusyBox v1.36.1"
    alone, expected = _per_phase(tmp_path, "alone.log", lines[:begin] + [started])
    prefix = "Jan  1 00:00:03 buildroot kern.info kernel: "
    copies = [prefix + line for line in lines[begin + 1:end] if line.startswith("[")]
    pasted = lines[:begin] + [started, *copies]
    a, charged = _per_phase(tmp_path, "logged.log", pasted)
    assert charged == expected
    assert [(s.name, s.duration) for s in a.phases.spans] == [(s.name, s.duration) for s in alone.phases.spans]
    assert _quiet(a).saving_ns == _quiet(alone).saving_ns
    assert not any("goes back" in d.message for d in a.boot.diagnostics)
    (note,) = [d for d in a.boot.diagnostics if "logging daemon" in d.message]
    assert note.line == begin + 2
    assert note.message.startswith(f"from here {len(copies)} console lines are kernel records a logging daemon "
                                   f"printed again (busybox's syslogd and klogd, or rsyslog: `{prefix}[...]`), "
                                   f"all {len(copies)} of them stamped no later than")
    bounded = tmp_path / "bounded.log"
    bounded.write_text("[    0.000000] Linux version 5.0.0 (x) #1\n"
                       "[    0.500000] Freeing unused kernel memory: 1024K\n"
                       "[    0.510000] Run /sbin/init as init process\n"
                       "Starting logging: OK\n"
                       f"{prefix}[    0.000000] Linux version 5.0.0 (x) #1\n"
                       f"{prefix}[    0.500000] Freeing unused kernel memory: 1024K\n"
                       "Jan  1 00:00:04 buildroot kern.notice kernel: [    4.200491] random: dd: uninitialized urandom read\n"
                       "buildroot login:\n")
    assert analyze(read([str(bounded)])).phases.spans[-1].end == 4_200_491_000


@pytest.mark.parametrize("name", ["pine64__bootlog.txt", "bpi-r4__bootlog.txt"])
@pytest.mark.parametrize("how", ["typed", "logged"])
def test_the_corpus_consoles_printed_again_cost_what_they_did(tmp_path, name, how):
    """Every console of the corpus with its kernel log printed again after it, by a dmesg typed
    at a prompt or as busybox's syslogd copies it: the same phases, each costing what it did."""
    lines = (DATA / "corpus" / name).read_text(errors="replace").splitlines()
    records = [line for line in lines if re.match(r"\[\s*\d+\.\d{6}\] ", line)]
    assert len(records) > 20
    again = (["root@board:~# dmesg", *records, "root@board:~# "] if how == "typed"
             else ["Jan  1 00:00:09 board kern.info kernel: " + line for line in records])
    alone, expected = _per_phase(tmp_path, "alone.log", lines)
    a, charged = _per_phase(tmp_path, "again.log", lines + again)
    assert charged == expected
    assert [(s.name, s.duration) for s in a.phases.spans] == [(s.name, s.duration) for s in alone.phases.spans]


def test_a_record_stamped_out_of_order_is_one_line_of_a_replay(tmp_path):
    """A record stamped far before the one printed before it (a vCPU held between taking its
    stamp and its place in the log) reads as the log printed again: it alone is charged when
    printed, and the kernel's lines after it, stamped past the last one, are its own again."""
    log = tmp_path / "console.log"
    log.write_text("Starting kernel ...\n"
                   "[    0.000000] Linux version 6.1.0 (x) #1 SMP\n"
                   "[    0.500000] smp: Bringing up secondary CPUs ...\n"
                   "[    0.600000] devtmpfs: initialized\n"
                   "[    0.350000] smpboot: CPU 1 is now offline\n"
                   "[    0.700000] clocksource: Switched to clocksource tsc\n"
                   "[    0.800000] Run /init as init process\n")
    boot = read([str(log)])
    assert boot.sources[0].format == "console"
    times = list(boot.logs[0].t)
    assert times[4] is None and times[5:] == [700_000_000, 800_000_000]
    (warning,) = [d for d in boot.diagnostics if "printed again" in d.message]
    assert warning.line == 5 and warning.message.startswith("printk time goes back by 0.250 s here")


def test_a_dmesg_that_prints_nothing_or_quoted_is_no_replay(tmp_path):
    """`dmesg -n 1` typed at a prompt prints nothing, and a `# dmesg` inside a quoted command is
    no prompt's: the kernel's records after them are its own, charged at their stamps."""
    for typed in ("root@board:~# dmesg -n 1; modprobe g_ether; /etc/init.d/S99app start",
                  "+ /bin/sh -c '# dmesg | tail'"):
        log = tmp_path / "console.log"
        log.write_text("U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)\nStarting kernel ...\n"
                       "[    0.000000] Linux version 6.1.0 (a@b) (gcc) #1 SMP\n"
                       "[    1.000000] Run /init as init process\n"
                       f"{typed}\n"
                       "[    5.000000] using random self ethernet address\n"
                       "[    5.100000] usb0: HOST MAC 12:34:56:78:9a:bc\n")
        boot = read([str(log)])
        assert not [d for d in boot.diagnostics if "printed again" in d.message], typed
        assert list(boot.logs[0].t)[-2:] == [5_000_000_000, 5_100_000_000]


def test_a_quiet_kernels_records_a_logging_daemon_prints_are_charged_when_printed(tmp_path):
    """A quiet kernel's records reach the console only as busybox's syslogd copies them, in
    userspace: none is charged to the kernel's phases at its stamp."""
    log = tmp_path / "console.log"
    prefix = "Jan  1 00:00:03 buildroot kern.info kernel: "
    log.write_text("U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)\nStarting kernel ...\nStarting klogd: OK\n"
                   + "".join(f"{prefix}{line}\n" for line in (
                       "[    0.000000] Linux version 6.1.0 (a@b) (gcc) #1 SMP",
                       "[    0.500000] calling  foo_init+0x0/0x10 @ 1",
                       "[    0.600000] initcall foo_init+0x0/0x10 returned 0 after 100000 usecs",
                       "[    1.000000] Run /sbin/init as init process")))
    a = analyze(read([str(log)], fmt="console"))  # (detected, mostly syslog lines: a syslog)
    assert [a.console.per_phase.get(phase, (0, 0))[0] for phase in ("kernel init", "initcalls")] == [0, 0]
    assert a.console.per_phase["untimed or after the end"][0] > 200


def test_a_firmware_console_at_9600_baud_is_read_from_the_silences_it_left(tmp_path):
    """Written from a public Sun Netra 240's dmesg (sparc64, 6.16): OpenBoot's console printed
    each message as it was logged (`bootconsole [earlyprom0]`, at 9600 baud), a burst of
    records logged microseconds apart was printed in the 1.6 s silence after it, the boot
    console went when the screen's console started, and ttyS0, started later, printed the
    whole log again in the 21 s after its line.  At the assumed 115200 baud the console cost
    was 3.2 s and none of it in kernel init (8.3 s, nearly all printing); the memory set-up
    (2.8 s of `mem=` advice) and the initramfs's unpacking (27.4 s) held the printing.  The
    silence after the replay shows 9600 baud, the boot console's lines count where logged
    too, and what the rules time between two messages is less the printing in between."""
    baud, lines, t = 9600, [], 0.0

    def log(text: str, then: float | None = None) -> None:
        nonlocal t
        lines.append(f"[{t:12.6f}] {text}")
        t += (len(lines[-1]) + 1) * 10 / baud if then is None else then

    log("Linux version 6.16.0 (builder@host) (gcc 11.3.0) #1 SMP", 0.0002)
    log("printk: legacy bootconsole [earlyprom0] enabled")
    log("Kernel command line: root=/dev/sda2 ro")
    burst = [f"  node   0: [mem 0x{k << 28:016x}-0x{(k + 1 << 28) - 1:016x}]" for k in range(30)]
    for text in burst:
        log(text, 0.000005)
    t += sum((len(f"[{0:12.6f}] {text}") + 1) * 10 / baud for text in burst)  # printed now, as one
    log("Memory: 2022448K/2095720K available (8391K kernel code, 8021K rwdata)")
    log("smp: Brought up 1 node, 1 CPU")
    log("devtmpfs: initialized")
    log("Trying to unpack rootfs image as initramfs...")
    log("printk: legacy console [tty0] enabled", 0.0)
    log("printk: legacy bootconsole [earlyprom0] disabled")
    log("printk: legacy console [ttyS0] enabled", 0.0)
    replayed = sum(len(line) + 1 for line in lines)
    t += replayed * 10 / baud * 1.02  # the replay, and a little more
    log("Freeing initrd memory: 10872K")
    log("Run /sbin/init as init process")
    path = tmp_path / "netra.dmesg"
    path.write_text("\n".join(lines) + "\n")
    a = analyze(read([str(path)]))
    c = a.console
    assert c.baud == 9600 and c.baud_source.startswith("as its replay at ")
    assert "the console runs at 9600 baud" in c.note and "printed twice on the serial line" in c.note
    kernel_init = a.phases.spans[0]
    assert kernel_init.name == "kernel init" and c.per_phase["kernel init"][0] > 0
    # The burst: 30 lines logged 5 us apart, printed in the silence after the last.
    start = a.boot.clocks["printk"].ref(int(float(lines[3][1:13]) * 1e9))
    end = a.boot.clocks["printk"].ref(int(float(lines[33][1:13]) * 1e9))
    burst_cost = sum(len(line) + 1 for line in lines[3:33]) * 10 * 10**9 // baud
    assert abs(c.printing_between(start, end) - burst_cost) < 2_000_000
    # The memory set-up and the unpacking were printing only (before: `mem=` saved 1.2 s of
    # the burst's printing, and the initramfs's 2.6 s were the replay's).
    findings = {f.rule for f in advise(a.boot, a)}
    assert "cmdline.mem" not in findings and "image.initramfs" not in findings and "cmdline.quiet" in findings


def test_a_transcripts_padding_to_the_screens_width_is_not_console_output(tmp_path):
    """Published consoles copied from a terminal's screen (or reflowed by a mail client) pad
    each line with spaces to the width: a public QEMU console's 320 lines padded to 200
    columns counted 57.8 kB of console output, 30.0 kB without.  The console sent none of
    them; the line's CR and what it printed still count."""
    lines = ["U-Boot 2023.01 (Jan 10 2023 - 10:00:00 +0000)", "Starting kernel ...", "",
             "[    0.000000] Linux version 6.1.0 (builder@host) (gcc 12.2.0) #1 SMP",
             "[    0.000000] Kernel command line: console=ttyS0,115200",
             "[    0.410000] devtmpfs: initialized",
             "[    1.200000] Run /init as init process"]
    plain = tmp_path / "plain.log"
    plain.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    padded = tmp_path / "padded.log"
    padded.write_bytes(("\r\n".join(line.ljust(200) for line in lines) + "\r\n").encode())
    a = analyze(read([str(padded)]))
    assert a.console.printed and a.console.bytes == analyze(read([str(plain)])).console.bytes \
        == sum(len(line) + 2 for line in lines)


def test_a_console_replay_inside_an_initcall_is_not_the_initcalls_own_time(tmp_path):
    """Written from a public STM32F429 console (Cortex-M4, 5.13, initcall_debug): the UART
    driver's initcall registered the serial console, which printed the 21 kB logged so far
    at 115200 baud before it logged `console [ttySTM0] enabled` (up to 6.1): 2.48 s, and the
    advice was to remove the driver.  The printing is the console's (`quiet`); the initcall
    is advised for what is left, and says why."""
    lines = ["U-Boot 2021.04 (Apr 01 2021 - 10:00:00 +0000)", "Starting kernel ...", "",
             "[    0.000000] Linux version 5.13.0 (builder@host) (gcc 10.2.1) #1 PREEMPT",
             "[    0.000000] Kernel command line: console=ttySTM0,115200 initcall_debug",
             "[    0.062500] printk: console [tty0] enabled",
             "[    0.100000] devtmpfs: initialized"]
    lines += [f"[    0.{200000 + k * 100:06d}] example: filler message number {k:04d} from a driver that probed"
              for k in range(300)]
    replayed = sum(len(line) + 1 for line in lines[3:])
    printing = replayed * 10 / 115200
    lines += ["[    2.251031] calling  stm32_usart_init+0x1/0x3c @ 1",
              f"[{2.251031 + 0.4 + printing:12.6f}] printk: console [ttySTM0] enabled",
              f"[{2.251031 + 0.41 + printing:12.6f}] initcall stm32_usart_init+0x1/0x3c returned 0 after "
              f"{int((0.41 + printing) * 1e6)} usecs",
              "[    9.000000] Run /init as init process"]
    path = tmp_path / "stm32.log"
    path.write_text("\n".join(lines) + "\n")
    a = analyze(read([str(path)]))
    (slow,) = [f for f in advise(a.boot, a) if f.rule == "drivers.slow-initcall"]
    assert "stm32_usart_init" in slow.title and abs(slow.saving_ns - 410_000_000) < 20_000_000
    assert any("was the serial console printing" in e for e in slow.evidence)
