"""Kernel configuration: a trimmed kernel and the slab allocator (seed 000: removing or
modularising 185 options cut 49 % of the boot; SLAB booted 32 ms faster than SLUB).

A configuration change means rebuilding the kernel, not changing its source: it is
non-intrusive in the seeds' sense.
"""

from __future__ import annotations

import re

from ..timeline import NO_TIME, Kind, Phase
from . import Context, Finding, rule
from .common import (cite, find_lines, for_reference, line_index, phase_span, spans, target_value, took, total,
                     worth_it)

FAMILY = "kernel configuration"
MIN_INITCALLS_NS = 500_000_000  # an initcall phase this long is worth measuring initcall by initcall
# Initcall names that register a driver (module_platform_driver, module_pci_driver, module_init ...).
DRIVER_INIT = re.compile(r"_(?:driver_init|init_driver|init_module|mod_init|drv_init)$")
SLAB_REMOVED = (6, 8)  # Linux 6.8 removed SLAB (deprecated since 6.5)
_SLUB = re.compile(r"SLUB: ")
_VERSION = re.compile(r"^(\d+)\.(\d+)")


def idle_drivers(boot) -> list:
    """Built-in driver registrations that found no device: no probe ran while they did
    (an initcall_debug boot's initcalls and probes)."""
    index = line_index(boot)
    table, probes = index.span_table(Kind.INITCALL), index.starts(Kind.PROBE)
    if table is None:
        return []
    idle = (table.t != NO_TIME) & table.where("name", DRIVER_INIT.search) & ~table.flagged("module") \
        & table.where("attrs", lambda a: (a or {}).get("ret", 0) == 0)
    for k, clock in enumerate(table.vocab["clock"]):
        rows = idle & (table.clock == k)
        idle[rows] = ~probes.starting_in(clock, table.t[rows], table.t[rows] + table.dur[rows])
    return spans(boot, Kind.INITCALL, where=lambda _table: idle)


@rule(FAMILY)
def trim(ctx: Context) -> Finding | None:
    """Measured: the time of built-in drivers that found no device.  The smaller image also
    loads and decompresses faster; that part is not estimated here."""
    patch = for_reference(ctx, {"target": {"kernel": "cloud"}}) \
        if target_value(ctx, "target", "kernel") == "generic" else None
    table = line_index(ctx.boot).span_table(Kind.INITCALL)
    builtin = table.dur[~table.flagged("module")] if table is not None else []
    how = ("Start from a small configuration (`make localmodconfig` on the running board, or the defconfig) and keep "
           "built in only what the boot to the application needs; build the other drivers as modules and load them "
           "after the application.")
    if not len(builtin):
        phase = phase_span(ctx.analysis, Phase.INITCALLS)
        if phase is None or phase.duration < MIN_INITCALLS_NS:
            return None
        return Finding(
            rule="config.trim", family=FAMILY,
            title="Trim the kernel configuration to this board",
            evidence=[f"initcalls phase: {took(phase.duration)} ({phase.start_evidence} to {phase.end_evidence})"],
            saving_ns=None, how=how, non_intrusive=True, patch=patch, confidence="low",
            notes=["boot once with `initcall_debug` (and loglevel=8, or read `dmesg`) to see which initcalls "
                   "the time goes to"])
    idle = sorted(idle_drivers(ctx.boot), key=lambda ev: -ev.dur)
    saving = total(ev.dur for ev in idle)
    if not worth_it(saving):
        return None
    evidence = [f"{len(builtin)} built-in initcalls took {took(int(builtin.sum()))}; "
                f"{len(idle)} drivers among them found no device: {took(saving)}"]
    evidence += [cite(ctx.boot, ev) for ev in idle[:5]]
    return Finding(
        rule="config.trim", family=FAMILY,
        title="Trim the kernel configuration to this board",
        evidence=evidence, saving_ns=saving, how=how, non_intrusive=True, patch=patch, confidence="medium",
        notes=["a smaller kernel also loads and decompresses faster: not counted here"])


def _kernel_version(ctx: Context) -> tuple[int, int] | None:
    m = _VERSION.match(str(ctx.boot.meta.get("kernel_version", "")))
    return (int(m.group(1)), int(m.group(2))) if m else None


@rule(FAMILY)
def slab(ctx: Context) -> Finding | None:
    version = _kernel_version(ctx)
    slub = find_lines(ctx.boot, _SLUB)
    if not slub or version is None or version >= SLAB_REMOVED:
        return None
    notes = ["seed 000 measured 32 ms less with SLAB on an ARM9 board; this boot does not show the allocator's "
             "own cost, so no estimate"]
    if version >= (6, 5):
        notes.append("SLAB is deprecated from Linux 6.5 (CONFIG_SLAB_DEPRECATED) and gone in 6.8")
    return Finding(
        rule="config.slab", family=FAMILY,
        title="Try the SLAB allocator instead of SLUB",
        evidence=[slub[0][0].cite()], saving_ns=None,
        how="Build with CONFIG_SLAB=y instead of CONFIG_SLUB=y (General setup / Memory management options, "
            "Choose SLAB allocator) and compare boots.",
        non_intrusive=True, patch=None, confidence="low", notes=notes)
