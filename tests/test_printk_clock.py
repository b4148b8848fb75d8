"""printk stamps that are not times since the kernel's start: a 2.6 kernel's jiffies
counted from INITIAL_JIFFIES (issue 15, item 3)."""

from __future__ import annotations

from bootlab.analysis import analyze
from bootlab.render import render
from bootlab.sources import read
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
