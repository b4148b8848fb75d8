"""U-Boot built by bootlab: Debian's own u-boot source package for the installed
u-boot-qemu's version (the .orig and .debian tarballs its .dsc names, checked against the
.dsc's SHA-256 sums, unpacked by dpkg-source, which applies Debian's quilt series), built
from the board's defconfig as Debian's rules build it (CONFIG_LOCALVERSION set to the Debian
revision), with changes through Kconfig only: Debian's U-Boot plus a configuration.

Configured and cached like the kernel (kconfig.py): fragments and inline options merged
into the defconfig, olddefconfig, every refused request named before compiling; the result
is ~/.cache/bootlab/u-boot/<digest of .config>/u-boot.bin, built out of tree with ccache
and never built twice.  Every built U-Boot has the bootstage report (DEFAULT_OPTIONS): it
prints where its own time went at booti, which the timeline reads.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from . import kernel_build, packages
from .kconfig import (BuildError, Failed, Progress, Request, complete, config_digest, read_config, requests,
                      run, stream)

PACKAGE = "u-boot-qemu"  # the installed firmware whose source is built
SOURCE = "u-boot"
# Where Debian keeps a source package's files: the main archive, and the security archive
# for a version that came from there.
POOLS = ("https://deb.debian.org/debian/pool/main/u/u-boot/",
         "https://deb.debian.org/debian-security/pool/updates/main/u/u-boot/")
BOARDS = {"qemu_arm64": "aarch64-linux-gnu-"}  # defconfig -> cross compiler prefix
SHIPPED_CONFIGS = Path("/usr/share/doc/u-boot-qemu/configs")  # the .config of each board Debian built
TABLE = "[arm64.uboot]"  # where a board's inline options are (the requests' origin)
# What every built U-Boot has: its bootstage report printed at booti and stored in the
# device tree the kernel gets (read back after ready, also when the console is silent):
# records, not levers.
DEFAULT_OPTIONS = {"BOOTSTAGE": "y", "BOOTSTAGE_REPORT": "y", "BOOTSTAGE_FDT": "y"}
# What each board's U-Boot probes or carries that a board booting from the network does not
# use: USB, SCSI/AHCI, NVMe and the EFI loader (NVME_PCI and AHCI select what they drive,
# so they go too).  The board keeps PCI and virtio for its network card.
UNUSED = {"qemu_arm64": {"USB": "n", "CMD_USB": "n", "SCSI": "n", "CMD_SCSI": "n", "AHCI": "n", "NVME_PCI": "n",
                         "NVME": "n", "CMD_NVME": "n", "EFI_LOADER": "n", "CMD_BOOTEFI": "n"}}
# Fixed build stamps (U-Boot's version banner carries the build date): every build of a
# configuration is the same, and ccache reuses what includes the stamp.
BUILD_ENV = {"SOURCE_DATE_EPOCH": "1704067200"}
_SHA256 = re.compile(r"^ ([0-9a-f]{64}) (\d+) (\S+)$")


@dataclass
class UBootConfig:
    """What a built U-Boot is made from (a board's [arm64.uboot] table)."""

    board: str = "qemu_arm64"
    fragments: list[Path] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)  # {"SILENT_CONSOLE": "y"}, applied last

    def requests(self) -> list[Request]:
        """The default options, then the fragments', then the inline ones: the last word wins."""
        defaults = [Request(f"CONFIG_{k}", v, f"{TABLE} (bootlab's default) {k}") for k, v in DEFAULT_OPTIONS.items()]
        asked = requests(self.fragments, self.options, TABLE)
        named = {r.name for r in asked}
        return [r for r in defaults if r.name not in named] + asked


@dataclass
class Outcome:
    firmware: Path  # u-boot.bin
    config: Path
    digest: str
    built: bool  # False: the cache had it
    seconds: float


def cache() -> Path:
    path = packages.cache_dir() / "u-boot"
    path.mkdir(parents=True, exist_ok=True)
    return path


def version() -> str:
    """The installed u-boot-qemu's version (2023.01+dfsg-2+deb12u3): the source built."""
    try:
        return run(["dpkg-query", "-W", "-f=${Version}", PACKAGE]).strip()
    except BuildError:
        raise BuildError(f"{PACKAGE} is not installed (run make setup)") from None


def _fetch(name: str, into: Path) -> Path:
    path = into / name
    if path.exists():
        return path
    tried = []
    for pool in POOLS:
        try:
            with urllib.request.urlopen(pool + name, timeout=60) as response:
                data = response.read()
        except (urllib.error.URLError, OSError) as err:
            tried.append(f"{pool}{name}: {getattr(err, 'reason', err)}")
            continue
        packages.write_atomically(path, data)
        return path
    raise BuildError("cannot download Debian's U-Boot source:\n  " + "\n  ".join(tried))


def checksums(dsc: Path) -> dict[str, tuple[str, int]]:
    """{file: (sha256, size)} from a .dsc's Checksums-Sha256 field."""
    sums, inside = {}, False
    for line in dsc.read_text(errors="replace").splitlines():
        if line.startswith("Checksums-Sha256:"):
            inside = True
            continue
        m = _SHA256.match(line) if inside else None
        if m:
            sums[m.group(3)] = (m.group(1), int(m.group(2)))
        elif inside:
            break
    if not sums:
        raise BuildError(f"{dsc}: no Checksums-Sha256 field")
    return sums


def verify(dsc: Path) -> None:
    """Each file the .dsc names, next to it, has the size and SHA-256 the .dsc gives."""
    for name, (digest, size) in checksums(dsc).items():
        path = dsc.parent / name
        data = path.read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if len(data) != size or got != digest:
            raise BuildError(f"{path}: {len(data)} bytes, sha256 {got}; {dsc.name} says {size} bytes, sha256 {digest}")


def source_tree() -> Path:
    """Debian's U-Boot source with Debian's patches, unpacked once per version."""
    v = version()
    root = cache() / "source"
    tree = root / v
    if (tree / ".complete").exists():
        return tree
    root.mkdir(parents=True, exist_ok=True)
    with packages.Locked(root / f"{v}.lock"):
        if (tree / ".complete").exists():
            return tree
        files = root / "files"
        files.mkdir(exist_ok=True)
        dsc = _fetch(f"{SOURCE}_{v.split(':')[-1]}.dsc", files)
        for name in checksums(dsc):
            _fetch(name, files)
        try:
            verify(dsc)
        except BuildError:
            for name in checksums(dsc):  # downloaded again next time, not trusted as they are
                (files / name).unlink(missing_ok=True)
            raise
        shutil.rmtree(tree, ignore_errors=True)
        # dpkg-source unpacks the .orig tarball, the debian/ one, and applies the quilt series.
        run(["dpkg-source", "--no-copy", "-x", str(dsc), str(tree)])
        (tree / ".complete").touch()
    return tree


def _make(tree: Path, out: Path, board: str, *targets: str, extra: list[str] | None = None) -> list[str]:
    cross = BOARDS[board]
    return ["make", "-C", str(tree), f"O={out}", f"CROSS_COMPILE={cross}", f"CC=ccache {cross}gcc",
            "HOSTCC=ccache gcc", *(extra or []), *targets]


def _env() -> dict[str, str]:
    # As for the kernel: paths hashed relative to the cache, so one configuration's objects
    # serve another's.
    return {**BUILD_ENV, "CCACHE_BASEDIR": str(cache()), "CCACHE_NOHASHDIR": "true"}


def configure(cfg: UBootConfig, tree: Path, out: Path) -> None:
    """out/.config: the board's defconfig as Debian configures it, the default options, the
    fragments and the options.  Raises BuildError naming each request Kconfig refused."""
    if cfg.board not in BOARDS:
        raise BuildError(f"unknown U-Boot board {cfg.board!r}: one of {', '.join(BOARDS)}")
    if shutil.which("ccache") is None:
        raise BuildError("ccache is not installed (run make setup)")
    wanted = cfg.requests()  # a fragment's bad line is reported before make runs
    run(_make(tree, out, cfg.board, f"{cfg.board}_defconfig"), env=_env())
    # What debian/rules does after the defconfig: the version banner names Debian's revision.
    config = out / ".config"
    revision = "+" + version().split("+", 1)[1] if "+" in version() else ""
    config.write_text(re.sub(r'^CONFIG_LOCALVERSION=.*$', f'CONFIG_LOCALVERSION="{revision}"', config.read_text(),
                             flags=re.M))
    complete(tree, out, cfg.fragments, wanted, TABLE, lambda *t: _make(tree, out, cfg.board, *t), _env())


def refusal(cfg: UBootConfig) -> str | None:
    """Why Kconfig would not make this configuration, found without compiling; None if it would."""
    scratch = Path(tempfile.mkdtemp(dir=cache(), prefix=".check-"))
    try:
        configure(cfg, source_tree(), scratch)
        return None
    except BuildError as err:
        return str(err)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _last_steps(board: str) -> int | None:
    best = None
    for meta in cache().glob("*/u-boot.json"):
        data = json.loads(meta.read_text())
        if data.get("board") == board and (best is None or meta.stat().st_mtime > best[0]):
            best = (meta.stat().st_mtime, data.get("steps"))
    return best[1] if best else None


def build(cfg: UBootConfig, progress: Progress | None = None) -> Outcome:
    """The U-Boot of a configuration, built unless the cache has it."""
    tree = source_tree()
    root = cache()
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".config-"))
    try:
        configure(cfg, tree, staging)
        digest = config_digest(staging / ".config", version())
        home = root / digest
        with packages.Locked(root / f"{digest}.lock"):
            if (home / "u-boot.json").exists():
                return Outcome(home / "u-boot.bin", home / "config", digest, False, 0.0)
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir()
            out = home / "build"
            staging.rename(out)
            started = time.monotonic()
            argv = _make(tree, out, cfg.board, extra=[f"-j{os.cpu_count() or 1}"])
            try:
                steps, _ = stream(argv, out / "build.log", _env(), progress, _last_steps(cfg.board))
            except Failed as err:
                raise BuildError(kernel_build.explain_failure(err.lines, tree, read_config(out / ".config"),
                                                              home / "build.log", what="the U-Boot")) from None
            finally:
                if (out / "build.log").exists():
                    shutil.move(str(out / "build.log"), home / "build.log")
                if not (out / "u-boot.bin").exists():  # failed or interrupted: only the log is kept
                    shutil.rmtree(out, ignore_errors=True)
            seconds = time.monotonic() - started
            shutil.copyfile(out / "u-boot.bin", home / "u-boot.bin")
            shutil.copyfile(out / ".config", home / "config")
            shutil.rmtree(out)  # the objects are in ccache
            (home / "u-boot.json").write_text(json.dumps(
                {"board": cfg.board, "source": version(), "seconds": round(seconds, 1), "steps": steps}, indent=1) + "\n")
            return Outcome(home / "u-boot.bin", home / "config", digest, True, seconds)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def against_debian(config: Path, board: str) -> kernel_build.Difference:
    """A built configuration against the one Debian built its u-boot-qemu with (shipped in
    /usr/share/doc/u-boot-qemu/configs)."""
    shipped = SHIPPED_CONFIGS / f"config.{board}.gz"
    try:
        text = gzip.decompress(shipped.read_bytes()).decode()
    except OSError:
        raise BuildError(f"{shipped}: Debian's configuration is not at hand (install {PACKAGE})") from None
    with tempfile.NamedTemporaryFile("w", suffix=".config") as fh:
        fh.write(text)
        fh.flush()
        return kernel_build.difference(read_config(Path(fh.name)), read_config(config))
