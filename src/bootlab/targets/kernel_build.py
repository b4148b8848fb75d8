"""Kernels bootlab builds: Debian's own source for the reference device's kernel version
(the linux-source-6.1 package), configured through Kconfig only, never a source patch.

A configuration starts from a base (the packaged generic or cloud kernel's own config, or
the kernel's `tinyconfig`), takes fragments (files of CONFIG_ lines, merged in order by the
kernel's scripts/kconfig/merge_config.sh, then inline options last) and is completed by
`make olddefconfig`.  Every requested value that olddefconfig did not keep (an unmet
dependency, a choice lost to another) is an error before anything is compiled, naming the
fragment's file and line.

The resulting .config names the build: ~/.cache/bootlab/kernels/<sha256 of .config>/ holds
the image, the config and the modules in the layout of an unpacked Debian package, so the
rest of bootlab treats a built kernel like a packaged one.  The same configuration is never
built twice; a different one is compiled out of tree (O=) with ccache, so what did not
change is not compiled again.  The source tarball is unpacked once into the cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import packages
from .kconfig import (BuildError, Failed, Progress, Request, complete, config_digest, read_config, requests,
                      run, stream)

SOURCE_PACKAGE = "linux-source-6.1"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
BASES = ("tinyconfig", "generic", "cloud")


@dataclass(frozen=True)
class Architecture:
    """How Kbuild builds a kernel for one of Debian's architectures (packages.ARCHITECTURES)."""

    kbuild: str  # make's ARCH=
    cross_compile: str  # make's CROSS_COMPILE= ("" on the host's own architecture)
    image: str  # the boot image's make target
    built_image: str  # where make puts it, in the build directory


# The x86 reference device's kernel is built by the host's gcc; the ARM64 board's by Debian's
# cross compiler (gcc-aarch64-linux-gnu), as its U-Boot (uboot_build.py).  Debian ships the
# arm64 kernel as the uncompressed Image: so does bootlab (the board gzips it if asked).
ARCHITECTURES = {"amd64": Architecture("x86_64", "", "bzImage", "arch/x86/boot/bzImage"),
                 "arm64": Architecture("arm64", "aarch64-linux-gnu-", "Image", "arch/arm64/boot/Image")}
# Fixed build stamps: the kernel's version banner is the same in every build of a
# configuration, so ccache can reuse init/version.o too.
BUILD_ENV = {"KBUILD_BUILD_TIMESTAMP": "2024-01-01", "KBUILD_BUILD_USER": "bootlab",
             "KBUILD_BUILD_HOST": "bootlab"}
# gcc's "file.c:12:3: error: ..." and the assembler's "file.S:5: Error: ...".
_COMPILE_ERROR = re.compile(r"^(?P<file>[^\s:]+\.[chS]):(?P<line>\d+):(?:\d+:)? (?:fatal )?(?:error|Error): "
                            r"(?P<message>.*)$")
INLINE_TABLE = "[kconfig]"  # where a target's inline options are (requests' origin)
_NO_RULE = re.compile(r"No rule to make target '(?P<missing>[^']+)', needed by '(?P<target>[^']+)'")
_MAKE_ERROR = re.compile(r"^make\[\d+\]: \*\*\* \[\S+:\d+: (?P<target>[^\]]+)\] Error \d+")


# The kernel's callers' name for the shared build error (kconfig.py).
KernelBuildError = BuildError


@dataclass
class KernelConfig:
    """What a built kernel is made from (the target file's [kconfig] table)."""

    base: str = "tinyconfig"
    fragments: list[Path] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)  # {"KERNEL_LZ4": "y"}, applied last
    arch: str = "amd64"  # Debian's name (ARCHITECTURES); the .config names it too (CONFIG_ARM64)
    localmodconfig: list[str] = field(default_factory=list)  # the base's modules to keep (local_modules)

    def requests(self) -> list[Request]:
        """Every option the fragments and inline options ask for, the last word winning."""
        return requests(self.fragments, self.options, INLINE_TABLE)


@dataclass(frozen=True)
class BuiltKernel(packages.Kernel):
    """A kernel bootlab built, laid out like an unpacked package (boot/, lib/modules/)."""

    kernel_release: str = ""
    digest: str = ""

    @property
    def release(self) -> str:
        return self.kernel_release

    @property
    def headers(self) -> Path:
        """What out-of-tree modules build against (KDIR), as lib/modules/RELEASE/build."""
        return self.root / "headers"


@dataclass
class Difference:
    """How one configuration differs from another (the seed's "185 options removed or made
    modules"): options each side sets, by what became of them."""

    removed: list[str]  # y or m before, off after
    made_modules: list[str]  # y before, m after
    built_in: list[str]  # m before, y after
    added: list[str]  # off before, on after
    changed: list[str]  # other values (numbers, strings): "NAME: before -> after"

    def summary(self) -> str:
        return (f"{len(self.removed)} removed, {len(self.made_modules)} made modules, {len(self.built_in)} built in, "
                f"{len(self.added)} added, {len(self.changed)} changed")

    def lines(self) -> list[str]:
        out = []
        for title, names in (("removed", self.removed), ("made modules", self.made_modules),
                             ("built in", self.built_in), ("added", self.added), ("changed", self.changed)):
            out += [f"{title}: {name}" for name in names]
        return out


def difference(before: dict[str, str], after: dict[str, str]) -> Difference:
    """The difference between two .config files (read_config), option by option."""
    d = Difference([], [], [], [], [])
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, "n"), after.get(name, "n")
        if old == new:
            continue
        short = name.removeprefix("CONFIG_")
        if new == "n" and old in ("y", "m"):
            d.removed.append(short)
        elif (old, new) == ("y", "m"):
            d.made_modules.append(short)
        elif (old, new) == ("m", "y"):
            d.built_in.append(short)
        elif old == "n" and new in ("y", "m"):
            d.added.append(short)
        else:
            d.changed.append(f"{short}: {old} -> {new}")
    return d


def against_debian(config: Path, base: str, arch: str = "amd64") -> tuple[str, Difference]:
    """A built configuration against Debian's own (the packaged kernel of its base, generic
    for tinyconfig, of the same architecture): the flavour compared with and the difference."""
    flavour = base if base in packages.FLAVOURS else "generic"
    try:
        debian = packages.kernel(flavour, fetch=False, arch=arch).config
    except packages.PackageError as err:
        raise KernelBuildError(f"Debian's {flavour} configuration is not at hand: {err}") from None
    return flavour, difference(read_config(debian), read_config(config))


# -- the source ---------------------------------------------------------------------------------

def kernels_dir() -> Path:
    path = packages.cache_dir() / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_version() -> str:
    """The installed linux-source-6.1 package's version (6.1.192-2)."""
    if not SOURCE_TARBALL.exists():
        raise KernelBuildError(f"{SOURCE_TARBALL} not found: install {SOURCE_PACKAGE} (run make setup)")
    return run(["dpkg-query", "-W", "-f=${Version}", SOURCE_PACKAGE]).strip()


def packaged_version(k: packages.Kernel) -> str | None:
    """The Debian version of a fetched kernel package, from its file in the cache."""
    for deb in sorted((packages.cache_dir() / "debs").glob(f"{k.package}_*.deb")):
        return deb.name.split("_")[1]
    return None


def source_tree() -> Path:
    """The unpacked source, once per package version."""
    version = source_version()
    tree = kernels_dir() / "source" / version
    if (tree / ".complete").exists():
        return tree
    tree.parent.mkdir(parents=True, exist_ok=True)
    with packages.Locked(tree.parent / f"{version}.lock"):
        if (tree / ".complete").exists():
            return tree
        tmp = Path(tempfile.mkdtemp(dir=tree.parent, prefix=".unpack-"))
        try:
            run(["tar", "-xJf", str(SOURCE_TARBALL), "-C", str(tmp), "--strip-components=1"])
            (tmp / ".complete").touch()
            shutil.rmtree(tree, ignore_errors=True)
            tmp.rename(tree)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return tree


# -- configuring --------------------------------------------------------------------------------

def _make(tree: Path, out: Path, arch: str, *targets: str, extra: list[str] | None = None) -> list[str]:
    a = ARCHITECTURES[arch]
    cross = [f"CROSS_COMPILE={a.cross_compile}"] if a.cross_compile else []
    return ["make", "-C", str(tree), f"O={out}", f"ARCH={a.kbuild}", *cross, f"CC=ccache {a.cross_compile}gcc",
            "HOSTCC=ccache gcc", *(extra or []), *targets]


def _ccache_env() -> dict[str, str]:
    # Every configuration is compiled in its own directory: paths under the cache are
    # hashed relative to it, and the working directory is not hashed, so one
    # configuration's objects serve another's.
    return {**BUILD_ENV, "CCACHE_BASEDIR": str(kernels_dir()), "CCACHE_NOHASHDIR": "true"}


def configure(cfg: KernelConfig, tree: Path, out: Path, abi: str | None = None) -> list[str]:
    """Write out/.config from the base, the fragments and the options; returns warnings.
    Raises KernelBuildError naming every requested option olddefconfig did not keep."""
    if shutil.which("ccache") is None:
        raise KernelBuildError("ccache is not installed (run make setup)")
    if cfg.arch not in ARCHITECTURES:
        raise KernelBuildError(f"unknown kernel architecture {cfg.arch!r}: one of {', '.join(ARCHITECTURES)}")
    compiler = ARCHITECTURES[cfg.arch].cross_compile + "gcc"
    if shutil.which(compiler) is None:
        raise KernelBuildError(f"{compiler} is not installed (run make setup)")
    warnings = []
    wanted = cfg.requests()  # a fragment's bad line is reported before make runs
    if cfg.base == "tinyconfig":
        run(_make(tree, out, cfg.arch, "tinyconfig"), env=_ccache_env())
    elif cfg.base in packages.FLAVOURS:
        try:
            k = packages.kernel(cfg.base, abi=abi, arch=cfg.arch)
        except packages.PackageError as err:
            raise KernelBuildError(str(err)) from None
        shipped = packaged_version(k)
        if shipped and shipped != source_version():
            warnings.append(f"{k.package} is {shipped} but {SOURCE_PACKAGE} is {source_version()}: "
                            "the built kernel is not the packaged one's version")
        shutil.copyfile(k.config, out / ".config")
    else:
        raise KernelBuildError(f"unknown kernel base {cfg.base!r}: one of {', '.join(BASES)}")
    if cfg.localmodconfig:
        local_modules(tree, out, cfg.arch, cfg.base, cfg.localmodconfig)
    complete(tree, out, cfg.fragments, wanted, INLINE_TABLE, lambda *targets: _make(tree, out, cfg.arch, *targets),
             _ccache_env())
    return warnings


def local_modules(tree: Path, out: Path, arch: str, base: str, keep: list[str]) -> None:
    """Turn off every module of out/.config but `keep` and what they need, with the kernel's
    own `make localmodconfig` (scripts/kconfig/streamline_config.pl): it reads the modules a
    device loads as lsmod prints them and follows the Makefiles and Kconfig dependencies to
    the options that build them.  Built-in options are left alone.  A module name no option
    builds is an error: it would otherwise be dropped without a word."""
    lsmod = out / "bootlab-lsmod"
    # lsmod's names use underscores where the objects' file names may have dashes.
    lsmod.write_text("Module Size Used by\n" + "".join(f"{name.replace('-', '_')} 0 0\n" for name in keep))
    said = run(_make(tree, out, arch, "localmodconfig", extra=[f"LSMOD={lsmod}"]), env=_ccache_env(),
               with_stderr=True)
    unknown = re.findall(r"^(\S+) config not found!!$", said, re.MULTILINE)
    if unknown:
        raise KernelBuildError(f"localmodconfig: no option of the {base} configuration builds "
                               f"{', '.join(unknown)} (a module name as lsmod prints it)")


def refusal(cfg: KernelConfig) -> KernelBuildError | None:
    """Why Kconfig would not make this configuration (an option another one selects, an
    unmet dependency), found by configuring it alone, without compiling; None if it would.
    A kconfig.NotKept names the options it did not keep."""
    scratch = Path(tempfile.mkdtemp(dir=kernels_dir(), prefix=".check-"))
    try:
        configure(cfg, source_tree(), scratch)
        return None
    except KernelBuildError as err:
        return err
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- building -----------------------------------------------------------------------------------

@dataclass
class Outcome:
    kernel: BuiltKernel
    built: bool  # False: the cache had it
    seconds: float
    warnings: list[str]


def build(cfg: KernelConfig, progress: Progress | None = None, abi: str | None = None) -> Outcome:
    """The kernel of a configuration, built unless the cache has it."""
    tree = source_tree()
    version = source_version()
    root = kernels_dir()
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".config-"))
    try:
        warnings = configure(cfg, tree, staging, abi)
        digest = config_digest(staging / ".config", version)
        home = root / digest
        with packages.Locked(root / f"{digest}.lock"):
            done = _installed(home, digest)
            if done is not None:
                return Outcome(done, False, 0.0, warnings)
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir()
            out = home / "build"
            staging.rename(out)
            started = time.monotonic()
            steps = _compile(tree, out, cfg, digest, progress)
            kernel = _install(tree, out, home, cfg.arch, digest)
            seconds = time.monotonic() - started
            meta = {"base": cfg.base, "arch": cfg.arch, "release": kernel.release, "source": version,
                    "seconds": round(seconds, 1), "steps": steps}
            (home / "kernel.json").write_text(json.dumps(meta, indent=1) + "\n")
            # The objects are in ccache: the build directory is not kept (gigabytes for
            # Debian's configurations), only its log.
            shutil.move(str(out / "build.log"), home / "build.log")
            shutil.rmtree(out)
            return Outcome(kernel, True, seconds, warnings)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _installed(home: Path, digest: str) -> BuiltKernel | None:
    meta = home / "kernel.json"
    if not meta.exists():
        return None
    data = json.loads(meta.read_text())
    release = data["release"]
    kernel = BuiltKernel(abi=release, flavour="built", root=home, arch=data.get("arch", "amd64"),
                         kernel_release=release, digest=digest)
    if read_config(kernel.config).get("CONFIG_MODULES") == "y" and not (kernel.headers / "Module.symvers").exists():
        return None  # built before the headers were kept: rebuilt (from ccache) to keep them
    return kernel


def _last_build(base: str, arch: str) -> dict:
    """What the last build from the same base for the same architecture recorded
    (kernel.json; builds from before there were two architectures are amd64's), or nothing."""
    best = None
    for meta in kernels_dir().glob("*/kernel.json"):
        data = json.loads(meta.read_text())
        if (data.get("base"), data.get("arch", "amd64")) == (base, arch) and (best is None
                                                                              or meta.stat().st_mtime > best[0]):
            best = (meta.stat().st_mtime, data)
    return best[1] if best else {}


# A build from a base never built here: what these 2 cores took (small: ~5 min; Debian's
# configurations: about an hour).
FIRST_BUILD_SECONDS = {"tinyconfig": 300.0, "generic": 3600.0, "cloud": 2400.0}


def last_build_seconds(base: str, arch: str = "amd64") -> float:
    """How long a build from `base` takes here: the last one's time (a rebuild with ccache
    after one option changed is shorter), else a first build's."""
    return float(_last_build(base, arch).get("seconds") or FIRST_BUILD_SECONDS.get(base, 3600.0))


def _localversion(digest: str) -> str:
    # The release names the configuration: 6.1.192-bootlab-92290e3a.
    return f"LOCALVERSION=-bootlab-{digest[:8]}"


def _compile(tree: Path, out: Path, cfg: KernelConfig, digest: str, progress: Progress | None) -> int:
    """Build the image (and the modules); returns the number of Kbuild steps."""
    config = read_config(out / ".config")
    targets = [ARCHITECTURES[cfg.arch].image] + (["modules"] if config.get("CONFIG_MODULES") == "y" else [])
    argv = _make(tree, out, cfg.arch, *targets, extra=[f"-j{os.cpu_count() or 1}", _localversion(digest)])
    # The last build of the same kind: the progress bar's estimate.
    expected = _last_build(cfg.base, cfg.arch).get("steps")
    try:
        steps, _ = stream(argv, out / "build.log", _ccache_env(), progress, expected)
    except Failed as err:
        raise KernelBuildError(explain_failure(err.lines, tree, config, out / "build.log")) from None
    return steps


def _install(tree: Path, out: Path, home: Path, arch: str, digest: str) -> BuiltKernel:
    release = (out / "include" / "config" / "kernel.release").read_text().strip()
    boot = home / "boot"
    boot.mkdir()
    shutil.copyfile(out / ARCHITECTURES[arch].built_image, boot / f"vmlinuz-{release}")
    shutil.copyfile(out / ".config", boot / f"config-{release}")
    modules = home / "lib" / "modules" / release
    if read_config(out / ".config").get("CONFIG_MODULES") == "y":
        run(_make(tree, out, arch, "modules_install", extra=[f"INSTALL_MOD_PATH={home}", "INSTALL_MOD_STRIP=1",
                                                         _localversion(digest)]), env=_ccache_env())
        (modules / "source").unlink(missing_ok=True)  # points into the build directory, which is not kept
        _keep_headers(out, home / "headers")
        (modules / "build").unlink(missing_ok=True)
        (modules / "build").symlink_to(Path("..", "..", "..", "headers"))
    else:
        modules.mkdir(parents=True)
        (modules / "modules.dep").write_text("")
        (modules / "modules.builtin").write_text("")
    return BuiltKernel(abi=release, flavour="built", root=home, arch=arch, kernel_release=release, digest=digest)


# What an out-of-tree module build (make -C KDIR M=...) needs of the build directory, as
# Debian's linux-headers packages keep it: the configuration, the generated headers, the
# host tools (fixdep, modpost, objtool) and the exported symbols.  The kept Makefile
# includes the unpacked source's, which stays in the cache.
_HEADERS = (".config", "Makefile", "Module.symvers", "include", "scripts", "tools/objtool/objtool")


def _keep_headers(out: Path, headers: Path) -> None:
    for name in [*_HEADERS, *(str(p.relative_to(out)) for p in out.glob("arch/*/include/generated"))]:
        source = out / name
        if source.is_dir():
            shutil.copytree(source, headers / name, symlinks=True,
                            ignore=shutil.ignore_patterns("*.o", ".*.cmd"))
        elif source.exists():
            (headers / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, headers / name)


# -- explaining a failure -----------------------------------------------------------------------

def explain_failure(lines: list[str], tree: Path, config: dict[str, str], log: Path, what: str = "the kernel") -> str:
    """What failed, in which file, and the options that put that file in the build."""
    message = [f"{what} build failed (full log: {log})"]
    errors = [m for m in map(_COMPILE_ERROR.match, lines) if m]
    targets = [m.group("target") for m in map(_MAKE_ERROR.match, lines) if m]
    missing = [m for m in map(_NO_RULE.search, lines) if m]
    culprit = None
    if missing:
        first = missing[0]
        message.append(f"{first.group('missing')} is missing, needed by {first.group('target')}")
        culprit = first.group("target")
    elif errors:
        first = errors[0]
        source = _relative(first.group("file"), tree)
        message.append(f"{source}:{first.group('line')}: error: {first.group('message')}")
        culprit = str(Path(source).with_suffix(".o"))
    elif targets:
        culprit = targets[0]
        message += [line for line in lines if "***" in line or "error" in line.lower()][-5:]
    else:
        message += lines[-10:]
    if culprit:
        enabling = enabled_by(tree, culprit)
        if enabling:
            where = kconfig_locations(tree, enabling)
            shown = ", ".join(f"CONFIG_{s}={config.get('CONFIG_' + s, 'n')}"
                              + (f" ({where[s]})" if s in where else "") for s in enabling)
            message.append(f"{culprit} is built because of {shown}")
        else:
            message.append(f"{culprit}: its Makefiles name no option")
        named = named_by(config, " ".join([culprit] + message[1:]))
        if named:
            message.append(f"named by {', '.join(named)}")
    return "\n".join(message)


def named_by(config: dict[str, str], text: str) -> list[str]:
    """String options whose file names appear in the failure (CONFIG_EXTRA_FIRMWARE="x.bin"
    when x.bin cannot be found): the option that asked for a file the build lacks."""
    found = []
    for name, value in config.items():
        if not value.startswith('"'):
            continue
        files = [w for w in value.strip('"').split() if len(w) > 3 and ("." in w or "/" in w)]
        if any(f in text for f in files):
            found.append(f"{name}={value}")
    return found


def _relative(path: str, tree: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(tree))
        except ValueError:
            return path
    return path.removeprefix("../").removeprefix("./")


def enabled_by(tree: Path, obj: str) -> list[str]:
    """The Kconfig symbols the Makefiles name for an object and each directory above it,
    outermost first ("drivers/tty/serial/8250/8250_core.o" -> [..., "SERIAL_8250"])."""
    symbols: list[str] = []
    path = Path(obj)
    name = path.name if path.suffix else path.name + "/"  # a directory, as Makefiles name it
    directory = path.parent
    while str(directory) not in (".", ""):
        found = _symbols_for(tree / directory, name)
        symbols = found + [s for s in symbols if s not in found]
        name = directory.name + "/"
        directory = directory.parent
    return symbols


def _symbols_for(directory: Path, name: str) -> list[str]:
    """The symbols in directory's Makefile (or Kbuild) that add name, following composite
    objects (foo-y += name; obj-$(CONFIG_FOO) += foo.o)."""
    text = ""
    for makefile in ("Kbuild", "Makefile"):
        if (directory / makefile).exists():
            text += (directory / makefile).read_text(errors="replace").replace("\\\n", " ")
    found: list[str] = []
    seen = set()
    wanted = [name]
    while wanted:
        item = wanted.pop()
        if item in seen:
            continue
        seen.add(item)
        for line in text.splitlines():
            m = re.match(r"\s*([A-Za-z0-9_]+)-(\$\(CONFIG_([A-Za-z0-9_]+)\)|y|objs)\s*[:+]?=\s*(.*)", line)
            if not m or item not in m.group(4).split():
                continue
            if m.group(3) and m.group(3) not in found:
                found.append(m.group(3))
            if m.group(1) != "obj" and m.group(1) != "lib":
                wanted.append(f"{m.group(1)}.o")  # a part of a composite object
    return found


def kconfig_locations(tree: Path, symbols: list[str]) -> dict[str, str]:
    """Where each symbol is defined: {symbol: "drivers/tty/serial/8250/Kconfig:7"}."""
    wanted = set(symbols)
    where: dict[str, str] = {}
    for kconfig in tree.rglob("Kconfig*"):
        if not wanted - set(where):
            break
        try:
            text = kconfig.read_text(errors="replace")
        except OSError:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            m = re.match(r"\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$", line)
            if m and m.group(1) in wanted and m.group(1) not in where:
                where[m.group(1)] = f"{kconfig.relative_to(tree)}:{n}"
    return where


_TYPE = re.compile(r"\s*(?:def_)?(bool|tristate|int|hex|string)\b")


def kconfig_types(tree: Path, symbols: list[str]) -> dict[str, str]:
    """Each symbol's Kconfig type where it is defined: {"SERIAL_8250": "tristate"}; a
    tristate is a driver that could be a module, a bool a part of the kernel itself."""
    types: dict[str, str] = {}
    for symbol, where in kconfig_locations(tree, symbols).items():
        path, line = where.rsplit(":", 1)
        following = (tree / path).read_text(errors="replace").splitlines()[int(line):int(line) + 4]
        found = next((m.group(1) for m in map(_TYPE.match, following) if m), None)
        if found:
            types[symbol] = found
    return types
