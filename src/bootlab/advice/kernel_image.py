"""Kernel image and initramfs: compressed or not, which compressor, with or without an
initramfs.

The numbers behind the estimates come from seed 000 (Table I): one 1,804,192-byte ARM
kernel compressed with LZO (918,716 bytes, 80 ms to decompress, boot 1128 ms), GZIP
(845,376 bytes, boot 1160 ms) and LZMA (635,276 bytes, boot 1993 ms).  Decompression time
relative to LZO follows from the boot times: GZIP (80 + 32) / 80 = 1.4, LZMA
(80 + 865) / 80 = 11.8.  XZ is LZMA2, the same decoder.  The kernel's own descriptions
place LZ4 faster than LZO (counted as LZO here, the cautious side) and ZSTD about ten
times faster than XZ.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..sources import firmware, kernel_messages as km, lk
from ..targets import kernel_image as images
from ..timeline import Kind, Mark, Phase
from . import Context, Finding, rule
from .common import (between, cite, find_lines, for_reference, mib, one_cpu, phase_span, printing_in, scaled,
                     target_value, took, worth_it)

FAMILY = "kernel image"

DECOMPRESS_COST = {"lz4": 1.0, "lzo": 1.0, "gzip": 1.4, "zstd": 1.2, "xz": 11.8, "lzma": 11.8}
# Uncompressed / compressed size: seed 000's kernel for gzip, lzo, lzma; LZ4 output is
# about 8 % larger than LZO's and ZSTD's about 10 % larger than XZ's (kernel Kconfig).
COMPRESSION_RATIO = {"gzip": 2.13, "lzo": 1.96, "lz4": 1.81, "lzma": 2.84, "xz": 2.84, "zstd": 2.58}
FASTEST = "lz4"
DEFAULT_KERNEL_COMPRESSION = "gzip"  # the Kconfig default when a log does not say
MIN_DECOMPRESS_NS = 300_000_000  # below this, whether to decompress matters little
MIN_INITRAMFS_NS = 100_000_000

_KERNEL_FILE = re.compile(r"load .*(?:zImage|Image|uImage|vmlinu[xz]|bzImage|fitImage|kernel)", re.IGNORECASE)
_INITRD_FILE = re.compile(r"load .*(?:initrd|initramfs|uInitrd|ramdisk|rootfs\.cpio)", re.IGNORECASE)
_RAMDISK_TYPE = re.compile(r"Image Type:.*RAMDisk Image \((?P<alg>\w+) compressed\)")
_KERNEL_SIZES = re.compile(r"Memory: .*\((?P<code>\d+)K kernel code, (?P<rw>\d+)K rwdata, (?P<ro>\d+)K rodata, "
                           r"(?P<init>\d+)K init")
# The initramfs hands over to a real root: initramfs-tools, dracut/systemd, busybox scripts.
_SWITCH_ROOT = re.compile(r"(?:Loading, please wait\.\.\.|Begin: Mounting root file system|"
                          r"(?:systemd\[1\]: )?Switching root|switch_root|dracut|<<< NixOS Stage 1 >>>|"
                          r"EXT[234]-fs \([^)]+\): mounted filesystem)")


def _stage(ctx: Context, pattern: re.Pattern):
    """The bootloader's read of a file (U-Boot "N bytes read in M ms"), if any."""
    for ev in ctx.boot.of_kind(Kind.STAGE):
        if (ev.attrs or {}).get("bytes") and ev.dur and pattern.search(ev.name):
            return ev
    return None


def _reference_image(ctx: Context) -> images.ImageInfo | None:
    """The reference device's compressed kernel, read from the image itself."""
    if target_value(ctx, "target", "image") != "bzimage":
        return None
    path = ctx.target.get("image_path")
    if not path or not Path(path).is_file():
        return None  # a run recorded on another machine: its image is not here
    try:
        return images.info(Path(path))
    except (OSError, images.ImageError):
        return None


def _decompression(ctx: Context) -> tuple[int, list[str], str] | None:
    """What decompressing the kernel took, the lines that show it and what else the time
    holds: the kernel load/decompress phase, from the handover to the kernel's printk clock
    zero; or, for a bootloader that inflates the kernel itself before the handover (LK with
    an Image.gz), that stage of the bootloader's."""
    inflated = next((ev for ev in ctx.boot.of_kind(Kind.STAGE) if ev.name == lk.DECOMPRESS_STAGE and ev.dur), None)
    if inflated is not None:
        return (inflated.dur, [cite(ctx.boot, inflated), f"the bootloader decompressed the kernel in {took(inflated.dur)}"],
                "LK inflates a gzipped kernel (Image.gz) and boots an uncompressed Image as it is: pack "
                "arch/arm64/boot/Image into the boot image (`mkbootimg --kernel`)")
    phase = phase_span(ctx.analysis, Phase.KERNEL_LOAD)
    if phase is None:
        return None
    evidence = [cite(ctx.boot, ev) for ev in (ctx.boot.first_mark(Mark.KERNEL_LOAD),
                                             ctx.boot.first_mark(firmware.DECOMPRESS),
                                             ctx.boot.first_mark(km.BANNER)) if ev is not None]
    evidence.append(f"kernel load/decompress phase: {took(phase.duration)}")
    return phase.duration, evidence, "the phase also holds the kernel's first set-up before its clock starts"


@rule(FAMILY)
def uncompressed(ctx: Context) -> Finding | None:
    """Decompressing costs the decompress phase; an uncompressed image costs the time to
    read its extra bytes, at the rate the bootloader read the compressed one."""
    if target_value(ctx, "target", "image") == "vmlinux":
        return None
    measured = _decompression(ctx)
    if measured is None or measured[0] < MIN_DECOMPRESS_NS:
        return None
    decompress, evidence, held = measured
    notes = [held]
    reference = _reference_image(ctx)
    load = _stage(ctx, _KERNEL_FILE)
    compressed = reference.size if reference else (load.attrs["bytes"] if load else None)
    algorithm = reference.compression if reference else None
    sizes = find_lines(ctx.boot, _KERNEL_SIZES)
    if sizes:
        line, m = sizes[0]
        uncompressed_size = sum(int(m.group(k)) for k in ("code", "rw", "ro", "init")) * 1024
        evidence.append(line.cite())
    elif compressed:
        ratio = COMPRESSION_RATIO.get(algorithm or DEFAULT_KERNEL_COMPRESSION, COMPRESSION_RATIO["gzip"])
        uncompressed_size = int(compressed * ratio)
        notes.append(f"uncompressed size estimated as {ratio} times the image ({algorithm or 'gzip assumed'})")
    else:
        uncompressed_size = None
    if ctx.target:
        saving = decompress
        notes.append("QEMU reads the image from the host: a larger image costs about nothing to load")
        confidence = "medium"
    elif load is not None and compressed and uncompressed_size:
        rate = load.attrs["bytes"] / load.dur  # bytes per ns
        extra = int(max(0, uncompressed_size - compressed) / rate)
        evidence.append(cite(ctx.boot, load))
        evidence.append(f"reading {mib(uncompressed_size - compressed)} more at the measured "
                        f"{load.attrs['bytes'] / load.dur * 1e9 / 1048576:.1f} MiB/s takes {took(extra)}")
        saving = decompress - extra
        confidence = "medium"
    else:
        saving = None
        confidence = "low"
        notes.append("the bootloader's read rate is not in the logs: a larger image may cost more to read than "
                     "decompressing saves (seed 000: +555 ms to read, -80 ms to decompress, on a slow SD card)")
    if saving is not None and not worth_it(saving):
        return None
    return Finding(
        rule="image.uncompressed", family=FAMILY,
        title="Boot an uncompressed kernel image",
        evidence=evidence, saving_ns=saving,
        how="Boot the uncompressed image the kernel build leaves beside the compressed one: arch/arm64/boot/Image "
            "(U-Boot `booti`), arch/arm/boot/Image wrapped with `mkimage -C none` (U-Boot `bootm`), or on x86 the ELF "
            "vmlinux through a loader that uses the PVH entry (CONFIG_PVH).",
        non_intrusive=True, patch=for_reference(ctx, {"target": {"image": "vmlinux"}}), confidence=confidence,
        notes=notes)


@rule(FAMILY)
def compression(ctx: Context) -> Finding | None:
    """A faster decompressor scales the decompress phase by the ratio of decompression
    costs (only when the image's compressor is known)."""
    reference = _reference_image(ctx)
    measured = _decompression(ctx)
    if reference is None or measured is None or reference.compression not in DECOMPRESS_COST:
        return None
    decompress, evidence, _ = measured
    current = reference.compression
    saving = scaled(decompress, 1 - DECOMPRESS_COST[FASTEST] / DECOMPRESS_COST[current])
    if not worth_it(saving):
        return None
    evidence.append(f"{reference.path.name}: {current}-compressed, {mib(reference.size)}")
    notes = [f"decompression cost {current} : {FASTEST} = {DECOMPRESS_COST[current]} : {DECOMPRESS_COST[FASTEST]} "
             "(seed 000, Table I)", f"an {FASTEST} image is larger: it costs more to read on slow storage"]
    patch = None
    if target_value(ctx, "target", "kernel") == "generic":
        patch = {"target": {"kernel": "cloud"}}
        notes.append("on the reference device the LZ4-compressed kernel is the cloud flavour, a trimmed "
                     "configuration too: its measurement includes both changes")
    return Finding(
        rule="image.compression", family=FAMILY,
        title=f"Compress the kernel with {FASTEST.upper()} instead of {current.upper()}",
        evidence=evidence, saving_ns=saving,
        how=f"Build the kernel with CONFIG_KERNEL_{FASTEST.upper()}=y (General setup, Kernel compression mode) "
            "instead of the current mode.",
        non_intrusive=True, patch=patch, confidence="medium", notes=notes)


def _unpacking(ctx: Context) -> tuple[int, list[str]] | None:
    """The kernel unpacking the initramfs: "Trying to unpack rootfs" to "Freeing initrd memory",
    less the serial console's printing in between on a kernel with one CPU (on more, the
    unpacking, a worker since 5.12, may have gone on beside it)."""
    duration, start, end = between(ctx.boot, km.INITRAMFS_UNPACK, km.INITRD_FREED)
    if duration is None:
        return None
    evidence = [cite(ctx.boot, start), cite(ctx.boot, end)]
    printing = printing_in(ctx, ctx.boot.at(start), ctx.boot.at(end)) if one_cpu(ctx.boot) else 0
    if printing:
        duration -= printing
        evidence.append(f"less {took(printing)} of the console printing meanwhile, on the kernel's one CPU")
    return duration, evidence + [f"unpacking took {took(duration)}"]


def _initramfs_compression(ctx: Context) -> tuple[str, str] | None:
    """(compressor, where it is known from)."""
    configured = target_value(ctx, "initramfs", "compression")
    if configured:
        return configured, f"target: initramfs compression = {configured}"
    found = find_lines(ctx.boot, _RAMDISK_TYPE)
    if found:
        line, m = found[0]
        return m.group("alg"), line.cite()
    return None


@rule(FAMILY)
def initramfs_compression(ctx: Context) -> Finding | None:
    measured = _unpacking(ctx)
    known = _initramfs_compression(ctx)
    if measured is None or known is None or known[0] not in DECOMPRESS_COST:
        return None
    unpack, evidence = measured
    current, source = known
    saving = scaled(unpack, 1 - DECOMPRESS_COST[FASTEST] / DECOMPRESS_COST[current])
    if not worth_it(saving):
        return None
    return Finding(
        rule="image.initramfs-compression", family=FAMILY,
        title=f"Compress the initramfs with {FASTEST.upper()} instead of {current.upper()}",
        evidence=evidence + [source], saving_ns=saving,
        how="Pack the initramfs with `lz4 -l` (the legacy frame format the kernel reads) and build the kernel "
            "with CONFIG_RD_LZ4=y.",
        non_intrusive=True, patch=for_reference(ctx, {"initramfs": {"compression": FASTEST}}), confidence="low",
        notes=["unpacking also creates the files: only its decompression part shrinks",
               f"decompression cost {current} : {FASTEST} = {DECOMPRESS_COST[current]} : {DECOMPRESS_COST[FASTEST]}"])


@rule(FAMILY)
def initramfs(ctx: Context) -> Finding | None:
    """An initramfs that only mounts the real root costs its read, its unpacking and its own
    init: all saved by mounting the root directly.  One that is the root can only shrink."""
    unpacking = _unpacking(ctx)
    load = _stage(ctx, _INITRD_FILE)
    handover = find_lines(ctx.boot, _SWITCH_ROOT)
    initrd_time = ctx.boot.meta.get("systemd_time", {}).get("initrd")
    if handover or initrd_time:
        evidence = [line.cite() for line, _ in handover[:2]]
        saving = 0
        for part, ns in (("initramfs read by the bootloader", load.dur if load else None),
                         ("initramfs unpacked by the kernel", unpacking[0] if unpacking else None),
                         ("userspace in the initramfs (systemd-analyze: initrd)", initrd_time)):
            if ns:
                saving += ns
                evidence.append(f"{part}: {took(ns)}")
        if load is not None:
            evidence.append(cite(ctx.boot, load))
        if not worth_it(saving):
            return None
        return Finding(
            rule="image.initramfs", family=FAMILY,
            title="Mount the root filesystem directly, without an initramfs",
            evidence=evidence, saving_ns=saving,
            how="Build the drivers that mount the root into the kernel (storage controller, filesystem), boot with "
                "root=/dev/... rootfstype=... rootwait, and stop loading the initrd (U-Boot: `bootz ${kernel_addr_r} - "
                "${fdt_addr_r}`; GRUB: no initrd line).",
            non_intrusive=True, patch=None, confidence="medium",
            notes=["time spent in the initramfs after the logs stop showing it is not counted"])
    if unpacking is None or unpacking[0] < MIN_INITRAMFS_NS:
        return None
    unpack, evidence = unpacking
    size = ctx.target.get("initrd_size") if ctx.target else None
    notes = ["this initramfs is the root filesystem: removing it is not an option, shrinking it is"]
    if size:
        evidence.append(f"target: initramfs of {mib(size)} uncompressed")
        notes.append(f"unpacking costs about {took(int(unpack * 1048576 / size))} per MiB")
    return Finding(
        rule="image.initramfs", family=FAMILY,
        title="Shrink the initramfs to what the application needs",
        evidence=evidence, saving_ns=None,
        how="Remove from the initramfs what the boot to the application does not use (tools, modules, locales); "
            "move the rest to a filesystem mounted after the application starts.",
        non_intrusive=True, patch=None, confidence="low", notes=notes)
