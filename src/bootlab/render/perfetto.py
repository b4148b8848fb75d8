"""A Perfetto-loadable trace (Trace Event JSON): open it at ui.perfetto.dev.

Phases, bootloader steps, initcalls per thread, probes, units and processes become
slices on named tracks; boundaries and markers become instants; bootchart's CPU and
disk samples become counters.
"""

from __future__ import annotations

from ..analysis import Analysis
from ..timeline import Kind
from .trace_events import TraceEvents

GROUPS = {
    Kind.PHASE: "systemd-analyze",
    Kind.STAGE: "bootloader",
    Kind.INITCALL: "kernel",
    Kind.PROBE: "kernel",
    Kind.ASYNC_WAIT: "kernel",
    Kind.UNIT: "userspace",
    Kind.PROCESS: "processes",
    Kind.STEP: "userspace",
}


def render(a: Analysis) -> str:
    boot = a.boot
    trace = TraceEvents()
    for s in a.phases.spans:
        trace.slice("boot", "phases", s.name, s.start, s.duration, {"begins": s.start_evidence})
    for mark, b in a.phases.boundaries.items():
        trace.instant("boot", "boundaries", str(mark), b.at, {"evidence": b.evidence})
    if a.phases.end is not None:
        trace.instant("boot", "boundaries", str(a.phases.end.mark), a.phases.end.at, {"evidence": a.phases.end.evidence})
    for ev in boot.events:
        at = boot.at(ev)
        if at is None:
            continue
        args = {"where": ev.where(), **{k: str(v) for k, v in (ev.attrs or {}).items()}}
        if ev.kind == Kind.MARKER:
            trace.instant("boot", "markers", ev.name, at, args)
        elif ev.dur is not None and ev.kind in GROUPS:
            thread = ev.track or str(ev.kind)
            if ev.kind == Kind.UNIT:
                thread = "units"
            trace.slice(GROUPS[ev.kind], thread, ev.name, at, ev.dur, args, category=str(ev.kind))
    for name, (clock, samples) in boot.series.items():
        for t, value in samples:
            ref = boot.to_ref(clock, t)
            if ref is not None:
                trace.counter("samples", name, ref, {name: round(value, 2)})
    return trace.to_json({"generator": "bootlab", "kernel": boot.meta.get("kernel_version", "")}) + "\n"
