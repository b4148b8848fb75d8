"""The systemd device (demo/systemd.toml): a Debian bookworm root built with mmdebstrap on a
virtio disk, the grabber as a systemd service.  Real builds and real boots under TCG: the
Debian tree takes about 30 s to build once per machine (then cached), each image about 40 s,
each boot about 25 s."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bootlab.cli import main
from bootlab.lab.boots import read_run
from bootlab.lab.candidates import facts_from, off_chain
from bootlab.lab.store import Store
from bootlab.sources import Patterns, bootlab_capture
from bootlab.targets import rootfs
from bootlab.timeline import Kind, Mark

DEMO = Path(__file__).resolve().parents[2] / "demo" / "systemd.toml"
# Nothing here depends on the host's load (causal orders, no durations): it runs beside
# other tests (make test's parallel phase).
pytestmark = [pytest.mark.qemu, pytest.mark.parallel,
              pytest.mark.skipif(not shutil.which("mmdebstrap"), reason="needs mmdebstrap (make setup)")]


def _boot(tmp_path: Path, capsys, **replace: str) -> tuple[str, Store]:
    """One boot of the demo device with some of its lines replaced, and a shorter silence (a
    boot stopped short of ready ends sooner)."""
    text = DEMO.read_text().replace('"../apps/', f'"{DEMO.parent.parent}/apps/')
    for old, new in {"silence = 60": "silence = 25", **replace}.items():
        assert old in text
        text = text.replace(old, new)
    target = tmp_path / "systemd.toml"
    target.write_text(text)
    db = str(tmp_path / "b.db")
    main(["boot", "--db", db, "--target", str(target)])
    capsys.readouterr()
    return db, Store(db)


def test_the_debian_device_boots_to_ready_and_show_reads_systemds_view_back(tmp_path, capsys):
    db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': 'filesystem = "ext4"\nplot = true'})
    run = store.get(1)
    assert run.status == "ok", run.reason
    assert Path(run.target["disk_path"]).exists() and run.target["rootfs"]["filesystem"] == "ext4"
    assert any(a.startswith("file=") and "if=virtio" in a for a in run.command)
    # What the guest printed after ready, read back from the stored run.
    boot = read_run(store, run, Patterns.from_options(run.target["boot"]["ready"]))
    assert set(boot.meta["systemd_analyze"]) == {"time", "blame", "critical-chain"}
    units = boot.of_kind(Kind.UNIT)
    assert any(ev.name == rootfs.APP_UNIT and (ev.attrs or {}).get("critical_chain") for ev in units)
    assert any((ev.attrs or {}).get("source") == "blame" for ev in units)
    # systemd-analyze plot's SVG: every unit's activation timed, and systemd's generators
    plotted = {ev.name: ev for ev in units if (ev.attrs or {}).get("source") == "plot"}
    assert boot.meta["systemd_plot_svg"].startswith("<?xml") and rootfs.APP_UNIT in plotted
    assert plotted["(generators)"].dur > 0 and plotted[rootfs.APP_UNIT].t > plotted["(generators)"].t
    facts = facts_from(boot)
    assert rootfs.APP_UNIT in facts.chain and off_chain(facts, [])
    assert main(["show", "1", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "Userspace critical chain" in out and "Slowest units:" in out and rootfs.APP_UNIT in out


def test_a_read_only_filesystem_variant_without_generators_boots(tmp_path, capsys):
    _db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': 'filesystem = "erofs"\ngenerators = false'})
    run = store.get(1)
    assert run.status == "ok", run.reason
    assert run.target["disk_path"].endswith(".erofs") and "readonly=on" in " ".join(run.command)
    # The getty generator did not run: no getty for the serial console was made.
    boot = read_run(store, run, Patterns.from_options(run.target["boot"]["ready"]))
    units = {ev.name for ev in boot.of_kind(Kind.UNIT)}
    assert rootfs.APP_UNIT in units and "serial-getty@ttyS0.service" not in units


def test_a_masked_unit_the_application_needed_is_a_failed_run(tmp_path, capsys):
    # The application's unit needs sysinit.target (its default dependencies): masked, the
    # unit's start fails, the ready line never comes and the console falls silent: the
    # boot is killed and recorded as not ok (a campaign counts it failed, never keeps it).
    _db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': 'filesystem = "ext4"\nmask = ["sysinit.target"]'})
    run = store.get(1)
    assert run.status == "timeout" and run.reason.startswith("killed: silence"), (run.status, run.reason)
    assert "ready" not in run.metrics and "at:ready" not in run.metrics


@pytest.mark.parametrize("prune", ["false", "true"])
def test_the_minimal_boot_target_reaches_ready_and_systemds_view_is_still_collected(tmp_path, capsys, prune):
    # systemd kept as PID 1, booted into bootlab.target with vivid loaded by the initramfs:
    # only the application's unit starts before ready (blame has nothing else), the analyze
    # unit still prints systemd's view after it, and the critical chain is read back; with
    # Debian's other unit files removed too (prune_units), which the power-off must not need.
    db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': 'filesystem = "ext4"\nboot_target = "app"\n'
                                                                   f'modules_early = true\nread_only = true\nprune_units = {prune}'})
    run = store.get(1)
    assert run.status == "ok", run.reason
    boot = read_run(store, run, Patterns.from_options(run.target["boot"]["ready"]))
    assert set(boot.meta["systemd_analyze"]) == {"time", "blame", "critical-chain"}
    units = boot.of_kind(Kind.UNIT)
    blamed = {ev.name for ev in units if (ev.attrs or {}).get("source") == "blame"}
    assert rootfs.APP_UNIT in blamed and not {"systemd-journald.service", "systemd-udevd.service",
                                              "systemd-udev-trigger.service", "systemd-tmpfiles-setup.service"} & blamed
    assert any(ev.name == rootfs.APP_UNIT and (ev.attrs or {}).get("critical_chain") for ev in units)
    console = bootlab_capture.console_bytes(store.capture(1))
    assert b"Queued start job for default target bootlab.target" in console
    assert b"vivid-000: V4L2 capture device registered as video0" in console.split(b"bootlab-mark: modules.end")[0]
    assert b"sysinit.target" not in console.split(b"BOOTLAB READY")[0]
    assert b"reboot: Power down" in console  # the guest powered itself off after printing the view
    assert main(["show", "1", "--db", db]) == 0
    assert rootfs.APP_UNIT in capsys.readouterr().out


def _flash_boot(tmp_path: Path, capsys, filesystem: str) -> tuple[dict[str, float], bytes]:
    """A boot of the demo device with its root on the emulated NAND, on the smallest flash
    that holds the image (the 128 MiB chip): its metrics and console text."""
    _db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': f'filesystem = "{filesystem}"\nflash_mib = 128'})
    run = store.get(1)
    assert run.status == "ok", run.reason
    # The virtio disk only carries the image the flash is programmed from.
    assert run.target["disk_path"].endswith(f".{filesystem}") and "readonly=on" in " ".join(run.command)
    return run.metrics, bootlab_capture.console_bytes(store.capture(1))


def test_a_ubifs_root_on_emulated_nand_boots_to_ready(tmp_path, capsys):
    metrics, console = _flash_boot(tmp_path, capsys, "ubifs")
    # Programming the flash is a step of its own, apart from the attach and the mount the seed measured.
    assert {"step:flash-program", "step:ubi-attach", "step:mount-root"} <= set(metrics)
    assert b"ubi0: attaching mtd0" in console and b'UBIFS (ubi0:0): UBIFS: mounted UBI device 0, volume 0, name "rootfs"' in console
    assert b"NAND 128MiB" in console


def test_a_jffs2_root_on_emulated_nand_boots_to_ready(tmp_path, capsys):
    metrics, console = _flash_boot(tmp_path, capsys, "jffs2")
    assert {"step:flash-program", "step:mount-root"} <= set(metrics) and "step:ubi-attach" not in metrics
    assert b"jffs2: version 2.2. (NAND)" in console and b"NAND 128MiB" in console


def test_bootchart_on_prints_systemd_bootcharts_svg_which_is_stored_and_read_back(tmp_path, capsys):
    # systemd-bootchart is init (it forks systemd as PID 1) and samples /proc until the guest,
    # after ready and the wait for the boot to finish, stops it and prints its SVG.
    db, store = _boot(tmp_path, capsys, **{'filesystem = "ext4"': 'filesystem = "ext4"\nbootchart = true'})
    run = store.get(1)
    assert run.status == "ok", run.reason
    boot = read_run(store, run, Patterns.from_options(run.target["boot"]["ready"]))
    assert boot.meta["systemd_bootchart_svg"].lstrip().startswith("<?xml")
    processes = {ev.name: ev for ev in boot.of_kind(Kind.PROCESS)}
    assert processes["grabber"].attrs["ppid"] == 1 and "systemd-journal" in processes  # PID 1 under systemd
    # On the printk clock, aligned with the console: the grabber runs before ready.
    grabber, ready = processes["grabber"], boot.marks(Mark.READY)[-1]
    assert boot.to_ref(grabber.clock, grabber.t) < boot.to_ref(ready.clock, ready.t)
    assert main(["show", "1", "--db", db]) == 0
    assert "Longest-lived processes (bootchart):" in capsys.readouterr().out
