"""Real boots of the reference device: a campaign interrupted twice (Ctrl-C, then kill -9
in the middle of a boot) and resumed, and the optimizer on a one-candidate list."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.lab import campaign
from bootlab.lab.boots import captures_dir
from bootlab.lab.store import Store

from test_capture import exited

pytestmark = pytest.mark.qemu

CAMPAIGN = """
name = "resume"
runs = 2
[baseline]
target.kernel = "cloud"
target.append = "quiet"
[variant.direct]
initramfs.init = "direct"
"""


def _wait(predicate, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for the campaign"
        time.sleep(0.1)


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _start(path: str, db: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bootlab", "lab", "run", path, "--db", db],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stored(db: str) -> list:
    return Store(db).runs(campaign="resume")


def _boot_in_progress(db: str, stored: int):
    """A boot beyond the `stored` finished ones has started writing its capture."""
    return lambda: len(_stored(db)) == stored and len(list(captures_dir(db).glob("*.capture"))) > stored


def test_campaign_resumes_after_ctrl_c_and_kill_9(tmp_path, capsys):
    path = tmp_path / "resume.toml"
    path.write_text(CAMPAIGN)
    db = str(tmp_path / "lab.db")
    Store(db).close()

    first = _start(str(path), db)
    _wait(_boot_in_progress(db, 1))
    time.sleep(0.5)
    first.send_signal(signal.SIGINT)
    assert first.wait(60) == 130
    runs = _stored(db)
    assert [(r.sequence, r.status, r.reason) for r in runs][-1] == (1, "interrupted", "interrupted")

    second = _start(str(path), db)
    _wait(_boot_in_progress(db, 3))  # slot 1 again, then slot 2 half-way
    time.sleep(0.5)
    qemu = _children(second.pid)
    assert qemu
    second.kill()
    second.wait(30)
    # The kernel kills the QEMU of a bootlab killed outright: it does not run on, alone.
    _wait(lambda: all(exited(pid) for pid in qemu), timeout=10)
    assert [r.sequence for r in _stored(db)] == [0, 1, 1]

    assert main(["lab", "run", str(path), "--db", db, "-f", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    counted = [r for r in _stored(db) if r.reason != "interrupted"]
    assert sorted(r.sequence for r in counted) == [0, 1, 2, 3]  # each slot once, none lost
    assert all(r.status == "ok" for r in counted)
    assert report["done"] == 4 and [v["name"] for v in report["variants"]] == ["baseline", "direct"]
    assert all(len(v["runs"]["ok"]) == 2 for v in report["variants"])
    # The killed boot's capture is on disk, in no run: it is never read.
    stored_uuids = {r.uuid for r in _stored(db)}
    orphans = [p for p in captures_dir(db).glob("*.capture") if p.stem not in stored_uuids]
    assert len(orphans) == 1
    assert campaign.state(campaign.load(str(path)), Store(db)).complete


def test_optimizer_keeps_quiet_and_writes_a_bootable_result(tmp_path, capsys):
    target = tmp_path / "loud.toml"
    target.write_text('[target]\nkernel = "cloud"\n')
    out = tmp_path / "out"
    db = str(tmp_path / "opt.db")
    # 6 boots each: with 4, only a complete separation of the two sets is significant (p 0.029), which
    # one boot slowed by a busy host undoes
    assert main(["optimize", "--target", str(target), "--only", "quiet", "--runs", "6", "--name", "tiny",
                 "--soak", "2", "--out", str(out), "--db", db]) == 0
    report = capsys.readouterr().out
    assert "kept: quiet" in report and "soak: 2 boots of the final configuration, none failed" in report
    data = json.loads((out / "report.json").read_text())
    assert data["kept"] == ["quiet"] and data["waterfall"]["speedup"][0] > 1.2
    assert data["soak"]["boots"] == 2 and data["soak"]["failed"] == 0
    assert (out / "waterfall.png").read_bytes().startswith(b"\x89PNG")
    assert "data:image/png" in (out / "report.html").read_text()
    assert main(["boot", "--target", str(out / "final.toml"), "--db", db]) == 0
    run = Store(db).runs()[-1]
    assert run.status == "ok" and "quiet" in run.target["target"]["append"]
