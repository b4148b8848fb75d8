"""The ARM64 board's kernel cross-built from Debian's linux-source-6.1 (ARCH=arm64, Debian's
gcc-aarch64-linux-gnu): configured through Kconfig only, cached by its .config (which names
the architecture), and booted by the board's U-Boot over TFTP to the camera's first frame.

The configuration tests run the kernel's own tinyconfig, merge_config.sh and olddefconfig
on the real source tree (seconds); the boot test cross-builds the small kernel (minutes the
first time, then cached) and boots it in QEMU."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from bootlab.cli import main
from bootlab.lab import candidates, optimizer
from bootlab.lab.patch import apply
from bootlab.targets import arm64_board, kconfig, kernel_build, kernel_trim, kinds, packages, strategy
from bootlab.targets.description import TargetError

from . import captured

# Nothing here depends on the host's load (orders and contents, no durations): it runs
# beside other tests (make test's parallel phase).
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[2]
BUILT = ROOT / "demo" / "board-arm64-built.toml"
GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"
ARM64_IMAGE_MAGIC = b"ARM\x64"  # at offset 56 of an arm64 Image's header (booti checks it)
needs_cross_compiler = pytest.mark.skipif(not shutil.which("aarch64-linux-gnu-gcc"),
                                          reason="needs gcc-aarch64-linux-gnu (make setup)")


@needs_cross_compiler
def test_the_architecture_is_in_the_configuration_and_so_in_the_cache_key(tree, tmp_path):
    digests = {}
    for arch in ("amd64", "arm64"):
        out = tmp_path / arch
        out.mkdir()
        kernel_build.configure(kernel_build.KernelConfig("tinyconfig", arch=arch), tree, out)
        config = kernel_build.read_config(out / ".config")
        assert ("CONFIG_ARM64" in config) == (arch == "arm64") and ("CONFIG_X86_64" in config) == (arch == "amd64")
        digests[arch] = kconfig.config_digest(out / ".config", kernel_build.source_version())
    assert digests["amd64"] != digests["arm64"]


@needs_cross_compiler
def test_the_boards_small_configuration_keeps_every_requested_option(tree, tmp_path):
    cfg = kinds.load(str(BUILT)).kernel_config()
    assert cfg.arch == "arm64" and [f.name for f in cfg.fragments] == ["small-arm64.config", "camera.config"]
    assert kernel_build.configure(cfg, tree, tmp_path) == []
    config = kernel_build.read_config(tmp_path / ".config")
    assert kconfig.not_kept(cfg.requests(), config) == []
    assert config["CONFIG_SERIAL_AMBA_PL011_CONSOLE"] == "y" and config["CONFIG_MODULES"] == "y"
    assert config["CONFIG_VIDEO_VIVID"] == "m"


@needs_cross_compiler
def test_the_packaged_arm64_configuration_is_a_base(tree, tmp_path):
    # Fetched here when the cache lacks it (as `bootlab target fetch --arch arm64 --kernel
    # cloud` does): no board boots the cloud kernel, so on a fresh machine nothing else has.
    k = packages.kernel("cloud", fetch=True, arch="arm64")
    cfg = kernel_build.KernelConfig("cloud", arch="arm64")
    assert kernel_build.configure(cfg, tree, tmp_path) == []
    shipped, built = kernel_build.read_config(k.config), kernel_build.read_config(tmp_path / ".config")
    assert built["CONFIG_ARM64"] == "y" and len(built) > 2000
    # Besides what Debian's packaging sets outside Kconfig (as for amd64's), the 32-bit
    # programs' vDSO: Kconfig offers it only with a 32-bit ARM compiler (CROSS_COMPILE_COMPAT),
    # which Debian's build had and this host does not.
    packaging = {"CC_VERSION_TEXT", "BUILD_SALT", "SYSTEM_TRUSTED_KEYS", "MODULE_SIG_ALL", "MODULE_SIG_KEY",
                 "COMPAT_VDSO", "GENERIC_COMPAT_VDSO", "THUMB2_COMPAT_VDSO"}
    changed = {name for name in shipped.keys() | built.keys() if shipped.get(name) != built.get(name)}
    assert changed <= {f"CONFIG_{name}" for name in packaging}, changed
    # Compared with Debian's own arm64 configuration (amd64's would differ in hundreds).
    flavour, diff = kernel_build.against_debian(tmp_path / ".config", "cloud", "arm64")
    assert flavour == "cloud" and set(diff.removed + diff.added) <= packaging


def test_an_unknown_architecture_is_refused_before_make_runs(tree, tmp_path):
    with pytest.raises(kernel_build.KernelBuildError, match="unknown kernel architecture 'riscv64': one of amd64, arm64"):
        kernel_build.configure(kernel_build.KernelConfig("tinyconfig", arch="riscv64"), tree, tmp_path)


def test_a_builds_time_is_estimated_from_the_last_build_for_the_same_architecture(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOTLAB_CACHE", str(tmp_path))
    kernels = kernel_build.kernels_dir()
    # What two builds recorded (kernel.json as build() writes it; x86 builds from before
    # there were two architectures have no "arch").
    for digest, meta in (("a" * 16, {"base": "tinyconfig", "release": "x", "seconds": 320.0, "steps": 900}),
                         ("b" * 16, {"base": "tinyconfig", "arch": "arm64", "release": "y", "seconds": 768.3,
                                     "steps": 1114})):
        (kernels / digest).mkdir()
        (kernels / digest / "kernel.json").write_text(json.dumps(meta))
    assert kernel_build.last_build_seconds("tinyconfig") == 320.0
    assert kernel_build.last_build_seconds("tinyconfig", "arm64") == 768.3
    assert kernel_build.last_build_seconds("cloud", "arm64") == kernel_build.FIRST_BUILD_SECONDS["cloud"]


def _board_file(tmp_path: Path, arm64: str, kconfig_table: str) -> str:
    path = tmp_path / "b.toml"
    path.write_text(f'[arm64]\n{arm64}\n\n[kconfig]\n{kconfig_table}\n\n[bootloader]\nboot_command = "boot"\n')
    return str(path)


@pytest.mark.parametrize("arm64, table, message", [
    ('kernel = "built"', 'base = "defconfig"', r"b.toml:5: kconfig.base: base must be one of tinyconfig, generic, cloud"),
    ('kernel = "built"', 'fragments = "small.config"', r"b.toml:5: kconfig.fragments: expected list"),
    ('kernel = "rt"', 'base = "tinyconfig"', r"b.toml:2: arm64.kernel: kernel must be one of generic, cloud or built"),
])
def test_the_boards_kconfig_table_is_checked_with_file_and_line(tmp_path, arm64, table, message):
    with pytest.raises(TargetError, match=message):
        kinds.load(_board_file(tmp_path, arm64, table))


def test_a_kconfig_table_beside_a_debian_kernel_is_the_optimizers_own_kernel_candidate(tmp_path):
    """[kconfig] beside a Debian kernel names the kernel that could be built for the board:
    kept in the description (and its copies), tried by the optimizer as own-kernel."""
    from bootlab.lab.candidates import Facts, for_target
    from bootlab.lab.patch import apply

    shipped = kinds.load(str(ROOT / "demo" / "board-arm64-shipped.toml"))
    assert shipped.target.kernel == "generic" and shipped.to_dict()["kconfig"]["base"] == "tinyconfig"
    assert all(Path(f).is_absolute() for f in shipped.standalone("copy").to_dict()["kconfig"]["fragments"])
    own = next(c for c in for_target(shipped, Facts()) if c.name == "own-kernel")
    assert "tinyconfig + small-arm64 + camera" in own.description
    patched = kinds.from_dict(apply(shipped.to_dict(), own.patch), base=shipped.base)
    assert patched.target.kernel == "built" and patched.initramfs.init == "script"
    assert patched.kernel_config() == kinds.load(str(ROOT / "demo" / "board-arm64-built.toml")).kernel_config()
    # Without the table there is no such candidate; with a built kernel it is there already.
    assert "own-kernel" not in {c.name for c in for_target(kinds.load(str(ROOT / "demo" / "board-arm64.toml")),
                                                          Facts())}
    assert "own-kernel" not in {c.name for c in for_target(patched, Facts())}


def test_the_built_kernels_configuration_is_part_of_the_boards_description():
    board = kinds.load(str(BUILT))
    assert board.to_dict()["kconfig"]["fragments"] == ["../kernel/fragments/small-arm64.config",
                                                       "../kernel/fragments/camera.config"]
    assert all(Path(f).is_absolute() for f in board.standalone("copy").to_dict()["kconfig"]["fragments"])
    # A packaged kernel's description has no [kconfig] table.
    assert "kconfig" not in kinds.load(str(ROOT / "demo" / "board-arm64.toml")).to_dict()


def test_kernel_build_refuses_a_packaged_kernel_and_a_board_it_cannot_build(tmp_path, capsys):
    assert main(["kernel", "build", str(ROOT / "demo" / "board-arm64.toml")]) == 2
    assert "the kernel is 'generic', a packaged kernel: nothing to build" in capsys.readouterr().err
    desk = tmp_path / "desk.toml"
    desk.write_text('[board]\ndevice = "/dev/ttyUSB0"\npower_cycle = "true"\nready = "READY"\n')
    assert main(["kernel", "build", str(desk)]) == 2
    assert "builds the kernels of the reference device and the ARM64 board only" in capsys.readouterr().err


@pytest.mark.qemu
@needs_cross_compiler
@pytest.mark.skipif(not kernel_build.SOURCE_TARBALL.exists(), reason="linux-source-6.1 is not installed (make setup)")
@pytest.mark.skipif(not GRABBER.exists(), reason="needs the arm64 grabber (make build)")
def test_the_cross_built_kernel_boots_the_board_to_the_first_frame(tmp_path, capsys):
    assert main(["kernel", "build", str(BUILT), "-f", "json"]) == 0
    built = json.loads(capsys.readouterr().out)
    image = Path(built["image"])
    assert built["release"].startswith("6.1.192-bootlab-") and image.read_bytes()[56:60] == ARM64_IMAGE_MAGIC
    # Installed like an unpacked package: the modules with their dependency list.
    modules = image.parent.parent / "lib" / "modules" / built["release"]
    assert "vivid.ko" in (modules / "modules.dep").read_text()
    # The board builds it again from its description: the cache has it, nothing is compiled.
    board = arm64_board.build(kinds.load(str(BUILT)))
    assert board.kernel.release == built["release"] and board.kernel.image == image
    capture = tmp_path / "built.capture"
    result = strategy.boot(board, str(capture))
    assert result.status == "ok", result.reason
    console = captured.console(capture)
    assert b"Bytes transferred" in console and f"Linux version {built['release']}".encode() in console
    assert b"BOOTLAB READY" in console  # the grabber prints it at its first frame


@needs_cross_compiler
def test_the_optimizers_kernel_candidates_apply_to_the_boards_built_kernel(tree, tmp_path):
    """The optimizer's configuration candidates take the board's own [kconfig] table: its
    allocator, and the option behind a slow initcall; an arm64 Image decompresses nothing
    itself, so no compression candidate; a rebuild is budgeted at an arm64 build's time."""
    board = kinds.load(str(BUILT))
    kernel_build.configure(board.kernel_config(), tree, tmp_path)
    config = kernel_build.read_config(tmp_path / ".config")
    origin = kernel_trim.Origin("vivid_init", "drivers/media/test-drivers/vivid/vivid-core.c", ("VIDEO_VIVID",))
    found = {c.name: c for c in candidates.kernel_config(board, config, [(origin, 30_000_000)])}
    assert not [name for name in found if name.startswith("kernel-") and name[7:].upper() in
                candidates.KERNEL_COMPRESSIONS]
    assert "kernel-slub" in found or "kernel-slab" in found
    patched = kinds.from_dict(apply(board.to_dict(), found["kconfig-no-VIDEO_VIVID"].patch), base=BUILT.parent)
    assert patched.kernel_config().options == {"VIDEO_VIVID": "n"} and patched.kernel_config().arch == "arm64"
    variants = [SimpleNamespace(spec=board), SimpleNamespace(spec=patched)]
    assert optimizer._rebuilds(variants) == kernel_build.last_build_seconds("tinyconfig", "arm64")
