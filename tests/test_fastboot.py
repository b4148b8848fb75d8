"""`fastboot oem dmesg` (sources/fastboot.py): a bootloader's log read from its memory over
USB, in the shape of a public Pixel 4's (Qualcomm SM8150: UEFI's milestones in ms since the
reset, every line after fastboot's `(bootloader) `, longer lines cut into 59-character
replies), which bootlab refused as no boot log."""

from __future__ import annotations

import subprocess
import sys

from bootlab.analysis import analyze
from bootlab.analysis.console_cost import console_cost
from bootlab.sources import read
from bootlab.sources.detect import detect
from bootlab.timeline import NS_PER_MS as MS

CUT = 59  # the Pixel's longest reply


def _oem_dmesg(lines: list[str]) -> str:
    """What the fastboot tool prints: the command, each line cut into replies, OKAY."""
    out = ["user@host: fastboot oem dmesg"]
    for line in lines:
        while len(line) > CUT:
            out.append("(bootloader) " + line[:CUT])
            line = line[CUT:]
        out.append("(bootloader) " + line)
    return "\n".join(out + ["OKAY [  0.170s]", "Finished. Total time: 0.170s", ""])


LONG = "RAM Region 0 : Start 0x0000000080000000  Length 0x000000003BD00000"
LOG = [
    "UEFI Start     [  812]",
    " - 0x09FC01000 [  815] Sec.efi",
    LONG,
    "Interrupt controller init done",
    "Display panel : vendor panel 1080x2340 (1 intf)",
    "Platform Init  [ 1444] BDS",
    "POST Time      [ 1497] OS Loader",
    "ABL version: 0.4-example",
    "Enter reason of bootloader mode: combo key",
    "Fastboot device connected",
]


def test_fastboot_oem_dmesg_is_read_as_the_bootloaders_log(tmp_path):
    path = tmp_path / "oem-dmesg.txt"
    path.write_text(_oem_dmesg(LOG + [LONG[:CUT]]))  # (a reply that happens to be as long as a cut, last)
    assert detect(str(path), path.read_bytes()) == "fastboot"
    a = analyze(read([str(path)]))
    assert not a.boot.diagnostics
    # UEFI's stamps are the bootloader clock from the reset: the boot ran at least until the OS loader.
    assert a.boot.reference == "bootloader"
    assert [(s.name, s.start, s.end) for s in a.phases.spans] == [("firmware + bootloader", 0, 1_497 * MS)]
    # fastboot's cut replies are one line again, with its number; the host's lines are not read.
    log = a.boot.logs[0]
    assert LONG in log.text and LONG[CUT:] not in log.text
    assert log.text[-1] == LONG[:CUT] and log.lineno[log.text.index(LONG)] == 4
    assert not any("OKAY" in t or "fastboot oem" in t for t in log.text)
    # Kept in the bootloader's memory, not printed on a console: no console cost is made up.
    assert console_cost(a.boot, a.phases) is None


def test_fastboot_output_on_the_command_line(tmp_path):
    path = tmp_path / "oem-dmesg.txt"
    path.write_text(_oem_dmesg(LOG))
    out = subprocess.run([sys.executable, "-m", "bootlab", "analyze", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "(fastboot)" in out.stdout and "1.497s (firmware + bootloader)" in out.stdout
    assert "Console output" not in out.stdout


def test_lk2nds_oem_log_is_timed_by_lks_stamps(tmp_path):
    """lk2nd's `fastboot oem log`: LK's own millisecond stamps, from its banner on."""
    path = tmp_path / "oem-log.txt"
    path.write_text("\n".join(["$ fastboot oem log", "(bootloader) [0] welcome to lk", "(bootloader) [10] platform_init()",
                               "(bootloader) [2110] Loading (boot) image (12345678): start",
                               "(bootloader) [2500] fastboot_init()", "OKAY [  0.020s]", ""]))
    a = analyze(read([str(path)]))
    assert a.boot.sources[0].format == "fastboot"
    assert a.phases.spans[-1].name == "bootloader" and a.phases.end.at == 2_500 * MS
