"""The ARM64 reference board (targets/arm64_board.py): its description read and checked,
and real boots of QEMU's virt machine through Debian's U-Boot for qemu_arm64, the kernel
and initramfs loaded over TFTP; a file missing from the TFTP directory and a firmware that
never reaches U-Boot's prompt are failed runs naming their step."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bootlab.advice import advise
from bootlab.analysis import analyze
from bootlab.cli import main
from bootlab.lab import patch
from bootlab.lab.candidates import from_advice
from bootlab.sourcemap import read_toml
from bootlab.sources import read
from bootlab.targets import arm64_board, initramfs, kinds, packages, strategy, uboot_images
from bootlab.targets.description import TargetError

from . import captured

# Nothing here depends on the host's load (orders and contents, no durations): it runs
# beside other tests (make test's parallel phase).
pytestmark = pytest.mark.parallel

AARCH64 = 183  # ELF e_machine
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "board-arm64.toml"
SHIPPED = ROOT / "demo" / "board-arm64-shipped.toml"
STUCK_CPU = ROOT / "demo" / "board-arm64-stuck-cpu.toml"
GRABBER = ROOT / "apps" / "grabber" / "build" / "arm64" / "static" / "grabber"
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-aarch64"), reason="needs QEMU (make setup)")
needs_grabber = pytest.mark.skipif(not GRABBER.exists(), reason="needs the arm64 grabber (make build)")


def test_the_demo_board_is_an_arm64_kind():
    spec = kinds.load(str(DEMO))
    assert isinstance(spec, arm64_board.Arm64Board)
    assert spec.target.cpu == "cortex-a57" and spec.bootloader.stop_autoboot


def test_a_bad_key_is_named_with_its_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[arm64]\nkernel = "rt"\n[bootloader]\nboot_command = "boot"\n')
    with pytest.raises(TargetError, match=r"bad.toml:3: arm64.kernel: kernel must be one of generic, cloud"):
        kinds.load(str(bad))


def test_the_board_needs_its_bootloader(tmp_path):
    bad = tmp_path / "bare.toml"
    bad.write_text('[arm64]\nkernel = "cloud"\n')
    with pytest.raises(TargetError, match="arm64.bootloader: the board boots through U-Boot"):
        kinds.load(str(bad))


def _board(patch: dict) -> arm64_board.Arm64Board:
    data, _ = read_toml(str(DEMO))
    for table, values in patch.items():
        data[table] = {**data.get(table, {}), **values}
    return kinds.from_dict(data, base=DEMO.parent)


def _booted(built, capture: Path) -> bytes:
    """Boot the built board to ready, capturing to `capture`; the console's bytes as the
    board printed them (a phrase may span two of the capture's timestamped records)."""
    result = strategy.boot(built, str(capture))
    assert result.status == "ok", result.reason
    return captured.console(capture)


@pytest.mark.qemu
@needs_qemu
@needs_grabber
@pytest.mark.parametrize("image", ["Image", "Image.gz"])
def test_the_board_boots_through_uboot_to_the_first_frame(tmp_path, image):
    board = _board({"arm64": {"image": image}})
    capture = tmp_path / "arm64.capture"
    text = _booted(arm64_board.build(board), capture)
    before, after = captured.around(capture, b"sent ' '")
    assert b"Hit any key to stop autoboot" in before and b"Bytes transferred" in after
    assert b"Starting kernel" in text and b"BOOTLAB READY" in text


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_cpu_the_firmware_never_starts_is_advised_away_and_maxcpus_boots_without_it(tmp_path):
    """A real boot of the board whose CPU 1 waits on a spin table nothing releases: the
    kernel gives up on it, the advice finds the wait and proposes `maxcpus=1` (as the
    optimizer takes it: in [arm64]'s command line), and the board booted with that brings
    up its one CPU without waiting for the other."""
    stuck = kinds.load(str(STUCK_CPU))
    capture = tmp_path / "stuck.capture"
    text = _booted(arm64_board.build(stuck), capture)
    assert b"CPU1: failed to come online" in text and b"smp: Brought up 1 node, 1 CPU" in text
    boot = read([str(capture)])
    (finding,) = [f for f in advise(boot, analyze(boot), stuck.to_dict()) if f.rule == "cmdline.maxcpus"]
    assert "`maxcpus=1`" in finding.title and finding.saving_ns > 0
    (candidate,) = from_advice([finding], kinds.kind_of(stuck.to_dict()).cmdline)
    assert candidate.patch == {"arm64": {"append": "maxcpus=1"}}
    fixed = kinds.from_dict(patch.apply(stuck.to_dict(), candidate.patch), base=STUCK_CPU.parent)
    text = _booted(arm64_board.build(fixed), tmp_path / "fixed.capture")
    assert b"failed to come online" not in text and b"smp: Brought up 1 node, 1 CPU" in text
    assert b"maxcpus=1" in text and b"BOOTLAB READY" in text


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_one_fit_image_holds_the_kernel_and_the_initramfs(tmp_path):
    board = _board({"arm64": {"fit": True}, "bootloader": {"boot_command": arm64_board.FIT_BOOT_COMMAND}})
    built = arm64_board.build(board)
    assert sorted(p.name for p in built.tftp.iterdir()) == ["boot.itb", "boot.scr.uimg"]
    text = _booted(built, tmp_path / "fit.capture")
    assert b"Filename 'boot.itb'" in text and b"Trying 'ramdisk-1' ramdisk subimage" in text
    assert b"BOOTLAB READY" in text


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_file_missing_from_the_tftp_directory_fails_the_boot_step(tmp_path):
    board = _board({"bootloader": {"boot_command": "tftpboot ${kernel_addr_r} vmlinux.missing && booti ${kernel_addr_r}",
                                   "timeout": 20}})
    result = strategy.boot(arm64_board.build(board), str(tmp_path / "missing.capture"))
    assert result.status == "failed"
    assert result.reason.startswith("bootloader: boot:")
    assert b"File not found" in captured.console(tmp_path / "missing.capture")


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_firmware_that_never_reaches_uboot_fails_at_reaching_autoboot(tmp_path):
    blank = tmp_path / "blank.bin"
    blank.write_bytes(b"\0" * 4096)  # the CPU runs zeros: nothing is ever printed
    board = _board({"arm64": {"firmware": str(blank)}, "bootloader": {"timeout": 3}})
    result = strategy.boot(arm64_board.build(board), str(tmp_path / "blank.capture"))
    assert result.status == "failed"
    assert result.reason.startswith("bootloader: reach autoboot:")


def _machine(elf: bytes) -> int:
    assert elf[:4] == b"\x7fELF"
    return int.from_bytes(elf[18:20], "little")


def test_the_initramfs_and_init_are_built_for_the_kernels_architecture(tmp_path):
    kernel = packages.kernel("generic", arch="arm64")
    assert kernel.release.endswith("-arm64") and kernel.image.exists()
    spec = initramfs.InitramfsSpec(kernel, init="direct", modules=["vivid"], app="/bin/true")
    files = _cpio_files(initramfs.archive(spec), tmp_path)
    assert _machine(files["bin/busybox"]) == AARCH64
    assert _machine(files["init"]) == AARCH64
    assert any(name.endswith("/vivid.ko") and kernel.release in name for name in files)


RT_ARM64 = ROOT / "rt" / "build" / "arm64"
RT_ARM64_MODULES = ROOT / "rt" / "build" / "kmod-arm64" / "kmod"


@pytest.mark.skipif(not (RT_ARM64 / "rtctl").exists(), reason="needs the arm64 scheduler (make build)")
def test_the_scheduler_is_built_for_the_boards_kernel():
    """rt/Makefile's arm64 target: the programs are static aarch64 executables, the modules
    carry the board kernel's vermagic (as Debian's own vivid.ko does) and its symbol CRCs."""
    kernel = packages.kernel("generic", arch="arm64")
    tree = packages.headers(kernel)
    assert "override ARCH = arm64" in (tree / ".kernelvariables").read_text()
    assert (tree / "scripts" / "Makefile.modpost").exists()  # the host's kbuild, through the cache's link
    for name in ("rtctl", *(p.stem for p in (ROOT / "rt" / "tests" / "guest").glob("*.c"))):
        elf = (RT_ARM64 / name).read_bytes()
        assert _machine(elf) == AARCH64 and not _interpreted(elf), name
    vivid = kernel.modules / packages.load_order(kernel, ["vivid"])[-1][1]
    expected = _modinfo(vivid, "vermagic")
    assert expected.startswith(kernel.release + " ")
    modules = sorted(RT_ARM64_MODULES.glob("*.ko"))
    assert [m.name for m in modules] == ["rtsched.ko", "rtsched_edf.ko", "rtsched_fp.ko", "rtsched_hsf.ko"]
    for ko in modules:
        assert _machine(ko.read_bytes()) == AARCH64
        assert _modinfo(ko, "vermagic") == expected, ko.name
    assert b"__versions" in (RT_ARM64_MODULES / "rtsched.ko").read_bytes()  # modversions' CRCs


def test_target_fetch_prints_the_arm64_headers_tree(capsys):
    """What the Makefile's KDIR_ARM64 is: the unpacked tree, its Makefile Debian's."""
    assert main(["target", "fetch", "--arch", "arm64", "--print-headers-dir"]) == 0
    tree = Path(capsys.readouterr().out.strip())
    kernel = packages.kernel("generic", arch="arm64")
    assert tree == packages.headers(kernel) and tree.name == kernel.headers_package
    assert "linux-headers-" in (tree / "Makefile").read_text()


def test_headers_whose_build_tools_the_host_lacks_are_refused_with_the_package_to_install(tmp_path):
    """An arm64 headers tree (as its package unpacks it) naming a kbuild the host has not got."""
    kernel = packages.Kernel("6.1.0-56", "generic", tmp_path, "arm64")
    tree = tmp_path / "usr" / "src" / kernel.headers_package
    tree.mkdir(parents=True)
    (tree / "scripts").symlink_to("../../lib/linux-kbuild-0.0/scripts")
    (tmp_path / ".unpacked-headers-generic-arm64").touch()
    with pytest.raises(packages.PackageError, match=r"/usr/lib/linux-kbuild-0.0 is missing: building modules for "
                       r"6.1.0-56-arm64 needs the host's linux-kbuild-0.0"):
        packages.headers(kernel, fetch=False)


def _interpreted(elf: bytes) -> bool:
    """Whether an ELF64 file names a dynamic loader (a PT_INTERP program header)."""
    offset, size, count = (int.from_bytes(elf[a:b], "little") for a, b in ((32, 40), (54, 56), (56, 58)))
    return any(int.from_bytes(elf[offset + i * size:offset + i * size + 4], "little") == 3 for i in range(count))


def _modinfo(ko: Path, field: str) -> str:
    return subprocess.run(["modinfo", "-F", field, str(ko)], capture_output=True, text=True, check=True).stdout.strip()


def _cpio_files(raw: bytes, into: Path) -> dict[str, bytes]:
    """The regular files of a newc archive, by name, unpacked by GNU cpio."""
    subprocess.run(["cpio", "-id", "--quiet"], input=raw, cwd=into, check=True)
    return {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*") if p.is_file() and not p.is_symlink()}


def test_the_firmwares_default_environment_is_read_from_its_binary():
    env = uboot_images.default_environment(Path(arm64_board.BoardSection().firmware))
    assert env["bootdelay"] == "2" and env["bootcmd"] == "run distro_bootcmd"
    assert env["kernel_addr_r"] == "0x40400000" and "dhcp" in env["boot_targets"]


def test_a_file_that_is_not_uboot_has_no_default_environment(tmp_path):
    blank = tmp_path / "blank.bin"
    blank.write_bytes(b"\0" * 4096)
    with pytest.raises(TargetError, match="blank.bin: no default environment found"):
        uboot_images.default_environment(blank)


def test_the_saved_environment_is_the_default_with_the_boards_variables_over_it():
    board = _board({"arm64": {"image": "Image.gz", "append": "quiet"},
                    "bootloader": {"stop_autoboot": False, "env": {}, "saved_env": {"bootdelay": "0"}}})
    env = arm64_board.saved_environment(board)
    assert env["bootdelay"] == "0" and env["bootcmd"] == "run distro_bootcmd"
    assert env["bootargs"] == "console=ttyAMA0,115200 panic=-1 quiet" and env["bootfile"] == "Image.gz"
    assert env["bootlab_boot"] == board.bootloader.boot_command and "kernel_comp_addr_r" in env
    script = arm64_board.script(board)
    assert script.splitlines()[0] == 'setenv bootargs "console=ttyAMA0,115200 panic=-1 quiet"'
    assert script.splitlines()[-1] == board.bootloader.boot_command


def test_only_the_arm64_board_can_save_an_environment(tmp_path):
    bad = tmp_path / "x86.toml"
    bad.write_text('[target]\nfirmware = "u-boot"\n[bootloader]\nstop_autoboot = false\nboot_command = ""\n'
                   '[bootloader.saved_env]\nbootdelay = "0"\n')
    with pytest.raises(TargetError, match="bootloader.saved_env: Debian's U-Boot for qemu-x86 keeps no environment"):
        kinds.load(str(bad))


def test_typed_variables_need_the_dialogue(tmp_path):
    with pytest.raises(TargetError, match="bootloader.stop_autoboot: env is typed at the prompt"):
        _board({"bootloader": {"stop_autoboot": False}})


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_the_board_as_debian_ships_it_boots_its_default_environment(tmp_path):
    board = kinds.load(str(SHIPPED))
    capture = tmp_path / "shipped.capture"
    text = _booted(arm64_board.build(board), capture)
    assert b"bad CRC, using default environment" in text and b"Hit any key to stop autoboot:  2" in text
    assert b"sent '" not in capture.read_bytes()  # nothing typed
    assert b"DHCP client bound" in text and b"Filename 'boot.scr.uimg'" in text and b"BOOTLAB READY" in text


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_saved_environment_boots_directly_without_the_countdown(tmp_path):
    saved = {"bootdelay": "0", "bootcmd": "run bootlab_boot", **arm64_board.STATIC_NETWORK}
    board = _board({"bootloader": {"stop_autoboot": False, "env": {}, "saved_env": saved}})
    built = arm64_board.build(board)
    text = _booted(built, tmp_path / "saved.capture")
    assert b"Loading Environment from Flash... OK" in text and b"Hit any key to stop autoboot:  0" in text
    assert b"DHCP" not in text and b"boot.scr.uimg" not in text and b"BOOTLAB READY" in text
    assert built.flash.stat().st_size == arm64_board.FLASH_BANK


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_boot_command_of_its_own_that_starts_no_kernel_fails_the_boot_at_the_prompt(tmp_path):
    """U-Boot running the bootcmd saved on the board (nothing typed) that comes back to its
    prompt: the run fails then, naming what U-Boot said, not at the deadline as a timeout;
    and the capture, read as a log, is a boot that failed in the bootloader."""
    saved = {"bootdelay": "0", "bootcmd": "tftpboot ${kernel_addr_r} vmlinux.missing && booti ${kernel_addr_r}",
             **arm64_board.STATIC_NETWORK}
    board = _board({"bootloader": {"stop_autoboot": False, "env": {}, "saved_env": saved}})
    capture = tmp_path / "gave-up.capture"
    result = strategy.boot(arm64_board.build(board), str(capture))
    assert result.status == "failed"
    assert result.reason.startswith("bootloader: boot: its own boot command did not start a kernel: TFTP error")
    assert "File not found" in result.reason
    boot = read([str(capture)])
    phases = analyze(boot).phases
    assert phases.end.mark == "failure" and "Bootloader gave up: " in phases.end.evidence
    first = advise(boot, analyze(boot))[0]
    assert first.rule == "boot.bootloader-gave-up" and "File not found" in " ".join(first.evidence)


def test_a_fit_image_needs_the_ram_to_load_it():
    with pytest.raises(TargetError, match="arm64.fit: a FIT image is loaded at 0x48000000"):
        _board({"arm64": {"fit": True, "memory": 128}})


@pytest.mark.qemu
@needs_qemu
@needs_grabber
def test_a_gzipped_kernel_boots_on_a_128_mib_board(tmp_path):
    """booti inflates below the ramdisk, not where U-Boot relocated itself to the top of a
    small board's RAM (found when the optimizer combined image-gz with ram-128M)."""
    board = _board({"arm64": {"image": "Image.gz", "memory": 128}})
    _booted(arm64_board.build(board), tmp_path / "small.capture")
