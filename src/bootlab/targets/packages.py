"""Debian's kernel packages for the reference devices, downloaded and unpacked into the
cache (never installed on the host): amd64 for the x86 reference device, arm64 for the ARM
board (the same flavours and ABI; apt needs the arm64 architecture, scripts/setup adds it).

The kernel ABI (the `NN` in `linux-image-6.1.0-NN-amd64`) is the newest one for which the
generic, cloud and rt images all exist in the machine's apt sources, unless
BOOTLAB_KERNEL_ABI pins one.  The unsigned images are used: they are the same kernels
as the signed ones, without the EFI signature wrapper that QEMU does not need.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# A flavour's package suffix is this prefix and the architecture: "cloud-arm64".
FLAVOURS = {"generic": "", "cloud": "cloud-", "rt": "rt-"}
ARCHITECTURES = ("amd64", "arm64")


class PackageError(Exception):
    pass


def cache_dir() -> Path:
    base = os.environ.get("BOOTLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "bootlab")
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


class Locked:
    """An exclusive lock on a file in the cache: two processes that would make one entry
    (a kernel build, a Debian tree, an unpacked package) wait for each other, and the second
    finds it made."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self):
        self.fh = open(self.path, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def made_once(out: Path, make: Callable[[Path], None]) -> Path:
    """`out`, made by make(out) unless it exists: two processes that want it at once make it
    once (the second waits for the first, then finds it)."""
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with Locked(out.with_name(out.name + ".lock")):
            if not out.exists():
                make(out)
    return out


def write_atomically(path: Path, data: bytes) -> None:
    """Write a cache file so that a reader sees it whole or not at all, also when another
    process writes the same file at the same time (each writes its own temporary file).
    The folder is made if missing: on a fresh machine the first writer into the cache's
    `artifacts` may be any of pytest's workers (CI failed when it was extract_vmlinux)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(name, 0o644)
    os.replace(name, path)


def _run(args: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise PackageError(f"{args[0]} not found: bootlab's reference device needs a Debian host") from None
    if done.returncode != 0:
        raise PackageError(f"{' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def unpack(deb: Path, into: Path) -> None:
    """A package's files under `into` (dpkg-deb -x: no scripts run, nothing installed)."""
    _run(["dpkg-deb", "-x", str(deb), str(into)])


def available_abis() -> list[str]:
    """ABIs ('6.1.0-56') with all three flavours in apt's lists, oldest first."""
    out = _run(["apt-cache", "pkgnames", "linux-image-6.1.0-"])
    found: dict[str, set[str]] = {}
    pattern = re.compile(r"^linux-image-(6\.1\.0-\d+)-(amd64|cloud-amd64|rt-amd64)-unsigned$")
    for name in out.split():
        m = pattern.match(name)
        if m:
            found.setdefault(m.group(1), set()).add(m.group(2))
    complete = [abi for abi, flavours in found.items() if flavours >= {p + "amd64" for p in FLAVOURS.values()}]
    return sorted(complete, key=lambda abi: int(abi.rsplit("-", 1)[1]))


def resolve_abi() -> str:
    pinned = os.environ.get("BOOTLAB_KERNEL_ABI")
    if pinned:
        return pinned
    marker = cache_dir() / "kernel-abi"
    abis = available_abis()
    if not abis:
        if marker.exists():  # offline: keep using what was fetched before
            return marker.read_text().strip()
        raise PackageError("no linux-image-6.1.0-NN-{amd64,cloud-amd64,rt-amd64}-unsigned packages in apt's lists "
                           "(run apt-get update)")
    return abis[-1]


@dataclass(frozen=True)
class Kernel:
    """One unpacked kernel flavour: image, modules and config."""

    abi: str
    flavour: str
    root: Path
    arch: str = "amd64"

    @property
    def release(self) -> str:
        return f"{self.abi}-{FLAVOURS[self.flavour]}{self.arch}"

    @property
    def image(self) -> Path:
        return self.root / "boot" / f"vmlinuz-{self.release}"

    @property
    def config(self) -> Path:
        return self.root / "boot" / f"config-{self.release}"

    @property
    def modules(self) -> Path:
        return self.root / "lib" / "modules" / self.release

    @property
    def package(self) -> str:
        return f"linux-image-{self.release}-unsigned"

    @property
    def headers_package(self) -> str:
        return f"linux-headers-{self.release}"


def download(package: str, arch: str, quiet: bool = True, release: str | None = None, fetch: bool = True) -> Path:
    """The .deb of a package for an architecture ("all" for an architecture-independent one),
    from the cache or (`fetch`) apt-get download; from a `release` of apt's sources
    (bookworm-backports) rather than the candidate when named, kept apart in the cache."""
    debs = cache_dir() / "debs" / (release or "")
    debs.mkdir(parents=True, exist_ok=True)
    name = package.split(":")[0]
    existing = list(debs.glob(f"{name}_*_{arch}.deb"))
    if not existing and not fetch:
        raise PackageError(f"{name} ({release or 'the candidate'}) is not in the cache (run `bootlab target fetch`)")
    if not existing:
        if not quiet:
            print(f"downloading {package} ...", flush=True)
        with tempfile.TemporaryDirectory(dir=debs) as tmp:
            wanted = name if arch == "all" else f"{name}:{arch}"
            _run(["apt-get", "download", f"{wanted}/{release}" if release else wanted], cwd=Path(tmp))
            for f in Path(tmp).glob("*.deb"):
                shutil.move(str(f), debs / f.name)
        existing = list(debs.glob(f"{name}_*_{arch}.deb"))
    if not existing:
        raise PackageError(f"apt-get download {name}:{arch}{'/' + release if release else ''} gave no package file")
    return existing[0]


def kernel(flavour: str, abi: str | None = None, fetch: bool = True, quiet: bool = True,
           arch: str = "amd64") -> Kernel:
    """The unpacked kernel of a flavour, downloading and unpacking it if needed."""
    if flavour not in FLAVOURS:
        raise PackageError(f"unknown kernel flavour {flavour!r}: one of {', '.join(FLAVOURS)}")
    if arch not in ARCHITECTURES:
        raise PackageError(f"unknown architecture {arch!r}: one of {', '.join(ARCHITECTURES)}")
    abi = abi or resolve_abi()
    root = cache_dir() / "pkgroot" / abi
    k = Kernel(abi, flavour, root, arch)
    # amd64 keeps the marker name it had before there were two architectures (caches stay valid).
    done = root / (f".unpacked-{flavour}" if arch == "amd64" else f".unpacked-{flavour}-{arch}")
    if done.exists() and k.image.exists():
        return k
    if not fetch:
        raise PackageError(f"{k.package} is not in the cache (run `bootlab target fetch`)")
    root.mkdir(parents=True, exist_ok=True)
    with Locked(done.with_suffix(".lock")):
        if done.exists() and k.image.exists():
            return k
        deb = download(k.package, arch, quiet)
        if not quiet:
            print(f"unpacking {deb.name} ...", flush=True)
        unpack(deb, root)
        # The package's postinst would run depmod; modules.dep is what load_order() reads.
        _run(["depmod", "-b", str(root), k.release])
        done.touch()
    write_atomically(cache_dir() / "kernel-abi", (abi + "\n").encode())
    return k


def headers(k: Kernel, fetch: bool = True, quiet: bool = True) -> Path:
    """The tree to build modules for a kernel against (Kbuild's KDIR).

    amd64: Debian's headers package, installed on the host by scripts/setup.  Another
    architecture: its headers package unpacked into the cache beside the kernel, its build
    tools the host's own.  That is how Debian cross-builds modules: linux-kbuild-6.1 is
    Multi-Arch: foreign, so the amd64 one (installed with the amd64 headers, of the same
    version) serves the arm64 headers, whose `scripts` link points at it by a relative path,
    and whose Makefile includes the architecture-independent common headers by their
    absolute path in /usr/src (the same package for every architecture).
    """
    if k.arch == "amd64":
        return Path("/usr/src") / k.headers_package
    tree = k.root / "usr" / "src" / k.headers_package
    done = k.root / f".unpacked-headers-{k.flavour}-{k.arch}"
    if not (done.exists() and tree.is_dir()):
        if not fetch:
            raise PackageError(f"{k.headers_package} is not in the cache (run `bootlab target fetch --arch {k.arch}`)")
        with Locked(done.with_suffix(".lock")):
            if not (done.exists() and tree.is_dir()):
                deb = download(k.headers_package, k.arch, quiet)
                if not quiet:
                    print(f"unpacking {deb.name} ...", flush=True)
                unpack(deb, k.root)
                done.touch()
    # scripts -> ../../lib/linux-kbuild-6.1/scripts: that directory inside the cache's root is
    # the host's.
    kbuild = Path(os.readlink(tree / "scripts")).parent.name
    host_kbuild = Path("/usr/lib") / kbuild
    common = Path("/usr/src") / f"linux-headers-{k.abi}-common"
    for needed, package in ((host_kbuild, kbuild), (common, common.name)):
        if not needed.is_dir():
            raise PackageError(f"{needed} is missing: building modules for {k.release} needs the host's {package} "
                               "(scripts/setup installs it with the amd64 headers)")
    link = k.root / "usr" / "lib" / kbuild
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(host_kbuild)
    return tree


def module_dependencies(k: Kernel) -> dict[str, tuple[str, list[str]]]:
    """modules.dep as {module name: (relative path, [dependency names in load order])}."""
    deps: dict[str, tuple[str, list[str]]] = {}
    text = (k.modules / "modules.dep").read_text()
    for line in text.splitlines():
        path, _, rest = line.partition(":")
        name = module_name(path)
        # modules.dep lists dependencies with the one loaded last first.
        deps[name] = (path, [module_name(p) for p in reversed(rest.split())])
    return deps


def module_name(path: str) -> str:
    base = os.path.basename(path)
    return re.sub(r"\.ko(\.(xz|zst|gz))?$", "", base).replace("-", "_")


def load_order(k: Kernel, wanted: list[str]) -> list[tuple[str, str]]:
    """[(name, relative path)] for the wanted modules and everything they need, each once,
    dependencies first."""
    deps = module_dependencies(k)
    order: list[tuple[str, str]] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        key = name.replace("-", "_")
        if key in seen:
            return
        if key not in deps:
            builtin = (k.modules / "modules.builtin").read_text() if (k.modules / "modules.builtin").exists() else ""
            if f"/{name}.ko" in builtin or f"/{key}.ko" in builtin:
                seen.add(key)  # built into this kernel: nothing to load
                return
            raise PackageError(f"module {name!r} is not in {k.release}" + (f" (needed by {chain[-1]})" if chain else ""))
        path, needs = deps[key]
        for dep in needs:
            visit(dep, chain + (key,))
        seen.add(key)
        order.append((key, path))

    for name in wanted:
        visit(name, ())
    return order
