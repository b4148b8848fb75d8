"""Kernel milestones inside printk messages: phase boundaries and facts about the boot.

The kernel-to-userspace boundary is found from any of

    Freeing unused kernel memory: 1476K (ffffffff81f41000 - ffffffff820b2000)   (older)
    Freeing unused kernel image (initmem) memory: 2824K                        (newer)
    Freeing init memory: 136K                                                 (2.6, ARM/MIPS/PowerPC)
    Write protecting the kernel read-only data: 30720k
    Run /init as init process

and facts advice needs later are kept in `boot.meta`: kernel version, command line,
loops_per_jiffy, memory, root filesystem, console.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..timeline import Boot, Event, Kind, Mark

# Milestones that are not phase boundaries but are worth placing on the timeline.
CALIBRATE = "kernel.calibrate"
SMP_UP = "kernel.smp-up"
DEVTMPFS = "kernel.devtmpfs"
NETLINK = "kernel.netlink"  # netlink's core initcall registered its protocol family
INITRAMFS_UNPACK = "kernel.initramfs-unpack"
INITRD_FREED = "kernel.initrd-freed"
ROOT_MOUNTED = "kernel.root-mounted"
# "Waiting for root device PARTUUID=...": with rootwait the kernel waits, after its
# initcalls, until the root device appears; a boot whose device never came waits for ever.
ROOT_WAIT = "kernel.root-wait"
FREE_INITMEM = "kernel.free-initmem"
WRITE_PROTECT = "kernel.write-protect"
BANNER = "kernel.banner"
PANIC = "kernel.panic"  # "Kernel panic - not syncing: VFS: Unable to mount root fs ...": the boot failed
PANIC_WORDS = "Kernel panic - not syncing: "  # (also what a capture stops a failed boot's reading on)
# The kernel restarting the board, powering it off or halting it (kernel_restart() and its
# siblings: `reboot: Restarting system`, before 3.15 `Restarting system.`): asked for by
# userspace's reboot(2), or, before userspace, by a driver or the platform (a fault's orderly
# reboot, a watchdog's pretimeout), a failed boot (analysis/phases.py).  A panic's own reboot
# (`panic=N`) prints no such line.
RESTART = "kernel.restart"
_RESTART = re.compile(r"^(?:reboot: (?:Restarting system|Power down|System halted)|Restarting system\.$)")
BOOT_CPU = "kernel.boot-cpu"  # "Booting Linux on physical CPU 0x0": ARM's first message, just before the banner
# "sched_clock: 57 bits at 63MHz, ...": the timer printk's clock counts from registered (ARM,
# RISC-V): the messages before it are stamped zero, however long the kernel ran before it.
SCHED_CLOCK = "kernel.sched-clock"
# A console starting ("printk: console [ttyS0] enabled"; "printk: legacy console [ttyS0]
# enabled" from 6.7), and a boot console (earlycon, earlyprintk) that printed each message as
# it was logged before the real one started: see console_cost.replay.
CONSOLE_ENABLED = "kernel.console-enabled"
BOOT_CONSOLE = "kernel.boot-console"
# A boot console unregistered ("printk: bootconsole [uart8250] disabled"): when the first
# real console started (a screen, say), so a serial console registered after it prints the
# messages logged so far again.
BOOT_CONSOLE_GONE = "kernel.boot-console-gone"
# PID 1 heard from, when the kernel does not say it started it (2.6 and 3.x print no "Run
# /init"; an Android kernel may free no init memory): Android's init logging to the kernel
# ("init: could not open /dev/keychord") or the kernel about it ("init (1): /proc/1/oom_adj
# is deprecated").  The first one only: Android's init goes on logging for the whole uptime.
INIT_SPEAKS = "kernel.init-speaks"

# A printk stamp this late was not taken by a clock that started with the kernel: such a
# kernel's first messages come within microseconds (SPARC's sun4v prints its PROMLIB
# lines first and the banner at [    0.000066]), a firmware's counter runs for the
# hundreds of milliseconds a boot ROM and a bootloader take at the least.
CLOCK_BEFORE_KERNEL_NS = 10_000_000

_CALIBRATE = re.compile(r"Calibrating delay (?:loop|using timer specific routine)(?P<skipped> \(skipped\))?.*?(?P<bogo>[\d.]+) BogoMIPS \(lpj=(?P<lpj>\d+)\)")
_RUN_INIT = re.compile(r"^Run (?P<init>\S+) as init process")
_SMP_UP = re.compile(r"^smp: Brought up \d+ nodes?, (?P<cpus>\d+) CPUs?")
_MOUNTED = re.compile(r"VFS: Mounted root \((?P<fs>[^)]+) filesystem\)")
_ROOT_WAIT = re.compile(r"^Waiting for root device (?P<device>\S+?)\.{3}$")
_MEMORY = re.compile(r"^Memory: (?P<avail>\d+)K/(?P<total>\d+)K available")
_VERSION = re.compile(r"^Linux version (?P<version>\S+)")
_CONSOLE_ARG = re.compile(r"(?:^|(?<=\s))console=(?P<dev>[^,\s]+)(?P<options>,(?P<baud>\d*)\S*)?")
# Options without a speed (`console=ttyS0,` then a space, `console=ttyS0,n8`): serial_core's
# uart_parse_options reads the speed as 0, and uart_set_options takes the last entry of its
# table for that, B38400.
EMPTY_SPEED_BAUD = 38400
_SERIAL_TTY = re.compile(r"tty[A-Za-z]+\d+$")
# An 8250 port as serial_core reports it ("00:02: ttyS0 at I/O 0x3f8 (irq = 4, base_baud =
# 115200) is a 16550A"); other drivers that name their ports ttyS say their own type
# (ATMEL_SERIAL, bcm63xx_uart) and keep the speed the bootloader set.
UART_WORD = ": ttyS"
_UART_8250 = re.compile(r": (?P<dev>ttyS\d+) at (?:I/O|MMIO\w*|port|mem)\b.* is an? (?:NS)?(?:1\d{4}\w*|8250|16C95\w*"
                        r"|ST16\w+|TI16750|XScale|U6_16550A|Tegra|OCTEON|AR7|XR1\w+|Startech|RT2880)\b")
_FREEING = re.compile(r"^(?:Freeing unused kernel (?:image \(initmem\) )?memory|Freeing init memory: \d+[Kk])")
_TSC = re.compile(r"^tsc: (?:(?P<refined>Refined TSC clocksource calibration:)|Detected) (?P<mhz>\d+\.\d+) MHz")
_NETLINK = re.compile(r"^NET: Registered (?:PF_NETLINK/PF_ROUTE protocol family|protocol family 16)$")
_COMPRESSED = re.compile(r"^(?:Decompressing|Uncompressing) Linux")
# The ARM architected timer, whose counter runs from the SoC's reset (or from when a loader,
# or on some 32-bit SoCs the kernel, started it): "Architected cp15 timer(s) running at
# 24.00MHz (phys).", newer kernels' "arch_timer: cp15 timer(s) running at 19.20MHz (virt).",
# and a sched_clock on a counter of 56 bits or more, the architected counter's width
# ("sched_clock: 56 bits at 24MHz, ...", Rockchip's 3.10 "sched_clock: ARM arch timer >56
# bits at 24000kHz"; a SoC timer's or the jiffies' is 32 bits).
_COUNTER = re.compile(r"(?:arm_arch_timer: |arch_timer: )?(?:Architected )?(?:cp15 and mmio|cp15|mmio) timer\(s\) "
                      r"running at|sched_clock: (?:ARM arch timer >)?(?:5[6-9]|6[0-4]) bits at")
# A boot console (earlycon, earlyprintk) writes each message to the UART as it is logged,
# and the kernel waits for it: "earlycon: msm_serial_dm0 at MMIO ...", "printk: bootconsole
# [uart0] enabled" (older kernels without "printk: "), or either option on the command line.
_EARLY_CONSOLE = re.compile(r"^(?:earlycon: |(?:printk: )?(?:legacy )?bootconsole \[[^\]]*\] enabled|(?:Kernel )?"
                            r"[Cc]ommand line: (?:.* )?early(?:con|printk)\b)")
_CONSOLE_ENABLED = re.compile(r"^(?:printk: )?(?:legacy )?console \[(?P<name>[^\]]+)\] enabled")
# (or an earlycon= the kernel could not use: "Malformed early option 'earlycon'" after its
# "earlycon: uart8250 at I/O port 0x0" line: nothing printed)
BOOT_CONSOLE_DISABLED = r"(?:printk: )?(?:legacy )?bootconsole \[[^\]]*\] disabled"
# Which boot console announced itself ("bootconsole [earlyprom0] enabled", "earlycon: uart8250
# at ..."): a screen's prints nothing on a serial line (console_cost).
_BOOT_CONSOLE_NAME = re.compile(r"bootconsole \[(?P<bracketed>[^\]]+)\]|^earlycon: (?P<earlycon>\S+) ")
_BOOT_CONSOLE_GONE = re.compile(rf"^(?:{BOOT_CONSOLE_DISABLED}|Malformed early option 'earlycon')")

# A message reaches the expressions only if it starts with one of these (fast path).
PREFIXES = (
    "Linux version",
    "Booting Linux on physical CPU",
    "Command line:",
    "Kernel command line:",
    "Calibrating delay",
    "sched_clock: ",
    "smp: Brought up",
    "devtmpfs: initialized",
    "NET: Registered",
    "Trying to unpack rootfs",
    "Unpacking initramfs",
    "Freeing initrd memory",
    "VFS: Mounted root",
    "Waiting for root device",
    "Freeing unused kernel",
    "Freeing init memory:",
    "Write protecting the kernel",
    "Run ",
    "init: ",
    "init (1): ",
    "Memory: ",
    "tsc: ",
    "printk: ",
    "console [",
    "bootconsole [",
    "earlycon: ",
    "Malformed early option",
    PANIC_WORDS,
    "reboot: ",
    "Restarting system",
)


def recognise(boot: Boot, file: str, clock: str, t: int | None, msg: str, lineno: int) -> bool:
    """Add the milestone this message marks, if any; True when it was one."""
    if UART_WORD in msg:
        m = _UART_8250.search(msg)
        if m and m.group("dev") not in boot.meta.setdefault("uart_8250", []):
            boot.meta["uart_8250"].append(m.group("dev"))
        return False
    if not msg.startswith(PREFIXES):
        return False

    def mark(name: str, **attrs) -> None:
        boot.add(Event(Kind.MARKER, name, clock, t, None, file, lineno, attrs=attrs or None))

    if msg.startswith("Linux version"):
        m = _VERSION.match(msg)
        if m:
            boot.meta.setdefault("kernel_version", m.group("version"))
            boot.meta.setdefault("kernel_banner", msg)
        mark(BANNER)
    elif msg.startswith("Booting Linux on physical CPU"):
        mark(BOOT_CPU)
    elif msg.startswith(("Command line:", "Kernel command line:")):
        cmdline = msg.split(":", 1)[1].strip()
        boot.meta.setdefault("cmdline", cmdline)
        found = serial_console(cmdline)
        if found and found.baud:
            boot.meta.setdefault("console", found.dev)
            if "console_baud" not in boot.meta and found.empty_options:
                boot.meta["console_baud_from"] = (f"kernel command line: `console={found.dev},` names no speed, which "
                                                  f"the kernel reads as 0 and sets {EMPTY_SPEED_BAUD}")
            boot.meta.setdefault("console_baud", found.baud)
        elif found:
            boot.meta.setdefault("console_without_speed", found.dev)
        if announces_early_console(msg):
            mark(BOOT_CONSOLE, **{"from": "cmdline"})
    elif msg.startswith("sched_clock: "):
        mark(SCHED_CLOCK)
    elif msg.startswith("Calibrating delay"):
        m = _CALIBRATE.search(msg)
        if m:
            boot.meta.setdefault("lpj", int(m.group("lpj")))
            mark(CALIBRATE, lpj=int(m.group("lpj")), skipped=bool(m.group("skipped")))
        else:
            mark(CALIBRATE)
    elif msg.startswith("smp: Brought up"):
        m = _SMP_UP.match(msg)
        mark(SMP_UP, **({"cpus": int(m.group("cpus"))} if m else {}))
    elif msg.startswith("devtmpfs: initialized"):
        mark(DEVTMPFS)
    elif msg.startswith("NET: Registered"):
        if not _NETLINK.match(msg):
            return False
        mark(NETLINK)
    elif msg.startswith(("Trying to unpack rootfs", "Unpacking initramfs")):
        mark(INITRAMFS_UNPACK)
    elif msg.startswith("Freeing initrd memory"):
        mark(INITRD_FREED)
    elif msg.startswith("VFS: Mounted root"):
        m = _MOUNTED.search(msg)
        if m:
            boot.meta.setdefault("rootfs", m.group("fs"))
        mark(ROOT_MOUNTED, fs=m.group("fs") if m else None)
    elif msg.startswith("Waiting for root device"):
        m = _ROOT_WAIT.match(msg)
        if not m:
            return False
        mark(ROOT_WAIT, device=m.group("device"))
    elif msg.startswith(("Freeing unused kernel", "Freeing init memory:")):
        if _FREEING.match(msg):
            mark(FREE_INITMEM)
        else:
            return False
    elif msg.startswith("Write protecting the kernel"):
        mark(WRITE_PROTECT)
    elif msg.startswith(("init: ", "init (1): ")):
        if "init_message" in boot.meta:  # (a flag, not a look through the marks: a line at a time)
            return False
        boot.meta["init_message"] = msg
        mark(INIT_SPEAKS)
    elif msg.startswith("Run "):
        m = _RUN_INIT.match(msg)
        if not m:
            return False
        boot.meta.setdefault("init", m.group("init"))
        mark(Mark.USERSPACE_START, init=m.group("init"))
    elif msg.startswith("Memory: "):
        m = _MEMORY.match(msg)
        if not m:
            return False
        boot.meta.setdefault("memory_kb", int(m.group("total")))
    elif msg.startswith(("printk: ", "console [", "bootconsole [", "earlycon: ", "Malformed early option")):
        m = _CONSOLE_ENABLED.match(msg)
        if m:
            mark(CONSOLE_ENABLED, console=m.group("name"))
        elif announces_early_console(msg):
            named = _BOOT_CONSOLE_NAME.search(msg)
            mark(BOOT_CONSOLE, **({"console": named.group("bracketed") or named.group("earlycon")} if named else {}))
        elif _BOOT_CONSOLE_GONE.match(msg):
            mark(BOOT_CONSOLE_GONE, **({"printed": False} if msg.startswith("Malformed") else {}))
        else:
            return False
    elif msg.startswith(PANIC_WORDS):
        if boot.marks(PANIC):
            return False  # (a panic while panicking says nothing more of the boot)
        mark(PANIC, reason=msg.removeprefix(PANIC_WORDS).strip())
    elif msg.startswith(("reboot: ", "Restarting system")):
        if not _RESTART.match(msg) or boot.marks(RESTART):
            return False
        mark(RESTART, reason=msg.strip())
    elif msg.startswith("tsc: "):
        m = _TSC.match(msg)
        if not m:
            return False
        khz = round(float(m.group("mhz")) * 1000)
        if m.group("refined"):
            boot.meta["tsc_khz"] = khz  # the refined rate replaces the first estimate
        else:
            boot.meta.setdefault("tsc_khz", khz)
    return True


def is_banner(text: str) -> bool:
    """The kernel's first message ("Linux version 6.1.0-56-amd64 (...)")."""
    return bool(_VERSION.match(text))


# The banner's version and builder, "6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12":
# no other line has them so.
_BANNER_TAIL = re.compile(r"(?P<version>\d+\.\d+[\w.+~-]*) \([^()\s]+@[^()\s]+\) \(")
_BANNER_HEAD = "Linux version "
LOST_IN_BANNER = 2  # bytes a console may have lost from "Linux version " for the line to be the banner


def restore_banner(text: str) -> str | None:
    """The banner of a console that lost bytes of it (a UART overrun on a loaded host:
    "inux vesion 6.1.0-57-amd64 (debian-kernel@lists.debian.org) (gcc-12 ...", its "L" on the
    line before): the banner as the kernel printed its start, or None for any other line.
    Its words are what is left of "Linux version " when up to LOST_IN_BANNER bytes are lost."""
    m = _BANNER_TAIL.search(text)
    if m is None or _BANNER_HEAD in text:  # whole (a banner, or one quoted in another line)
        return None
    head = text[:m.start()]
    for kept in range(len(_BANNER_HEAD) - LOST_IN_BANNER, len(_BANNER_HEAD)):
        if len(head) >= kept and _lost_from(head[len(head) - kept:], _BANNER_HEAD):
            return _BANNER_HEAD + text[m.start():]
    return None


def _lost_from(part: str, whole: str) -> bool:
    """Whether part is whole with some of its characters lost (a subsequence of it)."""
    rest = iter(whole)
    return all(ch in rest for ch in part)


def announces_counter(text: str) -> bool:
    """The kernel announcing the architected timer, whose counter may have run before the
    kernel (from the SoC's reset, or from when a loader started it)."""
    return bool(_COUNTER.match(text))


def announces_early_console(text: str) -> bool:
    """A message saying a boot console prints the kernel's messages synchronously."""
    return bool(_EARLY_CONSOLE.match(text))


class SerialConsole(NamedTuple):
    dev: str
    baud: int | None  # None: the command line gives it no speed
    empty_options: bool = False  # `console=ttyS0,`: the kernel reads speed 0, and sets EMPTY_SPEED_BAUD


def serial_console(cmdline: str) -> SerialConsole | None:
    """The serial console a kernel command line names, and the speed it gives it.  The
    kernel keeps the options of a device's first `console=`: a later one for the same device
    changes nothing, so `console=ttyS0 console=ttyS0,115200` gives no speed."""
    first: dict[str, SerialConsole] = {}
    for m in _CONSOLE_ARG.finditer(cmdline):
        if m.group("options") is None:
            first.setdefault(m.group("dev"), SerialConsole(m.group("dev"), None))
        else:
            baud = int(m.group("baud") or 0)
            first.setdefault(m.group("dev"), SerialConsole(m.group("dev"), baud or EMPTY_SPEED_BAUD, not baud))
    with_speed = next((c for c in first.values() if c.baud and c.dev.startswith("tty")), None)
    return with_speed or next((c for c in first.values() if _SERIAL_TTY.match(c.dev)), None)


def console_baud(text: str) -> int | None:
    """The serial console's speed a kernel command line names, if it does."""
    found = serial_console(text)
    return found.baud if found else None


def is_decompressor(text: str) -> bool:
    """The boot stub announcing decompression (printed before printk exists)."""
    return bool(_COMPRESSED.match(text))
