"""The boot sequence (targets/strategy.py) with Debian's U-Boot for QEMU x86-64 on the
console: autoboot stopped, the environment set, the boot command typed; every failure a
failed run naming its step, with the console kept."""

from __future__ import annotations

import re
import shutil

import pytest

from bootlab.capture import session
from bootlab.capture.process import ProcessSource
from bootlab.targets import strategy, uboot
from bootlab.targets.strategy import Parts

from . import captured

UBOOT_ROM = "/usr/lib/u-boot/qemu-x86_64/u-boot.rom"
pytestmark = [pytest.mark.qemu,
              pytest.mark.skipif(not shutil.which("qemu-system-x86_64"), reason="needs QEMU (make setup)")]


class Machine:
    """QEMU with a firmware of our choice, composed from the real parts (no kernel given:
    what is tested ends in the bootloader)."""

    ready = "BOOTLAB READY"
    baud = None

    def __init__(self, bios: str, loader: uboot.UBoot):
        self.argv = ["qemu-system-x86_64", "-nographic", "-no-reboot", "-m", "256", "-bios", bios]
        self.loader = loader

    def describe(self) -> dict:
        return {}

    def command(self) -> list[str]:
        return self.argv

    def parts(self, capture_path: str) -> Parts:
        qemu = ProcessSource(self.argv, typed=True)
        return Parts(console=qemu, power=qemu, bootloader=self.loader,
                     stop=session.Stop(ready=re.compile(self.ready.encode()), silence=20, deadline=60))


def test_the_sequence_talks_to_uboot_and_a_failed_boot_command_names_the_step(tmp_path):
    capture = tmp_path / "uboot.capture"
    loader = uboot.UBoot(env={"bootargs": "console=ttyS0 quiet", "bootlab_mark": "1"},
                         boot_command="zboot 0x1000000", timeout=20)
    result = strategy.boot(Machine(UBOOT_ROM, loader), str(capture))
    assert result.status == "failed"
    assert result.reason.startswith("bootloader: boot: `zboot 0x1000000` did not start a kernel")
    text = capture.read_bytes()
    for sent in (b"sent ' '", b"sent 'setenv bootargs \"console=ttyS0 quiet\"\\\\r'", b"sent 'setenv bootlab_mark 1"):
        assert sent in text
    assert b"! failed bootloader: boot" in text
    assert text.index(b"sent ' '") < text.index(b"sent 'setenv bootargs")
    before, after = captured.around(capture, b"sent ' '")
    assert b"Hit any key" in before and b"setenv bootargs" in after


def test_a_rejected_command_fails_its_step(tmp_path):
    stopped = uboot.UBoot(env={"bootdelay": "0"}, boot_command="", timeout=20)
    result = strategy.boot(Machine(UBOOT_ROM, _Typed(stopped, "bogus_command_xyz")), str(tmp_path / "bad.capture"))
    assert result.status == "failed"
    assert result.reason == "bootloader: bogus_command_xyz: U-Boot refused `bogus_command_xyz`: " \
                            "Unknown command 'bogus_command_xyz' - try 'help'"


class _Typed:
    """U-Boot stopped, then one more command typed (and checked) the way setenv is."""

    def __init__(self, loader: uboot.UBoot, command: str):
        self.loader, self.command = loader, command

    def run(self, link) -> None:
        self.loader.run(link)
        self.loader._command(link, self.command, f"bootloader: {self.command}")


def test_a_firmware_without_uboot_fails_at_reaching_autoboot(tmp_path):
    seabios = Machine("bios.bin", uboot.UBoot(timeout=3))
    result = strategy.boot(seabios, str(tmp_path / "seabios.capture"))
    assert result.status == "failed"
    assert result.reason.startswith("bootloader: reach autoboot: waiting for U-Boot's autoboot countdown")
    assert b"SeaBIOS" in captured.console(tmp_path / "seabios.capture")
