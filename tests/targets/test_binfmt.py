"""Running arm64 programs here for mmdebstrap (targets/binfmt.py): bootlab registers Debian's
qemu-user-static entry with binfmt_misc when it has none, and says what to do when it cannot.
The binfmt_misc directory and binfmt.d are stand-ins in a temporary directory: the machine's
own registration is left alone (the booting test of the arm64 systemd device uses it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootlab.targets import binfmt, rootfs

CONF = ":qemu-aarch64:M::\\x7f\\x45\\x4c\\x46:\\xff\\xff:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:OPF\n"


def _dirs(tmp_path: Path, conf: bool = True) -> tuple[Path, Path]:
    mount, config = tmp_path / "binfmt_misc", tmp_path / "binfmt.d"
    mount.mkdir()
    (mount / "register").write_text("")
    config.mkdir()
    if conf:
        (config / "qemu-aarch64.conf").write_text("# from qemu-user-static\n" + CONF)
    return mount, config


def test_without_an_entry_debians_line_is_registered(tmp_path):
    mount, config = _dirs(tmp_path)
    binfmt.ensure("arm64", mount, config)
    assert (mount / "register").read_text() == CONF.strip()


def test_an_enabled_entry_is_left_alone_and_the_hosts_architecture_needs_none(tmp_path):
    mount, config = _dirs(tmp_path, conf=False)
    (mount / "qemu-aarch64").write_text("enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\n")
    binfmt.ensure("arm64", mount, config)
    binfmt.ensure(binfmt.host_arch(), mount, config)
    assert (mount / "register").read_text() == ""


@pytest.mark.parametrize("arch, entry, conf, message", [
    ("arm64", None, False, r"binfmt.d/qemu-aarch64.conf not found: install qemu-user-static \(run make setup\)"),
    ("arm64", "disabled\n", True, r"qemu-aarch64 entry is disabled: run `echo 1 > .*qemu-aarch64` as root"),
    ("riscv64", None, True, "no qemu-user interpreter known for architecture riscv64"),
])
def test_what_cannot_be_run_says_what_to_do(tmp_path, arch, entry, conf, message):
    mount, config = _dirs(tmp_path, conf)
    if entry:
        (mount / "qemu-aarch64").write_text(entry)
    with pytest.raises(binfmt.BinfmtError, match=message):
        binfmt.ensure(arch, mount, config)


def test_the_debian_trees_cache_key_has_the_architecture_amd64s_unchanged(tmp_path, monkeypatch):
    # Both trees already built: their names say which is which, and amd64's is the name it
    # had before there were two architectures (rootfs.debian_tree returns a cached tree as is).
    monkeypatch.setenv("BOOTLAB_CACHE", str(tmp_path))
    r = rootfs.RootfsSection()
    key = rootfs._digest(r.suite, r.mirror, r.variant, r.all_packages)
    arm = rootfs._digest(r.suite, r.mirror, r.variant, r.all_packages, "arm64")
    for name in (f"debian-bookworm-{key}.tar", f"debian-bookworm-arm64-{arm}.tar"):
        (tmp_path / "rootfs").mkdir(exist_ok=True)
        (tmp_path / "rootfs" / name).write_bytes(b"")
    assert rootfs.debian_tree(r).name == f"debian-bookworm-{key}.tar"
    assert rootfs.debian_tree(r, "arm64").name == f"debian-bookworm-arm64-{arm}.tar" and arm != key
