"""Where a hung guest's CPUs stood (targets/qemu_cpus.py): QEMU's register dumps of real
guests read (x86 decompressing its kernel with CPU 1 still in SeaBIOS, x86 and arm64 with
an application spinning in user space, arm64 in its KPTI trampoline), addresses named by
a symbol table, and real hung boots of both reference devices naming the kernel function
each CPU was in, KASLR undone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.sources import read
from bootlab.targets import arm64_board, kinds, strategy
from bootlab.targets.qemu_cpus import CpuState, Monitor, Symbols, parse_registers
from bootlab.targets.reference import Target, build

from . import captured

pytestmark = pytest.mark.parallel  # orders and contents: nothing the host's load changes

DUMPS = Path(__file__).resolve().parents[1] / "data" / "qemu-cpus"
DEMO = Path(__file__).resolve().parents[2] / "demo" / "board-arm64.toml"


def _dump(name: str) -> list[CpuState]:
    return parse_registers((DUMPS / name).read_text())


def test_an_x86_guest_decompressing_its_kernel_while_cpu1_waits_in_the_firmware():
    cpu0, cpu1 = _dump("x86-decompressing.txt")
    assert (cpu0.index, cpu0.level, cpu0.halted, cpu0.pc) == (0, "boot code", False, 0x4f3b1e0)
    # Not yet started by the kernel: 32-bit registers (EIP), halted in SeaBIOS.
    assert (cpu1.index, cpu1.level, cpu1.halted, cpu1.pc) == (1, "the firmware", True, 0xfd09a)
    assert cpu1.describe() == "CPU 1 halted in the firmware at 0xfd09a"


def test_an_x86_guest_with_its_application_spinning():
    idle, spinning = _dump("x86-user-spinning.txt")
    assert (idle.level, idle.halted) == ("the kernel", True)
    assert (spinning.level, spinning.halted, spinning.pc) == ("user space", False, 0x52bbb5)
    assert spinning.describe() == "CPU 1 running in user space at 0x52bbb5"


def test_arm64_guests_by_their_exception_level():
    spinning, idle = _dump("arm64-user-spinning.txt")
    assert (spinning.level, spinning.pc, spinning.halted) == ("user space", 0x402e1c, None)
    assert idle.level == "the kernel" and idle.describe().startswith("CPU 1 in the kernel at 0xffff")
    # At EL1 in KPTI's trampoline: the kernel, outside its code.
    trampoline, _ = _dump("arm64-kpti-trampoline.txt")
    assert (trampoline.level, trampoline.pc) == ("the kernel", 0xfffffbfffdbf8024)


def test_an_address_is_named_within_the_kernels_code_only():
    symbols = Symbols([(0x1000, "_text"), (0x1000, "start"), (0x1400, "idle"), (0x2000, "_etext"),
                       (0x3000, "linux_banner")], b"")
    assert symbols.name(0x1404) == "idle+0x4" and symbols.name(0x1000) in ("_text+0x0", "start+0x0")
    assert symbols.name(0x3004) == "" and symbols.name(0x10) == ""  # data, below the kernel
    assert symbols.banner == 0x3000 and symbols.text == range(0x1000, 0x2000)


def test_a_monitor_that_does_not_answer_is_said_and_loses_nothing():
    where, registers = Monitor().where(Path("/nonexistent"))  # no QEMU listens on it
    assert where.startswith("QEMU's monitor did not say where the CPUs were (") and registers == ""


def test_a_dump_without_cpus_says_so():
    assert parse_registers("") == [] and parse_registers("(qemu) garbage\r\n") == []


needs_arm64 = pytest.mark.skipif(not shutil.which("qemu-system-aarch64"), reason="needs QEMU (make setup)")


def _hang(result, capture: Path) -> list[str]:
    """A hung boot's reason says where each CPU stood; so does the capture, and QEMU's
    registers are kept beside it."""
    assert result.status == "timeout" and result.reason.startswith("killed: silence"), result.reason
    registers = Path(f"{capture}.cpus")
    assert f"(registers in {registers})" in result.reason and "CPU#0" in registers.read_text()
    before, after = captured.around(capture, b"hung CPU 0 ")
    assert before and not after  # asked when nothing more came, before power-off
    return [c.strip() for c in re.findall(r"CPU \d[^;(]*", result.reason)]


@pytest.mark.qemu
def test_a_hung_x86_boot_names_the_kernel_function_each_cpu_waits_in(tmp_path):
    t = Target()
    t.initramfs.init, t.initramfs.app = "script", "sleep 1000"
    # CPU 1 is never started (maxcpus=1): no kernel code is patched while two vCPUs run,
    # which QEMU's multi-threaded TCG does not survive (rt/README.md, "SMP guests under TCG").
    t.target.cpus, t.target.append = 2, t.target.append + " maxcpus=1"
    t.boot.silence = 12  # longer than the silent decompression on a loaded host
    capture = tmp_path / "hung.capture"
    cpu0, cpu1 = _hang(strategy.boot(build(t), str(capture)), capture)
    # Idle: halted in the kernel's idle loop, named although KASLR moved the kernel; the CPU
    # the kernel never started still waits in SeaBIOS.
    assert re.fullmatch(r"CPU 0 halted in native_safe_halt\+0x[0-9a-f]+", cpu0), cpu0
    assert re.fullmatch(r"CPU 1 halted in the firmware at 0x[0-9a-f]+", cpu1), cpu1
    # Its analysis says so too (bootlab show, bootlab analyze CAPTURE).
    (note,) = [n for n in analyze(read([str(capture)])).phases.notes if "ended this boot as hung" in n]
    assert f"{cpu0}; {cpu1}" in note


@pytest.mark.qemu
@needs_arm64
def test_a_hung_arm64_board_names_the_kernel_function_each_cpu_waits_in(tmp_path):
    board = kinds.load(str(DEMO))
    board.initramfs.init, board.initramfs.app = "script", "sleep 1000"
    board.initramfs.files, board.initramfs.modules = {}, []
    board.target.cpus = 2
    board.boot.silence = 15
    capture = tmp_path / "hung.capture"
    cpus = _hang(strategy.boot(arm64_board.build(board), str(capture)), capture)
    # Debian's arm64 kallsyms has code symbols only: the banner is found in the Image.
    assert len(cpus) == 2 and all(re.fullmatch(r"CPU \d in cpu_do_idle\+0x[0-9a-f]+", c) for c in cpus), cpus
