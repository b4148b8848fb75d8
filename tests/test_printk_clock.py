"""printk stamps that are not times since the kernel's start: a 2.6 kernel's jiffies
counted from INITIAL_JIFFIES (issue 15, item 3)."""

from __future__ import annotations

from bootlab.analysis import analyze
from bootlab.render import render
import pytest

from bootlab.sources import kernel_messages, read
from bootlab.timeline import Kind

S = 1_000_000_000
MS = 1_000_000


def _log_times(boot):
    return [t for t in boot.logs[0].t if t is not None]


def test_jiffies_stamps_count_from_the_kernels_start(fixture_path):
    path = fixture_path("dmesg-2.6-jiffies.txt")
    boot = read([path])
    times = _log_times(boot)
    assert times[0] == 0 and times[8] == 0  # before the clock ticked, as [0.000000] is
    assert times[-1] == 13216 * MS
    assert [d.line for d in boot.diagnostics if "INITIAL_JIFFIES" in d.message] == [1]
    assert boot.meta["kernel_version"] == "2.6.12-10-386"
    text = render(analyze(boot), "text")
    assert "min" not in text.split("\n\n")[1]  # no phase lasts 71577min
    # The boot ends at its last milestone (init memory freed), the log's last line at 13.216 s.
    assert "= 1.809s" in text and "the logs go on to 13.216 s" in text


def test_jiffies_stamps_on_a_console(fixture_path, tmp_path):
    """The same kernel's lines on a serial console after the bootloader's."""
    path = tmp_path / "console.txt"
    with open(fixture_path("dmesg-2.6-jiffies.txt")) as fh:
        path.write_text("U-Boot 2009.08 (Jan 01 2010 - 00:00:00)\nStarting kernel ...\n" + fh.read())
    boot = read([str(path)])
    assert boot.sources[0].format == "console"
    assert _log_times(boot)[-1] == 13216 * MS


def test_two_boots_of_a_26_kernel_are_two_boots(fixture_path, tmp_path):
    with open(fixture_path("dmesg-2.6-jiffies.txt")) as fh:
        text = fh.read()
    path = tmp_path / "two.txt"
    path.write_text(text + text.replace("[4294680.512000] eth0", "[4294690.512000] eth0"))
    boot = read([str(path)])
    assert any("holds 2 boots" in d.message for d in boot.diagnostics)
    assert _log_times(boot)[-1] == 23216 * MS
    assert not any("goes back" in d.message for d in boot.diagnostics)


def test_a_long_uptime_is_not_taken_for_jiffies(tmp_path):
    """Only a log whose first stamp is the jiffies clock's start is read so: a log whose
    first line is 49 days into a boot keeps its times."""
    path = tmp_path / "late.txt"
    path.write_text("[4294900.000000] usb 1-1: new high-speed USB device\n"
                    "[4294901.000000] usb 1-1: New USB device found\n")
    boot = read([str(path)])
    assert _log_times(boot) == [4294900 * S, 4294901 * S]
    assert not [e for e in boot.events if e.kind == Kind.INITCALL]


def test_other_hz_and_syslog(tmp_path):
    """HZ=250 starts the jiffies clock at [17179569.184000]; a syslog keeps the kernel's stamps."""
    path = tmp_path / "kern.log"
    path.write_text("Jun  1 10:00:00 host kernel: [17179569.184000] Linux version 2.6.18-6-686 (x@y) #1 SMP\n"
                    "Jun  1 10:00:00 host kernel: [17179569.184000] BIOS-provided physical RAM map:\n"
                    "Jun  1 10:00:02 host kernel: [17179571.436000] Freeing unused kernel memory: 200k freed\n")
    boot = read([str(path)])
    assert boot.sources[0].format == "syslog"
    assert _log_times(boot) == [0, 0, 2252 * MS]


# Rockchip's 3.10 vendor kernels: [    0.000000] until the scheduler's clock starts, then the
# architected counter's time since the SoC's reset (the fixture jumps to 1.645321 s).
JUMP = 1_645_321_000
US = 1_000


def _counter_notes(boot):
    return [d for d in boot.diagnostics if "printk time jumps from 0" in d.message]


def test_a_clock_that_jumps_to_the_counter_after_the_architected_timer_is_not_kernel_init(fixture_path):
    boot = read([fixture_path("dmesg-clock-jumps-to-counter.txt")])
    times = _log_times(boot)
    assert times[:12] == [0] * 12  # the lines before the jump: counted as taking no time
    assert times[12] == 0 and times[18] == 1_658_110 * US - JUMP  # the jump's line, devtmpfs
    [note] = _counter_notes(boot)
    assert note.line == 13  # the line of the jump, naming the timer's line and the jump
    assert "to 1.645321 s" in note.message and "after line 9 ('Architected cp15 timer(s)" in note.message
    a = analyze(boot)
    assert a.phases.boundaries["kernel.start"].at == 0
    kernel_init = a.phases.spans[0]
    assert kernel_init.name == "kernel init" and kernel_init.duration == 1_658_110 * US - JUMP  # 12.8 ms, not 1.658 s
    assert a.phases.total == 3_317_508 * US - JUMP
    initcall = next(e for e in boot.events if e.kind == Kind.INITCALL)
    assert (initcall.t, initcall.dur) == (1_661_202 * US - JUMP, 2607 * US)


@pytest.mark.parametrize("bulk", [False, True])
def test_a_jump_of_seconds_with_no_timer_announced_is_a_counter_too(fixture_path, tmp_path, bulk):
    """A public Tegra 3 tablet's 2.6.36 dmesg stamps its first 52 messages zero, then
    6.003770 s, with no timer announced: 6.4 s of "kernel init" (70% of the boot) were the
    counter's time since reset.  A jump of a second or more is read as the announced one."""
    text = open(fixture_path("dmesg-clock-jumps-to-counter.txt")).read()
    text = "\n".join(line for line in text.splitlines() if "timer(s) running" not in line and "sched_clock:" not in line)
    path = tmp_path / "dmesg.txt"
    path.write_text((text + "\n") * (2 if bulk else 1))
    boot = read([str(path)])
    [note] = _counter_notes(boot)[:1]
    assert "to 1.645321 s here, with no timer announced" in note.message
    assert analyze(boot).phases.spans[0].duration == 1_658_110 * US - JUMP


def test_a_jump_a_boot_console_took_to_print_is_the_kernels_own_time(fixture_path):
    """msm8916's mainline kernel with earlycon at 115200 baud: the clock starts at the timer's
    announcement and goes on from zero, but the kernel waits 11 ms for the UART to print the
    lines stamped zero from there (about 290 bytes, 25 ms at most): not a counter from reset."""
    boot = read([fixture_path("dmesg-clock-early-console.txt")])
    assert not _counter_notes(boot)
    assert boot.first_mark("kernel.devtmpfs").t == 61_304 * US
    a = analyze(boot)
    assert a.phases.spans[0].name == "kernel init" and a.phases.spans[0].duration == 61_304 * US


@pytest.mark.parametrize("msg, counter", [
    ("Architected cp15 timer(s) running at 24.00MHz (phys).", True),
    ("Architected cp15 and mmio timer(s) running at 19.20MHz (virt/phys).", True),
    ("arm_arch_timer: Architected cp15 timer(s) running at 24.00MHz (virt).", True),
    ("arch_timer: cp15 timer(s) running at 62.50MHz (phys).", True),
    ("sched_clock: 56 bits at 24MHz, resolution 41ns, wraps every 4398046511097ns", True),
    ("sched_clock: ARM arch timer >56 bits at 24000kHz, resolution 41ns", True),
    ("sched_clock: 32 bits at 100 Hz, resolution 10000000ns, wraps every 21474836475000000ns", False),
    ("sched_clock: 32 bits at 24MHz, resolution 41ns, wraps every 89478484971ns", False),
    ("clocksource: arch_sys_counter: mask: 0xffffffffffffff max_cycles: 0x588fe9dc0", False),
])
def test_the_lines_announcing_the_architected_counter(msg, counter):
    assert kernel_messages.announces_counter(msg) is counter


def test_a_clock_that_jumps_to_the_counter_on_a_console_with_host_times(fixture_path, tmp_path):
    """The same kernel's lines captured with grabserial after the loader's: kernel init starts
    as its first lines arrive, after the kernel was loaded (read as stamped, its printk time
    zero fell 1.6 s before the lines that followed it: before the loader's handover)."""
    lines = ["[0.000400 0.000400] DDR Version 1.04 20160415",
             "[0.180000 0.179600] U-Boot 2014.10-RK3368-10 (Mar 08 2016 - 10:00:00)",
             "[1.310000 1.130000] Starting kernel ..."]
    host = 1.52
    with open(fixture_path("dmesg-clock-jumps-to-counter.txt")) as fh:
        for line in fh.read().splitlines():
            stamp = float(line[1:13])
            host = host + 0.004 if not stamp else 1.58 + stamp - JUMP / 1e9  # printed as they come
            lines.append(f"[{host:.6f} 0.000000] {line}")
    path = tmp_path / "grab.log"
    path.write_text("\n".join(lines) + "\n")
    boot = read([str(path)])
    assert boot.sources[0].format == "grabserial" and len(_counter_notes(boot)) == 1
    a = analyze(boot)
    assert [s.name for s in a.phases.spans][:3] == ["bootloader", "kernel load/decompress", "kernel init"]
    kernel_init = a.phases.spans[2]
    assert kernel_init.start == 1_524_000_000  # the first kernel line's arrival
    assert kernel_init.duration < 100 * MS
    assert not any("comes before the previous boundary" in note for note in a.phases.notes)


def test_a_timer_announced_on_a_clock_that_goes_on_from_zero_is_no_jump(tmp_path):
    """Mainline arm64: the same line, then stamps microseconds on; and a jump of less than
    10 ms is the kernel's own time."""
    for first in ("0.000008", "0.009999"):
        path = tmp_path / "dmesg.txt"
        path.write_text("[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]\n"
                        "[    0.000000] Linux version 6.1.0 (builder@buildhost) #1 SMP PREEMPT\n"
                        "[    0.000000] arch_timer: cp15 timer(s) running at 24.00MHz (phys).\n"
                        f"[    {first}] sched_clock: 56 bits at 24MHz, resolution 41ns, wraps every 4398046511097ns\n"
                        "[    0.210000] devtmpfs: initialized\n")
        boot = read([str(path)])
        assert not _counter_notes(boot)
        assert _log_times(boot)[3:] == [int(float(first) * S), 210 * MS]


def test_a_jump_from_zero_without_the_timer_is_kept(fixture_path):
    """x86's clock: zero, then 0.259856 s at the delay loop's line, with no timer announced
    before: the kernel's own time, kept as stamped."""
    boot = read([fixture_path("dmesg-plain.txt")])
    assert not _counter_notes(boot)
    assert _log_times(boot)[3] == 259_856 * US
    assert analyze(boot).phases.spans[0].duration == 310 * MS  # kernel init: zero to devtmpfs


_KVM_UNSTABLE_TSC = [
    "[    0.000000] Linux version 6.3.0-rc2-next-20230314 (tuxmake@tuxmake) (x86_64-linux-gnu-gcc (Debian 11.3.0-11) "
    "11.3.0) #1 SMP PREEMPT_DYNAMIC @1678766263",
    "[    0.000000] Command line: console=ttyS0,115200 rootwait root=/dev/sda",
    "[    0.000000] tsc: Detected 2099.962 MHz processor",
    "[    0.001000] ACPI: Core revision 20221020",
    "[    0.001000] APIC: Switch to symmetric I/O mode setup",
    "[    0.001000] ..TIMER: vector=0x30 apic1=0 pin1=2 apic2=-1 pin2=-1",
    "[    0.001000] tsc: Marking TSC unstable due to TSCs unsynchronized",
    "[   51.249939] Calibrating delay loop (skipped) preset value.. 4199.92 BogoMIPS (lpj=2099962)",
    "[   51.250921] pid_max: default: 32768 minimum: 301",
    "[   51.448000] devtmpfs: initialized",
    "[   54.993000] Run /sbin/init as init process",
]


@pytest.mark.parametrize("how", ["console", "dmesg", "bulk"])
def test_a_kvm_guests_jump_from_its_first_ticks_is_its_vms_time(tmp_path, monkeypatch, how):
    """A public LKFT console of an x86 QEMU/KVM guest: stamped by jiffies (`0.001000`) until its
    TSC was found unstable, then by kvm-clock's monotonic time since the VM's creation, 51.25 s
    at `Calibrating delay loop`: kernel init was 51.448 s, 77% of the boot.  A jump of a second
    or more from the first ticks, at one of the messages the kernel prints as its clock starts,
    is read as the unannounced jump from zero is (on a console, a dmesg, and a dmesg read in
    bulk): kernel init 0.199 s, with a note."""
    from bootlab.sources import printk

    path = tmp_path / ("console.log" if how == "console" else "dmesg.txt")
    lines = (["SeaBIOS (version 1.12.0-1)", "Booting from ROM..."] if how == "console" else []) + _KVM_UNSTABLE_TSC
    path.write_text("\n".join(lines) + "\n")
    if how == "bulk":
        monkeypatch.setattr(printk, "BULK_MIN_BYTES", 0)
    boot = read([str(path)])
    (note,) = [d for d in boot.diagnostics if "printk time jumps" in d.message]
    assert note.message.startswith("printk time jumps from 0.001000 to 51.249939 s here, with no timer announced")
    assert note.line == len(lines) - 3
    spans = {s.name: s.duration for s in analyze(boot).phases.spans}
    assert spans["kernel init"] == 199_061_000 and spans["initcalls"] == 3_545 * MS


def test_first_ticks_that_go_on_are_the_kernels_own_time(tmp_path):
    """The same guest with a TSC that stays stable: its first ticks go on to the delay loop's
    line a few milliseconds later, kept as stamped."""
    path = tmp_path / "dmesg.txt"
    path.write_text("\n".join(_KVM_UNSTABLE_TSC[:6] + ["[    0.061000] Calibrating delay loop (skipped) preset value..",
                                                       "[    1.448000] devtmpfs: initialized"]) + "\n")
    boot = read([str(path)])
    assert not [d for d in boot.diagnostics if "printk time jumps" in d.message]
    assert analyze(boot).phases.spans[0].duration == 1_448 * MS


def test_the_first_ticks_printed_again_keep_their_stamps(tmp_path):
    """The KVM guest's log printed again by a typed dmesg, its first ticks (0.001000) among it:
    they keep their stamps, not read less the jump (-51.2 s, a step before the kernel began)."""
    path = tmp_path / "console.log"
    early = ["[    0.002000] calling  early_foo+0x0/0x10 @ 1",
             "[    0.003000] initcall early_foo+0x0/0x10 returned 0 after 1000 usecs"]
    path.write_text("\n".join(["SeaBIOS (version 1.12.0-1)", "Booting from ROM...", *_KVM_UNSTABLE_TSC, "login:",
                               "root@guest:~# dmesg", *_KVM_UNSTABLE_TSC[:4], *early, *_KVM_UNSTABLE_TSC[4:8]]) + "\n")
    boot = read([str(path)])
    assert all(ev.t is None or ev.t >= 0 for ev in boot.events)
    assert {s.name: s.duration for s in analyze(boot).phases.spans}["kernel init"] == 199_061_000
