"""Out-of-tree modules built against the kernel a target boots ([initramfs] kbuild): the
scheduler's modules for Debian's packaged kernel and for the camera device's own kernel,
each with that kernel's version magic, built once, the source tree left as it was; a
directory that is not a Kbuild directory, and a module that does not compile, refused with
the reason.  The boot of the camera device's kernel with them is test_guest.py's x86-built
scenario and test_a_kernel_candidate_boots_with_modules_built_for_it below."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bootlab.targets import kbuild, kernel_build, packages, reference
from bootlab.targets.description import TargetError

# Nothing here depends on the host's load (orders and contents, no durations): it runs
# beside other tests (make test's parallel phase).
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[2]
KMOD = ROOT / "rt" / "kmod"
CAMERA_BUILT = ROOT / "demo" / "camera-built.toml"


def _vermagic(ko: Path) -> str:
    return subprocess.run(["modinfo", "-F", "vermagic", str(ko)], capture_output=True, text=True,
                          check=True).stdout.strip()


def _tree(directory: Path) -> dict[str, float]:
    return {str(p.relative_to(directory)): p.stat().st_mtime for p in directory.rglob("*")}


def _kernels():
    camera = reference.load(str(CAMERA_BUILT))
    return [packages.kernel("generic"), kernel_build.build(camera.kernel_config()).kernel]


def test_modules_are_built_for_each_kernel_once_and_the_source_tree_is_left_alone():
    before = _tree(KMOD)
    for kernel in _kernels():
        built = kbuild.modules(kernel, KMOD)
        assert {ko.name for ko in built} >= {"rtsched.ko", "rtsched_hsf.ko"}
        for ko in built:
            assert _vermagic(ko).split()[0] == kernel.release, ko
            # Stripped of debug information, as Debian installs modules.
            sections = subprocess.run(["readelf", "-S", str(ko)], capture_output=True, text=True).stdout
            assert ".debug_info" not in sections, ko
        stamps = {ko: ko.stat().st_mtime_ns for ko in built}
        again = kbuild.modules(kernel, KMOD)
        assert again == built and {ko: ko.stat().st_mtime_ns for ko in again} == stamps  # from the cache
    assert _tree(KMOD) == before


def test_the_initramfs_files_name_each_module_in_its_guest_directory():
    kernel = packages.kernel("generic")
    files = kbuild.files(kernel, {"/rt/": str(KMOD)})
    assert files == {f"/rt/{ko.name}": str(ko) for ko in kbuild.modules(kernel, KMOD)}


def test_a_directory_without_kbuild_is_refused(tmp_path):
    with pytest.raises(TargetError, match=f"{tmp_path}: no Kbuild or Makefile"):
        kbuild.modules(packages.kernel("generic"), tmp_path)


def test_a_module_that_does_not_compile_names_its_directory_the_error_and_the_log(tmp_path):
    module = tmp_path / "src" / "broken"
    module.mkdir(parents=True)
    (module / "Kbuild").write_text("obj-m := broken.o\n")
    (module / "broken.c").write_text("#include <linux/module.h>\nint broken(void) { return undeclared; }\n"
                                     "MODULE_LICENSE(\"GPL\");\n")
    with pytest.raises(TargetError) as err:
        kbuild.modules(packages.kernel("generic"), module)
    message = str(err.value)
    assert str(module) in message and "undeclared" in message and "build.log" in message


@pytest.mark.qemu
def test_a_kernel_candidate_boots_with_modules_built_for_it(tmp_path):
    """The optimizer's configuration candidates change the kernel: the camera device's
    scheduler step still loads its modules (before, the prebuilt ones were refused and the
    boot failed at the step)."""
    from bootlab.targets import strategy

    target = reference.load(str(CAMERA_BUILT))
    target.kconfig.options = {**target.kconfig.options, "LOCALVERSION": '"-candidate"'}
    target.initramfs.after = []
    built = reference.build(target)
    assert "-candidate" in built.kernel.release
    result = strategy.boot(built, str(tmp_path / "boot.capture"))
    assert result.status == "ok", result.reason
