"""What the optimizer may try on the reference device, the ARM64 board and a user's board
with U-Boot: patches over a target description.  On the ARM64 board, U-Boot is a lever too:
its saved environment (the countdown, a direct boot command) and the files it loads; on a
user's board, whose files bootlab does not build, the command line in U-Boot's bootargs and
the boot command typed at its prompt (board()).

With a kernel bootlab builds (`target.kernel = "built"`), the configuration is a lever too:
its compression, its slab allocator, and the options that build the slow initcalls a probe
boot showed (kernel_config()); each is a rebuild, proven like every other candidate.

Some candidates need facts a boot has shown (the loops_per_jiffy the kernel calibrated, the
TSC rate it detected); they come from a probe boot's console and kernel log.  Each
candidate is applied to the configuration as it stands, so `append` adds kernel
arguments while other keys replace (see patch.py): a later compression choice replaces an
earlier one, and the greedy search keeps whichever measured faster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..advice import Finding
from ..advice.common import find_lines
from ..advice.drivers import SLOW_INITCALL_NS, is_builtin
from ..render.fmt import span
from ..sources import bootlab_capture
from ..targets import kernel_build, kinds, packages, rootfs, uboot_build
from ..targets.arm64_board import BUILT, FIT_BOOT_COMMAND, STATIC_NETWORK, Arm64Board
from ..targets.reference import KconfigSection, Target
from ..timeline import Boot, Kind
from .patch import arg_name, kernel_args

_PRINTK = re.compile(r"^\s*\[\s*\d+\.\d+\]")
_TFTP = re.compile(r"TFTP from server ")  # U-Boot's tftpboot (and dhcp's autoload) starting a transfer
APP_START = "bootlab-mark: app.start"
MARK = "bootlab-mark:"


@dataclass
class Facts:
    """What a probe boot showed."""

    lpj: int | None = None
    tsc_khz: int | None = None
    units: list[tuple[str, int]] = field(default_factory=list)  # systemd-analyze blame, slowest first
    chain: set[str] = field(default_factory=set)  # the units on the application's critical chain
    tftp: bool = False  # U-Boot loaded files over TFTP (its console said so)


def console_lines(capture: bytes) -> list[str]:
    return bootlab_capture.console_bytes(capture).decode(errors="replace").replace("\r", "").splitlines()


def facts_from(boot: Boot) -> Facts:
    """lpj and the TSC rate the kernel reported (the kernel log printed after ready with
    initramfs.dmesg shows them even under quiet; on a board, only the console has them),
    systemd's view, and whether U-Boot loaded files over TFTP."""
    blamed = [(ev.name, ev.dur) for ev in boot.of_kind(Kind.UNIT)
              if (ev.attrs or {}).get("source") == "blame" and ev.dur is not None]
    chain = {ev.name for ev in boot.of_kind(Kind.UNIT) if (ev.attrs or {}).get("critical_chain")}
    return Facts(lpj=boot.meta.get("lpj"), tsc_khz=boot.meta.get("tsc_khz"),
                 units=sorted(blamed, key=lambda u: (-u[1], u[0])), chain=chain,
                 tftp=bool(find_lines(boot, _TFTP)))


def app_output(capture: bytes, ready: str) -> list[str]:
    """What the application printed: console lines from its start to the ready line,
    without kernel messages and bootlab's markers."""
    lines = console_lines(capture)
    ready_re = re.compile(ready)
    start = next((i for i, line in enumerate(lines) if APP_START in line), None)
    if start is None:
        return []
    out = []
    for line in lines[start + 1:]:
        if ready_re.search(line):
            break
        if line.strip() and not _PRINTK.match(line) and MARK not in line:
            out.append(line.rstrip())
    return out


@dataclass
class Candidate:
    name: str  # a variant name: letters, digits, _ . + -
    description: str
    patch: dict
    origin: str = "built-in"  # or "advice: RULE"
    notes: list[str] = field(default_factory=list)
    refused: str | None = None  # known not to boot, without booting it: why (never screened)


def _console_arg(t: Target) -> str | None:
    return next((a for a in kernel_args(t.cmdline()) if re.match(r"console=ttyS\d+,\d+", a)), None)


def _adder(out: list[Candidate]):
    def add(ok: bool, name: str, description: str, patch: dict, notes: tuple = ()) -> None:
        if ok:
            out.append(Candidate(name, description, patch, notes=list(notes)))
    return add


def for_target(t, facts: Facts) -> list[Candidate]:
    """The built-in candidates for the kind of target `t` is (LEVERS)."""
    return LEVERS[kinds.kind_of(t.to_dict()).name](t, facts)


def _refuse_flavours(out: list[Candidate], t, arch: str) -> list[Candidate]:
    """A candidate that switches to another Debian kernel flavour is refused when that
    kernel lacks a module the device loads (the -cloud kernels have no vivid): two failed
    boots saved, and the reason said."""
    loaded = t.initramfs.modules + t.initramfs.modules_after + (t.rootfs.modules if getattr(t, "rootfs", None) else [])
    for c in out:
        flavour = next((v["kernel"] for v in c.patch.values() if isinstance(v, dict)
                        and v.get("kernel") in packages.FLAVOURS), None)
        if flavour is not None:
            c.refused = missing_module(flavour, arch, [m.split()[0] for m in loaded])
    return out


def missing_module(flavour: str, arch: str, modules: list[str]) -> str | None:
    """Why Debian's `flavour` kernel cannot load `modules`; None when it can, or when its
    package is not in the cache (the boot will tell)."""
    try:
        kernel = packages.kernel(flavour, fetch=False, arch=arch)
    except packages.PackageError:
        return None
    try:
        packages.load_order(kernel, modules)
    except packages.PackageError as err:
        return str(err)
    return None


def builtin(t: Target, facts: Facts) -> list[Candidate]:
    """The reference device's non-intrusive changes that apply to this configuration."""
    names = {arg_name(a) for a in kernel_args(t.cmdline())}
    k = t.target
    out: list[Candidate] = []
    add = _adder(out)
    out += cmdline_levers(names, "target")
    # The probe boot shows these facts; the candidates name them as facts of the host that
    # boots (host_facts.py), so a result reproduces on another machine.
    add(bool(facts.lpj) and "lpj" not in names, "lpj", "lpj=host: skip the delay-loop calibration",
        {"target": {"append": "lpj=host"}})
    add(bool(facts.tsc_khz) and "tsc_early_khz" not in names, "tsc-khz",
        "tsc_early_khz=host: give the TSC rate, no calibration against the PIT",
        {"target": {"append": "tsc_early_khz=host"}})
    add(k.memory > 128, "ram-128M", "128 MiB of RAM: less memory for the kernel to initialise",
        {"target": {"memory": 128}},
        ("the reference device's mem=: QEMU places the initramfs at the top of RAM, where a mem= "
         "limit would cut it off; on a board, mem= does this",))
    out += initramfs_levers(t.initramfs)
    add(k.image == "bzimage", "pvh-vmlinux", "uncompressed kernel booted through its PVH entry (no decompression)",
        {"target": {"image": "vmlinux"}})
    add(k.kernel != "cloud", "cloud-kernel", "Debian's -cloud kernel (a configuration trimmed for virtual machines)",
        {"target": {"kernel": "cloud"}})
    add(k.kernel != "cloud" or k.image != "bzimage", "cloud-bzimage", "the -cloud kernel as shipped (bzImage)",
        {"target": {"kernel": "cloud", "image": "bzimage"}})
    add(k.firmware == "seabios" and k.machine != "microvm", "qboot", "qboot firmware instead of SeaBIOS",
        {"target": {"firmware": "qboot"}})
    add(k.machine != "microvm" and bool(facts.tsc_khz), "microvm",
        "-M microvm with qboot: no PCI, no legacy devices; the TSC rate given",
        {"target": {"machine": "microvm", "firmware": "qboot", "append": "tsc_early_khz=host"}})
    add(k.cpus == 1, "2-cpus", "two CPUs (TCG runs each in its own host thread)", {"target": {"cpus": 2}})
    add(k.machine == "microvm" and "pci" not in names, "pci-off",
        "pci=off: microvm has no PCI bus; the kernel stops looking for one (absent hardware)",
        {"target": {"append": "pci=off"}})
    # Not offered: tsc=reliable (no TSC sync test when the other CPUs start). Under TCG,
    # boots with it hung silently in the initcalls 5 times in 761, without it never in 928.
    console = _console_arg(t)
    if console and k.console_baud and k.console_baud < 921600:
        device = console.split("=", 1)[1].split(",")[0]
        add(True, "console-921600", "console UART at 921600 baud",
            {"target": {"append": f"console={device},921600", "console_baud": 921600}},
            ("the host's serial adapter must support the speed",))
    return _refuse_flavours(out + own_kernel(t) + userspace(t, facts), t, "amd64")


def own_kernel(t: Target) -> list[Candidate]:
    """Debian's configuration of the kernel the device boots, built from Debian's source
    with only the modules the device loads (its initramfs's, with what they need): what
    `make localmodconfig` on the running device gives.  Debug information is off: the image
    and the installed modules are stripped of it anyway, it only lengthens the build."""
    k = t.target
    names = [m.split()[0] for m in t.initramfs.modules + t.initramfs.modules_after]
    if k.kernel not in kernel_build.BASES or t.rootfs is not None or not names:
        # A systemd device's modules are udev's choice, not known before it boots; a device
        # that loads none of Debian's has nothing to trim this way.
        return []
    refused = None
    try:
        keep = [name for name, _ in packages.load_order(packages.kernel(k.kernel, fetch=False), names)]
    except packages.PackageError as err:
        keep, refused = names, str(err)
    prebuilt = sorted(inside for inside in t.initramfs.files if inside.endswith(".ko"))
    if prebuilt:
        refused = (f"the initramfs carries modules built for Debian's kernel ({', '.join(prebuilt)}): name their "
                   "Kbuild directory in [initramfs] kbuild, so they are built for each kernel")
    return [Candidate("own-kernel", f"Debian's {k.kernel} configuration built from its source with only the "
                                    f"{len(keep)} modules the device loads (make localmodconfig), debug information off",
                      {"target": {"kernel": "built"},
                       "kconfig": {"base": k.kernel, "localmodconfig": keep, "options": {"DEBUG_INFO_NONE": "y"}}},
                      notes=["a build from Debian's configuration (about half an hour here; cached by its .config), "
                             "counted in the budget",
                             "built-in drivers are all kept: the configuration candidates that follow trim them"],
                      refused=refused)]


def cmdline_levers(names: set[str], table: str) -> list[Candidate]:
    """The kernel arguments every kind whose command line bootlab sets can try (`names`:
    the arguments it already has; `table`: where it takes `append`, kinds.Kind.cmdline)."""
    out: list[Candidate] = []
    add = _adder(out)
    add("quiet" not in names, "quiet", "quiet: kernel messages kept off the console", {table: {"append": "quiet"}})
    add("cryptomgr.notests" not in names, "no-crypto-selftests",
        "cryptomgr.notests: skip the crypto API self-tests at boot", {table: {"append": "cryptomgr.notests"}},
        ("the self-tests check the kernel's crypto implementations; skip them only where that check is "
         "not a requirement (not in FIPS mode)",))
    return out


def initramfs_levers(i) -> list[Candidate]:
    """The initramfs's compression, its init, and the modules loaded after ready (the
    [initramfs] table every QEMU target shares)."""
    out: list[Candidate] = []
    add = _adder(out)
    for method in ("lz4", "lzo", "zstd", "none"):
        add(i.compression != method, f"initramfs-{method}", f"initramfs compressed with {method}",
            {"initramfs": {"compression": method}})
    add(i.init == "rc", "init-script", "one init script instead of busybox init and rc scripts",
        {"initramfs": {"init": "script"}})
    add(i.init != "direct", "init-direct", "init= the application: a static init that starts it, no shell",
        {"initramfs": {"init": "direct"}})
    add(bool(i.modules), "modules-after", "load the kernel modules after the ready marker",
        {"initramfs": {"modules": [], "modules_after": i.modules + i.modules_after}})
    return out


# -- the ARM64 board: its bootloader, the files it loads, its kernel and initramfs ----------

def arm64(t: Arm64Board, facts: Facts) -> list[Candidate]:
    """The ARM64 board's levers: U-Boot's saved environment (no countdown, a direct boot
    command instead of the distro scan and DHCP), loading less (the kernel gzipped or not,
    Debian's -cloud kernel, the board's own kernel), the command line in bootargs, the initramfs."""
    names = {arg_name(a) for a in kernel_args(t.cmdline())}
    k, loader = t.target, t.bootloader
    out: list[Candidate] = []
    add = _adder(out)
    if not loader.stop_autoboot:  # the board boots from what it has saved; bootlab types nothing
        saved = loader.saved_env
        add(saved.get("bootdelay") not in ("0", "-2"), "bootdelay-0",
            "bootdelay=0 saved in the board's environment: no autoboot countdown",
            {"bootloader": {"saved_env": {"bootdelay": "0"}}},
            ("a key pressed at power-on no longer stops autoboot: reach the prompt with bootdelay=-1 saved, "
             "or by the console on a development board",))
        add(saved.get("bootcmd") != "run bootlab_boot", "direct-boot",
            "the boot command saved as bootcmd, with a static address: no distro scan, no DHCP, no boot script",
            {"bootloader": {"saved_env": {"bootcmd": "run bootlab_boot", **STATIC_NETWORK}}})
    add(k.image == "Image", "image-gz", "the kernel gzipped (Image.gz): less to load, U-Boot inflates it",
        {"arm64": {"image": "Image.gz"}})
    add(k.image == "Image.gz", "image-uncompressed", "the kernel uncompressed (Image): no inflating",
        {"arm64": {"image": "Image"}})
    add(not k.fit, "fit-image", "one FIT image holding the kernel and the initramfs, one TFTP transfer, bootm",
        {"arm64": {"fit": True}, "bootloader": {"boot_command": FIT_BOOT_COMMAND}})
    add(k.kernel != "cloud", "cloud-kernel", "Debian's -cloud kernel (a configuration trimmed for virtual machines)",
        {"arm64": {"kernel": "cloud"}})
    # The description's [kconfig] beside a Debian kernel: the kernel that could be built for
    # the board.  Its init is one script: a small configuration leaves out what busybox
    # init's syslogd needs (networking, System V IPC).
    add(k.kernel != BUILT and t.kconfig != KconfigSection(), "own-kernel",
        f"a kernel built for the board from Debian's source ({t.kconfig.base}"
        f"{''.join(' + ' + Path(f).stem for f in t.kconfig.fragments)}; [kconfig]), init one script",
        {"arm64": {"kernel": BUILT}, "initramfs": {"init": "script"}},
        ("a cross-build (minutes; cached by its .config), counted in the budget",
         "the application's output must stay the same: what it needs must be in the configuration"))
    out += cmdline_levers(names, "arm64")
    add(k.memory > 128, "ram-128M", "128 MiB of RAM: less memory for the kernel to initialise",
        {"arm64": {"memory": 128}}, ("on a board, mem= does this",))
    return _refuse_flavours(out + uboot_config(t) + initramfs_levers(t.initramfs), t, "arm64")


def uboot_config(t: Arm64Board) -> list[Candidate]:
    """The levers Debian's U-Boot lacks, in a U-Boot built from its source with Kconfig
    options (uboot_build.py): a silent console, and leaving out what the board does not use.
    Their options add to those already chosen (patch.py merges arm64.uboot)."""
    k, loader = t.target, t.bootloader
    chosen = k.uboot.options if k.firmware == BUILT else {}
    out: list[Candidate] = []
    add = _adder(out)

    def built(options: dict[str, str]) -> dict:
        return {"firmware": BUILT, "uboot": {"options": options}}

    # Silent from power-on needs `silent` in the saved environment: bootlab types nothing.
    add(not loader.stop_autoboot and chosen.get("SILENT_CONSOLE") != "y", "uboot-silent",
        "U-Boot built with a silent console (SILENT_CONSOLE, silent=1 saved): nothing printed before the kernel",
        {"arm64": built({"SILENT_CONSOLE": "y", "SILENT_U_BOOT_ONLY": "y"}), "bootloader": {"saved_env": {"silent": "1"}}},
        ("a board that stops in U-Boot shows nothing on its console: unset silent at the prompt to see it",))
    unused = uboot_build.UNUSED.get(k.uboot.board, {})
    add(any(chosen.get(name) != value for name, value in unused.items()), "uboot-trim",
        f"U-Boot built without what the board does not use ({', '.join(n for n, v in unused.items() if v == 'n')})",
        {"arm64": built(unused)}, ("the board no longer boots from USB, SCSI, NVMe or through EFI",))
    return out


# -- a board whose files bootlab does not build: its command line and its boot command ------

# Boot commands that scan for something to boot (U-Boot's bootcmd as Debian ships it: the
# distro boot's devices one after the other, DHCP, a script or extlinux.conf) ...
SCANS = {"boot", "run bootcmd", "run distro_bootcmd", "bootflow scan", "bootflow scan -lb"}
# ... and what starts a kernel directly.
_BOOTS = re.compile(r"\b(?:booti|bootm|bootz|zboot|bootefi)\b")
# TFTP blocks as large as U-Boot reassembles from IP fragments (CONFIG_NET_MAXDEFRAG, 16384
# by default, less the IP, UDP and TFTP headers: 2023.01's cap in net/tftp.c): fewer round
# trips than the default 1468.  A U-Boot without CONFIG_IP_DEFRAG caps it at 1468 (and says
# so), a server without the blksize option sends 512-byte blocks: no faster, not kept.
TFTP_BLOCKSIZE = "16352"


def board(t, facts: Facts) -> list[Candidate]:
    """A [board] or [labgrid] board with U-Boot that bootlab (or labgrid's UBootDriver) stops
    at its prompt: the kernel's command line in bootargs; larger TFTP blocks when the probe
    showed U-Boot loading over TFTP; and, when it boots by a scan while [bootloader] env
    holds a command that boots directly, that command run instead.  What
    `prepare` puts in place (the kernel, the initramfs, the files U-Boot loads) is the
    user's: nothing here changes it.  Without [bootloader], nothing: the command line is in
    the board's own files."""
    loader = t.bootloader
    if loader is None or not loader.stop_autoboot:
        return []
    out = cmdline_levers({arg_name(a) for a in kernel_args(t.cmdline())}, "bootloader")
    if facts.tftp and "tftpblocksize" not in loader.env:
        out.append(Candidate("tftp-blocksize", f"tftpblocksize={TFTP_BLOCKSIZE}: U-Boot loads the files over TFTP "
                                               "in large blocks, fewer round trips",
                             {"bootloader": {"env": {"tftpblocksize": TFTP_BLOCKSIZE}}},
                             notes=["it needs U-Boot's IP reassembly (CONFIG_IP_DEFRAG) and a TFTP server with "
                                    "the blksize option (RFC 2348)"]))
    if loader.boot_command in SCANS:
        direct = [name for name, value in loader.env.items() if _BOOTS.search(value)]
        out += [Candidate("direct-boot" if len(direct) == 1 else f"direct-boot-{name}",
                          f"run {name} (the direct boot command of [bootloader] env) instead of "
                          f"`{loader.boot_command}`: no scan of the boot devices",
                          {"bootloader": {"boot_command": f"run {name}"}},
                          notes=["the board then boots only what that command loads"]) for name in direct]
    return out


LEVERS = {"reference": builtin, "arm64": arm64, "board": board, "labgrid": board}


# -- userspace: the systemd device's levers (a [rootfs] table; targets/rootfs.py) ----------

MASK_CANDIDATES = 8  # the slowest units off the application's critical chain, one candidate each
MASKABLE = (".service", ".timer", ".mount", ".socket", ".path")
# What systemd itself stands on (the journal has its own lever: rootfs.journal).
NEVER_MASKED = {rootfs.APP_UNIT, rootfs.ANALYZE_UNIT, "-.mount", "init.scope", "systemd-journald.service",
                "systemd-journald.socket"}


def off_chain(facts: Facts, masked: list[str]) -> list[tuple[str, int]]:
    """The units systemd-analyze blamed that are not on the application's critical chain and
    can be masked, slowest first."""
    return [(unit, dur) for unit, dur in facts.units
            if unit.endswith(MASKABLE) and unit not in facts.chain and unit not in NEVER_MASKED
            and unit not in masked]


def userspace(t: Target, facts: Facts) -> list[Candidate]:
    """Masking what the application does not wait for, the application's unit started early,
    systemd's generators off, a boot target with only the application (and the unit files it
    does not load removed), its modules loaded by the initramfs, systemd's log level, a volatile journal, no status lines, the application
    as PID 1, and the root filesystem.
    A unit masked that the application needed stops the boot short of ready: that boot
    fails and the candidate is not kept."""
    r = t.rootfs
    if r is None:
        return []
    out: list[Candidate] = []
    names = {arg_name(a) for a in kernel_args(t.cmdline())}
    masks = off_chain(facts, r.mask)
    check = "a unit the application needed makes the boot fail to reach ready, and is not kept"
    for unit, dur in masks[:MASK_CANDIDATES]:
        # A variant's name has no '@' (modprobe@fuse.service): the unit's name made one.
        out.append(Candidate("mask-" + re.sub(r"[^A-Za-z0-9_.+-]", "-", unit), f"mask {unit} (not on the application's critical chain; it took "
                                             f"{span(dur)})", {"rootfs": {"mask": [unit]}}, notes=[check]))
    if len(masks) > 1:
        out.append(Candidate("mask-off-chain", f"mask the {len(masks)} units off the application's critical chain",
                             {"rootfs": {"mask": [u for u, _ in masks]}}, notes=[check]))
    if r.app_unit.get("DefaultDependencies") != "no":
        out.append(Candidate("app-early", "DefaultDependencies=no for the application's unit: it starts without "
                                          "waiting for sysinit.target and basic.target",
                             {"rootfs": {"app_unit": {"DefaultDependencies": "no"}}}))
    if r.generators:
        out.append(Candidate("no-generators", "systemd's generators masked: none runs before the units load (they "
                                              "make units from fstab, the console, GPT partitions, SysV scripts ...)",
                             {"rootfs": {"generators": False}},
                             notes=["a unit a generator would have made is not there: fstab's mounts other than "
                                    "the root, a getty on the console; a boot that needed one fails and is not kept"]))
    if r.init == "systemd" and r.boot_target != "app":
        out.append(Candidate("boot-target-app", f"systemd boots into {rootfs.APP_TARGET}: only the application's unit "
                                                "(and the unit that prints systemd's view after ready), without "
                                                "sysinit.target, basic.target or multi-user.target's units",
                             {"rootfs": {"boot_target": "app"}},
                             notes=["no udev, journald, fsck or remount of the root, getty, timers: a product "
                                    "that needs one starts it from its own unit"]))
    if r.init == "systemd" and r.boot_target == "app" and not r.prune_units:
        out.append(Candidate("prune-units", "Debian's unit files that bootlab.target and the power-off never load "
                                            "removed: systemd reads fewer at its start",
                             {"rootfs": {"prune_units": True}},
                             notes=["a unit the product starts later (by hand, a timer, a socket) is gone from the image"]))
    if r.modules and not r.modules_early:
        out.append(Candidate("modules-early", "the application's modules loaded by the initramfs (insmod), not by "
                                              "its unit's modprobe: before systemd starts",
                             {"rootfs": {"modules_early": True}}))
    if r.init == "systemd" and "systemd.log_level" not in names:
        out.append(Candidate("systemd-log-warning", "systemd.log_level=warning: systemd's info lines are not "
                                                    "written to the kernel log and its console",
                             {"target": {"append": "systemd.log_level=warning"}}))
    if r.journal != "volatile":
        out.append(Candidate("journal-volatile", "journald Storage=volatile: the journal kept in RAM, never flushed "
                                                 "to the disk", {"rootfs": {"journal": "volatile"}}))
    if "systemd.show_status" not in names:
        out.append(Candidate("no-status", "systemd.show_status=false: no status line per unit on the console",
                             {"target": {"append": "systemd.show_status=false"}}))
    if r.init != "app":
        out.append(Candidate("init-app", "init= the application: a script as PID 1 that loads its modules and "
                                         "starts it, no systemd", {"rootfs": {"init": "app"}},
                             notes=["nothing supervises or restarts the application; systemd's view is lost"]))
    if r.writable:
        out.append(Candidate("rootfs-ro", "the root mounted read-only: no check, no remount",
                             {"rootfs": {"read_only": True}}))
    if r.filesystem != "erofs":
        out.append(Candidate("rootfs-erofs", "the root filesystem as erofs (read-only, compact)",
                             {"rootfs": {"filesystem": "erofs"}}))
    return out


def from_advice(findings: list[Finding], cmdline_table: str = "target") -> list[Candidate]:
    """Findings that carry a patch the target can try.  The rules write kernel arguments as
    the reference device takes them ([target] append); they go to `cmdline_table`, where
    the target's kind takes them (kinds.Kind.cmdline).  Their other keys stay the reference
    device's: another kind refuses them, and they are not applicable there."""
    out: list[Candidate] = []
    for f in findings:
        if f.patch:
            name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", f.rule).strip("-") or "advice"
            same = sum(1 for c in out if c.origin == f"advice: {f.rule}")
            if same:  # a rule with several findings (one per slow initcall)
                name = f"{name}-{same + 1}"
            out.append(Candidate(name, f.title, _rehomed(f.patch, cmdline_table), origin=f"advice: {f.rule}",
                                 notes=list(f.notes)))
    return out


def _rehomed(patch: dict, cmdline_table: str) -> dict:
    """A patch whose only change is kernel arguments ([target] append) with them in `cmdline_table`."""
    if list(patch) == ["target"] and list(patch["target"]) == ["append"]:
        return {cmdline_table: dict(patch["target"])}
    return patch


def from_initcalls(boot: Boot, cmdline_table: str = "target") -> list[Candidate]:
    """initcall_blacklist= for each slow built-in initcall (the probe boots with
    initcall_debug): what trimming the kernel configuration would do, without a rebuild.
    A boot that needs the initcall fails or prints something else, and is not kept.
    `cmdline_table`: the target's table that takes kernel arguments (kinds.Kind.cmdline)."""
    return [Candidate(f"skip-{name}", f"initcall_blacklist={name} (it took {span(dur)})",
                      {cmdline_table: {"append": f"initcall_blacklist={name}"}},
                      notes=[f"check that the product does not need what {name} sets up"])
            for name, dur in slow_builtin_initcalls(boot, SLOW_INITCALL_NS)]


# The kernel's own compression and slab allocator: Kconfig choices (init/Kconfig, mm/Kconfig).
KERNEL_COMPRESSIONS = ("GZIP", "BZIP2", "LZMA", "XZ", "LZO", "LZ4", "ZSTD", "UNCOMPRESSED")
SLAB_ALLOCATORS = ("SLAB", "SLUB", "SLOB")
# How the compiler optimizes the kernel (init/Kconfig): for speed (-O2, Debian's) or for size
# (-Os, tinyconfig's).  Under TCG -Os costs more than its code: its inline page-sized memsets
# are byte stores (README, kernel init and initcalls).
COMPILER_OPTIMIZATIONS = {"O2": "CC_OPTIMIZE_FOR_PERFORMANCE", "Os": "CC_OPTIMIZE_FOR_SIZE"}
# The preemption model (kernel/Kconfig.preempt), and with it the RCU variant
# (kernel/rcu/Kconfig): preemptible RCU with PREEMPT, else Tree RCU with SMP, else Tiny RCU.
PREEMPTION_MODELS = ("PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT")
TRIM_INITCALL_NS = 2_000_000  # an initcall this slow is worth a rebuild without it
TRIM_CANDIDATES = 8  # the slowest ones: each candidate is a kernel build


def _choice(config: dict[str, str], options: tuple[str, ...], pick: str, prefix: str = "") -> dict[str, str]:
    """Kconfig options that select `pick` in a choice and unset the others (a choice
    member left `y` by an earlier patch would otherwise stand against it)."""
    return {f"{prefix}{o}": "y" if o == pick else "n" for o in options
            if o == pick or config.get(f"CONFIG_{prefix}{o}") == "y"}


def _other_choices(config: dict[str, str], options: tuple[str, ...], describe) -> list[Candidate]:
    """A candidate for each member of a Kconfig choice the configuration has but did not
    pick; `describe(option)` gives its (name, description, notes)."""
    if not any(config.get(f"CONFIG_{o}") == "y" for o in options):
        return []  # the choice is not in this configuration
    out = []
    for option in options:
        if config.get(f"CONFIG_{option}") != "y":
            name, description, notes = describe(option)
            out.append(Candidate(name, description, {"kconfig": {"options": _choice(config, options, option)}},
                                 notes=list(notes)))
    return out


def kernel_config(t: Target, config: dict[str, str], origins: list, idle: list | None = None) -> list[Candidate]:
    """Kconfig changes for a kernel bootlab builds: the kernel's compression (the first
    seed's Table I on the kernel itself), the slab allocator, the compiler's optimization
    (-O2 or -Os), the preemption model (and so the RCU variant), and the option that builds
    each slow initcall (`origins`: kernel_trim.origins of the probe boot's slow built-in
    initcalls, slowest first, with their durations).  `idle`: kernel_trim.origins of the
    built-in drivers that found no device in the probe boot, all turned off in one candidate
    (what localmodconfig does for modules, done for built-ins).  `config` is the current .config."""
    if t.target.kernel != "built":
        return []
    out: list[Candidate] = []
    for method in KERNEL_COMPRESSIONS:
        if config.get(f"CONFIG_HAVE_KERNEL_{method}") == "y" and config.get(f"CONFIG_KERNEL_{method}") != "y":
            out.append(Candidate(f"kernel-{method.lower()}", f"the kernel image compressed with {method.lower()}",
                                 {"kconfig": {"options": _choice(config, KERNEL_COMPRESSIONS, method, "KERNEL_")}}))
    out += _other_choices(config, SLAB_ALLOCATORS, lambda a: (f"kernel-{a.lower()}", f"the {a} allocator", []))
    flags = {option: flag for flag, option in COMPILER_OPTIMIZATIONS.items()}
    out += _other_choices(config, tuple(flags), lambda o: (f"kernel-{flags[o].lower()}",
                                                           f"the kernel compiled with -{flags[o]} ({o})", []))
    rcu = {"PREEMPT": "preemptible RCU"}
    not_preemptible = ["a real-time application needs a preemptible kernel for its latency: measure it (bootlab rt) "
                       "before keeping this"]
    out += _other_choices(config, PREEMPTION_MODELS, lambda m: (
        f"kernel-{m.lower().replace('_', '-')}",
        f"the {m} preemption model, and with it "
        f"{rcu.get(m, 'Tree RCU' if config.get('CONFIG_SMP') == 'y' else 'Tiny RCU')}",
        [] if m == "PREEMPT" else not_preemptible))
    unused = sorted({o.option for o in idle or () if o.option is not None})
    if unused:
        out.append(Candidate("kconfig-idle-drivers", f"the {len(unused)} options of built-in drivers that found no "
                                                     f"device in the probe boot off ({', '.join(unused[:6])}"
                                                     f"{' ...' if len(unused) > 6 else ''})",
                             {"kconfig": {"options": {option: "n" for option in unused}}},
                             notes=["a driver the product needs for a device that appears later (hot-plugged, "
                                    "or probed after ready) is gone: such a boot fails or prints something else, "
                                    "and is not kept"]))
    seen: set[str] = set()
    for origin, dur in origins:
        option = origin.option
        if option is None or option in seen:
            continue
        seen.add(option)
        out.append(Candidate(f"kconfig-no-{option}", f"CONFIG_{option} off: {origin.function} took {span(dur)} "
                                                     f"({origin.file})",
                             {"kconfig": {"options": {option: "n"}}},
                             notes=[f"check that the product does not need what {origin.function} sets up; a boot "
                                    "that needs it fails or prints something else, and is not kept"]))
    return out


def slow_builtin_initcalls(boot: Boot, threshold: int = TRIM_INITCALL_NS) -> list[tuple[str, int]]:
    """(function, duration) of the built-in initcalls that took `threshold` or more, slowest first."""
    slowest: dict[str, int] = {}
    for ev in boot.of_kind(Kind.INITCALL):
        if ev.dur is not None and ev.dur >= threshold and is_builtin(ev):
            slowest[ev.name] = max(ev.dur, slowest.get(ev.name, 0))
    return sorted(slowest.items(), key=lambda x: (-x[1], x[0]))
