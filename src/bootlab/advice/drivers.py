"""Drivers and initcalls, from initcall_debug: slow initcalls, hardware that is not there,
probes deferred for a missing supplier, probes that could run asynchronously, modules
loaded before the application (seed 001: probing non-existent hardware, serialised driver
init, late driver load; seed 002: ip_auto_config 1.48 s).
"""

from __future__ import annotations

import errno

import numpy as np

from ..timeline import Kind, Mark
from . import Context, Finding, rule
from .common import (append_patch, arg_value, before_ready, between, cite, for_reference, lasting,
                     line_index, named, printing_in, spans, target_value, took, total, worth_it)

FAMILY = "drivers"
SLOW_INITCALL_NS = 50_000_000
SLOW_PROBE_NS = 20_000_000
MOST_SLOW_INITCALLS = 5
ABSENT = {errno.ENODEV: "ENODEV", errno.ENXIO: "ENXIO", errno.ETIMEDOUT: "ETIMEDOUT"}
EPROBE_DEFER = 517  # include/linux/errno.h (kernel-internal)
DEFER_DELAY_NS = 100_000_000  # a device that deferred this long is worth a look

OWN_RULES = ("ip_auto_config", "deferred_probe_initcall")
# Initcalls whose work a kernel argument removes.
KNOWN_INITCALLS = {
    "crypto_algapi_init": ("runs the crypto self-tests of every algorithm registered so far",
                           "cryptomgr.notests"),
    "crypto_kdf108_init": ("only runs the CTR-KDF self-test", "initcall_blacklist=crypto_kdf108_init"),
}


def _ret(ev) -> int | None:
    return (ev.attrs or {}).get("ret")


def _absent(attrs: dict | None) -> bool:
    ret = (attrs or {}).get("ret")
    return ret is not None and abs(ret) in ABSENT and not (attrs or {}).get("fixup")


def _deferring(table) -> np.ndarray:
    """The probes of devices that deferred at least once (from the columns)."""
    deferred = table.where("attrs", lambda a: abs((a or {}).get("ret") or 0) == EPROBE_DEFER)
    return np.isin(table.name, table.name[deferred])


def is_builtin(ev) -> bool:
    """A built-in initcall run in order (not a module's, a PCI fixup or an async one)."""
    attrs = ev.attrs or {}
    return not attrs.get("module") and not attrs.get("fixup") and "async" not in attrs


@rule(FAMILY)
def ip_autoconfig(ctx: Context) -> Finding | None:
    """ip_auto_config configures the network from the kernel, waiting for a link and a DHCP
    answer; userspace configures it again anyway."""
    calls = [ev for ev in spans(ctx.boot, Kind.INITCALL, where=named("ip_auto_config"))]
    ip = arg_value(ctx, "ip")
    if not calls or ip in ("off", "none"):
        return None
    ev = max(calls, key=lambda e: e.dur)
    if not worth_it(ev.dur):
        return None
    return Finding(
        rule="drivers.ip-autoconfig", family=FAMILY,
        title="Drop `ip=` from the kernel command line",
        evidence=[cite(ctx.boot, ev)] + ([f"kernel command line: ip={ip}"] if ip is not None else []),
        saving_ns=ev.dur,
        how="Remove ip= from the kernel command line (keep it only for an NFS root) and configure the network "
            "from userspace after the application starts.",
        non_intrusive=True, patch=None, confidence="high",
        notes=["seed 002: ip_auto_config took 1.48 s"])


@rule(FAMILY)
def slow_initcalls(ctx: Context) -> list[Finding]:
    """Each slow built-in initcall on the boot's path costs its duration, less what the serial
    console printed meanwhile (a console's driver whose registration printed the whole log at
    115200 baud: 1.85 s of a Cortex-M4's 2.48 s in stm32_usart_init).  Those whose time is a
    slow probe are for async_probe; ip_auto_config and the re-probing of deferred devices have
    their own rules."""
    probing = {id(initcall) for _probe, initcall in slow_probes(ctx)}
    slow = []
    for ev in spans(ctx.boot, Kind.INITCALL, where=lasting(SLOW_INITCALL_NS)):
        if not (is_builtin(ev) and ev.dur >= SLOW_INITCALL_NS and ev.name not in OWN_RULES
                and (_ret(ev) or 0) >= 0 and id(ev) not in probing):
            continue
        printing = printing_in(ctx, ctx.boot.at(ev), ctx.boot.at_end(ev))
        if ev.dur - printing >= SLOW_INITCALL_NS:
            slow.append((ev.dur - printing, printing, ev))
    slow.sort(key=lambda found: -found[0])
    found = []
    for own, printing, ev in slow[:MOST_SLOW_INITCALLS]:
        known = KNOWN_INITCALLS.get(ev.name)
        if known:
            what, argument = known
            how = f"Append `{argument}` to the kernel command line: {ev.name} {what}."
            patch, confidence = append_patch(ctx, argument), "high"
        else:
            how = (f"If the board does not need {ev.name}, turn its option off in the kernel configuration; if it "
                   "is needed but not before the application, build it as a module and load it after; "
                   f"`initcall_blacklist={ev.name}` skips it without a rebuild (needs CONFIG_KALLSYMS).")
            patch, confidence = None, "medium"
        evidence = [cite(ctx.boot, ev)]
        if printing:  # (the console's, which `quiet` saves: a serial console's replay as it registers)
            evidence.append(f"{took(printing)} of its {took(ev.dur)} was the serial console printing, which removing "
                            "it does not save (see `quiet`)")
        found.append(Finding(
            rule="drivers.slow-initcall", family=FAMILY,
            title=f"Remove or defer the initcall {ev.name} ({took(own)})",
            evidence=evidence, saving_ns=own, how=how,
            non_intrusive=True, patch=patch, confidence=confidence))
    return found


@rule(FAMILY)
def absent_hardware(ctx: Context) -> Finding | None:
    """Initcalls and probes that looked for hardware and did not find it: -ENODEV, -ENXIO,
    -ETIMEDOUT (a probe's return is sometimes printed without its sign)."""
    index = line_index(ctx.boot)
    table = index.span_table(Kind.INITCALL, Kind.PROBE)
    if table is None:
        return None
    misses = np.flatnonzero(table.where("attrs", _absent))
    saving = int(table.dur[misses].sum())
    if not worth_it(saving):
        return None
    codes = sorted({ABSENT[abs(table.vocab["attrs"][a]["ret"])] for a in set(table.attrs[misses].tolist())})
    longest = misses[np.argsort(-table.dur[misses], kind="stable")[:8]]
    evidence = [f"{len(misses)} initcalls and probes returned {', '.join(codes)}: {took(saving)}"]
    evidence += [cite(ctx.boot, index.span_event((Kind.INITCALL, Kind.PROBE), row)) for row in longest.tolist()]
    return Finding(
        rule="drivers.absent-hardware", family=FAMILY,
        title="Stop probing hardware the board does not have",
        evidence=evidence, saving_ns=saving,
        how="Turn the drivers off in the kernel configuration; for a device that is described but not fitted, "
            "set its device-tree node to status = \"disabled\"; `initcall_blacklist=<initcall>` skips a built-in "
            "initcall without a rebuild.",
        non_intrusive=True, patch=None, confidence="high",
        notes=["seed 001: probing an empty IDE interface took 1.3 s"])


@rule(FAMILY)
def probe_defer(ctx: Context) -> Finding | None:
    """A probe that returns -EPROBE_DEFER waits for a supplier; the device is ready only when
    a later probe succeeds.  The wasted attempts are cheap: the delay is what matters."""
    attempts: dict[str, list] = {}
    for ev in spans(ctx.boot, Kind.PROBE, where=_deferring):  # a device that never deferred has no chain
        attempts.setdefault(ev.name, []).append(ev)
    chains = []
    for device, evs in attempts.items():
        deferred = [ev for ev in evs if _ret(ev) is not None and abs(_ret(ev)) == EPROBE_DEFER]
        done = [ev for ev in evs if _ret(ev) == 0]
        first, last = (ctx.boot.at(deferred[0]) if deferred else None), (ctx.boot.at_end(done[-1]) if done else None)
        delay = last - first if first is not None and last is not None else None
        if deferred and (len(deferred) > 1 or (delay or 0) >= DEFER_DELAY_NS):
            chains.append((device, deferred, done, delay))
    if not chains:
        return None
    chains.sort(key=lambda c: -(c[3] or 0))
    evidence = []
    for device, deferred, done, delay in chains[:5]:
        outcome = f"probed {took(delay)} after its first attempt" if delay is not None else "never probed in this log"
        evidence.append(f"{device}: deferred {len(deferred)} times, {outcome}")
        evidence += [cite(ctx.boot, ev) for ev in (deferred[0], *done[-1:])]
    evidence += [f"{cite(ctx.boot, ev)}  (the late retry of every deferred probe)"
                 for ev in spans(ctx.boot, Kind.INITCALL, where=named("deferred_probe_initcall"))]
    wasted = total(ev.dur for _d, deferred, _done, _delay in chains for ev in deferred)
    return Finding(
        rule="drivers.probe-defer", family=FAMILY,
        title="Probe suppliers before the devices that need them (-EPROBE_DEFER)",
        evidence=evidence, saving_ns=wasted if worth_it(wasted) else None,
        how="Build the supplier's driver in (or load its module first) so the device probes once; keep "
            "fw_devlink on (the default) so the kernel orders probes by device-tree links; `deferred_probe_timeout=` "
            "bounds how long a device waits for an optional supplier.",
        non_intrusive=True, patch=None, confidence="low",
        notes=["the saving is the device being ready earlier, which counts only if the boot waits for it"])


def slow_probes(ctx: Context) -> list[tuple]:
    """(probe, the built-in initcall it ran in) for slow successful probes; a probe inside
    another one (a PHY inside its Ethernet controller) is part of the outer one."""
    index = line_index(ctx.boot)
    table = index.span_table(Kind.PROBE)
    if table is None:
        return []
    slow = (table.dur >= SLOW_PROBE_NS) & table.where("attrs", lambda a: (a or {}).get("ret") == 0)
    probes, outers = spans(ctx.boot, Kind.PROBE, where=lambda _table: slow), index.starts(Kind.PROBE, slow)
    found = []
    for probe in probes:
        if outers.containing(probe) is not None:
            continue
        initcall = index.starts(Kind.INITCALL).containing(probe)
        if initcall is not None and is_builtin(initcall):
            found.append((probe, initcall))
    return found


@rule(FAMILY)
def async_probe(ctx: Context) -> Finding | None:
    """Slow probes run by a built-in driver's initcall hold up every initcall after them."""
    slow = slow_probes(ctx)
    saving = total(probe.dur for probe, _ in slow)
    if not worth_it(saving):
        return None
    slow.sort(key=lambda pair: -pair[0].dur)
    evidence = []
    for probe, initcall in slow[:6]:
        evidence += [cite(ctx.boot, probe), f"  probed during {initcall.name} ({cite(ctx.boot, initcall)})"]
    return Finding(
        rule="drivers.async-probe", family=FAMILY,
        title="Probe slow devices asynchronously (`driver_async_probe=`)",
        evidence=evidence, saving_ns=saving,
        how="Append `driver_async_probe=<driver>,<driver>` with the drivers of these devices (their names are in "
            "/sys/bus/*/devices/<device>/driver): the kernel probes them in the background and goes on with the "
            "next initcall.",
        non_intrusive=True, patch=None, confidence="low",
        notes=["asynchronous probes overlap the rest of the boot: on one CPU they still take CPU time",
               "a driver the root filesystem or the console needs must stay synchronous"])


@rule(FAMILY)
def modules_after_app(ctx: Context) -> Finding | None:
    """Modules loaded before the application delay it by their loading time (bootlab's
    modules.start/modules.end marks when present, else their initcalls)."""
    ready = ctx.analysis.phases.end
    if ready is None or ready.mark != Mark.READY:
        return None  # without a ready line, "before the application" means nothing
    app = ctx.boot.first_mark(Mark.APP_START)
    app_at = ctx.boot.at(app) if app is not None else None
    loaded = [ev for ev in spans(ctx.boot, Kind.INITCALL, where=lambda table: table.flagged("module"))
              if (app_at is None or (ctx.boot.at(ev) or 0) < app_at) and before_ready(ctx.boot, ctx.analysis, ev)]
    marked, start, stop = between(ctx.boot, "modules.start", "modules.end")
    if marked is not None and (app_at is None or ctx.boot.at(stop) <= app_at):
        saving, evidence = marked, [cite(ctx.boot, start), cite(ctx.boot, stop)]
    else:
        saving, evidence = total(ev.dur for ev in loaded), []
    if not worth_it(saving):
        return None
    names = sorted({ev.attrs["module"] for ev in loaded})
    evidence.insert(0, f"{len(names)} modules initialised before the application: {', '.join(names[:12])}"
                    if names else f"modules loaded before the application: {took(saving)}")
    evidence += [cite(ctx.boot, ev) for ev in sorted(loaded, key=lambda e: -e.dur)[:5]]
    modules = target_value(ctx, "initramfs", "modules") or []
    patch = None
    if modules and target_value(ctx, "initramfs", "app_prints_ready"):
        # Only when the application prints the ready marker: a boot without a module it
        # needs then fails, and the optimizer discards the variant.
        after = target_value(ctx, "initramfs", "modules_after") or []
        patch = for_reference(ctx, {"initramfs": {"modules": [], "modules_after": modules + after}})
    return Finding(
        rule="drivers.modules-after-app", family=FAMILY,
        title="Load the modules the application does not need after it starts",
        evidence=evidence, saving_ns=saving,
        how="Start the application first and load the other modules after it (modprobe in the background, or a "
            "service ordered after the application).",
        non_intrusive=True, patch=patch, confidence="medium" if app_at is not None else "low",
        notes=["keep before the application the modules it uses (its camera, its network)"]
        + ([] if app_at is not None else ["the application's start is not marked: counted up to the ready line"]))
