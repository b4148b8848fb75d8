"""What a board's U-Boot finds on its storage at power-on, made with U-Boot's own tools
(Debian's u-boot-tools): the environment saved in flash (mkenvimage) and the boot script
its distro boot loads (mkimage -T script), and a FIT image holding the kernel and the
initramfs (mkimage -f auto).

A saved environment replaces U-Boot's built-in default as a whole: an image holding only
`bootdelay=0` would lose `kernel_addr_r` and every other default.  The image is therefore
the firmware's own default environment, read out of the firmware binary, with the saved
variables over it, which is what `setenv ...; saveenv` at the prompt would have stored.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from .description import TargetError

# One entry of U-Boot's default environment as the binary holds it: NAME=VALUE, NUL-ended.
_ENTRY = re.compile(rb"[A-Za-z0-9_.]+=[\x20-\x7e\t\n]*")


def default_environment(firmware: Path) -> dict[str, str]:
    """U-Boot's built-in default environment (`default_environment[]`), read from its binary:
    the run of NAME=VALUE strings around `bootcmd=`, ended by an empty string."""
    try:
        data = firmware.read_bytes()
    except OSError as err:
        raise TargetError(f"{firmware}: cannot read the firmware: {err.strerror}") from None
    at = data.find(b"\0bootcmd=")
    if at < 0:
        raise TargetError(f"{firmware}: no default environment found (no bootcmd=): not a U-Boot binary?")
    start = at + 1
    # Entries before bootcmd= (the order follows the board's configuration).
    while True:
        before = data.rfind(b"\0", 0, start - 1)
        if before < 0 or not _ENTRY.fullmatch(data[before + 1:start - 1]):
            break
        start = before + 1
    end = data.find(b"\0\0", start)
    env: dict[str, str] = {}
    for entry in data[start:end].split(b"\0"):
        name, _, value = entry.decode().partition("=")
        env[name] = value
    if "bootdelay" not in env:
        raise TargetError(f"{firmware}: the default environment found has no bootdelay: not read right")
    return env


def environment_image(env: dict[str, str], size: int, out: Path) -> None:
    """The environment as U-Boot stores it (CRC, then NAME=VALUE entries), `size` bytes,
    written by mkenvimage to `out`."""
    text = "".join(f"{name}={value}\n" for name, value in env.items())
    with tempfile.NamedTemporaryFile("w", suffix=".env") as fh:
        fh.write(text)
        fh.flush()
        _run(["mkenvimage", "-s", str(size), "-o", str(out), fh.name], "the environment image")


def boot_script(commands: str, out: Path) -> None:
    """A U-Boot script image (what `source` runs; distro boot loads boot.scr.uimg)."""
    with tempfile.NamedTemporaryFile("w", suffix=".cmd") as fh:
        fh.write(commands + "\n")
        fh.flush()
        _run(["mkimage", "-A", "arm64", "-O", "linux", "-T", "script", "-C", "none", "-n", "bootlab",
              "-d", fh.name, str(out)], "the boot script")


def fit_image(kernel: Path, initrd: Path, load: str, out: Path) -> None:
    """One FIT image: the kernel (gzipped if its name ends in .gz; bootm inflates it to
    `load`, where it starts) and the initramfs, each with a CRC U-Boot checks."""
    compression = "gzip" if kernel.suffix == ".gz" else "none"
    _run(["mkimage", "-f", "auto", "-A", "arm64", "-O", "linux", "-T", "kernel", "-C", compression, "-a", load,
          "-e", load, "-n", "bootlab", "-d", str(kernel), "-i", str(initrd), str(out)], "the FIT image")


def _run(argv: list[str], what: str) -> None:
    try:
        subprocess.run(argv, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise TargetError(f"{argv[0]} is missing: install u-boot-tools (make setup) to make {what}") from None
    except subprocess.CalledProcessError as err:
        raise TargetError(f"{argv[0]} failed making {what}: {err.stderr.strip() or err.returncode}") from None
