"""Logs that hold several boots: one is read (the last, or --boot N), its lines keep
their numbers in the file, and a warning says which."""

from __future__ import annotations

import gzip
import mmap
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bootlab.advice import advise
from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.sources import NotALog, bootlab_capture, firmware, multiboot, read
from bootlab.sources import kernel_messages as km
from bootlab.sources.multiboot import starts
from bootlab.timeline import Kind, Mark

DATA = Path(__file__).parent / "data"
REAL = DATA / "real"


def _console(name: str) -> bytes:
    """The console text of a real reference-device boot (its kernel log printed again
    after ready included: that is not another boot)."""
    return bootlab_capture.console_bytes(gzip.decompress((REAL / f"{name}.capture.gz").read_bytes()))


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _phases(a) -> list[tuple[str, int]]:
    return [(s.name, s.duration) for s in a.phases.spans]


@pytest.mark.parametrize("kind, unpack", [
    ("console", _console),
    ("dmesg", lambda name: gzip.decompress((REAL / f"{name}.dmesg.gz").read_bytes())),
])
def test_two_real_boots_in_one_log_read_one_at_a_time(tmp_path, kind, unpack):
    generic, cloud = unpack("generic"), unpack("cloud")
    both = _write(tmp_path, "both.log", generic + cloud)
    alone = {name: analyze(read([_write(tmp_path, name, data)])) for name, data in
             (("generic", generic), ("cloud", cloud))}
    second = generic.count(b"\n") + 1
    last = analyze(read([both]))
    assert last.boot.meta["kernel_version"] == "6.1.0-56-cloud-amd64"
    assert _phases(last) == _phases(alone["cloud"])
    assert last.phases.end.at == alone["cloud"].phases.end.at
    (warning,) = [d for d in last.boot.diagnostics if "boots" in d.message]
    assert (warning.line, warning.message) == (
        second, f"the log holds 2 boots (first lines 1, {second}): reading boot 2, the last; choose one with --boot N")
    assert last.boot.logs[0].lineno[0] == second and len(last.boot.logs[0]) == len(alone["cloud"].boot.logs[0])
    assert all(ev.line >= second for ev in last.boot.events)
    first = analyze(read([both], which=1))
    assert first.boot.meta["kernel_version"] == "6.1.0-56-amd64" and _phases(first) == _phases(alone["generic"])
    assert analyze(read([both], which=-2)).phases.end.at == first.phases.end.at
    with pytest.raises(NotALog, match="boot 3 asked for, but the log holds 2 boots"):
        read([both], which=3)


def test_the_log_printed_again_later_is_one_boot(tmp_path):
    """The kernel's first message again, but not at time zero (a log printed twice, the
    benchmark's repeated log): one boot."""
    log = b"[    0.000000] Linux version 6.1.0 (x) #1\n[    0.500000] Run /init as init process\n"
    again = log.replace(b"    0.", b"    5.")
    boot = read([_write(tmp_path, "dmesg", log + again)])
    assert not any("boots" in d.message for d in boot.diagnostics) and len(boot.logs[0]) == 4


def test_a_board_booted_twice_splits_at_its_bootloader(tmp_path, corpus_path):
    """A console kept over a reboot of an arm64 board (U-Boot SPL, then "Booting Linux on
    physical CPU" at time zero before the banner): the second boot starts at U-Boot SPL."""
    log = Path(corpus_path("pine64__bootlog.txt")).read_bytes()
    if not log.endswith(b"\n"):
        log += b"\n"
    twice = _write(tmp_path, "twice.log", log + log)
    second = log.count(b"\n") + 1
    boot = read([twice])
    (warning,) = [d for d in boot.diagnostics if "boots" in d.message]
    assert f"first lines 1, {second})" in warning.message
    alone = analyze(read([corpus_path("pine64__bootlog.txt")]))
    assert _phases(analyze(boot)) == _phases(alone)
    assert boot.first_mark(Mark.BOOTLOADER_START).line == second


def test_kern_log_kept_across_reboots(tmp_path):
    """syslog's kern.log: the last boot by default, any other with which=N."""
    lines = []
    for day, ready in (("20", "1.900000"), ("21", "2.400000")):
        lines += [f"Nov {day} 10:00:00 board kernel: [    0.000000] Linux version 6.1.0 (x) #1",
                  f"Nov {day} 10:00:01 board kernel: [    1.500000] Run /init as init process",
                  f"Nov {day} 10:00:01 board kernel: [    {ready}] grabber: BOOTLAB READY",
                  f"Nov {day} 10:05:00 board kernel: [  300.000000] reboot: Restarting system"]
    path = _write(tmp_path, "kern.log", ("\n".join(lines) + "\n").encode())
    assert analyze(read([path])).phases.end.at == 2_400_000_000
    assert analyze(read([path], which=1)).phases.end.at == 1_900_000_000


def test_journalctl_marks_its_boots(tmp_path, fixture_path):
    one = Path(fixture_path("journal.txt")).read_bytes()
    later = one.replace(b"4.000000] board systemd[1]: Startup finished in 1.500s (kernel) + 2.500s",
                        b"3.000000] board systemd[1]: Startup finished in 1.500s (kernel) + 1.500s")
    log = one + b"-- Boot 5d9a0c1e7f3b4a2e9c8d7b6a5f4e3d2c --\n" + later.split(b"\n", 1)[1]
    path = _write(tmp_path, "journal.txt", log)
    assert read([path]).first_mark(Mark.READY).t == 3_000_000_000
    assert read([path], which=1).first_mark(Mark.READY).t == 4_000_000_000


def test_cli_boot_option(tmp_path, capsys):
    both = _write(tmp_path, "both.log", _console("generic") + _console("cloud"))
    assert main(["analyze", "--boot", "1", both]) == 0
    assert "Boot of Linux 6.1.0-56-amd64" in capsys.readouterr().out
    assert main(["analyze", "--boot", "0", both]) == 2
    assert "--boot counts from 1" in capsys.readouterr().err
    assert main(["analyze", "--boot", "7", both]) == 2
    assert "boot 7 asked for, but the log holds 2 boots" in capsys.readouterr().err


def test_grabserial_over_two_power_cycles(tmp_path, fixture_path):
    """grabserial kept running: the second boot starts at its U-Boot SPL line; what comes
    before the first boot's bootloader (an empty line) is not a boot of its own."""
    lines = Path(fixture_path("grabserial-t.log")).read_text().splitlines()
    later = []
    for line in lines:
        host, rest = line[1:].split(" ", 1)
        later.append(f"[{float(host) + 10:.6f} {rest}")
    path = _write(tmp_path, "grab.log", ("\n".join(lines + later) + "\n").encode())
    boot = read([path])
    (warning,) = [d for d in boot.diagnostics if "boots" in d.message]
    assert f"(first lines 1, {len(lines) + 2})" in warning.message  # the SPL line of the second
    a, alone = analyze(boot), analyze(read([fixture_path("grabserial-t.log")]))
    assert _phases(a) == _phases(alone) and a.phases.end.at == alone.phases.end.at + 10_000_000_000
    assert not [d for d in read([fixture_path("grabserial-t.log")]).diagnostics if "boots" in d.message]


_LOGS = {f"{name}.{kind}": data for name in ("generic", "cloud") for kind, data in (
    ("console", _console(name)), ("dmesg", gzip.decompress((REAL / f"{name}.dmesg.gz").read_bytes())))}
_ALONE: dict[str, list] = {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.sampled_from(sorted(_LOGS)), min_size=1, max_size=4), data=st.data())
def test_any_boot_of_real_boots_in_a_row_reads_as_that_boot_alone(tmp_path, picks, data):
    kinds = {pick.split(".")[1] for pick in picks}
    if len(kinds) > 1:
        picks = [pick for pick in picks if pick.endswith(picks[0].split(".")[1])]
    k = data.draw(st.integers(1, len(picks)), label="boot")
    path = _write(tmp_path, "many.log", b"".join(_LOGS[pick] for pick in picks))
    if picks[k - 1] not in _ALONE:
        _ALONE[picks[k - 1]] = _phases(analyze(read([_write(tmp_path, "one.log", _LOGS[picks[k - 1]])])))
    boot = read([path], which=k)
    assert _phases(analyze(boot)) == _ALONE[picks[k - 1]]
    assert any(f"holds {len(picks)} boots" in d.message for d in boot.diagnostics) == (len(picks) > 1)


def _shifted_records(capture: bytes, by_ns: int, power_on: bool) -> bytes:
    """A capture's records (not its header) later by `by_ns`, as if the same capture went
    on through another boot; without its power-on event when the board reset itself."""
    def later(t: bytes) -> bytes:
        return bootlab_capture.format_time(int(t.replace(b".", b"")) + by_ns).encode()

    out = []
    for line in capture.split(b"\n")[1:]:
        if not line:
            continue
        t, rest = line.split(b" ", 1)
        if rest == b"! power-on" and not power_on:
            continue
        rest = re.sub(rb"\\@(-?\d+\.\d{9});", lambda m: b"\\@%s;" % later(m.group(1)), rest)  # pauses in a line
        out.append(later(t) + b" " + rest)
    return b"\n".join(out) + b"\n"


@pytest.mark.parametrize("power_on", [True, False])
def test_a_bootlab_capture_over_two_boots(tmp_path, power_on):
    """`bootlab capture` left running: a second power cycle (its power-on event), or a
    board that reset itself (then the boot starts at its firmware's first line, and the
    time before it is not counted as this boot's)."""
    generic = gzip.decompress((REAL / "generic.capture.gz").read_bytes())
    cloud = gzip.decompress((REAL / "cloud.capture.gz").read_bytes())
    later = 20_000_000_000
    both = _write(tmp_path, "both.capture", generic + _shifted_records(cloud, later, power_on))
    second = generic.count(b"\n") + 1
    boot = read([both])
    (warning,) = [d for d in boot.diagnostics if "boots" in d.message]
    assert f"(first lines 1, {second})" in warning.message
    a = analyze(boot)
    alone = analyze(read([str(REAL / "cloud.capture.gz")]))
    assert a.phases.end.at == alone.phases.end.at + later
    if power_on:
        assert _phases(a) == _phases(alone) and a.phases.boundaries[Mark.POWER_ON].at == later
    else:
        # No power-on of its own: timed from its firmware's first line (SeaBIOS's banner),
        # the time before it unmeasured.
        banner = alone.boot.at(alone.boot.first_mark(Mark.FIRMWARE_START)) + later
        assert Mark.POWER_ON not in a.phases.boundaries and a.phases.spans[0].start == banner
        assert a.phases.boundaries[Mark.FIRMWARE_START].at == banner
        assert _phases(a) == [(_phases(alone)[0][0], alone.phases.spans[0].end + later - banner)] + _phases(alone)[1:]
        assert a.phases.spans[1].start == alone.phases.spans[1].start + later
        assert a.boot.meta["host_zero"] == "an earlier boot's power-on"
    first = analyze(read([both], which=1))
    assert _phases(first) == _phases(analyze(read([str(REAL / "generic.capture.gz")])))


def test_a_long_line_holds_no_banner():
    """A banner's prefix is short (terminal resets, boot-stub output, stamps); "Linux
    version" deep in a long line (a pasted blob, many times over) starts no boot, and is
    not looked for further back than that (a long line would make it slow)."""
    from bootlab.sources import multiboot

    log = b"[    0.000000] Linux version 6.1\n[    0.100000] x" + b" Linux version 6.1" * 10_000 + b"\n"
    assert multiboot.starts(log) == [0]
    first = b"[    0.000000] Linux version 6.1\n[    2.000000] y\n[    3.0] z\n"
    second = b"." * 200 + b"[    0.000000] Linux version 6.1\n"  # boot-stub output before it: still a banner
    assert multiboot.starts(first + second) == [0, len(first)]


def test_many_boots_are_listed_in_short(tmp_path):
    log = b"".join(b"[    0.000000] Linux version 6.1\n[    1.000000] Run /init as init process\n" for _ in range(40))
    (warning,) = read([_write(tmp_path, "many.log", log)]).diagnostics
    assert warning.message.startswith("the log holds 40 boots (first lines 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, "
                                      "23 ... 79): reading boot 40, the last")


def test_a_capture_zero_record_before_its_power_on_is_not_a_boot():
    """Every bootlab capture records the host clock's zero before power-on: one boot."""
    capture = (b'#bootlab-capture 1 {"zero": "power-on"}\n'
               b"0.000000000 ! zero monotonic_ns=1919243618918\n"
               b"0.000000000 ! power-on\n"
               b"1.206092317 | [    0.301879] PCI: Fatal: No config space access function found\\r\n"
               b"2.147446524 | BOOTLAB READY\\r\n")
    assert starts(capture, "bootlab-capture") == [0]


def test_the_log_printed_again_by_a_late_serial_console_is_no_second_boot(tmp_path):
    """A public Kria KV260 console: the earlycon printed the kernel's first lines, went at
    0.016 s, and ttyPS1, registered at 4.9 s, printed the whole log again from its banner:
    read as a second boot, which dropped U-Boot and its 5.4 s load."""
    first = ("[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]\n"
             "[    0.000000] Linux version 5.15.0-1010-xilinx-zynqmp (buildd@example) #10-Ubuntu SMP\n"
             "[    0.000000] earlycon: cdns0 at MMIO 0x00000000ff010000 (options '115200n8')\n"
             "[    0.000000] printk: bootconsole [cdns0] enabled\n"
             "[    0.012369] printk: console [tty1] enabled\n"
             "[    0.016437] printk: bootconsole [cdns0] disabled\n")
    log = _write(tmp_path, "kv260.txt", (
        "U-Boot 2022.01 (Feb 02 2022 - 00:00:00 +0000)\n"
        "74448580 bytes read in 5414 ms (13.1 MiB/s)\n"
        "Starting kernel ...\n\n" + first + first +
        "[    0.100000] devtmpfs: initialized\n"
        "[    4.903434] printk: console [ttyPS1] enabled\n"
        "[    5.435000] Run /init as init process\n").encode())
    boot = read([log])
    assert not [d for d in boot.diagnostics if "boots" in d.message]
    assert [ev.name for ev in boot.events if ev.kind == Kind.STAGE] == ["load 74448580 bytes"]
    # What the late console printed again is what came after the boot console's last line.
    again = len(first) + len("[    0.100000] devtmpfs: initialized\n")
    assert f"the {again} bytes logged before 'console [ttyPS1] enabled'" in analyze(boot).console.note
    # The same kernel booted again (its stamps go on differently) is a boot of its own.
    again = first.replace("0.016437", "0.016440")
    twice = _write(tmp_path, "twice.txt", ("Starting kernel ...\n" + first + "[    3.0] reboot: Restarting system\n"
                                           "U-Boot 2022.01 (Feb 02 2022 - 00:00:00 +0000)\nStarting kernel ...\n"
                                           + again).encode())
    assert [d for d in read([twice]).diagnostics if "boots" in d.message]


def test_a_banner_a_shell_command_printed_is_no_boot(tmp_path):
    """A Yocto qemuarm64 console from a getting-started guide: after the login someone typed
    `cat /proc/version`, and its `Linux version ...` line was read as a second boot, which
    had nothing timed in it."""
    log = _write(tmp_path, "yocto.txt", (
        "[    0.000000] Linux version 5.15.157-yocto-standard (oe-user@oe-host) #1 SMP PREEMPT\n"
        "[    2.447000] Run /sbin/init as init process\n"
        "[    3.827000] random: crng init done\n"
        "qemuarm64 login: root\n"
        "root@qemuarm64:~# cat /proc/version\n"
        "Linux version 5.15.157-yocto-standard (oe-user@oe-host) (aarch64-poky-linux-gcc) #1 SMP PREEMPT\n"
        "root@qemuarm64:~#\n").encode())
    boot = read([log])
    assert not [d for d in boot.diagnostics if "boots" in d.message]
    assert analyze(boot).phases.end.mark == Mark.READY


def test_a_dmesg_typed_through_sudo_is_no_boot(tmp_path):
    """A public Kria KR260 Ubuntu console: after logging in someone typed `dmesg` (refused),
    then `sudo dmesg`; its log from its banner on was read as the last boot, 36 min 57 s to a
    shell prompt typed after it.  It is the boot's log printed again: the boot ends at its
    login prompt, and its records past the console's last (the half hour after it) are
    charged when printed."""
    log = _write(tmp_path, "kr260.txt", (
        "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]\n"
        "[    0.000000] Linux version 5.15.0-1020-xilinx-zynqmp (buildd@bos02-arm64-014) #24-Ubuntu SMP\n"
        "[    5.552000] Run /init as init process\n"
        "[   36.739358] OF: overlay: WARNING: memory leak will occur if overlay removed\n"
        "kria login: ubuntu\n"
        "ubuntu@kria:~$ dmesg\n"
        "dmesg: read kernel buffer failed: Operation not permitted\n"
        "ubuntu@kria:~$ sudo dmesg\n"
        "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]\n"
        "[    0.000000] Linux version 5.15.0-1020-xilinx-zynqmp (buildd@bos02-arm64-014) #24-Ubuntu SMP\n"
        "[    5.552000] Run /init as init process\n"
        "[   36.739358] OF: overlay: WARNING: memory leak will occur if overlay removed\n"
        "[ 2216.957922] audit: type=1400 audit(1686568650.026:208): apparmor=\"DENIED\" operation=\"capable\"\n"
        "ubuntu@kria:~$ shutdown\n").encode())
    boot = read([log])
    assert not [d for d in boot.diagnostics if "boots" in d.message]
    a = analyze(boot)
    assert a.phases.end.mark == Mark.READY and a.phases.end.at == 36_739_358_000
    (note,) = [d for d in boot.diagnostics if "printed again" in d.message]
    assert note.line == 9 and "the dmesg typed at line 8" in note.message
    assert a.console.per_phase["untimed or after the end"][0] > 300  # the 5 records and the prompt after them


def test_a_console_that_begins_with_the_boot_befores_restart_splits_there(tmp_path):
    """A public BeagleBone AI-64 console starts with the last lines of the boot before
    (`reboot: Restarting system`); its kernel is quiet, so no banner splits the log, and
    the old kernel's stamps hid U-Boot's lines: the loader after the restart starts a boot."""
    log = tmp_path / "ai64.log"
    log.write_text("[  461.349258] watchdog: watchdog0: watchdog did not stop!\n"
                   "[  461.819578] reboot: Restarting system\n\n"
                   "U-Boot SPL 2021.01-g3419da0b (Jan 13 2022 - 15:29:57 +0000)\n"
                   "U-Boot 2021.01-g3419da0b (Jan 13 2022 - 15:29:57 +0000)\n"
                   "6694400 bytes read in 1245 ms (5.1 MiB/s)\n"
                   "Starting kernel ...\n\n"
                   "[    0.611800] debugfs: Directory '31010000.pat' with parent 'regmap' already present!\n"
                   "[    7.846033] remoteproc remoteproc12: request_firmware failed: -2\n")
    boot = read([str(log)])
    assert any("the log holds 2 boots (first lines 1, 4)" in d.message for d in boot.diagnostics)
    assert [ev.dur for ev in boot.of_kind(Kind.STAGE)] == [1_245_000_000]


_SPL = "U-Boot SPL 2019.01-00357-gc9632fd11e10-dirty (Feb 06 2019 - 12:35:24 +0530)"


def _imx6_uboot(cause: str, read_ms: int) -> list[str]:
    return [_SPL, "Trying to boot from MMC1", "",
            "U-Boot 2019.01-00357-gc9632fd11e10-dirty (Feb 06 2019 - 12:35:24 +0530)",
            f"Reset cause: {cause}", "Hit any key to stop autoboot:  0",
            f"8932424 bytes read in {read_ms} ms (18.5 MiB/s)", "Starting kernel ...", " "]


def test_a_watchdog_boot_loop_splits_at_each_reset(tmp_path):
    """A public i.MX6 console of a watchdog boot loop: three boots reach `Starting kernel ...`
    and the board resets before the kernel prints anything (`Reset cause: WDOG`), then
    bootcount's altbootcmd boots.  No kernel banner or restart split them: one boot was read
    from the first U-Boot SPL, its bootloader holding all four.  The loader's banner again
    is a reset; U-Boot's `version` command printing it at the prompt is not."""
    lines = _imx6_uboot("POR", 465) + _imx6_uboot("WDOG", 466) + _imx6_uboot("WDOG", 467)
    lines += _imx6_uboot("WDOG", 459)[:-2] + ["=> version", "U-Boot 2019.01-00357-gc9632fd11e10-dirty "
                                                            "(Feb 06 2019 - 12:35:24 +0530)", "=> boot",
                                                            "Starting kernel ...", ""]
    lines += ["[    0.000000] Booting Linux on physical CPU 0x0",
              "[    0.000000] Linux version 5.0.0-rc3 (shyam@debian) (gcc version 6.3.1) #9 SMP",
              "[    3.506235] Run /sbin/init as init process",
              "Jan  1 00:00:03 buildroot kern.info kernel: [    0.000000] Booting Linux on physical CPU 0x0",
              "Jan  1 00:00:03 buildroot kern.notice kernel: [    0.000000] Linux version 5.0.0-rc3 "
              "(shyam@debian) (gcc version 6.3.1) #9 SMP",
              "Jan  1 00:00:04 buildroot kern.notice kernel: [    4.200491] random: dd: uninitialized urandom read",
              "buildroot login:"]
    log = _write(tmp_path, "loop.log", ("\n".join(lines) + "\n").encode())
    boot = read([log])
    (warning,) = [d for d in boot.diagnostics if "the log holds" in d.message]
    assert "the log holds 4 boots (first lines 1, 10, 19, 28)" in warning.message
    assert [ev.dur for ev in boot.of_kind(Kind.STAGE)] == [459_000_000]
    assert analyze(boot).phases.end.mark == Mark.READY
    assert [ev.dur for ev in read([log], which=2).of_kind(Kind.STAGE)] == [466_000_000]


def test_a_boot_a_reset_ended_before_its_userspace_is_a_failure(tmp_path):
    """The same loop read one boot at a time: each of the first three ends at `Starting
    kernel ...` and the board's reset, which read alone was a boot that simply stopped.  It
    fails there, and says where the next boot began; a boot whose init ran before the board
    was reset (a lab power-cycling it) did not fail."""
    def stamped(lines, t0):
        return [f"[{t0 + k * 0.1:.6f} 0.100000] {line}" for k, line in enumerate(lines)]

    lines = stamped(_imx6_uboot("POR", 465), 0) + stamped(_imx6_uboot("WDOG", 466), 5)
    lines += stamped(_imx6_uboot("WDOG", 459) + ["[    0.000000] Booting Linux on physical CPU 0x0",
                                                 "[    3.506235] Run /sbin/init as init process", "buildroot login:"],
                     10)
    lines += stamped(_imx6_uboot("POR", 460), 20)
    log = _write(tmp_path, "loop.log", ("\n".join(lines) + "\n").encode())
    first = read([log], which=1)
    a = analyze(first)
    assert a.phases.end.mark == "failure" and a.phases.end.at == 700_000_000  # no earlier than its last timed line
    assert a.phases.end.evidence.endswith("loop.log:9 (Reset: its next boot began at line 10: U-Boot SPL "
                                          "2019.01-00357-gc9632fd11e10-dirty (Feb 06 2019 - 12:35:24 +0530))")
    assert advise(first, a)[0].rule == "boot.reset"
    third = analyze(read([log], which=3))
    assert third.phases.end.mark != "failure" and not third.boot.marks(multiboot.RESET)
    assert not read([log]).marks(multiboot.RESET)  # the last boot: nothing after it


def test_a_kernel_that_restarts_the_board_before_userspace_failed_the_boot(tmp_path):
    """A real console (the reference device's Debian kernel under QEMU, `bootlab capture --exec`,
    Ctrl-Alt-Del sent from QEMU's monitor as the keyboard's driver announced itself): the
    kernel restarted the board in its initcalls (`reboot: Restarting system`), then the next
    boot reached ready.  The first boot was split off and ended at the restart as a boot that
    simply stopped; it fails there.  A boot whose userspace ran before a restart did not fail,
    nor one whose console shows none of the kernel's info-level messages (`quiet`: whether
    init ran is not known there)."""
    capture = str(REAL / "kernel-restart-before-userspace.capture.gz")
    first = read([capture], which=1)
    a = analyze(first)
    assert a.phases.end.mark == "failure"
    assert a.phases.end.evidence.endswith("kernel-restart-before-userspace.capture.gz:320 (Restart: reboot: "
                                          "Restarting system)")
    assert advise(first, a)[0].rule == "boot.kernel-restart"
    last = analyze(read([capture]))
    assert last.phases.end.mark == Mark.READY and last.boot.marks(km.RESTART)  # its power-off after ready

    kernel = ["[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14)",
              "[    0.311000] smp: Brought up 1 node, 1 CPU", "[    0.320000] devtmpfs: initialized"]
    restart = ["[    1.273594] reboot: Restarting system"]
    ran = kernel + ["[    1.100000] Run /init as init process"] + restart
    a = analyze(read([_write(tmp_path, "ran.log", ("\n".join(ran) + "\n").encode())]))
    assert a.phases.end.mark != "failure"
    quiet = [kernel[0], "[    0.900000] random: crng init done"] + restart
    a = analyze(read([_write(tmp_path, "quiet.log", ("\n".join(quiet) + "\n").encode())]))
    assert a.phases.end.mark != "failure"
    old = kernel + ["[    1.273594] Restarting system."]  # before 3.15, without `reboot: `
    a = analyze(read([_write(tmp_path, "old.log", ("\n".join(old) + "\n").encode())]))
    assert a.phases.end.mark == "failure" and a.phases.end.at - a.phases.spans[0].start == 1_273_594_000


def test_the_kernel_log_klogd_prints_again_is_no_boot(tmp_path):
    """The same console's busybox klogd and syslogd print the whole kernel log again on the
    console after init starts, syslog-prefixed from time zero: read as the last boot, the
    boot was 4.2 s of one span with nothing in it.  A kern.log's boots, all prefixed, still
    split (test_kern_log_kept_across_reboots)."""
    bare = ["[    0.000000] Linux version 5.0.0-rc3 (shyam@debian) (gcc version 6.3.1) #9 SMP",
            "[    0.021100] devtmpfs: initialized", "[    3.506235] Run /sbin/init as init process"]
    logged = ["Jan  1 00:00:03 buildroot kern.notice kernel: [    0.000000] Linux version 5.0.0-rc3 "
              "(shyam@debian) (gcc version 6.3.1) #9 SMP",
              "Jan  1 00:00:04 buildroot kern.notice kernel: [    4.200491] random: dd: uninitialized urandom read",
              "buildroot login:"]
    boot = read([_write(tmp_path, "console.log", ("\n".join(bare + logged) + "\n").encode())])
    assert not [d for d in boot.diagnostics if "the log holds" in d.message]
    assert [s.name for s in analyze(boot).phases.spans] == ["kernel init", "initcalls", "rootfs/init"]


def test_a_jetsons_boot_loop_splits_at_each_mb1(tmp_path):
    """A public Jetson AGX Orin console loops through MB1, UEFI's ASSERT and `Rebooting system
    ...`, never reaching a kernel, and begins with the boot before's tail: each MB1 banner after
    a reboot starts a boot; the last is read."""
    mb1 = "[0000.062] I> MB1 (version: 1.4.0.4-t234-54845784-e89ea9bc)"
    loop = [mb1, "[0000.067] I> t234-A01-1-Silicon (0x12347) Prod", "[0001.968] I> MB1: MSS reconfig completed",
            "ASSERT [XhciDxe] /dvs/git/dirty/edk2/MdeModulePkg/Bus/Pci/XhciDxe/Xhci.c(1805): !EFI_ERROR (Status)",
            "Rebooting system ..."]
    lines = ["Jetson UEFI firmware (version 36.4.4-gcid-41062509 built on 2025-06-16T15:25:51+00:00)",
             "Rebooting system ..."] + loop + loop + loop[:3]
    boot = read([_write(tmp_path, "orin.log", ("\n".join(lines) + "\n").encode())])
    (warning,) = [d for d in boot.diagnostics if "the log holds" in d.message]
    assert "the log holds 4 boots (first lines 1, 3, 8, 13)" in warning.message
    a = analyze(boot)
    assert [(s.name, s.start, s.end) for s in a.phases.spans] == [
        ("firmware", 0, 62_000_000), ("bootloader", 62_000_000, 1_968_000_000)]


def test_a_firmware_assertion_before_any_kernel_fails_the_boot(tmp_path):
    """The Jetson's loop read one boot at a time: UEFI's `ASSERT [XhciDxe] ...` before each
    reset was no failure (a boot read alone that the next MB1 ended failed as a reset, the
    assertion unnamed).  A boot whose firmware failed an assertion and started no kernel
    fails there, at the firmware's last time, with the assertion as the reason and advice to
    fix it first; an assertion a build goes on past, a kernel booting after it, is none."""
    mb1 = "[0000.062] I> MB1 (version: 1.4.0.4-t234-54845784-e89ea9bc)"
    asserted = "ASSERT [XhciDxe] /dvs/git/dirty/edk2/MdeModulePkg/Bus/Pci/XhciDxe/Xhci.c(1805): !EFI_ERROR (Status)"
    loop = [mb1, "[0001.968] I> MB1: MSS reconfig completed", asserted, "Rebooting system ..."]
    log = _write(tmp_path, "orin.log", ("\n".join(loop + loop[:2]) + "\n").encode())
    boot = read([log], which=1)
    a = analyze(boot)
    assert a.phases.end.mark == "failure" and a.phases.end.at == 1_968_000_000
    assert a.phases.end.evidence == f"{log}:3 (Firmware assertion: {asserted})"
    (finding, *_) = advise(boot, a)
    assert finding.rule == "boot.firmware-assert" and "in its XhciDxe driver" in finding.how
    assert analyze(read([log])).phases.end.mark != "failure"  # the last boot: no assertion
    went_on = [mb1, asserted, "EFI stub: Booting Linux Kernel...",
               "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd421]",
               "[    0.812000] Run /init as init process"]
    a = analyze(read([_write(tmp_path, "on.log", ("\n".join(went_on) + "\n").encode())]))
    assert a.phases.end.mark != "failure" and not a.boot.marks(firmware.ASSERTED)


def test_coreboots_romstage_again_is_a_reset_and_seabios_twice_is_not(tmp_path):
    """A public MSI MS-7721 (AMD) console: coreboot 4.4's romstage starts three times (the
    board reset twice on its way), then its ramstage loads SeaBIOS, which says its version
    twice, two lines apart.  coreboot's console was refused as no boot log, and read as one
    it was split at SeaBIOS's second banner, the firmware's 460 lines before it a boot of their
    own.  The romstage's banner is the loader that began the first boot: the boots begin at
    each of its three; SeaBIOS saying its banner again is no reset."""
    romstage = ("coreboot-4.4-588ccaa9a7d94da4f5a5b3579eb9e3d06c9f4a51 Wed Jun 22 23:12:30 UTC 2016 romstage "
                "starting...")
    reset = [romstage, "BSP Family_Model: 00610f31", "cpu_init_detectedx = 00000000", "Fch OEM config in INIT RESET Done",
             ""]
    seabios = "SeaBIOS (version rel-1.9.1-0-gb3ef39f)"
    build = "BUILD: gcc: (coreboot toolchain v1.38 April 3rd, 2016) 5.2.0 binutils: (GNU Binutils) 2.25"
    lines = reset + reset + [romstage, "CBFS: Locating 'fallback/ramstage'",
                             "coreboot-4.4-588ccaa9a7d94da4f5a5b3579eb9e3d06c9f4a51 Wed Jun 22 23:12:30 UTC 2016 "
                             "ramstage starting...", "Jumping to boot code at 000ff06e(bffd5000)", seabios, build,
                             seabios, build, "Found coreboot cbmem console @ bffde000", "Booting from Hard Disk..."]
    log = _write(tmp_path, "ms7721.log", ("\n".join(lines) + "\n").encode())
    boot = read([log])
    (warning,) = [d for d in boot.diagnostics if "the log holds" in d.message]
    assert "the log holds 3 boots (first lines 1, 6, 11)" in warning.message
    with open(log, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:  # (a big file's way)
        assert multiboot.starts(mapped, "console") == multiboot.starts(Path(log).read_bytes(), "console")
    assert [ev.line for ev in boot.marks(Mark.FIRMWARE_START)] == [11, 15, 17]  # coreboot, SeaBIOS's two
    assert boot.first_mark(Mark.FIRMWARE_START).attrs["firmware"] == "coreboot"


def test_a_loader_reset_after_three_lines_is_a_reset(tmp_path):
    """A U-Boot SPL that resets right after `Trying to boot from MMC1`, three lines a round: each
    round is a boot (only SeaBIOS saying its version twice, two lines apart, is no reset)."""
    spl = ["U-Boot SPL 2023.01 (Jan 01 2023 - 00:00:00 +0000)", "DRAM: 1 GiB", "Trying to boot from MMC1"]
    lines = spl * 3 + ["U-Boot 2023.01 (Jan 01 2023 - 00:00:00 +0000)", "Starting kernel ...",
                       "[    0.000000] Linux version 6.1.0 (a@b) (gcc) #1 SMP", "[    1.000000] Run /init as init process"]
    boot = read([_write(tmp_path, "spl.log", ("\n".join(lines) + "\n").encode())])
    assert any("the log holds 3 boots (first lines 1, 4, 7)" in d.message for d in boot.diagnostics)
