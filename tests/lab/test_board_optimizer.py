"""The optimizer on a user's board ([board] or [labgrid]) with U-Boot in [bootloader]: its
command line is U-Boot's bootargs, which bootlab sets at the prompt; its candidates are the
command line's, larger TFTP blocks and a direct boot command.  Boots through labgrid are in
tests/targets/test_labgrid_board.py."""

from __future__ import annotations

import pytest
import tomli_w

from bootlab.advice import Finding
from bootlab.cli import main
from bootlab.lab.candidates import Facts, for_target, from_advice
from bootlab.lab.optimizer import Optimizer, OptimizerError
from bootlab.lab.patch import apply
from bootlab.targets import kinds, uboot
from bootlab.targets.description import TargetError

DIRECT = "tftpboot ${kernel_addr_r} Image && booti ${kernel_addr_r} - ${fdtcontroladdr}"


def labgrid_board(tmp_path, **loader) -> str:
    """A [labgrid] description whose U-Boot boots by the distro scan, with a direct boot
    command in its environment."""
    loader = {"boot_command": "boot", "env": {"bootargs": "console=ttyAMA0,115200 panic=-1", "net_boot": DIRECT},
              **loader}
    path = tmp_path / "board.toml"
    path.write_text(tomli_w.dumps({"labgrid": {"env": "env.yaml", "ready": "APP READY"}, "bootloader": loader}))
    return str(path)


def test_a_boards_candidates_are_its_command_line_tftp_blocks_and_a_direct_boot(tmp_path):
    board = kinds.load(labgrid_board(tmp_path))
    found = {c.name: c for c in for_target(board, Facts(tftp=True))}
    assert set(found) == {"quiet", "no-crypto-selftests", "tftp-blocksize", "direct-boot"}
    # Kernel arguments go to bootargs and compose, as on the reference device.
    both = apply(apply(board.to_dict(), found["quiet"].patch), found["no-crypto-selftests"].patch)
    assert both["bootloader"]["env"]["bootargs"] == "console=ttyAMA0,115200 panic=-1"
    assert both["bootloader"]["append"] == "quiet cryptomgr.notests"
    loader = kinds.from_dict(both).bootloader
    assert loader.variables()["bootargs"] == "console=ttyAMA0,115200 panic=-1 quiet cryptomgr.notests"
    # An argument named again replaces the one in bootargs.
    faster = apply(board.to_dict(), {"bootloader": {"append": "console=ttyAMA0,921600"}})
    assert kinds.from_dict(faster).cmdline() == "console=ttyAMA0,921600 panic=-1"
    direct = kinds.from_dict(apply(board.to_dict(), found["direct-boot"].patch))
    assert direct.bootloader.boot_command == "run net_boot"
    blocks = kinds.from_dict(apply(board.to_dict(), found["tftp-blocksize"].patch))
    assert blocks.bootloader.env == {**board.bootloader.env, "tftpblocksize": "16352"}
    # What the probe did not show, and what is already so, is not offered.
    assert "tftp-blocksize" not in {c.name for c in for_target(board, Facts())}
    quiet = kinds.from_dict(apply(board.to_dict(), found["quiet"].patch))
    assert "quiet" not in {c.name for c in for_target(quiet, Facts())}
    assert "direct-boot" not in {c.name for c in for_target(direct, Facts())}


def test_a_board_without_bootloader_has_no_candidates_and_is_refused(tmp_path, capsys):
    path = tmp_path / "board.toml"
    path.write_text('[board]\ndevice = "/dev/ttyUSB0"\npower_cycle = "relay 1 cycle"\nready = "APP READY"\n')
    assert for_target(kinds.load(str(path)), Facts(tftp=True)) == []
    assert main(["optimize", "--target", str(path), "--db", str(tmp_path / "runs.db"),
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "a board target without [bootloader] is not one the optimizer can vary" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_bootloader_without_bootargs_is_refused_naming_what_is_missing(tmp_path):
    path = labgrid_board(tmp_path, env={"net_boot": DIRECT})
    with pytest.raises(OptimizerError, match="bootloader.append: append adds kernel arguments to env.bootargs"):
        Optimizer(None, kinds.load(path), "b")
    with pytest.raises(TargetError, match=r"board.toml:\d+: bootloader.append: append adds kernel arguments"):
        kinds.load(labgrid_board(tmp_path, env={}, append="quiet"))


def test_the_advice_rules_kernel_arguments_go_where_the_kind_takes_them():
    lpj = Finding(rule="cmdline.lpj", family="cmdline", title="t", evidence=[], saving_ns=1, how="h",
                  non_intrusive=True, patch={"target": {"append": "lpj=4000"}}, confidence="high")
    memory = Finding(rule="cmdline.mem", family="cmdline", title="t", evidence=[], saving_ns=1, how="h",
                     non_intrusive=True, patch={"target": {"memory": 64}}, confidence="low")
    assert [c.patch for c in from_advice([lpj, memory], "bootloader")] == [
        {"bootloader": {"append": "lpj=4000"}}, {"target": {"memory": 64}}]
    assert from_advice([lpj])[0].patch == {"target": {"append": "lpj=4000"}}


def test_a_command_kept_for_later_is_set_with_its_variables_unexpanded():
    assert uboot.quoted(DIRECT) == f"'{DIRECT}'"
    assert uboot.quoted("console=ttyAMA0,115200 quiet") == '"console=ttyAMA0,115200 quiet"'
    assert uboot.quoted("Image") == "Image"
