"""Kernel command line: quiet, lpj=, mem=, init=/rdinit=, maxcpus=.

The first four are the boot arguments of seed 000 (quiet 9 % of the boot, lpj the second
best, mem= 32 ms, init= 31 ms); maxcpus= spares the wait for CPUs that never start (a
public MSM8916 stick waited 5 s for each of three).  Each one is an argument added to the
command line: no rebuild.
"""

from __future__ import annotations

import math
import re

from ..analysis.console_cost import QUIET_CONSOLE_LOGLEVEL, byte_cost, console_rules, line_level, reached_console
from ..sources import kernel_messages as km
from ..timeline import Clock, Mark
from . import Context, Finding, rule
from .common import (Line, append_patch, arg_value, between, cite, find_lines, first_lines, for_reference,
                     line_of, mib, nearest, printing_in, printk_lines, ready_at, scaled, target_value, took, worth_it)

FAMILY = "kernel command line"

_CMDLINE = re.compile(r"(?:Kernel )?[Cc]ommand line: ")


def _already_quiet(ctx: Context) -> bool:
    if arg_value(ctx, "quiet") is not None:
        return True
    level = arg_value(ctx, "loglevel")
    return level is not None and level.isascii() and level.isdigit() and int(level) <= QUIET_CONSOLE_LOGLEVEL


def _banner_printed(ctx: Context, log) -> bool:
    """The banner is a notice (level 5): a console that printed kernel lines but not the
    banner was already quiet (or the capture started late)."""
    return any(ev.file == log.file for ev in ctx.boot.marks(km.BANNER))


@rule(FAMILY)
def quiet(ctx: Context) -> Finding | None:
    """The console time of kernel messages.

    A printed line costs its bytes at the console's speed, but the kernel only waits for
    it until it logs its next message: each line counts for the smaller of the two.
    (Summing bytes alone overstates it: on the reference device that gives 2.0 s where
    `quiet` measured 1.2 s; the smaller-of-two sum gives 1.3 s.)
    """
    console = ctx.analysis.console
    if console is None or not console.baud or _already_quiet(ctx):
        return None
    messages = printk_lines(ctx.boot, ready_at(ctx.analysis))
    if not messages or (messages[0].log.printed and not _banner_printed(ctx, messages[0].log)):
        return None
    # What quiet silences: messages the console printed, at warning's level or less urgent.
    shown = reached_console(first_lines(messages[0].log, messages[-1].i + 1),
                            console_rules(ctx.boot.meta.get("cmdline")))
    messages = [line for line in messages
                if shown[line.i] and line_level(line.log.text[line.i]) >= QUIET_CONSOLE_LOGLEVEL]
    if not messages:
        return None
    waited = 0
    nbytes = 0
    for line, nxt in zip(messages, messages[1:] + [None]):
        n = line.log.nbytes[line.i]
        nbytes += n
        cost = byte_cost(n, console.baud)
        waited += cost if nxt is None else min(cost, max(0, nxt.printk() - line.printk()))
    if not worth_it(waited):
        return None
    log = messages[0].log
    evidence = [f"{log.file}: {nbytes} bytes of kernel messages in {len(messages)} lines "
                f"{'printed on the console' if log.printed else 'in the kernel log that ' + console.loglevel + ' printed'}",
                f"console at {console.baud} baud [{console.baud_source}]: {took(byte_cost(nbytes, console.baud))} "
                f"if the kernel waited for every byte, {took(waited)} counting only the time up to each next message"]
    evidence += [line.cite() for line, _ in find_lines(ctx.boot, _CMDLINE)[:1]]
    notes = ["the messages stay in the kernel's ring buffer: `dmesg` still shows them, with their times"]
    if arg_value(ctx, "loglevel") is not None:
        notes.append("loglevel= is on the command line: the last of loglevel= and quiet wins, so quiet must "
                     "come after it (an appended argument does)")
    if log.printed:
        confidence = "medium"
    else:
        confidence = "low"
        notes.append("estimated: this log was read back from the ring buffer, so these bytes reached the console "
                     "only if the boot printed to a serial console at this speed")
    return Finding(
        rule="cmdline.quiet", family=FAMILY,
        title="Add `quiet` to the kernel command line",
        evidence=evidence, saving_ns=waited,
        how="Append `quiet` to the kernel command line (U-Boot: `setenv bootargs \"${bootargs} quiet\"; saveenv`; "
            "GRUB: GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub). Only warnings and errors are then printed.",
        non_intrusive=True, patch=append_patch(ctx, "quiet"), confidence=confidence, notes=notes)


@rule(FAMILY)
def lpj(ctx: Context) -> Finding | None:
    """The delay-loop calibration: from its line to the kernel's next message (the value is
    printed at the end of the calibrating line, the next message follows at once)."""
    calibrations = [ev for ev in ctx.boot.marks(km.CALIBRATE) if (ev.attrs or {}).get("lpj")]
    if not calibrations or arg_value(ctx, "lpj") is not None:
        return None
    ev = calibrations[0]
    if ev.attrs.get("skipped"):
        return None  # preset or computed from a timer: nothing left to save
    line = line_of(ctx.boot, ev)
    nxt = nearest(line, 1, Line.printk) if line is not None else None
    if line is None or nxt is None or line.printk() is None:
        return None  # a stamp taken before the clock started (2.6's jiffies) is not a time
    saving = max(0, nxt.printk() - line.printk())
    if not worth_it(saving):
        return None
    value = ev.attrs["lpj"]
    return Finding(
        rule="cmdline.lpj", family=FAMILY,
        title=f"Preset the delay loop: add `lpj={value}` to the kernel command line",
        evidence=[line.cite(), nxt.cite(), f"calibration took {took(saving)} (printk times of the two lines)"],
        saving_ns=saving,
        how=f"Append `lpj={value}` to the kernel command line: the kernel then skips calibrating its delay loop "
            "(\"Calibrating delay loop (skipped) preset value\").",
        non_intrusive=True, patch=append_patch(ctx, f"lpj={value}"), confidence="high",
        notes=["the value belongs to this CPU at this clock: measure it again if the CPU or its frequency changes"])


_MEMORY = re.compile(r"Memory: \d+K/(?P<total>\d+)K available")
_DEFERRED = re.compile(r"node \d+ deferred pages initialised in (?P<ms>\d+)ms")
MIN_MEMORY_MIB = 64  # leave room for a small application; the user knows the real need


def _memory_init(ctx: Context) -> tuple[int, list[str]] | None:
    """Time the kernel spends on memory that scales with its size: from the command line
    (parsed before memory is set up) to "Memory:" (all pages handed to the allocator), less
    the serial console's printing in between, plus the struct pages initialised later in
    parallel ("deferred pages initialised in")."""
    memory = find_lines(ctx.boot, _MEMORY)
    cmdline = find_lines(ctx.boot, _CMDLINE)
    if not memory or not cmdline:
        return None
    mem_line, first = memory[0][0], cmdline[-1][0]
    if mem_line.log is not first.log or mem_line.printk() is None or first.printk() is None:
        return None
    ns = max(0, mem_line.printk() - first.printk())
    evidence = [first.cite(), mem_line.cite()]
    # (when the kernel logged them: a capture's lines arrive when printed, maybe much later)
    printing = printing_in(ctx, ctx.boot.to_ref(Clock.PRINTK, first.printk()),
                           ctx.boot.to_ref(Clock.PRINTK, mem_line.printk()))
    if printing:  # (before SMP: one CPU, waiting for its console)
        ns -= printing
        evidence.append(f"less {took(printing)} of the console printing the lines between them")
    for line, m in find_lines(ctx.boot, _DEFERRED)[:1]:
        ns += int(m.group("ms")) * 1_000_000
        evidence.append(line.cite())
    return ns, evidence


@rule(FAMILY)
def mem(ctx: Context) -> Finding | None:
    """Memory set-up scales with the memory size: a quarter of the memory (at least
    MIN_MEMORY_MIB) saves three quarters of it."""
    if arg_value(ctx, "mem") is not None:
        return None
    total_kb = ctx.boot.meta.get("memory_kb")
    measured = _memory_init(ctx)
    if not total_kb or measured is None:
        return None
    init_ns, evidence = measured
    total_mib = target_value(ctx, "target", "memory") or 2 ** round(math.log2(total_kb / 1024))
    proposed = max(MIN_MEMORY_MIB, total_mib // 4)
    if proposed >= total_mib:
        return None
    saving = scaled(init_ns, 1 - proposed / total_mib)
    if not worth_it(saving):
        return None
    evidence.append(f"memory set-up took {took(init_ns)} for {mib(total_kb * 1024)}")
    return Finding(
        rule="cmdline.mem", family=FAMILY,
        title=f"Give the kernel only the memory the application needs (e.g. `mem={proposed}M`)",
        evidence=evidence, saving_ns=saving,
        how=f"Append `mem={proposed}M` (or the size your application really needs) to the kernel command line: "
            "the kernel sets up only that much memory.",
        non_intrusive=True, patch=for_reference(ctx, {"target": {"memory": proposed}}), confidence="low",
        notes=[f"scaled from the measured set-up time by {proposed} of {total_mib} MiB; "
               "memory beyond mem= is unusable until the next boot"])


@rule(FAMILY)
def init(ctx: Context) -> Finding | None:
    """The init scripts that run before the application: from the first service to the
    application's start."""
    duration, services, app = between(ctx.boot, Mark.SERVICES_START, Mark.APP_START)
    if not worth_it(duration):
        return None
    runs = ctx.boot.first_mark(Mark.USERSPACE_START)
    init_path = ctx.boot.meta.get("init", "/sbin/init")
    from_initramfs = ctx.boot.first_mark(km.INITRAMFS_UNPACK) is not None or init_path == "/init"
    arg = "rdinit" if from_initramfs else "init"
    evidence = [cite(ctx.boot, ev) for ev in (runs, services, app) if ev is not None]
    evidence.append(f"{took(duration)} from the first service to the application's start")
    patch = None
    if target_value(ctx, "initramfs", "init") == "rc":
        # The direct init runs the application itself; steps and after-ready commands need a shell.
        shell = target_value(ctx, "initramfs", "steps") or target_value(ctx, "initramfs", "after")
        patch = {"initramfs": {"init": "script" if shell else "direct"}}
    return Finding(
        rule="cmdline.init", family=FAMILY,
        title=f"Start the application directly as init (`{arg}=`)",
        evidence=evidence, saving_ns=duration,
        how=f"Write a short script that mounts what the application needs, loads its modules and starts it, and "
            f"boot with `{arg}=/path/to/that-script` ({arg}= is the program the kernel runs first"
            f"{' from the initramfs' if from_initramfs else ''}); start the other services after the application.",
        non_intrusive=True, patch=patch, confidence="medium",
        notes=[f"the kernel runs {init_path} now", "services the application needs must be started by the script"])


# The kernel gives up on a secondary CPU after waiting for it: 5 s on arm, arm64 and RISC-V
# ("CPU1: failed to come online"), 10 s on x86 ("CPU1 failed to report alive state").
_CPU_FAILED = re.compile(r"(?:smpboot: )?CPU ?(?P<cpu>\d+):? (?:failed to come online|failed to report alive state)")
_CPUS_UP = re.compile(r"smp: Brought up \d+ nodes?, (?P<n>\d+) CPUs?")


@rule(FAMILY)
def maxcpus(ctx: Context) -> Finding | None:
    """Secondary CPUs that never came online: each cost the kernel's wait for it, from the
    kernel's line before its failure to the failure."""
    if arg_value(ctx, "maxcpus") is not None or arg_value(ctx, "nosmp") is not None:
        return None
    failed = find_lines(ctx.boot, _CPU_FAILED)
    waits = []
    for line, m in failed:
        before = nearest(line, -1, Line.printk)
        if before is not None and line.printk() is not None:
            waits.append((int(m.group("cpu")), before, line, max(0, line.printk() - before.printk())))
    saving = sum(wait for *_, wait in waits)
    if not worth_it(saving):
        return None
    up = find_lines(ctx.boot, _CPUS_UP)
    evidence = []
    for cpu, before, line, wait in waits:
        evidence += [before.cite(), line.cite(), f"CPU{cpu}: the kernel waited {took(wait)} for it"]
    count = int(up[0][1].group("n")) if up else None
    if up:
        evidence.append(up[0][0].cite())
    cpus = sorted(cpu for cpu, *_ in waits)
    # maxcpus=N brings up the first N: it skips the failing CPUs only when they come after
    # every CPU that started.
    fits = count is not None and min(cpus) >= count
    names = ", ".join(f"CPU{cpu}" for cpu in cpus)
    how = (f"Append `maxcpus={count}` to the kernel command line: the kernel then brings up only the "
           f"{count} CPU{'s' if count != 1 else ''} that start{'s' if count == 1 else ''} and does not wait for {names}."
           if fits else
           f"Remove {names} from the device tree the kernel boots with (their `cpu@` nodes), or give them "
           "back by fixing how the firmware starts them: `maxcpus=` brings up the first CPUs, and some that "
           "start come after these.")
    return Finding(
        rule="cmdline.maxcpus", family=FAMILY,
        title=(f"Bring up only the CPUs that start: add `maxcpus={count}`" if fits
               else f"Stop the kernel waiting for {names}, which never start"),
        evidence=evidence, saving_ns=saving,
        how=how, non_intrusive=fits, patch=append_patch(ctx, f"maxcpus={count}") if fits else None,
        confidence="high",
        notes=[f"{len(waits)} CPU{'s' if len(waits) != 1 else ''} never came online: the firmware does not start "
               "them (PSCI, a spin table or a hypervisor stub); fixing that gives them back to the application",
               "a CPU maxcpus= left offline can be onlined later (/sys/devices/system/cpu/cpuN/online), "
               "which waits for it again"])
