"""One boot of a target, start to finish: build, boot, read the capture, analyze, store."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..analysis import Analysis, Options, analyze
from ..render.json import document
from ..sources import NotALog, Patterns, read
from ..targets import qemu
from ..targets.result import BootResult
from ..targets.reference import Built
from .store import Store


@dataclass
class BootRun:
    run_id: int
    result: BootResult
    analysis: Analysis | None


def metrics_of(a: Analysis) -> dict[str, float]:
    """The numbers statistics work on: ns from power-on to each boundary, each phase's
    duration, the total, and the console's bytes."""
    m: dict[str, float] = {}
    p = a.phases
    if p.end is not None:
        m["total"] = float(p.end.at - (p.spans[0].start if p.spans else 0))
        m["at:ready"] = float(p.end.at)
    for mark, b in p.boundaries.items():
        m[f"at:{mark}"] = float(b.at)
    for s in p.spans:
        m[f"phase:{s.name}"] = float(s.duration)
    for step in a.steps:
        m[f"step:{step.name}"] = float(step.duration)
    if a.console is not None:
        m["console:bytes"] = float(a.console.bytes)
    return m


def captures_dir(db_path: str) -> Path:
    """Captures live beside their run store: bootlab.db -> bootlab-captures/."""
    db = Path(os.path.abspath(db_path))
    path = db.with_name(f"{db.stem}-captures")
    path.mkdir(exist_ok=True)
    return path


def boot_and_store(built: Built, store: Store, *, label: str | None = None, campaign: str | None = None,
                   variant: str | None = None, sequence: int | None = None, echo=None) -> BootRun:
    run_uuid = str(uuid.uuid4())
    capture_path = str(captures_dir(store.path) / f"{run_uuid}.capture")
    result = qemu.boot(built, capture_path, echo=echo)
    analysis = None
    status, reason = result.status, result.reason
    try:
        boot = read([capture_path], Patterns.from_options(built.target.boot.ready))
        analysis = analyze(boot, Options(baud=built.target.target.console_baud or None))
    except NotALog as err:
        if status == "ok":
            status, reason = "failed", f"capture unreadable: {err}"
    with open(capture_path, "rb") as fh:
        raw = fh.read()
    metrics = metrics_of(analysis) if analysis is not None and status == "ok" else {}
    run_id = store.add(status=status, reason=reason, target=built.describe(), command=built.qemu_argv(),
                       capture=raw, analysis=document(analysis) if analysis is not None else None, metrics=metrics,
                       wall_ns=result.wall_ns, ready_ns=result.ready_ns, label=label, campaign=campaign,
                       variant=variant, sequence=sequence, run_uuid=run_uuid)
    result.status, result.reason = status, reason
    return BootRun(run_id, result, analysis)
