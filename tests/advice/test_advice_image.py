"""Kernel image rules: uncompressed image, compressor, initramfs compression, initramfs."""

from __future__ import annotations

import struct

import pytest

from bootlab.sources import read
from bootlab.timeline import Clock

from .conftest import CORPUS, DATA, FIXTURES, REFERENCE, findings, one, only, target_of

DECOMPRESS_NS = 3_011_640_000  # the reference boot's kernel load/decompress phase


def fake_bzimage(path, magic: bytes):
    """An x86 boot image whose setup header points at a payload starting with `magic`."""
    data = bytearray(0x4000)
    data[0x1F1] = 4  # setup sectors
    data[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", data, 0x206, 0x20F)  # boot protocol 2.15
    payload = magic + bytes(64)
    struct.pack_into("<II", data, 0x248, 0, len(payload))
    data[5 * 512:5 * 512 + len(payload)] = payload
    path.write_bytes(bytes(data))
    return str(path)


def test_uncompressed_on_the_reference_device_saves_the_decompress_phase(reference):
    f = one(reference, "image.uncompressed")
    assert f.patch == {"target": {"image": "vmlinux"}}
    assert abs(f.saving_ns - DECOMPRESS_NS) < 1_000_000


def test_uncompressed_on_a_board_pays_for_reading_the_larger_image():
    f = one(findings(CORPUS / "grabserial-bbb__graboutput.log.reference"), "image.uncompressed")
    assert any("14.2 MiB/s" in e for e in f.evidence)
    # 1.855 s of decompress phase, less 4.4 MiB more read at 14.2 MiB/s
    assert 1_400_000_000 < f.saving_ns < 1_700_000_000
    assert f.patch is None


def test_uncompressed_counts_a_bootloader_that_inflates_the_kernel_itself():
    """LK inflating an Image.gz (370 ms here; a public MSM8916 stick took 270 ms) before the
    handover, the boot image read at 56 MiB/s: the saving is the inflating less reading the
    larger image."""
    f = one(findings(DATA / "lk-gzip-kernel.txt"), "image.uncompressed")
    assert "the bootloader decompressed the kernel in 370ms" in f.evidence
    assert any("56.0 MiB/s" in e for e in f.evidence)
    # 370 ms less (9790 + 1116 + 3376 + 1984 KiB - 5283840 bytes) at 5283840 bytes / 90 ms
    extra = int(((9790 + 1116 + 3376 + 1984) * 1024 - 5283840) / (5283840 / 90_000_000))
    assert f.saving_ns == 370_000_000 - extra
    assert any("mkbootimg" in n for n in f.notes) and not any("first set-up" in n for n in f.notes)


def test_uncompressed_silent_when_already_uncompressed_or_not_measured(reference):
    target = target_of(REFERENCE)
    target["target"]["image"] = "vmlinux"
    assert not only(findings(REFERENCE, target=target), "image.uncompressed")
    assert not only(findings(FIXTURES / "dmesg-plain.txt"), "image.uncompressed")


@pytest.mark.parametrize("magic, algorithm, factor", [(b"\xfd7zXZ\x00", "xz", 11.8), (b"\x1f\x8b", "gzip", 1.4)])
def test_compression_scales_the_decompress_phase(tmp_path, magic, algorithm, factor):
    target = target_of(REFERENCE)
    target["image_path"] = fake_bzimage(tmp_path / "vmlinuz", magic)
    f = one(findings(REFERENCE, target=target), "image.compression")
    assert algorithm.upper() in f.title
    assert abs(f.saving_ns - DECOMPRESS_NS * (1 - 1 / factor)) < 1_000_000
    assert f.patch == {"target": {"kernel": "cloud"}}  # the LZ4 kernel of the reference device


def test_compression_silent_for_lz4_or_an_unknown_image(tmp_path):
    target = target_of(REFERENCE)
    target["image_path"] = fake_bzimage(tmp_path / "vmlinuz", b"\x02\x21\x4c\x18")
    assert not only(findings(REFERENCE, target=target), "image.compression")
    assert not only(findings(CORPUS / "grabserial-bbb__graboutput.log.reference"), "image.compression")


def test_initramfs_compression_from_the_target(reference):
    f = one(reference, "image.initramfs-compression")
    assert f.patch == {"initramfs": {"compression": "lz4"}}
    # The unpacking's printk lines, on the host's clock (the printk clock is aligned along
    # the envelope of what the host saw: close to, not exactly, the printk difference).
    to_host = read([str(REFERENCE)]).clocks[Clock.PRINTK].ref
    unpacking = to_host(2_718_963_000) - to_host(2_576_437_000)
    assert abs(unpacking - (2_718_963_000 - 2_576_437_000)) < 1_000_000
    assert f.saving_ns == round(unpacking * (1 - 1 / 1.4))


def test_initramfs_compression_from_uboot():
    f = one(findings(DATA / "uboot-ramdisk.txt"), "image.initramfs-compression")
    assert any("RAMDisk Image (gzip compressed)" in e for e in f.evidence)
    assert f.saving_ns == round(500_000_000 * (1 - 1 / 1.4))


def test_initramfs_compression_silent_when_the_compressor_is_unknown():
    assert not only(findings(DATA / "initramfs-unpack.txt"), "image.initramfs-compression")


@pytest.mark.parametrize("log, saving", [
    (CORPUS / "grabserial-bbb__graboutput.log.reference", 187_000_000),  # read by U-Boot, then "Loading, please wait"
    (CORPUS / "bpi-r4__bootlog.txt", 240_403_000),  # unpacked, then NixOS stage 1 mounts the root
    (FIXTURES / "systemd-time-full.txt", 2_100_000_000),  # systemd-analyze: 2.100s (initrd)
])
def test_initramfs_that_only_mounts_the_root(log, saving):
    f = one(findings(log), "image.initramfs")
    assert f.title.startswith("Mount the root filesystem directly") and f.saving_ns == saving


def test_initramfs_that_is_the_root_can_only_shrink(reference):
    f = one(reference, "image.initramfs")
    assert f.title.startswith("Shrink") and f.saving_ns is None
    assert any("per MiB" in note for note in f.notes)


def test_initramfs_silent_without_one():
    assert not only(findings(CORPUS / "pine64__bootlog.txt"), "image.initramfs")
