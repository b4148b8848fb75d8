"""JSON: the analysis as data, in the documented, versioned schema
(src/bootlab/schema/analysis-3.json).  Times are integer nanoseconds on the reference
clock (power-on is zero when known); every number carries the file:line it came from.
"""

from __future__ import annotations

import json

from .. import __version__
from ..analysis import Analysis
from ..analysis.blame import Blamed, errno_name
from ..analysis.critical_path import Step
from ..timeline import Boot, Event

SCHEMA = "bootlab-analysis"
VERSION = 3


def _blamed(items: list[Blamed]) -> list[dict]:
    return [{"name": b.name, "duration_ns": b.duration, "start_ns": b.start, "where": b.where, "detail": b.detail,
             "ret": b.ret, "errno": None if b.ret is None else errno_name(b.ret), "outcome": str(b.outcome),
             "upper_bound": b.upper_bound}
            for b in items]


def _steps(steps: list[Step]) -> list[dict]:
    return [{"name": s.name, "start_ns": s.start, "duration_ns": s.duration, "kind": s.kind, "where": s.where,
             "upper_bound": s.upper_bound} for s in steps]


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def event_dict(boot: Boot, ev: Event) -> dict:
    return {
        "kind": str(ev.kind),
        "name": ev.name,
        "clock": str(ev.clock),
        "t_ns": ev.t,
        "dur_ns": ev.dur,
        "at_ns": boot.at(ev),
        "phase": ev.phase,
        "track": ev.track,
        "file": ev.file,
        "line": ev.line,
        "attrs": _jsonable(ev.attrs or {}),
    }


def document(a: Analysis, events: bool = False) -> dict:
    boot = a.boot
    p = a.phases
    c = a.console
    doc = {
        "schema": SCHEMA,
        "version": VERSION,
        "generator": f"bootlab {__version__}",
        "sources": [{"file": s.file, "format": s.format, "lines": s.lines} for s in boot.sources],
        "reference_clock": boot.reference,
        "clocks": [{"name": str(name), "offset_ns": info.offset, "method": info.method, "anchors": info.anchors,
                    "evidence": info.evidence, "knots": len(info.map.xs), "at_sightings": info.at_sightings,
                    "own_speed": info.own_speed,
                    "rate": None if info.rate is None else {"rate": info.rate.rate, "start_ns": info.rate.start,
                                                            "end_ns": info.rate.end, "probes": info.rate.probes}}
                   for name, info in boot.clocks.items()],
        "meta": _jsonable(boot.meta),
        "total_ns": p.total,
        "end": None if p.end is None else {"mark": str(p.end.mark), "at_ns": p.end.at, "evidence": p.end.evidence,
                                           "lower_bound": p.end.lower_bound},
        "phases": [{"name": s.name, "phases": [str(x.value) for x in s.phases], "start_ns": s.start, "end_ns": s.end,
                    "duration_ns": s.duration, "start_evidence": s.start_evidence, "end_evidence": s.end_evidence}
                   for s in p.spans],
        "boundaries": {str(k): {"at_ns": b.at, "evidence": b.evidence} for k, b in p.boundaries.items()},
        "blame": {
            "initcalls": _blamed(a.initcalls),
            "probes": _blamed(a.probes),
            "units": _blamed(a.units),
            "processes": _blamed(a.processes),
            "bootloader": _blamed(a.stages),
        },
        "steps": _blamed(a.steps),
        "initcall_levels": [{"level": lv, "total_ns": t, "count": n} for lv, t, n in a.levels],
        "failures": _blamed(a.failures),
        "absent": _blamed(a.absent),
        "deferred": _blamed(a.deferred),
        "critical_path": {
            "kernel_track": a.critical.kernel_track,
            "kernel_steps": a.critical.kernel_steps,
            "kernel_total_ns": a.critical.kernel_total,
            "kernel_span_ns": a.critical.kernel_span,
            "kernel_longest": _steps(a.critical.kernel_top),
            "userspace": _steps(a.critical.userspace),
        },
        "console": None if c is None else {
            "baud": c.baud, "baud_source": c.baud_source, "bytes": c.bytes, "lines": c.lines, "cost_ns": c.cost,
            "printed": c.printed, "source": c.source, "note": c.note, "serial": c.serial, "loglevel": c.loglevel,
            "skipped_bytes": c.skipped, "capped": c.capped, "ready_line_at_ns": c.ready_line_at,
            "loss": None if c.loss is None else {"checked_against": c.loss.against, "checked_lines": c.loss.checked, "damaged_lines": len(c.loss.damaged),
                                                 "lost_bytes": c.loss.lost_bytes, "unchecked_lines": c.loss.unchecked,
                                                 "host_stalled_lines": c.loss.host_stalled},
            "per_phase": [{"phase": name, "bytes": n, "cost_ns": cost} for name, (n, cost) in c.per_phase.items()],
            "per_step": [{"step": name, "start_ns": start, "lines": lines, "bytes": n, "cost_ns": cost}
                         for (name, start), (lines, n, cost) in c.per_step.items()],
        },
        "gaps": [{"start_ns": g.start, "end_ns": g.end, "duration_ns": g.duration, "before": g.before, "after": g.after,
                  **({"cause": g.cause} if g.cause else {})} for g in a.gaps],
        "notes": list(p.notes),
        "diagnostics": [{"file": d.file, "line": d.line, "severity": d.severity, "message": d.message}
                        for d in boot.diagnostics],
    }
    if events:
        doc["events"] = [event_dict(boot, ev) for ev in boot.events]
    return doc


# A list longer than this (the failures, the events of a million-line log) is written one
# compact item per line: json's indenting encoder is pure Python, ten times slower.
LONG = 1000


def render(a: Analysis) -> str:
    doc = document(a, a.options.events)
    long = {key: value for key, value in doc.items() if isinstance(value, list) and len(value) > LONG}
    text = json.dumps({key: key if key in long else value for key, value in doc.items()}, indent=1,
                      ensure_ascii=False)
    compact = json.JSONEncoder(ensure_ascii=False).encode
    for key, value in long.items():
        items = ",\n  ".join(map(compact, value))
        text = text.replace(f'\n {json.dumps(key)}: {json.dumps(key)}', f'\n {json.dumps(key)}: [\n  {items}\n ]', 1)
    return text + "\n"
