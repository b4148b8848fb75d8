"""Firmware and bootloader rules."""

from __future__ import annotations

from .conftest import CORPUS, DATA, FIXTURES, findings, one, only

BBB = CORPUS / "grabserial-bbb__graboutput.log.reference"


def test_bootdelay_measured_from_the_countdown_to_the_next_line():
    f = one(findings(BBB), "bootloader.bootdelay")
    assert f.saving_ns == 1_006_867_000 and f.confidence == "high"  # 1.025907 -> 2.032774
    assert "bootdelay 0" in f.how and f.patch is None


def test_bootdelay_without_times_counts_the_announced_seconds():
    f = one(findings(DATA / "uboot-untimed.txt"), "bootloader.bootdelay")
    assert f.saving_ns == 3_000_000_000 and f.confidence == "medium"


def test_bootdelay_silent_at_zero():
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "bootloader.bootdelay")


def test_silent_costs_the_bootloader_phase_bytes():
    f = one(findings(BBB), "bootloader.silent")
    assert "1633 bytes" in f.evidence[0]
    assert f.saving_ns == 1633 * 10 * 1_000_000_000 // 115200
    assert "CONFIG_SILENT_CONSOLE" in f.how


def test_silent_only_for_u_boot(reference):
    assert not only(reference, "bootloader.silent")  # SeaBIOS prints, but has no silent switch


def test_redundant_work_absent_nand():
    f = one(findings(BBB), "bootloader.redundant-work")
    assert "NAND" in f.title and f.saving_ns == 91_823_000  # "NAND:  0 MiB" -> "MMC:"


def test_redundant_work_usb_and_network():
    found = only(findings(DATA / "uboot-usb-net.log"), "bootloader.redundant-work")
    savings = {f.title: f.saving_ns for f in found}
    assert savings == {"The bootloader tries a network boot": 2_010_000_000,
                       "The bootloader starts USB and scans it for boot devices": 1_210_000_000}


def test_redundant_work_silent_on_a_plain_boot():
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "bootloader.redundant-work")


def test_menu_timeout_from_systemd_analyze():
    f = one(findings(FIXTURES / "systemd-time-full.txt"), "bootloader.menu-timeout")
    assert f.saving_ns is None and "3.100s" in f.evidence[0] and "GRUB_TIMEOUT=0" in f.how


def test_menu_timeout_silent_without_a_loader_time():
    assert not only(findings(CORPUS / "rpi4-userspace__run_1_summary.txt"), "bootloader.menu-timeout")


def test_firmware_on_the_reference_device_proposes_qboot(reference):
    f = one(reference, "firmware.slow")
    assert f.patch == {"target": {"firmware": "qboot"}}
    assert f.saving_ns == 206_718_520 - 172_186_880  # SeaBIOS banner -> "Booting from ROM"


def test_firmware_of_a_pc_from_systemd_analyze():
    f = one(findings(FIXTURES / "systemd-time-full.txt"), "firmware.slow")
    assert f.saving_ns is None and "7.200s" in f.evidence[0] and f.patch is None


def test_firmware_silent_without_a_firmware_time():
    assert not only(findings(CORPUS / "rpi4-userspace__run_1_summary.txt"), "firmware.slow")
    assert not only(findings(BBB), "firmware.slow")


def test_bootdelay_of_a_keyed_autoboot_prompt():
    # U-Boot with CONFIG_AUTOBOOT_KEYED prints its own prompt, "Autoboot in %d seconds" by
    # default, and vendors add to it (a public Orange Pi Zero3 console: "Autoboot in 2
    # seconds, press <Space> to stop"): its 2 s countdown was not read, and no advice said so.
    f = one(findings(FIXTURES / "console-uboot-keyed-autoboot.txt"), "bootloader.bootdelay")
    assert f.saving_ns == 2_000_000_000 and f.confidence == "medium"
