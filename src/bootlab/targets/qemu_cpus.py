"""Where a hung guest's CPUs stood: asked of QEMU's monitor (QMP) before a boot that printed
nothing for too long is killed, and named by the booted kernel's own symbol table.

"Killed: nothing for 300 s" says a boot hung, not where.  A bring-up engineer's first
question is what each CPU was doing: still in the firmware or the kernel's decompressor,
halted in the idle loop waiting for an interrupt that never came, spinning in the kernel,
or running the application.  QEMU knows (its register dump, `info registers -a`); the
kernel's symbols come from its image (kallsyms, read by vmlinux-to-elf's kallsyms-finder:
Debian's System.map is a placeholder, the real one is in a debug package of 800 MB).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import subprocess
import sys
import tempfile
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from qemu.qmp.legacy import QEMUMonitorProtocol

from . import packages

# Both kernels (x86_64, arm64) are placed at a multiple of 2 MiB: the low 21 bits of an
# address are the same before and after KASLR moved the kernel.
KASLR_ALIGN = 1 << 21
# The banner's first bytes, read at its address moved by a candidate offset, confirm it.
BANNER = b"Linux version "
TIMEOUT = 10.0  # seconds for the monitor to answer (QEMU's main loop is not the hung guest)


@dataclass
class CpuState:
    index: int
    pc: int
    level: str  # "user space", "the kernel", "the firmware" (x86: real mode or below 1 MiB), "boot code"
    halted: bool | None  # None where QEMU does not say (arm64)
    symbol: str = ""  # function+0xoffset in the kernel, when found

    def describe(self) -> str:
        state = {True: " halted", False: " running"}.get(self.halted, "")
        place = self.symbol or f"{self.level} at {self.pc:#x}"
        return f"CPU {self.index}{state} in {place}"


def parse_registers(dump: str) -> list[CpuState]:
    """The CPUs of `info registers -a`: x86's (RIP, CPL, HLT, CR0) or arm64's (PC, PSTATE's
    exception level)."""
    cpus = []
    for block in re.split(r"^CPU#", dump, flags=re.M)[1:]:
        index = int(block.split(None, 1)[0])
        fields = dict(re.findall(r"([A-Z][A-Z0-9]*)\s*=\s*([0-9a-fA-F]+)", block))
        ip = fields.get("RIP") or fields.get("EIP")  # EIP: a CPU not (yet) in 64-bit mode
        if ip is not None:
            pc, cr0 = int(ip, 16), int(fields.get("CR0", "1"), 16)
            level = ("user space" if fields.get("CPL") == "3" else "the kernel" if pc >= 0xffffffff80000000
                     else "the firmware" if not cr0 & 1 or pc < 1 << 20 else "boot code")
            cpus.append(CpuState(index, pc, level, fields.get("HLT") == "1"))
        elif "PC" in fields:
            el = re.search(r"\bEL(\d)", block)
            level = "user space" if el and el.group(1) == "0" else (
                "the kernel" if int(fields["PC"], 16) >= 1 << 63 else "boot code")
            cpus.append(CpuState(index, int(fields["PC"], 16), level, None))
    return cpus


class Symbols:
    """A kernel's symbol table as linked (before KASLR moves it): name+offset of an address,
    its code's range, and where its banner is."""

    def __init__(self, table: list[tuple[int, str]], image: bytes):
        self.table = sorted(table)
        self.addresses = [a for a, _ in self.table]
        names = {name: address for address, name in self.table}
        start, end = names.get("_text", names.get("_stext")), names.get("_etext")
        self.text = range(start, end) if start is not None and end is not None else range(0)
        self.banner = names.get("linux_banner")
        at = image.find(BANNER)
        if self.banner is None and image[0x38:0x3c] == b"ARM\x64" and "_stext" in names and at >= 0:
            # An uncompressed arm64 Image, whose kallsyms has no data symbols (Debian's arm64
            # kernel has no KALLSYMS_ALL): its first byte is _text, on the 2 MiB boundary
            # below _stext.
            self.banner = names["_stext"] - names["_stext"] % KASLR_ALIGN + at

    def name(self, address: int) -> str:
        i = bisect_right(self.addresses, address) - 1
        if i < 0 or address not in self.text:
            return ""
        return f"{self.table[i][1]}+{address - self.addresses[i]:#x}"


def kernel_symbols(image: Path) -> Symbols | None:
    """The symbols kallsyms keeps in `image` (compressed or not), cached by the image's
    contents.  kallsyms-finder runs as a program of its own (GPL-3.0; bootlab is GPL-2.0)."""
    data = image.read_bytes()
    out = packages.cache_dir() / "kallsyms" / f"{hashlib.sha256(data).hexdigest()[:16]}.kallsyms"

    def extract(path: Path) -> None:
        with tempfile.TemporaryDirectory() as work:
            done = subprocess.run([sys.executable, "-m", "vmlinux_to_elf.scripts.kallsyms_finder", str(image),
                                   "--output", os.path.join(work, "k")], capture_output=True, text=True)
            table = Path(work, "k.kallsyms")
            # An image without kallsyms, or one the tool cannot read, is remembered as such.
            packages.write_atomically(path, table.read_bytes() if done.returncode == 0 and table.exists() else b"")

    packages.made_once(out, extract)
    table = []
    for line in out.read_text().splitlines():
        address, _kind, name = line.split(maxsplit=2)
        table.append((int(address, 16), name))
    return Symbols(table, data) if table else None


class Monitor:
    """QEMU's QMP socket for one boot (an abstract Unix socket: nothing to clean up and no
    path-length limit in the capture's directory)."""

    _count = itertools.count()

    def __init__(self, name: str | None = None) -> None:
        self.name = name or f"bootlab-qmp-{os.getpid()}-{next(self._count)}"

    def argv(self) -> list[str]:
        return ["-qmp", f"unix:{self.name},abstract=on,server=on,wait=off"]

    def _connect(self) -> QEMUMonitorProtocol:
        qmp = QEMUMonitorProtocol("\0" + self.name)
        try:
            qmp.connect()
        except BaseException:
            qmp.close()
            raise
        qmp.settimeout(TIMEOUT)
        return qmp

    def where(self, image: Path) -> tuple[str, str]:
        """One line saying where each CPU stood, and QEMU's whole register dump."""
        qmp = None
        try:
            qmp = self._connect()
            dump = self._hmp(qmp, "info registers -a")
            cpus = parse_registers(dump)
            in_kernel = [c for c in cpus if c.level == "the kernel"]
            symbols = kernel_symbols(image) if in_kernel else None
            if symbols is not None:
                # A CPU in the kernel may be outside its code (arm64's KPTI trampoline).
                offset = next((o for o in (self._kaslr_offset(qmp, symbols, c) for c in in_kernel) if o is not None),
                              None)
                for cpu in in_kernel:
                    cpu.symbol = symbols.name(cpu.pc - offset) if offset is not None else ""
        except Exception as err:  # noqa: BLE001 - a monitor that cannot answer must not lose the boot
            return f"QEMU's monitor did not say where the CPUs were ({type(err).__name__}: {err})", ""
        finally:
            if qmp is not None:
                qmp.close()
        return "; ".join(c.describe() for c in cpus) or "QEMU's monitor listed no CPU", dump

    @staticmethod
    def _hmp(qmp: QEMUMonitorProtocol, command: str, cpu: int | None = None) -> str:
        args = {"command-line": command, **({"cpu-index": cpu} if cpu is not None else {})}
        return str(qmp.cmd("human-monitor-command", **args))

    def _kaslr_offset(self, qmp: QEMUMonitorProtocol, symbols: Symbols, cpu: CpuState) -> int | None:
        """How far KASLR moved the kernel: the offsets that put `cpu`'s address in the
        kernel's code (its low 21 bits do not move), tried until the banner reads back
        through that CPU's page tables."""
        text, banner = symbols.text, symbols.banner
        if not text or banner is None:
            return None
        low = cpu.pc % KASLR_ALIGN
        for base in range(text.start - text.start % KASLR_ALIGN, text.stop, KASLR_ALIGN):
            offset = cpu.pc - (base + low)
            read = self._hmp(qmp, f"x/{len(BANNER)}xb {banner + offset:#x}", cpu.index)
            if bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})\b", read)) == BANNER:
                return offset
        return None
