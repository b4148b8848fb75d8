"""Split a boot into phases, from power-on to "application ready".

Each phase starts at a boundary marker (see timeline.PHASE_STARTS) and ends where the next
boundary found in the logs starts.  A boundary the logs do not show merges its phase into
the one before ("firmware + bootloader" when there is no bootloader banner).  How each
boundary was found is kept as evidence (file and line), so every number can be checked.

Boundaries, in order of preference:
  power-on         the capture's power-on event; systemd's firmware time; the host clock's
                   zero; the bootloader timer's zero (its reset)
  bootloader       U-Boot SPL / U-Boot / GRUB banner; systemd's loader time
  kernel load      "Starting kernel ...", "Booting from ROM...", bootstage start_kernel
  kernel init      the printk clock's zero (timekeeping starts with the kernel); the kernel's
                   first message when it is stamped later (a clock the firmware started).
                   Stamps that jump from zero to a counter the firmware started, after the
                   kernel announced it, are read less the jump (console.Interpreter.printk_time)
  initcalls        "devtmpfs: initialized" (driver_init, right before do_initcalls);
                   else the first built-in initcall after SMP bring-up; else the first
                   built-in one (a module's initcall runs when userspace loads it)
  rootfs/init      "Run /init as init process"; systemd's kernel-done time;
                   "Freeing unused kernel (image) memory"; "Write protecting ..."
  services         first service started (systemd) or bootlab-mark: services.start
  application      bootlab-mark: app.start or --app-start
  end              the ready marker (best-ranked pattern, first occurrence); else the
                   kernel's wait for a root device never mounted, the default target, the
                   last event read (see _end); a log that ends at the kernel handover
                   with no kernel line after it ends with the bootloader
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from ..sources import kernel_messages as km
from ..sources import bootlab_capture, firmware, multiboot, systemd_analyze, uboot, userspace
from ..timeline import NO_TIME, PHASE_STARTS, Boot, Clock, Event, Kind, Mark, Phase


@dataclass
class Boundary:
    mark: str
    at: int | None  # reference clock
    evidence: str  # "file:line (text)" or how it was derived
    lower_bound: bool = False  # its line has no time: placed at the timed line before it


@dataclass
class PhaseSpan:
    phases: list[Phase]  # more than one when boundaries between them are unknown
    start: int
    end: int
    start_evidence: str
    end_evidence: str

    @property
    def name(self) -> str:
        return " + ".join(p.value for p in self.phases)

    @property
    def duration(self) -> int:
        return self.end - self.start


@dataclass
class Phases:
    spans: list[PhaseSpan] = field(default_factory=list)
    boundaries: dict[str, Boundary] = field(default_factory=dict)
    end: Boundary | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int | None:
        if not self.spans:
            return None
        return self.spans[-1].end - self.spans[0].start

    @property
    def starts(self) -> list[int]:
        return [s.start for s in self.spans]


def _evidence(ev: Event | None, how: str = "") -> str:
    if ev is None:
        return how
    text = f"{ev.file}:{ev.line}" if ev.file else how
    return f"{text} ({how})" if how and ev.file else text


def _first(boot: Boot, *names: str, after: int | None = None) -> tuple[int | None, Event | None]:
    """Earliest placed marker among names (not before `after`), trying names in order of
    preference."""
    for name in names:
        best, best_at = None, None
        for ev in boot.marks(name):
            at = boot.at(ev)
            if at is not None and (after is None or at >= after) and (best_at is None or at < best_at):
                best, best_at = ev, at
        if best is not None:
            return best_at, best
    return None, None


def _initcalls_start(boot: Boot, notes: list[str]) -> tuple[int | None, str]:
    at, ev = _first(boot, km.DEVTMPFS)
    if at is not None:
        return at, _evidence(ev, "devtmpfs: initialized")
    smp, smp_ev = _first(boot, km.SMP_UP)
    at, how = _first_initcall(boot, smp, notes)
    if at is not None:
        return at, how
    # Without devtmpfs (Android's GKI has none) and initcall_debug: the kernel brings its
    # other CPUs up just before its initcalls, and netlink registers itself in one of the
    # first (a core initcall).
    if smp is not None:
        return smp, _evidence(smp_ev, "smp: Brought up; the initcalls follow within milliseconds")
    at, ev = _first(boot, km.NETLINK)
    if at is not None:
        return at, _evidence(ev, "netlink's core initcall: the initcalls had started by then")
    return None, ""


def _first_initcall(boot: Boot, smp: int | None, notes: list[str]) -> tuple[int | None, str]:
    """The first built-in initcall's start (not before the other CPUs came up)."""
    spans = boot.columns(Kind.INITCALL)
    if spans is None:
        return None, ""
    at = boot.ref_times(spans)
    # A module's initcall runs when userspace loads the module (modprobe, udev): not
    # the kernel's initcall phase.
    builtin = ~spans.flagged("module")
    modules = np.flatnonzero(~builtin & (at != NO_TIME))
    if len(modules) and not builtin.any():
        first = spans.event(int(modules[np.argmin(at[modules])]))
        notes.append(f"every initcall in these logs is a module's, run when userspace loaded it (the first, "
                     f"{first.name} [{first.attrs['module']}] at {boot.at(first) / 1e9:.3f} s, {first.where()}): "
                     "the kernel's own initcall phase is not in them (boot with initcall_debug, or "
                     "trace_event=initcall:* on the kernel command line, to see it)")
    rows = np.flatnonzero(builtin & (at != NO_TIME) & (at >= (smp if smp is not None else NO_TIME)))
    if not len(rows):
        return None, ""
    first_ev = spans.event(int(rows[np.argmin(at[rows])]))
    return boot.at(first_ev), _evidence(first_ev, f"first initcall {first_ev.name}")


def _ready(boot: Boot) -> tuple[int | None, Event | None, str]:
    """The ready marker: the best-ranked pattern's first occurrence.  A ready line with no
    time of its own (a login prompt on an untimed console line) is placed at the timed line
    before it in its log."""
    best = None
    for ev in boot.marks(Mark.READY):
        at, how = boot.at(ev), ""
        if at is None:
            at, how = _after_timed_line(boot, ev)
            if at is None:
                continue
        rank = (ev.attrs or {}).get("rank", 99)
        key = (rank, at)
        if best is None or key < best[0]:
            best = (key, at, ev, how)
    return (best[1], best[2], best[3]) if best else (None, None, "")


def line_arrival(boot: Boot, ev: Event) -> int | None:
    """When the line of `ev` reached the host, where a capture on the host's clock holds it.
    A captured line can hold several logical lines (console.Interpreter.console_line cuts
    it after a pause): the last one's arrival bounds them all.  (No boundary is placed
    after it: the clocks seen on a console are mapped under every line's arrival,
    timeline.Anchors.relation.)"""
    info = boot.clocks.get(Clock.HOST)
    for log in boot.logs:
        if log.file != ev.file or log.clock != Clock.HOST or info is None:
            continue
        k = bisect.bisect_right(log.lineno, ev.line) - 1
        if k >= 0 and log.lineno[k] == ev.line:
            t = int(log.t.numpy()[k])
            return None if t == NO_TIME else t + info.offset
    return None


UNTIMED_READY = "no time of its own"
TYPED_BY_CAPTURE = bootlab_capture.SENT


def _after_timed_line(boot: Boot, ev: Event) -> tuple[int | None, str]:
    """An untimed line's place: the time of the last timed line before it in its log."""
    for log in boot.logs:
        info = boot.clocks.get(log.clock)
        if log.file != ev.file or info is None:
            continue
        before = bisect.bisect_left(log.lineno, ev.line)
        t = log.t.numpy()[:before]
        timed = np.flatnonzero(t != NO_TIME)
        if len(timed):
            k = int(timed[-1])
            return int(t[k]) + info.offset, (f"{UNTIMED_READY}: placed at line {log.lineno[k]}, the timed line "
                                             "before it")
    return None, ""


def _after_timed_event(boot: Boot, ev: Event) -> int | None:
    """An untimed line's place in a log whose lines carry no time of the log's clock (a
    console whose bootloader stamps its own lines, printk none yet): the latest time of the
    events read before it in its file."""
    times = [at for other in boot.events if other.file == ev.file and other.line < ev.line
             and (at := boot.at(other)) is not None]
    return max(times, default=None)


def _default_target(boot: Boot) -> tuple[int | None, Event | None]:
    """When the default target was reached: the unit `Queued start job for default target`
    named, the critical chain's root, or systemd-analyze time's `X reached after`."""
    default = boot.meta.get("default_target")
    best, best_at = None, None
    for ev in boot.of_kind(Kind.UNIT):
        attrs = ev.attrs or {}
        root = attrs.get("critical_chain") and attrs.get("depth") == 0
        if ev.name != default and not root and not attrs.get("reached"):
            continue
        at = boot.at_end(ev)
        if at is not None and (best_at is None or at < best_at):
            best, best_at = ev, at
    return best_at, best


def _end(boot: Boot, notes: list[str]) -> Boundary | None:
    """Where the boot ends: the ready marker; else the last milestone of the boot the logs
    show (the default target; else the last event read: a unit, an initcall, a kernel
    milestone); else their last line.  A kernel log goes on long after the boot
    (hot-plugs, `crng init done`): what follows the end is not part of any phase."""
    ready_at, ready_ev, how = _ready(boot)
    if ready_at is not None:
        text = (ready_ev.attrs or {}).get("text", "ready")
        return Boundary(Mark.READY, ready_at, _evidence(ready_ev, f"{text}; {how}" if how else text),
                        lower_bound=how.startswith(UNTIMED_READY))
    last_line, last_where = last_time(boot, lines=True)
    hung_at, hung = _first(boot, HUNG)
    if hung is not None:
        notes.append(f"the capture ended this boot as hung at {hung_at / 1e9:.3f} s ({_evidence(hung)}): "
                     f"{(hung.attrs or {}).get('detail', '').removeprefix('hung ')}")
    at, ev = _default_target(boot)
    stuck = _root_never_mounted(boot)
    failed_at, failed = failure(boot)
    if failed_at is not None:
        said, label = FAILURES[failed.name]
        reason = (failed.attrs or {}).get("reason", "")
        what, end = "its failure", Boundary(FAILURE, failed_at, _evidence(failed, f"{label}: {reason}"))
        notes.append(f"{said} ({_evidence(failed)}: {reason}): this boot failed there and never reached ready; it "
                     "ends there")
    elif stuck is not None:
        at, ev = stuck
        device = (ev.attrs or {}).get("device", "")
        what, end = "the kernel's wait for its root device", Boundary("end", at, _evidence(ev, f"Waiting for root device {device}"))
        notes.append(f"the kernel waited for its root device {device} ({_evidence(ev)}) and nothing in the "
                     f"{(last_line - at) / 1e9:.1f} s of log after it shows the root mounted or init run: this boot "
                     "never reached userspace, and ends at the wait (with rootwait the "
                     f"kernel waits for ever: the device never appeared: {_NO_ROOT_DEVICE})")
    elif at is not None:
        what, end = "the default target", Boundary("end", at, _evidence(ev, ev.name))
    else:
        at, where = last_time(boot, lines=False)
        what = "the last boot event read"
        if at is None and _log_start_missing(boot):
            # A kernel log that begins late (its buffer wrapped) and shows no step of a boot
            # holds what the system printed after it: its last line is no end of a boot.
            notes.append("nothing in these logs marks a step of the boot (no kernel milestone, initcall, unit or ready "
                         "line) and they begin after the kernel's first message: they hold what was printed after the "
                         "boot, so no phase is timed")
            return None
        if at is None:
            what, at, where = "the last timed line", last_line, last_where
        if at is None:
            return None
        end = Boundary("end", at, where)
    after = f"; the logs go on to {last_line / 1e9:.3f} s ({last_where}), in no phase" \
        if last_line is not None and last_line > end.at else ""
    notes.append(f"no ready marker found: the boot ends at {what} ({end.evidence}){after} (set one with --ready "
                 "REGEX)")
    if what == "the last boot event read":
        notes += _journald_took_over(boot, end.at)
    return end


# The end of a boot that failed before ready: "failure reached 3.517 s".
FAILURE = "failure"
# What ends a boot as failed: (what the note says, what the end's evidence calls it).
FAILURES = {km.PANIC: ("the kernel panicked", "Kernel panic"),
            userspace.EMERGENCY: ("systemd went to emergency mode", "Emergency mode"),
            userspace.INITRAMFS_SHELL: ("the initramfs could not mount the root and gave a shell", "Initramfs shell"),
            uboot.GAVE_UP: ("the bootloader's boot command started no kernel and it waits at its prompt",
                            "Bootloader gave up"),
            multiboot.RESET: ("the board was reset before this boot's userspace started", "Reset"),
            firmware.ASSERTED: ("the firmware failed an assertion and started no kernel", "Firmware assertion"),
            km.RESTART: ("the kernel restarted the board (or powered it off) before this boot's userspace started",
                         "Restart")}


def failure(boot: Boot) -> tuple[int | None, Event | None]:
    """The boot's first failure (FAILURES: a firmware's failed assertion, a bootloader back at
    its prompt, a reset, a kernel panic, an initramfs's shell, systemd's emergency mode): its
    time and event.
    One whose line has no time of its own (systemd's status on an untimed console) happened
    no earlier than the timed line before it, and is placed there; in logs where no line
    has a time, the first failure is returned without one."""
    found, untimed = [], []
    for name in FAILURES:
        for ev in boot.marks(name)[:1]:
            if name == km.RESTART and not _restarted_before_userspace(boot):
                continue
            at = boot.at(ev)
            if at is None:
                at, _how = _after_timed_line(boot, ev)
            if at is None:
                at = _after_timed_event(boot, ev)
            (found if at is not None else untimed).append((at, ev))
    if found:  # (at one time, the first said: an assertion placed where the reset after it is)
        return min(found, key=lambda f: (f[0], f[1].file, f[1].line))
    return min(untimed, key=lambda f: (f[1].file, f[1].line)) if untimed and not boot.clocks else (None, None)


# What shows userspace ran: the kernel freeing its init memory or starting init, init heard
# from, systemd's figures, services.
_USERSPACE_SIGNS = (km.FREE_INITMEM, km.WRITE_PROTECT, Mark.USERSPACE_START, km.INIT_SPEAKS,
                    systemd_analyze.USERSPACE_START, Mark.SERVICES_START, Mark.APP_START, Mark.READY)
# Messages the kernel prints at KERN_INFO before it starts init (`smp: Brought up`,
# `devtmpfs: initialized`, netlink's protocol family, the delay loop's calibration): a log
# that holds them holds the kernel's info-level messages, and with them its init memory freed
# (also KERN_INFO) had userspace started.  A `quiet` console shows none of them, and a restart
# there says nothing of how far the boot got.
_INFO_BEFORE_INIT = (km.SMP_UP, km.DEVTMPFS, km.NETLINK, km.CALIBRATE)


def _restarted_before_userspace(boot: Boot) -> bool:
    """Whether the kernel's restart (km.RESTART) came in a boot whose logs show its kernel's
    info-level messages but no sign of userspace: no one but the kernel can have asked for it,
    and the boot failed there."""
    if any(boot.marks(name) for name in _USERSPACE_SIGNS) or boot.columns(Kind.UNIT) is not None:
        return False
    return any(boot.marks(name) for name in _INFO_BEFORE_INIT) or boot.columns(Kind.INITCALL) is not None


# journald's unit, by name or (older systemd's messages) by its description.
JOURNALD = ("systemd-journald.service", "Journal Service")


def _journald_took_over(boot: Boot, end: int) -> list[str]:
    """systemd logs to the kernel's log only until journald runs, then to the journal: in a
    kernel log that shows journald starting, the last unit is where systemd stopped
    writing there, not where the boot ended."""
    kernel_logs = {log.file for log in boot.logs if log.clock == Clock.PRINTK and not log.printed}
    journald = next((ev for ev in boot.of_kind(Kind.UNIT)
                     if ev.name in JOURNALD and ev.file in kernel_logs and boot.at(ev) is not None), None)
    if journald is None or boot.at(journald) > end:
        return []
    return [f"systemd logs to the kernel log only until journald runs ({_evidence(journald, journald.name)}): its "
            "later units are in the journal, so the boot ended after this end (read the journal with it: "
            "`journalctl -b -o short-monotonic`, or `systemd-analyze` output)"]


# A root device that comes (an SD card, eMMC, a USB stick) comes within a few seconds of
# the kernel's wait for it; the driver core gives up on deferred probes 10 s after its late
# initcall (`deferred probe pending`).  A log that goes on this long after the wait without
# the root mounted shows a boot that stopped there; one cut sooner may only be cut.
ROOT_GIVEN_UP_NS = 5_000_000_000


# The capture's event for a boot declared hung, with where its CPUs stood (targets/strategy.py).
HUNG = "capture.hung"


# What shows the root mounted after the kernel's wait for it.
_ROOT_MOUNTED_SIGNS = (km.ROOT_MOUNTED, *_USERSPACE_SIGNS)
# Why a root device never appears.
_NO_ROOT_DEVICE = "its controller's driver did not probe, or root= names a device that is not there"


def _root_never_mounted(boot: Boot) -> tuple[int, Event] | None:
    """The kernel's wait for its root device (`Waiting for root device ...`, rootwait) when
    nothing after it shows the root mounted (no `VFS: Mounted root`, no kernel memory freed,
    no init) and the log goes on ROOT_GIVEN_UP_NS after it: the boot stopped there, however
    long the kernel log goes on (deferred probes, hot-plugs)."""
    at, ev = _first(boot, km.ROOT_WAIT)
    if at is None:
        return None
    mounted, _ = _first(boot, *_ROOT_MOUNTED_SIGNS, after=at)
    last, _ = last_time(boot, lines=True)
    if mounted is not None or last is None or last - at < ROOT_GIVEN_UP_NS:
        return None
    return at, ev


def _net_retry(boot: Boot, notes: list[str]) -> None:
    """Logs that end while the bootloader asks the network for its boot and gets no answer."""
    for ev in boot.marks(uboot.NET_RETRY)[:1]:
        attrs = ev.attrs or {}
        notes.append(f"the logs end while the bootloader retries its network boot (BOOTP/DHCP broadcasts: "
                     f"{attrs.get('broadcasts', 0)}, rounds started again: {attrs.get('rounds', 0)}; "
                     f"{_evidence(ev)}): no DHCP/BOOTP server answered it (the server, the cable, the PHY); "
                     "unless the log was cut there, this boot never left its bootloader")


def _untimed_root_wait(boot: Boot, notes: list[str]) -> None:
    """In logs with no time (_root_never_mounted needs times): the kernel's wait for its root
    device with nothing after it that shows the root mounted.  How long the log went on after
    it is not known, so it may have been cut there: said so."""
    wait = next(iter(boot.marks(km.ROOT_WAIT)), None)
    if wait is None:
        return
    after = [ev for name in _ROOT_MOUNTED_SIGNS for ev in boot.marks(name)
             if (ev.file, ev.line) > (wait.file, wait.line)]
    if not after:
        device = (wait.attrs or {}).get("device", "")
        notes.append(f"the kernel waited for its root device {device} ({_evidence(wait)}) and nothing after it shows "
                     "the root mounted or init run: unless the log was cut there, this boot never reached userspace "
                     f"(the device never appeared: {_NO_ROOT_DEVICE})")


def _power_on(boot: Boot) -> tuple[int | None, str]:
    at, ev = _first(boot, Mark.POWER_ON)
    if at is not None:
        return at, _evidence(ev, (ev.attrs or {}).get("source", "power-on event"))
    if boot.reference == Clock.HOST and boot.meta.get("host_zero") == "power-on":
        return 0, "host clock zero: power applied"
    if boot.reference == Clock.BOOTLOADER:
        return 0, "bootloader timer zero (reset)"
    return None, ""


def last_time(boot: Boot, lines: bool) -> tuple[int | None, str]:
    """The latest placed instant of the boot's events (and of its logs' lines with
    `lines`); of equals, the first in event order."""
    kinds = {ev.kind for ev in boot.objects} | {k for table in boot.tables for k in table.vocab["kind"]}
    spans = boot.columns(*kinds)  # every event, in order, without making a table's into objects
    latest, where = None, ""
    if spans is not None:
        ends = boot.ref_times(spans, end=True)
        if (ends != NO_TIME).any():
            i = int(np.argmax(ends))  # the first of the latest
            ev = spans.event(i)
            latest, where = int(ends[i]), _evidence(ev, ev.name)
    for log in boot.logs if lines else ():
        info = boot.clocks.get(log.clock)
        if info is None:
            continue
        for i in range(len(log.t) - 1, -1, -1):
            t = log.t[i]
            if t is not None:
                if latest is None or info.ref(t) > latest:
                    latest, where = info.ref(t), f"{log.file}:{log.lineno[i]} (last line)"
                break
    return latest, where


def _log_start_missing(boot: Boot) -> list[str]:
    """A saved kernel log (dmesg) begins with the kernel's first message at printk time zero;
    one that begins later lost its start.  A console that begins with a kernel line past zero
    (no bootloader's line before it) was captured from the middle of the kernel's boot."""
    notes = []
    if boot.marks(km.BANNER):
        return notes
    for log in boot.logs:
        if log.clock != Clock.PRINTK:
            continue
        t = log.t.numpy()
        if log.printed:
            if len(t) and t[0] > 0:
                notes.append(f"{log.file} begins at {t[0] / 1e9:.6f} s of printk time, in the kernel's boot (no "
                             "bootloader's or kernel's first line before it): the capture started late, and the boot "
                             "before that is missing")
            continue
        timed = t[t != NO_TIME]
        if len(timed) and timed[0] > 0:
            notes.append(f"{log.file} begins at {timed[0] / 1e9:.6f} s of printk time, not with the kernel's first "
                         "message: the log was cut, or the kernel's log buffer had wrapped when it was saved (boot "
                         "with a bigger one, e.g. log_buf_len=4M); the boot before that is missing")
    return notes


def _firmware_start(boot: Boot, bootloader: int | None) -> tuple[int | None, str]:
    """Without power-on, the firmware phase starts at the firmware's first line (TF-A's
    BL2, OpenSBI, a BootROM's) when it comes before the bootloader's (OpenSBI also runs
    after U-Boot's SPL, inside the bootloader phase)."""
    at, ev = _first(boot, Mark.FIRMWARE_START)
    if at is None or (bootloader is not None and at >= bootloader):
        return None, ""
    return at, _evidence(ev, f"{(ev.attrs or {}).get('firmware', 'firmware')} banner (power-on is before it)")


def _bootloader_start(boot: Boot, power_on: int | None, notes: list[str]) -> tuple[int | None, str]:
    """The bootloader's first sign after power-on: its banner on the console, or its
    bootstage report's reset.  A reset the report places before power-on means U-Boot's
    timer ran fast against the host's (under emulation U-Boot calibrates it against an
    emulated timer): its banner, seen by the host, starts the phase instead."""
    earliest, ev = _first(boot, Mark.BOOTLOADER_START)
    if power_on is None or earliest is None or earliest >= power_on:
        return earliest, _evidence(ev, (ev.attrs or {}).get("note", "bootloader banner") if ev else "")
    at, after = _first(boot, Mark.BOOTLOADER_START, after=power_on)
    notes.append(f"the bootloader's own timer puts its start at {earliest / 1e9:.6f} s, before power-on "
                 f"({_evidence(ev, 'bootstage reset')}): it ran fast against the host's clock, so its step durations "
                 "are in its own (too long) units; the bootloader phase starts at its banner instead")
    return at, _evidence(after, "bootloader banner")


def _kernel_clock_started_before(boot: Boot, notes: list[str]) -> tuple[int, str] | None:
    """Where the kernel started when its printk clock did not start with it.  The banner is
    at printk time zero on most kernels; some count from a timer that ran before the
    kernel (Rockchip's vendor kernels stamp their first message [    1.702674]: the arm64
    counter runs from the SoC's reset), so printk time zero is firmware and bootloader
    time, not kernel init.  The kernel starts at its first message then (the banner, or
    ARM's "Booting Linux on physical CPU" just before it), and a note says what came before."""
    banner, ev = _first(boot, km.BANNER)
    if banner is None or ev.clock != Clock.PRINTK or ev.t is None or ev.t < km.CLOCK_BEFORE_KERNEL_NS:
        return None
    first, first_ev = ev.t, ev
    for cpu in boot.marks(km.BOOT_CPU):
        if cpu.clock == Clock.PRINTK and cpu.t is not None and cpu.t <= first and cpu.line <= ev.line:
            first, first_ev = cpu.t, cpu
    at = boot.to_ref(Clock.PRINTK, first)
    if at is None:
        return None
    notes.append(f"the printk clock did not start with the kernel: its first message ({_evidence(first_ev)}) is "
                 f"stamped {first / 1e9:.6f} s by a timer that ran before it (the firmware's, as on "
                 "Rockchip SoCs whose counter runs from reset, or a kernel before a kexec); kernel init starts "
                 "there, and the time before it is in no phase")
    return at, _evidence(first_ev, "the kernel's first message")


# A kernel line seen this long after the time its printk stamp maps to was printed late
# (by a console that started later), not as it was logged.
PRINTED_LATE_NS = 20_000_000


def _early_init_before_clock(boot: Boot, kstart: int | None, load_at: int | None, notes: list[str]) -> None:
    """On ARM and RISC-V the printk clock counts from its timer's registration (`sched_clock:
    ...` in time_init), and the messages before it are stamped zero: with a console that
    printed them as they came (earlycon) their arrival places the kernel's start, but one
    that printed them only when it started leaves the kernel's start unseen, and the span
    from the handover to printk time zero holds the kernel's early init (setup_arch, the
    memory's setup, ftrace's patching of its call sites) as well as its load.  Say so, since
    it is not decompression that earlycon or a smaller image would cut."""
    if kstart is None or load_at is None or kstart <= load_at:
        return
    clock = next((ev for ev in boot.marks(km.SCHED_CLOCK)
                  if ev.clock == Clock.PRINTK and ev.t is not None and ev.t < PRINTED_LATE_NS), None)
    first = min((ev for ev in boot.marks(km.BOOT_CPU) + boot.marks(km.BANNER) if ev.clock == Clock.PRINTK),
                key=lambda ev: ev.line, default=None)
    seen = line_arrival(boot, first) if clock is not None and first is not None else None
    if seen is None or seen - kstart < PRINTED_LATE_NS:
        return
    notes.append(f"the kernel's clock starts at {_evidence(clock, 'sched_clock')}, and its messages before are "
                 f"stamped zero; they reached the console {(seen - kstart) / 1e9:.3f} s after that time "
                 f"({_evidence(first, 'the first')}), printed when the console started (no earlycon printed them as "
                 f"they came): the kernel's start is not seen, and 'kernel load/decompress' "
                 f"({(kstart - load_at) / 1e9:.3f} s) holds its early init before its clock too (setup_arch, the "
                 "memory's setup, ftrace's patching); boot once with earlycon to see where the kernel starts")


def find_phases(boot: Boot) -> Phases:
    result = Phases()
    result.notes += _log_start_missing(boot)
    found: dict[str, tuple[int | None, str]] = {}
    found[Mark.POWER_ON] = _power_on(boot)
    power_on = found[Mark.POWER_ON][0] is not None
    found[Mark.BOOTLOADER_START] = _bootloader_start(boot, found[Mark.POWER_ON][0], result.notes)
    if not power_on:
        found[Mark.FIRMWARE_START] = _firmware_start(boot, found[Mark.BOOTLOADER_START][0])
    at, ev = _first(boot, Mark.KERNEL_LOAD)
    found[Mark.KERNEL_LOAD] = (at, _evidence(ev, "kernel handover"))
    kstart = boot.to_ref(Clock.PRINTK, 0)
    found[Mark.KERNEL_START] = (kstart, "printk clock zero" if kstart is not None else "")
    late = _kernel_clock_started_before(boot, result.notes)
    if late is not None:
        found[Mark.KERNEL_START] = late
    else:
        _early_init_before_clock(boot, kstart, found[Mark.KERNEL_LOAD][0], result.notes)
    if kstart is None:
        at, ev = _first(boot, km.BANNER)
        if at is not None:
            # Without printk times the kernel is seen only as its lines arrive: its first
            # ones wait for the console driver, so the kernel started before this.
            found[Mark.KERNEL_START] = (at, _evidence(ev, "kernel banner arrived"))
            result.notes.append("no printk times (printk.time=0 or CONFIG_PRINTK_TIME off): kernel milestones are "
                                "placed when their line arrived; lines printed before the console started arrive "
                                "late, so kernel init began before the banner and part of it counts as kernel load")
    found[Mark.INITCALLS_START] = _initcalls_start(boot, result.notes)
    at, ev = _first(boot, Mark.USERSPACE_START, systemd_analyze.USERSPACE_START, km.FREE_INITMEM, km.WRITE_PROTECT,
                    km.INIT_SPEAKS)
    found[Mark.USERSPACE_START] = (at, _evidence(ev, "init starts" if ev is None or ev.name != km.INIT_SPEAKS
                                                 else "init's first message: it had started by then"))
    at, ev = _first(boot, Mark.SERVICES_START)
    found[Mark.SERVICES_START] = (at, _evidence(ev, "first service"))
    at, ev = _first(boot, Mark.APP_START)
    found[Mark.APP_START] = (at, _evidence(ev, "application start"))

    result.end = _end(boot, result.notes)

    # Keep boundaries in boot order; one that comes before its predecessor is misplaced.
    # The firmware phase starts at power-on, or without it at the firmware's first line
    # (a boundary named so: it is no power-on).
    starts = [(phase, Mark.FIRMWARE_START if mark == Mark.POWER_ON and not power_on else mark)
              for phase, mark in PHASE_STARTS]
    previous = None
    for phase, mark in starts:
        at, evidence = found[mark]
        if at is None:
            continue
        if previous is not None and at < previous:
            result.notes.append(f"{mark} at {at / 1e9:.6f} s comes before the previous boundary; ignored ({evidence})")
            continue
        if result.end is not None and at > result.end.at:
            continue
        result.boundaries[mark] = Boundary(mark, at, evidence)
        previous = at

    ordered = [(phase, result.boundaries.get(mark)) for phase, mark in starts]
    if result.end is None:
        if not boot.clocks:
            result.notes.append("no line of these logs carries a time (a console captured without time stamps, a "
                                "kernel without printk times), so nothing can be timed: capture the console with host "
                                "times (`bootlab capture`, `grabserial -t`) or boot with printk.time=1")
            _at, failed = failure(boot)
            if failed is not None:
                said, _label = FAILURES[failed.name]
                result.notes.append(f"{said} ({_evidence(failed)}: {(failed.attrs or {}).get('reason', '')}): this "
                                    "boot failed there and never reached ready")
            _untimed_root_wait(boot, result.notes)
            _net_retry(boot, result.notes)
        return result
    current: PhaseSpan | None = None
    for phase, boundary in ordered:
        if boundary is not None:
            if current is not None:
                current.end, current.end_evidence = boundary.at, boundary.evidence
                result.spans.append(current)
            current = PhaseSpan([phase], boundary.at, result.end.at, boundary.evidence, result.end.evidence)
        elif current is not None:
            current.phases.append(phase)
    if current is not None:
        result.spans.append(current)
    # A log that ends at the kernel handover with no kernel line after it (a bootloader's
    # log alone, or one cut at "Starting kernel ...") holds none of the kernel's phases: the
    # span the handover starts is empty, and the boot ends with the bootloader.
    last = result.spans[-1] if result.spans else None
    if (last is not None and len(result.spans) > 1 and last.phases[0] == Phase.KERNEL_LOAD and not last.duration
            and found[Mark.KERNEL_START][0] is None):
        result.spans.pop()
        result.notes.append(f"the logs end at the kernel handover ({last.start_evidence}): no line of the kernel "
                            "follows it (a bootloader's log alone, a log cut there, or a kernel whose console is "
                            "silent), so no phase of the kernel is timed")
    # Firmware's own record (coreboot's `cbmem -t`) ends at its jump to the bootloader.
    elif (last is not None and len(result.spans) > 1 and last.phases[0] == Phase.BOOTLOADER and not last.duration
          and found[Mark.KERNEL_START][0] is None and found[Mark.KERNEL_LOAD][0] is None):
        result.spans.pop()
        result.notes.append(f"the logs end where the bootloader starts ({last.start_evidence}): nothing of it or "
                            "after it is timed")
    # A kernel log that ends as init starts (`Run /init as init process`, then nothing: init
    # logs nothing to the console, or the log was cut) holds nothing of userspace.
    elif (last is not None and len(result.spans) > 1 and last.phases[0] == Phase.INIT and not last.duration
          and result.end.mark != Mark.READY and (last_time(boot, lines=True)[0] or 0) <= result.end.at):
        result.spans.pop()
        result.notes.append(f"the logs end as init starts ({last.start_evidence}): nothing after it shows what "
                            "userspace did, so no phase of it is timed")
    # Trailing phases that never started (no services, no app) are not part of the last span,
    # nor any after its first when it takes no time: the log ends as it starts (a console
    # cut at the kernel's first lines, all stamped zero, never reached the initcalls).
    for span in result.spans:
        while len(span.phases) > 1 and span is result.spans[-1] and (not span.duration
                                                                     or not _phase_evident(boot, span.phases[-1])):
            span.phases.pop()
    for ev in boot.marks(uboot.INTERACTIVE)[:1] if not boot.marks(TYPED_BY_CAPTURE) else ():
        failed = (ev.attrs or {}).get("failed")
        how = (f"the boot command gave up ({_evidence(ev, 'bootloader prompt')}, its last words: {failed!r}) and the "
               "kernel was started by commands typed after it" if failed else
               f"the autoboot was stopped ({_evidence(ev, 'bootloader prompt')})")
        result.notes.append(f"{how}: the bootloader's time holds commands typed at its prompt by hand")
    _typed_before_kernel(boot, found[Mark.KERNEL_START][0], result.notes)
    _net_retry(boot, result.notes)
    if not power_on and result.spans:
        zero = boot.meta.get("host_zero")
        why = f"the host clock starts at {zero}" if boot.reference == Clock.HOST and zero else "power-on is not in these logs"
        result.notes.append(f"{why}: time before {result.spans[0].phases[0].value} is not measured "
                            "(capture from power-on with `bootlab capture --power-cycle CMD`)")
    return result


def _typed_before_kernel(boot: Boot, kernel_at: int | None, notes: list[str]) -> None:
    """A lab that drives the bootloader (LAVA typing `dhcp`, `tftp`, `bootm`; bootlab's own
    boot sequence) spends the bootloader's time on typing and waiting for each prompt: say
    how much, since a board that boots on its own does not."""
    typed = [(t, ev) for ev in boot.marks(TYPED_BY_CAPTURE)
             if (t := boot.at(ev)) is not None and (kernel_at is None or t <= kernel_at)]
    if len(typed) < 2:
        return
    (first, a), (last, b) = typed[0], typed[-1]
    notes.append(f"the capture typed {len(typed)} times at the bootloader ({a.file}:{a.line} to line {b.line}, "
                 f"{(last - first) / 1e9:.3f} s from the first to the last): the bootloader's time holds that "
                 "typing and the waits for each prompt")


def _phase_evident(boot: Boot, phase: Phase) -> bool:
    """Whether anything in the boot shows this phase happened (for trailing merges)."""
    if phase == Phase.SERVICES:
        return bool(boot.of_kind(Kind.UNIT))
    if phase == Phase.APPLICATION:
        return False
    if phase in (Phase.KERNEL_LOAD, Phase.KERNEL_INIT, Phase.INITCALLS, Phase.INIT) and not _kernel_seen(boot):
        return False  # a console that ends in the bootloader (stopped at its prompt, cut there)
    if phase == Phase.INIT:
        return _root_never_mounted(boot) is None
    return True


def _kernel_seen(boot: Boot) -> bool:
    """Whether the logs show a kernel at all: a handover to it, its clock, its first message,
    or userspace after it."""
    return bool(Clock.PRINTK in boot.clocks or boot.marks(Mark.KERNEL_LOAD) or boot.marks(km.BANNER)
                or boot.marks(km.BOOT_CPU) or boot.marks(Mark.USERSPACE_START) or boot.of_kind(Kind.UNIT))


def assign(boot: Boot, phases: Phases) -> None:
    """Write each event's phase name (by its aligned start time)."""
    if not phases.spans:
        return
    starts, spans, end = phases.starts, phases.spans, phases.spans[-1].end
    names = [s.name for s in spans] + [None]
    for table in boot.tables:
        at = boot.ref_times(table)
        i = np.searchsorted(np.asarray(starts, dtype=np.int64), at, side="right") - 1
        i[(at == NO_TIME) | (i < 0) | (at > end)] = len(spans)
        table.set_phases(names, i)
    for ev in boot.objects:
        at = boot.at(ev)
        if at is None:
            continue
        i = bisect.bisect_right(starts, at) - 1
        ev.phase = spans[i].name if 0 <= i and at <= end else None
