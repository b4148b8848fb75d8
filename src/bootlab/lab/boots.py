"""One boot of a target, start to finish: build, boot, read the capture, analyze, store."""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..analysis import Analysis, Options, analyze
from ..analysis.console_cost import backlog
from ..analysis.console_loss import LINE_SHAPES
from ..render.fmt import seconds, span
from ..render.json import document
from ..sources import NotALog, Patterns, read
from ..targets import strategy
from ..targets.kinds import Bootable
from ..targets.result import BootResult
from ..timeline import Boot, Clock
from .store import Run, Store


@dataclass
class BootRun:
    run_id: int
    result: BootResult
    analysis: Analysis | None

    @property
    def ready_ns(self) -> int | None:
        """The boot's ready time: when the device was ready, from power-on (the analysis's
        end, as in statistics); the ready line reached the host later (result.ready_line_ns)."""
        ok = self.result.status == "ok" and self.analysis is not None and self.analysis.phases.end is not None
        return self.analysis.phases.end.at if ok else None

    def summary(self) -> str:
        """`run N: ready X s (line on the host at Y s)`, or the run's status."""
        if self.ready_ns is None:
            return f"run {self.run_id}: {self.result.status} ({self.result.reason})"
        return f"run {self.run_id}: ready {seconds(self.ready_ns)} s" + ready_line_note(
            self.ready_ns, self.result.ready_line_ns)


def ready_line_note(ready: int, line: int | None) -> str:
    """When the ready line reached the host, beside the ready time (for the same run)."""
    waited = backlog(ready, line)
    return "" if waited is None else f" (its line reached the host at {seconds(line)} s: console backlog {span(waited)})"


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
        if a.console.loss is not None:
            m["console:lost_bytes"] = float(a.console.loss.lost_bytes)
            if a.console.loss.against == LINE_SHAPES:
                m["console:lost_bytes_by_shape"] = 1.0   # counted by the lines' shape: a lower bound
    printk = a.boot.clocks.get(Clock.PRINTK)
    if printk is not None and printk.rate is not None:
        m["clock:printk_rate"] = printk.rate.rate  # host ns per printk ns, from the clock probes
    return m


def captures_dir(db_path: str, create: bool = True) -> Path:
    """Captures live beside their run store: bootlab.db -> bootlab-captures/."""
    db = Path(os.path.abspath(db_path))
    path = db.with_name(f"{db.stem}-captures")
    if create:
        path.mkdir(exist_ok=True)
    return path


def read_run(store: Store, run: Run, patterns: Patterns) -> Boot:
    """A stored run's capture as a boot: the file kept beside the store when it is still
    there (evidence then names a file that exists), else the copy in the store.  NotALog
    when there is none or it cannot be read."""
    kept = captures_dir(store.path, create=False) / f"{run.uuid}.capture"
    raw = None if kept.is_file() else store.capture(run.id)
    if raw is None and not kept.is_file():
        raise NotALog(f"run {run.id}", 0, "no capture in the store")
    try:
        if raw is None:
            return read([str(kept)], patterns)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, f"run-{run.id}.capture")
            path.write_bytes(raw)
            return read([str(path)], patterns)
    except NotALog as err:
        raise NotALog(f"run {run.id}", 0, str(err)) from None


def new_capture(store: Store) -> tuple[str, str]:
    """A run's uuid and the path its capture is written to as the boot goes."""
    run_uuid = str(uuid.uuid4())
    return run_uuid, str(captures_dir(store.path) / f"{run_uuid}.capture")


def record(store: Store, run_uuid: str, result: BootResult, *, ready: str, baud: int | None, target: dict,
           command: list[str], label: str | None = None, campaign: str | None = None, variant: str | None = None,
           sequence: int | None = None) -> BootRun:
    """Analyse a finished boot's capture and store the run (a capture that cannot be read
    fails a boot that reached ready)."""
    analysis = None
    status, reason = result.status, result.reason
    try:
        analysis = analyze(read([result.capture], Patterns.from_options(ready)), Options(baud=baud))
    except NotALog as err:
        if status == "ok":
            status, reason = "failed", f"capture unreadable: {err}"
    with open(result.capture, "rb") as fh:
        raw = fh.read()
    metrics = metrics_of(analysis) if analysis is not None and status == "ok" else {}
    run_id = store.add(status=status, reason=reason, target=target, command=command, capture=raw,
                       analysis=document(analysis) if analysis is not None else None, metrics=metrics,
                       wall_ns=result.wall_ns, ready_line_ns=result.ready_line_ns, label=label, campaign=campaign,
                       variant=variant, sequence=sequence, run_uuid=run_uuid)
    result.status, result.reason = status, reason
    return BootRun(run_id, result, analysis)


def boot_and_store(machine: Bootable, store: Store, *, label: str | None = None, campaign: str | None = None,
                   variant: str | None = None, sequence: int | None = None, echo=None) -> BootRun:
    """One boot of a target of any kind (the boot sequence: targets/strategy.py), recorded."""
    run_uuid, capture_path = new_capture(store)
    result = strategy.boot(machine, capture_path, echo=echo)
    return record(store, run_uuid, result, ready=machine.ready, baud=machine.baud, target=machine.describe(),
                  command=machine.command(), label=label, campaign=campaign, variant=variant, sequence=sequence)
