"""The optimizer on a user's board ([board] or [labgrid]) with U-Boot in [bootloader]: its
command line is U-Boot's bootargs, which bootlab sets at the prompt; its candidates are the
command line's, larger TFTP blocks and a direct boot command.  Boots through labgrid are in
tests/targets/test_labgrid_board.py."""

from __future__ import annotations

import os
import shlex
import threading
import tty
from pathlib import Path

import pytest
import tomli_w

from bootlab.advice import Finding
from bootlab.cli import main
from bootlab.lab.candidates import Facts, for_target, from_advice
from bootlab.lab import campaign
from bootlab.lab.optimizer import Optimizer, OptimizerError, final_target_file, waterfall_campaign
from bootlab.lab.patch import apply
from bootlab.lab.store import Store
from bootlab.sourcemap import read_toml
from bootlab.sources.bootlab_capture import console_bytes
from bootlab.targets import arm64_board, kinds, uboot
from bootlab.targets.description import TargetError

from .conftest import FakeBooter

ROOT = Path(__file__).resolve().parents[2]
ARM_DEMO = ROOT / "demo" / "board-arm64.toml"
ARM_GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"
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


@pytest.fixture
def serial_line():
    """A serial line: the board writes into `far` and reads what bootlab types from it;
    bootlab opens `device`."""
    far, near = os.openpty()
    tty.setraw(near)
    tty.setraw(far)
    yield far, os.ttyname(near)
    os.close(far)
    os.close(near)


def _cable(base: str, far: int) -> None:
    """The emulated board's UART (QEMU's -serial pipe:BASE) joined to the serial line, both
    ways, as a USB-serial cable joins a board's."""
    def board_to_line():
        while True:
            with open(base + ".out", "rb", buffering=0) as uart:
                while data := uart.read(4096):
                    os.write(far, data)

    def line_to_board():
        while True:
            try:
                data = os.read(far, 4096)
            except OSError:  # the line is closed: the test is over
                return
            try:  # nobody reads the UART while the board is off: what is typed then is lost
                fd = os.open(base + ".in", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    for relay in (board_to_line, line_to_board):
        threading.Thread(target=relay, daemon=True).start()


@pytest.mark.qemu
def test_bootlab_optimize_varies_a_board_behind_a_serial_line(serial_line, tmp_path, capsys):
    """The ARM board as a [board]: its power commands start and kill QEMU (daemonized), its
    UART reaches bootlab through a pty, and bootlab types to U-Boot over it.  The optimizer
    probes it, finds the TFTP lever in what the console showed, and boots it."""
    far, device = serial_line
    base, pidfile = str(tmp_path / "uart"), str(tmp_path / "qemu.pid")
    for end in (".in", ".out"):
        os.mkfifo(base + end)
    _cable(base, far)
    board = arm64_board.from_dict({**read_toml(str(ARM_DEMO))[0], "initramfs": {
        **read_toml(str(ARM_DEMO))[0]["initramfs"], "files": {"/bin/grabber": str(ARM_GRABBER)}}})
    argv = arm64_board.build(board).qemu_argv()
    argv[argv.index("-nographic")] = "-daemonize"
    argv += ["-display", "none", "-monitor", "none", "-serial", f"pipe:{base}", "-pidfile", pidfile]
    power_off = f"if [ -f {pidfile} ]; then kill $(cat {pidfile}) 2>/dev/null; rm -f {pidfile}; sleep 0.2; fi; true"
    loader = {**board.bootloader.to_dict(), "env": {**board.variables(), **board.bootloader.env}}
    (tmp_path / "board.toml").write_text(tomli_w.dumps({
        "board": {"device": device, "power_on": shlex.join(argv), "power_off": power_off, "ready": "BOOTLAB READY",
                  "deadline": 180.0}, "bootloader": loader}))
    db, out = str(tmp_path / "runs.db"), tmp_path / "result"
    try:
        assert main(["optimize", "--target", str(tmp_path / "board.toml"), "--db", db, "--out", str(out),
                     "--runs", "2", "--rounds", "1", "--only", "tftp-blocksize", "--name", "pty"]) == 0
    finally:
        os.system(power_off)
    assert "candidates tried: tftp-blocksize" in (out / "report.txt").read_text()
    store = Store(db)
    runs = store.runs()
    assert [r.status for r in runs] == ["ok"] * 5, [r.reason for r in runs]
    probe = console_bytes(store.capture(runs[0].id))
    assert b"setenv bootargs \"console=ttyAMA0,115200 panic=-1 initcall_debug log_buf_len=4M\"" in probe
    assert all(b"setenv tftpblocksize 16352" in console_bytes(store.capture(r.id))
               for r in runs if r.variant == "tftp-blocksize")
    assert kinds.load(str(out / "final.toml")).to_dict()["board"]["device"] == device


def simulated_board(target: dict, variant: str) -> float:
    """6 s by the distro scan, 4 s by the direct command; there (and only there: the scan's
    boot script sets bootargs itself) quiet saves 1 s."""
    loader = target["bootloader"]
    if loader["boot_command"] == "boot":
        return 6e9
    return 4e9 - (1e9 if "quiet" in loader["append"] else 0)


def test_the_optimizer_keeps_a_boards_levers_and_writes_a_description_that_stands_anywhere(store, tmp_path):
    board = kinds.load(labgrid_board(tmp_path))
    fake = FakeBooter(simulated_board)
    out = Optimizer(store, board, "brd", runs=8, only={"direct-boot", "quiet"},
                    run_campaign=lambda c, title: campaign.run(c, store, booter=fake.for_variant)).run()
    # Round 1 keeps the direct boot; quiet acts only on top of it, and round 2 keeps it.
    assert [(d.candidate.name, d.round) for d in out.decisions if d.kept and d.stage == "combine"] == [
        ("direct-boot", 1), ("quiet", 2)]
    assert out.final.bootloader.boot_command == "run net_boot" and out.final.cmdline().endswith(" quiet")
    assert [b.name for b in out.waterfall.bars] == ["baseline", "1-direct-boot", "2-quiet"]
    path = tmp_path / "waterfall.toml"
    path.write_text(waterfall_campaign(out, 6))
    c = campaign.load(str(path))
    assert [v.spec.to_dict() for v in c.variants][-1] == out.final.standalone("x").to_dict()
    elsewhere = tmp_path / "result"
    elsewhere.mkdir()
    (elsewhere / "final.toml").write_text(final_target_file(out.final, "brd-final"))
    final = kinds.load(str(elsewhere / "final.toml"))
    assert final.env_path() == str(tmp_path / "env.yaml") and final.bootloader == out.final.bootloader
