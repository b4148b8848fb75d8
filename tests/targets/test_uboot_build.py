"""U-Boot built from Debian's source (targets/uboot_build.py): the source checked against its
.dsc, a configuration Kconfig refuses named before compiling, and the ARM64 board booted
through one built U-Boot (the test's only U-Boot build, cached by its .config like the
kernel's) with the levers it enables: the bootstage report read by the timeline, no autoboot
delay, nothing printed by a silent U-Boot, and what the board does not use left out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.lab import candidates
from bootlab.lab.patch import apply
from bootlab.sourcemap import read_toml
from bootlab.targets import arm64_board, kinds, strategy, uboot_build, uboot_images
from bootlab.targets.description import TargetError
from bootlab.targets.kconfig import BuildError
from bootlab.sources import read

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "demo" / "board-arm64-shipped.toml"
GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-aarch64"), reason="needs QEMU (make setup)")
needs_grabber = pytest.mark.skipif(not GRABBER.exists(), reason="needs the arm64 grabber (make build)")
# The levers in one configuration, so that `make test` builds U-Boot once.
LEVERS = {"SILENT_CONSOLE": "y", "SILENT_U_BOOT_ONLY": "y", "BOOTDELAY": "0", **uboot_build.UNUSED["qemu_arm64"]}


def test_the_source_is_debians_with_debians_patches():
    tree = uboot_build.source_tree()
    assert tree.name == uboot_build.version()
    series = (tree / "debian" / "patches" / "series").read_text().split()
    assert series and (tree / ".pc" / "applied-patches").read_text().split() == [p for p in series if p]


def test_a_tarball_that_does_not_match_its_dsc_is_refused(tmp_path):
    files = uboot_build.source_tree().parent / "files"
    dsc = next(files.glob("*.dsc"))
    shutil.copyfile(dsc, tmp_path / dsc.name)
    for name in uboot_build.checksums(dsc):
        (tmp_path / name).write_bytes(b"not the tarball")
    with pytest.raises(BuildError, match=r"orig.tar.xz: 15 bytes, sha256 [0-9a-f]{64}; .*\.dsc says"):
        uboot_build.verify(tmp_path / dsc.name)


def test_an_option_kconfig_refuses_is_named_before_compiling():
    # NVME_PCI selects NVME: asking NVME off alone is not kept.
    why = uboot_build.refusal(uboot_build.UBootConfig(options={"NVME": "n"}))
    assert why is not None and "[arm64.uboot] options.NVME: CONFIG_NVME=n requested, olddefconfig left it y" in why


def test_a_fragments_bad_line_is_named(tmp_path):
    bad = tmp_path / "bad.config"
    bad.write_text("CONFIG_BOOTDELAY=0\nBOOTDELAY 0\n")
    with pytest.raises(BuildError, match=r"bad.config:2: not a Kconfig line"):
        uboot_build.UBootConfig(fragments=[bad]).requests()


@pytest.mark.parametrize("arm64, message", [
    ({"uboot": {"options": {"BOOTDELAY": 0}}}, r'\[arm64.uboot\] is read only with arm64.firmware = "built"'),
    ({"firmware": "built", "uboot": {"defconfig": "x"}}, r"arm64.uboot.defconfig: unknown key \(known: board, "),
    ({"firmware": "built", "uboot": {"board": "rpi_4"}}, r"arm64.uboot: uboot.board must be one of qemu_arm64"),
])
def test_the_uboot_table_is_checked(arm64, message):
    with pytest.raises(TargetError, match=message):
        arm64_board.from_dict({"arm64": arm64, "bootloader": {"boot_command": "boot"}})


def test_the_cli_refuses_a_setting_that_is_not_option_equals_value(capsys):
    assert main(["uboot", "build", "--set", "SILENT_CONSOLE"]) == 2
    assert "--set SILENT_CONSOLE: not OPTION=VALUE" in capsys.readouterr().err


def test_the_cli_names_a_fragment_it_cannot_read_and_exits_2(tmp_path, capsys):
    assert main(["uboot", "build", "--fragment", str(tmp_path / "missing.config")]) == 2
    assert f"bootlab uboot: {tmp_path / 'missing.config'}: No such file or directory" in capsys.readouterr().err


def test_the_cli_names_an_option_kconfig_refuses_and_exits_1(capsys):
    assert main(["uboot", "build", "--set", "NVME=n"]) == 1
    assert "options.NVME: CONFIG_NVME=n requested, olddefconfig left it y" in capsys.readouterr().err


def _board(uboot: dict, saved: dict) -> arm64_board.Arm64Board:
    """The board as Debian ships it, booting a built U-Boot with a direct boot command saved."""
    data, _ = read_toml(str(SHIPPED))
    data["arm64"] = {**data["arm64"], "firmware": "built", "uboot": uboot}
    data["bootloader"] = {**data["bootloader"], "saved_env": {"bootcmd": "run bootlab_boot",
                                                             **arm64_board.STATIC_NETWORK, **saved}}
    return kinds.from_dict(data, base=SHIPPED.parent)


def test_the_optimizers_uboot_candidates_compose():
    """uboot-silent, then uboot-trim on the board that took it, or both at once (a pool):
    both sets of options stay."""
    board = _board({}, {})
    board.target.firmware = "/usr/lib/u-boot/qemu_arm64/u-boot.bin"  # Debian's, as shipped
    first = {c.name: c for c in candidates.uboot_config(board)}
    assert set(first) == {"uboot-silent", "uboot-trim"}
    silent = kinds.from_dict(apply(board.to_dict(), first["uboot-silent"].patch), base=SHIPPED.parent)
    assert silent.target.firmware == "built" and silent.bootloader.saved_env["silent"] == "1"
    trim = {c.name: c for c in candidates.uboot_config(silent)}["uboot-trim"]
    both = kinds.from_dict(apply(silent.to_dict(), trim.patch), base=SHIPPED.parent)
    assert both.target.uboot.options == {"SILENT_CONSOLE": "y", "SILENT_U_BOOT_ONLY": "y",
                                         **uboot_build.UNUSED["qemu_arm64"]}
    assert candidates.uboot_config(both) == []
    pooled = apply(apply(board.to_dict(), first["uboot-silent"].patch), first["uboot-trim"].patch)
    assert pooled["arm64"]["uboot"]["options"] == both.target.uboot.options
    # A board bootlab stops at the prompt cannot be silent: it needs U-Boot's prompt.
    board.bootloader.stop_autoboot = True
    assert [c.name for c in candidates.uboot_config(board)] == ["uboot-trim"]


@pytest.fixture(scope="module")
def built() -> uboot_build.Outcome:
    return uboot_build.build(uboot_build.UBootConfig(options=LEVERS))


def test_the_built_configuration_is_debians_with_the_levers(built):
    diff = uboot_build.against_debian(built.config, "qemu_arm64")
    assert {"BOOTSTAGE", "BOOTSTAGE_REPORT", "SILENT_CONSOLE", "SILENT_U_BOOT_ONLY"} <= set(diff.added)
    assert {"USB", "SCSI", "NVME", "EFI_LOADER"} <= set(diff.removed)
    assert "BOOTDELAY: 2 -> 0" in diff.changed
    assert uboot_images.default_environment(built.firmware)["bootdelay"] == "0"
    # The same configuration again is the cache's.
    again = uboot_build.build(uboot_build.UBootConfig(options=LEVERS))
    assert not again.built and again.firmware == built.firmware


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_built_uboot_prints_its_bootstage_report_and_the_timeline_reads_it(tmp_path, built):
    board = _board({"options": LEVERS}, {})
    result = strategy.boot(arm64_board.build(board), str(tmp_path / "bootstage.capture"))
    assert result.status == "ok", result.reason
    text = (tmp_path / "bootstage.capture").read_bytes()
    assert b"Timer summary in microseconds" in text and b"stop autoboot:  0" in text  # no countdown
    assert b"usb" not in text.lower().split(b"starting kernel")[0]  # nothing of USB probed
    a = analyze(read([str(tmp_path / "bootstage.capture")]))
    assert [s.name for s in a.phases.spans][:2] == ["firmware", "bootloader"]
    # The report's stages, placed from its reset (before the banner the host saw).
    assert {"board_init_f", "board_init_r", "bootm_start", "netboot_common"} <= {s.name for s in a.stages}
    assert 0 < a.phases.boundaries["bootloader.start"].at < a.stages[0].start


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_silent_uboot_prints_nothing_before_the_kernel(tmp_path, built):
    board = _board({"options": LEVERS}, {"silent": "1"})
    result = strategy.boot(arm64_board.build(board), str(tmp_path / "silent.capture"))
    assert result.status == "ok", result.reason
    text = (tmp_path / "silent.capture").read_bytes()
    assert b"U-Boot" not in text and b"Timer summary" not in text
    assert b"Booting Linux" in text and b"BOOTLAB READY" in text
