"""Running a foreign architecture's programs on this machine: qemu-user-static through the
kernel's binfmt_misc, which mmdebstrap needs to run a foreign Debian tree's maintainer
scripts (rootfs.py, `mmdebstrap --arch=arm64`).  mmdebstrap only checks that they run; it
does not register the interpreter.  On a machine without systemd-binfmt (a container, where
qemu-user-static's postinst leaves binfmt_misc alone) nothing does: bootlab, as root, mounts
binfmt_misc if need be and registers Debian's entry (/usr/lib/binfmt.d/qemu-<cpu>.conf, whose
F flag opens the interpreter now, so it also runs inside mmdebstrap's namespaces).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MOUNT = Path("/proc/sys/fs/binfmt_misc")
CONFIG = Path("/usr/lib/binfmt.d")
QEMU_CPU = {"arm64": "aarch64"}  # Debian's architecture -> QEMU's (and binfmt_misc's entry) name
PACKAGE = "qemu-user-static"


class BinfmtError(Exception):
    pass


def host_arch() -> str:
    """This machine's Debian architecture."""
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def ensure(arch: str, mount: Path = MOUNT, config: Path = CONFIG) -> None:
    """Make `arch`'s programs run here, or say what to do (BinfmtError)."""
    if arch == host_arch():
        return
    if arch not in QEMU_CPU:
        raise BinfmtError(f"no qemu-user interpreter known for architecture {arch} (known: {', '.join(QEMU_CPU)})")
    cpu = QEMU_CPU[arch]
    entry = mount / f"qemu-{cpu}"
    if entry.exists():
        if entry.read_text().splitlines()[0].strip() != "enabled":
            raise BinfmtError(f"binfmt_misc's {entry.name} entry is disabled: run `echo 1 > {entry}` as root")
        return
    conf = config / f"qemu-{cpu}.conf"
    if not conf.is_file():
        raise BinfmtError(f"{conf} not found: install {PACKAGE} (run make setup) to build a Debian tree for {arch}")
    do = (f"as root: mount -t binfmt_misc binfmt_misc {mount} (if it is not mounted), then "
          f"grep -v '^#' {conf} > {mount}/register")
    if os.geteuid() != 0:
        raise BinfmtError(f"binfmt_misc has no {entry.name} entry (needed to run {arch} programs for mmdebstrap); {do}")
    try:
        if not (mount / "register").exists():
            subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(mount)], capture_output=True,
                           text=True, check=True)
        line = next(l for l in conf.read_text().splitlines() if l.strip() and not l.startswith("#"))
        (mount / "register").write_text(line)
    except (OSError, subprocess.CalledProcessError, StopIteration) as err:
        detail = getattr(err, "stderr", "") or str(err)
        raise BinfmtError(f"registering {conf} with binfmt_misc failed ({detail.strip()}); {do}") from None
