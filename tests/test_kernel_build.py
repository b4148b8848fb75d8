"""Kernels built from Debian's linux-source-6.1, configured through Kconfig only.

The configuration tests run the kernel's own tinyconfig, merge_config.sh and olddefconfig on
the real source tree (a few seconds); the build test compiles the small kernel (minutes the
first time, then cached) and boots it to the ready marker in QEMU.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.analysis.console_loss import stall_explaining, stalls
from bootlab.cli import main
from bootlab.lab.store import Store
from bootlab.sources import read
from bootlab.sources.console import PRINTK_AT_START
from bootlab.targets import kconfig, kernel_build, packages
from bootlab.targets.reference import TargetError, load

# Nothing here depends on the host's load (orders and contents, no durations): it runs
# beside other tests (make test's parallel phase).
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "demo" / "kernel-small.toml"
SMALL_FRAGMENT = ROOT / "kernel" / "fragments" / "small-x86_64.config"
CAMERA = ROOT / "demo" / "camera-built.toml"

def packaged(flavour: str) -> packages.Kernel:
    """Debian's packaged kernel of a flavour, from the cache (make setup fetches it)."""
    try:
        return packages.kernel(flavour, fetch=False)
    except packages.PackageError:
        pytest.skip("the packaged kernels are not fetched (make setup)")


needs_source = pytest.mark.skipif(not kernel_build.SOURCE_TARBALL.exists(),
                                   reason="linux-source-6.1 is not installed (make setup)")


def test_small_configuration_keeps_every_requested_option(tree, tmp_path):
    cfg = load(str(SMALL)).kernel_config()
    assert kernel_build.configure(cfg, tree, tmp_path) == []
    config = kernel_build.read_config(tmp_path / ".config")
    requests = cfg.requests()
    assert {r.name for r in requests} >= {"CONFIG_SERIAL_8250_CONSOLE", "CONFIG_BLK_DEV_INITRD", "CONFIG_PRINTK_TIME"}
    assert kconfig.not_kept(requests, config) == []
    # tinyconfig underneath: no modules, the kernel's own xz compression, 64-bit.
    assert "CONFIG_MODULES" not in config and config["CONFIG_KERNEL_XZ"] == "y" and config["CONFIG_64BIT"] == "y"


def test_camera_kernel_skips_the_initcalls_the_device_does_not_need(tree, tmp_path):
    # Issue 17's kernel init + initcalls: what campaigns/kernel-init.toml kept is the camera
    # device's configuration and command line, and Kconfig keeps every option asked for.
    camera = load(str(CAMERA))
    cfg = camera.kernel_config()
    assert kernel_build.configure(cfg, tree, tmp_path) == []
    config = kernel_build.read_config(tmp_path / ".config")
    assert kconfig.not_kept(cfg.requests(), config) == []
    assert config.get("CONFIG_CRYPTO_MANAGER_DISABLE_TESTS") == "y"  # no BLAKE2s self-test at boot
    assert config.get("CONFIG_SERIAL_8250_RUNTIME_UARTS") == "1"
    assert "CONFIG_I2C" not in config and "CONFIG_CPU_FREQ" not in config
    assert "noreplace-smp" in camera.target.append.split()


def test_an_option_olddefconfig_drops_is_named_with_its_fragment_line(tree, tmp_path):
    # The 8250 console without TTY: Kconfig cannot keep it, and says so before any build.
    fragment = tmp_path / "console-only.config"
    fragment.write_text("# the console alone\nCONFIG_PRINTK=y\nCONFIG_SERIAL_8250_CONSOLE=y\n")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(kernel_build.KernelBuildError) as err:
        kernel_build.configure(kernel_build.KernelConfig("tinyconfig", [fragment]), tree, out)
    message = str(err.value)
    assert f"{fragment}:3: CONFIG_SERIAL_8250_CONSOLE=y requested, olddefconfig left it not set" in message
    assert "CONFIG_PRINTK" not in message.replace("CONFIG_PRINTK_", "")  # kept: not reported


def test_inline_options_come_last_and_choose_the_kernel_compression(tree, tmp_path):
    cfg = kernel_build.KernelConfig("tinyconfig", [SMALL_FRAGMENT], {"KERNEL_LZ4": "y", "KERNEL_XZ": "n"})
    kernel_build.configure(cfg, tree, tmp_path)
    config = kernel_build.read_config(tmp_path / ".config")
    assert config.get("CONFIG_KERNEL_LZ4") == "y" and "CONFIG_KERNEL_XZ" not in config


def test_debians_configuration_is_kept_as_packaged(tree, tmp_path):
    k = packaged("cloud")
    assert kernel_build.configure(kernel_build.KernelConfig("cloud"), tree, tmp_path) == []
    shipped, built = kernel_build.read_config(k.config), kernel_build.read_config(tmp_path / ".config")
    changed = {name for name in shipped.keys() | built.keys() if shipped.get(name) != built.get(name)}
    # Only what Debian's packaging sets outside Kconfig: the compiler's name (gcc-12), the
    # build salt (the ABI name), and module signing (Debian signs its modules separately).
    assert changed <= {"CONFIG_CC_VERSION_TEXT", "CONFIG_BUILD_SALT", "CONFIG_SYSTEM_TRUSTED_KEYS",
                       "CONFIG_MODULE_SIG_ALL", "CONFIG_MODULE_SIG_KEY"}, changed
    assert "CONFIG_MODULES" in built and len(built) > 2000


VIVID = ["rc_core", "cec", "mc", "videodev", "videobuf2_common", "videobuf2_v4l2", "videobuf2_memops",
         "videobuf2_vmalloc", "videobuf2_dma_contig", "v4l2_dv_timings", "v4l2_tpg", "vivid"]


def test_localmodconfig_keeps_only_the_modules_the_device_loads(tree, tmp_path):
    k = packaged("generic")
    shipped = kernel_build.read_config(k.config)
    cfg = kernel_build.KernelConfig("generic", [], {"DEBUG_INFO_NONE": "y"}, "amd64", VIVID)
    kernel_build.configure(cfg, tree, tmp_path)
    built = kernel_build.read_config(tmp_path / ".config")
    modules = {name for name, value in built.items() if value == "m"}
    # Debian builds about 3,800 modules; the camera keeps vivid, what it needs, and what
    # Kconfig selects beside them (the media tuners of MEDIA_SUBDRV_AUTOSELECT).
    assert sum(value == "m" for value in shipped.values()) > 3000
    assert {"CONFIG_VIDEO_VIVID", "CONFIG_VIDEOBUF2_VMALLOC", "CONFIG_VIDEO_V4L2_TPG"} <= modules
    assert len(modules) < 40 and "CONFIG_EXT4_FS" not in modules and "CONFIG_E1000" not in built
    # Built-in options are left alone: the serial console and the ext4 Debian builds in.
    assert built["CONFIG_SERIAL_8250"] == shipped["CONFIG_SERIAL_8250"] == "y"
    assert built.get("CONFIG_DEBUG_INFO_NONE") == "y"
    assert len(kernel_build.difference(shipped, built).removed) > 3000


def test_a_module_localmodconfig_cannot_place_is_named(tree, tmp_path):
    packaged("generic")
    cfg = kernel_build.KernelConfig("generic", [], {}, "amd64", ["vivid", "vivdi"])
    with pytest.raises(kernel_build.KernelBuildError, match="builds vivdi"):
        kernel_build.configure(cfg, tree, tmp_path)


def test_makefiles_name_the_options_that_build_an_object(tree):
    # drivers/tty/serial/Makefile adds 8250/ under CONFIG_SERIAL_8250; 8250/Makefile builds
    # 8250_core.o as part of the composite 8250.o, also under CONFIG_SERIAL_8250.
    assert kernel_build.enabled_by(tree, "drivers/tty/serial/8250/8250_core.o") == ["SERIAL_8250"]
    assert kernel_build.enabled_by(tree, "fs/ext4/inode.o") == ["EXT4_FS"]
    where = kernel_build.kconfig_locations(tree, ["SERIAL_8250", "EXT4_FS"])
    assert where["SERIAL_8250"].startswith("drivers/tty/serial/8250/Kconfig:")
    assert where["EXT4_FS"].startswith("fs/ext4/Kconfig:")


def test_a_compile_error_names_the_file_and_the_options_behind_it(tree):
    lines = ["  CC      fs/ext4/inode.o",
             f"{tree}/fs/ext4/inode.c:42:7: error: 'x' undeclared (first use in this function)",
             "make[4]: *** [/src/scripts/Makefile.build:250: fs/ext4/inode.o] Error 1"]
    message = kernel_build.explain_failure(lines, tree, {"CONFIG_EXT4_FS": "y"}, Path("build.log"))
    assert "fs/ext4/inode.c:42: error: 'x' undeclared" in message
    assert "fs/ext4/inode.o is built because of CONFIG_EXT4_FS=y (fs/ext4/Kconfig:" in message


def test_a_missing_file_is_traced_to_the_option_that_named_it(tree):
    # A real build's log: the small kernel with FW_LOADER and
    # EXTRA_FIRMWARE="bootlab-missing.bin", which is not in /lib/firmware.
    lines = (ROOT / "tests" / "data" / "kernel-build" / "extra-firmware-missing.log").read_text().splitlines()
    config = {"CONFIG_FW_LOADER": "y", "CONFIG_EXTRA_FIRMWARE": '"bootlab-missing.bin"',
              "CONFIG_EXTRA_FIRMWARE_DIR": '"/lib/firmware"', "CONFIG_DEFAULT_HOSTNAME": '"(none)"'}
    message = kernel_build.explain_failure(lines, tree, config, Path("build.log"))
    assert ("/lib/firmware/bootlab-missing.bin is missing, needed by "
            "drivers/base/firmware_loader/builtin/bootlab-missing.bin.gen.o") in message
    # Both options that make the path; not the other strings of the configuration.
    assert message.endswith('named by CONFIG_EXTRA_FIRMWARE="bootlab-missing.bin", '
                            'CONFIG_EXTRA_FIRMWARE_DIR="/lib/firmware"')


def test_a_fragment_with_a_line_that_is_not_kconfig_is_refused(tmp_path):
    fragment = tmp_path / "bad.config"
    fragment.write_text("CONFIG_TTY=y\nTTY=y\n")
    with pytest.raises(kernel_build.KernelBuildError, match=r"bad.config:2: not a Kconfig line"):
        kernel_build.KernelConfig("tinyconfig", [fragment]).requests()


@pytest.mark.parametrize("text, message", [
    ('[target]\nkernel = "generic"\n\n[kconfig]\nbase = "tinyconfig"\n',
     r't.toml:4: \[kconfig\] is read only with target.kernel = "built"'),
    ('[target]\nkernel = "built"\n\n[kconfig]\nbase = "defconfig"\n',
     r"t.toml:5: kconfig.base: base must be one of tinyconfig, generic, cloud"),
    ('[target]\nkernel = "built"\n\n[kconfig]\nfragments = "small.config"\n',
     r"t.toml:5: kconfig.fragments: expected list"),
])
def test_the_kconfig_table_is_checked_with_file_and_line(tmp_path, text, message):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(TargetError, match=message):
        load(str(path))


def test_a_built_kernel_target_names_its_fragments_from_the_target_file():
    target = load(str(SMALL))
    assert target.to_dict()["kconfig"]["fragments"] == ["../kernel/fragments/small-x86_64.config"]
    assert target.kernel_config().fragments == [SMALL_FRAGMENT]
    # A packaged kernel's description is unchanged: no [kconfig] table.
    assert "kconfig" not in load(str(ROOT / "demo" / "camera.toml")).to_dict()


@needs_source
def test_the_source_is_the_packaged_kernels_version():
    k = packaged("generic")
    assert kernel_build.packaged_version(k) == kernel_build.source_version()


@needs_source
@pytest.mark.qemu
def test_small_kernel_builds_once_and_boots_to_ready(tmp_path, capsys, kept_from_a_cpu):
    assert main(["kernel", "build", str(SMALL), "-f", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    image = Path(first["image"])
    assert image.exists() and first["release"].startswith("6.1.192-bootlab-")
    stamp = image.stat().st_mtime_ns
    # The same configuration again: found in the cache, not rebuilt.
    assert main(["kernel", "build", str(SMALL), "-f", "json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["built"] is False and second["image"] == first["image"] and image.stat().st_mtime_ns == stamp
    db = str(tmp_path / "small.db")
    assert main(["boot", "--target", str(SMALL), "--db", db]) == 0
    store = Store(db)
    run = store.get(1)
    assert run.status == "ok", run.reason
    assert run.target["target"]["kernel"] == "built" and run.target["kconfig"]["base"] == "tinyconfig"
    capture = store.capture(1)
    # QEMU loaded the image built, and the kernel that ran says so in its banner.
    assert f"-kernel\", \"{image}\"".encode() in capture.split(b"\n", 1)[0]
    if f"Linux version {first['release']} ".encode() not in capture:
        # Its console lost bytes of the banner, which only a host that kept the console's
        # reader or QEMU's main loop from a CPU may do (test_boot's four-hogs test; once in
        # CI, "] L" of it, with 80 ms of host steal): the banner's first line came within
        # 20 ms of such a stall.
        (tmp_path / "small.capture").write_bytes(capture)
        boot = read([str(tmp_path / "small.capture")])
        log = boot.logs[0]
        banner = next(i for i, text in enumerate(log.text) if "inux version" in text or "ersion 6.1" in text)
        stall = stall_explaining(stalls(boot), log.t[banner])
        assert stall and kept_from_a_cpu(stall), (log.text[banner], stalls(boot))
        if not PRINTK_AT_START.match(log.text[banner]):
            # Its stamp broke: with no kernel log printed after it to compare with, bootlab
            # finds that line by its shape and names it.
            warned = [d.message for d in analyze(boot).boot.diagnostics if d.line == log.lineno[banner]]
            assert any("the console lost at least" in m for m in warned), (log.text[banner], warned)


@needs_source
def test_out_of_tree_modules_build_against_a_built_kernels_kept_headers(tmp_path, capsys):
    # The camera device's kernel (modules, built once and cached by its .config): the
    # scheduler's modules, copied out of the worktree, build against what the cache kept of
    # the build directory, for that kernel's release.
    assert main(["kernel", "build", str(CAMERA), "--print-headers-dir"]) == 0
    headers = Path(capsys.readouterr().out.strip())
    k = kernel_build.build(load(str(CAMERA)).kernel_config()).kernel
    assert headers == k.headers and (k.modules / "build").resolve() == headers.resolve()
    assert not (k.modules / "source").exists()  # the build directory it pointed into is gone
    for part in ("kmod", "core", "include"):
        shutil.copytree(ROOT / "rt" / part, tmp_path / part,
                        ignore=shutil.ignore_patterns("*.o", "*.ko", "*.mod*", ".*", "Module.symvers", "modules.order"))
    done = subprocess.run(["make", "-C", str(tmp_path / "kmod"), f"KDIR={headers}"], capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "WARNING" not in done.stdout + done.stderr  # modpost found every symbol in Module.symvers
    vermagic = subprocess.run(["modinfo", "-F", "vermagic", str(tmp_path / "kmod" / "rtsched.ko")],
                              capture_output=True, text=True, check=True).stdout
    assert vermagic.split()[0] == k.release


@needs_source
def test_a_kernel_without_modules_has_no_headers_to_print(capsys):
    assert main(["kernel", "build", str(SMALL), "--print-headers-dir"]) == 2
    assert "no loadable modules (CONFIG_MODULES)" in capsys.readouterr().err


def test_a_cached_kernel_with_modules_but_no_headers_is_built_again(tmp_path):
    # A kernel cached before the headers were kept cannot build out-of-tree modules: the
    # cache does not count it as built (build() then compiles it again, from ccache).
    release = "6.1.192-bootlab-0123abcd"
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot" / f"config-{release}").write_text("CONFIG_MODULES=y\n")
    (tmp_path / "kernel.json").write_text(json.dumps({"release": release}))
    assert kernel_build._installed(tmp_path, "0123abcd") is None
    (tmp_path / "headers").mkdir()
    (tmp_path / "headers" / "Module.symvers").write_text("")
    assert kernel_build._installed(tmp_path, "0123abcd").release == release
