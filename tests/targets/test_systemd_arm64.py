"""The systemd device on the ARM64 board (demo/systemd-arm64.toml): the [rootfs] table read by
the board's kind, the Debian tree built for arm64 (mmdebstrap --arch=arm64, its maintainer
scripts under qemu-user), and one real boot under TCG through U-Boot to the grabber's first
frame, with systemd's view read back from the store.  What it costs a fresh machine: the
arm64 tree about 5 min under qemu-user (then cached), the image about 40 s, the boot about
1-2 min (README, "The ARM64 variant")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.lab.boots import read_run
from bootlab.lab.store import Store
from bootlab.sources import Patterns
from bootlab.targets import arm64_board, kinds, rootfs
from bootlab.targets.description import TargetError
from bootlab.timeline import Kind

# Nothing here depends on the host's load (orders and contents, no durations): it runs
# beside other tests (make test's parallel phase).
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "systemd-arm64.toml"
GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"


def test_the_arm64_board_reads_a_rootfs_table():
    spec = kinds.load(str(DEMO))
    assert isinstance(spec, arm64_board.Arm64Board) and spec.rootfs.filesystem == "ext4"
    assert spec.to_dict()["rootfs"]["app"].startswith("/usr/local/bin/grabber")
    # A stored run's description reads back with its table; a board without one has none.
    assert kinds.stored(spec.to_dict()).rootfs == spec.rootfs
    assert "rootfs" not in kinds.load(str(ROOT / "demo" / "board-arm64.toml")).to_dict()
    assert spec.standalone("x").rootfs.files["/usr/local/bin/grabber"] == str(DEMO.parent / "../apps/grabber/build/arm64/static/grabber")


@pytest.mark.parametrize("text, message", [
    ('[rootfs]\nfilesystem = "yaffs2"\n', r"bad.toml:7: rootfs.filesystem: filesystem must be one of ext4"),
    ('[initramfs]\napp = "grabber"\n[rootfs]\n', r"bad.toml:7: initramfs.app: with a \[rootfs\] table"),
])
def test_the_boards_rootfs_table_with_a_mistake_names_its_file_and_line(tmp_path, text, message):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[arm64]\nkernel = "generic"\n[bootloader]\nboot_command = "boot"\n' + text)
    with pytest.raises(TargetError, match=message):
        kinds.load(str(bad))


@pytest.mark.qemu
@pytest.mark.skipif(not shutil.which("mmdebstrap") or not shutil.which("qemu-system-aarch64"),
                    reason="needs mmdebstrap and QEMU (make setup)")
@pytest.mark.skipif(not GRABBER.exists(), reason="needs the arm64 grabber (make build)")
def test_the_arm64_debian_device_boots_to_ready_and_systemds_view_is_read_back(tmp_path, capsys):
    db = str(tmp_path / "b.db")
    assert main(["boot", "--db", db, "--target", str(DEMO)]) == 0
    capsys.readouterr()
    store = Store(db)
    run = store.get(1)
    assert run.status == "ok", run.reason
    assert run.command[0] == "qemu-system-aarch64" and run.target["kernel_release"].endswith("-arm64")
    assert any(a.startswith("file=") and "if=virtio" in a for a in run.command)
    assert Path(run.target["disk_path"]).name.endswith(".ext4")
    # The tree is arm64's: its cache name says so (the image's key includes the tree's name).
    assert list((Path(run.target["disk_path"]).parent).glob("debian-bookworm-arm64-*.tar"))
    boot = read_run(store, run, Patterns.from_options(run.target["boot"]["ready"]))
    assert set(boot.meta["systemd_analyze"]) == {"time", "blame", "critical-chain"}
    units = boot.of_kind(Kind.UNIT)
    assert any(ev.name == rootfs.APP_UNIT and (ev.attrs or {}).get("critical_chain") for ev in units)
    assert any((ev.attrs or {}).get("source") == "blame" for ev in units)
    assert main(["show", "1", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "Userspace critical chain" in out and rootfs.APP_UNIT in out
