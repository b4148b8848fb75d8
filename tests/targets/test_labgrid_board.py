"""A board described as a labgrid environment, booted by bootlab through labgrid's own
drivers: here labgrid's QEMUDriver (power and console in one) runs the reference device's
kernel and initramfs, and the ARM64 reference board with U-Boot as its firmware; `bootlab
boot`, a campaign and `bootlab optimize` go through the one boot sequence."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w

from bootlab.cli import main
from bootlab.lab import campaign
from bootlab.lab.store import Store
from bootlab.sourcemap import read_toml
from bootlab.sources.bootlab_capture import console_bytes
from bootlab.targets import arm64_board, kinds
from bootlab.targets.reference import Target, build


pytestmark = pytest.mark.qemu
ROOT = Path(__file__).resolve().parents[2]
ARM_DEMO = ROOT / "demo" / "board-arm64.toml"
ARM_GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"


def _environment(tmp_path, append: str = "") -> None:
    built = build(Target())
    (tmp_path / "env.yaml").write_text(f"""targets:
  main:
    drivers:
      QEMUDriver:
        qemu_bin: qemu
        machine: pc
        cpu: qemu64
        memory: 512M
        kernel: kernel
        extra_args: "-accel tcg -no-reboot -initrd {built.initrd}"
        boot_args: "{built.cmdline} {append}"
        display: none
tools:
  qemu: /usr/bin/qemu-system-x86_64
images:
  kernel: {built.image}
""")


def test_bootlab_boots_a_labgrid_board_through_labgrids_drivers(tmp_path, capsys):
    _environment(tmp_path)
    (tmp_path / "board.toml").write_text('[labgrid]\nenv = "env.yaml"\nready = "BOOTLAB READY"\ndeadline = 120\n')
    db = str(tmp_path / "runs.db")
    assert main(["boot", "--target", str(tmp_path / "board.toml"), "--db", db]) == 0
    run = Store(db).runs()[0]
    assert run.status == "ok" and run.metrics["at:ready"] > 0
    assert run.target == {"labgrid": {"prepare": "", "ready": "BOOTLAB READY", "silence": 30.0, "deadline": 120.0,
                                      "env": "env.yaml", "role": "main", "strategy": ""}}
    header = Store(db).capture(run.id).split(b"\n", 1)[0]
    assert b'"source": "labgrid"' in header and b'"zero": "power-on"' in header


def test_a_labgrid_board_that_never_gets_ready_is_a_timeout_and_a_bad_environment_names_its_step(tmp_path):
    _environment(tmp_path, append="rdinit=/bin/cat")  # init waits on the console: no ready line
    (tmp_path / "c.toml").write_text('runs = 2\ngive_up_after = 1\n[labgrid]\nenv = "env.yaml"\n'
                                     'ready = "BOOTLAB READY"\nsilence = 8\ndeadline = 60\n'
                                     '[variant.nowhere]\nenv = "missing.yaml"\n')
    db = str(tmp_path / "runs.db")
    main(["lab", "run", str(tmp_path / "c.toml"), "--db", db])
    runs = {r.variant: r for r in Store(db).runs(campaign="c")}
    assert runs["baseline"].status == "timeout"
    assert runs["nowhere"].status == "failed" and runs["nowhere"].reason.startswith("power-off: ")
    assert "missing.yaml" in runs["nowhere"].reason


def _arm_environment(tmp_path, uboot_driver: str = "") -> arm64_board.Arm64Board:
    """The ARM64 reference board as a lab would describe it: labgrid's QEMUDriver powers it
    and is its console (QEMU's virt machine, Debian's U-Boot as its firmware, the board's
    TFTP directory on QEMU's user network), `uboot_driver` any more drivers."""
    board = arm64_board.from_dict({**read_toml(str(ARM_DEMO))[0], "initramfs": {
        **read_toml(str(ARM_DEMO))[0]["initramfs"], "files": {"/bin/grabber": str(ARM_GRABBER)}}})
    built = arm64_board.build(board)
    (tmp_path / "env.yaml").write_text(f"""targets:
  main:
    drivers:
      QEMUDriver:
        qemu_bin: qemu
        machine: virt
        cpu: cortex-a57
        memory: 1024M
        bios: uboot
        extra_args: "-accel tcg -no-reboot -netdev user,id=net0,tftp={built.tftp} -device virtio-net-pci,netdev=net0"
        display: none
{uboot_driver}tools:
  qemu: /usr/bin/qemu-system-aarch64
images:
  uboot: {board.target.firmware}
""")
    return board


def _boot_arm(tmp_path, board: arm64_board.Arm64Board, labgrid: dict | None = None, **loader_keys):
    loader = {**board.bootloader.to_dict(), "env": {**board.variables(), **board.bootloader.env}, **loader_keys}
    (tmp_path / "board.toml").write_text(tomli_w.dumps({"labgrid": {"env": "env.yaml", "ready": "BOOTLAB READY",
                                                                    "deadline": 180.0, **(labgrid or {})},
                                                        "bootloader": loader}))
    db = str(tmp_path / "runs.db")
    main(["boot", "--target", str(tmp_path / "board.toml"), "--db", db])
    run = Store(db).runs()[0]
    capture = Store(db).capture(run.id)
    return run, console_bytes(capture), capture


def test_the_arm_board_through_labgrid_and_its_bootloader(tmp_path):
    """bootlab's U-Boot driver stops autoboot on labgrid's console, sets the board's
    variables and boots it over TFTP."""
    run, text, capture = _boot_arm(tmp_path, _arm_environment(tmp_path))
    assert run.status == "ok", run.reason
    assert b'"source": "labgrid"' in capture.split(b"\n", 1)[0]
    assert b"Hit any key to stop autoboot" in text and b"sent 'setenv bootfile Image" in capture
    assert b"Bytes transferred" in text and b"BOOTLAB READY" in text


UBOOT_DRIVER = """      UBootDriver:
        prompt: "=> "
        boot_timeout: 20
"""


def test_the_arm_board_through_labgrids_own_uboot_driver(tmp_path):
    """With driver = "labgrid" the environment's UBootDriver stops autoboot, sets the board's
    variables (each checked by its exit status) and boots it; every byte U-Boot printed
    while labgrid read the console is in the capture, in order, and the run is timed from
    power-on like any other."""
    run, text, capture = _boot_arm(tmp_path, _arm_environment(tmp_path, UBOOT_DRIVER), driver="labgrid")
    assert run.status == "ok", run.reason
    assert b"! labgrid UBootDriver: stop autoboot" in capture and b"! labgrid UBootDriver: setenv bootfile" in capture
    at = [text.index(words) for words in (b"U-Boot 20", b"Hit any key to stop autoboot", b"setenv bootfile",
                                          b"Bytes transferred", b"Starting kernel", b"Linux version", b"BOOTLAB READY")]
    assert at == sorted(at)
    assert 0 < run.metrics["at:ready"]


def test_labgrids_uboot_driver_boots_a_quiet_kernel(tmp_path):
    """labgrid's UBootDriver waits for the kernel's banner (`Linux version`), which a quiet
    kernel does not print on the console; where the environment keeps that default, bootlab
    has it wait for U-Boot's handover, as its own driver does."""
    run, text, capture = _boot_arm(tmp_path, _arm_environment(tmp_path, UBOOT_DRIVER), driver="labgrid",
                                   append="quiet")
    assert run.status == "ok", run.reason
    assert b'setenv bootargs "console=ttyAMA0,115200 panic=-1 quiet"' in text and b"Linux version" not in text


def test_labgrids_uboot_driver_failing_a_command_names_the_step(tmp_path):
    board = _arm_environment(tmp_path, UBOOT_DRIVER)
    run, text, capture = _boot_arm(tmp_path, board, driver="labgrid", boot_command="tftpboot ${kernel_addr_r} "
                                   "missing-file && booti ${kernel_addr_r}")
    assert run.status == "failed" and run.reason.startswith("bootloader: boot: `tftpboot"), run.reason
    assert "did not start a kernel" in run.reason and b"missing-file" in text


# labgrid's UBootStrategy binds a shell driver too; it is not used on the way to "uboot".
STRATEGY = UBOOT_DRIVER + """      ShellDriver:
        prompt: "# "
        login_prompt: "login: "
        username: "root"
      UBootStrategy: {}
"""


def test_the_arm_board_through_labgrids_uboot_strategy(tmp_path):
    """With [labgrid] strategy = "uboot" the environment's UBootStrategy powers the board and
    stops autoboot in its own transition; time zero is the end of its power driver's `on`
    step, and what labgrid read meanwhile is in the capture at the instants it arrived."""
    board = _arm_environment(tmp_path, STRATEGY)
    run, text, capture = _boot_arm(tmp_path, board, driver="labgrid", labgrid={"strategy": "uboot"})
    assert run.status == "ok", run.reason
    assert b"labgrid UBootStrategy: transition to 'uboot'" in capture and b'"labgrid_strategy": "uboot"' in capture
    assert b"labgrid UBootDriver: stop autoboot" not in capture  # the strategy did
    at = [text.index(words) for words in (b"U-Boot 20", b"Hit any key to stop autoboot", b"setenv bootfile",
                                          b"Bytes transferred", b"BOOTLAB READY")]
    assert at == sorted(at)
    records = [line for line in capture.split(b"\n")[1:] if line]
    zero = records.index(next(r for r in records if r.endswith(b"power-on")))
    banner = next(i for i, r in enumerate(records) if b"U-Boot 20" in r)
    prompt = next(i for i, r in enumerate(records) if b"Hit any key" in r)
    assert zero < banner < prompt
    stamp = lambda record: float(record.split(b" ", 1)[0])
    assert 0 <= stamp(records[banner]) < stamp(records[prompt]) < run.metrics["at:ready"]


def test_a_strategy_that_cannot_reach_the_prompt_is_a_failed_run_from_power_on(tmp_path):
    """A bootloader the strategy cannot stop (here its prompt is not the one the environment
    names): a failed run naming the step, timed from power-on, with U-Boot's console."""
    board = _arm_environment(tmp_path, STRATEGY.replace('prompt: "=> "', 'prompt: "never> "\n        login_timeout: 8'))
    run, text, capture = _boot_arm(tmp_path, board, driver="labgrid", labgrid={"strategy": "uboot"})
    assert run.status == "failed" and run.reason.startswith("bootloader: stop autoboot: labgrid UBootStrategy: "), \
        run.reason
    assert b"power-on" in capture and b"U-Boot 20" in text and b"Hit any key to stop autoboot" in text


@pytest.mark.parametrize("kind", ["board", "arm64"])
def test_labgrids_uboot_driver_needs_a_labgrid_environment(tmp_path, kind):
    from bootlab.targets.description import TargetError

    data = read_toml(str(ARM_DEMO))[0] if kind == "arm64" else {"board": {"device": "/dev/ttyUSB0", "ready": "x", "power_cycle": "true"}}
    data["bootloader"] = {**data.get("bootloader", {}), "driver": "labgrid"}
    (tmp_path / "t.toml").write_text(tomli_w.dumps(data))
    with pytest.raises(TargetError, match="bootloader.driver: labgrid's UBootDriver is reached through a labgrid"):
        kinds.load(str(tmp_path / "t.toml"))


@pytest.mark.parametrize("driver", ["bootlab", "labgrid"])
def test_bootlab_optimize_varies_the_arm_board_through_labgrid(tmp_path, capsys, driver):
    """The ARM board as a user's board: U-Boot boots by the distro scan, [bootloader] env
    holds its command line (bootargs) and a direct boot command.  The optimizer probes it,
    finds the candidates that act on such a board, boots them through labgrid (with
    bootlab's U-Boot driver, or labgrid's UBootDriver), and writes a labgrid description
    that boots."""
    board = _arm_environment(tmp_path, UBOOT_DRIVER if driver == "labgrid" else "")
    env = {**board.variables(), **board.bootloader.env, "net_boot": board.bootloader.boot_command}
    loader = {**board.bootloader.to_dict(), "env": env, "boot_command": "boot", "driver": driver}
    (tmp_path / "board.toml").write_text(tomli_w.dumps({"labgrid": {"env": "env.yaml", "ready": "BOOTLAB READY",
                                                                    "deadline": 180.0}, "bootloader": loader}))
    db, out = str(tmp_path / "runs.db"), tmp_path / "result"
    assert main(["optimize", "--target", str(tmp_path / "board.toml"), "--db", db, "--out", str(out), "--runs", "2",
                 "--rounds", "1", "--only", "direct-boot,tftp-blocksize", "--name", "lg"]) == 0
    report = (out / "report.txt").read_text()
    assert "candidates tried: tftp-blocksize, direct-boot" in report  # the probe showed U-Boot's TFTP loads
    store = Store(db)
    runs = store.runs()
    assert runs and all(r.status == "ok" for r in runs), [r.reason for r in runs if r.status != "ok"]
    assert all(b'"source": "labgrid"' in store.capture(r.id).split(b"\n", 1)[0] for r in runs)
    probe = console_bytes(store.capture(runs[0].id))
    assert b"setenv bootargs" in probe and b"initcall_debug log_buf_len=4M" in probe  # bootargs, with its append
    for r in runs:
        text = console_bytes(store.capture(r.id))
        if r.variant == "direct-boot":
            assert b"run net_boot" in text and b"BOOTP broadcast" not in text
        if r.variant == "tftp-blocksize":
            assert b"setenv tftpblocksize 16352" in text and b"BOOTP broadcast" in text
    # The result stands anywhere (the environment named absolutely) and boots.
    final = kinds.load(str(out / "final.toml"))
    assert Path(final.env).is_absolute() and final.bootloader.env["net_boot"] == env["net_boot"]
    assert main(["boot", "--target", str(out / "final.toml"), "--db", db]) == 0
    assert Store(db).runs()[-1].status == "ok"
    assert [v.name for v in campaign.load(str(out / "waterfall.toml")).variants][0] == "baseline"
