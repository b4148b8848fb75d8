"""Out-of-tree kernel modules built against the kernel a target boots, as Buildroot's and
Yocto's kernel-module packages are: `make -C KDIR M=DIR modules` with the kernel's own
headers, once per kernel and source, into the cache.

A module carried as a prebuilt `.ko` breaks as soon as the kernel changes: the optimizer's
configuration candidates and a [kconfig] edit give another kernel, which refuses the old
module's version magic.  Named as a Kbuild directory instead ([initramfs] kbuild), the
modules follow the kernel.

A Kbuild file may reach next to its directory (`ccflags-y := -I$(src)/../core`, objects
`../core/x.o`), and Kbuild writes objects beside their sources: the directory's parent is
copied (its sources only) for each build, so two kernels' objects never mix and the source
tree stays clean.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from . import kernel_build, packages
from .description import TargetError

# What a Kbuild build reads: sources, headers, and the Kbuild files.  Generated files
# (*.mod.c) and objects are left behind, as are symbolic links (another build's tree).
SOURCES = (".c", ".h", ".S")
KBUILD_FILES = ("Kbuild", "Makefile", "Kconfig")


def kdir(kernel: packages.Kernel) -> Path:
    """The tree out-of-tree modules build against: a built kernel's kept headers, or
    Debian's headers package for a packaged one."""
    if isinstance(kernel, kernel_build.BuiltKernel):
        return kernel.headers
    return packages.headers(kernel)


def _sources(root: Path) -> list[Path]:
    found = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not Path(top, d).is_symlink())
        for name in sorted(names):
            path = Path(top, name)
            if path.is_symlink() or name.endswith(".mod.c"):
                continue
            if name.endswith(SOURCES) or name in KBUILD_FILES:
                found.append(path)
    return found


def _digest(kernel: packages.Kernel, directory: Path, sources: list[Path]) -> str:
    h = hashlib.sha256(f"{kernel.release} {kernel.arch} {directory.name}".encode())
    for path in sources:
        h.update(str(path.relative_to(directory.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def modules(kernel: packages.Kernel, directory: Path) -> list[Path]:
    """The modules (.ko, without debug information, as Debian installs them) that the Kbuild
    directory `directory` builds for `kernel`: built once, then taken from the cache."""
    if not (directory / "Kbuild").is_file() and not (directory / "Makefile").is_file():
        raise TargetError(f"{directory}: no Kbuild or Makefile (initramfs.kbuild names a Kbuild directory)")
    sources = _sources(directory.parent)
    home = packages.cache_dir() / "kbuild" / _digest(kernel, directory, sources)
    built = sorted(home.glob(f"{directory.name}/*.ko")) if home.is_dir() else []
    if built:
        return built
    home.parent.mkdir(parents=True, exist_ok=True)
    with packages.Locked(home.with_name(home.name + ".lock")):
        built = sorted(home.glob(f"{directory.name}/*.ko")) if home.is_dir() else []
        return built or _build(kernel, directory, sources, home)


def _build(kernel: packages.Kernel, directory: Path, sources: list[Path], home: Path) -> list[Path]:
    work = home.with_name(home.name + ".tmp")
    shutil.rmtree(work, ignore_errors=True)
    for path in sources:
        copy = work / path.relative_to(directory.parent)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
    arch = kernel_build.ARCHITECTURES[kernel.arch]
    target = work / directory.name
    argv = ["make", "-C", str(kdir(kernel)), f"M={target}", f"ARCH={arch.kbuild}", f"-j{os.cpu_count() or 1}",
            *([f"CROSS_COMPILE={arch.cross_compile}"] if arch.cross_compile else []), "modules"]
    done = subprocess.run(argv, capture_output=True, text=True)
    (work / "build.log").write_text(done.stdout + done.stderr)
    kos = sorted(target.glob("*.ko"))
    if done.returncode != 0 or not kos:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise TargetError(f"{directory}: building its modules for {kernel.release} failed "
                          f"(log: {work / 'build.log'}): " + " | ".join(tail))
    subprocess.run([f"{arch.cross_compile}strip", "--strip-debug", *map(str, kos)], check=True)
    shutil.rmtree(home, ignore_errors=True)
    work.rename(home)
    return sorted(home.glob(f"{directory.name}/*.ko"))


def files(kernel: packages.Kernel, kbuild: dict[str, str]) -> dict[str, str]:
    """[initramfs] kbuild ({guest directory: Kbuild directory on the host, absolute}) as
    initramfs files: each module built for `kernel`, in its guest directory."""
    out = {}
    for inside, directory in kbuild.items():
        for ko in modules(kernel, Path(directory)):
            out[f"{inside.rstrip('/')}/{ko.name}"] = str(ko)
    return out
