"""systemd's view of a boot, printed by the systemd device's guest after ready and read from
the console capture (sources/systemd_analyze.ConsoleOutputs), and the userspace candidates
the optimizer draws from it (lab/candidates.userspace).  The capture is a real boot of
demo/systemd.toml (tests/data/real/systemd.capture.gz)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from bootlab.lab.campaign import NAME
from bootlab.lab.candidates import Facts, builtin, facts_from, userspace
from bootlab.lab.patch import apply
from bootlab.sources import read
from bootlab.sources.systemd_analyze import marker
from bootlab.targets import initramfs, packages, reference, rootfs
from bootlab.targets.description import TargetError
from bootlab.timeline import Clock, Kind

DATA = Path(__file__).parent / "data" / "real"
DEMO = Path(__file__).resolve().parents[1] / "demo" / "systemd.toml"


@pytest.fixture(scope="module")
def boot():
    return read([str(DATA / "systemd.capture.gz")])


def test_the_outputs_printed_after_ready_are_read_into_the_timeline(boot):
    assert sorted(boot.meta["systemd_analyze"]) == ["blame", "critical-chain", "time"]
    assert boot.meta["systemd_time"] == {"kernel": 3_966_000_000, "userspace": 12_606_000_000}
    assert not [d for d in boot.diagnostics if "systemd" in d.message]
    units = boot.of_kind(Kind.UNIT)
    blamed = {ev.name: ev.dur for ev in units if (ev.attrs or {}).get("source") == "blame"}
    assert blamed["e2scrub_reap.service"] == 2_595_000_000 and len(blamed) >= 25
    chain = [ev for ev in units if (ev.attrs or {}).get("critical_chain")]
    assert chain[0].name == rootfs.APP_UNIT and chain[-1].name == "-.slice"
    # The chain's @ times are on systemd's userspace clock, linked to the kernel's by `time`.
    assert all(ev.clock == Clock.USERSPACE for ev in chain) and Clock.USERSPACE in boot.clocks
    # Each unit names the console line it came from.
    lines = gzip.decompress((DATA / "systemd.capture.gz").read_bytes()).decode(errors="replace").splitlines()
    e2scrub = next(ev for ev in units if ev.name == "e2scrub_reap.service" and ev.attrs.get("source") == "blame")
    assert "e2scrub_reap.service" in lines[e2scrub.line - 1]


def test_an_output_cut_short_is_a_warning_not_a_silent_loss(tmp_path):
    text = gzip.decompress((DATA / "systemd.capture.gz").read_bytes())
    end = marker("blame", "end").encode()
    cut = tmp_path / "cut.capture"
    cut.write_bytes(text.replace(end, b"", 1))
    b = read([str(cut)])
    assert any("no end marker" in d.message for d in b.diagnostics)
    assert "blame" not in b.meta["systemd_analyze"] and "time" in b.meta["systemd_analyze"]


def test_a_marker_after_a_login_prompt_on_its_line_still_opens_its_output(tmp_path):
    text = gzip.decompress((DATA / "systemd.capture.gz").read_bytes())
    begin = marker("time", "begin").encode()
    prompted = tmp_path / "prompted.capture"
    prompted.write_bytes(text.replace(begin, b"bootlab login: " + begin, 1))
    b = read([str(prompted)])
    assert sorted(b.meta["systemd_analyze"]) == ["blame", "critical-chain", "time"]
    assert "systemd_time" in b.meta


def test_the_userspace_candidates_come_from_the_collected_chain(boot):
    t = reference.load(str(DEMO))
    facts = facts_from(boot)
    found = {c.name: c for c in userspace(t, facts)}
    assert "mask-e2scrub_reap.service" in found and "mask-getty-static.service" in found
    fuse = userspace(t, Facts(units=[("modprobe@fuse.service", 1_140_000_000)]))[0]
    assert fuse.name == "mask-modprobe-fuse.service" and fuse.patch == {"rootfs": {"mask": ["modprobe@fuse.service"]}}
    assert all(NAME.match(name) for name in found)  # each a campaign variant's name
    # Nothing on the application's critical chain, nor what systemd itself stands on.
    masked = set(found["mask-off-chain"].patch["rootfs"]["mask"])
    assert not masked & facts.chain and "systemd-journald.service" not in masked
    assert not any(m.endswith((".device", ".target", ".slice")) for m in masked)
    for name in ("app-early", "journal-volatile", "no-status", "init-app", "rootfs-ro", "rootfs-erofs"):
        assert name in found
    assert {c.name for c in builtin(t, facts)} >= set(found)
    # A device without a Debian root has none of them.
    assert userspace(reference.from_dict({"name": "busybox"}), facts) == []
    assert not userspace(t, Facts())[0].name.startswith("mask-")


def test_masks_from_two_patches_add_up():
    t = reference.load(str(DEMO))
    once = apply(t.to_dict(), {"rootfs": {"mask": ["e2scrub_reap.service"]}})
    twice = apply(once, {"rootfs": {"mask": ["getty-static.service", "e2scrub_reap.service"]}})
    assert twice["rootfs"]["mask"] == ["e2scrub_reap.service", "getty-static.service"]
    early = apply(twice, {"rootfs": {"app_unit": {"DefaultDependencies": "no"}}})
    assert reference.from_dict(early).rootfs.app_unit == {"DefaultDependencies": "no"}


@pytest.mark.parametrize("text, message", [
    ('[rootfs]\nfilesystem = "yaffs2"\n', r"bad.toml:3.*rootfs.filesystem: filesystem must be one of ext4"),
    ('[rootfs]\nfilesystem = "ubifs"\nflash_mib = 4096\n', r"bad.toml:4.*rootfs.flash_mib: flash_mib must be 1..2048"),
    ('[initramfs]\napp = "grabber"\n[rootfs]\n', r"initramfs.app: with a \[rootfs\] table"),
    ('[rootfs]\nmask = ["bootlab-app.service"]\n', "cannot be masked"),
    ('[rootfs]\nprune_units = true\n', r"bad.toml:3.*rootfs.prune_units: prune_units needs boot_target"),
    ('[rootfs]\nboot_target = "graphical"\n',
     r"bad.toml:3.*rootfs.boot_target: boot_target must be one of multi-user, app"),
])
def test_a_rootfs_table_with_a_mistake_names_its_file_and_line(tmp_path, text, message):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n' + text)
    with pytest.raises(TargetError, match=message):
        reference.load(str(bad))


def test_the_guest_scripts_and_units():
    r = reference.load(str(DEMO)).rootfs
    script = rootfs.analyze_script()
    assert script.index("is-system-running --wait") < script.index(marker("time", "begin"))
    assert f"critical-chain {rootfs.APP_UNIT}" in script
    assert r.kernel_modules() == ["virtio_pci", "virtio_blk", "crc32c_generic", "ext4"]
    assert not rootfs.RootfsSection(filesystem="squashfs-xz").writable


def test_a_flash_root_is_programmed_attached_and_mounted_from_the_emulated_nand():
    # The seed's 470 MiB partition: the 512 MiB chip, its first 3760 erase blocks as mtd0.
    r = rootfs.RootfsSection(filesystem="ubifs", flash_mib=470)
    assert r.kernel_modules()[2] == "nandsim id_bytes=0x20,0xac,0x00,0x15 parts=3760"
    assert r.device == "ubi0:rootfs" and r.writable and not r.disk_writable
    assert list(r.flash_steps()) == ["flash-program", "ubi-attach"]
    assert set(r.flash_programs()) == {"/usr/sbin/ubiformat", "/usr/sbin/ubiattach"}
    assert "parts" not in rootfs.RootfsSection(filesystem="jffs2", flash_mib=256).nandsim()
    kernel = packages.kernel("generic", fetch=False)
    files = rootfs.overlay(rootfs.RootfsSection(filesystem="jffs2"), kernel, {})
    assert files["/etc/fstab"][0] == b"mtd0 / jffs2 rw 0 0\n"  # no fsck on flash
    spec = initramfs.InitramfsSpec(kernel, init="switch-root", steps=r.flash_steps(),
                                   root=f"{r.device} ubifs ro /sbin/init")
    script = initramfs.init_files(spec, [], [])["init"]
    # No wait for a block device that a flash root never is; the steps come before the mount.
    assert "wait_block ubi0:rootfs" not in script
    assert script.index("ubiformat /dev/mtd0") < script.index("ubiattach") < script.index("mount -t ubifs")
    assert rootfs.RootfsSection(filesystem="squashfs-ubi").device == "/dev/ubiblock0_0"
    assert not rootfs.RootfsSection().flash_steps() and not rootfs.RootfsSection().flash_programs()


def test_the_switch_root_initramfs_mounts_the_root_and_hands_over():
    kernel = packages.kernel("generic", fetch=False)
    spec = initramfs.InitramfsSpec(kernel, init="switch-root", root="/dev/vda erofs ro /sbin/init")
    script = initramfs.init_files(spec, [], [])["init"].splitlines()
    assert script[-1] == "exec switch_root /newroot /sbin/init"
    assert any(line.startswith("mount -t erofs -o ro /dev/vda /newroot") for line in script)
    with pytest.raises(initramfs.InitramfsError, match="DEVICE FSTYPE OPTIONS INIT"):
        initramfs.init_files(initramfs.InitramfsSpec(kernel, init="switch-root", root="/dev/vda"), [], [])


def test_a_unit_name_the_console_shortened_is_made_whole_where_the_logs_tell(boot):
    """systemd's status lines shorten names to the console's width
    (`modprobe@dm_mod.s… - Load Kernel Module dm_mod`) and say `Stopped target X`: 88 of the
    capture's 226 unit events had such a name, and the blame list, the chart and the masks
    saw several units where there was one.  A shortened name is made whole where exactly one
    unit the logs name in full fits it (25 left, each ambiguous without the kernel's own
    line: `systemd-tmpfiles-s…` is -setup or -setup-dev, and marked so)."""
    units = boot.of_kind(Kind.UNIT)
    assert not [ev.name for ev in units if ev.name.startswith("target ")]
    finished = [ev for ev in units if ev.name == "modprobe@dm_mod.service" and (ev.attrs or {}).get("verb") == "Finished"]
    assert any("…" in ev.attrs["text"] for ev in finished)  # a status line's, made whole
    shortened = [ev for ev in units if "…" in ev.name]
    assert len(shortened) == 25 and all(ev.attrs.get("shortened") for ev in shortened)


def test_the_minimal_boot_target_and_the_early_modules_in_the_image():
    """boot_target = "app": default.target is bootlab.target, which wants only the
    application's unit and the analyze unit, neither with default dependencies (they would
    pull in sysinit.target and basic.target); modules_early: the initramfs loads vivid with
    its parameters, and the root has neither its module nor a modprobe line."""
    kernel = packages.kernel("generic", fetch=False)
    demo = reference.load(str(DEMO)).rootfs
    stock = rootfs.overlay(demo, kernel, {})
    assert "/etc/systemd/system/default.target" not in stock
    assert f"/etc/systemd/system/multi-user.target.wants/{rootfs.APP_UNIT}" in stock
    assert b"ExecStartPre=/sbin/modprobe vivid n_devs=1 node_types=0x1" in stock[f"/etc/systemd/system/{rootfs.APP_UNIT}"][0]
    assert any(path.endswith("/vivid.ko") for path in stock)
    assert demo.mount_options == "ro" and demo.remounted  # systemd checks and remounts it

    r = apply(reference.load(str(DEMO)).to_dict(), {"rootfs": {"boot_target": "app", "modules_early": True}})
    r = reference.from_dict(r).rootfs
    files = rootfs.overlay(r, kernel, {})
    assert files["/etc/systemd/system/default.target"] == (f"/etc/systemd/system/{rootfs.APP_TARGET}", 0)
    wants = sorted(p for p in files if ".wants/" in p)
    assert wants == [f"/etc/systemd/system/{rootfs.APP_TARGET}.wants/{u}" for u in (rootfs.ANALYZE_UNIT, rootfs.APP_UNIT)]
    for unit in (rootfs.APP_UNIT, rootfs.ANALYZE_UNIT):
        text = files[f"/etc/systemd/system/{unit}"][0].decode()
        assert "DefaultDependencies=no" in text and f"WantedBy={rootfs.APP_TARGET}" in text
    # The analyze unit still runs after the application's, so systemd's view is collected.
    assert f"After={rootfs.APP_UNIT}" in files[f"/etc/systemd/system/{rootfs.ANALYZE_UNIT}"][0].decode()
    app_unit = files[f"/etc/systemd/system/{rootfs.APP_UNIT}"][0].decode()
    assert "modprobe" not in app_unit and not any(path.endswith("/vivid.ko") for path in files)
    assert r.kernel_modules()[-1] == "vivid n_devs=1 node_types=0x1"
    assert r.kernel_modules()[:4] == demo.kernel_modules()
    # Nothing checks or remounts the root: the initramfs mounts it as it stays.
    assert not r.remounted and r.mount_options == "rw"
    assert rootfs.RootfsSection(boot_target="app", read_only=True).mount_options == "ro"
    # init= the application with the modules early: no modprobe in its script either.
    script = rootfs.overlay(rootfs.RootfsSection(init="app", modules_early=True, modules=["vivid"]), kernel, {})
    assert b"modprobe" not in script[rootfs.APP_INIT][0]


def test_the_minimal_boot_target_is_a_candidate():
    t = reference.load(str(DEMO))
    found = {c.name: c for c in userspace(t, Facts())}
    assert found["boot-target-app"].patch == {"rootfs": {"boot_target": "app"}}
    assert found["modules-early"].patch == {"rootfs": {"modules_early": True}}
    assert found["systemd-log-warning"].patch == {"target": {"append": "systemd.log_level=warning"}}
    done = reference.from_dict(apply(t.to_dict(), {"rootfs": {"boot_target": "app", "modules_early": True},
                                                   "target": {"append": "systemd.log_level=warning"}}))
    assert not {"boot-target-app", "modules-early", "systemd-log-warning"} & {c.name for c in userspace(done, Facts())}
    # The application as PID 1 has no boot target and no systemd log.
    app = reference.from_dict(apply(t.to_dict(), {"rootfs": {"init": "app"}}))
    assert not {"boot-target-app", "systemd-log-warning"} & {c.name for c in userspace(app, Facts())}
    # Pruning the unit files comes once the boot target is bootlab.target, never before.
    assert "prune-units" not in found and "prune-units" in {c.name for c in userspace(done, Facts())}


def test_pruning_keeps_the_targets_slices_and_the_power_off_and_never_bootlabs_units(tmp_path):
    """prune_units' commands, run on a tree shaped like Debian's: what bootlab.target's boot
    and the power-off load stays, the rest of /usr/lib/systemd/system and its .wants links go,
    /etc/systemd/system is not touched."""
    import subprocess
    units = tmp_path / "usr/lib/systemd/system"
    (units / "sysinit.target.wants").mkdir(parents=True)
    etc = tmp_path / "etc/systemd/system"
    etc.mkdir(parents=True)
    names = ["poweroff.target", "-.slice", "system.slice", "systemd-poweroff.service", "emergency.service",
             "systemd-udevd.service", "systemd-journald.socket", "tmp.mount", "apt-daily.timer", "getty@.service"]
    for name in names:
        (units / name).write_text("[Unit]\n")
    (units / "sysinit.target.wants" / "systemd-udevd.service").symlink_to("../systemd-udevd.service")
    (units / "dbus-org.freedesktop.login1.service").symlink_to("systemd-logind.service")
    (etc / rootfs.APP_UNIT).write_text("[Unit]\n")
    subprocess.run(["sh", "-c", rootfs._prune_units(str(tmp_path))], check=True)
    assert sorted(p.name for p in units.iterdir()) == sorted(["poweroff.target", "-.slice", "system.slice",
                                                              "systemd-poweroff.service", "emergency.service"])
    assert (etc / rootfs.APP_UNIT).exists()
