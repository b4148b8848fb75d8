"""[target] qemu: the installed QEMU or Debian's backport of QEMU 10, run from the cache with its
own firmware.  The SMP guests under -icount boot with it (tests/test_guest.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.targets import arm64_board, emulator, kinds, packages
from bootlab.targets.description import TargetError
from bootlab.targets.reference import build, from_dict

ROOT = Path(__file__).resolve().parents[2]


def test_an_unknown_qemu_is_refused_naming_the_key():
    with pytest.raises(TargetError, match=r"target\.qemu: qemu must be one of bookworm, bookworm-backports"):
        from_dict({"target": {"qemu": "7.2"}})


def test_the_installed_qemu_is_the_default():
    built = build(from_dict({}))
    assert built.qemu_argv()[0] == "qemu-system-x86_64" and "qemu_version" not in built.describe()


def test_the_backport_runs_from_the_cache_with_its_own_firmware():
    built = build(from_dict({"target": {"qemu": "bookworm-backports", "cpus": 2, "icount": "shift=0,sleep=off"}}))
    argv = built.qemu_argv()
    program = Path(argv[0])
    assert program.is_relative_to(packages.cache_dir() / "qemu") and program.exists()
    # Its option ROMs and SeaBIOS before the installed QEMU's data directory.
    firmware = [Path(argv[i + 1]) for i, a in enumerate(argv) if a == "-L"]
    assert [d.name for d in firmware] == ["seabios", "qemu"] and (firmware[0] / "bios-256k.bin").exists()
    assert argv[argv.index("-smp") + 1] == "2" and argv[argv.index("-icount") + 1] == "shift=0,sleep=off"
    version = subprocess.run([str(program), "--version"], capture_output=True, text=True, check=True).stdout
    assert "QEMU emulator version 10." in version
    assert built.describe()["qemu_version"].startswith("1:10.")
    # Fetched once: a second build finds it unpacked.
    assert emulator.qemu(emulator.BACKPORTS, fetch=False).argv == built.qemu.argv


def test_the_arm64_board_runs_the_backport_with_u_boot_as_its_firmware():
    """[arm64] qemu: the board's qemu-system-aarch64 from the backport, in a tree of its own
    (unpacking it never rewrites the x86 emulator a running guest uses), U-Boot still -bios."""
    board = kinds.load(str(ROOT / "demo" / "board-arm64.toml"))
    board.target.qemu, board.target.cpus, board.target.icount = "bookworm-backports", 2, "shift=0,sleep=off"
    built = arm64_board.build(board)
    argv = built.qemu_argv()
    program = Path(argv[0])
    assert program.name == "qemu-system-aarch64" and program.is_relative_to(packages.cache_dir() / "qemu")
    assert program.parent.parent.parent.name == "arm64" and program.parent != Path(emulator.qemu(emulator.BACKPORTS).argv[0]).parent
    assert [Path(argv[i + 1]).name for i, a in enumerate(argv) if a == "-L"] == ["qemu"]
    assert argv[argv.index("-bios") + 1] == str(built.firmware) and argv[argv.index("-smp") + 1] == "2"
    version = subprocess.run([str(program), "--version"], capture_output=True, text=True, check=True).stdout
    assert "QEMU emulator version 10." in version and built.describe()["qemu_version"].startswith("1:10.")
    with pytest.raises(TargetError, match=r"arm64\.qemu: qemu must be one of"):
        board.target.qemu = "10"
        board.validate()


def test_the_target_options_choose_the_cpus_and_the_qemu(capsys):
    assert main(["target", "show", "--cpus", "4", "--qemu", "bookworm-backports"]) == 0
    shown = capsys.readouterr().out
    assert "cpus = 4" in shown and 'qemu = "bookworm-backports"' in shown


def test_the_backport_not_fetched_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOTLAB_CACHE", str(tmp_path))
    with pytest.raises(packages.PackageError, match=r"qemu-system-x86 \(bookworm-backports\) is not in the cache"):
        emulator.qemu(emulator.BACKPORTS, fetch=False)
