"""The bzImage reader and the uncompressed-kernel extraction, on the real Debian kernels."""

from __future__ import annotations

import pytest

from bootlab.sources import read
from bootlab.targets import kernel_image, packages, strategy
from bootlab.targets.reference import Target, build
from bootlab.timeline import Mark


@pytest.mark.parametrize("flavour, compression", [("generic", "xz"), ("cloud", "lz4")])
def test_extract_vmlinux_of_each_debian_compression(tmp_path, flavour, compression):
    k = packages.kernel(flavour)
    image = kernel_image.info(k.image)
    assert image.compression == compression and image.protocol >= "2.08"
    elf = kernel_image.extract_vmlinux(k.image, tmp_path / "vmlinux")
    head = elf.read_bytes()[:64]
    assert head.startswith(b"\x7fELF") and head[4] == 2  # a 64-bit ELF
    assert elf.stat().st_size > 2 * image.size


def test_extract_vmlinux_into_a_folder_not_made_yet(tmp_path):
    """A fresh machine's cache has no `artifacts` folder until its first writer makes it."""
    k = packages.kernel("cloud")
    elf = kernel_image.extract_vmlinux(k.image, tmp_path / "artifacts" / "vmlinux")
    assert elf.read_bytes()[:4] == b"\x7fELF"


def test_not_a_bzimage_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00" * 4096)
    with pytest.raises(kernel_image.ImageError, match="not an x86 bzImage"):
        kernel_image.extract_vmlinux(junk, tmp_path / "out")


@pytest.mark.qemu
def test_cloud_kernel_boots_uncompressed_through_pvh(tmp_path):
    t = Target()
    t.target.kernel, t.target.image = "cloud", "vmlinux"
    built = build(t)
    assert built.image.read_bytes()[:4] == b"\x7fELF"
    result = strategy.boot(built, str(tmp_path / "boot.cap"))
    assert result.status == "ok", result.reason
    boot = read([result.capture])
    assert boot.first_mark(Mark.READY) is not None
