"""Campaigns without QEMU: a fake booter stores runs with made-up numbers."""

from __future__ import annotations

import numpy as np
import pytest

from bootlab.lab.store import Store

PHASES = ("firmware", "kernel load/decompress", "kernel init", "application")


def metrics(total_ns: float) -> dict[str, float]:
    """A plausible run: the total split over four phases."""
    shares = (0.05, 0.4, 0.5, 0.05)
    out = {f"phase:{p}": total_ns * s for p, s in zip(PHASES, shares)}
    out["total"] = total_ns
    out["at:ready"] = total_ns
    return out


def add_run(store: Store, total_ns: float | None, *, status: str = "ok", reason: str = "ready", target=None,
            **ids) -> int:
    ok = status == "ok"
    return store.add(status=status, reason=reason, target=target or {}, command=["fake"], capture=None,
                     analysis=None, metrics=metrics(total_ns) if ok else {}, wall_ns=int(total_ns or 1e9),
                     ready_line_ns=int(total_ns) if ok else None, **ids)


class FakeBooter:
    """Boots nothing: stores a run whose total is the variant's mean with 2% noise.
    `means` maps variant names to means, or is a function of the variant's target
    description; `fail` names variants that never boot; `crash_at` raises after that
    many boots (a crash between two runs); `interrupt_at` stores that boot as interrupted
    (Ctrl-C)."""

    def __init__(self, means, fail=(), crash_at=None, interrupt_at=None, seed=1):
        self.mean_of = means if callable(means) else (lambda target, variant: means[variant])
        self.fail = fail if callable(fail) else (lambda target, variant: variant in fail)
        self.crash_at = crash_at
        self.interrupt_at = interrupt_at
        self.calls: list[tuple[int, str]] = []
        self.rng = np.random.default_rng(seed)

    def for_variant(self, campaign, variant):
        """The campaign runner's booter factory."""
        return _Bound(self, variant.spec.to_dict())

    def boot(self, store, *, target, **ids):
        if self.crash_at is not None and len(self.calls) == self.crash_at:
            raise RuntimeError("simulated crash")
        self.calls.append((ids["sequence"], ids["variant"]))
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at + 1:
            return add_run(store, None, status="interrupted", reason="interrupted", target=target, **ids)
        if self.fail(target, ids["variant"]):
            return add_run(store, None, status="timeout", reason="killed: silence", target=target, **ids)
        total = self.mean_of(target, ids["variant"]) * (1 + 0.02 * self.rng.standard_normal())
        return add_run(store, total, target=target, **ids)


class _Bound:
    def __init__(self, fake: FakeBooter, target: dict):
        self.fake, self.target = fake, target

    def boot(self, store, **ids):
        return self.fake.boot(store, target=self.target, **ids)


@pytest.fixture
def store(tmp_path):
    return Store(str(tmp_path / "lab.db"))
