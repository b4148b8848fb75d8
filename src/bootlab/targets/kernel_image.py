"""The x86 kernel image: what is inside a bzImage, and the uncompressed vmlinux that QEMU
can boot directly through the kernel's PVH entry point (no decompression at boot).

The boot protocol's setup header says where the compressed payload is (payload_offset,
payload_length, since protocol 2.08); the payload is decompressed with Python's own codecs
or, for lz4, zstd and lzo, with the command-line tools `make setup` installs. The kernel's
build appends the uncompressed size (4 bytes) to the payload; the tools refuse that trailer.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import packages

MAGICS = (
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x02\x21\x4c\x18", "lz4"),
    (b"\x89LZO", "lzo"),
    (b"BZh", "bzip2"),
    (b"\x5d\x00\x00", "lzma"),
)


TOOLS = {"lz4": "lz4", "zstd": "zstd", "lzo": "lzop"}


class ImageError(Exception):
    pass


@dataclass
class ImageInfo:
    path: Path
    size: int
    compression: str
    protocol: str


def _payload(data: bytes) -> tuple[bytes, str]:
    if data[0x202:0x206] != b"HdrS":
        raise ImageError("not an x86 bzImage (no HdrS setup header)")
    protocol = struct.unpack_from("<H", data, 0x206)[0]
    if protocol < 0x208:
        raise ImageError(f"boot protocol {protocol >> 8}.{protocol & 0xff} has no payload fields")
    setup_sects = data[0x1F1] or 4
    start = (setup_sects + 1) * 512
    offset, length = struct.unpack_from("<II", data, 0x248)
    payload = data[start + offset:start + offset + length]
    for magic, name in MAGICS:
        if payload.startswith(magic):
            return payload, name
    return payload, "unknown"


def info(path: Path) -> ImageInfo:
    data = path.read_bytes()
    payload, compression = _payload(data)
    protocol = struct.unpack_from("<H", data, 0x206)[0]
    return ImageInfo(path, len(data), compression, f"{protocol >> 8}.{protocol & 0xff:02d}")


def _decompress_with_tool(tool: str, payload: bytes) -> bytes:
    try:
        done = subprocess.run([tool, "-dc"], input=payload, capture_output=True, check=False)
    except FileNotFoundError:
        raise ImageError(f"{tool} is not installed (make setup installs it)") from None
    if done.returncode != 0:
        raise ImageError(f"{tool} -dc failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def extract_vmlinux(bzimage: Path, out: Path) -> Path:
    """Write the uncompressed ELF kernel inside a bzImage (cached next to `out`)."""
    if out.exists() and out.stat().st_mtime >= bzimage.stat().st_mtime:
        return out
    payload, compression = _payload(bzimage.read_bytes())
    if compression in ("xz", "lzma"):
        elf = lzma.LZMADecompressor().decompress(payload)  # the kernel appends its size: ignore trailing bytes
    elif compression == "gzip":
        elf = gzip.decompress(payload)
    elif compression == "bzip2":
        elf = bz2.decompress(payload)
    elif compression in TOOLS:
        elf = _decompress_with_tool(TOOLS[compression], payload[:-4])
    else:
        raise ImageError(f"cannot decompress a {compression} kernel payload here")
    if not elf.startswith(b"\x7fELF"):
        raise ImageError("the decompressed payload is not an ELF file")
    packages.write_atomically(out, elf)
    return out
