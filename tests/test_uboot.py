"""U-Boot: bootstage reports of every shape, and a console that holds one (issue 15, items 1-2)."""

from __future__ import annotations

import glob
import gzip
import re
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.sources import NotALog, detect, read
from bootlab.timeline import Kind, Mark

US = 1_000
MS = 1_000_000


def _stages(boot):
    return {ev.name: ev for ev in boot.events if ev.kind == Kind.STAGE and ev.track == "bootstage"}


def test_bootstage_rows_without_a_name_are_read(fixture_path):
    path = fixture_path("uboot-bootstage-unnamed.txt")
    boot = read([path])
    stages = _stages(boot)
    # Bare rows are named by their line; U-Boot's own ids keep their names.
    assert stages["unnamed stage (line 4)"].t + stages["unnamed stage (line 4)"].dur == 31207 * US
    assert stages["user_14"].dur == 27783 * US
    assert stages["id=17"].t == 58990 * US
    # The garbled row is a warning naming its line; the rows after it are still read.
    assert [d.line for d in boot.diagnostics if "unreadable bootstage row" in d.message] == [7]
    assert stages["start_kernel"].t == 402118 * US
    assert boot.at(boot.first_mark(Mark.KERNEL_LOAD)) == 431006 * US
    assert boot.meta["bootstage_accumulated"] == {"user_15": 6742 * US, "dm_r": 19355 * US}
    assert len(stages) == 7


def test_bootstage_report_without_records_warns_on_a_real_line(tmp_path):
    path = tmp_path / "report.txt"
    path.write_text("Timer summary in microseconds (0 records):\n       Mark    Elapsed  Stage\n\n")
    boot = read([str(path)])
    (warning,) = [d for d in boot.diagnostics if "no bootstage records" in d.message]
    assert warning.line >= 1


def test_console_with_bootstage_report_reads_both(fixture_path):
    path = fixture_path("uboot-console-bootstage.txt")
    with open(path, "rb") as fh:
        assert detect.detect(path, fh.read()) == "console"
    boot = read([path])
    assert boot.meta["bootloader"] == "U-Boot 2023.04"
    assert boot.meta["bootdelay"] == 2
    loads = [ev for ev in boot.events if ev.kind == Kind.STAGE and ev.name.startswith("load ")]
    assert [ev.dur for ev in loads] == [963 * MS, 9 * MS]
    assert any(ev.line == 43 for ev in boot.marks(Mark.KERNEL_LOAD))  # "Starting kernel ..."
    stages = _stages(boot)
    assert stages["bootm_start"].dur == 3293684 * US
    assert boot.meta["bootstage_accumulated"]["dm_r"] == 11870 * US
    a = analyze(boot)
    assert a.phases.spans


@pytest.mark.parametrize("path", sorted(glob.glob("tests/data/fixtures/uboot-*")))
def test_no_evidence_names_line_zero(path):
    try:
        boot = read([path])
    except NotALog:
        return
    assert not [ev for ev in boot.events if ev.file and ev.line < 1]


def test_capture_that_begins_with_spl_keeps_it(fixture_path):
    """An i.MX grabserial capture: line noise (0xff 0xfe, the UART settling at power-on)
    before the SPL banner on the first line (issue 15, item 11)."""
    boot = read([fixture_path("grabserial-imx-spl.log")])
    (spl,) = [ev for ev in boot.marks(Mark.BOOTLOADER_START) if (ev.attrs or {}).get("stage") == "spl"]
    assert spl.line == 1 and spl.t == 0
    a = analyze(boot)
    first = a.phases.spans[0]
    assert first.start == 0 and first.start_evidence.endswith(":1 (bootloader banner)")
    assert boot.meta["bootloader"].startswith("U-Boot 2018.03")


def test_bootstage_report_in_a_capture_is_on_the_capture_clock(fixture_path):
    """The report printed at start_kernel puts the bootloader's timer on the host clock:
    its stages end before the kernel, not after the capture's last line."""
    boot = read([fixture_path("grabserial-imx-bootstage.log")])
    stages = _stages(boot)
    assert boot.clocks["bootloader"].method == "anchors"
    heading = 1500 * MS  # host time of the report's heading line
    assert boot.at_end(stages["start_kernel"]) == heading
    assert boot.at(stages["reset"]) == heading - 1495 * MS
    a = analyze(boot)
    assert a.phases.total == 2410220 * US  # the last line, as without the report


REAL = Path(__file__).resolve().parent / "data" / "real"


def test_a_silent_uboots_stages_are_read_from_the_device_tree():
    """A real capture of the ARM board with a silent U-Boot built with BOOTSTAGE_FDT: nothing
    of U-Boot on the console, its records printed by the init after ready from
    /sys/firmware/devicetree/base/bootstage.  The stages are read, ordered by their marks,
    and placed before the kernel (start_kernel taken as the kernel's time zero)."""
    boot = read([str(REAL / "uboot-arm64-silent-bootstage-fdt.capture.gz")])
    stages = {ev.name: ev for ev in boot.events if ev.kind == Kind.STAGE}
    assert {"board_init_r", "tftp_start", "tftp_done", "bootm_start", "start_kernel"} <= set(stages)
    # Each stage runs from the mark before it to its own (its cell, in µs): the first from reset.
    line = gzip.decompress((REAL / "uboot-arm64-silent-bootstage-fdt.capture.gz").read_bytes()).split(b"\n")[
        stages["board_init_r"].line - 1]
    assert stages["board_init_r"].t == 0 and stages["board_init_r"].dur == int(line.split()[5], 16) * US
    assert stages["tftp_start"].t + stages["tftp_start"].dur < stages["tftp_done"].t
    assert set(boot.meta["bootstage_accumulated"]) == {"dm_r", "dm_f"}
    assert "start_kernel taken as the kernel's time zero" in boot.clocks["bootloader"].evidence
    a = analyze(boot)
    assert [s.name for s in a.phases.spans][:3] == ["firmware", "bootloader", "kernel load/decompress"]
    assert a.phases.boundaries["bootloader.start"].evidence.endswith("(bootstage reset (device tree))")
    assert boot.at_end(stages["start_kernel"]) == a.phases.boundaries["kernel.start"].at


def test_the_device_trees_stages_do_not_double_a_printed_report():
    """The same board with U-Boot's report on the console too: the report is read (it is
    on the host's clock) and the device tree's copy of the same records is not added."""
    boot = read([str(REAL / "uboot-arm64-bootstage-both.capture.gz")])
    names = [ev.name for ev in boot.events if ev.kind == Kind.STAGE and ev.name == "start_kernel"]
    assert names == ["start_kernel"]
    assert "bootstage report printed at start_kernel" in boot.clocks["bootloader"].evidence


def test_a_read_without_a_file_name_is_named_by_its_size(fixture_path):
    # A PetaLinux boot script's `fatload` prints only "4554068 bytes read in 266 ms" (no
    # `reading FILE`, no `Retrieving file:`): the step was called "load read".
    boot = read([fixture_path("console-uboot-unnamed-load.txt")])
    loads = [ev for ev in boot.events if ev.kind == Kind.STAGE and ev.track == "bootloader"]
    assert [(ev.name, ev.dur) for ev in loads] == [("load 4554068 bytes", 266 * MS)]


def test_rockchip_spl_total_is_read_with_its_unpadded_fraction(fixture_path, tmp_path):
    # Rockchip's vendor SPL prints, as it jumps to TF-A, "Total: 86.5/312.45 ms": the time it
    # ran since its start tick, then since the SoC's timer started (near power-on), each
    # printed as us / 1000 "." us % 1000 without zero padding: 86.005 and 312.045 ms.  The
    # time before it is the BootROM's and the DDR blob's.  Nothing after it (TF-A, U-Boot)
    # is timed, so on a console without host times neither is placed on the timeline.
    boot = read([fixture_path("console-rockchip-spl-total.txt")])
    stages = {ev.name: ev for ev in boot.events if ev.kind == Kind.STAGE and ev.track == "bootloader"}
    assert stages["U-Boot SPL"].dur == 86_005 * US
    assert stages["BootROM and DDR init (before the SPL)"].dur == (312_045 - 86_005) * US
    assert all(ev.t is None for ev in stages.values())
    # The older SPL (2017.09 on an RK3566 handheld) prints the SPL's time alone, counted from
    # its own start: "249.82" is 249.082 ms, and nothing is said of the time before it.
    old = tmp_path / "rk3566.txt"
    old.write_text("U-Boot SPL 2017.09-ga1f6fc00a0-210413 #ldq (Apr 13 2021 - 11:35:00)\n"
                   "Jumping to U-Boot(0x00a00000) via ARM Trusted Firmware(0x00040000)\n"
                   "Total: 249.82 ms\n\nNOTICE:  BL31: v2.3():v2.3-594-g7f859117f:cl\n")
    boot = read([str(old)])
    stages = [(ev.name, ev.dur) for ev in boot.events if ev.kind == Kind.STAGE and ev.track == "bootloader"]
    assert stages == [("U-Boot SPL", 249_082 * US)]
    # A "Total:" printed after U-Boot proper's banner is not the SPL's.
    later = tmp_path / "later.txt"
    later.write_text("U-Boot SPL 2017.09\nTotal: 80.1/300.2 ms\n\nU-Boot 2017.09-g0 (Jan 01 2022)\nTotal: 12.5 ms\n")
    boot = read([str(later)])
    assert [ev.dur for ev in boot.events if ev.kind == Kind.STAGE and ev.name == "U-Boot SPL"] == [80_001 * US]


@pytest.mark.parametrize("prompt, delay", [("Autoboot in 3 seconds", 3),
                                           ("Press SPACE to abort autoboot in 5 seconds", 5),
                                           ("Hit any key to stop autoboot:  1 ", 1)])
def test_every_autoboot_prompt_gives_the_bootdelay(tmp_path, prompt, delay):
    log = tmp_path / "console.txt"
    log.write_text(f"U-Boot 2023.04 (Apr 01 2023 - 00:00:00 +0000)\n\nDRAM:  1 GiB\n{prompt}\nStarting kernel ...\n")
    assert read([str(log)]).meta["bootdelay"] == delay


def test_each_phases_end_phase_is_a_stage_of_its_own(tmp_path):
    """U-Boot's Chromebook Coral docs: TPL, SPL and U-Boot proper each record "end phase";
    the two rows were one stage (the longest), so TPL's 81.8 ms were nowhere, and TPL's
    banner started no bootloader stage."""
    log = tmp_path / "coral.txt"
    log.write_text("U-Boot TPL 2021.04-rc1-00128-g344eefcdfec-dirty (Feb 11 2021 - 20:07:12 -0700)\n"
                   "U-Boot SPL 2021.04-rc1-00128-g344eefcdfec-dirty (Feb 11 2021 - 20:07:12 -0700)\n"
                   "U-Boot 2021.04-rc1-00128-g344eefcdfec-dirty (Feb 11 2021 - 20:07:12 -0700)\n"
                   "Starting kernel ...\n\n"
                   "Timer summary in microseconds (9 records):\n"
                   "       Mark    Elapsed  Stage\n"
                   "          0          0  reset\n"
                   "    155,279    155,279  TPL\n"
                   "    237,088     81,809  end phase\n"
                   "    237,533        445  SPL\n"
                   "    816,456    578,923  end phase\n"
                   "    817,357        901  board_init_f\n"
                   "  1,430,071    612,714  main_loop\n"
                   "  5,532,057  4,101,986  start_kernel\n")
    a = analyze(read([str(log)]))
    steps = {b.name: b.duration for b in a.stages}
    assert steps["end phase (after TPL)"] == 81_809 * US and steps["end phase (after SPL)"] == 578_923 * US
    assert [ev.attrs["stage"] for ev in a.boot.marks(Mark.BOOTLOADER_START) if "stage" in (ev.attrs or {})] == [
        "tpl", "spl", "u-boot"]


def test_ti_sbl_profile_times_its_stages(fixture_path, tmp_path):
    """TI's AM62x MCU+ SDK docs: each SBL stage prints its steps and total in µs as it ends
    (`[BOOTLOADER_PROFILE] SBL Total Time Taken : 114756us`); the console had nothing else
    timed and said nothing could be timed.  On a capture the stage ends at its total's line
    and its steps run back to back before it; the first stage starts the bootloader."""
    a = analyze(read([fixture_path("grabserial-ti-sbl.log")]))
    stages = {ev.name: ev for ev in a.boot.events if ev.kind == Kind.STAGE}
    first, second = stages["TI SBL"], stages["TI SBL (stage 2)"]
    assert (first.t, first.dur) == (190_400 * US - 114_756 * US, 114_756 * US)
    assert second.dur == 130_310 * US and stages["TI SBL (stage 2): App_loadLinuxImages"].dur == 50_493 * US
    assert stages["TI SBL: System_init"].t == first.t
    assert stages["TI SBL: Drivers_open"].t == first.t + 6_688 * US
    assert a.phases.spans[0].phases[0].value == "bootloader" and a.phases.spans[0].start == first.t

    # On a transcript without times they are durations only, and still listed.
    text = re.sub(r"(?m)^\[[\d.]+ [\d.]+\] ", "", open(fixture_path("grabserial-ti-sbl.log")).read())
    log = tmp_path / "sbl.txt"
    log.write_text(text)
    plain = {b.name: b for b in analyze(read([str(log)])).stages}
    assert plain["TI SBL"].duration == 114_756 * US and plain["TI SBL"].start is None


def test_qualcomms_boot_chain_log_times_pbl_xbl_and_uefi(fixture_path):
    """A public TCL Book 14 Go (Qualcomm SC7180) console: PBL's statistics, XBL's lines in
    microseconds since the reset, UEFI's in milliseconds; bootlab said it was no boot log.
    The PBL is the firmware, XBL (SBL1) starts the bootloader, a `D -` line times the step
    begun before it, and UEFI's ExitBootServices is the kernel's handover."""
    a = analyze(read([fixture_path("console-qcom-xbl.txt")]))
    assert a.boot.reference == "bootloader" and a.boot.meta["bootloader"] == "Qualcomm XBL"
    assert [(s.name, s.start, s.end) for s in a.phases.spans[:3]] == [
        ("firmware", 0, 122_915 * US), ("bootloader", 122_915 * US, 6_593 * MS),
        ("kernel load/decompress", 6_593 * MS, a.phases.spans[2].end)]
    steps = {b.name: (b.start, b.duration) for b in a.stages}
    assert steps["PBL"] == (0, 101_609 * US) and steps["SBL1"] == (122_915 * US, (955_199 - 122_915) * US)
    assert steps["xblconfig_init"] == (252_997 * US, 196_023 * US)
    assert steps["UEFI"] == (1_173 * MS, (6_593 - 1_173) * MS)
    # POST Time: UEFI's core starts the OS loader, which runs to ExitBootServices.
    assert steps["UEFI's OS loader"] == (5_633 * MS, (6_593 - 5_633) * MS)
